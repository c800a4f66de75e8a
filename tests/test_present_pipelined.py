# amaranth: UnusedElaboratable=no
"""The pipelined PRESENT core: the paper's vectors, differential tests against the reference
model, exact cycle counts, no block lost or duplicated under random stalls, key handling and
reset."""

import random

import pytest

from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.present.pipelined import KEY_SPACING, PipelinedPRESENT
from cipher_cores.cores.present.reference import decrypt_block, encrypt_block
from cipher_cores.cores.present.tables import KEY_SIZES

from .support.helpers import random_run as shared_random_run
from .support.helpers import (LoadKey, Process, check_idle_without_key, check_key_load_cycles,
                              check_one_block, expected_results, key_groups, present_configurations,
                              pulse_reset, random_operations, run_testbench, simulate_cipher,
                              stream_get, stream_put)


configurations = present_configurations


def pipelined_config(key_bits=80, decrypt=True):
    return get_core("present-pipelined").config(key_bits, decrypt=decrypt)


def random_run(key_bits, decrypt):
    return shared_random_run("present-pipelined", key_bits, seed=key_bits + decrypt, keys=3,
                             blocks_per_key=40, decrypt=decrypt)


# Constructor and parameters.

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_interface(key_bits):
    assert PipelinedPRESENT(key_bits).signature == BlockCipherSignature(64, key_bits)


def test_default_parameters():
    core = PipelinedPRESENT()
    assert (core.key_bits, core.decrypts, core.stages) == (80, True, 32)


@pytest.mark.parametrize("decrypt, key_load", [(False, 2), (True, 18)])
def test_cycle_figures(decrypt, key_load):
    assert KEY_SPACING == 2
    for key_bits in KEY_SIZES:
        core = PipelinedPRESENT(key_bits, decrypt=decrypt)
        assert (core.latency, core.initiation_interval, core.key_load_cycles) == \
            (32, 1, key_load)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_bits": 64}, ValueError, r"^key_bits must be 80 or 128, not 64$"),
    ({"key_bits": "80"}, TypeError, r"^key_bits must be an integer \(80 or 128\), not '80'$"),
    ({"key_bits": 80.0}, TypeError, r"^key_bits must be an integer \(80 or 128\), not 80\.0$"),
    ({"decrypt": 0}, TypeError, r"^decrypt must be a bool \(True or False\), not 0$"),
    ({"decrypt": None}, TypeError, r"^decrypt must be a bool \(True or False\), not None$"),
])
def test_constructor_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        PipelinedPRESENT(**kwargs)


# The paper's vectors and differential tests.

@configurations
def test_paper_vectors_both_directions(key_bits, decrypt):
    config = pipelined_config(key_bits, decrypt)
    vectors = config.vectors()
    operations = []
    for vector in vectors:
        operations += [LoadKey(vector.key), Process(vector.plaintext, False),
                       Process(vector.ciphertext, True)]
    run = simulate_cipher(config.build(), operations)
    assert run.results[0::2] == [v.ciphertext for v in vectors]
    if decrypt:
        assert run.results[1::2] == [v.plaintext for v in vectors]
    else:
        assert run.results[1::2] == [encrypt_block(v.key, v.ciphertext, key_bits)
                                     for v in vectors]


@configurations
def test_random_blocks_with_key_changes_match_reference(key_bits, decrypt):
    config, core, operations, run = random_run(key_bits, decrypt)
    # Encrypt-only cores get blocks asking for decryption too: they must encrypt them.
    assert any(op.decrypt for op in operations if isinstance(op, Process))
    assert run.results == expected_results(config, operations)


@configurations
def test_latency_is_exact_and_constant(key_bits, decrypt):
    config, core, operations, run = random_run(key_bits, decrypt)
    assert run.latencies == [core.latency] * len(run.results)


@configurations
def test_one_block_per_edge(key_bits, decrypt):
    config, core, operations, run = random_run(key_bits, decrypt)
    for _, blocks in key_groups(run, operations):
        for edges in zip(*blocks):
            assert [b - a for a, b in zip(edges, edges[1:])] == [1] * (len(edges) - 1)


@configurations
def test_key_load_cycles_are_exact(key_bits, decrypt):
    config, core, operations, run = random_run(key_bits, decrypt)
    # A key waits for the blocks in flight: it transfers one edge after the last result left.
    check_key_load_cycles(core, run, operations)


