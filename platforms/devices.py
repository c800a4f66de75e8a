"""Bare-device targets: an FPGA with a clock pin and two data pins, for measuring a core alone.

A :class:`Device` names a chip (family, part, package, speed grade) and the capacity the report
checks a design against before place-and-route. :meth:`Device.platform` gives an Amaranth platform
with three resources, ``clk`` (the ``sync`` clock, constrained to the device's target frequency)
and ``serial`` (``i`` and ``o``), which is all a :class:`~platforms.harness.MeasurementHarness`
needs. The pins are ordinary user I/O (a global-clock-capable pin for ``clk``) of the package.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from amaranth.build import Attrs, Clock, Pins, Resource, Subsignal
from amaranth.hdl import Elaboratable, Module
from amaranth.vendor import LatticeECP5Platform, LatticeICE40Platform

from .boards import input_pin, output_pin


__all__ = ["Device", "DEVICES", "DEFAULT_DEVICES", "get_device", "BareDeviceTop"]


@dataclass(frozen=True)
class Device:
    """A bare FPGA to measure on.

    ``capacity`` maps a resource class of :func:`platforms.measure.classify_cells` (``"lc"`` for
    iCE40 logic cells, ``"lut4"``, ``"ff"``, ``"bram"``) to how many the device has.
    """
    name: str
    title: str
    family: str             # "ice40" or "ecp5"
    part: str               # Amaranth's device name
    package: str
    speed: str | None
    clk_pin: str
    in_pin: str
    out_pin: str
    target_mhz: float       # clock constraint given to nextpnr
    capacity: dict = field(default_factory=dict)

    def platform(self):
        """A fresh Amaranth platform for this device, with resources ``clk`` and ``serial``."""
        if self.family == "ice40":
            io = Attrs(IO_STANDARD="SB_LVCMOS")
            clk_attrs = Attrs(GLOBAL=True, IO_STANDARD="SB_LVCMOS")
            base = LatticeICE40Platform
        else:
            io = clk_attrs = Attrs(IO_TYPE="LVCMOS33")
            base = LatticeECP5Platform
        attributes = {
            "device": self.part,
            "package": self.package,
            "default_clk": "clk",
            "resources": [
                Resource("clk", 0, Pins(self.clk_pin, dir="i"), Clock(self.target_mhz * 1e6),
                         clk_attrs),
                Resource("serial", 0,
                         Subsignal("i", Pins(self.in_pin, dir="i")),
                         Subsignal("o", Pins(self.out_pin, dir="o")),
                         io),
            ],
            "connectors": [],
        }
        if self.speed is not None:
            attributes["speed"] = self.speed
        cls = type(f"Bare_{self.name.replace('-', '_')}_Platform", (base,), attributes)
        return cls()


#: The bare devices, by name.
DEVICES = {device.name: device for device in [
    Device("ice40-up5k", "iCE40 UP5K (SG48)", "ice40", "iCE40UP5K", "SG48", None,
           clk_pin="35", in_pin="4", out_pin="2", target_mhz=48,
           capacity={"lc": 5280, "bram": 30}),
    Device("ice40-hx8k", "iCE40 HX8K (CT256)", "ice40", "iCE40HX8K", "CT256", None,
           clk_pin="J3", in_pin="B10", out_pin="B12", target_mhz=100,
           capacity={"lc": 7680, "bram": 32}),
    Device("ecp5-25f", "ECP5 LFE5U-25F (CABGA381, speed 6)", "ecp5", "LFE5U-25F", "BG381", "6",
           clk_pin="G2", in_pin="M1", out_pin="L4", target_mhz=150,
           capacity={"lut4": 24288, "ff": 24288, "bram": 56}),
    Device("ecp5-85f", "ECP5 LFE5U-85F (CABGA381, speed 6)", "ecp5", "LFE5U-85F", "BG381", "6",
           clk_pin="G2", in_pin="M1", out_pin="L4", target_mhz=150,
           capacity={"lut4": 83640, "ff": 83640, "bram": 208}),
]}

DEFAULT_DEVICES = tuple(DEVICES)


def get_device(name: str) -> Device:
    """The :class:`Device` called ``name``; :exc:`KeyError` with the known names if none is."""
    try:
        return DEVICES[name]
    except KeyError:
        raise KeyError(f"unknown device {name!r}; choose from {', '.join(DEVICES)}") from None


class BareDeviceTop(Elaboratable):
    """Connects a :class:`~platforms.harness.MeasurementHarness` (submodule ``harness``) to the
    ``serial`` pins of a bare device. The core's hierarchical name is ``top.harness.core``."""
    def __init__(self, harness):
        self.harness = harness

    def elaborate(self, platform):
        m = Module()
        m.submodules.harness = self.harness
        requested = {}
        m.d.comb += [
            self.harness.serial_in.eq(input_pin(m, platform, "serial", 0, "i", requested)),
            output_pin(m, platform, "serial", 0, "o", requested).eq(self.harness.serial_out),
        ]
        return m
