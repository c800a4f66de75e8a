"""A LiteX SoC with the cipher peripheral whose bus master is outside, run in Icarus Verilog.

:func:`bench_soc` builds a LiteX ``SoCMini`` (no CPU, no UART; LiteX's controller CSRs behind its
CSR bridge) on a bare platform with two pins (``sys_clk``, ``sys_rst``), adds a Wishbone master
whose signals are top-level ports (``host_cyc``, ``host_adr``, ... : a 30-bit word address, as a
CPU's data bus), adds the peripheral with :func:`cipher_cores.cores.litex.add_cipher_peripheral`
and writes the SoC's Verilog. Every access therefore goes through LiteX's interconnect
(arbiter, address decoder, bus timeout) to the peripheral's region.

:class:`BusProgram` collects register accesses in Python (writes, reads checked against an
expected value, waits for the interrupt port or a status bit) and :func:`bench_verilog` turns
them into a Verilog testbench. The expected values of the checked reads are not in the bench: it
reads them with ``$readmemh`` from the file named by ``+expected=FILE``, so that the same
compiled simulation can be run with a wrong expectation and must then fail.
:func:`run_bench` compiles the bench with the SoC's sources (``iverilog -g2005``) and runs it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from cipher_cores.cores.bus.regmap import register


__all__ = ["BenchSoC", "bench_soc", "BusProgram", "bench_verilog", "BenchRun", "run_bench"]

_HOST_FIELDS = ("cyc", "stb", "we", "adr", "dat_w", "sel", "dat_r", "ack", "err")


@dataclass
class BenchSoC:
    verilog: Path          # the SoC's top module, ``soc``
    sources: list          # the platform's other sources (the peripheral's Verilog)
    origin: int            # the peripheral's byte address


def bench_soc(directory: Path, *, core: str = "aes-128", origin=None,
              fifo_words: int | None = 8) -> BenchSoC:
    """Build the SoC around ``core`` (data FIFOs of ``fifo_words``) and write its Verilog, and
    the memory contents it reads at time 0, into ``directory``."""
    from litex.build.generic_platform import GenericPlatform, Pins
    from litex.build.io import CRG
    from litex.soc.integration.soc_core import SoCMini
    from litex.soc.interconnect import wishbone

    from cipher_cores.cores.litex import add_cipher_peripheral

    class BarePlatform(GenericPlatform):
        pass

    platform = BarePlatform("", [("sys_clk", 0, Pins(1)), ("sys_rst", 0, Pins(1))],
                            name="litex_bench")
    soc = SoCMini(platform, 50e6, ident="cipher-cores LiteX bench")
    soc.crg = CRG(platform.request("sys_clk"), platform.request("sys_rst"))
    host = wishbone.Interface(data_width=32, address_width=32, addressing="word")
    for name in _HOST_FIELDS:
        getattr(host, name).name_override = f"host_{name}"
    soc.bus.add_master(name="host", master=host)
    peripheral = add_cipher_peripheral(soc, name="aes", core=core, origin=origin,
                                       directory=str(directory), fifo_words=fifo_words)
    peripheral.irq.name_override = "cipher_irq"
    ports = platform.constraint_manager.get_io_signals() | \
        {getattr(host, name) for name in _HOST_FIELDS} | {peripheral.irq}
    verilog = directory / "soc.v"
    output = platform.get_verilog(soc, ios=ports, name="soc")
    verilog.write_text(output.main_source)
    for name, content in output.data_files.items():   # $readmemh("soc_mem.init", ...)
        (directory / name).write_text(content)
    return BenchSoC(verilog, [Path(source[0]) for source in platform.sources],
                    soc.bus.regions["aes"].origin)


@dataclass
class BusProgram:
    """Register accesses of the bench, in order, at the peripheral at byte address ``origin``."""
    origin: int
    statements: list = field(default_factory=list)
    expected: list = field(default_factory=list)

    def _address(self, name: str, index: int = 0) -> int:
        return self.origin + register(name).offsets()[index]

    def write(self, name: str, value: int, index: int = 0):
        self.statements.append(
            f"wb_write(32'h{self._address(name, index):08x}, 32'h{value:08x});  // {name}{index}")

    def write_wide(self, name: str, value: int, words: int):
        """A KEY or IV: word i holds bits 32i+31..32i."""
        for index in range(words):
            self.write(name, (value >> (32 * index)) & 0xffff_ffff, index)

    def check(self, name: str, expected: int, label: str, index: int = 0):
        """Read a register and compare it with ``expected`` (taken from the expectation file)."""
        self.statements.append(
            f"wb_check(32'h{self._address(name, index):08x}, {len(self.expected)});"
            f"  // {label}")
        self.expected.append((expected, label))

    def wait_irq(self, level: int, limit: int = 1000):
        """Wait (at most ``limit`` edges) until the SoC's interrupt port is ``level``."""
        self.statements.append(f"wait_irq(1'b{level}, {limit});")

    def check_irq(self, level: int):
        self.statements.append(f"check_irq(1'b{level});")

    def expectations(self, wrong: int | None = None) -> str:
        """The expectation file; ``wrong``: that entry with one bit flipped."""
        values = [value ^ (1 if index == wrong else 0)
                  for index, (value, _) in enumerate(self.expected)]
        return "".join(f"{value:08x}\n" for value in values)


