# amaranth: UnusedElaboratable=no
"""The Trivium PRNG (:mod:`cipher_cores.cores.prng`): the model against eSTREAM's published
vectors, the gateware against the model, seeding and reseeding, back-pressure."""

import pytest
from amaranth.sim import Simulator

from cipher_cores.cores.prng import PRNG, keystream_bits, keystream_words


def _estream_bytes(key_int: int, count: int) -> bytes:
    """The first ``count`` keystream bytes in eSTREAM's convention: bit ``j`` of byte ``n`` is
    keystream bit z_{8n+j+1}."""
    bits = keystream_bits(key_int, 0, 8 * count)
    return bytes(sum(bits[8 * n + j] << j for j in range(8)) for n in range(count))


def _estream_key(key_bytes: bytes) -> int:
    """eSTREAM's reference code loads bit ``j`` of key byte ``n`` into K_{80 - 8n - j}."""
    return sum(((byte >> j) & 1) << (79 - 8 * n - j)
               for n, byte in enumerate(key_bytes) for j in range(8))


# The eSTREAM test vectors of Trivium (key, IV all zero; first 16 keystream bytes), as printed
# in the eSTREAM verified test-vector file: Set 1 vector 0 and Set 2 vector 0.
@pytest.mark.parametrize("key, stream", [
    (bytes([0x80] + [0] * 9), "38EB86FF730D7A9CAF8DF13A4420540D"),
    (bytes(10), "FBE0BF265859051B517A2E4E239FC97F"),
])
def test_model_matches_estream_vectors(key, stream):
    assert _estream_bytes(_estream_key(key), 16) == bytes.fromhex(stream)


def test_words_are_consecutive_keystream_bits():
    seed = 0x1234 | 0x5678 << 80
    words = keystream_words(seed, 64, 3)
    bits = keystream_bits(0x1234, 0x5678, 192)
    assert words == [sum(b << j for j, b in enumerate(bits[64 * n:64 * n + 64]))
                     for n in range(3)]


def _run(prng, seeds, words, *, gaps=(), reseed_after=None):
    got = []
    valid_before_seed = []

    async def bench(ctx):
        valid_before_seed.append(ctx.get(prng.random.valid))
        await ctx.tick().repeat(3)
        valid_before_seed.append(ctx.get(prng.random.valid))
        for index, seed in enumerate(seeds):
            ctx.set(prng.seed.valid, 1)
            ctx.set(prng.seed.payload, seed)
            await ctx.tick()
            ctx.set(prng.seed.valid, 0)
            ctx.set(prng.random.ready, 1)
            count = reseed_after if index < len(seeds) - 1 else words
            for n in range(count):
                if n < len(gaps) and gaps[n]:
                    ctx.set(prng.random.ready, 0)
                    await ctx.tick().repeat(gaps[n])
                    ctx.set(prng.random.ready, 1)
                payload, = await ctx.tick().sample(prng.random.payload).until(prng.random.valid)
                got.append((index, payload))
            ctx.set(prng.random.ready, 0)

    sim = Simulator(prng)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return got, valid_before_seed


@pytest.mark.parametrize("width", [64, 7])
def test_hardware_matches_model(width):
    seed = 0xC0FFEE_0123456789ABCDEF | 0xFEEDFACE << 90
    got, valid = _run(PRNG(width), [seed], 5, gaps=[0, 2, 0, 1])
    assert valid == [0, 0]
    assert [word for _, word in got] == keystream_words(seed, width, 5)


def test_reseed_restarts_the_stream():
    first, second = 0xAAAA, 0x5555 << 80 | 1
    got, _ = _run(PRNG(64), [first, second], 3, reseed_after=2)
    assert [w for i, w in got if i == 0] == keystream_words(first, 64, 2)
    assert [w for i, w in got if i == 1] == keystream_words(second, 64, 3)


def test_warmup_keeps_valid_low():
    prng = PRNG(64)
    seen = []

    async def bench(ctx):
        ctx.set(prng.seed.valid, 1)
        await ctx.tick()
        ctx.set(prng.seed.valid, 0)
        for _ in range(prng.warmup_cycles + 1):
            seen.append(ctx.get(prng.random.valid))
            await ctx.tick()

    sim = Simulator(prng)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert prng.warmup_cycles == 18
    assert seen == [0] * 18 + [1]


@pytest.mark.parametrize("width, error", [(0, ValueError), (289, ValueError), (True, TypeError),
                                          ("8", TypeError)])
def test_bad_width(width, error):
    with pytest.raises(error, match=r"width must be an integer in 1\.\.288"):
        PRNG(width)
