# amaranth: UnusedElaboratable=no
"""The peripheral with masked cores: each runs inside a RandomizedCore, INFO.RNG says so, the
RNG_SEED registers reseed every masked core's PRNG (the words the cores take are then the new
seed's keystream) and change no result; CLEAR restarts the PRNGs from the build-time seed; a
build without a masked core has no RNG_SEED registers. Driven as firmware would, on Wishbone and
AXI4-Lite."""

import random

import pytest
from amaranth.hdl import Fragment
from Crypto.Cipher import AES as PyAES

from cipher_cores.cores.aes.masked import MaskedAES
from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_B
from cipher_cores.cores.bus import CipherPeripheral
from cipher_cores.cores.bus.regmap import register
from cipher_cores.cores.bus.sim import simulate_firmware
from cipher_cores.cores.modes import Mode
from cipher_cores.cores.present import PRESENT
from cipher_cores.cores.present.masked import MaskedPRESENT
from cipher_cores.cores.present.vectors import PAPER_VECTORS
from cipher_cores.cores.prng import keystream_words
from cipher_cores.cores.randomized import DEFAULT_SEED, RandomizedCore
from cipher_cores.cores.sim import stream_monitor

from .support.peripheral import bit, field, present_model


#: A seed as firmware would write it from a true random source (here: fixed, for the test).
RESEED = 0x0F1E2D3C4B5A69788796 | 0xA5A5A5A55A5A5A5AC3C3 << 80
#: A build-time seed other than the default.
SEED = 0x13579BDF02468ACE1357 | 0x2468ACE013579BDF2468 << 80


def run(dut, program, max_edges=60_000) -> dict:
    """Simulate ``dut`` with ``program(fw)``; the words each masked core took from its PRNG, as
    :class:`~cipher_cores.cores.sim.StreamLog` s by KEYSEL index."""
    logs = {}
    streams = {index: core.core.random for index, core in enumerate(dut.cores)
               if isinstance(core, RandomizedCore)}
    simulate_firmware(dut, program, max_edges=max_edges,
                      background=[stream_monitor(streams, logs)])
    return logs


def words_after(log, edge: int) -> list:
    return [transfer.payload for transfer in log.transfers if transfer.edge > edge]


async def reseed(fw, seed: int):
    """Write ``seed`` into RNG_SEED0..4 (the last word reseeds); returns the edge after."""
    for index in range(register("RNG_SEED").count):
        await fw.write("RNG_SEED", seed >> (32 * index) & 0xffff_ffff, index)
    return fw.edge


def test_a_masked_present_gives_the_paper_vectors_in_ecb_and_cbc_as_the_model():
    """INFO.RNG set; ECB on the paper's vectors, CBC and CTR on random blocks against the mode
    model; the words the core took are the keystream of the default seed."""
    rng = random.Random(1)
    dut = CipherPeripheral(MaskedPRESENT(80))
    vectors = [v for v in PAPER_VECTORS if v.key_bits == 80]
    results = []

    async def program(fw):
        info = await fw.read("INFO")
        assert field("INFO", "RNG", info) == 1 and field("INFO", "DECRYPTS", info) == 0
        for vector in vectors:
            await fw.set_key(vector.key, 80)
            results.extend(await fw.message(Mode.ECB, [vector.plaintext]))
        key, iv = rng.getrandbits(80), rng.getrandbits(64)
        blocks = [rng.getrandbits(64) for _ in range(3)]
        await fw.set_key(key, 80)
        for mode in (Mode.CBC, Mode.CTR):
            got = await fw.message(mode, blocks, iv=iv)
            assert got == present_model(mode, False, key, 80, iv, blocks), mode
        assert await fw.read("ERROR") == 0

    logs = run(dut, program)
    assert results == [vector.ciphertext for vector in vectors]
    # A word with each key and each block: 4 keys and 4 blocks, a key and 6 blocks.
    assert logs[0].payloads == keystream_words(DEFAULT_SEED, 160, 4 + 4 + 1 + 6)


