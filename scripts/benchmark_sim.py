"""Measure the simulation back ends of :func:`cipher_cores.cores.sim.simulate_cipher` in cycles per second.

Each core runs busy: one key, then blocks back to back with ``output.ready`` held high, so every
edge does work. The Python back end (Amaranth's simulator) runs a few hundred blocks, less a
one-block run that takes out its set-up time; the CXXRTL back end runs many more, timed from the
compiled model (process start, input and output included) without its one-off compilation,
which is reported separately: with ``--cold`` the model is built in a fresh cache directory,
otherwise it may come from the cache. Both runs are checked to agree on the blocks they share.

    python scripts/benchmark_sim.py                   # AES-128 and PRESENT-80, a table
    python scripts/benchmark_sim.py --cold --json     # include a fresh compilation; JSON output
"""

import argparse
from dataclasses import asdict, dataclass
import json
import os
import random
import sys
import tempfile
import time


__all__ = ["Measurement", "CORES", "measure", "main"]


@dataclass
class Measurement:
    """One back end on one core: edges simulated, wall-clock and CPU seconds taken (the CPU time
    of this process and of the model's process: the figure that a busy machine changes least),
    and the cycles per second of each."""
    core: str
    backend: str
    blocks: int
    cycles: int
    seconds: float
    cpu_seconds: float
    compile_seconds: float | None = None
    compiled: bool | None = None

    @property
    def cycles_per_second(self) -> float:
        return self.cycles / self.seconds

    @property
    def cycles_per_cpu_second(self) -> float:
        return self.cycles / self.cpu_seconds


def _cpu_time() -> float:
    """CPU seconds used so far by this process and its finished children."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _aes128():
    from cipher_cores.cores.aes import AES
    return AES(128)


def _present80():
    from cipher_cores.cores.present import PRESENT
    return PRESENT(80)


#: The cores measured, by the name used on the command line.
CORES = {"aes128": (_aes128, 128), "present80": (_present80, 80)}


def _operations(name: str, blocks: int) -> list:
    from cipher_cores.cores.sim import LoadKey, Process
    build, key_bits = CORES[name]
    block_bits = 128 if name.startswith("aes") else 64
    rng = random.Random(f"benchmark-{name}")
    return [LoadKey(rng.getrandbits(key_bits))] + \
        [Process(rng.getrandbits(block_bits), decrypt=bool(i & 1)) for i in range(blocks)]


def measure(name: str, python_blocks: int, cxxrtl_blocks: int, cold: bool) -> list:
    """Measure core ``name`` on both back ends; returns two :class:`Measurement` objects."""
    from cipher_cores.cores.sim import simulate_cipher
    from cipher_cores.cores.sim.cxxrtl import compile_model, run_model

    build, _ = CORES[name]
    operations = _operations(name, max(python_blocks, cxxrtl_blocks))
    python_ops = operations[:1 + python_blocks]

    # The Python simulator spends seconds elaborating and preparing the design: time a one-block
    # run too and count only the difference, so that the figure is the simulation speed.
    timed = []
    for ops in (operations[:2], python_ops):
        start, start_cpu = time.perf_counter(), _cpu_time()
        run = simulate_cipher(build(), ops)
        timed.append((run, time.perf_counter() - start, _cpu_time() - start_cpu))
    (short_run, short_seconds, short_cpu), (python_run, python_seconds, python_cpu) = timed
    python = Measurement(name, "python", python_blocks,
                         python_run.output.edges[-1] - short_run.output.edges[-1],
                         python_seconds - short_seconds, python_cpu - short_cpu)

    core = build()
    with tempfile.TemporaryDirectory(prefix="cipher-bench-") as cold_cache:
        model = compile_model(core, cache_dir=cold_cache if cold else None)
        cxxrtl_ops = operations[:1 + cxxrtl_blocks]
        start, start_cpu = time.perf_counter(), _cpu_time()
        cxxrtl_run = run_model(model, core, cxxrtl_ops)
        cxxrtl_seconds, cxxrtl_cpu = time.perf_counter() - start, _cpu_time() - start_cpu
    shared = min(python_blocks, cxxrtl_blocks)
    if cxxrtl_run.output.transfers[:shared] != python_run.output.transfers[:shared]:
        raise RuntimeError(f"{name}: the back ends disagree")
    cxxrtl = Measurement(name, "cxxrtl", cxxrtl_blocks, cxxrtl_run.output.edges[-1],
                         cxxrtl_seconds, cxxrtl_cpu, compile_seconds=model.seconds,
                         compiled=model.compiled)
    return [python, cxxrtl]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmark_sim",
        description="Cycles per second of the Python and CXXRTL simulation back ends, on busy "
                    "cores (one key, then blocks back to back).")
    parser.add_argument("--core", action="append", choices=sorted(CORES),
                        help="core to measure (repeatable; default: all)")
    parser.add_argument("--python-blocks", type=int, default=300, metavar="N",
                        help="blocks for the Python back end (default: %(default)s)")
    parser.add_argument("--cxxrtl-blocks", type=int, default=200_000, metavar="N",
                        help="blocks for the CXXRTL back end (default: %(default)s)")
    parser.add_argument("--cold", action="store_true",
                        help="compile the CXXRTL model in a fresh cache directory, so the "
                             "compile time is a real build")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    if args.python_blocks < 1 or args.cxxrtl_blocks < 1:
        parser.error("block counts must be at least 1")

    results = []
    for name in args.core or sorted(CORES):
        results += measure(name, args.python_blocks, args.cxxrtl_blocks, args.cold)

    if args.json:
        print(json.dumps([asdict(r) | {"cycles_per_second": r.cycles_per_second,
                                       "cycles_per_cpu_second": r.cycles_per_cpu_second}
                          for r in results], indent=2))
        return 0
    print(f"{'core':<10} {'backend':<8} {'blocks':>8} {'cycles':>10} {'seconds':>8} "
          f"{'cycles/s':>12} {'CPU s':>7} {'cycles/CPU s':>13} {'model':>16}")
    for r in results:
        model = "" if r.compile_seconds is None else \
            f"{r.compile_seconds:.1f} s {'built' if r.compiled else 'cached'}"
        print(f"{r.core:<10} {r.backend:<8} {r.blocks:>8} {r.cycles:>10} {r.seconds:>8.2f} "
              f"{r.cycles_per_second:>12,.0f} {r.cpu_seconds:>7.2f} "
              f"{r.cycles_per_cpu_second:>13,.0f} {model:>16}")
    for name in args.core or sorted(CORES):
        python, cxxrtl = [r for r in results if r.core == name]
        print(f"{name}: CXXRTL is "
              f"{cxxrtl.cycles_per_cpu_second / python.cycles_per_cpu_second:,.0f}x "
              f"the Python simulator per CPU second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