@configurations
def test_random_stalls_lose_and_duplicate_no_block(key_bits, decrypt):
    config = pipelined_config(key_bits, decrypt)
    core = config.build()
    operations = random_operations(config, random.Random(100 + key_bits), keys=3,
                                   blocks_per_key=30, extreme_keys=True)
    run = simulate_cipher(core, operations, rng=random.Random(key_bits), max_gap=2,
                          max_stall=5)
    assert run.results == expected_results(config, operations)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])
    assert min(run.latencies) >= core.latency


@pytest.mark.slow
@configurations
def test_long_random_sweep_with_stalls(key_bits, decrypt):
    config = pipelined_config(key_bits, decrypt)
    core = config.build()
    operations = random_operations(config, random.Random(1000 + key_bits), keys=16,
                                   blocks_per_key=100, extreme_keys=True)
    run = simulate_cipher(core, operations, rng=random.Random(key_bits), max_gap=3,
                          max_stall=8)
    assert run.results == expected_results(config, operations)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])


# Key handling, stalls and reset, with hand-written testbenches.

@pytest.mark.parametrize("decrypt", [True, False])
def test_no_block_accepted_before_first_key(decrypt):
    config = pipelined_config(decrypt=decrypt)
    core = config.build()

    async def testbench(ctx, rst):
        await check_idle_without_key(ctx, core, 40)
        await check_one_block(ctx, config, core, 0x0123456789abcdef0123, 0xfedcba9876543210,
                              decrypt)

    run_testbench(core, testbench)


def test_reset_with_blocks_in_flight_leaves_empty_pipe_without_key():
    config = pipelined_config(128)
    core = config.build()
    key = (1 << 128) - 1

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, key)
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": 0, "decrypt": 1})
        await ctx.tick().repeat(core.key_load_cycles + 10)
        ctx.set(core.input.valid, 0)
        await pulse_reset(ctx, rst)
        await check_idle_without_key(ctx, core, 2 * core.latency)
        await check_one_block(ctx, config, core, key, 0xffffffffffffffff, decrypt=True)

    run_testbench(core, testbench)


OLD_KEY, NEW_KEY = 0x11111111111111111111, 0x22222222222222222222


def test_key_waits_for_blocks_in_flight_and_holds_back_new_blocks():
    core = PipelinedPRESENT(decrypt=False)
    blocks = list(range(5))

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, OLD_KEY)
        for block in blocks:
            await stream_put(ctx, core.input, {"block": block, "decrypt": 0})
        # A new key and a block offered together: neither goes in while blocks are in flight.
        ctx.set(core.key.valid, 1)
        ctx.set(core.key.payload, NEW_KEY)
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": 99, "decrypt": 0})
        ctx.set(core.output.ready, 1)
        results = []
        for _ in range(core.latency + 10):
            assert ctx.get(core.input.ready) == 0
            if ctx.get(core.output.valid):
                results.append(ctx.get(core.output.payload))
            if ctx.get(core.key.ready):
                break
            await ctx.tick()
        assert results == [encrypt_block(OLD_KEY, block) for block in blocks]
        await ctx.tick()
        ctx.set(core.key.valid, 0)
        await ctx.tick().until(core.input.ready)
        ctx.set(core.input.valid, 0)
        assert await stream_get(ctx, core.output) == encrypt_block(NEW_KEY, 99)

    run_testbench(core, testbench)


def test_stalled_output_holds_and_stalls_the_pipe():
    core = PipelinedPRESENT(decrypt=True)
    key = 0x0123456789abcdef0123
    blocks = [(0x0123456789abcdef * i % (1 << 64), i % 2) for i in range(1, 41)]
    expected = [(decrypt_block if decrypt else encrypt_block)(key, block)
                for block, decrypt in blocks]

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, key)
        await ctx.tick().repeat(core.key_load_cycles)
        # Blocks offered back to back with the output stalled: the pipe takes one block per
        # stage and one for the spare output register, then nothing more.
        taken = 0
        ctx.set(core.input.valid, 1)
        for _ in range(len(blocks)):
            block, decrypt = blocks[taken]
            ctx.set(core.input.payload, {"block": block, "decrypt": decrypt})
            taken += ctx.get(core.input.ready)
            await ctx.tick()
        assert taken == core.stages + 1
        for _ in range(20):
            assert ctx.get(core.input.ready) == 0
            assert (ctx.get(core.output.valid), ctx.get(core.output.payload)) == (1, expected[0])
            await ctx.tick()
        # Released with random stalls: every block comes out once, in order.
        ctx.set(core.input.valid, 0)
        rng = random.Random(1)
        results = [await stream_get(ctx, core.output, stall=rng.randint(0, 2))
                   for _ in range(taken)]
        assert results == expected[:taken]
        assert ctx.get(core.output.valid) == 0

    run_testbench(core, testbench)
