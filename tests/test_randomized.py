# amaranth: UnusedElaboratable=no
"""RandomizedCore: a masked core fed by a PRNG of its own is a plain core. The published vectors
through it, the contract (with the PRNG's warm-up after reset), the random words the masked core
takes (the PRNG's keystream of the reset seed, then of each reseed), and its checked arguments."""

import re

import pytest
from amaranth.hdl import Fragment

from cipher_cores.cores.aes.masked import MaskedAES
from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_B, FIPS197_APPENDIX_C
from cipher_cores.cores.catalog import parse_config
from cipher_cores.cores.present import PRESENT
from cipher_cores.cores.present.masked import MaskedPRESENT
from cipher_cores.cores.present.reference import encrypt_block
from cipher_cores.cores.prng import SEED_BITS, keystream_words, warmup_cycles
from cipher_cores.cores.randomized import DEFAULT_SEED, RandomizedCore, randomized_config
from cipher_cores.cores.sim import (LoadKey, Process, simulate_cipher, simulator_with_reset,
                                    stream_monitor, watchdog)

from .support.contract import (check_figures, check_key_waits_for_idle,
                               check_no_block_before_first_key, check_reset, check_stream_rules,
                               check_waiting_key_goes_first)
from .support.helpers import pulse_reset, stream_get, stream_put


#: Two seeds, the Trivium key in the low 80 bits and the IV in the high 80.
SEED = 0x0123456789ABCDEF0123 | 0xFEDCBA9876543210FEDC << 80
RESEED = 0x00112233445566778899 | 0xAABBCCDDEEFF00112233 << 80


def warmup_edges(config) -> int:
    """W: the warm-up of the PRNG that feeds cores of the masked ``config``."""
    core = config.build()
    core._MustUse__silence = True       # built only to read its random_bits
    return warmup_cycles(core.random_bits)


def simulate(wrapper, bench, max_edges=5_000) -> dict:
    """Run ``bench(ctx, rst)`` on ``wrapper``; the transfers of its streams and of its masked
    core's ``random`` (:class:`~cipher_cores.cores.sim.StreamLog` by name, edges counted from 1
    at the first edge, reset edges included)."""
    sim, rst = simulator_with_reset(wrapper)
    logs = {}
    streams = {"key": wrapper.key, "input": wrapper.input, "output": wrapper.output,
               "reseed": wrapper.reseed, "random": wrapper.core.random}
    sim.add_testbench(stream_monitor(streams, logs), background=True)
    sim.add_testbench(watchdog(max_edges), background=True)

    async def testbench(ctx):
        await bench(ctx, rst)
    sim.add_testbench(testbench)
    sim.run()
    return logs


async def encrypt(ctx, wrapper, block) -> int:
    await stream_put(ctx, wrapper.input, {"block": block, "decrypt": 0})
    return await stream_get(ctx, wrapper.output)


# What it is

@pytest.mark.parametrize("core", [MaskedPRESENT(80), MaskedAES(128), MaskedAES(256)],
                         ids=["present-masked-80", "aes-masked-128", "aes-masked-256"])
