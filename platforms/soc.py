"""The RISC-V SoC (:class:`cipher_cores.cores.soc.CipherSoC`) on a board: clock, UART and LEDs."""

from amaranth.hdl import Module
from amaranth.lib import wiring

from cipher_cores.cores.soc import CipherSoC
from .pins import output_pin


__all__ = ["SoCTop"]


class SoCTop(wiring.Component):
    """A :class:`~cipher_cores.cores.soc.CipherSoC` (submodule ``soc``) running ``image`` on ``board``.

    Parameters
    ----------
    target : :class:`~cipher_cores.scripts.flow.targets.PeripheralConfig`
        The peripheral (and its core).
    board : a board class of :mod:`cipher_cores.platforms.boards`
    image : :class:`bytes`
        The firmware (RAM contents from address 0).
    ram_bytes : :class:`int`
    isa : ``"rv32i"`` or ``"rv32im"``
    interrupts : :class:`bool`
        Whether the CPU takes interrupts.
    baud : :class:`int`
        UART speed (8N1), on the board's ``uart`` resource where it has one.

    The SoC runs from the board's default clock. The pass LED lights when the firmware exits
    with status 0, the fail LED when it exits with another status or the CPU traps.
    """
    def __init__(self, target, board, *, image: bytes, ram_bytes: int, isa: str = "rv32i",
                 interrupts: bool = True, baud: int = 115200):
        self._target = target
        self._board = board
        self._image = image
        self._ram_bytes = ram_bytes
        self._isa = isa
        self._interrupts = interrupts
        self._baud = baud
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        frequency = int(platform.default_clk_frequency)
        m.submodules.soc = soc = CipherSoC(
            self._target.build(), ram_bytes=self._ram_bytes, image=self._image,
            clock_hz=frequency, uart_divisor=max(1, round(frequency / self._baud)),
            isa=self._isa, interrupts=self._interrupts)
        requested = {}
        m.d.comb += [
            self._board.pass_led.request(m, platform, requested).eq(
                soc.exited & (soc.exit_status == 0)),
            self._board.fail_led.request(m, platform, requested).eq(
                (soc.exited & (soc.exit_status != 0)) | soc.trap),
        ]
        if self._board.uart:
            m.d.comb += output_pin(m, platform, "uart", 0, "tx", requested).eq(soc.uart_tx)
        return m
