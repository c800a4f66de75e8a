""":func:`simulate_cipher`: one entry point to both back ends for a core with a
:class:`~cipher_cores.cores.interface.BlockCipherSignature`.

The gap and stall schedules are drawn here, before either back end runs (:func:`draw_schedules`),
so that both see the same ones and give the same transfers at the same edges.
"""

import random as _random
from typing import Sequence

from ..cipher import check_block_cipher
from .cxxrtl import run_cxxrtl
from .operations import CipherRun, LoadKey, Process
from .testbench import run_python


__all__ = ["BACKENDS", "draw_schedules", "simulate_cipher"]


#: The simulation back ends: Amaranth's simulator (:mod:`.testbench`), or the compiled CXXRTL
#: model (:mod:`.cxxrtl`).
BACKENDS = ("python", "cxxrtl")


def draw_schedules(operations: Sequence, rng: _random.Random, max_gap: int,
                   max_stall: int) -> tuple[list, list | None]:
    """The gaps and stalls of one :func:`simulate_cipher` run, drawn from ``rng`` up front.

    First one gap (0..max_gap) per operation, in order, then one stall (0..max_stall) per
    :class:`~cipher_cores.cores.sim.Process`. Gaps are all zero when ``max_gap`` is zero; stalls
    are ``None`` when ``max_stall`` is zero (``output.ready`` is then held high). Drawing them
    before the simulation, in this fixed order, makes them independent of how the testbenches
    interleave, so every back end sees the same schedules.
    """
    gaps = [rng.randint(0, max_gap) if max_gap else 0 for _ in operations]
    if not max_stall:
        return gaps, None
    blocks = sum(isinstance(op, Process) for op in operations)
    return gaps, [rng.randint(0, max_stall) for _ in range(blocks)]


def simulate_cipher(core, operations: Sequence, *, rng: _random.Random | None = None,
                    max_gap: int = 0, max_stall: int = 0, max_edges: int | None = None,
                    vcd: str | None = None, backend: str = "python",
                    random_valid: float = 1.0) -> CipherRun:
    """Simulate ``core`` on a sequence of :class:`~cipher_cores.cores.sim.LoadKey` and
    :class:`~cipher_cores.cores.sim.Process` operations.

    One producer testbench performs the operations in order on the ``key`` and ``input`` streams;
    a consumer accepts one output per :class:`~cipher_cores.cores.sim.Process`. With ``max_gap``
    (``max_stall``) and an ``rng``, the producer waits a random 0..max_gap edges before each
    transfer, and the consumer holds ``ready`` low for a random 0..max_stall edges before each one
    (both drawn up front by :func:`draw_schedules`). With both zero the streams run at full speed
    and ``output.ready`` stays high.

    ``backend`` is ``"python"`` (Amaranth's simulator) or ``"cxxrtl"`` (the core compiled by
    Yosys' CXXRTL and g++, see :mod:`cipher_cores.cores.sim.cxxrtl`: much faster once compiled,
    and the compiled model is cached). Both give identical results and transfer edges for the
    same ``rng``. ``vcd`` (a waveform file) needs the Python back end.

    A masked core (``random_bits`` > 0) is fed random words on its ``random`` stream by both back
    ends, with ``valid`` held high; with the Python back end ``random_valid`` below 1 raises it
    only on that fraction of edges (its results must not change, only its edges).

    Raises :exc:`RuntimeError` if the run does not finish within ``max_edges`` edges (by default a
    generous bound from the number of operations and the core's ``latency`` and
    ``key_load_cycles``), and :exc:`TypeError` if ``core`` is not a
    :class:`~cipher_cores.cores.cipher.BlockCipher`.
    """
    check_block_cipher(core, "core")
    if backend not in BACKENDS:
        raise ValueError(f"Simulation backend must be one of "
                         f"{', '.join(repr(name) for name in BACKENDS)}, not {backend!r}")
    if random_valid != 1.0 and backend != "python":
        raise ValueError(f"random_valid below 1 needs the 'python' backend, not {backend!r}")
    if vcd and backend != "python":
        raise ValueError(f"A VCD file can only be written by the 'python' backend, "
                         f"not {backend!r}")
    operations = list(operations)
    for op in operations:
        if not isinstance(op, (LoadKey, Process)):
            raise TypeError(f"Operation must be a LoadKey or a Process, not {op!r}")
    if rng is None:
        rng = _random.Random(0)
    if max_edges is None:
        # Cores that state their cycle figures (serial ones take thousands of edges a block)
        # get room for them too.
        per_operation = max(64, core.latency + core.key_load_cycles)
        max_edges = per_operation * (len(operations) + 4) * (1 + max_gap + max_stall)
        if getattr(core, "random_bits", 0):
            # A masked core also waits for its random words.
            max_edges = int(2 * max_edges / max(random_valid, 0.01))
    gaps, stalls = draw_schedules(operations, rng, max_gap, max_stall)
    if backend == "cxxrtl":
        return run_cxxrtl(core, operations, gaps, stalls, max_edges)
    return run_python(core, operations, gaps, stalls, max_edges, vcd, random_valid=random_valid)
