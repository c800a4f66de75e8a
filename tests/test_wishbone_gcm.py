# amaranth: UnusedElaboratable=no
"""AES-GCM through the Wishbone peripheral (``CipherPeripheral(..., gcm=True)``), driven as
firmware would drive it and compared with pycryptodome: partial and empty AAD and text, messages
back to back with key changes, wrong and short tags, GCM and CBC sharing the one core, the
tag-ready interrupt, CLEAR, refused writes and the constructor's checks."""

import ctypes
import queue
import random
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from amaranth.hdl import Fragment
from Crypto.Cipher import AES as PyAES

from cipher_cores.cores.aes import AES
from cipher_cores.cores.bus import CipherPeripheral
from cipher_cores.cores.bus.peripheral import GCM_MODE, SharedCore
from cipher_cores.cores.bus import regmap
from cipher_cores.cores.bus.sim import simulate_firmware
from cipher_cores.cores.modes import Mode
from cipher_cores.cores.present import PRESENT
from cipher_cores.cores.sim import stream_monitor

from .support.peripheral import (as_int, bit, field, gcm_reference, padded,
                                 random_message, set_key, start_decryption)


DOCS = Path(__file__).parent.parent / "docs"


def run(dut, bench, *, check_contract=True):
    """Simulate ``dut`` with the firmware ``bench(fw, ctx)``; returns the transfers on the key
    streams of the modes (``"modes key"``) and of GCM (``"gcm key"``), by name. Every stream
    between the peripheral, the modes and GCM keeps the stream contract (unless
    ``check_contract`` is false: CLEAR drops what a stream holds)."""
    streams = {"modes key": dut.engine.key, "modes input": dut.engine.input,
               "gcm key": dut.gcm.key, "gcm start": dut.gcm.start,
               "gcm input": dut.gcm.input}
    logs = {}

    async def program(fw):
        await bench(fw, fw.ctx)
    simulate_firmware(dut, program, background=[stream_monitor(streams, logs)])
    if check_contract:
        for name, log in logs.items():
            assert log.violations == [], name
    return {name: [transfer.payload for transfer in logs[name].transfers]
            for name in ("modes key", "gcm key")}


def aes_cores(fragment) -> int:
    """AES cores in an elaborated design."""
    return sum(isinstance(origin, AES) for origin in fragment.origins or ()) + \
        sum(aes_cores(sub) for sub, *_ in fragment.subfragments)


async def encrypt_and_check(fw, key, iv, aad, text, **kwargs):
    """Encrypt through the bus, compare with pycryptodome; returns (ciphertext, tag)."""
    got, tag, status = await fw.gcm_message(iv=iv, aad=aad, text=text, **kwargs)
    want, want_tag = gcm_reference(key, iv, aad, text)
    assert (got, tag) == (padded(want), want_tag), (len(aad), len(text))
    assert field("STATUS", "TAG_READY", status) and not field("STATUS", "AUTHENTIC", status)
    return want, tag


async def decrypt_and_check(fw, iv, aad, ciphertext, tag, text, *, authentic=True):
    got, tag_read, status = await fw.gcm_message(iv=iv, aad=aad, text=ciphertext, decrypt=True,
                                                 expected_tag=tag)
    assert got == padded(text)
    assert tag_read == bytes(16)                 # a decryption never shows the computed tag
    assert field("STATUS", "TAG_READY", status)
    assert field("STATUS", "AUTHENTIC", status) == authentic
    assert field("STATUS", "BUSY", status) == 0


# Messages ------------------------------------------------------------------------------------

def test_encrypt_and_decrypt_with_partial_last_blocks():
    """20 bytes of AAD and 37 of text (both end in a partial block): ciphertext and tag as
    pycryptodome's, decrypted back and authentic; INFO lists GCM."""
    rng = random.Random(11)
    key, iv = rng.randbytes(16), rng.randbytes(12)
    aad, text = rng.randbytes(20), rng.randbytes(37)
    dut = CipherPeripheral(AES(128), gcm=True)

    async def bench(fw, ctx):
        assert field("INFO", "MODES", await fw.read("INFO")) == 0b111111
        await set_key(fw, key)
        ciphertext, tag = await encrypt_and_check(fw, key, iv, aad, text)
        await decrypt_and_check(fw, iv, aad, ciphertext, tag, text)
        assert await fw.read("ERROR") == 0

    run(dut, bench)


