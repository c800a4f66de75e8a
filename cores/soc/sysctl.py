"""The SoC's system controller: a UART transmitter, a cycle counter, facts about the build,
and the register through which firmware says it has finished."""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..bus.wishbone import WishboneSignature
from ..selftest.uart import UARTTransmitter
from .memory_map import SYSCTL_REGISTERS


__all__ = ["SystemController"]


class SystemController(wiring.Component):
    """The registers of :data:`cipher_cores.cores.soc.memory_map.SYSCTL_REGISTERS` on a Wishbone target.

    Parameters
    ----------
    clock_hz : :class:`int`
        The clock frequency, read back at ``CLOCK_HZ``.
    ram_bytes : :class:`int`
        The RAM size, read back at ``RAM_BYTES``.
    uart_divisor : :class:`int`
        Clock cycles per UART bit (``clock_hz / baud``; simulations use 1).

    Members
    -------
    bus : ``In(WishboneSignature(addr_width=3))``
    uart_tx : ``Out(1)``
        The UART's serial line (8N1, high when idle).
    console_valid, console_byte : ``Out(1)``, ``Out(8)``
        High for one cycle as the UART takes ``console_byte``: what a simulator prints.
    exited : ``Out(1)``
        Set by the first write to ``EXIT``; stays set.
    exit_status : ``Out(32)``
        The value of that write.

    Every access is acknowledged on the edge after it starts, except a ``UART_DATA`` write,
    which is acknowledged on the edge after the transmitter takes the byte (at most
    ``10 * uart_divisor`` cycles later). Reads of write-only registers and unused addresses
    return 0; writes to read-only ones are ignored.
    """
    def __init__(self, *, clock_hz: int, ram_bytes: int, uart_divisor: int):
        for name, value in (("clock_hz", clock_hz), ("ram_bytes", ram_bytes),
                            ("uart_divisor", uart_divisor)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        self._clock_hz = clock_hz
        self._ram_bytes = ram_bytes
        self._uart_divisor = uart_divisor
        super().__init__({
            "bus": In(WishboneSignature(addr_width=3)),
            "uart_tx": Out(1, init=1),
            "console_valid": Out(1),
            "console_byte": Out(8),
            "exited": Out(1),
            "exit_status": Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.uart = uart = UARTTransmitter(divisor=self._uart_divisor)
        cycles = Signal(32)
        m.d.sync += cycles.eq(cycles + 1)

        bus = self.bus
        access = bus.cyc & bus.stb & ~bus.ack
        word = {register.name: register.offset // 4 for register in SYSCTL_REGISTERS}
        uart_write = access & bus.we & (bus.adr == word["UART_DATA"])
        m.d.comb += [
            uart.data.payload.eq(bus.dat_w[:8]),
            uart.data.valid.eq(uart_write),
            self.uart_tx.eq(uart.tx),
            self.console_valid.eq(uart_write & uart.data.ready),
            self.console_byte.eq(bus.dat_w[:8]),
        ]
        # A UART write is acknowledged once the transmitter has taken its byte.
        m.d.sync += bus.ack.eq(access & (~uart_write | uart.data.ready))

        with m.If(access & bus.we & (bus.adr == word["EXIT"]) & ~self.exited):
            m.d.sync += [self.exited.eq(1), self.exit_status.eq(bus.dat_w)]

        with m.If(access & ~bus.we):
            with m.Switch(bus.adr):
                with m.Case(word["UART_STATUS"]):
                    m.d.sync += bus.dat_r.eq(uart.data.ready)
                with m.Case(word["CYCLES"]):
                    m.d.sync += bus.dat_r.eq(cycles)
                with m.Case(word["CLOCK_HZ"]):
                    m.d.sync += bus.dat_r.eq(self._clock_hz)
                with m.Case(word["RAM_BYTES"]):
                    m.d.sync += bus.dat_r.eq(self._ram_bytes)
                with m.Default():
                    m.d.sync += bus.dat_r.eq(0)
        return m

