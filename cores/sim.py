"""Simulation helpers for cores with a :class:`~cipher_cores.cores.interface.BlockCipherSignature`.

These drive the ``key``, ``input`` and ``output`` streams from Amaranth async testbenches. The test
suite, the demo and the report script all use them, so that the cycle counts quoted by the report
are the ones the tests check.

All counts are clock edges of the ``sync`` domain, numbered from 1 at the first edge of the
simulation. A *transfer edge* is an edge at which a stream's ``valid`` and ``ready`` were both high.
"""

from dataclasses import dataclass, field
import random as _random
from typing import Iterable, Sequence

from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

from .cipher import check_block_cipher


__all__ = [
    "LoadKey", "Process", "Transfer", "StreamLog", "CipherRun",
    "stream_put", "stream_get", "stream_monitor", "simulate_cipher", "simulator_with_reset",
    "draw_schedules", "BACKENDS",
]


@dataclass(frozen=True)
class LoadKey:
    """An operation for :func:`simulate_cipher`: transfer ``key`` on the ``key`` stream."""
    key: int


@dataclass(frozen=True)
class Process:
    """An operation for :func:`simulate_cipher`: transfer one block on the ``input`` stream."""
    block: int
    decrypt: bool = False


@dataclass(frozen=True)
class Transfer:
    """One transfer seen on a stream: the edge it happened at and its payload (an integer)."""
    edge: int
    payload: int


@dataclass
class StreamLog:
    """What :func:`stream_monitor` saw on one stream.

    ``transfers`` lists every transfer in order. ``violations`` lists every edge at which the
    producer broke the stream rules: ``valid`` dropped, or ``payload`` changed, while the previous
    payload had not been accepted.
    """
    transfers: list = field(default_factory=list)
    violations: list = field(default_factory=list)

    @property
    def edges(self) -> list:
        return [t.edge for t in self.transfers]

    @property
    def payloads(self) -> list:
        return [t.payload for t in self.transfers]


def _as_int(value) -> int:
    # A view of a struct layout is read back as a `data.Const`; its raw bits are what we compare.
    if hasattr(value, "as_value"):
        return value.as_value().value
    return int(value)


async def stream_put(ctx, stream, payload, *, gap: int = 0):
    """Transfer one ``payload`` on ``stream`` (driven by the testbench), after ``gap`` idle edges.

    Returns once the transfer edge has passed, with ``valid`` low again.
    """
    if gap:
        await ctx.tick().repeat(gap)
    ctx.set(stream.valid, 1)
    ctx.set(stream.payload, payload)
    await ctx.tick().until(stream.ready)
    ctx.set(stream.valid, 0)


async def stream_get(ctx, stream, *, stall: int = 0):
    """Accept one payload from ``stream`` (driven by the design), after holding ``ready`` low for
    ``stall`` edges. Returns the payload as an integer."""
    if stall:
        ctx.set(stream.ready, 0)
        await ctx.tick().repeat(stall)
    ctx.set(stream.ready, 1)
    payload, = await ctx.tick().sample(stream.payload).until(stream.valid)
    ctx.set(stream.ready, 0)
    return _as_int(payload)


def stream_monitor(streams: dict, logs: dict):
    """Make a background testbench that logs every transfer on ``streams`` (name to stream).

    ``logs`` is filled with a :class:`StreamLog` per name. Add the result with
    ``sim.add_testbench(..., background=True)``.
    """
    for name in streams:
        logs[name] = StreamLog()

    async def monitor(ctx):
        names = list(streams)
        watched = []
        for name in names:
            watched += [streams[name].valid, streams[name].ready, streams[name].payload]
        pending = {name: None for name in names}
        edge = 0
        async for clk, rst, *values in ctx.tick().sample(*watched):
            edge += 1
            for index, name in enumerate(names):
                valid, ready, payload = values[3 * index:3 * index + 3]
                payload = _as_int(payload)
                log = logs[name]
                if rst:
                    pending[name] = None
                    continue
                if pending[name] is not None and (not valid or payload != pending[name]):
                    log.violations.append(edge)
                if valid and ready:
                    log.transfers.append(Transfer(edge, payload))
                    pending[name] = None
                elif valid:
                    pending[name] = payload
                else:
                    pending[name] = None
    return monitor


def simulator_with_reset(core):
    """A simulator running ``core`` in an explicit ``sync`` domain with a clock, and that domain's
    reset signal, which a testbench can drive (``ctx.set(rst, 1)``) to reset the core mid-run."""
    m = Module()
    m.domains.sync = domain = ClockDomain()
    m.submodules.core = core
    sim = Simulator(m)
    sim.add_clock(1e-8)
    return sim, domain.rst


@dataclass
class CipherRun:
    """The outcome of :func:`simulate_cipher`."""
    key: StreamLog
    input: StreamLog
    output: StreamLog

    @property
    def results(self) -> list:
        """The output blocks, in order, as integers."""
        return self.output.payloads

    @property
    def latencies(self) -> list:
        """For each block: edges from its input transfer to its output transfer."""
        return [o - i for i, o in zip(self.input.edges, self.output.edges)]

    @property
    def intervals(self) -> list:
        """Edges between consecutive output transfers."""
        edges = self.output.edges
        return [b - a for a, b in zip(edges, edges[1:])]


