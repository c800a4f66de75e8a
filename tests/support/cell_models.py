"""Simulation models of the FPGA cells the cores instantiate by hand (:mod:`cipher_cores.cores.lut`,
:mod:`cipher_cores.cores.block_ram`), and :class:`SimulationPlatform`, which supplies them through
the seam of :mod:`cipher_cores.cores.fpga`, so that the form of a core built for a device can be
simulated against the reference model."""

from amaranth.hdl import Cat, Const, Elaboratable, Module, Mux, Signal, unsigned
from amaranth.lib import memory


__all__ = ["LUTCellModel", "DP16KDModel", "SBRAM40Model", "CELL_MODELS", "SimulationPlatform"]


class LUTCellModel(Elaboratable):
    """Stands for the ``LUT4`` and ``PFUMX`` cells :mod:`cipher_cores.cores.lut` makes on ECP5 and
    the ``SB_LUT4`` ones it makes on iCE40, from their documented behaviour: ``Z = INIT[{D, C,
    B, A}]``, ``Z = C0 ? ALUT : BLUT`` and ``O = LUT_INIT[{I3, I2, I1, I0}]``."""
    def __init__(self, kind, **kwargs):
        assert kind in ("SB_LUT4", "LUT4", "PFUMX")
        self.kind, self.kwargs = kind, kwargs

    def elaborate(self, platform):
        m = Module()
        ports = self.kwargs
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
    """A model of the ``DP16KD`` as :mod:`cipher_cores.cores.block_ram` configures it: true dual
    port, 1024x18 on each port (word address ``ADx13..ADx4``), ``REGMODE="OUTREG"`` (a read passes
    the address register, taken on an edge where ``CEx`` is high, then the output register,
    taken where ``OCEx`` is high), ``WRITEMODE="NORMAL"`` (a write, on an edge where ``WEx`` and
    ``CEx`` are high, leaves the output unchanged), contents from ``INITVAL_00`` ..
    ``INITVAL_3F`` as Yosys' ECP5 mapping lays them out (checked against that mapping in
    ``tests/test_aes_ttable.py``)."""
    def __init__(self, kind, **kwargs):
        assert kind == "DP16KD"
        self.kind, self.kwargs = kind, kwargs
        for port in "AB":
            for name, value in (("DATA_WIDTH", 18), ("REGMODE", "OUTREG"),
                                ("CSDECODE", "0b000"), ("WRITEMODE", "NORMAL")):
                assert kwargs[f"p_{name}_{port}"] == value

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
    def __init__(self, kind, **kwargs):
        assert kind == "SB_RAM40_4K"
        assert kwargs["p_READ_MODE"] == 0 and kwargs["p_WRITE_MODE"] == 0
        self.kind, self.kwargs = kind, kwargs

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


#: The model of each cell, by the name :func:`cipher_cores.cores.fpga.cell` is asked for.
CELL_MODELS = {"LUT4": LUTCellModel, "PFUMX": LUTCellModel, "SB_LUT4": LUTCellModel,
               "DP16KD": DP16KDModel, "SB_RAM40_4K": SBRAM40Model}


class SimulationPlatform:
    """A platform to elaborate a core for, so that it builds the form it has on ``family``
    (``"ice40"`` or ``"ecp5"``) and ``device`` (an Amaranth device name, which places block RAMs
    on a die with a floorplan), with each cell a model that the simulator runs.

    The cores read ``family`` and ``device`` (through :mod:`cipher_cores.cores.fpga`), and
    :func:`cipher_cores.cores.fpga.cell` asks :meth:`get_cell` for every cell, which makes a model
    of :data:`CELL_MODELS` and keeps it in :attr:`cells`, in the order they were made."""
    def __init__(self, family: str, device: str | None = None):
        self.family = family
        self.device = device
        self.cells = []

    def get_cell(self, kind: str, **kwargs):
        if kind not in CELL_MODELS:
            raise NotImplementedError(f"no simulation model of the {kind} cell")
        model = CELL_MODELS[kind](kind, **kwargs)
        self.cells.append(model)
        return model

    def count(self, kind: str) -> int:
        """How many ``kind`` cells were made."""
        return sum(cell.kind == kind for cell in self.cells)

    @property
    def sites(self) -> list:
        """The ``BEL`` of each ``DP16KD`` made (``None`` for one nextpnr places)."""
        return [cell.kwargs.get("a_BEL") for cell in self.cells if cell.kind == "DP16KD"]

    def __repr__(self):
        return f"SimulationPlatform({self.family!r}, {self.device!r})"
