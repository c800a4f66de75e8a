# amaranth: UnusedElaboratable=no
"""The PRESENT core: the paper's vectors, differential tests against the reference model, exact
cycle counts, stream rules under random stalls, key handling and reset."""

import functools
import random

import pytest

from cores.interface import BlockCipherSignature
from cores.present import PRESENT, ROUNDS_PER_CYCLE
from cores.present.reference import decrypt_block, encrypt_block
from cores.present.tables import KEY_SIZES
from cores.present.vectors import PAPER_VECTORS
from cores.sim import (LoadKey, Process, simulate_cipher, simulator_with_reset, stream_get,
                       stream_put)



CONFIGURATIONS = [(key_bits, rounds) for key_bits in KEY_SIZES for rounds in ROUNDS_PER_CYCLE]
CONFIGURATION_IDS = [f"{key_bits}-r{rounds}" for key_bits, rounds in CONFIGURATIONS]
configurations = pytest.mark.parametrize("key_bits, rounds_per_cycle", CONFIGURATIONS,
                                         ids=CONFIGURATION_IDS)


def expected_results(operations, key_bits, *, decrypt=True):
    """What the reference model gives for ``operations``."""
    results, key = [], None
    for op in operations:
        if isinstance(op, LoadKey):
            key = op.key
        elif op.decrypt and decrypt:
            results.append(decrypt_block(key, op.block, key_bits))
        else:
            results.append(encrypt_block(key, op.block, key_bits))
    return results


def paper_operations(key_bits):
    """Each key of the paper's table, then each of its vectors encrypted and decrypted."""
    operations = []
    for key in dict.fromkeys(v.key for v in PAPER_VECTORS if v.key_bits == key_bits):
        operations.append(LoadKey(key))
        for vector in PAPER_VECTORS:
            if vector.key_bits == key_bits and vector.key == key:
                operations += [Process(vector.plaintext, False), Process(vector.ciphertext, True)]
    return operations


def random_operations(key_bits, *, seed, keys=4, blocks=6, decrypt=True):
    """Random keys (the first all zeros, the second all ones) each followed by random blocks in
    random directions."""
    rng = random.Random(seed)
    operations = []
    for index in range(keys):
        key = [0, (1 << key_bits) - 1][index] if index < 2 else rng.getrandbits(key_bits)
        operations.append(LoadKey(key))
        for _ in range(blocks):
            operations.append(Process(rng.getrandbits(64), decrypt and rng.random() < 0.5))
    return operations


@functools.cache
def random_run(key_bits, rounds_per_cycle, decrypt=True):
    core = PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle, decrypt=decrypt)
    # Encrypt-only cores get blocks asking for decryption too: they must encrypt them.
    operations = random_operations(key_bits, seed=rounds_per_cycle)
    return core, operations, simulate_cipher(core, operations)


def block_groups(run, operations):
    """Per key load: (key transfer edge, [(input edge, output edge), ...] of its blocks)."""
    groups, inputs = [], iter(zip(run.input.edges, run.output.edges))
    key_edges = iter(run.key.edges)
    for op in operations:
        if isinstance(op, LoadKey):
            groups.append((next(key_edges), []))
        else:
            groups[-1][1].append(next(inputs))
    return groups


# Constructor and parameters.

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_interface(key_bits):
    assert PRESENT(key_bits).signature == BlockCipherSignature(64, key_bits)


def test_default_parameters():
    core = PRESENT()
    assert (core.key_bits, core.rounds_per_cycle, core.decrypt) == (80, 1, True)


@pytest.mark.parametrize("rounds_per_cycle, figure", [
    (1, 32), (2, 17), (4, 9), (8, 5), (16, 3), (31, 2),
])
def test_cycle_figures(rounds_per_cycle, figure):
    for key_bits in KEY_SIZES:
        core = PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle)
        assert core.latency == figure
        assert core.initiation_interval == figure
        assert core.key_load_cycles == figure
        assert PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle,
                       decrypt=False).key_load_cycles == 1


