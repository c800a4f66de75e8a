# amaranth: UnusedElaboratable=no
"""The first-order masked AES: the DOM S-box (model exhaustively, hardware on a sample) and the
:class:`~cipher_cores.cores.aes.masked.MaskedAES` core against FIPS-197, the AESAVS files and
pycryptodome, with random, all-zero and stalling randomness."""

import random
from typing import NamedTuple

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
from cipher_cores.cores.sim import LoadKey, Process, simulate_cipher

from .support.helpers import expected_results, random_operations
from .support.nist import aesavs_ecb_encrypt_operations
from .support.masked_feed import MaskedRun, Segment, simulate_masked


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


class Plan(NamedTuple):
    """One simulation per key size, run once for the module: fresh randomness (FIPS-197 vectors,
    then random keys and blocks), all-zero randomness, then ``random.valid`` low a third of the
    time. ``ranges`` maps each part to its slice of the results, ``expected`` is pycryptodome's
    (or FIPS-197's) answer to each block."""
    key_bits: int
    run: MaskedRun
    segments: list
    ranges: dict
    expected: list

    def part(self, name: str) -> tuple:
        """The results of part ``name`` and the answers expected."""
        return self.run.results[self.ranges[name]], self.expected[self.ranges[name]]


@pytest.fixture(scope="module", params=[
    pytest.param(key_bits, id=f"aes{key_bits}", marks=() if key_bits == 128 else pytest.mark.slow)
    for key_bits in KEY_SIZES])
def plan(request):
    key_bits = request.param
    rng = random.Random(f"masked-aes-{key_bits}")
    vectors = [v for v in FIPS197_VECTORS if v.key_bits == key_bits]
    fips = []
    for vector in vectors:
        fips += [LoadKey(vector.key), Process(vector.plaintext, False)]
    # A second block under the last key, back to back, for the initiation interval.
    fips.append(Process(vectors[-1].plaintext, False))
    fips_expected = [v.ciphertext for v in vectors] + [vectors[-1].ciphertext]
    # Random blocks in random directions: the encrypt-only core encrypts every one.
    config = get_core("aes-masked").config(key_bits)
    fresh, zero, gaps = (random_operations(config, rng, keys=keys, blocks_per_key=2)
                         for keys in (2, 1, 1))
    fresh_expected, zero_expected, gaps_expected = (expected_results(config, operations)
                                                    for operations in (fresh, zero, gaps))
    segments = [Segment(fips + fresh), Segment(zero, zero_random=True),
                Segment(gaps, random_gap=0.35)]
    sizes = [len(fips_expected), len(fresh_expected), len(zero_expected), len(gaps_expected)]
    starts = [sum(sizes[:i]) for i in range(5)]
    ranges = {name: slice(starts[i], starts[i + 1])
              for i, name in enumerate(("fips", "fresh", "zero", "gaps"))}
    run = simulate_masked(MaskedAES(key_bits), segments, rng=rng)
    return Plan(key_bits, run, segments, ranges,
                fips_expected + fresh_expected + zero_expected + gaps_expected)


@pytest.mark.parametrize("part", [
    pytest.param("fips", id="fips197-vectors"),
    pytest.param("fresh", id="random-keys-and-blocks-match-pycryptodome"),
    pytest.param("zero", id="all-zero-randomness-gives-the-right-result")])
def test_results(plan, part):
    results, expected = plan.part(part)
    assert results == expected


def test_random_valid_gaps_stall_the_core_and_change_no_result(plan):
    results, expected = plan.part("gaps")
    assert results == expected
    part = plan.ranges["gaps"]
    core = MaskedAES(plan.key_bits)
    latencies = [o - i for i, o in zip(plan.run.input_edges[part], plan.run.output_edges[part])]
    assert all(latency > core.latency for latency in latencies)


def test_cycle_figures_are_exact_with_random_valid_high(plan):
    core = MaskedAES(plan.key_bits)
    part = plan.ranges["fips"]
    inputs, outputs = plan.run.input_edges[part], plan.run.output_edges[part]
    assert [o - i for i, o in zip(inputs, outputs)] == [core.latency] * len(inputs)
    assert inputs[-1] - inputs[-2] == core.initiation_interval
    assert outputs[-1] - outputs[-2] == core.initiation_interval
    assert inputs[0] - plan.run.key_edges[0] == core.key_load_cycles
    assert core.latency == 6 * ROUNDS[plan.key_bits] + 1


def test_random_transfers_one_per_load_and_per_round_cycle(plan):
    operations = plan.segments[0].operations
    keys = sum(isinstance(op, LoadKey) for op in operations)
    blocks = sum(isinstance(op, Process) for op in operations)
    assert plan.run.random_transfers[0] == keys + blocks * (1 + 6 * ROUNDS[plan.key_bits])


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
