"""The checks of the stream contract of
:class:`~cipher_cores.cores.interface.BlockCipherSignature` on one catalog configuration, shared by
``tests/test_contract.py`` (every configuration, and the broken cores of :mod:`.broken_cores`)
and the tests of single architectures.

Each ``check_*`` function simulates a new core of ``config`` and raises :exc:`AssertionError`
with a message naming the rule broken. Runs are short (a few keys, a few blocks).
"""

import random

from .helpers import (LoadKey, Process, expected_results, key_groups, pulse_reset,
                      random_operations, reference, run_testbench, run_with_contract, stream_get,
                      stream_put, ticks, wait_for)


__all__ = ["check_stream_rules", "check_figures", "check_no_block_before_first_key",
           "check_key_waits_for_idle", "check_waiting_key_goes_first", "check_reset",
           "RESET_POINTS", "LONG_LATENCY", "assert_no_violations", "constant_time_operations"]


def assert_no_violations(violations):
    assert not violations, f"contract broken at {violations[0]}"



def check_stream_rules(config, seed="stream"):
    """Random keys and blocks with random gaps and back-pressure: the monitor sees no broken rule,
    the results are the reference's, and back-pressure did delay results."""
    core = config.build()
    rng = random.Random(f"{seed}-{config.slug}")
    operations = random_operations(config, rng, keys=2,
                                   blocks_per_key=2 if core.latency > LONG_LATENCY else 3)
    outcome = run_with_contract(core, operations, rng=rng, max_gap=3,
                                max_stall=2 * core.latency + 4)
    assert_no_violations(outcome.violations)
    run = outcome.run
    assert run.output.violations == [], "output stream rule broken"
    assert run.results == expected_results(config, operations), "results differ from the reference"
    assert any(latency > core.latency for latency in run.latencies), \
        "back-pressure never delayed a result: the check did not exercise stalls"


#: Cores with a longer latency (the bit-serial ones) get fewer blocks, to keep the run short.
LONG_LATENCY = 64


def constant_time_operations(config, rng, *, short=False):
    """Keys all zeros, all ones and random (``short``: the last left out); under each, blocks all
    zeros and all ones (under the last key, a random one too), each encrypted and decrypted."""
    operations = []
    keys = (0, (1 << config.key_bits) - 1, rng.getrandbits(config.key_bits))[:2 if short else 3]
    for index, key in enumerate(keys):
        operations.append(LoadKey(key))
        blocks = [0, (1 << config.block_bits) - 1]
        if index == len(keys) - 1:
            blocks.append(rng.getrandbits(config.block_bits))
        for block in blocks:
            operations += [Process(block, False), Process(block, True)]
    return operations


def check_figures(config):
    """At full speed: latency, initiation interval and key load are each one value, whatever the
    key, block and direction, and that value is the core's property; a key transfers on the edge
    after the previous result left."""
    core = config.build()
    operations = constant_time_operations(config, random.Random(f"figures-{config.slug}"),
                                          short=core.latency > LONG_LATENCY)
    outcome = run_with_contract(core, operations)
    assert_no_violations(outcome.violations)
    run = outcome.run
    assert run.results == expected_results(config, operations), "results differ from the reference"
    groups = key_groups(run, operations)
    latencies = set(run.latencies)
    intervals = {b[0] - a[0] for _, blocks in groups for a, b in zip(blocks, blocks[1:])}
    key_loads = {blocks[0][0] - key_edge for key_edge, blocks in groups}
    for name, measured in (("latency", latencies), ("initiation interval", intervals),
                           ("key load", key_loads)):
        assert len(measured) == 1, \
            f"{name} depends on the key, data or direction: {sorted(measured)}"
    assert latencies == {core.latency}, \
        f"latency: measured {latencies.pop()}, property {core.latency}"
    assert intervals == {core.initiation_interval}, \
        f"initiation interval: measured {intervals.pop()}, property {core.initiation_interval}"
    assert key_loads == {core.key_load_cycles}, \
        f"key load: measured {key_loads.pop()}, property {core.key_load_cycles}"
    output_intervals = {b[1] - a[1] for _, blocks in groups for a, b in zip(blocks, blocks[1:])}
    assert output_intervals == {core.initiation_interval}, \
        f"output interval: measured {sorted(output_intervals)}"
    assert [key_edge for key_edge, _ in groups[1:]] == \
        [blocks[-1][1] + 1 for _, blocks in groups[:-1]], \
        "a key waited longer than for the core to be idle"


async def put_block(ctx, core, block, decrypt=False):
    await stream_put(ctx, core.input, {"block": block, "decrypt": int(decrypt)})


async def check_idle_without_key(ctx, core, edges, when, settle=0):
    """With a block offered, for ``settle + edges`` edges: no block taken, no output; key.ready
    high but in the first ``settle``, which a core may take to start (a
    :class:`~cipher_cores.cores.randomized.RandomizedCore`'s PRNG warm-up)."""
    ctx.set(core.input.valid, 1)
    ctx.set(core.input.payload, {"block": 0x0123456789abcdef, "decrypt": 0})
    for edge in range(settle + edges):
        assert not ctx.get(core.input.ready), f"input.ready {when}, before a key"
        assert not ctx.get(core.output.valid), f"output.valid {when}"
        if edge >= settle:
            assert ctx.get(core.key.ready), f"key.ready low in an idle core {when}"
        await ctx.tick()
    ctx.set(core.input.valid, 0)