def test_cycle_budget_of_one_round_per_cycle():
    core = PRESENT()
    assert core.latency <= 32 and core.initiation_interval <= 32 and core.key_load_cycles <= 33


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_bits": 64}, ValueError, r"^key_bits must be 80 or 128, not 64$"),
    ({"key_bits": 256}, ValueError, r"^key_bits must be 80 or 128, not 256$"),
    ({"key_bits": "80"}, TypeError, r"^key_bits must be an integer \(80 or 128\), not '80'$"),
    ({"key_bits": 80.0}, TypeError, r"^key_bits must be an integer \(80 or 128\), not 80\.0$"),
    ({"key_bits": True}, TypeError, r"^key_bits must be an integer \(80 or 128\), not True$"),
    ({"rounds_per_cycle": 3}, ValueError,
     r"^rounds_per_cycle must be 1, 2, 4, 8, 16 or 31, not 3$"),
    ({"rounds_per_cycle": 0}, ValueError,
     r"^rounds_per_cycle must be 1, 2, 4, 8, 16 or 31, not 0$"),
    ({"rounds_per_cycle": 32}, ValueError,
     r"^rounds_per_cycle must be 1, 2, 4, 8, 16 or 31, not 32$"),
    ({"rounds_per_cycle": "1"}, TypeError,
     r"^rounds_per_cycle must be an integer \(1, 2, 4, 8, 16 or 31\), not '1'$"),
    ({"rounds_per_cycle": True}, TypeError,
     r"^rounds_per_cycle must be an integer \(1, 2, 4, 8, 16 or 31\), not True$"),
    ({"decrypt": 1}, TypeError, r"^decrypt must be a bool, not 1$"),
    ({"decrypt": None}, TypeError, r"^decrypt must be a bool, not None$"),
])
def test_constructor_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        PRESENT(**kwargs)


# The paper's vectors and differential tests, for every key size and rounds_per_cycle.

@configurations
def test_paper_vectors_both_directions(key_bits, rounds_per_cycle):
    operations = paper_operations(key_bits)
    run = simulate_cipher(PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle), operations)
    assert run.results == expected_results(operations, key_bits)
    assert len(run.results) == 8


@configurations
def test_random_blocks_with_key_changes_match_reference(key_bits, rounds_per_cycle):
    core, operations, run = random_run(key_bits, rounds_per_cycle)
    assert run.results == expected_results(operations, key_bits)


@configurations
def test_latency_is_exact_and_constant(key_bits, rounds_per_cycle):
    core, operations, run = random_run(key_bits, rounds_per_cycle)
    assert run.latencies == [core.latency] * len(run.results)


@configurations
def test_back_to_back_interval_is_exact_and_constant(key_bits, rounds_per_cycle):
    core, operations, run = random_run(key_bits, rounds_per_cycle)
    for key_edge, blocks in block_groups(run, operations):
        input_edges = [edge for edge, _ in blocks]
        output_edges = [edge for _, edge in blocks]
        expected = [core.initiation_interval] * (len(blocks) - 1)
        assert [b - a for a, b in zip(input_edges, input_edges[1:])] == expected
        assert [b - a for a, b in zip(output_edges, output_edges[1:])] == expected


@configurations
def test_key_load_cycles_are_exact(key_bits, rounds_per_cycle):
    core, operations, run = random_run(key_bits, rounds_per_cycle)
    groups = block_groups(run, operations)
    assert [blocks[0][0] - key_edge for key_edge, blocks in groups] == \
        [core.key_load_cycles] * len(groups)
    # After the first, each key transfers one edge after the previous key's last result left.
    assert [key_edge for key_edge, _ in groups[1:]] == \
        [blocks[-1][1] + 1 for _, blocks in groups[:-1]]


@configurations
def test_random_stalls_and_back_pressure(key_bits, rounds_per_cycle):
    core = PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle)
    operations = random_operations(key_bits, seed=100 + rounds_per_cycle, keys=3, blocks=5)
    run = simulate_cipher(core, operations, rng=random.Random(rounds_per_cycle), max_gap=4,
                   max_stall=2 * core.latency)
    assert run.results == expected_results(operations, key_bits)
    assert run.output.violations == []
    assert (run.key.violations, run.input.violations) == ([], [])
    assert min(run.latencies) >= core.latency


@pytest.mark.slow
@pytest.mark.parametrize("decrypt", [True, False], ids=["integrated", "encrypt-only"])
@configurations
def test_long_random_sweep_at_full_speed(key_bits, rounds_per_cycle, decrypt):
    core = PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle, decrypt=decrypt)
    operations = random_operations(key_bits, seed=1000 + rounds_per_cycle, keys=16, blocks=16)
    run = simulate_cipher(core, operations)
    assert run.results == expected_results(operations, key_bits, decrypt=decrypt)
    assert run.latencies == [core.latency] * len(run.results)
    groups = block_groups(run, operations)
    assert [blocks[0][0] - key_edge for key_edge, blocks in groups] == \
        [core.key_load_cycles] * len(groups)
    for _, blocks in groups:
        edges = [edge for edge, _ in blocks]
        assert {b - a for a, b in zip(edges, edges[1:])} == {core.initiation_interval}


