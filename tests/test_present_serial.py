# amaranth: UnusedElaboratable=no
"""The serial PRESENT core: the paper's vectors, differential tests against the reference model,
exact cycle counts, stream rules under random stalls, key handling and reset.

A block takes thousands of clock edges, so the long runs use the compiled (CXXRTL) simulator;
the hand-written testbenches, a block or two each, use Amaranth's."""

import random

import pytest

from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.present.reference import encrypt_block
from cipher_cores.cores.present import serial
from cipher_cores.cores.present.serial import SerialPRESENT
from cipher_cores.cores.present.tables import KEY_SIZES

from .support.helpers import random_run as shared_random_run
from .support.helpers import (Process, check_idle_without_key, check_key_load_cycles,
                              check_one_block, check_output_holds, expected_results, key_groups,
                              present_configurations, pulse_reset, random_operations, run_testbench,
                              simulate_cipher, stream_get, stream_put, vector_operations)


configurations = present_configurations


def serial_config(key_bits=80, decrypt=True):
    return get_core("present-serial").config(key_bits, decrypt=decrypt)


def simulate(core, operations, **kwargs):
    """:func:`simulate_cipher` on the compiled back end, with room for the long blocks."""
    edges = (len(operations) + 2) * (core.key_load_cycles + core.latency) * \
        (1 + kwargs.get("max_gap", 0) + kwargs.get("max_stall", 0))
    return simulate_cipher(core, operations, backend="cxxrtl", max_edges=edges, **kwargs)


def random_run(key_bits, decrypt):
    return shared_random_run("present-serial", key_bits, seed=key_bits + decrypt, keys=4,
                             blocks_per_key=4, simulate=simulate, decrypt=decrypt)


# Constructor and parameters.

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_interface(key_bits):
    assert SerialPRESENT(key_bits).signature == BlockCipherSignature(64, key_bits)


def test_default_parameters():
    core = SerialPRESENT()
    assert (core.key_bits, core.decrypts) == (80, True)


@pytest.mark.parametrize("key_bits, frame, latency, key_load", [
    (80, 99, 3211, 3230),
    (128, 67, 2267, 2334),
])
def test_cycle_figures(key_bits, frame, latency, key_load):
    core = SerialPRESENT(key_bits)
    assert (core.forward_rotation % key_bits, core.backward_rotation % key_bits) == \
        ((-61) % key_bits, 61)
    assert core.frame_cycles == frame
    assert core.latency == core.initiation_interval == latency
    assert core.key_load_cycles == key_load
    assert SerialPRESENT(key_bits, decrypt=False).key_load_cycles == 1


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_bits": 64}, ValueError, r"^key_bits must be 80 or 128, not 64$"),
    ({"key_bits": "80"}, TypeError, r"^key_bits must be an integer \(80 or 128\), not '80'$"),
    ({"key_bits": True}, TypeError, r"^key_bits must be an integer \(80 or 128\), not True$"),
    ({"decrypt": 1}, TypeError, r"^decrypt must be a bool \(True or False\), not 1$"),
    ({"decrypt": "no"}, TypeError, r"^decrypt must be a bool \(True or False\), not 'no'$"),
])
def test_constructor_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        SerialPRESENT(**kwargs)


# The paper's vectors and differential tests.

@configurations
def test_paper_vectors_both_directions(key_bits, decrypt):
    config = serial_config(key_bits, decrypt)
    operations = vector_operations(config)
    run = simulate(config.build(), operations)
    assert run.results == expected_results(config, operations)
    vectors = sorted(config.vectors(), key=lambda v: v.key)     # the order of vector_operations
    assert run.results[0::2] == [v.ciphertext for v in vectors]
    if decrypt:
        assert run.results[1::2] == [v.plaintext for v in vectors]


@pytest.mark.parametrize("token_bits", [2, 8])
def test_key_copy_works_with_other_token_widths(monkeypatch, token_bits):
    # The key copy is written for any power-of-two group per token; the catalog core uses
    # TOKEN_BITS = 4, the figures in the class docstring compare 2.
    monkeypatch.setattr(serial, "TOKEN_BITS", token_bits)
    config = serial_config(80)
    core = SerialPRESENT(80)
    operations = random_operations(config, random.Random(token_bits), keys=3, blocks_per_key=2,
                                   extreme_keys=True)
    assert simulate(core, operations).results == expected_results(config, operations)


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
def test_back_to_back_interval_is_exact_and_constant(key_bits, decrypt):
    config, core, operations, run = random_run(key_bits, decrypt)
    for _, blocks in key_groups(run, operations):
        edges = [edge for edge, _ in blocks]
        assert [b - a for a, b in zip(edges, edges[1:])] == \
            [core.initiation_interval] * (len(blocks) - 1)


