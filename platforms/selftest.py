"""The board self-test: a core's :class:`~cipher_cores.cores.selftest.SelfTest` on LEDs and a UART."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring

from cipher_cores.cores.selftest import SelfTest, SummaryPrinter, UARTTransmitter
from .pins import output_pin


__all__ = ["SelfTestTop"]


class SelfTestTop(wiring.Component):
    """The self-test of a core configuration on a board.

    Parameters
    ----------
    config : :class:`~cipher_cores.cores.catalog.CoreConfig`
    board : :class:`~cipher_cores.platforms.boards.Board`
        Which LEDs and UART to use.
    loop_blocks : :class:`int`
        Length of the encrypt-then-decrypt loop (default 2**20 blocks, a few seconds).
    fault : see :data:`cipher_cores.cores.selftest.FAULTS`
    baud : :class:`int`
        UART speed.

    The self-test is the submodule ``selftest`` and its core ``selftest.core``. The pass LED lights
    when every check has passed, the fail LED as soon as one fails; the busy LED blinks while the
    test runs. Boards with a UART print the summary line when the test ends and about once a
    second afterwards.
    """
    def __init__(self, config, board, *, loop_blocks: int = 1 << 20, fault: str | None = None,
                 baud: int = 115200):
        self._config = config
        self._board = board
        self._baud = baud
        self.selftest = SelfTest.for_config(config, loop_blocks=loop_blocks, fault=fault)
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.selftest = selftest = self.selftest
        frequency = int(platform.default_clk_frequency)

        period = max(frequency // 4, 2)
        heartbeat = Signal(range(period))
        blink = Signal()
        with m.If(heartbeat == 0):
            m.d.sync += [heartbeat.eq(period - 1), blink.eq(~blink)]
        with m.Else():
            m.d.sync += heartbeat.eq(heartbeat - 1)

        requested = {}
        m.d.comb += [
            self._board.pass_led.request(m, platform, requested).eq(selftest.passed),
            self._board.fail_led.request(m, platform, requested).eq(selftest.failed),
        ]
        if self._board.busy_led is not None:
            m.d.comb += self._board.busy_led.request(m, platform, requested).eq(
                ~selftest.done & blink)

        if self._board.uart:
            uart_tx = output_pin(m, platform, "uart", 0, "tx", requested)
            m.submodules.printer = printer = SummaryPrinter(self._config.label,
                                                            len(selftest.vectors))
            m.submodules.transmitter = transmitter = UARTTransmitter(
                divisor=max(1, round(frequency / self._baud)))
            wiring.connect(m, printer.data, transmitter.data)
            repeat = Signal(range(frequency + 1))
            was_done = Signal()
            m.d.sync += was_done.eq(selftest.done)
            with m.If(selftest.done):
                m.d.sync += repeat.eq(Mux(repeat == 0, frequency, repeat - 1))
            m.d.comb += [
                printer.start.eq((selftest.done & ~was_done) | (selftest.done & (repeat == 1))),
                printer.kat_passed.eq(selftest.kat_passed),
                printer.loop_count.eq(selftest.loop_count),
                printer.loop_errors.eq(selftest.loop_errors),
                printer.checksum_ok.eq(selftest.checksum_ok),
                uart_tx.eq(transmitter.tx),
            ]
        return m