BACKENDS = ("python", "cxxrtl")


def draw_schedules(operations: Sequence, rng: _random.Random, max_gap: int,
                   max_stall: int) -> tuple[list, list | None]:
    """The gaps and stalls of one :func:`simulate_cipher` run, drawn from ``rng`` up front.

    First one gap (0..max_gap) per operation, in order, then one stall (0..max_stall) per
    :class:`Process`. Gaps are all zero when ``max_gap`` is zero; stalls are ``None`` when
    ``max_stall`` is zero (``output.ready`` is then held high). Drawing them before the
    simulation, in this fixed order, makes them independent of how the testbenches interleave,
    so every back end sees the same schedules.
    """
    gaps = [rng.randint(0, max_gap) if max_gap else 0 for _ in operations]
    if not max_stall:
        return gaps, None
    blocks = sum(isinstance(op, Process) for op in operations)
    return gaps, [rng.randint(0, max_stall) for _ in range(blocks)]


def simulate_cipher(core, operations: Sequence, *, rng: _random.Random | None = None,
                    max_gap: int = 0, max_stall: int = 0, max_edges: int | None = None,
                    vcd: str | None = None, backend: str = "python") -> CipherRun:
    """Simulate ``core`` on a sequence of :class:`LoadKey` and :class:`Process` operations.

    One producer testbench performs the operations in order on the ``key`` and ``input`` streams;
    a consumer accepts one output per :class:`Process`. With ``max_gap`` (``max_stall``) and an
    ``rng``, the producer waits a random 0..max_gap edges before each transfer, and the consumer
    holds ``ready`` low for a random 0..max_stall edges before each one (both drawn up front by
    :func:`draw_schedules`). With both zero the streams run at full speed and ``output.ready``
    stays high.

    ``backend`` is ``"python"`` (Amaranth's simulator) or ``"cxxrtl"`` (the core compiled by
    Yosys' CXXRTL and g++, see :mod:`cipher_cores.cores.sim_cxxrtl`: much faster once compiled, and the
    compiled model is cached). Both give identical results and transfer edges for the same
    ``rng``. ``vcd`` (a waveform file) needs the Python back end.

    Raises :exc:`RuntimeError` if the run does not finish within ``max_edges`` edges (by default a
    generous bound from the number of operations and the core's ``latency`` and
    ``key_load_cycles``), and :exc:`TypeError` if ``core`` is not a
    :class:`~cipher_cores.cores.cipher.BlockCipher`.
    """
    check_block_cipher(core, "core")
    if backend not in BACKENDS:
        raise ValueError(f"Simulation backend must be one of "
                         f"{', '.join(repr(name) for name in BACKENDS)}, not {backend!r}")
    if vcd and backend != "python":
        raise ValueError(f"A VCD file can only be written by the 'python' backend, "
                         f"not {backend!r}")
    operations = list(operations)
    for op in operations:
        if not isinstance(op, (LoadKey, Process)):
            raise TypeError(f"Operation must be a LoadKey or a Process, not {op!r}")
    blocks = sum(isinstance(op, Process) for op in operations)
    if rng is None:
        rng = _random.Random(0)
    if max_edges is None:
        # Cores that state their cycle figures (serial ones take thousands of edges a block)
        # get room for them too.
        per_operation = max(64, core.latency + core.key_load_cycles)
        max_edges = per_operation * (len(operations) + 4) * (1 + max_gap + max_stall)
    gaps, stalls = draw_schedules(operations, rng, max_gap, max_stall)
    if backend == "cxxrtl":
        from .sim_cxxrtl import run_cxxrtl
        return run_cxxrtl(core, operations, gaps, stalls, max_edges)
    logs = {}

    async def producer(ctx):
        for op, gap in zip(operations, gaps):
            if isinstance(op, LoadKey):
                await stream_put(ctx, core.key, op.key, gap=gap)
            else:
                await stream_put(ctx, core.input,
                                 {"block": op.block, "decrypt": int(op.decrypt)}, gap=gap)

    async def consumer(ctx):
        if stalls is None:
            ctx.set(core.output.ready, 1)
            while len(logs["output"].transfers) < blocks:
                await ctx.tick()
            return
        for stall in stalls:
            await stream_get(ctx, core.output, stall=stall)
        # Let the monitor log the last transfer edge before the simulation stops.
        await ctx.tick()

    async def watchdog(ctx):
        for _ in range(max_edges):
            await ctx.tick()
        raise RuntimeError(f"simulation did not finish within {max_edges} edges")

    sim = Simulator(core)
    sim.add_clock(1e-8)
    sim.add_testbench(stream_monitor(
        {"key": core.key, "input": core.input, "output": core.output}, logs), background=True)
    sim.add_testbench(watchdog, background=True)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()
    return CipherRun(key=logs["key"], input=logs["input"], output=logs["output"])