def test_the_wrapper_is_a_plain_core_with_the_masked_cores_figures(core):
    wrapper = RandomizedCore(core)
    assert wrapper.random_bits == 0 and "random" not in wrapper.signature.members
    assert wrapper.signature.members["reseed"].signature.members["payload"].shape.width == \
        SEED_BITS
    assert (wrapper.block_bits, wrapper.key_bits, wrapper.decrypts) == \
        (core.block_bits, core.key_bits, core.decrypts)
    assert (wrapper.latency, wrapper.initiation_interval, wrapper.key_load_cycles) == \
        (core.latency, core.initiation_interval, core.key_load_cycles)
    assert wrapper.warmup_cycles == warmup_cycles(core.random_bits) == -(-1152 // core.random_bits)
    assert wrapper.seed == DEFAULT_SEED and wrapper.core is core


def test_the_config_builds_the_wrapped_core():
    config = randomized_config(parse_config("present-masked-80"), seed=SEED)
    core = config.build()
    assert isinstance(core, RandomizedCore) and isinstance(core.core, MaskedPRESENT)
    assert core.seed == SEED
    assert config.text == "present-masked+prng-80"
    Fragment.get(core, None)            # it elaborates (and its parts count as used)


@pytest.mark.parametrize("make, error, message", [
    (lambda: RandomizedCore("core"), TypeError,
     "core must be a BlockCipher (a cipher core of this library), not 'core'"),
    (lambda: RandomizedCore(PRESENT(80)), ValueError,
     "core must be a masked core (random_bits > 0) for a PRNG to feed, not <CORE> with "
     "random_bits=0"),
    (lambda: RandomizedCore(MaskedPRESENT(80), seed=1 << 160), ValueError,
     f"seed must be an integer in 0..2**160-1, not {1 << 160}"),
    (lambda: RandomizedCore(MaskedPRESENT(80), seed=-1), ValueError,
     "seed must be an integer in 0..2**160-1, not -1"),
    (lambda: RandomizedCore(MaskedPRESENT(80), seed="0"), TypeError,
     "seed must be an integer in 0..2**160-1, not '0'"),
    (lambda: RandomizedCore(MaskedPRESENT(80), seed=True), TypeError,
     "seed must be an integer in 0..2**160-1, not True"),
    (lambda: randomized_config(parse_config("present-masked-80"), seed=None), TypeError,
     "seed must be an integer in 0..2**160-1, not None"),
])
def test_bad_arguments(make, error, message):
    # <CORE> stands for the core's repr (it holds an address).
    pattern = re.escape(message).replace("<CORE>", "<[^>]*PRESENT[^>]*>")
    with pytest.raises(error, match=f"^{pattern}$"):
        make()


# Results

@pytest.mark.parametrize("name", [
    "present-masked-80", "present-masked-serial-80",
    pytest.param("present-masked-128", marks=pytest.mark.slow)])
def test_present_paper_vectors_through_the_wrapper(name):
    config = parse_config(name)
    operations = []
    for vector in config.vectors():
        operations += [LoadKey(vector.key), Process(vector.plaintext)]
    wrapper = randomized_config(config, seed=SEED).build()
    run = simulate_cipher(wrapper, operations)
    assert run.results == [vector.ciphertext for vector in config.vectors()]
    assert run.latencies == [wrapper.latency] * len(config.vectors())
    # The first key waits for the seed (edge 1) and the warm-up.
    assert run.key.edges[0] == wrapper.warmup_cycles + 2


@pytest.mark.slow              # about 15 s: the Python simulator's compile of the masked AES
def test_masked_aes128_gives_fips197_and_a_reseed_mid_block_stalls_it_by_the_warmup():
    """FIPS-197 Appendix B and C.1 through the wrapper at the core's latency; then a reseed
    while a block is in the rounds (the masked AES draws random bits every round cycle): the
    block waits out the warm-up, its result is right, and the words after are the new seed's."""
    wrapper = RandomizedCore(MaskedAES(128), seed=SEED)
    vectors = [FIPS197_APPENDIX_B, FIPS197_APPENDIX_C[0]]
    results = []

    async def bench(ctx, rst):
        for vector in vectors:
            await stream_put(ctx, wrapper.key, vector.key)
            results.append(await encrypt(ctx, wrapper, vector.plaintext))
        await stream_put(ctx, wrapper.input, {"block": vectors[-1].plaintext, "decrypt": 0})
        for _ in range(20):
            await ctx.tick()
        await stream_put(ctx, wrapper.reseed, RESEED)
        results.append(await stream_get(ctx, wrapper.output))

    logs = simulate(wrapper, bench)
    assert results == [vector.ciphertext for vector in vectors] + [vectors[-1].ciphertext]
    latencies = [o - i for i, o in zip(logs["input"].edges, logs["output"].edges)]
    assert latencies == [wrapper.latency] * 2 + [wrapper.latency + wrapper.warmup_cycles]
    reseeded = logs["reseed"].edges[0]
    after = [t.payload for t in logs["random"].transfers if t.edge > reseeded]
    assert len(after) == logs["output"].edges[-1] - reseeded - wrapper.warmup_cycles - 1
    assert after == keystream_words(RESEED, 160, len(after))


# The PRNG's words

def test_after_each_reset_the_prng_restarts_from_the_seed():
    """The first key can transfer on edge W + 2 (the seed taken on edge 1, W edges of warm-up);
    the masked core's words are the keystream of the seed, and again from its start after a
    reset; the results are right."""
    wrapper = RandomizedCore(MaskedPRESENT(80), seed=SEED)
    key, blocks = 0x0123456789ABCDEF0123, [0x1122334455667788, 0x99AABBCCDDEEFF00]
    results = []

    async def bench(ctx, rst):
        for _ in range(2):
            await stream_put(ctx, wrapper.key, key)
            for block in blocks:
                results.append(await encrypt(ctx, wrapper, block))
            await pulse_reset(ctx, rst)

    logs = simulate(wrapper, bench)
    assert results == [encrypt_block(key, block, 80) for block in blocks] * 2
    warmup = wrapper.warmup_cycles
    assert warmup == 8 and logs["key"].edges[0] == warmup + 2
    words = logs["random"].payloads
    # One word with the key and one with each block, from the seed's first word after each reset.
    assert words == keystream_words(SEED, 160, 3) * 2
    # The reset on the edge after the second result, then as after the first reset.
    assert logs["key"].edges[1] - logs["output"].edges[1] == 1 + warmup + 2


def test_a_reseed_restarts_the_words_from_the_new_seed_and_changes_no_result():
    wrapper = RandomizedCore(MaskedPRESENT(80), seed=SEED)
    key, blocks = 0xFFFF0000FFFF0000FFFF, [0, 1, 2]
    results = []

    async def bench(ctx, rst):
        await stream_put(ctx, wrapper.key, key)
        results.append(await encrypt(ctx, wrapper, blocks[0]))
        await stream_put(ctx, wrapper.reseed, RESEED)
        for block in blocks[1:]:
            results.append(await encrypt(ctx, wrapper, block))

    logs = simulate(wrapper, bench)
    assert results == [encrypt_block(key, block, 80) for block in blocks]
    assert logs["random"].payloads == keystream_words(SEED, 160, 2) + \
        keystream_words(RESEED, 160, 2)
    # The second block waited out the warm-up after the reseed.
    assert logs["input"].edges[1] == logs["reseed"].edges[0] + wrapper.warmup_cycles + 1


# The contract, with the PRNG's warm-up after reset (key.ready low for W + 1 edges)

CONTRACT = {
    "figures": (check_figures, {}),
    "reset": (check_reset, {"settle": "W + 1"}),
    "first_key": (check_no_block_before_first_key, {"settle": "W + 1"}),
    "stream_rules": (check_stream_rules, {}),
    "key_waits": (check_key_waits_for_idle, {}),
    "key_first": (check_waiting_key_goes_first, {}),
}
SLOW_CONTRACT = {"first_key", "stream_rules", "key_waits", "key_first"}


@pytest.mark.parametrize("config", [
    pytest.param("present-masked-80", id="present-masked-80"),
    pytest.param("aes-masked-128", id="aes-masked-128", marks=pytest.mark.slow)])
@pytest.mark.parametrize("check", [
    pytest.param(name, marks=pytest.mark.slow if name in SLOW_CONTRACT else ())
    for name in CONTRACT])
def test_the_wrapper_keeps_the_contract(config, check):
    masked = parse_config(config)
    function, options = CONTRACT[check]
    if options.get("settle"):
        options = {"settle": warmup_edges(masked) + 1}
    function(randomized_config(masked, seed=SEED), **options)


@pytest.mark.slow
def test_the_reset_checks_see_the_warmup():
    """One settle edge fewer, and the reset check fails on the warm-up: the wrapper's key.ready
    is low in the first W + 1 edges after reset, as its docstring says."""
    masked = parse_config("present-masked-80")
    with pytest.raises(AssertionError, match="key.ready low in an idle core"):
        check_reset(randomized_config(masked), ("mid_block",), settle=warmup_edges(masked))
