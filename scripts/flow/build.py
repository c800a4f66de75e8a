"""Running Yosys and nextpnr on a core: bare-device measurements and board bitstreams.

Both go through one path, :func:`run_flow`: Amaranth prepares a build plan (RTLIL, constraints, a
Yosys script and the tool command lines in ``build_top.json``); Yosys synthesizes it; the core's
cells are counted by hierarchy; the design is checked against the device's capacity; nextpnr
places and routes it (once per placement seed); and, for a bitstream, the packer runs. The
functions here run the tool commands themselves, so that builds can run in worker processes with a
progress display, nextpnr can run with several seeds after one synthesis, and every tool's output
goes to a log file in the build directory (``yosys.log``, ``nextpnr.log``, ...).

Amaranth's build scripts run the tools with ``-q`` / ``--quiet`` and point their logs at
``top.rpt`` and ``top.tim``; the plan here is prepared ``verbose``, so that the tools also print
their output, which :func:`run_step` keeps in the step's log.

Each tool is found through its environment variable (see :mod:`cipher_cores.scripts.flow.toolchain`), as in
Amaranth's own build scripts. Results are dataclasses: :class:`DeviceMeasurement` and
:class:`BoardBuild`.
"""

from __future__ import annotations

import json
import os
import pathlib
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable

from .measure import (STAT_FILE, STAT_SCRIPT, CellCounts, NextpnrResult, Overflow,
                      classify_cells, core_and_harness, hierarchy_cells, keep_hierarchy_script,
                      overflow, parse_nextpnr_log, parse_nextpnr_overflow, parse_nextpnr_report)
from cipher_cores.cores import fpga

from .digest import rtlil_digest
from .progress import Progress
from .toolchain import tool_env_var


__all__ = ["BuildError", "DoesNotFit", "PlanFiles", "BuildFile", "FlowResult",
           "DeviceMeasurement", "BoardBuild", "extract_plan", "run_step", "seed_command",
           "run_flow", "measure_device", "build_board", "MEASURE_CORE_PATH", "BOARD_CORE_PATH"]


#: Hierarchical name of the core inside a bare-device measurement.
MEASURE_CORE_PATH = "top.harness.core"
#: Hierarchical name of the core inside a board self-test build.
BOARD_CORE_PATH = "top.selftest.core"

# Elaboration is cheap next to the tools; keep it on one thread at a time.
_ELABORATE = threading.Lock()


class BuildError(Exception):
    """A tool failed; the message (one line) names the step and points at its log."""


class DoesNotFit(BuildError):
    """The design needs more of a resource than the device has (:attr:`overflow`)."""
    def __init__(self, message: str, overflow: Overflow):
        super().__init__(message)
        self.overflow = overflow

    def __reduce__(self):
        return type(self), (self.args[0], self.overflow)


class PlanFiles:
    """An extracted build plan: its directory and the tool command lines Amaranth wrote."""
    def __init__(self, root: pathlib.Path, name: str, commands: list):
        self.root = root
        self.name = name
        self.commands = commands

    def command(self, tool_prefix: str) -> list:
        for argv in self.commands:
            if argv[0].startswith(tool_prefix):
                return list(argv)
        raise KeyError(tool_prefix)


@dataclass(frozen=True)
class BuildFile:
    """A file a build wrote that the user may want to read: ``what`` it is and its ``path``."""
    what: str
    path: str


def extract_plan(plan, root) -> PlanFiles:
    """Write ``plan`` (an Amaranth :class:`~amaranth.build.run.BuildPlan`) to ``root``."""
    root = pathlib.Path(root)
    root.mkdir(parents=True, exist_ok=True)
    plan.extract(str(root))
    name = plan.script[len("build_"):] if plan.script.startswith("build_") else plan.script
    with open(root / f"{plan.script}.json") as file:
        commands = json.load(file)["commands"]
    return PlanFiles(root, name, commands)


#: Tools whose own log (given by this option) is complete where their printed output is not:
#: YoWASP Yosys stops printing to its standard output once ABC has run, but its ``-l`` log
#: (Amaranth's ``top.rpt``) goes on to the end of the script.
_OWN_LOG_OPTION = {"yosys": "-l"}


