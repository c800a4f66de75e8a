"""A testbench for masked cores that feeds their ``random`` stream itself: the key and block
producer, the result consumer and a random-bit source with optional gaps (``random.valid`` low)
and all-zero bits. Used until the shared harness (``cipher_cores.cores.sim``) drives ``random``."""

from __future__ import annotations

import random as _random
from dataclasses import dataclass, field

from amaranth.sim import Simulator

from cipher_cores.cores.sim import LoadKey, Process

from .helpers import stream_get, stream_put


__all__ = ["Segment", "MaskedRun", "simulate_masked", "MaskedPlan", "masked_plan",
           "check_gaps_stall", "check_cycle_figures", "first_segment_counts"]


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


@dataclass
class MaskedPlan:
    """A masked core's standard check in one simulation (:func:`masked_plan`): its run, its
    segments, and for each named part the slice of the results and the answers expected."""
    core: object
    run: MaskedRun
    segments: list
    ranges: dict
    expected: list

    def part(self, name: str) -> tuple:
        """The results of part ``name`` and the answers expected."""
        return self.run.results[self.ranges[name]], self.expected[self.ranges[name]]

    def edges(self, name: str) -> tuple:
        """The input and output transfer edges of part ``name``'s blocks."""
        return self.run.input_edges[self.ranges[name]], self.run.output_edges[self.ranges[name]]


def masked_plan(core, vectors: list, config, rng: _random.Random) -> MaskedPlan:
    """Run the standard check of a masked ``core`` (catalog configuration ``config``): the known
    answers ``vectors`` (objects with ``key``, ``plaintext`` and ``ciphertext``), the last one
    twice, back to back, then random keys and blocks (part ``"fresh"``), all in one segment
    (``"known"`` and ``"fresh"``); then random blocks with all-zero random bits (``"zero"``);
    then random blocks with ``random.valid`` low on about a third of the edges (``"gaps"``)."""
    from .helpers import expected_results, random_operations

    known = []
    for vector in vectors:
        known += [LoadKey(vector.key), Process(vector.plaintext, False)]
    known.append(Process(vectors[-1].plaintext, False))
    known_expected = [v.ciphertext for v in vectors] + [vectors[-1].ciphertext]
    fresh, zero, gaps = (random_operations(config, rng, keys=keys, blocks_per_key=2)
                         for keys in (2, 1, 1))
    parts = [("known", known_expected)] + [(name, expected_results(config, operations))
                                           for name, operations in (("fresh", fresh),
                                                                    ("zero", zero),
                                                                    ("gaps", gaps))]
    segments = [Segment(known + fresh), Segment(zero, zero_random=True),
                Segment(gaps, random_gap=0.35)]
    ranges, expected = {}, []
    for name, answers in parts:
        ranges[name] = slice(len(expected), len(expected) + len(answers))
        expected += answers
    run = simulate_masked(core, segments, rng=rng)
    return MaskedPlan(core, run, segments, ranges, expected)


def check_gaps_stall(plan: MaskedPlan):
    """The blocks run with gaps in ``random.valid`` give the right results, each later than the
    core's latency (the core waited for random bits)."""
    results, expected = plan.part("gaps")
    assert results == expected
    latencies = [o - i for i, o in zip(*plan.edges("gaps"))]
    assert all(latency > plan.core.latency for latency in latencies)


def check_cycle_figures(plan: MaskedPlan):
    """With ``random.valid`` high, the measured latency, initiation interval (the last known
    answer's two blocks) and key load equal the core's properties."""
    core = plan.core
    inputs, outputs = plan.edges("known")
    assert [o - i for i, o in zip(inputs, outputs)] == [core.latency] * len(inputs)
    assert inputs[-1] - inputs[-2] == outputs[-1] - outputs[-2] == core.initiation_interval
    assert inputs[0] - plan.run.key_edges[0] == core.key_load_cycles


def first_segment_counts(plan: MaskedPlan) -> tuple:
    """``(keys, blocks, random transfers)`` of the plan's first segment (random valid always)."""
    operations = plan.segments[0].operations
    return (sum(isinstance(op, LoadKey) for op in operations),
            sum(isinstance(op, Process) for op in operations), plan.run.random_transfers[0])
