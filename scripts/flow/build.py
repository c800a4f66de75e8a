"""Running Yosys and nextpnr on a core: bare-device measurements and board bitstreams.

Amaranth writes a build plan (RTLIL, constraints, a Yosys script and the tool command lines in
``build_top.json``); the functions here run those commands themselves, so that several builds can
run at once with a progress display, nextpnr can be run with several placement seeds after one
synthesis, and every tool's output goes to a log file in the build directory.

Each tool is found through its environment variable (see :mod:`scripts.flow.toolchain`), as in
Amaranth's own build scripts.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable

from .measure import (STAT_FILE, STAT_SCRIPT, classify_cells, core_and_harness, fits,
                      hierarchy_cells, keep_hierarchy_script, parse_nextpnr_log,
                      parse_nextpnr_report)
from .progress import Progress
from .toolchain import tool_env_var


__all__ = ["BuildError", "PlanFiles", "extract_plan", "run_step", "seed_command",
           "measure_device", "build_board", "run_jobs", "MEASURE_CORE_PATH", "BOARD_CORE_PATH"]


#: Hierarchical name of the core inside a bare-device measurement.
MEASURE_CORE_PATH = "top.harness.core"
#: Hierarchical name of the core inside a board self-test build.
BOARD_CORE_PATH = "top.selftest.core"

# Elaboration is cheap next to the tools; keep it on one thread at a time.
_ELABORATE = threading.Lock()


class BuildError(Exception):
    """A tool failed; the message names the step and points at its log."""


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


def extract_plan(plan, root) -> PlanFiles:
    """Write ``plan`` (an Amaranth :class:`~amaranth.build.run.BuildPlan`) to ``root``."""
    root = pathlib.Path(root)
    root.mkdir(parents=True, exist_ok=True)
    plan.extract(str(root))
    name = plan.script[len("build_"):] if plan.script.startswith("build_") else plan.script
    with open(root / f"{plan.script}.json") as file:
        commands = json.load(file)["commands"]
    return PlanFiles(root, name, commands)


def run_step(argv: list, cwd, log_name: str, environ=None) -> int:
    """Run tool command ``argv`` (``argv[0]`` is the tool's name, as in Amaranth's command lists)
    in ``cwd``, with its output in ``cwd/log_name``. Returns the exit code."""
    environ = dict(os.environ if environ is None else environ)
    command = environ.get(tool_env_var(argv[0]), argv[0])
    with open(pathlib.Path(cwd) / log_name, "w") as log:
        try:
            result = subprocess.run([command, *argv[1:]], cwd=cwd, stdout=log,
                                    stderr=subprocess.STDOUT, env=environ,
                                    stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise BuildError(f"cannot run {argv[0]} as {command!r}: not found "
                             f"(set ${tool_env_var(argv[0])})") from None
    return result.returncode


def _tail(path, lines: int = 6) -> str:
    try:
        text = pathlib.Path(path).read_text(errors="replace").rstrip().splitlines()
    except OSError:
        return ""
    interesting = [line for line in text if "ERROR" in line.upper()]
    return " | ".join((interesting or text)[-lines:])


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


def _nextpnr_failure(root, log) -> tuple:
    """(does-not-fit, reason) for a failed nextpnr run, from its log."""
    text = ""
    try:
        text = (pathlib.Path(root) / log).read_text(errors="replace")
    except OSError:
        pass
    lowered = text.lower()
    for marker in ("unable to place", "failed to place", "not enough", "too many",
                   "utilisation", "utilization", "cannot be placed", "design uses"):
        if marker in lowered and "error" in lowered:
            return True, _tail(pathlib.Path(root) / log, 2)
    return False, _tail(pathlib.Path(root) / log)


def measure_device(config, device, *, seeds: Iterable[int] = (1,), root="build/report",
                   progress: Progress | None = None, environ=None) -> dict:
    """Synthesize ``config`` (a :class:`~cores.catalog.CoreConfig`) on ``device`` (a
    class of :mod:`platforms.devices`) inside a measurement harness, place and route it once per
    seed, and return the figures as a JSON-ready dict.

    The core's cells are counted by hierarchy (:func:`~scripts.flow.measure.core_and_harness`).
    A design that cannot fit is reported with ``fit`` false and no Fmax.
    """
    from platforms.harness import BareDeviceTop, MeasurementHarness

    progress = progress or Progress(enabled=False)
    seeds = list(seeds)
    key = f"{config.label} @ {device.name}"
    directory = pathlib.Path(root) / config.slug / device.name
    started = time.monotonic()
    result = {
        "config": config.to_dict(), "label": config.label, "device": device.name,
        "family": device.family, "block_bits": config.block_bits, "seeds": seeds,
        "build_dir": str(directory), "fit": None, "fit_reason": "",
        "core_cells": None, "harness_cells": None, "design_utilization": None,
        "fmax_mhz": [], "constraint_mhz": device.target_mhz,
    }

    progress.update(key, "elaborating")
    with _ELABORATE:
        top = BareDeviceTop(MeasurementHarness(config.build()))
        plan = device().prepare(
            top, name="top",
            script_after_read=keep_hierarchy_script(MEASURE_CORE_PATH),
            script_after_synth=STAT_SCRIPT,
            nextpnr_opts="--timing-allow-fail")
    files = extract_plan(plan, directory)

    progress.update(key, "synthesis (yosys)")
    if run_step(files.command("yosys"), directory, "yosys.log", environ) != 0:
        progress.update(key, "FAILED in yosys", done=True)
        raise BuildError(f"{key}: yosys failed: {_tail(directory / 'yosys.log')} "
                         f"(log: {directory / 'yosys.log'})")
    with open(directory / STAT_FILE) as file:
        stat = json.load(file)
    core, harness = core_and_harness(stat, "top", MEASURE_CORE_PATH, device.family)
    design = classify_cells(hierarchy_cells(stat, "top"), device.family)
    result.update(core_cells=core, harness_cells=harness, design_cells=design)
    ok, reason = fits(design, device.capacity, device.family)
    if not ok:
        result.update(fit=False, fit_reason=reason)
        progress.update(key, f"does not fit: {reason}", done=True)
        result["elapsed_s"] = round(time.monotonic() - started, 1)
        return result

    nextpnr = files.command("nextpnr")
    for index, seed in enumerate(seeds):
        progress.update(key, f"place and route, seed {seed} ({index + 1}/{len(seeds)})")
        report = f"report.seed{seed}.json"
        argv = seed_command(nextpnr, seed, report)
        log = f"nextpnr.seed{seed}.log"
        code = run_step(argv, directory, log, environ)
        if code != 0:
            over, reason = _nextpnr_failure(directory, f"top.seed{seed}.tim")
            if not over:
                over, reason = _nextpnr_failure(directory, log)
            if over:
                result.update(fit=False, fit_reason=reason)
                progress.update(key, "does not fit (nextpnr)", done=True)
                break
            progress.update(key, f"FAILED in nextpnr (exit {code})", done=True)
            raise BuildError(f"{key}: nextpnr exited with {code}: {reason} "
                             f"(log: {directory / log})")
        parsed = parse_nextpnr_report(str(directory / report))
        if parsed.fmax_mhz is None:
            # Fall back to the log's last "Max frequency" line.
            log_text = (directory / f"top.seed{seed}.tim").read_text(errors="replace")
            frequencies = parse_nextpnr_log(log_text)
            parsed.fmax_mhz = min(frequencies.values()) if frequencies else None
        result["fmax_mhz"].append(parsed.fmax_mhz)
        if result["design_utilization"] is None:
            result["design_utilization"] = parsed.utilization
        result["fit"] = True
    result["elapsed_s"] = round(time.monotonic() - started, 1)
    if result["fit"]:
        best = max(f for f in result["fmax_mhz"] if f is not None)
        progress.update(key, f"done, best Fmax {best:.1f} MHz", done=True)
    return result


def build_board(config, board, *, root="build", seed: int = 1, loop_blocks: int | None = None,
                fault: str | None = None, progress: Progress | None = None, environ=None,
                do_build: bool = True) -> dict:
    """Build the self-test bitstream of ``config`` for ``board`` (a class of :mod:`platforms.boards`)
    and return the build's figures; with ``do_build=False`` only write the build files.

    The result names the bitstream, the core's cells (by hierarchy), the design's utilization,
    and the achieved Fmax against the board clock (``timing_met``).
    """
    from platforms.selftest import SelfTestTop

    progress = progress or Progress(enabled=False)
    key = f"{config.label} @ {board.name}"
    directory = pathlib.Path(root) / f"{config.slug}_{board.name}"
    started = time.monotonic()
    progress.update(key, "elaborating")
    platform = board()
    top = SelfTestTop(config, board, fault=fault,
                      **({} if loop_blocks is None else {"loop_blocks": loop_blocks}))
    with _ELABORATE:
        plan = platform.prepare(
            top, name="top",
            script_after_read=keep_hierarchy_script(BOARD_CORE_PATH),
            script_after_synth=STAT_SCRIPT,
            nextpnr_opts=f"--timing-allow-fail --seed {seed} --report report.json")
    files = extract_plan(plan, directory)
    family = platform.family.lower()        # "iCE40" on iCE40 platforms
    result = {"config": config.to_dict(), "label": config.label, "board": board.name,
              "device": platform.device, "family": family, "build_dir": str(directory),
              "clock_mhz": platform.default_clk_frequency / 1e6, "seed": seed}
    if not do_build:
        progress.update(key, "build files written", done=True)
        return result

    steps = [("synthesis (yosys)", "yosys.log"), ("place and route (nextpnr)", "nextpnr.log")]
    for index, argv in enumerate(files.commands):
        text, log = steps[index] if index < len(steps) else (f"packing ({argv[0]})",
                                                             f"{argv[0]}.log")
        progress.update(key, text)
        code = run_step(argv, directory, log, environ)
        if code != 0:
            progress.update(key, f"FAILED in {argv[0]}", done=True)
            raise BuildError(f"{key}: {argv[0]} exited with {code}: "
                             f"{_tail(directory / log)} (log: {directory / log})")
        if argv[0] == "yosys":
            with open(directory / STAT_FILE) as file:
                stat = json.load(file)
            core, _ = core_and_harness(stat, "top", BOARD_CORE_PATH, family)
            result["core_cells"] = core
            result["design_cells"] = classify_cells(hierarchy_cells(stat, "top"), family)
    parsed = parse_nextpnr_report(str(directory / "report.json"))
    result["fmax_mhz"] = parsed.fmax_mhz
    result["design_utilization"] = parsed.utilization
    result["timing_met"] = (parsed.fmax_mhz is not None and
                            parsed.fmax_mhz >= result["clock_mhz"])
    for candidate in ("top.bin", "top.bit"):
        if (directory / candidate).exists():
            result["bitstream"] = str(directory / candidate)
    result["elapsed_s"] = round(time.monotonic() - started, 1)
    progress.update(key, f"done, Fmax {parsed.fmax_mhz:.1f} MHz "
                         f"(clock {result['clock_mhz']:.0f} MHz)", done=True)
    return result


def run_jobs(jobs: list, workers: int = 1) -> list:
    """Call every function in ``jobs`` (no arguments) on ``workers`` threads; return their
    results in order. An exception in a job is returned in its place, not raised."""
    def guarded(job: Callable):
        try:
            return job()
        except Exception as error:  # reported by the caller, per job
            return error
    if workers <= 1:
        return [guarded(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=workers) as executor:
        return list(executor.map(guarded, jobs))
