"""A testbench for masked cores that feeds their ``random`` stream itself: the key and block
producer, the result consumer and a random-bit source with optional gaps (``random.valid`` low)
and all-zero bits. Used until the shared harness (``cipher_cores.cores.sim``) drives ``random``."""

from __future__ import annotations

import random as _random
from dataclasses import dataclass, field

from amaranth.sim import Simulator

from cipher_cores.cores.sim import LoadKey, Process

from .helpers import stream_get, stream_put


__all__ = ["Segment", "MaskedRun", "simulate_masked"]


@dataclass
class Segment:
    """Operations run with one setting of the random source: fresh bits from the run's generator
    (all zeros with ``zero_random``), ``random.valid`` low on a fraction ``random_gap`` of the
    edges. A segment starts once every result of the previous one has left the core."""
    operations: list
    zero_random: bool = False
    random_gap: float = 0.0


@dataclass
class MaskedRun:
    """What :func:`simulate_masked` saw: the results in order, the edge numbers of each block's
    input and output transfer and of each key transfer, and the random transfers per segment."""
    results: list = field(default_factory=list)
    input_edges: list = field(default_factory=list)
    output_edges: list = field(default_factory=list)
    key_edges: list = field(default_factory=list)
    random_transfers: list = field(default_factory=list)


def simulate_masked(core, segments, *, rng: _random.Random | None = None,
                    max_edges: int = 200_000) -> MaskedRun:
    """Run the :class:`Segment` list ``segments`` (operations :class:`LoadKey` / :class:`Process`)
    through ``core``, back to back within a segment, ``output.ready`` held high."""
    rng = rng or _random.Random(0)
    run = MaskedRun(random_transfers=[0] * len(segments))
    blocks = sum(isinstance(op, Process) for segment in segments for op in segment.operations)
    edge, current = [0], [0]

    async def clock(ctx):
        while True:
            _, _, ready, valid = await ctx.tick().sample(core.random.ready, core.random.valid)
            run.random_transfers[current[0]] += bool(ready and valid)
            edge[0] += 1
            if edge[0] > max_edges:
                raise AssertionError(f"not done after {max_edges} edges")

    async def source(ctx):
        while True:
            segment = segments[current[0]]
            ctx.set(core.random.valid, rng.random() >= segment.random_gap)
            ctx.set(core.random.payload,
                    0 if segment.zero_random else rng.getrandbits(len(core.random.payload)))
            await ctx.tick()

    async def producer(ctx):
        done = 0
        for index, segment in enumerate(segments):
            while len(run.results) < done:
                await ctx.tick()
            current[0] = index
            for op in segment.operations:
                if isinstance(op, LoadKey):
                    await stream_put(ctx, core.key, op.key)
                    run.key_edges.append(edge[0])
                elif isinstance(op, Process):
                    await stream_put(ctx, core.input, {"block": op.block, "decrypt": op.decrypt})
                    run.input_edges.append(edge[0])
                    done += 1
                else:
                    raise TypeError(f"not an operation: {op!r}")

    async def consumer(ctx):
        for _ in range(blocks):
            run.results.append(await stream_get(ctx, core.output))
            run.output_edges.append(edge[0])

    sim = Simulator(core)
    sim.add_clock(1e-8)
    sim.add_testbench(clock, background=True)
    sim.add_testbench(source, background=True)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.run()
    return run
