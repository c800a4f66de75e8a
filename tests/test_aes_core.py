# amaranth: UnusedElaboratable=no
"""The AES core against FIPS-197, the NIST AESAVS ECB files and pycryptodome, and its stream contract."""

import random

import pytest
from amaranth.hdl import Fragment
from Crypto.Cipher import AES as PyCryptodomeAES

from cores.aes import AES
from cores.aes.vectors import FIPS197_APPENDIX_C
from cores.interface import BlockCipherSignature
from cores.sim import (LoadKey, Process, simulate_cipher, simulator_with_reset, stream_get,
                       stream_monitor, stream_put)

from .nist import aesavs_ecb_vectors


KEY_SIZES = (128, 192, 256)
ROUNDS = {128: 10, 192: 12, 256: 14}
AESAVS_KINDS = ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")


def oracle(key, key_bits, block, decrypt):
    """pycryptodome's answer, on our integer byte order."""
    cipher = PyCryptodomeAES.new(key.to_bytes(key_bits // 8, "big"), PyCryptodomeAES.MODE_ECB)
    operate = cipher.decrypt if decrypt else cipher.encrypt
    return int.from_bytes(operate(block.to_bytes(16, "big")), "big")


def random_operations(rng, key_bits, keys, blocks_per_key):
    """Random keys and blocks with random directions; returns the operations and the answers."""
    operations, expected = [], []
    for _ in range(keys):
        key = rng.getrandbits(key_bits)
        operations.append(LoadKey(key))
        for _ in range(blocks_per_key):
            block, decrypt = rng.getrandbits(128), rng.random() < 0.5
            operations.append(Process(block, decrypt))
            expected.append(oracle(key, key_bits, block, decrypt))
    return operations, expected


def assert_clean_run(run, expected):
    assert run.results == expected
    assert run.output.violations == []


# Known answers

@pytest.mark.parametrize("sbox", ["bram", "logic", "boolean"])
@pytest.mark.parametrize("vector", FIPS197_APPENDIX_C, ids=lambda v: f"aes{v.key_bits}")
def test_fips197_appendix_c_both_directions(vector, sbox):
    run = simulate_cipher(AES(vector.key_bits, sbox=sbox), [
        LoadKey(vector.key),
        Process(vector.plaintext, decrypt=False),
        Process(vector.ciphertext, decrypt=True),
    ])
    assert_clean_run(run, [vector.ciphertext, vector.plaintext])


@pytest.mark.parametrize("key_bits", KEY_SIZES)
@pytest.mark.parametrize("kind", AESAVS_KINDS)
def test_aesavs_ecb_file(kind, key_bits):
    """Every vector of the file, encrypt and decrypt sections, one simulation; the key is loaded
    again only when it changes, so some blocks follow a key change and others run back to back."""
    operations, expected, key = [], [], None
    vectors = aesavs_ecb_vectors(kind, key_bits)
    assert vectors
    for vector in vectors:
        if vector.key != key:
            operations.append(LoadKey(vector.key))
            key = vector.key
        operations += [Process(block, vector.decrypt) for block in vector.given]
        expected += vector.expected
    run = simulate_cipher(AES(key_bits), operations)
    assert_clean_run(run, expected)


# Differential tests against pycryptodome

@pytest.mark.parametrize("sbox", ["bram", "logic", "boolean"])
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_random_keys_and_blocks_match_pycryptodome(key_bits, sbox):
    rng = random.Random(f"differential-{key_bits}-{sbox}")
    operations, expected = random_operations(rng, key_bits, keys=8, blocks_per_key=6)
    assert_clean_run(simulate_cipher(AES(key_bits, sbox=sbox), operations), expected)


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_random_gaps_and_back_pressure_keep_results_in_order(key_bits):
    rng = random.Random(f"stalls-{key_bits}")
    operations, expected = random_operations(rng, key_bits, keys=5, blocks_per_key=6)
    run = simulate_cipher(AES(key_bits), operations, rng=rng, max_gap=4, max_stall=30)
    assert_clean_run(run, expected)
    assert any(latency > ROUNDS[key_bits] + 1 for latency in run.latencies), \
        "back-pressure never delayed a result: the test did not exercise stalls"


@pytest.mark.slow
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_long_random_sweep_matches_pycryptodome(key_bits):
    rng = random.Random(f"sweep-{key_bits}")
    operations, expected = random_operations(rng, key_bits, keys=100, blocks_per_key=20)
    run = simulate_cipher(AES(key_bits), operations, rng=rng, max_gap=2, max_stall=2)
    assert_clean_run(run, expected)


# Cycle budget

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_latency_interval_and_key_load_are_exact(key_bits):
    nr = ROUNDS[key_bits]
    core = AES(key_bits)
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == (nr + 1,) * 3
    rng = random.Random(f"timing-{key_bits}")
    operations, expected = random_operations(rng, key_bits, keys=1, blocks_per_key=8)
    run = simulate_cipher(core, operations)
    assert_clean_run(run, expected)
    assert run.latencies == [nr + 1] * 8
    assert run.intervals == [nr + 1] * 7
    assert run.input.edges[0] - run.key.edges[0] == nr + 1


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_cycle_counts_do_not_depend_on_key_block_or_direction(key_bits):
    rng = random.Random(f"constant-time-{key_bits}")
    operations = []
    for key in (0, (1 << key_bits) - 1, rng.getrandbits(key_bits), rng.getrandbits(key_bits)):
        operations.append(LoadKey(key))
        for block in (0, (1 << 128) - 1, rng.getrandbits(128)):
            operations += [Process(block, False), Process(block, True)]
    run = simulate_cipher(AES(key_bits), operations)
    assert set(run.latencies) == {ROUNDS[key_bits] + 1}
    key_loads = [run.input.edges[6 * i] - run.key.edges[i] for i in range(4)]
    assert set(key_loads) == {ROUNDS[key_bits] + 1}


# Stream contract

def test_no_block_is_accepted_before_the_first_key():
    core = AES(128)
    sim, _ = simulator_with_reset(core)

    async def bench(ctx):
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": 0x1234, "decrypt": 0})
        ctx.set(core.output.ready, 1)
        for _ in range(40):
            _, _, ready, valid = await ctx.tick().sample(core.input.ready, core.output.valid)
            assert not ready and not valid
        assert ctx.get(core.key.ready)

    sim.add_testbench(bench)
    sim.run()


def test_key_waits_until_the_block_in_flight_has_left():
    vector = FIPS197_APPENDIX_C[0]
    core = AES(128)
    sim, _ = simulator_with_reset(core)
    new_key = 0x2b7e151628aed2a6abf7158809cf4f3c

    async def bench(ctx):
        await stream_put(ctx, core.key, vector.key)
        await stream_put(ctx, core.input, {"block": vector.plaintext, "decrypt": 0})
        # Offer the next key at once, and hold the result back for a while.
        ctx.set(core.key.valid, 1)
        ctx.set(core.key.payload, new_key)
        for _ in range(30):
            _, _, key_ready, out_valid = await ctx.tick().sample(core.key.ready, core.output.valid)
            assert not key_ready
        assert out_valid
        assert await stream_get(ctx, core.output) == vector.ciphertext
        await ctx.tick().until(core.key.ready)
        ctx.set(core.key.valid, 0)
        await stream_put(ctx, core.input, {"block": vector.plaintext, "decrypt": 0})
        assert await stream_get(ctx, core.output) == oracle(new_key, 128, vector.plaintext, False)

    sim.add_testbench(bench)
    sim.run()


def test_key_is_taken_before_a_block_offered_in_the_same_cycle():
    vector = FIPS197_APPENDIX_C[0]
    core = AES(128)
    sim, _ = simulator_with_reset(core)

    async def bench(ctx):
        await stream_put(ctx, core.key, 0)
        await ctx.tick().until(core.key.ready)
        ctx.set(core.key.valid, 1)
        ctx.set(core.key.payload, vector.key)
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": vector.plaintext, "decrypt": 0})
        _, _, key_ready, input_ready = await ctx.tick().sample(core.key.ready, core.input.ready)
        assert key_ready and not input_ready
        ctx.set(core.key.valid, 0)
        await ctx.tick().until(core.input.ready)
        ctx.set(core.input.valid, 0)
        assert await stream_get(ctx, core.output) == vector.ciphertext

    sim.add_testbench(bench)
    sim.run()


def test_a_waiting_key_goes_before_the_next_block():
    vector = FIPS197_APPENDIX_C[0]
    core = AES(128)
    sim, _ = simulator_with_reset(core)
    logs = {}
    sim.add_testbench(stream_monitor({"key": core.key, "input": core.input,
                                      "output": core.output}, logs), background=True)

    async def producer(ctx):
        await stream_put(ctx, core.key, 0)
        await stream_put(ctx, core.input, {"block": vector.plaintext, "decrypt": 0})
        # Both offered while the first block is still in the core.
        ctx.set(core.key.valid, 1)
        ctx.set(core.key.payload, vector.key)
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": vector.plaintext, "decrypt": 0})
        await ctx.tick().until(core.key.ready)
        ctx.set(core.key.valid, 0)
        await ctx.tick().until(core.input.ready)
        ctx.set(core.input.valid, 0)

    async def consumer(ctx):
        assert await stream_get(ctx, core.output) == oracle(0, 128, vector.plaintext, False)
        assert await stream_get(ctx, core.output) == vector.ciphertext
        await ctx.tick()

    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.run()
    first_result, _ = logs["output"].edges
    _, second_block = logs["input"].edges
    _, second_key = logs["key"].edges
    assert first_result < second_key < second_block


def test_output_holds_payload_and_valid_while_not_ready():
    vector = FIPS197_APPENDIX_C[2]
    core = AES(256)
    sim, _ = simulator_with_reset(core)

    async def bench(ctx):
        await stream_put(ctx, core.key, vector.key)
        await stream_put(ctx, core.input, {"block": vector.plaintext, "decrypt": 0})
        await ctx.tick().until(core.output.valid)
        for _ in range(25):
            _, _, valid, payload = await ctx.tick().sample(core.output.valid, core.output.payload)
            assert valid and payload == vector.ciphertext
        assert await stream_get(ctx, core.output) == vector.ciphertext

    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("sbox", ["bram", "logic", "boolean"])
def test_reset_mid_block_leaves_an_idle_core_without_a_key(sbox):
    vector = FIPS197_APPENDIX_C[1]
    core = AES(192, sbox=sbox)
    sim, rst = simulator_with_reset(core)

    async def bench(ctx):
        await stream_put(ctx, core.key, vector.key)
        await stream_put(ctx, core.input, {"block": vector.plaintext, "decrypt": 0})
        await ctx.tick().repeat(5)
        ctx.set(rst, 1)
        await ctx.tick()
        ctx.set(rst, 0)
        ctx.set(core.output.ready, 1)
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": vector.ciphertext, "decrypt": 1})
        for _ in range(20):
            _, _, out_valid, in_ready, key_ready = await ctx.tick().sample(
                core.output.valid, core.input.ready, core.key.ready)
            assert not out_valid and not in_ready and key_ready
        ctx.set(core.input.valid, 0)
        ctx.set(core.output.ready, 0)
        await stream_put(ctx, core.key, vector.key)
        await stream_put(ctx, core.input, {"block": vector.ciphertext, "decrypt": 1})
        assert await stream_get(ctx, core.output) == vector.plaintext

    sim.add_testbench(bench)
    sim.run()


# Construction

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_block_cipher_signature(key_bits):
    core = AES(key_bits)
    assert core.signature == BlockCipherSignature(128, key_bits)
    assert core.key_bits == key_bits
    assert core.sbox == "bram"
    Fragment.get(core, None)  # elaborates with this signature


@pytest.mark.parametrize("key_bits, error, message", [
    (100, ValueError, "key_bits must be 128, 192 or 256, not 100"),
    (80, ValueError, "key_bits must be 128, 192 or 256, not 80"),
    ("128", TypeError, "key_bits must be an integer (128, 192 or 256), not '128'"),
    (128.0, TypeError, "key_bits must be an integer (128, 192 or 256), not 128.0"),
])
def test_bad_key_bits_is_rejected_with_the_allowed_values(key_bits, error, message):
    with pytest.raises(error) as info:
        AES(key_bits)
    assert str(info.value) == message


@pytest.mark.parametrize("sbox, error, message", [
    ("rom", ValueError, "sbox must be 'logic', 'bram' or 'boolean', not 'rom'"),
    (None, TypeError, "sbox must be a string ('logic', 'bram' or 'boolean'), not None"),
])
def test_bad_sbox_is_rejected_with_the_allowed_values(sbox, error, message):
    with pytest.raises(error) as info:
        AES(128, sbox=sbox)
    assert str(info.value) == message
