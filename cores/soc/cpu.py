"""PicoRV32, a small RISC-V CPU written in Verilog by Claire Xenia Wolf, as a Wishbone initiator.

The Verilog comes from the ``pythondata-cpu-picorv32`` package; :class:`PicoRV32` instantiates
its ``picorv32_wb`` module and adds the file to the platform (simulators read it from
:func:`picorv32_source`).
"""


from pathlib import Path

from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..bus.wishbone import WishboneSignature
from .memory_map import IRQ_HANDLER_ADDRESS, RESET_ADDRESS


__all__ = ["ISAS", "PicoRV32", "picorv32_source", "picorv32_path"]


#: The instruction sets a :class:`PicoRV32` can be built for.
ISAS = ("rv32i", "rv32im", "rv32imc")


def picorv32_path() -> Path:
    """The path of ``picorv32.v`` in the installed ``pythondata-cpu-picorv32``."""
    try:
        import pythondata_cpu_picorv32
    except ImportError:
        raise RuntimeError("the SoC needs the PicoRV32 Verilog: pip install "
                           "pythondata-cpu-picorv32") from None
    return Path(pythondata_cpu_picorv32.data_location) / "picorv32.v"


def picorv32_source() -> str:
    """The text of ``picorv32.v``."""
    return picorv32_path().read_text()


class PicoRV32(wiring.Component):
    """A PicoRV32 CPU with a Wishbone B4 classic initiator port and 32 interrupt lines.

    Parameters
    ----------
    isa : ``"rv32i"``, ``"rv32im"`` or ``"rv32imc"``
        RV32I; with the M extension (multiply and divide: about 1,000 iCE40 LUT4 more); or with
        M, C (compressed instructions, which compilers emit unless told not to) and the
        ``rdcycle``/``rdinstret`` counters: the configuration that runs any RV32 program a
        compiler makes, and the simulator's default.
    interrupts : :class:`bool`
        PicoRV32's interrupt support (about 390 iCE40 LUT4). Without it ``irq`` is ignored and
        firmware polls.

    The configuration, chosen for area: no cycle counters but with ``rv32imc`` (``rdcycle`` traps;
    the SoC has a memory-mapped one), interrupts (unless ``interrupts=False``) with PicoRV32's q-registers and without its timer,
    dual-ported register file (4 iCE40 block RAMs), two-stage shifter, misaligned accesses and
    illegal instructions trapping. The reset address is
    :data:`~cipher_cores.cores.soc.memory_map.RESET_ADDRESS`, the interrupt handler
    :data:`~cipher_cores.cores.soc.memory_map.IRQ_HANDLER_ADDRESS`. Interrupts are PicoRV32's own (custom
    instructions ``maskirq``, ``retirq``, ``getq``, ``setq``; see the firmware kit's
    ``start.S``), not the RISC-V privileged architecture's.

    Members
    -------
    bus : ``Out(WishboneSignature(addr_width=30))``
        Word address (byte address // 4).
    irq : ``In(32)``
        Interrupt lines; 0 to 2 are PicoRV32's own (timer, ``ebreak``/illegal instruction,
        bus error), so devices use 3 and up.
    trap : ``Out(1)``
        High once the CPU has stopped on a trap it could not hand to an interrupt handler (an
        illegal instruction, ``ebreak`` or a misaligned access with IRQ 1 masked).
    """
    bus: Out(WishboneSignature(addr_width=30))
    irq: In(32)
    trap: Out(1)

    def __init__(self, *, isa: str = "rv32i", interrupts: bool = True):
        if isa not in ISAS:
            raise ValueError(f"isa must be one of {', '.join(ISAS)}, not {isa!r}")
        if not isinstance(interrupts, bool):
            raise TypeError(f"interrupts must be True or False, not {interrupts!r}")
        self._isa = isa
        self._interrupts = interrupts
        super().__init__()

    @property
    def isa(self) -> str:
        return self._isa

    @property
    def interrupts(self) -> bool:
        return self._interrupts

    def parameters(self) -> dict:
        """The ``picorv32_wb`` parameters this CPU is built with."""
        multiply = int(self._isa in ("rv32im", "rv32imc"))
        full = int(self._isa == "rv32imc")
        return {
            "ENABLE_COUNTERS": full, "ENABLE_COUNTERS64": full, "COMPRESSED_ISA": full,
            "ENABLE_IRQ": int(self._interrupts), "ENABLE_IRQ_QREGS": 1, "ENABLE_IRQ_TIMER": 0,
            "ENABLE_MUL": multiply, "ENABLE_DIV": multiply,
            "CATCH_MISALIGN": 1, "CATCH_ILLINSN": 1,
            "PROGADDR_RESET": RESET_ADDRESS, "PROGADDR_IRQ": IRQ_HANDLER_ADDRESS,
        }

    def elaborate(self, platform):
        m = Module()
        if platform is not None:
            platform.add_file("picorv32.v", picorv32_source())
        address = Signal(32)
        # PicoRV32 must see its reset asserted to start: some platforms' sync domains have none
        # (ECP5 initialises flip-flops at configuration), so hold it for 16 cycles after
        # configuration too.
        settling = Signal(range(16), init=15)
        with m.If(settling != 0):
            m.d.sync += settling.eq(settling - 1)
        reset = ResetSignal(allow_reset_less=True) | (settling != 0)
        m.submodules.core = Instance(
            "picorv32_wb",
            **{f"p_{name}": value for name, value in self.parameters().items()},
            i_wb_clk_i=ClockSignal(), i_wb_rst_i=reset,
            o_wbm_adr_o=address, o_wbm_dat_o=self.bus.dat_w, i_wbm_dat_i=self.bus.dat_r,
            o_wbm_we_o=self.bus.we, o_wbm_sel_o=self.bus.sel, o_wbm_stb_o=self.bus.stb,
            i_wbm_ack_i=self.bus.ack, o_wbm_cyc_o=self.bus.cyc,
            i_pcpi_wr=0, i_pcpi_rd=0, i_pcpi_wait=0, i_pcpi_ready=0,
            i_irq=self.irq, o_trap=self.trap,
        )
        m.d.comb += self.bus.adr.eq(address[2:])
        return m