@pytest.mark.slow
@pytest.mark.parametrize("decrypt", [True, False], ids=["integrated", "encrypt-only"])
@configurations
def test_long_random_sweep_with_stalls(key_bits, rounds_per_cycle, decrypt):
    core = PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle, decrypt=decrypt)
    operations = random_operations(key_bits, seed=2000 + rounds_per_cycle, keys=12, blocks=12)
    run = simulate_cipher(core, operations, rng=random.Random(key_bits + rounds_per_cycle), max_gap=8,
                   max_stall=3 * core.latency)
    assert run.results == expected_results(operations, key_bits, decrypt=decrypt)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])


# The encrypt-only core.

@configurations
def test_encrypt_only_core_encrypts_every_block(key_bits, rounds_per_cycle):
    core, operations, run = random_run(key_bits, rounds_per_cycle, decrypt=False)
    assert any(op.decrypt for op in operations if isinstance(op, Process))
    assert run.results == expected_results(operations, key_bits, decrypt=False)


@pytest.mark.parametrize("rounds_per_cycle", [1, 31])
def test_encrypt_only_core_timing(rounds_per_cycle):
    core, operations, run = random_run(80, rounds_per_cycle, decrypt=False)
    assert core.key_load_cycles == 1
    assert run.latencies == [core.latency] * len(run.results)
    assert [blocks[0][0] - key_edge for key_edge, blocks in block_groups(run, operations)] == \
        [1] * 4


# Key handling, stream rules and reset, with hand-written testbenches.

async def pulse_reset(ctx, rst):
    ctx.set(rst, 1)
    await ctx.tick()
    ctx.set(rst, 0)


def run_testbench(core, testbench):
    """Simulate ``core`` with ``testbench(ctx, rst)``, where ``rst`` resets the core."""
    sim, rst = simulator_with_reset(core)

    async def wrapped(ctx):
        await testbench(ctx, rst)

    sim.add_testbench(wrapped)
    sim.run()


async def check_idle_without_key(ctx, core, cycles):
    """With a block offered, check for ``cycles`` edges that the core takes no block."""
    ctx.set(core.input.valid, 1)
    ctx.set(core.input.payload, {"block": 0x0123456789abcdef, "decrypt": 0})
    for _ in range(cycles):
        assert ctx.get(core.input.ready) == 0
        assert ctx.get(core.output.valid) == 0
        assert ctx.get(core.key.ready) == 1
        await ctx.tick()
    ctx.set(core.input.valid, 0)


async def check_one_block(ctx, core, key, block, decrypt=False):
    await stream_put(ctx, core.key, key)
    await stream_put(ctx, core.input, {"block": block, "decrypt": int(decrypt)})
    model = decrypt_block if decrypt else encrypt_block
    assert await stream_get(ctx, core.output) == model(key, block, core.key_bits)


@pytest.mark.parametrize("decrypt", [True, False])
def test_no_block_accepted_before_first_key(decrypt):
    core = PRESENT(decrypt=decrypt)

    async def testbench(ctx, rst):
        await check_idle_without_key(ctx, core, 3 * core.latency)
        await check_one_block(ctx, core, 0x0123456789abcdef0123, 0xfedcba9876543210)

    run_testbench(core, testbench)


@pytest.mark.parametrize("key_bits, rounds_per_cycle", [(80, 1), (128, 1), (80, 4)])
def test_reset_mid_block_leaves_idle_core_without_key(key_bits, rounds_per_cycle):
    core = PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle)
    key = (1 << key_bits) - 1

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, key)
        await stream_put(ctx, core.input, {"block": 0, "decrypt": 1})
        await ctx.tick().repeat(core.latency // 2)
        await pulse_reset(ctx, rst)
        await check_idle_without_key(ctx, core, 2 * core.latency)
        await check_one_block(ctx, core, key, 0xffffffffffffffff, decrypt=True)
        await check_one_block(ctx, core, 0, 0x0123456789abcdef)

    run_testbench(core, testbench)


def test_reset_with_result_pending_drops_it():
    core = PRESENT()

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, 0)
        await stream_put(ctx, core.input, {"block": 0, "decrypt": 0})
        await ctx.tick().until(core.output.valid)
        await pulse_reset(ctx, rst)
        await check_idle_without_key(ctx, core, 4)

    run_testbench(core, testbench)