def test_empty_aad_empty_text_and_both():
    """No AAD; no text (a tag over the AAD alone, nothing in DOUT); neither; both directions."""
    rng = random.Random(12)
    key, iv = rng.randbytes(16), rng.randbytes(12)
    cases = [(b"", rng.randbytes(33)), (rng.randbytes(17), b""), (b"", b""),
             (rng.randbytes(32), rng.randbytes(16))]
    dut = CipherPeripheral(AES(128), gcm=True)

    async def bench(fw, ctx):
        await set_key(fw, key)
        for aad, text in cases:
            ciphertext, tag = await encrypt_and_check(fw, key, iv, aad, text)
            await decrypt_and_check(fw, iv, aad, ciphertext, tag, text)
            assert field("STATUS", "OUT_WORDS", await fw.read("STATUS")) == 0
        assert await fw.read("ERROR") == 0

    run(dut, bench)


def test_back_to_back_messages_with_key_change():
    """Three messages under key A (the second with its first blocks written before START), then
    key B: each as pycryptodome; GCM loads each key once (its first message), never the modes."""
    rng = random.Random(13)
    key_a, key_b = rng.randbytes(16), rng.randbytes(16)
    messages = [(rng.randbytes(12), rng.randbytes(rng.randrange(40)),
                 rng.randbytes(rng.randrange(1, 70))) for _ in range(4)]
    dut = CipherPeripheral(AES(128), gcm=True)

    async def bench(fw, ctx):
        key = key_a
        await set_key(fw, key)
        for index, (iv, aad, text) in enumerate(messages):
            if index == 3:
                key = key_b
                await set_key(fw, key)
            await encrypt_and_check(fw, key, iv, aad, text, prefill=index == 1)

    loads = run(dut, bench)
    assert loads == {"modes key": [], "gcm key": [as_int(key_a), as_int(key_b)]}


def test_wrong_tag_fails_and_short_tags():
    """A wrong tag: AUTHENTIC low, ERROR.AUTH_FAIL set (the plaintext still comes out). An 8-byte
    tag (CTRL.TAG_BYTES = 8) passes when its 8 bytes match whatever follows, fails when one of
    them differs; TAG_BYTES of 3 is refused."""
    key, iv, aad, text, ciphertext, tag = random_message(14, 5, 50)
    dut = CipherPeripheral(AES(128), gcm=True)

    async def bench(fw, ctx):
        await set_key(fw, key)
        forged = bytes([tag[0]]) + bytes([tag[1] ^ 0x80]) + tag[2:]
        await decrypt_and_check(fw, iv, aad, ciphertext, forged, text, authentic=False)
        assert await fw.read("ERROR") == bit("ERROR", "AUTH_FAIL")
        await fw.write("ERROR", bit("ERROR", "AUTH_FAIL"))
        await decrypt_and_check(fw, iv, aad, ciphertext, tag, text)
        await decrypt_and_check(fw, iv, aad, ciphertext, tag[:8], text)
        await decrypt_and_check(fw, iv, aad, ciphertext, tag[:7] + bytes([tag[7] ^ 1]), text,
                                authentic=False)
        assert field("CTRL", "TAG_BYTES", await fw.read("CTRL")) == 8
        await fw.write("ERROR", 0x1ff)
        await fw.write("CTRL", GCM_MODE | bit("CTRL", "DECRYPT") | (3 << 16) |
                       bit("CTRL", "START"))
        assert await fw.read("ERROR") == bit("ERROR", "UNSUPPORTED")
        assert not field("STATUS", "BUSY", await fw.read("STATUS"))

    run(dut, bench)


def test_gcm_then_cbc_then_gcm_with_key_changes():
    """The one core serves GCM and CBC in turn: GCM, CBC, GCM under one key, then a new key used
    first by CBC and then by GCM (whose H must follow the new key), then CBC. A key goes into
    the core through GCM when GCM needs it, through the modes only when they use a key GCM has
    not loaded."""
    rng = random.Random(15)
    keys = [rng.randbytes(16), rng.randbytes(16)]
    iv, cbc_iv = rng.randbytes(12), rng.randbytes(16)
    aad, text = rng.randbytes(9), rng.randbytes(40)
    plain = rng.randbytes(48)
    dut = CipherPeripheral(AES(128), gcm=True)

    async def cbc(fw, key):
        blocks = [int.from_bytes(plain[i:i + 16], "big") for i in range(0, 48, 16)]
        got = await fw.message(Mode.CBC, blocks, iv=int.from_bytes(cbc_iv, "big"))
        want = PyAES.new(key, PyAES.MODE_CBC, iv=cbc_iv).encrypt(plain)
        assert b"".join(block.to_bytes(16, "big") for block in got) == want

    async def bench(fw, ctx):
        await set_key(fw, keys[0])
        await encrypt_and_check(fw, keys[0], iv, aad, text)
        await cbc(fw, keys[0])
        assert not field("STATUS", "TAG_READY", await fw.read("STATUS"))   # START cleared it
        await encrypt_and_check(fw, keys[0], iv, aad, text)
        await set_key(fw, keys[1])
        await cbc(fw, keys[1])
        await encrypt_and_check(fw, keys[1], iv, aad, text)
        await cbc(fw, keys[1])
        assert await fw.read("ERROR") == 0

    loads = run(dut, bench)
    assert loads == {"modes key": [as_int(keys[1])], "gcm key": list(map(as_int, keys))}


