# amaranth: UnusedElaboratable=no
"""The first-order masked AES: the DOM S-box (model exhaustively, hardware on a sample) and the
:class:`~cipher_cores.cores.aes.masked.MaskedAES` core against FIPS-197, the AESAVS files and
pycryptodome, with random, all-zero and stalling randomness."""

import random

import pytest
from amaranth.sim import Simulator

from cipher_cores.cores.aes.base import AESCipher
from cipher_cores.cores.aes.masked import MaskedAES, masked_random_bits
from cipher_cores.cores.aes.masked_sbox import SBOX_RANDOM_BITS, STAGES, MaskedSBox, masked_sbox
from cipher_cores.cores.aes.sbox import SBOX
from cipher_cores.cores.aes.transforms import ROUNDS
from cipher_cores.cores.aes.vectors import FIPS197_VECTORS
from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.sim import simulate_cipher

from .support.nist import aesavs_ecb_encrypt_operations
from .support.masked_feed import (check_cycle_figures, check_gaps_stall, first_segment_counts,
                                  masked_plan)


# The masked S-box

def test_model_recombines_to_the_sbox_for_every_input_and_random_masks():
    rng = random.Random("masked-sbox-model")
    for x in range(256):
        for _ in range(6):
            mask, randomness = rng.getrandbits(8), rng.getrandbits(SBOX_RANDOM_BITS)
            y0, y1 = masked_sbox(x ^ mask, mask, randomness)
            assert y0 ^ y1 == SBOX[x]


def test_model_with_zero_randomness_is_the_sbox():
    for x in range(256):
        assert masked_sbox(x, 0, 0) == (SBOX[x], 0)
        y0, y1 = masked_sbox(x ^ 0x5a, 0x5a, 0)
        assert y0 ^ y1 == SBOX[x]


def test_model_output_shares_depend_on_the_randomness():
    """The shares are remasked: the same input sharing with other fresh bits gives other shares
    (so a test that ignored the randomness could not pass)."""
    shares = {masked_sbox(0x53, 0x21, randomness) for randomness in range(0, 1 << 18, 4099)}
    assert len(shares) > 16
    assert {y0 ^ y1 for y0, y1 in shares} == {SBOX[0x53 ^ 0x21]}


def simulate_sbox(cases):
    """Run (x0, x1, randomness) cases through the hardware one stage per edge; return outputs."""
    dut = MaskedSBox()
    results = []

    async def testbench(ctx):
        for x0, x1, randomness in cases:
            ctx.set(dut.i0, x0)
            ctx.set(dut.i1, x1)
            for stage in range(STAGES):
                ctx.set(dut.advance, 1 << stage)
                ctx.set(dut.random, randomness)
                await ctx.tick()
                # Bits seen by the other stages on this edge must not matter.
                ctx.set(dut.random, 0)
            ctx.set(dut.advance, 0)
            ctx.set(dut.random, randomness ^ ((1 << SBOX_RANDOM_BITS) - 1))
            await ctx.tick()     # a stalled edge changes nothing
            results.append((ctx.get(dut.o0), ctx.get(dut.o1)))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    return results


def test_hardware_matches_the_model_on_a_sample():
    rng = random.Random("masked-sbox-hardware")
    cases = [(x ^ m, m, rng.getrandbits(SBOX_RANDOM_BITS))
             for x in rng.sample(range(256), 48) for m in [rng.getrandbits(8)]]
    cases += [(x, 0, 0) for x in (0x00, 0x01, 0x53, 0xff)]
    for (x0, x1, randomness), (y0, y1) in zip(cases, simulate_sbox(cases), strict=True):
        assert (y0, y1) == masked_sbox(x0, x1, randomness)
        assert y0 ^ y1 == SBOX[x0 ^ x1]


# The core

KEY_SIZES = (128, 192, 256)


@pytest.fixture(scope="module", params=[
    pytest.param(key_bits, id=f"aes{key_bits}", marks=() if key_bits == 128 else pytest.mark.slow)
    for key_bits in KEY_SIZES])
def plan(request):
    """One simulation per key size, run once for the module (:func:`masked_plan`): the FIPS-197
    vectors and random keys and blocks with fresh randomness, all-zero randomness, then
    ``random.valid`` low a third of the time; pycryptodome's answers."""
    key_bits = request.param
    vectors = [v for v in FIPS197_VECTORS if v.key_bits == key_bits]
    return masked_plan(MaskedAES(key_bits), vectors, get_core("aes-masked").config(key_bits),
                       random.Random(f"masked-aes-{key_bits}"))


@pytest.mark.parametrize("part", [
    pytest.param("known", id="fips197-vectors"),
    pytest.param("fresh", id="random-keys-and-blocks-match-pycryptodome"),
    pytest.param("zero", id="all-zero-randomness-gives-the-right-result")])
def test_results(plan, part):
    results, expected = plan.part(part)
    assert results == expected


def test_random_valid_gaps_stall_the_core_and_change_no_result(plan):
    check_gaps_stall(plan)


def test_cycle_figures_are_exact_with_random_valid_high(plan):
    check_cycle_figures(plan)
    assert plan.core.latency == 6 * ROUNDS[plan.core.key_bits] + 1


def test_random_transfers_one_per_load_and_per_round_cycle(plan):
    keys, blocks, transfers = first_segment_counts(plan)
    assert transfers == keys + blocks * (1 + 6 * ROUNDS[plan.core.key_bits])


# Construction

@pytest.mark.parametrize("key_bits, width", [(128, 160), (192, 192), (256, 256)])
def test_signature_has_the_random_stream(key_bits, width):
    core = MaskedAES(key_bits)
    assert core.signature == BlockCipherSignature(128, key_bits, random_bits=width)
    assert core.random_bits == masked_random_bits(key_bits) == width
    assert core.decrypts is False
    assert isinstance(core, AESCipher)
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == \
        (6 * ROUNDS[key_bits] + 1, 6 * ROUNDS[key_bits] + 1, 1)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_bits": 100}, ValueError, "key_bits must be 128, 192 or 256, not 100"),
    ({"key_bits": "128"}, TypeError, "key_bits must be an integer (128, 192 or 256), not '128'"),
    ({"decrypt": True}, ValueError, "decrypt must be False: MaskedAES encrypts only, not True"),
    ({"decrypt": "no"}, TypeError, "decrypt must be a bool (True or False), not 'no'"),
])
def test_bad_parameters_are_rejected(kwargs, error, message):
    with pytest.raises(error) as info:
        MaskedAES(**kwargs)
    assert str(info.value) == message


@pytest.mark.slow
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_aesavs_ecb_encrypt_sections(key_bits):
    """The encrypt sections of every AESAVS ECB file (GFSbox, KeySbox, VarKey, VarTxt, MMT) on
    the compiled simulator, which feeds the random stream fresh words (minutes to compile, once
    per netlist: the model is cached)."""
    operations, expected = aesavs_ecb_encrypt_operations(key_bits)
    run = simulate_cipher(MaskedAES(key_bits), operations, backend="cxxrtl")
    assert run.results == expected
    assert run.output.violations == []