@pytest.mark.parametrize("key_sizes", [
    pytest.param((80,), id="one-core"),
    pytest.param((80, 128), id="two-cores", marks=pytest.mark.slow)])
def test_rng_seed_reseeds_every_masked_core_on_the_last_word_and_changes_no_result(key_sizes):
    """Words 0..3 alone change nothing; the write of RNG_SEED4 restarts the PRNG of each masked
    core behind KEYSEL (160- or 256-bit words) from the new seed; results stay right."""
    dut = CipherPeripheral([MaskedPRESENT(key_bits) for key_bits in key_sizes])
    keys = {0: (0x0123456789ABCDEF0123, 80), 1: (0xFEDCBA9876543210FEDCBA9876543210, 128)}
    keys = {keysel: keys[keysel] for keysel in range(len(key_sizes))}
    blocks = [0x0011223344556677, 0x8899AABBCCDDEEFF]
    edges = {}

    async def ecb_each(fw):
        for keysel, (key, key_bits) in keys.items():
            await fw.set_key(key, key_bits)
            got = await fw.message(Mode.ECB, blocks, keysel=keysel)
            assert got == present_model(Mode.ECB, False, key, key_bits, 0, blocks), keysel

    async def program(fw):
        await ecb_each(fw)
        for index in range(4):
            await fw.write("RNG_SEED", index + 1, index)
        edges["partial"] = fw.edge
        await ecb_each(fw)
        edges["reseed"] = await reseed(fw, RESEED)
        await ecb_each(fw)
        assert await fw.read("ERROR") == 0

    logs = run(dut, program)
    for keysel, width in list(((0, 160), (1, 256)))[:len(key_sizes)]:
        log = logs[keysel]
        # Each ECB message loads its key again (the key registers were written): 1 + 2 words.
        assert log.payloads[:6] == keystream_words(DEFAULT_SEED, width, 6), keysel
        assert words_after(log, edges["reseed"]) == keystream_words(RESEED, width, 3), keysel


def test_clear_restarts_the_prng_from_the_build_time_seed():
    """CLEAR resets the core, and with it the PRNG: the scrubber's zero key and two zero blocks,
    and the messages after, take the build-time seed's keystream from its start again."""
    dut = CipherPeripheral(MaskedPRESENT(80), rng_seed=SEED)
    key, blocks = 0x55AA55AA55AA55AA55AA, [1, 2]
    edges = {}

    async def program(fw):
        await reseed(fw, RESEED)
        await fw.set_key(key, 80)
        await fw.message(Mode.ECB, blocks)
        edges["clear"] = fw.edge
        await fw.write("CTRL", bit("CTRL", "CLEAR"))
        await fw.wait_idle()
        await fw.set_key(key, 80)
        got = await fw.message(Mode.ECB, blocks)
        assert got == present_model(Mode.ECB, False, key, 80, 0, blocks)

    logs = run(dut, program)
    assert logs[0].payloads[:3] == keystream_words(RESEED, 160, 3)
    assert words_after(logs[0], edges["clear"]) == keystream_words(SEED, 160, 3 + 3)


def test_without_a_masked_core_the_rng_registers_do_not_exist():
    """No RNG_SEED in the register file (no flip-flops): a write to it is a bad address; INFO.RNG
    is 0."""
    dut = CipherPeripheral(PRESENT(80))
    assert not dut.randomized_cores
    assert not any(name.startswith("rng_seed") for name in dut.registers.signature.members)

    async def program(fw):
        assert field("INFO", "RNG", await fw.read("INFO")) == 0
        await fw.write("RNG_SEED", 1, 4)
        assert await fw.read("ERROR") == bit("ERROR", "BAD_ADDRESS")

    run(dut, program)


