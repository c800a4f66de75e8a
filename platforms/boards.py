"""Boards to run the self-test on: the platform classes of ``amaranth_boards``, subclassed.

Each board here is a platform class (instantiate it to build) that adds what the self-test
needs to know: its command-line ``name``, a ``title``, the "pass" and "fail" LEDs, a "busy" LED
where the board has a third, whether it has a UART for the summary line, and ``programmer``, the
command that loads a bitstream onto it. A chip variant is a one-line subclass, as in
``amaranth_boards``.

Two boards' classes list tools that only programming or packaging for a bootloader needs: the
ULX3S requires ``openFPGALoader`` and the OrangeCrab ``dfu-suffix``. The classes here drop those
requirements (and the OrangeCrab's DFU-suffix step, unless ``dfu-suffix`` is installed), so a
bitstream builds with the YoWASP tools alone.
"""

from __future__ import annotations

import shutil

from amaranth.build import Attrs
from amaranth_boards.ice40_hx8k_b_evn import ICE40HX8KBEVNPlatform
from amaranth_boards.resources import UARTResource
from amaranth_boards.icebreaker import ICEBreakerPlatform
from amaranth_boards.icesugar_pro import ICESugarProPlatform
from amaranth_boards.orangecrab_r0_2 import OrangeCrabR0_2_85FPlatform
from amaranth_boards.ulx3s import ULX3S_85F_Platform

from .devices import DEVICES
from .pins import LEDRef


__all__ = ["SelfTestBoard", "ICEBreaker", "ICE40HX8KBreakout", "ULX3S_85F", "ULX3S_25F",
           "OrangeCrab_25F", "OrangeCrab_85F", "ICESugarPro", "BOARDS", "DEFAULT_BOARD",
           "get_board"]


class SelfTestBoard:
    """What the self-test needs of a board, mixed into its ``amaranth_boards`` platform class."""
    name: str
    title: str
    pass_led: LEDRef
    fail_led: LEDRef
    busy_led: LEDRef | None = None
    uart: bool = True
    #: How the bitstream reaches the board (for the build's closing line).
    programmer: str = ""
    #: The resources of the board's FPGA, as :attr:`cipher_cores.platforms.devices.BareDevice.capacity` gives
    #: them (set from the bare device of the same part; empty for a part with none).
    capacity: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        device = getattr(cls, "device", None)
        cls.capacity = next((dict(bare.capacity) for bare in DEVICES.values()
                             if bare.device == device), {})

    @classmethod
    def describe(cls) -> str:
        return f"{cls.title} ({cls.device})"


class ICEBreaker(SelfTestBoard, ICEBreakerPlatform):
    name = "icebreaker"
    title = "iCEBreaker"
    pass_led = LEDRef("led_g")
    fail_led = LEDRef("led_r")
    programmer = "iceprog top.bin"


class ICE40HX8KBreakout(SelfTestBoard, ICE40HX8KBEVNPlatform):
    name = "ice40-hx8k"
    title = "iCE40-HX8K breakout board"
    pass_led = LEDRef("led", 0)
    fail_led = LEDRef("led", 1)
    busy_led = LEDRef("led", 7)
    programmer = "iceprog top.bin"


class ULX3S_85F(SelfTestBoard, ULX3S_85F_Platform):
    name = "ulx3s-85f"
    title = "ULX3S-85F"
    pass_led = LEDRef("led", 0)
    fail_led = LEDRef("led", 1)
    busy_led = LEDRef("led", 7)
    programmer = "openFPGALoader -b ulx3s top.bit"

    @property
    def required_tools(self):
        # openFPGALoader is only needed to program the board, not to build for it.
        return [tool for tool in super().required_tools if tool != "openFPGALoader"]


class ULX3S_25F(ULX3S_85F):
    name, title, device = "ulx3s-25f", "ULX3S-25F", "LFE5U-25F"


class OrangeCrab_85F(SelfTestBoard, OrangeCrabR0_2_85FPlatform):
    name = "orangecrab-85f"
    title = "OrangeCrab r0.2 85F"
    pass_led = LEDRef("rgb_led", 0, "g")
    fail_led = LEDRef("rgb_led", 0, "r")
    busy_led = LEDRef("rgb_led", 0, "b")
    # The board has no USB-serial chip: the UART is on the Feather header's pins 1 (TX) and 0
    # (RX), for a 3.3 V USB-serial adapter.
    resources = OrangeCrabR0_2_85FPlatform.resources + [
        UARTResource(0, rx="0", tx="1", conn=("io", 0), attrs=Attrs(IO_TYPE="LVCMOS33")),
    ]
    programmer = ("dfu-util -D top.bit (after dfu-suffix -v 1209 -p 5af0 -a top.bit); UART on "
                  "Feather pin 1 (TX)")

    @property
    def required_tools(self):
        return [tool for tool in super().required_tools if tool != "dfu-suffix"]

    @property
    def command_templates(self):
        # The DFU suffix is for the bootloader; leave the step out when the tool is missing.
        templates = super().command_templates
        if shutil.which("dfu-suffix") is None:
            templates = [template for template in templates if "dfu-suffix" not in template]
        return templates


class OrangeCrab_25F(OrangeCrab_85F):
    name, title, device = "orangecrab-25f", "OrangeCrab r0.2 25F", "LFE5U-25F"


class ICESugarPro(SelfTestBoard, ICESugarProPlatform):
    name = "icesugar-pro"
    title = "iCESugar-Pro"
    pass_led = LEDRef("rgb_led", 0, "g")
    fail_led = LEDRef("rgb_led", 0, "r")
    busy_led = LEDRef("rgb_led", 0, "b")
    programmer = "copy top.bit to the board's USB drive, or openFPGALoader -b icesugar_pro top.bit"


#: The boards, by name.
BOARDS = {board.name: board for board in [
    ICEBreaker, ICE40HX8KBreakout, ULX3S_85F, ULX3S_25F, OrangeCrab_25F, OrangeCrab_85F,
    ICESugarPro,
]}

DEFAULT_BOARD = "icebreaker"


def get_board(name: str) -> type:
    """The board class called ``name``; :exc:`KeyError` with the known names if none is."""
    try:
        return BOARDS[name]
    except KeyError:
        raise KeyError(f"unknown board {name!r}; choose from {', '.join(BOARDS)}") from None
