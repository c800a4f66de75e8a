"""Where a design's cells go: every module of a target counted on its own, by hierarchy.

``python -m cipher_cores.scripts.flow.breakdown wishbone:aes-bram-128 --device ice40-up5k``
prepares the target for the bare device as the report does (the core inside the measurement
harness), synthesizes it with every module kept as its own hierarchy level, and prints each
module's own LUT4, FF, carry and block RAM cells, and the total of the target without the harness.
Keeping every level stops Yosys optimizing across them, so the total is somewhat above the
report's (which keeps only the target's level); the split is what this is for.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

from .measure import CellCounts, classify_cells
from .toolchain import ToolchainError


__all__ = ["module_cells", "main"]


_SYNTH = {"ice40": "synth_ice40 -top top", "ecp5": "synth_ecp5 -top top"}


def module_cells(target_text: str, device_name: str) -> list:
    """``[(module, CellCounts)]``: each module of ``target_text`` on ``device_name`` with its own
    cells (not its submodules'), in hierarchy order, the target's own level first."""
    from cipher_cores.cores.fpga import family
    from cipher_cores.platforms.devices import get_device

    from .digest import measurement_top
    from .targets import parse_target
    from .toolchain import configure_toolchain, prepare_tools

    target = parse_target(target_text)
    device = get_device(device_name)
    configure_toolchain()
    yosys = prepare_tools(["yosys"])["yosys"]
    plan = device().prepare(measurement_top(target), name="top")
    kind = family(device())
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder)
        (path / "top.il").write_text(plan.files["top.il"])
        script = ("read_rtlil top.il; setattr -mod -set keep_hierarchy 1 *; "
                  f"{_SYNTH[kind]}; tee -q -o stat.json stat -json")
        subprocess.run([yosys, "-q", "-p", script], cwd=folder, check=True,
                       stdout=subprocess.DEVNULL)
        stat = json.loads((path / "stat.json").read_text())
    rows = []
    for name, module in stat["modules"].items():
        name = name.lstrip("\\")
        if not name.startswith("top.harness.core"):
            continue
        rows.append((name[len("top.harness."):],
                     classify_cells(module.get("num_cells_by_type", {}), kind)))
    return sorted(rows, key=lambda row: row[0])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cipher_cores.scripts.flow.breakdown",
        description="Count a target's cells module by module (synthesis only).")
    parser.add_argument("target", help="a report target, e.g. wishbone:aes-bram-128")
    parser.add_argument("--device", default="ice40-up5k", help="bare device (default "
                        "ice40-up5k)")
    args = parser.parse_args(argv)
    try:
        rows = module_cells(args.target, args.device)
    except (KeyError, ValueError, ToolchainError) as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return 1
    print(f"{'module':<48} {'LUT4':>6} {'FF':>6} {'carry':>6} {'BRAM':>5}")
    total = CellCounts()
    for name, cells in rows:
        print(f"{name:<48} {cells.lut4:>6} {cells.ff:>6} {cells.carry:>6} {cells.bram:>5}")
        total = CellCounts(*(a + b for a, b in zip(total.to_dict().values(),
                                                    cells.to_dict().values())))
    print(f"{'total':<48} {total.lut4:>6} {total.ff:>6} {total.carry:>6} {total.bram:>5}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