@pytest.mark.slow
def test_on_axi4_lite_the_same_registers_reseed_the_masked_core():
    dut = CipherPeripheral(MaskedPRESENT(80), protocol="axi4-lite")
    vector = next(v for v in PAPER_VECTORS if v.key_bits == 80)
    edges = {}

    async def program(fw):
        assert field("INFO", "RNG", await fw.read("INFO")) == 1
        edges["reseed"] = await reseed(fw, RESEED)
        await fw.set_key(vector.key, 80)
        assert await fw.message(Mode.ECB, [vector.plaintext]) == [vector.ciphertext]
        assert fw.responses == [0] * len(fw.responses)

    logs = run(dut, program)
    assert words_after(logs[0], edges["reseed"]) == keystream_words(RESEED, 160, 2)


def test_rng_seed_is_checked():
    with pytest.raises(ValueError, match=r"^rng_seed must be an integer in 0\.\.2\*\*160-1, "
                                         r"not -1$"):
        CipherPeripheral(MaskedPRESENT(80), rng_seed=-1)
    with pytest.raises(TypeError, match=r"^rng_seed must be an integer in 0\.\.2\*\*160-1, "
                                        r"not 'x'$"):
        CipherPeripheral(PRESENT(80), rng_seed="x")
    peripheral = CipherPeripheral([PRESENT(80), MaskedPRESENT(80)], rng_seed=SEED)
    Fragment.get(peripheral, None)      # elaborated: its parts are not reported unused
    assert peripheral.cores[0].random_bits == 0 and not isinstance(peripheral.cores[0],
                                                                   RandomizedCore)
    assert [core.seed for core in peripheral.randomized_cores] == [SEED]
    assert peripheral.randomized_cores[0] is peripheral.cores[1]


@pytest.mark.slow
def test_a_masked_aes128_gives_fips197_in_ecb_and_pycryptodome_in_cbc_after_a_reseed():
    rng = random.Random(3)
    dut = CipherPeripheral(MaskedAES(128))
    vector = FIPS197_APPENDIX_B
    key, iv = rng.randbytes(16), rng.randbytes(16)
    plaintext = rng.randbytes(48)
    blocks = [int.from_bytes(plaintext[i:i + 16], "big") for i in range(0, 48, 16)]
    edges = {}

    async def program(fw):
        await fw.set_key(vector.key, 128)
        assert await fw.message(Mode.ECB, [vector.plaintext]) == [vector.ciphertext]
        edges["reseed"] = await reseed(fw, RESEED)
        await fw.set_key(int.from_bytes(key, "big"), 128)
        got = await fw.message(Mode.CBC, blocks, iv=int.from_bytes(iv, "big"))
        want = PyAES.new(key, PyAES.MODE_CBC, iv=iv).encrypt(plaintext)
        assert b"".join(block.to_bytes(16, "big") for block in got) == want

    logs = run(dut, program)
    after = words_after(logs[0], edges["reseed"])
    # A word with the key, and 1 + 6 x 10 with each of the three blocks.
    assert after == keystream_words(RESEED, 160, 1 + 3 * 61)


@pytest.mark.slow
def test_a_masked_aes128_runs_gcm_in_the_peripheral():
    rng = random.Random(4)
    dut = CipherPeripheral(MaskedAES(128), gcm=True)
    key, iv, aad, text = rng.randbytes(16), rng.randbytes(12), rng.randbytes(20), rng.randbytes(40)
    cipher = PyAES.new(key, PyAES.MODE_GCM, nonce=iv)
    cipher.update(aad)
    ciphertext, tag = cipher.encrypt_and_digest(text)

    async def program(fw):
        await fw.set_key(int.from_bytes(key, "big"), 128)
        result, got_tag, _ = await fw.gcm_message(iv=iv, aad=aad, text=text)
        assert result[:len(text)] == ciphertext and got_tag == tag

    run(dut, program, max_edges=100_000)