_BENCH = """\
`timescale 1ns/1ps
// Generated by tests/support/litex_bench.py: drives the LiteX SoC's external Wishbone master.
module bench;
  localparam CHECKS = {checks};
  reg sys_clk = 1'b0;
  reg sys_rst = 1'b1;
  reg host_cyc = 1'b0, host_stb = 1'b0, host_we = 1'b0;
  reg [29:0] host_adr = 30'd0;
  reg [31:0] host_dat_w = 32'd0;
  reg [3:0] host_sel = 4'd0;
  wire [31:0] host_dat_r;
  wire host_ack, host_err, cipher_irq;
  reg [31:0] expected [0:CHECKS-1];
  reg [1023:0] expected_file;
  reg [31:0] data;
  integer errors = 0, accesses = 0, checked = 0, edges = 0;

  soc dut (.sys_clk(sys_clk), .sys_rst(sys_rst),
           .host_cyc(host_cyc), .host_stb(host_stb), .host_we(host_we), .host_adr(host_adr),
           .host_dat_w(host_dat_w), .host_sel(host_sel), .host_dat_r(host_dat_r),
           .host_ack(host_ack), .host_err(host_err), .cipher_irq(cipher_irq));

  always #5 sys_clk = ~sys_clk;
  always @(posedge sys_clk) edges = edges + 1;

  // One classic cycle: signals change 1 ns after a rising edge; ack is sampled at the falling
  // edge and the access ends on the next rising edge.
  task wb_access(input we, input [31:0] address, input [31:0] value);
    integer waited;
    begin
      host_adr = address[31:2]; host_dat_w = value; host_sel = 4'hf; host_we = we;
      host_cyc = 1'b1; host_stb = 1'b1;
      waited = 0;
      @(negedge sys_clk);
      while (host_ack !== 1'b1 && waited < 100) begin
        if (host_err === 1'b1) begin
          $display("ERROR %0d ns: bus error at %h", $time, address);
          errors = errors + 1;
        end
        waited = waited + 1;
        @(negedge sys_clk);
      end
      if (host_ack !== 1'b1) begin
        $display("ERROR %0d ns: no ack at %h", $time, address);
        errors = errors + 1;
      end
      data = host_dat_r;
      @(posedge sys_clk); #1;
      host_cyc = 1'b0; host_stb = 1'b0; host_we = 1'b0;
      accesses = accesses + 1;
    end
  endtask

  task wb_write(input [31:0] address, input [31:0] value);
    wb_access(1'b1, address, value);
  endtask

  task wb_check(input [31:0] address, input integer index);
    begin
      wb_access(1'b0, address, 32'd0);
      checked = checked + 1;
      if (data !== expected[index]) begin
        $display("ERROR %0d ns: check %0d read %h at %h, expected %h",
                 $time, index, data, address, expected[index]);
        errors = errors + 1;
      end
    end
  endtask

  task wait_irq(input level, input integer limit);
    integer waited;
    begin
      waited = 0;
      while (cipher_irq !== level && waited < limit) begin
        @(posedge sys_clk); #1;
        waited = waited + 1;
      end
      if (cipher_irq !== level) begin
        $display("ERROR %0d ns: irq not %b after %0d edges", $time, level, limit);
        errors = errors + 1;
      end
    end
  endtask

  task check_irq(input level);
    if (cipher_irq !== level) begin
      $display("ERROR %0d ns: irq is %b, expected %b", $time, cipher_irq, level);
      errors = errors + 1;
    end
  endtask

  initial begin
    if (!$value$plusargs("expected=%s", expected_file)) begin
      $display("ERROR no +expected=FILE");
      $finish;
    end
    $readmemh(expected_file, expected);
    repeat (4) @(posedge sys_clk);
    #1 sys_rst = 1'b0;
    repeat (2) @(posedge sys_clk);
    #1;
{statements}
    $display("SUMMARY accesses=%0d checks=%0d edges=%0d errors=%0d", accesses, checked, edges,
             errors);
    $finish;
  end
endmodule
"""


def bench_verilog(program: BusProgram) -> str:
    return _BENCH.format(checks=max(1, len(program.expected)),
                         statements="\n".join(f"    {line}" for line in program.statements))


@dataclass
class BenchRun:
    output: str
    errors: list
    summary: dict | None


def compile_bench(soc: BenchSoC, program: BusProgram, directory: Path) -> Path:
    """Compile the bench of ``program`` with the SoC (``iverilog -g2005``); return the binary."""
    bench = directory / "bench.v"
    bench.write_text(bench_verilog(program))
    binary = directory / "bench.vvp"
    compiled = subprocess.run(
        ["iverilog", "-g2005", "-s", "bench", "-o", str(binary), str(bench), str(soc.verilog),
         *map(str, soc.sources)], capture_output=True, text=True)
    assert compiled.returncode == 0, f"iverilog failed:\n{compiled.stdout}{compiled.stderr}"
    return binary


def run_bench(soc: BenchSoC, binary: Path, program: BusProgram, directory: Path, *,
              wrong: int | None = None) -> BenchRun:
    """Run the compiled bench with the program's expectations, written into ``directory`` (one
    of them wrong if ``wrong`` is an index), in the SoC's folder (where its memory contents
    are)."""
    import re

    expected = directory / ("expected.hex" if wrong is None else f"expected_wrong{wrong}.hex")
    expected.write_text(program.expectations(wrong))
    ran = subprocess.run(["vvp", "-n", str(binary), f"+expected={expected}"],
                         capture_output=True, text=True, cwd=soc.verilog.parent)
    output = ran.stdout + ran.stderr
    errors = [line for line in output.splitlines() if line.startswith("ERROR")]
    match = re.search(r"SUMMARY accesses=(\d+) checks=(\d+) edges=(\d+) errors=(\d+)", output)
    summary = None if match is None else dict(zip(("accesses", "checks", "edges", "errors"),
                                                  map(int, match.groups())))
    return BenchRun(output, errors, summary)
