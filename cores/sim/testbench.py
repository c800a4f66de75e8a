"""The Amaranth simulator back end: async testbenches that drive and watch streams.

:func:`stream_put`, :func:`stream_get` and :func:`stream_monitor` follow the rules of
:mod:`amaranth.lib.stream` for any stream; :func:`run_python` plays a block cipher's producer,
consumer and monitor with them (the back end ``"python"`` of
:func:`~cipher_cores.cores.sim.simulate_cipher`). The test suite, the demo and the report all use
these, so that the cycle counts quoted by the report are the ones the tests check.

Edges are numbered as :mod:`.operations` says: from 1 at the first edge of the ``sync`` domain.
"""

from typing import Sequence

from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

from .operations import CipherRun, LoadKey, Process, StreamLog, Transfer


__all__ = ["stream_put", "stream_get", "stream_monitor", "put_operations", "watchdog",
           "random_source", "simulator_with_reset", "run_python"]


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

    ``logs`` is filled with a :class:`~cipher_cores.cores.sim.StreamLog` per name. Add the result
    with ``sim.add_testbench(..., background=True)``.
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


async def put_operations(ctx, core, operations: Sequence, gaps: Sequence[int]):
    """Perform ``operations`` (:class:`LoadKey` and :class:`Process`) in order on the ``key`` and
    ``input`` streams of ``core``, each after its gap of idle edges."""
    for op, gap in zip(operations, gaps):
        if isinstance(op, LoadKey):
            await stream_put(ctx, core.key, op.key, gap=gap)
        else:
            await stream_put(ctx, core.input,
                             {"block": op.block, "decrypt": int(op.decrypt)}, gap=gap)


def random_source(stream, *, seed: int = 0, valid_probability: float = 1.0):
    """A background testbench that feeds fresh random words into ``stream`` (a masked core's
    ``random``), as a source: ``valid`` high (or, with ``valid_probability`` below 1, high on that
    fraction of idle edges, drawn from ``seed``), the payload held until its transfer and then
    replaced. Add it with ``sim.add_testbench(..., background=True)``."""
    import random as _random
    rng = _random.Random(seed)
    width = len(stream.payload)

    def offer(ctx) -> bool:
        valid = valid_probability >= 1 or rng.random() < valid_probability
        ctx.set(stream.valid, valid)
        if valid:
            ctx.set(stream.payload, rng.getrandbits(width))
        return valid

    async def source(ctx):
        # One sampled tick at a time (no `until`), so that the simulation can end at any edge.
        valid = offer(ctx)
        async for _, _, ready in ctx.tick().sample(stream.ready):
            if ready or not valid:
                valid = offer(ctx)
    return source


def watchdog(max_edges: int, what: str = "simulation"):
    """A background testbench that raises :exc:`RuntimeError` ("``what`` did not finish within
    ``max_edges`` edges") if the simulation is still running after ``max_edges`` edges."""
    async def testbench(ctx):
        for _ in range(max_edges):
            await ctx.tick()
        raise RuntimeError(f"{what} did not finish within {max_edges} edges")
    return testbench


def simulator_with_reset(core, *, random_valid: float = 1.0):
    """A simulator running ``core`` in an explicit ``sync`` domain with a clock, and that domain's
    reset signal, which a testbench can drive (``ctx.set(rst, 1)``) to reset the core mid-run.
    A masked core (``random_bits`` > 0) gets a :func:`random_source` on its ``random`` stream
    (``valid`` high on a ``random_valid`` fraction of edges)."""
    m = Module()
    m.domains.sync = domain = ClockDomain()
    m.submodules.core = core
    sim = Simulator(m)
    sim.add_clock(1e-8)
    if getattr(core, "random_bits", 0):
        sim.add_testbench(random_source(core.random, valid_probability=random_valid),
                          background=True)
    return sim, domain.rst


def run_python(core, operations: Sequence, gaps: Sequence[int], stalls: Sequence[int] | None,
               max_edges: int, vcd: str | None = None, *,
               random_valid: float = 1.0) -> CipherRun:
    """Run ``core`` on :class:`~cipher_cores.cores.sim.LoadKey` and
    :class:`~cipher_cores.cores.sim.Process` operations in Amaranth's simulator, with the
    schedules already drawn (:func:`~cipher_cores.cores.sim.draw_schedules`): one gap per
    operation, one stall per block or ``None`` to hold ``output.ready`` high.

    One producer performs the operations in order on the ``key`` and ``input`` streams; a
    consumer accepts one output per block. A masked core (``random_bits`` > 0) gets a
    :func:`random_source` on its ``random`` stream, ``valid`` high on a ``random_valid`` fraction
    of edges (1: always). ``vcd`` names a waveform file to write. Raises
    :exc:`RuntimeError` if the run does not finish within ``max_edges`` edges.
    """
    blocks = sum(isinstance(op, Process) for op in operations)
    logs = {}

    async def producer(ctx):
        await put_operations(ctx, core, operations, gaps)

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

    watchdog_bench = watchdog(max_edges)

    sim = Simulator(core)
    sim.add_clock(1e-8)
    sim.add_testbench(stream_monitor(
        {"key": core.key, "input": core.input, "output": core.output}, logs), background=True)
    sim.add_testbench(watchdog_bench, background=True)
    if getattr(core, "random_bits", 0):
        sim.add_testbench(random_source(core.random, valid_probability=random_valid),
                          background=True)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()
    return CipherRun(key=logs["key"], input=logs["input"], output=logs["output"])
