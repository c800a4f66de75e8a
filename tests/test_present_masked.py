# amaranth: UnusedElaboratable=no
"""The masked PRESENT (:mod:`cipher_cores.cores.present.masked`): the threshold implementation's
properties (correctness, non-completeness, uniformity, S = F o G for every input and share
split), the paper's vectors, random differential tests against the reference model, stalls on
the random stream, all-zero randomness, and the PRNG feeding the core."""

import itertools
import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from cipher_cores.cores.present import reference
from cipher_cores.cores.present.masked import (F_TABLE, G_TABLE, SHARES, MaskedPRESENT, anf,
                                              shared_apply, shared_terms)
from cipher_cores.cores.present.tables import SBOX
from cipher_cores.cores.present.vectors import PAPER_VECTORS
from cipher_cores.cores.prng import PRNG
from cipher_cores.cores.sim import LoadKey, Process, simulate_cipher


TABLES = {"G": G_TABLE, "F": F_TABLE}


def _xor(values):
    result = 0
    for value in values:
        result ^= value
    return result


def test_decomposition_composes_to_the_sbox_with_quadratic_parts():
    assert [F_TABLE[G_TABLE[x]] for x in range(16)] == list(SBOX)
    for table in (G_TABLE, F_TABLE):
        assert sorted(table) == list(range(16))
        assert max(len(monomial) for bit in range(4) for monomial in anf(table, bit)) == 2


@pytest.mark.parametrize("name", TABLES)
def test_sharing_is_correct(name):
    table = TABLES[name]
    for shares in itertools.product(range(16), repeat=SHARES):
        assert _xor(shared_apply(table, shares)) == table[_xor(shares)]


@pytest.mark.parametrize("name", TABLES)
def test_sharing_is_non_complete(name):
    for index, per_bit in enumerate(shared_terms(TABLES[name])):
        used = {share for monomials in per_bit for monomial in monomials
                for share, _ in monomial}
        assert index not in used


@pytest.mark.parametrize("name", TABLES)
def test_sharing_is_uniform(name):
    # Uniform for a permutation: the shared map of 12 bits is itself a permutation, so uniform
    # input sharings give uniform output sharings.
    images = {tuple(shared_apply(TABLES[name], shares))
              for shares in itertools.product(range(16), repeat=SHARES)}
    assert len(images) == 16 ** SHARES


def test_shared_sbox_is_the_sbox_for_every_input_and_share_split():
    for x, first, second in itertools.product(range(16), repeat=3):
        shares = (first, second, x ^ first ^ second)
        assert _xor(shared_apply(F_TABLE, shared_apply(G_TABLE, shares))) == SBOX[x]


def test_figures_and_randomness():
    core = MaskedPRESENT(80)
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == (64, 65, 1)
    assert (core.random_bits, core.random_bits_per_block, core.decrypts) == (160, 128, False)
    assert MaskedPRESENT(128).random_bits == 256


@pytest.mark.parametrize("key_bits", [80, 128])
def test_paper_vectors(key_bits):
    vectors = [v for v in PAPER_VECTORS if v.key_bits == key_bits]
    operations = []
    for vector in vectors:
        operations += [LoadKey(vector.key), Process(vector.plaintext)]
    run = simulate_cipher(MaskedPRESENT(key_bits), operations)
    assert run.results == [vector.ciphertext for vector in vectors]


def _random_operations(rng, key_bits, keys=2, blocks=3):
    operations, expected = [], []
    for _ in range(keys):
        key = rng.getrandbits(key_bits)
        operations.append(LoadKey(key))
        for _ in range(blocks):
            block = rng.getrandbits(64)
            operations.append(Process(block))
            expected.append(reference.encrypt_block(key, block, key_bits))
    return operations, expected


@pytest.mark.parametrize("key_bits", [80, 128])
def test_random_blocks_match_the_reference_under_gaps_and_back_pressure(key_bits):
    rng = random.Random(f"masked-{key_bits}")
    operations, expected = _random_operations(rng, key_bits)
    run = simulate_cipher(MaskedPRESENT(key_bits), operations, rng=rng, max_gap=3, max_stall=3)
    assert run.results == expected


def test_gaps_in_the_random_stream_stall_the_core_and_change_no_result():
    rng = random.Random("stall")
    operations, expected = _random_operations(rng, 80, keys=1)
    full = simulate_cipher(MaskedPRESENT(80), operations)
    gappy = simulate_cipher(MaskedPRESENT(80), operations, random_valid=0.2)
    assert full.results == gappy.results == expected
    # The key and each block wait for a random word: the gappy run starts them later.
    assert gappy.input.edges[-1] > full.input.edges[-1]
    assert gappy.latencies == full.latencies == [64] * 3


async def _drive(ctx, core, operations) -> list:
    """Perform ``operations`` on ``core``'s key and input streams, one block at a time, with
    ``output.ready`` high; returns the results."""
    results = []
    ctx.set(core.output.ready, 1)
    for op in operations:
        if isinstance(op, LoadKey):
            ctx.set(core.key.payload, op.key)
            ctx.set(core.key.valid, 1)
            await ctx.tick().until(core.key.ready)
            ctx.set(core.key.valid, 0)
        else:
            ctx.set(core.input.payload.block, op.block)
            ctx.set(core.input.valid, 1)
            await ctx.tick().until(core.input.ready)
            ctx.set(core.input.valid, 0)
            value, = await ctx.tick().sample(core.output.payload).until(core.output.valid)
            results.append(value)
    return results


def _run_with_source(core, source, operations):
    """The operations on ``core`` with ``source(ctx)`` driving its random stream; the results."""
    results = []

    async def bench(ctx):
        results.extend(await _drive(ctx, core, operations))

    sim = Simulator(core)
    sim.add_clock(1e-8)
    sim.add_testbench(source, background=True)
    sim.add_testbench(bench)
    sim.run()
    return results


def test_all_zero_randomness_gives_the_right_results():
    core = MaskedPRESENT(80)
    operations, expected = _random_operations(random.Random("zero"), 80, keys=1, blocks=2)

    async def zeros(ctx):
        ctx.set(core.random.valid, 1)
        ctx.set(core.random.payload, 0)
    assert _run_with_source(core, zeros, operations) == expected


def test_prng_feeds_the_core():
    m = Module()
    m.submodules.prng = prng = PRNG(160)
    m.submodules.core = core = MaskedPRESENT(80)
    wiring.connect(m, prng.random, core.random)
    operations, expected = _random_operations(random.Random("prng"), 80, keys=1, blocks=2)
    results = []

    async def bench(ctx):
        ctx.set(prng.seed.payload, 0x1234_5678_9ABC_DEF0_1357 | 0xC0FFEE << 80)
        ctx.set(prng.seed.valid, 1)
        await ctx.tick()
        ctx.set(prng.seed.valid, 0)
        results.extend(await _drive(ctx, core, operations))

    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert results == expected


@pytest.mark.parametrize("kwargs, error, message", [
    ({"decrypt": True}, ValueError, "decrypt must be False: MaskedPRESENT only encrypts"),
    ({"decrypt": 1}, TypeError, "decrypt must be a bool"),
    ({"key_bits": 64}, ValueError, "key_bits"),
])
def test_bad_parameters(kwargs, error, message):
    with pytest.raises(error, match=message):
        MaskedPRESENT(**kwargs)