def test_two_key_sizes_behind_keysel():
    """AES-128 and AES-256 behind KEYSEL, both shared between the modes and GCM."""
    rng = random.Random(16)
    keys = [rng.randbytes(16), rng.randbytes(32)]
    iv, aad, text = rng.randbytes(12), rng.randbytes(16), rng.randbytes(20)
    dut = CipherPeripheral([AES(128), AES(256)], gcm=True)

    async def bench(fw, ctx):
        for keysel in (0, 1, 0):
            await set_key(fw, keys[keysel])
            await encrypt_and_check(fw, keys[keysel], iv, aad, text, keysel=keysel)
        assert await fw.read("ERROR") == 0

    # A core takes the low bits of the key registers (an AES-256 key's high words remain).
    loads = run(dut, bench)["gcm key"]
    assert [load & ((1 << 128) - 1) for load in loads] == \
        [as_int(keys[0]), as_int(keys[1]) & ((1 << 128) - 1), as_int(keys[0])]
    assert loads[1] == as_int(keys[1])


# Interrupt, refused writes, CLEAR ------------------------------------------------------------

def test_tag_ready_interrupt():
    """IRQ_ENABLE.TAG_READY: the line rises when the tag is ready, stays while it is, and falls
    at the next START."""
    key, iv, aad, text, _, want_tag = random_message(17, 3, 0)
    dut = CipherPeripheral(AES(128), gcm=True)

    async def bench(fw, ctx):
        await set_key(fw, key)
        await fw.write("IRQ_ENABLE", bit("IRQ_ENABLE", "TAG_READY"))
        await fw.set_iv(int.from_bytes(iv, "big") << 32, 4)
        await fw.write("AAD_BYTES", 3)
        await fw.write("TEXT_BYTES", 0)
        await fw.put_block(int.from_bytes(aad.ljust(16, b"\0"), "big"))
        await fw.write("CTRL", GCM_MODE | bit("CTRL", "START"))
        edges = 0
        while not ctx.get(dut.irq):
            assert edges < 1_000
            await ctx.tick()
            edges += 1
        assert await fw.read("IRQ_PENDING") == bit("IRQ_PENDING", "TAG_READY")
        tag = 0
        for index in range(4):
            tag |= await fw.read("TAG", index) << (32 * index)
        assert tag.to_bytes(16, "big") == want_tag
        assert ctx.get(dut.irq)
        await fw.put_block(int.from_bytes(aad.ljust(16, b"\0"), "big"))
        await fw.write("CTRL", GCM_MODE | bit("CTRL", "START"))
        await fw.read("STATUS")
        assert not ctx.get(dut.irq)
        await fw.wait_idle()
        assert ctx.get(dut.irq)

    run(dut, bench)


def test_refused_writes_while_busy_and_read_only_tag():
    """AAD_BYTES, TEXT_BYTES and TAG_EXPECTED writes during a message are refused and flagged
    and change nothing; a TAG write is flagged READ_ONLY."""
    key, iv, aad, text, ciphertext, tag = random_message(18, 16, 32)
    dut = CipherPeripheral(AES(128), gcm=True)

    async def bench(fw, ctx):
        await set_key(fw, key)
        await fw.write("TAG", 1, 0)
        assert await fw.read("ERROR") == bit("ERROR", "READ_ONLY")
        await fw.write("ERROR", 0x1ff)
        await start_decryption(fw, iv, aad, text, tag)
        assert field("STATUS", "BUSY", await fw.read("STATUS"))
        for name, index in (("AAD_BYTES", 0), ("TEXT_BYTES", 0), ("TAG_EXPECTED", 2)):
            await fw.write(name, 0, index)
            assert await fw.read("ERROR") == bit("ERROR", "BUSY_WRITE"), name
            await fw.write("ERROR", 0x1ff)
        assert (await fw.read("AAD_BYTES"), await fw.read("TEXT_BYTES")) == (16, 32)
        blocks = [int.from_bytes((aad + ciphertext)[i:i + 16], "big") for i in range(0, 48, 16)]
        got = await fw.stream(blocks, expect=2)
        assert b"".join(block.to_bytes(16, "big") for block in got) == text
        await fw.wait_idle()
        status = await fw.read("STATUS")
        assert field("STATUS", "TAG_READY", status) and field("STATUS", "AUTHENTIC", status)
        assert await fw.read("ERROR") == 0

    run(dut, bench)


