"""Bare-device targets: an FPGA with a clock pin and two data pins, for measuring a core alone.

Each device is a platform class (instantiate it to build) with three resources: ``clk`` (the
``sync`` clock, constrained to ``target_mhz``) and ``serial`` (``i`` and ``o``), which is all a
:class:`~cipher_cores.platforms.harness.BareDeviceTop` needs. The pins are ordinary user I/O of the package (a
global-clock-capable pin for ``clk``). Besides Amaranth's ``device``, ``package`` and ``speed``, a
device class says its command-line ``name``, a ``title``, its ``family`` and ``capacity``: how
many of each resource class of :func:`cipher_cores.scripts.flow.measure.classify_cells` it has (``"lc"`` for
iCE40 logic cells, ``"lut4"``, ``"ff"``, ``"bram"``), which the flow checks a design against
before place-and-route. A variant is a subclass that changes the part and its capacity.
"""

from __future__ import annotations

from amaranth.build import Attrs, Clock, Pins, Resource, Subsignal
from amaranth.hdl import ClockDomain, ClockSignal, Module
from amaranth.lib import io
from amaranth.vendor import LatticeECP5Platform, LatticeICE40Platform


__all__ = ["BareDevice", "ICE40UP5K", "ICE40HX8K", "ECP5_25F", "ECP5_85F", "DEVICES",
           "DEFAULT_DEVICES", "get_device"]


class BareDevice:
    """The clock and serial pins of a bare device, mixed into a vendor platform class."""
    name: str
    title: str
    family: str                 # "ice40" or "ecp5"
    clk_pin: str
    in_pin: str
    out_pin: str
    target_mhz: float           # the clock constraint given to nextpnr
    capacity: dict = {}
    default_clk = "clk"
    connectors = []
    _io_attrs = Attrs()
    _clk_attrs = Attrs()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Amaranth reads `resources` as a class attribute: derive it from the pins and clock
        # whenever a subclass changes them.
        if all(hasattr(cls, name) for name in ("clk_pin", "in_pin", "out_pin", "target_mhz")):
            cls.resources = [
                Resource("clk", 0, Pins(cls.clk_pin, dir="i"), Clock(cls.target_mhz * 1e6),
                         cls._clk_attrs),
                Resource("serial", 0,
                         Subsignal("i", Pins(cls.in_pin, dir="i")),
                         Subsignal("o", Pins(cls.out_pin, dir="o")),
                         cls._io_attrs),
            ]


class _BareICE40(BareDevice, LatticeICE40Platform):
    family = "ice40"
    target_mhz = 100
    _io_attrs = Attrs(IO_STANDARD="SB_LVCMOS")
    _clk_attrs = Attrs(GLOBAL=True, IO_STANDARD="SB_LVCMOS")
    def create_missing_domain(self, name):
        """The ``sync`` domain on the clock pin, with no reset: every flip-flop starts from its
        reset value as its initial value at configuration, and nothing resets it after. This is
        what Amaranth's ECP5 platform does too (there through GSR, its ``sync`` domain is
        reset-less), so a core is measured alike on both families: its synchronous reset logic is
        left out of its figures on each. (A bare device is for measuring, never for running:
        iCE40 block RAM reads zeros for about 3 us after configuration, which a design that runs
        covers with a reset, as the boards of :mod:`cipher_cores.platforms.boards` do.)"""
        if name != "sync" or self.default_clk is None:
            return super().create_missing_domain(name)
        m = Module()
        m.submodules.clk_buffer = clk_buffer = io.Buffer("i", self.request(self.default_clk,
                                                                            dir="-"))
        m.domains.sync = ClockDomain(reset_less=True)
        m.d.comb += ClockSignal("sync").eq(clk_buffer.i)
        return m


class _BareECP5(BareDevice, LatticeECP5Platform):
    family = "ecp5"
    package = "BG381"
    speed = "6"
    clk_pin, in_pin, out_pin = "G2", "M1", "L4"
    target_mhz = 150
    _io_attrs = _clk_attrs = Attrs(IO_TYPE="LVCMOS33")


class ICE40UP5K(_BareICE40):
    name, title = "ice40-up5k", "iCE40 UP5K (SG48)"
    device, package = "iCE40UP5K", "SG48"
    clk_pin, in_pin, out_pin = "35", "4", "2"
    target_mhz = 48
    capacity = {"lc": 5280, "bram": 30}


class ICE40HX8K(_BareICE40):
    name, title = "ice40-hx8k", "iCE40 HX8K (CT256)"
    device, package = "iCE40HX8K", "CT256"
    clk_pin, in_pin, out_pin = "J3", "B10", "B12"
    capacity = {"lc": 7680, "bram": 32}


class ECP5_85F(_BareECP5):
    name, title = "ecp5-85f", "ECP5 LFE5U-85F (CABGA381, speed 6)"
    device = "LFE5U-85F"
    capacity = {"lut4": 83640, "ff": 83640, "bram": 208}


class ECP5_25F(_BareECP5):
    name, title = "ecp5-25f", "ECP5 LFE5U-25F (CABGA381, speed 6)"
    device = "LFE5U-25F"
    capacity = {"lut4": 24288, "ff": 24288, "bram": 56}


#: The bare devices, by name.
DEVICES = {device.name: device for device in [ICE40UP5K, ICE40HX8K, ECP5_25F, ECP5_85F]}

DEFAULT_DEVICES = tuple(DEVICES)


def get_device(name: str) -> type:
    """The device class called ``name``; :exc:`KeyError` with the known names if none is."""
    try:
        return DEVICES[name]
    except KeyError:
        raise KeyError(f"unknown device {name!r}; choose from {', '.join(DEVICES)}") from None