def test_reset_mid_key_load_leaves_core_without_key():
    core = PRESENT(128)

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, 1)
        await ctx.tick().repeat(5)
        await pulse_reset(ctx, rst)
        await check_idle_without_key(ctx, core, core.key_load_cycles + 2)
        await check_one_block(ctx, core, 2, 3, decrypt=True)

    run_testbench(core, testbench)


OLD_KEY, NEW_KEY, BLOCK = 0x11111111111111111111, 0x22222222222222222222, 0x0123456789abcdef


def offer_new_key_and_block(ctx, core):
    ctx.set(core.key.valid, 1)
    ctx.set(core.key.payload, NEW_KEY)
    ctx.set(core.input.valid, 1)
    ctx.set(core.input.payload, {"block": BLOCK, "decrypt": 0})


async def check_block_after_new_key(ctx, core):
    """Called after the new key's transfer edge: the block offered goes in after it and is
    encrypted under the new key."""
    ctx.set(core.key.valid, 0)
    await ctx.tick().until(core.input.ready)
    ctx.set(core.input.valid, 0)
    assert await stream_get(ctx, core.output) == encrypt_block(NEW_KEY, BLOCK)


def test_key_waits_for_block_in_flight():
    core = PRESENT()

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, OLD_KEY)
        await stream_put(ctx, core.input, {"block": BLOCK, "decrypt": 0})
        offer_new_key_and_block(ctx, core)
        # The result waits while output.ready is low; the key waits for the result to leave.
        for _ in range(core.latency + 10):
            assert ctx.get(core.key.ready) == 0
            await ctx.tick()
        assert ctx.get(core.output.valid) == 1
        ctx.set(core.output.ready, 1)
        assert ctx.get(core.key.ready) == 0
        assert ctx.get(core.output.payload) == encrypt_block(OLD_KEY, BLOCK)
        await ctx.tick()
        ctx.set(core.output.ready, 0)
        assert ctx.get(core.key.ready) == 1
        await ctx.tick()
        await check_block_after_new_key(ctx, core)

    run_testbench(core, testbench)


def test_key_goes_before_block_when_both_are_offered():
    core = PRESENT()

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, OLD_KEY)
        await ctx.tick().repeat(core.key_load_cycles)
        offer_new_key_and_block(ctx, core)
        assert (ctx.get(core.key.ready), ctx.get(core.input.ready)) == (1, 0)
        await ctx.tick()
        await check_block_after_new_key(ctx, core)

    run_testbench(core, testbench)


def test_key_holds_back_blocks_while_result_leaves():
    core = PRESENT(rounds_per_cycle=31)

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, OLD_KEY)
        await stream_put(ctx, core.input, {"block": BLOCK, "decrypt": 0})
        offer_new_key_and_block(ctx, core)
        ctx.set(core.output.ready, 1)
        while not ctx.get(core.output.valid):
            await ctx.tick()
        assert ctx.get(core.output.payload) == encrypt_block(OLD_KEY, BLOCK)
        assert (ctx.get(core.input.ready), ctx.get(core.key.ready)) == (0, 0)
        await ctx.tick()
        ctx.set(core.output.ready, 0)
        assert (ctx.get(core.input.ready), ctx.get(core.key.ready)) == (0, 1)
        await ctx.tick()
        await check_block_after_new_key(ctx, core)

    run_testbench(core, testbench)


def test_output_holds_while_not_ready():
    core = PRESENT(rounds_per_cycle=8)
    key, block = 0x0123456789abcdef0123, 0x0011223344556677

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, key)
        await stream_put(ctx, core.input, {"block": block, "decrypt": 1})
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": 0, "decrypt": 0})
        await ctx.tick().until(core.output.valid)
        for _ in range(20):
            assert ctx.get(core.output.valid) == 1
            assert ctx.get(core.output.payload) == decrypt_block(key, block)
            assert ctx.get(core.input.ready) == 0
            await ctx.tick()
        ctx.set(core.output.ready, 1)
        assert ctx.get(core.input.ready) == 1
        await ctx.tick()
        ctx.set(core.input.valid, 0)
        assert ctx.get(core.output.valid) == 0
        assert await stream_get(ctx, core.output) == encrypt_block(key, 0)

    run_testbench(core, testbench)