def test_clear_mid_message_zeroizes_gcm_state():
    """CLEAR in a GCM decryption: key, IV, tag registers and buffers are zero, GCM took a zero
    key (so its H and tables are no longer the key's), a new START needs a key, and it works
    again."""
    key, iv, aad, text, ciphertext, tag = random_message(19, 7, 64)
    dut = CipherPeripheral(AES(128), gcm=True, fifo_words=8)

    async def bench(fw, ctx):
        await set_key(fw, key)
        await start_decryption(fw, iv, aad, text, tag)
        await fw.put_block(int.from_bytes(aad.ljust(16, b"\0"), "big"))
        await fw.put_block(int.from_bytes(ciphertext[:16], "big"))
        while not field("STATUS", "OUT_READY", await fw.read("STATUS")):
            pass
        assert ctx.get(dut.secret_state()["tag_expected"]) != 0
        await fw.write("CTRL", bit("CTRL", "CLEAR"))
        await fw.wait_idle()
        for name, signal in dut.secret_state().items():
            assert ctx.get(signal) == 0, name
        assert field("STATUS", "KEY_SET", await fw.read("STATUS")) == 0
        for name in ("AAD_BYTES", "TEXT_BYTES", "CTRL", "ERROR"):
            assert await fw.read(name) == 0, name
        await fw.write("CTRL", GCM_MODE | bit("CTRL", "START"))
        assert await fw.read("ERROR") == bit("ERROR", "NO_KEY")
        await fw.write("ERROR", 0x1ff)
        await set_key(fw, key)
        await decrypt_and_check(fw, iv, aad, ciphertext, tag, text)

    loads = run(dut, bench, check_contract=False)
    # The modes and GCM each took the all-zero key during CLEAR.
    assert loads == {"modes key": [0], "gcm key": [as_int(key), 0, as_int(key)]}


# Construction --------------------------------------------------------------------------------

def test_constructor_checks_and_default():
    with pytest.raises(TypeError, match=r"^gcm must be True or False, not 'yes'$"):
        CipherPeripheral(AES(128), gcm="yes")
    with pytest.raises(ValueError, match=r"^gcm=True needs cores with 128-bit blocks \(AES\), "
                                         r"not 64-bit ones$"):
        CipherPeripheral(PRESENT(80), gcm=True)
    with pytest.raises(TypeError, match=r"^users must be an integer, not 2\.0$"):
        SharedCore(AES(128), users=2.0)
    with pytest.raises(ValueError, match=r"^users must be at least 2, not 1$"):
        SharedCore(AES(128), users=1)
    default = CipherPeripheral(AES(128))
    built = CipherPeripheral(AES(128), gcm=True)
    assert default.gcm is None and built.gcm is not None
    assert "tag" not in default.secret_state() and "tag" in built.secret_state()
    # One AES core in the GCM build: the modes and GCM reach it through ports of one share,
    # which answer for it.
    assert built.engine.latency == built.gcm.core.latency == built.cores[0].latency
    assert [aes_cores(Fragment.get(p, None)) for p in (default, built)] == [1, 1]


def test_report_target_names_the_gcm_variant():
    """``wishbone-gcm:CORE`` builds the peripheral with GCM (``wishbone:CORE`` without); a core
    that is not AES gets a one-line error."""
    from cipher_cores.scripts.flow.targets import PeripheralConfig, parse_target
    config = parse_target("wishbone-gcm:aes-128")
    assert isinstance(config, PeripheralConfig) and config.gcm
    assert config.modes[-1] == "GCM" and config.slug == "wishbone_gcm_aes128"
    assert config.label == "Wishbone AES-128 (ECB/CBC/CFB/OFB/CTR/GCM)"
    assert config.text == "wishbone-gcm:aes-128"
    assert not parse_target("wishbone:aes-128").gcm
    peripherals = [config.build(), parse_target("wishbone:aes-128").build()]
    assert [p.gcm is not None for p in peripherals] == [True, False]
    for peripheral in peripherals:
        Fragment.get(peripheral, None)
    with pytest.raises(ValueError, match=r"^gcm=True needs cores with 128-bit blocks \(AES\), "
                                         r"not 64-bit ones$"):
        parse_target("wishbone-gcm:present-80")


