"""Simulating a :class:`cipher_cores.cores.modes.ModeOfOperation`: keys and messages in, results and the edge
of every transfer out, with random gaps and back-pressure."""

import random
from dataclasses import dataclass

from amaranth.sim import Simulator

from cipher_cores.cores.aes import AES
from cipher_cores.cores.modes import Mode, ModeOfOperation
from cipher_cores.cores.sim import stream_monitor, stream_put
from cipher_cores.cores.sim import watchdog as _watchdog


__all__ = ["Key", "Message", "ModeRun", "simulate_mode", "check_vectors"]


@dataclass(frozen=True)
class Key:
    """Load ``key`` into the core."""
    key: int


@dataclass(frozen=True)
class Message:
    """Process ``blocks`` in ``mode`` from ``iv``."""
    mode: Mode
    decrypt: bool
    iv: int
    blocks: tuple


@dataclass
class ModeRun:
    results: list           # per Message, its result blocks
    markers: list           # per output block, (first, last)
    input_edges: list
    output_edges: list

    def intervals(self) -> list:
        edges = self.output_edges
        return [b - a for a, b in zip(edges, edges[1:])]


def simulate_mode(engine, operations, *, rng=None, max_gap=0, max_stall=0, max_edges=None):
    """Run ``operations`` (:class:`Key` and :class:`Message`) through ``engine`` in order.

    With ``max_gap``/``max_stall`` and ``rng`` the producer waits 0..max_gap edges before each
    transfer and the consumer holds ``output.ready`` low 0..max_stall edges before each block;
    otherwise ``output.ready`` stays high and blocks are offered back to back."""
    rng = rng or random.Random(0)
    operations = list(operations)
    blocks = sum(len(op.blocks) for op in operations if isinstance(op, Message))
    gaps = [rng.randint(0, max_gap) for _ in range(blocks + len(operations))]
    stalls = [rng.randint(0, max_stall) for _ in range(blocks)]
    if max_edges is None:
        max_edges = 40 * (blocks + len(operations) + 4) * (1 + max_gap + max_stall)
    block_bits = engine.block_bits
    logs = {}
    out = []

    async def producer(ctx):
        gap = iter(gaps)
        for op in operations:
            if isinstance(op, Key):
                await stream_put(ctx, engine.key, op.key, gap=next(gap))
                continue
            if hasattr(engine, "mode"):
                ctx.set(engine.mode, op.mode)
            for index, block in enumerate(op.blocks):
                await stream_put(ctx, engine.input, {
                    "block": block, "iv": op.iv, "decrypt": int(op.decrypt),
                    "first": int(index == 0), "last": int(index == len(op.blocks) - 1),
                }, gap=next(gap))

    async def consumer(ctx):
        for stall in stalls:
            if stall:
                ctx.set(engine.output.ready, 0)
                await ctx.tick().repeat(stall)
            ctx.set(engine.output.ready, 1)
            payload, = await ctx.tick().sample(engine.output.payload).until(engine.output.valid)
            out.append((payload.block, payload.first, payload.last))
            if max_stall:
                ctx.set(engine.output.ready, 0)
        await ctx.tick()

    watchdog = _watchdog(max_edges)

    sim = Simulator(engine)
    sim.add_clock(1e-8)
    sim.add_testbench(stream_monitor({"input": engine.input, "output": engine.output}, logs),
                      background=True)
    sim.add_testbench(watchdog, background=True)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.run()

    results, index = [], 0
    for op in operations:
        if isinstance(op, Message):
            results.append([block for block, _, _ in out[index:index + len(op.blocks)]])
            index += len(op.blocks)
    mask = (1 << block_bits) - 1
    assert [t.payload & mask for t in logs["output"].transfers] == [b for b, _, _ in out]
    assert not logs["input"].violations and not logs["output"].violations
    return ModeRun(results, [(first, last) for _, first, last in out],
                   logs["input"].edges, logs["output"].edges)


def check_vectors(key_bits, groups, *, core=None, **kwargs):
    """Run ``groups`` ((Mode, vectors) pairs) through one :class:`ModeOfOperation` with all modes
    around ``core`` (``AES(key_bits)`` by default), in one simulation, reloading the key only
    when it changes, and check each result against the vector's (NIST vectors of
    :mod:`tests.support.nist_modes`: ``key``, ``iv``, ``decrypt``, ``given``, ``expected``,
    ``length`` in bytes)."""
    operations, key, checked = [], None, []
    for mode, vectors in groups:
        for vector in vectors:
            if vector.key != key:
                operations.append(Key(vector.key))
                key = vector.key
            operations.append(Message(mode, vector.decrypt, vector.iv, vector.given))
            checked.append(vector)
    run = simulate_mode(ModeOfOperation(core or AES(key_bits)), operations, **kwargs)
    for vector, result in zip(checked, run.results, strict=True):
        got = b"".join(block.to_bytes(16, "big") for block in result)[:vector.length]
        want = b"".join(block.to_bytes(16, "big") for block in vector.expected)[:vector.length]
        assert got == want, vector.source
    return run
