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
from amaranth.hdl import ClockDomain, ClockSignal, Elaboratable, Module, ResetSignal, Signal
from amaranth.lib import io
from amaranth.vendor import LatticeECP5Platform, LatticeICE40Platform


__all__ = ["BareDevice", "PowerOnReset", "ICE40UP5K", "ICE40HX8K", "ECP5_25F", "ECP5_85F", "DEVICES",
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


class PowerOnReset(Elaboratable):
    """A reset held for at least ``cycles`` edges of its ``power_on`` clock domain after
    configuration, then low for good, from flip-flops whose initial value is 0 (all an iCE40
    has): a timer counting 2^n >= ``cycles`` edges, whose top bit says it is done, and
    ``reset``, a flip-flop of "still counting", so the reset leaves a flip-flop with no LUT after
    it. ``reset`` is low until the first edge.

    ``clk`` is the clock the timer counts (a reset-less domain of the module's own)."""
    def __init__(self, cycles: int):
        if not isinstance(cycles, int) or cycles < 1:
            raise ValueError(f"cycles must be a positive integer, not {cycles!r}")
        self.cycles = cycles
        self.clk = Signal()
        self.reset = Signal()

    def elaborate(self, platform):
        m = Module()
        m.domains.power_on = ClockDomain(reset_less=True, local=True)
        m.d.comb += ClockSignal("power_on").eq(self.clk)
        count = Signal(max(self.cycles - 1, 1).bit_length() + 1)
        with m.If(~count[-1]):
            m.d.power_on += count.eq(count + 1)
        m.d.power_on += self.reset.eq(~count[-1])
        return m


class _BareICE40(BareDevice, LatticeICE40Platform):
    family = "ice40"
    target_mhz = 100
    _io_attrs = Attrs(IO_STANDARD="SB_LVCMOS")
    _clk_attrs = Attrs(GLOBAL=True, IO_STANDARD="SB_LVCMOS")
    #: How long the reset holds after configuration: iCE40 block RAM reads zeros for about
    #: 3 us after it, so the reset lasts five times that.
    reset_seconds = 15e-6

    def create_missing_domain(self, name):
        """The ``sync`` domain on the clock pin, reset for :attr:`reset_seconds` after
        configuration. The reset is a flip-flop of its own (a timer's "still counting", one edge
        late), so the path into every resettable flip-flop is a flip-flop, the global buffer and
        the SR pin. (Amaranth's iCE40 platform drives it through an inverter after its timer: a
        LUT in front of the global buffer, 4.6 ns on HX8K, which capped the Fmax measured for
        any core at 215 MHz.) Having no initial value but 0, that flip-flop releases the reset
        on the first edge after configuration and raises it on the second."""
        if name != "sync" or self.default_clk is None:
            return super().create_missing_domain(name)
        m = Module()
        m.submodules.clk_buffer = clk_buffer = io.Buffer("i", self.request(self.default_clk,
                                                                            dir="-"))
        m.submodules.power_on = power_on = PowerOnReset(
            int(self.reset_seconds * self.default_clk_frequency))
        m.domains.sync = ClockDomain()
        m.d.comb += [
            power_on.clk.eq(clk_buffer.i),
            ClockSignal("sync").eq(clk_buffer.i),
            ResetSignal("sync").eq(power_on.reset),
        ]
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