# The C firmware example against the simulated peripheral -----------------------------------

_HOST_SHIM = """
#include <stdint.h>
static void (*host_write)(uint32_t, uint32_t);
static uint32_t (*host_read)(uint32_t);
void host_registers(void (*write)(uint32_t, uint32_t), uint32_t (*read)(uint32_t))
{
    host_write = write;
    host_read = read;
}
static inline void reg_write(uint32_t offset, uint32_t value) { host_write(offset, value); }
static inline uint32_t reg_read(uint32_t offset) { return host_read(offset); }
#include "firmware_example.c"
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_firmware_example_runs_cbc_and_gcm_on_the_peripheral(tmp_path):
    """docs/firmware_example.c, built for the host with its register accesses turned into bus
    accesses of the simulation: cipher_cbc_encrypt (which writes the key), then cipher_gcm
    encrypting (a partial AAD and text) and decrypting with the right, a wrong and a short tag,
    each as pycryptodome."""
    (tmp_path / "cipher_wishbone.h").write_text(regmap.c_header())
    (tmp_path / "host.c").write_text(_HOST_SHIM)
    library = tmp_path / "firmware.so"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    "-DCIPHER_HOST_REGISTERS", "-I", str(tmp_path), "-I", str(DOCS),
                    str(tmp_path / "host.c"), "-o", str(library)], check=True)
    firmware = ctypes.CDLL(str(library))

    rng = random.Random(20)
    key, cbc_iv, iv = rng.randbytes(16), rng.randbytes(16), rng.randbytes(12)
    plain, aad, text = rng.randbytes(32), rng.randbytes(19), rng.randbytes(45)
    ciphertext, tag = gcm_reference(key, iv, aad, text)
    requests, answers = queue.Queue(), queue.Queue()
    outcome = {}

    write_type = ctypes.CFUNCTYPE(None, ctypes.c_uint32, ctypes.c_uint32)
    read_type = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint32)
    on_write = write_type(lambda offset, value: (requests.put((offset, value)), answers.get()))
    on_read = read_type(lambda offset: (requests.put((offset, None)), answers.get())[1])
    firmware.host_registers(on_write, on_read)

    def buffer(data):
        return ctypes.create_string_buffer(bytes(data), max(1, len(data)))

    def gcm(data, decrypt, tag_in=b""):
        out, tag_buffer = buffer(bytes(len(data))), buffer(tag_in.ljust(16, b"\0"))
        status = firmware.cipher_gcm(buffer(iv), buffer(aad), len(aad), buffer(data), out,
                                     len(data), decrypt, tag_buffer, len(tag_in) or 16)
        return status, out.raw[:len(data)], tag_buffer.raw

    def run_firmware():
        try:
            out = buffer(bytes(32))
            outcome["cbc"] = (firmware.cipher_cbc_encrypt(buffer(key), buffer(cbc_iv),
                                                          buffer(plain), out, 2), out.raw[:32])
            outcome["encrypt"] = gcm(text, 0)
            outcome["decrypt"] = gcm(ciphertext, 1, tag)
            outcome["forged"] = gcm(ciphertext, 1, bytes([tag[0] ^ 1]) + tag[1:])
            outcome["short"] = gcm(ciphertext, 1, tag[:12])
        finally:
            requests.put(None)

    async def program(fw):
        while (request := requests.get(timeout=60)) is not None:
            offset, value = request
            answers.put(await fw.access(offset, value))

    dut = CipherPeripheral(AES(128), gcm=True)
    thread = threading.Thread(target=run_firmware)
    thread.start()
    try:
        simulate_firmware(dut, program)
    finally:
        requests.put(None)
        answers.put(0)
        thread.join(timeout=60)
    assert outcome["cbc"] == (0, PyAES.new(key, PyAES.MODE_CBC, iv=cbc_iv).encrypt(plain))
    assert outcome["encrypt"] == (0, ciphertext, tag)
    assert outcome["decrypt"][:2] == (0, text)
    assert outcome["forged"][:2] == (-1, text)            # the plaintext came out regardless
    assert outcome["short"][:2] == (0, text)