async def check_one_block(ctx, config, core, key, block, decrypt):
    await stream_put(ctx, core.key, key)
    await put_block(ctx, core, block, decrypt)
    assert await stream_get(ctx, core.output) == reference(config, key, block, decrypt), \
        "result differs from the reference"


def check_no_block_before_first_key(config, *, settle: int = 0):
    """After reset, with a block offered and no key: no block is taken, no output appears, and
    (after ``settle`` edges: see :func:`check_idle_without_key`) the core is ready for a key."""
    core = config.build()
    rng = random.Random(f"first-key-{config.slug}")
    violations = []

    async def testbench(ctx, rst):
        await check_idle_without_key(ctx, core, core.latency + core.key_load_cycles + 2,
                                     "after reset", settle)
        await check_one_block(ctx, config, core, rng.getrandbits(config.key_bits),
                              rng.getrandbits(config.block_bits), True)

    run_testbench(core, testbench, monitor=violations)
    assert_no_violations(violations)


def check_key_waits_for_idle(config):
    """A key offered while a block is in the core (its result held back) waits until the result
    has left; the next block then runs under the new key."""
    core = config.build()
    rng = random.Random(f"key-waits-{config.slug}")
    old_key, new_key = rng.getrandbits(config.key_bits), rng.getrandbits(config.key_bits)
    block = rng.getrandbits(config.block_bits)
    violations = []

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, old_key)
        await put_block(ctx, core, block)
        ctx.set(core.key.valid, 1)
        ctx.set(core.key.payload, new_key)
        for _ in range(core.latency + 5):
            assert not ctx.get(core.key.ready), "key.ready while a block is in flight"
            await ctx.tick()
        assert ctx.get(core.output.valid), "no result after the latency"
        assert await stream_get(ctx, core.output) == reference(config, old_key, block, False), \
            "result differs from the reference"
        await wait_for(ctx, core.key.ready)
        ctx.set(core.key.valid, 0)
        await put_block(ctx, core, block, True)
        assert await stream_get(ctx, core.output) == reference(config, new_key, block, True), \
            "the block after a key change did not use the new key"

    run_testbench(core, testbench, monitor=violations)
    assert_no_violations(violations)


def check_waiting_key_goes_first(config):
    """A key and a block offered together, in an idle core and while a block is in flight: the key
    transfers first, and the block runs under it."""
    core = config.build()
    rng = random.Random(f"key-first-{config.slug}")
    keys = [rng.getrandbits(config.key_bits) for _ in range(3)]
    blocks = [rng.getrandbits(config.block_bits) for _ in range(3)]
    violations, edges = [], {"key": [], "input": [], "output": []}

    async def offer_both(ctx, key, block):
        ctx.set(core.key.valid, 1)
        ctx.set(core.key.payload, key)
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": block, "decrypt": 0})
        edge = 0
        while ctx.get(core.key.valid) or ctx.get(core.input.valid):
            key_transfer = ctx.get(core.key.valid) and ctx.get(core.key.ready)
            input_transfer = ctx.get(core.input.valid) and ctx.get(core.input.ready)
            await ctx.tick()
            edge += 1
            if key_transfer:
                edges["key"].append(edge)
                ctx.set(core.key.valid, 0)
            if input_transfer:
                edges["input"].append(edge)
                ctx.set(core.input.valid, 0)
        return edges["key"][-1], edges["input"][-1]

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, keys[0])
        await ticks(ctx, core.key_load_cycles)
        key_edge, block_edge = await offer_both(ctx, keys[1], blocks[1])
        assert key_edge < block_edge, "a block went before the key offered with it"
        ctx.set(core.output.ready, 1)
        assert await stream_get(ctx, core.output) == reference(config, keys[1], blocks[1], False), \
            "the block did not use the key offered with it"
        await put_block(ctx, core, blocks[0])
        ctx.set(core.output.ready, 1)
        key_edge, block_edge = await offer_both(ctx, keys[2], blocks[2])
        assert key_edge < block_edge, "a block went before a waiting key"
        ctx.set(core.output.ready, 0)
        assert await stream_get(ctx, core.output) == reference(config, keys[2], blocks[2], False), \
            "the block did not use the key that waited"

    run_testbench(core, testbench, monitor=violations)
    assert_no_violations(violations)


RESET_POINTS = ("mid_key_load", "mid_block", "result_pending")


def check_reset(config, points=RESET_POINTS, *, settle: int = 0):
    """A reset in the middle of a key load, in the middle of a block, or with a result pending
    (each of ``points`` in turn, in one simulation) leaves an idle core with no key: no block is
    taken and no output appears until a new key is loaded (``key.ready`` high after ``settle``
    edges: see :func:`check_idle_without_key`), and then blocks run under it."""
    core = config.build()
    rng = random.Random(f"reset-{config.slug}")
    violations = []

    async def testbench(ctx, rst):
        for when in points:
            key, block = rng.getrandbits(config.key_bits), rng.getrandbits(config.block_bits)
            await stream_put(ctx, core.key, key)
            if when == "mid_key_load":
                await ticks(ctx, core.key_load_cycles // 2)
            else:
                await put_block(ctx, core, block, True)
                if when == "mid_block":
                    await ticks(ctx, rng.randrange(1, max(2, core.latency - 1)))
                else:
                    await wait_for(ctx, core.output.valid)
            await pulse_reset(ctx, rst)
            await check_idle_without_key(ctx, core, core.latency + core.key_load_cycles + 2,
                                         f"after a reset {when.replace('_', ' ')}", settle)
            await check_one_block(ctx, config, core, key ^ 1, block, True)

    run_testbench(core, testbench, monitor=violations)
    assert_no_violations(violations)
