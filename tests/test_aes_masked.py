# amaranth: UnusedElaboratable=no
"""The first-order masked AES: the DOM S-box (model exhaustively, hardware on a sample) and the
:class:`~cipher_cores.cores.aes.masked.MaskedAES` core against FIPS-197, the AESAVS files and
pycryptodome, with random, all-zero and stalling randomness."""

import random

from amaranth.sim import Simulator

from cipher_cores.cores.aes.masked_sbox import SBOX_RANDOM_BITS, MaskedSBox, masked_sbox
from cipher_cores.cores.aes.sbox import SBOX


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
            for stage in range(4):
                ctx.set(dut.advance, 1 << stage)
                ctx.set(dut.random, randomness)
                await ctx.tick()
                # Bits seen by the other stages on this edge must not matter.
                ctx.set(dut.random, 0)
            ctx.set(dut.advance, 0)
            ctx.set(dut.random, randomness ^ 0x3ffff)
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
