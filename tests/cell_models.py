"""Simulation models of the FPGA cells the cores instantiate by hand (:mod:`cipher_cores.cores.lut`,
:mod:`cipher_cores.cores.block_ram`), so that the form of a core built for a device can be simulated against
the reference model."""

import pytest
from amaranth.hdl import Cat, Const, Elaboratable, Module, Mux, Signal, unsigned
from amaranth.lib import memory

from cipher_cores.cores import block_ram, lut


__all__ = ["LUTCellModel", "DP16KDModel", "SBRAM40Model", "lut_cells", "dp16kd_model",
           "block_ram_models"]


class LUTCellModel(Elaboratable):
    """Stands for the ``LUT4`` and ``PFUMX`` instances :mod:`cipher_cores.cores.lut` makes on ECP5 and the
    ``SB_LUT4`` ones it makes on iCE40, from their documented behaviour: ``Z = INIT[{D, C, B,
    A}]``, ``Z = C0 ? ALUT : BLUT`` and ``O = LUT_INIT[{I3, I2, I1, I0}]``."""
    def __init__(self, kind, **kwargs):
        self.kind, self.ports = kind, kwargs

    def elaborate(self, platform):
        m = Module()
        ports = self.ports
        if self.kind == "SB_LUT4":
            index = Cat(ports["i_I0"], ports["i_I1"], ports["i_I2"], ports["i_I3"])
            m.d.comb += ports["o_O"].eq(ports["p_LUT_INIT"].bit_select(index, 1))
        elif self.kind == "LUT4":
            index = Cat(ports["i_A"], ports["i_B"], ports["i_C"], ports["i_D"])
            m.d.comb += ports["o_Z"].eq(ports["p_INIT"].bit_select(index, 1))
        else:
            assert self.kind == "PFUMX"
            m.d.comb += ports["o_Z"].eq(Mux(ports["i_C0"], ports["i_ALUT"], ports["i_BLUT"]))
        return m


class DP16KDModel(Elaboratable):
    """A model of the ``DP16KD`` as :mod:`cipher_cores.cores.block_ram` configures it: true dual port,
    1024x18 on each port (word address ``ADx13..ADx4``), ``REGMODE="OUTREG"`` (a read passes
    the address register, taken on an edge where ``CEx`` is high, then the output register,
    taken where ``OCEx`` is high), ``WRITEMODE="NORMAL"`` (a write, on an edge where ``WEx`` and
    ``CEx`` are high, leaves the output unchanged), contents from ``INITVAL_00`` ..
    ``INITVAL_3F`` as Yosys' ECP5 mapping lays them out (checked against it below)."""
    instances = 0
    sites = []

    def __init__(self, kind, **kwargs):
        assert kind == "DP16KD"
        self.kwargs = kwargs
        DP16KDModel.sites.append(kwargs.get("a_BEL"))
        for port in "AB":
            for name, value in (("DATA_WIDTH", 18), ("REGMODE", "OUTREG"),
                                ("CSDECODE", "0b000"), ("WRITEMODE", "NORMAL")):
                assert kwargs[f"p_{name}_{port}"] == value
        DP16KDModel.instances += 1

    def elaborate(self, platform):
        m = Module()
        kwargs = self.kwargs
        words = []
        for row in range(64):
            value = kwargs[f"p_INITVAL_{row:02X}"].value
            words += [(value >> (20 * k)) & ((1 << 18) - 1) for k in range(16)]
        m.submodules.ram = ram = memory.Memory(shape=unsigned(18), depth=1024, init=words)
        for port in "AB":
            def pin(name, bit="", port=port):
                return kwargs[f"i_{name}{port}{bit}"]

            for bit in range(3):
                assert isinstance(pin("CS", bit), Const) and pin("CS", bit).value == 0
            assert isinstance(pin("RST"), Const) and pin("RST").value == 0
            address = Signal(10)
            data_in = Signal(18)
            m.d.comb += [address[bit - 4].eq(pin("AD", bit)) for bit in range(4, 14)]
            m.d.comb += [data_in[bit].eq(pin("DI", bit)) for bit in range(18)]
            write = ram.write_port()
            m.d.comb += [write.addr.eq(address), write.data.eq(data_in),
                         write.en.eq(pin("WE") & pin("CE"))]
            read = ram.read_port(domain="sync", transparent_for=())
            m.d.comb += [read.addr.eq(address), read.en.eq(pin("CE") & ~pin("WE"))]
            output = Signal(18)
            with m.If(pin("OCE")):
                m.d.sync += output.eq(read.data)
            for bit in range(18):
                if f"o_DO{port}{bit}" in kwargs:
                    m.d.comb += kwargs[f"o_DO{port}{bit}"].eq(output[bit])
        return m


class SBRAM40Model(Elaboratable):
    """A model of the ``SB_RAM40_4K`` as :mod:`cipher_cores.cores.block_ram` configures it: 256x16
    (``READ_MODE = WRITE_MODE = 0``, ``RADDR``/``WADDR`` bits 7..0), a write of the bits ``MASK``
    leaves at 0 on an edge where ``WE`` and ``WCLKE`` are high, ``RDATA`` taken from the word at
    ``RADDR`` on an edge where ``RE`` and ``RCLKE`` are high (and held otherwise)."""
    instances = 0

    def __init__(self, kind, **kwargs):
        assert kind == "SB_RAM40_4K"
        assert kwargs["p_READ_MODE"] == 0 and kwargs["p_WRITE_MODE"] == 0
        self.kwargs = kwargs
        SBRAM40Model.instances += 1

    def elaborate(self, platform):
        m = Module()
        pins = self.kwargs
        m.submodules.ram = ram = memory.Memory(shape=unsigned(16), depth=256, init=[])
        write = ram.write_port(granularity=1)
        m.d.comb += [write.addr.eq(pins["i_WADDR"][:8]), write.data.eq(pins["i_WDATA"]),
                     write.en.eq((pins["i_WE"] & pins["i_WCLKE"]).replicate(16) &
                                 ~pins["i_MASK"])]
        read = ram.read_port(domain="sync", transparent_for=())
        m.d.comb += [read.addr.eq(pins["i_RADDR"][:8]),
                     read.en.eq(pins["i_RE"] & pins["i_RCLKE"]),
                     pins["o_RDATA"].eq(read.data)]
        return m


@pytest.fixture
def dp16kd_model(monkeypatch):
    monkeypatch.setattr(block_ram, "Instance", DP16KDModel)
    DP16KDModel.instances = 0
    DP16KDModel.sites = []
    return DP16KDModel


@pytest.fixture
def lut_cells(monkeypatch):
    """:mod:`cipher_cores.cores.lut` makes :class:`LUTCellModel` instead of its cells."""
    monkeypatch.setattr(lut, "Instance", LUTCellModel)


@pytest.fixture
def block_ram_models(monkeypatch):
    """:mod:`cipher_cores.cores.block_ram` makes :class:`DP16KDModel` and :class:`SBRAM40Model` instead of
    its cells; the fixture's value counts them (``{"DP16KD": n, "SB_RAM40_4K": n}``)."""
    made = {"DP16KD": 0, "SB_RAM40_4K": 0}

    def model(kind, **kwargs):
        made[kind] += 1
        return (DP16KDModel if kind == "DP16KD" else SBRAM40Model)(kind, **kwargs)
    monkeypatch.setattr(block_ram, "Instance", model)
    return made