@configurations
def test_key_load_cycles_are_exact(key_bits, decrypt):
    config, core, operations, run = random_run(key_bits, decrypt)
    # After the first, each key transfers one edge after the previous key's last result left.
    check_key_load_cycles(core, run, operations)


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_random_stalls_and_back_pressure(key_bits):
    config = serial_config(key_bits)
    core = config.build()
    operations = random_operations(config, random.Random(7 * key_bits), keys=3, blocks_per_key=3,
                                   extreme_keys=True)
    run = simulate(core, operations, rng=random.Random(key_bits), max_gap=40, max_stall=60)
    assert run.results == expected_results(config, operations)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])
    assert min(run.latencies) >= core.latency


@pytest.mark.slow
@configurations
def test_long_random_sweep_with_stalls(key_bits, decrypt):
    config = serial_config(key_bits, decrypt)
    core = config.build()
    operations = random_operations(config, random.Random(1000 + key_bits), keys=12,
                                   blocks_per_key=12, extreme_keys=True)
    run = simulate(core, operations, rng=random.Random(key_bits), max_gap=8, max_stall=100)
    assert run.results == expected_results(config, operations)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])


# Key handling, stream rules and reset, with hand-written testbenches.

def test_no_block_accepted_before_first_key():
    config = serial_config(decrypt=False)
    core = config.build()

    async def testbench(ctx, rst):
        await check_idle_without_key(ctx, core, 200)
        await check_one_block(ctx, config, core, 0x0123456789abcdef0123, 0xfedcba9876543210)

    run_testbench(core, testbench)


def test_reset_mid_block_leaves_idle_core_without_key():
    config = serial_config(128, decrypt=False)
    core = config.build()
    key = (1 << 128) - 1

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, key)
        await stream_put(ctx, core.input, {"block": 0, "decrypt": 0})
        await ctx.tick().repeat(core.latency // 2)
        await pulse_reset(ctx, rst)
        await check_idle_without_key(ctx, core, 100)
        await check_one_block(ctx, config, core, key, 0xffffffffffffffff)

    run_testbench(core, testbench)


def test_reset_mid_key_load_leaves_core_without_key():
    config = serial_config(128)
    core = config.build()

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, 1)
        await ctx.tick().repeat(core.key_load_cycles // 2)
        await pulse_reset(ctx, rst)
        await check_idle_without_key(ctx, core, 100)
        await check_one_block(ctx, config, core, 2, 3, decrypt=True)

    run_testbench(core, testbench)


OLD_KEY, NEW_KEY, BLOCK = 0x11111111111111111111, 0x22222222222222222222, 0x0123456789abcdef


def test_key_waits_for_result_and_goes_before_block():
    core = SerialPRESENT(decrypt=False)

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, OLD_KEY)
        await stream_put(ctx, core.input, {"block": BLOCK, "decrypt": 0})
        # A new key and a block offered at once: the key waits until the result has left, and
        # the block waits for the key.
        ctx.set(core.key.valid, 1)
        ctx.set(core.key.payload, NEW_KEY)
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": BLOCK, "decrypt": 0})
        for _ in range(core.latency + 20):
            assert (ctx.get(core.key.ready), ctx.get(core.input.ready)) == (0, 0)
            await ctx.tick()
        assert ctx.get(core.output.valid) == 1
        assert ctx.get(core.output.payload) == encrypt_block(OLD_KEY, BLOCK)
        ctx.set(core.output.ready, 1)
        assert (ctx.get(core.key.ready), ctx.get(core.input.ready)) == (0, 0)
        await ctx.tick()
        ctx.set(core.output.ready, 0)
        assert (ctx.get(core.key.ready), ctx.get(core.input.ready)) == (1, 0)
        await ctx.tick()
        ctx.set(core.key.valid, 0)
        await ctx.tick().until(core.input.ready)
        ctx.set(core.input.valid, 0)
        assert await stream_get(ctx, core.output) == encrypt_block(NEW_KEY, BLOCK)

    run_testbench(core, testbench)


def test_output_holds_while_not_ready_and_next_block_enters_as_it_leaves():
    config = serial_config(128, decrypt=False)
    core = config.build()

    async def testbench(ctx, rst):
        await check_output_holds(ctx, config, core, 0x0123456789abcdef0123456789abcdef,
                                 0x0011223344556677)

    run_testbench(core, testbench)
