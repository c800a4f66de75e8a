"""Boards to run the self-test on, reusing the platform classes of ``amaranth_boards``.

Each :class:`Board` names an ``amaranth_boards`` platform and the resources the self-test drives:
a "pass" LED, a "fail" LED, a "busy" LED (where the board has a third), and the UART it prints its
summary on (where it has one).

Two boards' classes list tools that only programming or packaging for a bootloader needs:
the ULX3S requires ``openFPGALoader`` and the OrangeCrab ``dfu-suffix``. The subclasses here drop
those requirements (and the OrangeCrab's DFU-suffix step, unless ``dfu-suffix`` is installed), so a
bitstream builds with the YoWASP tools alone.
"""

from __future__ import annotations

import importlib
import shutil
from dataclasses import dataclass

from amaranth.lib import io


__all__ = ["Board", "BOARDS", "DEFAULT_BOARD", "get_board", "LEDRef", "output_pin",
           "input_pin"]


@dataclass(frozen=True)
class LEDRef:
    """A single-bit output: resource ``name`` number ``number``, optionally one ``subsignal``."""
    name: str
    number: int = 0
    subsignal: str | None = None

    def request(self, m, platform, requested: dict | None = None):
        """Request the pin and add an output buffer for it to ``m``; returns the buffer's input.
        ``requested`` (see :func:`output_pin`) lets several LEDs share one resource."""
        return output_pin(m, platform, self.name, self.number, self.subsignal, requested)


def _request(platform, name, number, requested):
    if requested is None:
        return platform.request(name, number, dir="-")
    if (name, number) not in requested:
        requested[name, number] = platform.request(name, number, dir="-")
    return requested[name, number]


def _pin(m, platform, direction, name, number, subsignal, requested):
    port = _request(platform, name, number, requested)
    if subsignal is not None:
        port = getattr(port, subsignal)
    buffer = io.Buffer(direction, port)
    m.submodules[f"pin_{name}_{number}" + (f"_{subsignal}" if subsignal else "")] = buffer
    return buffer


def output_pin(m, platform, name: str, number: int = 0, subsignal: str | None = None,
               requested: dict | None = None):
    """Request resource ``name``/``number`` (its ``subsignal``, if given) as an output, add an
    :class:`amaranth.lib.io.Buffer` for it to ``m``, and return the signal that drives it.

    A resource can be requested only once; pass the same ``requested`` dict to take several
    subsignals of one resource (the three colours of an RGB LED)."""
    return _pin(m, platform, "o", name, number, subsignal, requested).o


def input_pin(m, platform, name: str, number: int = 0, subsignal: str | None = None,
              requested: dict | None = None):
    """Like :func:`output_pin`, for an input; returns the buffer's output."""
    return _pin(m, platform, "i", name, number, subsignal, requested).i


def _without(tools, *names):
    return [tool for tool in tools if tool not in names]


_platform_classes = {}


def _platform_class(module: str, cls: str, drop_tools: tuple = (), drop_commands: tuple = ()):
    """A subclass of ``amaranth_boards.<module>.<cls>`` that does not require ``drop_tools`` (and
    leaves out command templates that mention ``drop_commands`` when those tools are missing)."""
    key = (module, cls)
    if key in _platform_classes:
        return _platform_classes[key]
    base = getattr(importlib.import_module(f"amaranth_boards.{module}"), cls)
    if not drop_tools and not drop_commands:
        _platform_classes[key] = base
        return base

    def required_tools(self):
        return _without(base.required_tools.fget(self), *drop_tools)

    def command_templates(self):
        templates = list(base.command_templates.fget(self))
        missing = [tool for tool in drop_commands if shutil.which(tool) is None]
        return [template for template in templates
                if not any(tool in template for tool in missing)]

    attributes = {"required_tools": property(required_tools)}
    if drop_commands:
        attributes["command_templates"] = property(command_templates)
    subclass = type(cls, (base,), attributes)
    subclass.__module__ = __name__
    subclass.__qualname__ = f"{cls}(no {', '.join(drop_tools)})"
    _platform_classes[key] = subclass
    return subclass


@dataclass(frozen=True)
class Board:
    name: str
    title: str
    module: str                 # amaranth_boards module
    cls: str                    # platform class in it
    pass_led: LEDRef
    fail_led: LEDRef
    busy_led: LEDRef | None = None
    uart: bool = True
    drop_tools: tuple = ()
    drop_commands: tuple = ()

    def platform_class(self):
        return _platform_class(self.module, self.cls, self.drop_tools, self.drop_commands)

    def platform(self):
        """A new platform object for this board."""
        return self.platform_class()()


#: The boards, by name.
BOARDS = {board.name: board for board in [
    Board("icebreaker", "iCEBreaker (iCE40 UP5K)", "icebreaker", "ICEBreakerPlatform",
          pass_led=LEDRef("led_g"), fail_led=LEDRef("led_r")),
    Board("ice40-hx8k", "iCE40-HX8K breakout board", "ice40_hx8k_b_evn", "ICE40HX8KBEVNPlatform",
          pass_led=LEDRef("led", 0), fail_led=LEDRef("led", 1), busy_led=LEDRef("led", 7)),
    Board("ulx3s-85f", "ULX3S (ECP5 LFE5U-85F)", "ulx3s", "ULX3S_85F_Platform",
          pass_led=LEDRef("led", 0), fail_led=LEDRef("led", 1), busy_led=LEDRef("led", 7),
          drop_tools=("openFPGALoader",)),
    Board("ulx3s-25f", "ULX3S (ECP5 LFE5U-25F)", "ulx3s", "ULX3S_25F_Platform",
          pass_led=LEDRef("led", 0), fail_led=LEDRef("led", 1), busy_led=LEDRef("led", 7),
          drop_tools=("openFPGALoader",)),
    Board("orangecrab-25f", "OrangeCrab r0.2 (ECP5 LFE5U-25F)", "orangecrab_r0_2",
          "OrangeCrabR0_2_25FPlatform",
          pass_led=LEDRef("rgb_led", 0, "g"), fail_led=LEDRef("rgb_led", 0, "r"),
          busy_led=LEDRef("rgb_led", 0, "b"), uart=False,
          drop_tools=("dfu-suffix",), drop_commands=("dfu-suffix",)),
    Board("orangecrab-85f", "OrangeCrab r0.2 (ECP5 LFE5U-85F)", "orangecrab_r0_2",
          "OrangeCrabR0_2_85FPlatform",
          pass_led=LEDRef("rgb_led", 0, "g"), fail_led=LEDRef("rgb_led", 0, "r"),
          busy_led=LEDRef("rgb_led", 0, "b"), uart=False,
          drop_tools=("dfu-suffix",), drop_commands=("dfu-suffix",)),
    Board("icesugar-pro", "iCESugar-Pro (ECP5 LFE5U-25F)", "icesugar_pro", "ICESugarProPlatform",
          pass_led=LEDRef("rgb_led", 0, "g"), fail_led=LEDRef("rgb_led", 0, "r"),
          busy_led=LEDRef("rgb_led", 0, "b")),
]}

DEFAULT_BOARD = "icebreaker"


def get_board(name: str) -> Board:
    """The :class:`Board` called ``name``; :exc:`KeyError` with the known names if none is."""
    try:
        return BOARDS[name]
    except KeyError:
        raise KeyError(f"unknown board {name!r}; choose from {', '.join(BOARDS)}") from None
