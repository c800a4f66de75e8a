"""Run cocotb test modules against the exported Verilog in Icarus Verilog.

:func:`export_verilog` writes a target's Verilog through ``cipher-cores export`` (as a user
would); :func:`build` compiles it once with cocotb's Python runner (``cocotb_tools.runner``,
Icarus, ``-g2012``: the export has no ``always @*`` block, so it behaves as under ``-g2005``);
:func:`run_cocotb` runs the cocotb tests of a module in ``tests/cocotb/`` (all, or one) on the
build and parses cocotb's results file. :meth:`CocotbRun.check` raises :exc:`AssertionError`
naming each failed cocotb test with its message, and :meth:`CocotbRun.check_case` does so for
one test, so a pytest test that calls them fails when a cocotb test fails (or did not run, or
the simulator stopped early).
"""

from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path


__all__ = ["ROOT", "COCOTB_PACKAGE", "SEED_VARIABLE", "export_verilog", "build", "CocotbCase",
           "CocotbRun", "read_results", "run_cocotb"]

ROOT = Path(__file__).resolve().parent.parent.parent
#: The package the cocotb test modules are imported from (``tests/cocotb/``).
COCOTB_PACKAGE = "tests.cocotb"
#: The environment variable the seed reaches the cocotb modules in (read by
#: ``tests/cocotb/firmware.py``'s ``seeded``).
SEED_VARIABLE = "CIPHER_COCOTB_SEED"
#: Environment variables ``cipher-cores export`` may set (to YoWASP's Yosys), undone after.
_EXPORT_VARIABLES = ("AMARANTH_USE_YOSYS", "YOSYS", "CIPHER_CORES_TOOL_VARS")


def export_verilog(arguments: list, path: Path, name: str) -> Path:
    """``cipher-cores export ARGUMENTS --verilog PATH --name NAME``; ``path``. The environment
    the command changes is restored after it."""
    from cipher_cores.scripts.cli import main

    saved = {variable: os.environ.get(variable) for variable in _EXPORT_VARIABLES}
    try:
        code = main(["export", *arguments, "--verilog", str(path), "--name", name])
    finally:
        for variable, value in saved.items():
            if value is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = value
    assert code == 0, f"cipher-cores export {' '.join(arguments)} exited with {code}"
    return path


def build(sources: list, toplevel: str, build_dir: Path):
    """Compile ``sources`` (top module ``toplevel``) for cocotb with Icarus into ``build_dir``;
    the runner to give :func:`run_cocotb`."""
    from cocotb_tools.runner import get_runner

    runner = get_runner("icarus")
    runner.build(sources=[Path(source) for source in sources], hdl_toplevel=toplevel,
                 build_dir=build_dir, timescale=("1ns", "1ps"), always=True,
                 log_file=build_dir / "build.log")
    return runner


@dataclass(frozen=True)
class CocotbCase:
    """One cocotb test's outcome: ``failure`` is its message (``None`` if it passed; a skipped
    test counts as failed); ``sim_time_ns`` the simulated time it took."""
    name: str
    failure: str | None
    sim_time_ns: float


@dataclass(frozen=True)
class CocotbRun:
    """The cocotb tests of one simulator run, from its results file, and its log."""
    module: str
    cases: tuple
    log: str
    exit_code: int

    @property
    def failed(self) -> list:
        return [case for case in self.cases if case.failure is not None]

    def check(self, expected: int | None = None):
        """Fail (:exc:`AssertionError`) unless every test passed (and, given ``expected``, that
        many ran), naming the failures and ending with the log's tail."""
        tail = "\n".join(self.log.splitlines()[-40:])
        assert self.cases, f"{self.module}: no cocotb test ran (exit {self.exit_code})\n{tail}"
        failures = "\n".join(f"{case.name}: {case.failure}" for case in self.failed)
        assert not failures, f"{self.module}: cocotb tests failed:\n{failures}\n{tail}"
        if expected is not None:
            names = [case.name for case in self.cases]
            assert len(names) == expected, f"{self.module}: ran {names}, expected {expected}"

    def log_of(self, name: str) -> str:
        """The lines of the log from the start of cocotb test ``name`` to the start of the next
        test (or the summary); the last 40 lines if the log does not show it start."""
        lines = self.log.splitlines()
        start = next((index for index, line in enumerate(lines)
                      if f"running {self.module}.{name} " in line), None)
        if start is None:
            return "\n".join(lines[-40:])
        end = next((index for index in range(start + 1, len(lines))
                    if f"running {self.module}." in lines[index] or "** TEST " in lines[index]),
                   len(lines))
        return "\n".join(lines[start:end])

    def check_case(self, name: str):
        """Fail (:exc:`AssertionError`) unless cocotb test ``name`` ran and passed, with its
        message and its part of the log."""
        found = [case for case in self.cases if case.name == name]
        assert found, f"{self.module}: no cocotb test {name} ran (exit {self.exit_code}); " \
                      f"ran {[case.name for case in self.cases]}\n{self.log_of(name)}"
        assert found[0].failure is None, \
            f"{self.module}.{name} failed: {found[0].failure}\n{self.log_of(name)}"


def read_results(results: Path) -> tuple:
    """The :class:`CocotbCase` of each test in cocotb's results file ``results``."""
    cases = []
    for case in ElementTree.parse(results).getroot().iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        message = None
        if problem is not None:
            message = (problem.get("message") or "") + (problem.text or "")
            message = message.strip() or "failed"
        if case.find("skipped") is not None:
            message = "skipped"
        properties = {item.get("name"): item.get("value") for item in case.iter("property")}
        cases.append(CocotbCase(case.get("name"), message,
                                float(properties.get("sim_time_duration") or 0)))
    return tuple(cases)


def run_cocotb(runner, module: str, toplevel: str, test_dir: Path, *, testcase: str | None = None,
               seed: int = 1, python_path: tuple = ()) -> CocotbRun:
    """Run cocotb module ``module`` (a name in ``tests/cocotb/`` such as ``wishbone_bench``, or
    a full module name in a folder of ``python_path``) on ``runner``'s build, only its test
    ``testcase`` if given, in ``test_dir``; ``seed`` reaches the module in
    :data:`SEED_VARIABLE` (and seeds cocotb's own ``random``)."""
    test_dir.mkdir(parents=True, exist_ok=True)
    results = test_dir / "results.xml"
    log = test_dir / "sim.log"
    full_name = module if python_path else f"{COCOTB_PACKAGE}.{module}"
    # The runner passes this process's sys.path to the simulator's Python as PYTHONPATH, and
    # under pytest it ends the process (SystemExit) when a test failed: both handled here.
    saved_path = list(sys.path)
    sys.path[:0] = [str(folder) for folder in (*python_path, ROOT)]
    exit_code = 0
    try:
        runner.test(test_module=full_name, hdl_toplevel=toplevel, test_dir=test_dir,
                    testcase=testcase, seed=seed, results_xml=str(results), log_file=log,
                    extra_env={SEED_VARIABLE: str(seed)})
    except SystemExit as stop:
        exit_code = stop.code if isinstance(stop.code, int) else 1
    finally:
        sys.path[:] = saved_path
    text = log.read_text(errors="replace") if log.exists() else ""
    cases = read_results(results) if results.exists() else ()
    return CocotbRun(full_name, cases, text, exit_code)