def run_step(argv: list, cwd, log_name: str, environ=None) -> int:
    """Run tool command ``argv`` (``argv[0]`` is the tool's name, as in Amaranth's command lists)
    in ``cwd``, with its output in ``cwd/log_name``. Returns the exit code.

    The log starts with the command line and ends with the exit status, so that it is never
    empty even for a tool that prints nothing when it succeeds (``icepack``). For Yosys, the
    body is Yosys' own complete log (see :data:`_OWN_LOG_OPTION`).
    """
    environ = dict(os.environ if environ is None else environ)
    command = environ.get(tool_env_var(argv[0]), argv[0])
    started = time.monotonic()
    path = pathlib.Path(cwd) / log_name
    header = f"$ {shlex.join([command, *argv[1:]])}\n"
    with open(path, "w") as log:
        log.write(header)
        log.flush()
        try:
            result = subprocess.run([command, *argv[1:]], cwd=cwd, stdout=log,
                                    stderr=subprocess.STDOUT, env=environ,
                                    stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise BuildError(f"cannot run {argv[0]} as {command!r}: not found") from None
    own_option = _OWN_LOG_OPTION.get(argv[0])
    own_log = _option_value(argv, own_option) if own_option else None
    if own_log and (pathlib.Path(cwd) / own_log).is_file():
        own = (pathlib.Path(cwd) / own_log).read_text(errors="replace")
        if own.strip():
            printed = path.read_text(errors="replace")[len(header):]
            # Keep what was printed but is not in the tool's log (YoWASP's notices).
            extra = [line for line in printed.splitlines()
                     if line.strip() and line not in own]
            path.write_text(header + "".join(f"{line}\n" for line in extra) + own)
    with open(path, "a") as log:
        log.write(f"\n$ exit status {result.returncode} after "
                  f"{time.monotonic() - started:.1f} s\n")
    return result.returncode


def _tail(path, lines: int = 3) -> str:
    try:
        text = pathlib.Path(path).read_text(errors="replace").rstrip().splitlines()
    except OSError:
        return ""
    text = [line for line in text if line.strip() and not line.startswith("$ ")]
    interesting = [line for line in text if "ERROR" in line.upper()]
    chosen = [line.strip() for line in (interesting or text)[-lines:]]
    # Cell names can run to hundreds of characters: keep each line readable.
    return " | ".join(line if len(line) <= 160 else line[:157] + "..." for line in chosen)


def seed_command(argv: list, seed: int, report: str) -> list:
    """A nextpnr command line that places with ``seed``, writes its JSON report to ``report``,
    and writes its log and outputs to seed-specific files."""
    result = []
    outputs = {"--log", "--asc", "--textcfg"}
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in outputs and index + 1 < len(argv):
            stem, dot, ext = argv[index + 1].rpartition(".")
            result += [arg, f"{stem}.seed{seed}.{ext}" if dot else f"{argv[index + 1]}.seed{seed}"]
            index += 2
            continue
        if arg in ("--seed", "--report"):
            index += 2
            continue
        result.append(arg)
        index += 1
    return result + ["--seed", str(seed), "--report", report]


def _option_value(argv: list, option: str) -> str | None:
    for index, arg in enumerate(argv[:-1]):
        if arg == option:
            return argv[index + 1]
    return None


# --- the shared flow --------------------------------------------------------------------------

@dataclass
class Placement:
    """One nextpnr run: its seed, Fmax and the device utilization it reports."""
    seed: int
    fmax_mhz: float | None
    utilization: dict


@dataclass
class FlowResult:
    """What :func:`run_flow` found: cells by hierarchy, whether the design fits, one
    :class:`Placement` per seed, and the files it wrote."""
    directory: pathlib.Path
    core_cells: CellCounts | None = None
    harness_cells: CellCounts | None = None
    design_cells: CellCounts | None = None
    overflow: Overflow | None = None
    #: Where the overflow was read: the Yosys statistics or nextpnr's log.
    overflow_source: str = ""
    placements: list = field(default_factory=list)
    files: list = field(default_factory=list)
    #: :func:`~cipher_cores.scripts.flow.digest.rtlil_digest` of the design handed to Yosys.
    digest: str = ""

    @property
    def fits(self) -> bool:
        return self.overflow is None


def _read_text(path) -> str:
    try:
        return pathlib.Path(path).read_text(errors="replace")
    except OSError:
        return ""


def run_flow(top, platform, directory, *, key: str, core_path: str, capacity: dict,
             seeds: Iterable[int], per_seed_files: bool, pack: bool,
             progress: Progress | None = None, environ=None,
             keep: Iterable[str] = ()) -> FlowResult:
    """Prepare ``top`` for ``platform`` in ``directory``, synthesize it, count the cells of the
    core at ``core_path`` by hierarchy, check the design against ``capacity``, then place and
    route it once per seed and, with ``pack``, run the packer.

    With ``per_seed_files``, each seed's log, report and placed design go to seed-specific files
    (``nextpnr.seed2.log``, ``report.seed2.json``); otherwise there must be one seed and the
    files are ``nextpnr.log`` and ``report.json``, where the packer expects them.

    ``keep`` names more modules to keep as hierarchy levels (to count their cells too).

    A design that does not fit is returned with :attr:`FlowResult.overflow` set (by the capacity
    check, or read from nextpnr's log when nextpnr stops). Any other failure raises
    :exc:`BuildError`.
    """
    progress = progress or Progress(enabled=False)
    seeds = list(seeds)
    directory = pathlib.Path(directory)
    family = fpga.family(platform)
    result = FlowResult(directory)

    def add_file(what: str, name: str):
        if (directory / name).exists():
            result.files.append(BuildFile(what, str(directory / name)))

    progress.update(key, "elaborating")
    with _ELABORATE:
        plan = platform.prepare(
            top, name="top", verbose=True,
            script_after_read="\n".join(keep_hierarchy_script(module)
                                         for module in dict.fromkeys([core_path, *keep])),
            script_after_synth=STAT_SCRIPT,
            nextpnr_opts="--timing-allow-fail")
    files = extract_plan(plan, directory)
    result.digest = rtlil_digest(plan.files["top.il"])

    progress.update(key, "synthesis (yosys)")
    code = run_step(files.command("yosys"), directory, "yosys.log", environ)
    add_file("Yosys log", "yosys.log")
    add_file("Yosys report", "top.rpt")
    if code != 0:
        progress.update(key, "FAILED in yosys", done=True)
        raise BuildError(f"{key}: yosys exited with {code}: {_tail(directory / 'yosys.log')} "
                         f"(log: {directory / 'yosys.log'})")
    with open(directory / STAT_FILE) as file:
        stat = json.load(file)
    add_file("cell counts (yosys stat)", STAT_FILE)
    core, harness = core_and_harness(stat, "top", core_path, family)
    result.core_cells, result.harness_cells = core, harness
    result.design_cells = classify_cells(hierarchy_cells(stat, "top"), family)
    result.overflow = overflow(result.design_cells, capacity, family)
    if result.overflow is not None:
        result.overflow_source = f"counted after synthesis: {directory / STAT_FILE}"
        progress.update(key, f"does not fit: {result.overflow}", done=True)
        return result

    nextpnr = files.command("nextpnr")
    if not per_seed_files and len(seeds) != 1:
        raise ValueError("one seed without per_seed_files")
    for index, seed in enumerate(seeds):
        progress.update(key, f"place and route (nextpnr), seed {seed} ({index + 1}/{len(seeds)})")
        if per_seed_files:
            report, log = f"report.seed{seed}.json", f"nextpnr.seed{seed}.log"
            argv = seed_command(nextpnr, seed, report)
        else:
            report, log = "report.json", "nextpnr.log"
            argv = nextpnr + ["--seed", str(seed), "--report", report]
        timing_log = _option_value(argv, "--log")
        code = run_step(argv, directory, log, environ)
        add_file(f"nextpnr log, seed {seed}", log)
        if timing_log:
            add_file(f"nextpnr timing log, seed {seed}", timing_log)
        add_file(f"nextpnr report, seed {seed}", report)
        if code != 0:
            text = _read_text(directory / log) + _read_text(directory / (timing_log or ""))
            result.overflow = parse_nextpnr_overflow(text)
            if result.overflow is not None:
                result.overflow_source = f"nextpnr: {directory / log}"
                progress.update(key, f"does not fit: {result.overflow}", done=True)
                return result
            progress.update(key, f"FAILED in nextpnr (exit {code})", done=True)
            raise BuildError(f"{key}: nextpnr exited with {code}: {_tail(directory / log)} "
                             f"(log: {directory / log})")
        parsed: NextpnrResult = parse_nextpnr_report(str(directory / report))
        if parsed.fmax_mhz is None and timing_log:
            # Fall back to the log's last "Max frequency" line.
            frequencies = parse_nextpnr_log(_read_text(directory / timing_log))
            parsed.fmax_mhz = min(frequencies.values()) if frequencies else None
        result.placements.append(Placement(seed, parsed.fmax_mhz, parsed.utilization))

    if pack:
        for argv in files.commands:
            if argv[0] == "yosys" or argv[0].startswith("nextpnr"):
                continue
            progress.update(key, f"packing ({argv[0]})")
            log = f"{argv[0]}.log"
            code = run_step(argv, directory, log, environ)
            add_file(f"{argv[0]} log", log)
            if code != 0:
                progress.update(key, f"FAILED in {argv[0]}", done=True)
                raise BuildError(f"{key}: {argv[0]} exited with {code}: "
                                 f"{_tail(directory / log)} (log: {directory / log})")
    return result


# --- bare-device measurements -----------------------------------------------------------------

@dataclass
class DeviceMeasurement:
    """A core measured on a bare device: its cells by hierarchy, the harness's, the whole
    design's, whether it fits, and the Fmax of each placement seed.

    :meth:`to_dict` gives the form the report's JSON records.
    """
    label: str
    config: dict
    device: str
    family: str
    block_bits: int
    seeds: list
    build_dir: str
    constraint_mhz: float
    #: The configuration as text (:func:`~cipher_cores.scripts.flow.targets.parse_target` reads it).
    target: str = ""
    #: The digest of the design measured (:mod:`cipher_cores.scripts.flow.digest`).
    digest: str = ""
    #: ``"none"``: no reset reaches the core; ``"kept"``: the harness resets it.
    reset: str = "none"
    fit: bool | None = None
    fit_reason: str = ""
    core_cells: CellCounts | None = None
    harness_cells: CellCounts | None = None
    design_cells: CellCounts | None = None
    design_utilization: dict | None = None
    fmax_mhz: list = field(default_factory=list)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict:
        def cells(value):
            return None if value is None else value.to_dict()
        return {
            "config": self.config, "label": self.label, "device": self.device,
            "family": self.family, "block_bits": self.block_bits, "seeds": list(self.seeds),
            "build_dir": self.build_dir, "fit": self.fit, "fit_reason": self.fit_reason,
            "core_cells": cells(self.core_cells), "harness_cells": cells(self.harness_cells),
            "design_utilization": self.design_utilization, "fmax_mhz": list(self.fmax_mhz),
            "constraint_mhz": self.constraint_mhz, "design_cells": cells(self.design_cells),
            "elapsed_s": self.elapsed_s, "target": self.target, "digest": self.digest,
            "reset": self.reset,
        }


def measure_device(config, device, *, seeds: Iterable[int] = (1,), root="build/report",
                   progress: Progress | None = None, environ=None,
                   reset: str = "none") -> DeviceMeasurement:
    """Synthesize ``config`` (a :class:`~cipher_cores.cores.catalog.CoreConfig`) on ``device`` (a class of
    :mod:`cipher_cores.platforms.devices`) inside a measurement harness, place and route it once per seed, and
    return a :class:`DeviceMeasurement`.

    The core's cells are counted by hierarchy (:func:`~cipher_cores.scripts.flow.measure.core_and_harness`).
    A design that cannot fit is reported with ``fit`` false and no Fmax. ``reset="kept"``
    measures the core with its reset kept (see :mod:`cipher_cores.scripts.flow.digest`), in a
    build folder of its own.
    """
    from .digest import measurement_top

    progress = progress or Progress(enabled=False)
    seeds = list(seeds)
    key = f"{config.label} @ {device.name}"
    directory = (pathlib.Path(root) / config.slug /
                 (device.name + ("_reset_kept" if reset == "kept" else "")))
    started = time.monotonic()
    result = DeviceMeasurement(
        label=config.label, config=config.to_dict(), device=device.name, family=device.family,
        block_bits=config.block_bits, seeds=seeds, build_dir=str(directory),
        constraint_mhz=device.target_mhz, target=config.text, reset=reset)
    with _ELABORATE:
        top = measurement_top(config, reset)
    flow = run_flow(top, device(), directory, key=key, core_path=MEASURE_CORE_PATH,
                    capacity=device.capacity, seeds=seeds, per_seed_files=True, pack=False,
                    progress=progress, environ=environ)
    result.digest = flow.digest
    result.core_cells = flow.core_cells
    result.harness_cells = flow.harness_cells
    result.design_cells = flow.design_cells
    result.elapsed_s = round(time.monotonic() - started, 1)
    if not flow.fits:
        result.fit, result.fit_reason = False, str(flow.overflow)
        return result
    result.fit = True
    result.fmax_mhz = [placement.fmax_mhz for placement in flow.placements]
    result.design_utilization = flow.placements[0].utilization if flow.placements else None
    best = max((f for f in result.fmax_mhz if f is not None), default=None)
    progress.update(key, "done" + (f", best Fmax {best:.1f} MHz" if best else ""), done=True)
    return result


# --- board self-test bitstreams ---------------------------------------------------------------

@dataclass
class BoardBuild:
    """A board self-test build: the bitstream, the core's and the design's cells, the design's
    utilization, and the Fmax against the board clock (``timing_met``), with the files written.

    With ``do_build=False`` only the plan was written, and the figures are ``None``.
    """
    label: str
    config: dict
    board: str
    device: str
    family: str
    build_dir: str
    clock_mhz: float
    seed: int
    core_cells: CellCounts | None = None
    design_cells: CellCounts | None = None
    design_utilization: dict = field(default_factory=dict)
    fmax_mhz: float | None = None
    timing_met: bool = False
    bitstream: str | None = None
    elapsed_s: float = 0.0
    files: list = field(default_factory=list)       # BuildFile

    def to_dict(self) -> dict:
        def cells(value):
            return None if value is None else value.to_dict()
        return {
            "config": self.config, "label": self.label, "board": self.board,
            "device": self.device, "family": self.family, "build_dir": self.build_dir,
            "clock_mhz": self.clock_mhz, "seed": self.seed,
            "core_cells": cells(self.core_cells), "design_cells": cells(self.design_cells),
            "design_utilization": self.design_utilization, "fmax_mhz": self.fmax_mhz,
            "timing_met": self.timing_met, "bitstream": self.bitstream,
            "elapsed_s": self.elapsed_s,
            "files": {file.what: file.path for file in self.files},
        }


def board_timing(flow: FlowResult, clock_mhz: float) -> tuple:
    """``(fmax_mhz, utilization, timing_met)`` of a one-seed board build against its clock."""
    placement = flow.placements[0]
    met = placement.fmax_mhz is not None and placement.fmax_mhz >= clock_mhz
    return placement.fmax_mhz, placement.utilization, met


def bitstream_file(directory, files: list) -> str | None:
    """The bitstream the packer wrote in ``directory`` (``top.bin`` or ``top.bit``), also put
    first in ``files``; ``None`` if there is none."""
    for candidate in ("top.bin", "top.bit"):
        path = pathlib.Path(directory) / candidate
        if path.exists():
            files.insert(0, BuildFile("bitstream", str(path)))
            return str(path)
    return None


def build_board(config, board, *, root="build", seed: int = 1, loop_blocks: int | None = None,
                fault: str | None = None, progress: Progress | None = None, environ=None,
                do_build: bool = True) -> BoardBuild:
    """Build the self-test bitstream of ``config`` for ``board`` (a class of
    :mod:`cipher_cores.platforms.boards`) and return a :class:`BoardBuild`; with ``do_build=False`` only write
    the build files.

    Raises :exc:`DoesNotFit` if the design needs more of a resource than the board's device has,
    and :exc:`BuildError` if a tool fails.
    """
    from cipher_cores.platforms.selftest import SelfTestTop

    progress = progress or Progress(enabled=False)
    key = f"{config.label} @ {board.name}"
    directory = pathlib.Path(root) / f"{config.slug}_{board.name}"
    started = time.monotonic()
    platform = board()
    top = SelfTestTop(config, board, fault=fault,
                      **({} if loop_blocks is None else {"loop_blocks": loop_blocks}))
    result = BoardBuild(label=config.label, config=config.to_dict(), board=board.name,
                        device=platform.device, family=fpga.family(platform),
                        build_dir=str(directory),
                        clock_mhz=platform.default_clk_frequency / 1e6, seed=seed)
    if not do_build:
        progress.update(key, "elaborating")
        with _ELABORATE:
            plan = platform.prepare(top, name="top", verbose=True,
                                    script_after_read=keep_hierarchy_script(BOARD_CORE_PATH),
                                    script_after_synth=STAT_SCRIPT)
        extract_plan(plan, directory)
        progress.update(key, "build files written", done=True)
        return result

    flow = run_flow(top, platform, directory, key=key, core_path=BOARD_CORE_PATH,
                    capacity=board.capacity, seeds=[seed], per_seed_files=False, pack=True,
                    progress=progress, environ=environ)
    result.files = flow.files
    result.core_cells, result.design_cells = flow.core_cells, flow.design_cells
    if not flow.fits:
        raise DoesNotFit(f"{config.label} does not fit the {board.title} ({platform.device}): "
                         f"{flow.overflow} ({flow.overflow_source})", flow.overflow)
    result.fmax_mhz, result.design_utilization, result.timing_met = \
        board_timing(flow, result.clock_mhz)
    result.bitstream = bitstream_file(directory, result.files)
    result.elapsed_s = round(time.monotonic() - started, 1)
    fmax = "?" if result.fmax_mhz is None else f"{result.fmax_mhz:.1f}"
    progress.update(key, f"done, Fmax {fmax} MHz (clock {result.clock_mhz:.0f} MHz)", done=True)
    return result
