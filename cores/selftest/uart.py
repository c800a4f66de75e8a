"""A transmit-only UART (8 data bits, no parity, 1 stop bit) with a stream input."""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out


__all__ = ["UARTTransmitter", "uart_decode"]


class UARTTransmitter(wiring.Component):
    """Sends each byte of ``data`` on ``tx``, least significant bit first.

    Parameters
    ----------
    divisor : :class:`int`
        Clock cycles per bit (clock frequency / baud rate).

    Members
    -------
    data : ``In(stream.Signature(8))``
        Bytes to send; one is accepted whenever the transmitter is idle.
    tx : ``Out(1)``
        The serial line, high when idle.

    A byte takes ``10 * divisor`` cycles from its transfer to the end of its stop bit.
    """
    data: In(stream.Signature(8))
    tx:   Out(1, init=1)

    def __init__(self, *, divisor: int):
        if not isinstance(divisor, int) or divisor < 1:
            raise ValueError(f"divisor must be a positive integer, not {divisor!r}")
        self._divisor = divisor
        super().__init__()

    @property
    def divisor(self) -> int:
        return self._divisor

    def elaborate(self, platform):
        m = Module()
        shift = Signal(10, init=1)      # start bit, 8 data bits, stop bit; shifted out LSB first
        bits = Signal(range(11))
        timer = Signal(range(self._divisor))

        m.d.comb += [
            self.data.ready.eq(bits == 0),
            self.tx.eq(shift[0] | (bits == 0)),
        ]
        with m.If(bits == 0):
            with m.If(self.data.valid):
                m.d.sync += [
                    shift.eq(Cat(Const(0, 1), self.data.payload, Const(1, 1))),
                    bits.eq(10),
                    timer.eq(self._divisor - 1),
                ]
        with m.Elif(timer == 0):
            m.d.sync += [
                shift.eq(Cat(shift[1:], Const(1, 1))),
                bits.eq(bits - 1),
                timer.eq(self._divisor - 1),
            ]
        with m.Else():
            m.d.sync += timer.eq(timer - 1)
        return m


def uart_decode(samples, divisor: int) -> bytes:
    """Decode 8N1 bytes from ``samples`` of a serial line taken once per clock (for tests)."""
    samples = list(samples)
    result = bytearray()
    index = 0
    while index < len(samples):
        if samples[index] == 0:
            middle = index + divisor // 2
            if middle + 9 * divisor >= len(samples):
                break
            byte = 0
            for bit in range(8):
                byte |= samples[middle + (bit + 1) * divisor] << bit
            result.append(byte)
            index = middle + 9 * divisor
        else:
            index += 1
    return bytes(result)
