# amaranth: UnusedElaboratable=no
"""Verified plaintext (``CipherPeripheral(..., gcm=True, verified_plaintext=True)``): a GCM
decryption's plaintext cannot be read, from DOUT or by the DMA, before its tag is checked; it is
zeroized if the tag does not match; a decryption longer than the output FIFO is refused."""

import random

import pytest

from cipher_cores.cores.aes import AES
from cipher_cores.cores.bus import CipherPeripheral
from cipher_cores.cores.bus.peripheral import GCM_MODE
from cipher_cores.cores.bus.sim import simulate_firmware
from cipher_cores.cores.bus.sim_memory import WishboneMemory

from .support.peripheral import bit, field, padded, random_message, set_key, start_decryption


FIFO_WORDS = 16          # four blocks of plaintext can be held


def verified_peripheral(**kwargs):
    return CipherPeripheral(AES(128), gcm=True, fifo_words=FIFO_WORDS, verified_plaintext=True,
                            **kwargs)


def run(dut, bench, memory=None):
    async def program(fw):
        await bench(fw, fw.ctx)
    simulate_firmware(dut, program, memory=memory, max_edges=60_000)


def blocks_of(data: bytes) -> list:
    data = padded(data)
    return [int.from_bytes(data[i:i + 16], "big") for i in range(0, len(data), 16)]


async def push_message(fw, aad, ciphertext):
    for block in blocks_of(aad) + blocks_of(ciphertext):
        while not field("STATUS", "IN_SPACE", await fw.read("STATUS")):
            pass
        await fw.put_block(block)


@pytest.mark.parametrize("authentic", [True, False])
def test_no_plaintext_word_leaves_before_the_tag_is_checked(authentic):
    """While the tag is unchecked: OUT_READY and OUT_WORDS read 0 and a DOUT read gives 0 and
    flags UNDERFLOW, though the plaintext is in the FIFO. Then an authentic message's plaintext
    reads out whole; a forged one's is gone (AUTH_FAIL, the FIFO's storage all zero)."""
    key, iv, aad, text, ciphertext, tag = random_message(50 + authentic, 20, 60)
    if not authentic:
        tag = bytes([tag[0] ^ 1]) + tag[1:]
    dut = verified_peripheral()

    async def bench(fw, ctx):
        assert field("INFO", "VERIFIED", await fw.read("INFO"))
        await set_key(fw, key)
        await start_decryption(fw, iv, aad, text, tag)
        await push_message(fw, aad, ciphertext)
        while not field("STATUS", "TAG_READY", status := await fw.read("STATUS")):
            assert field("STATUS", "OUT_READY", status) == 0
            assert field("STATUS", "OUT_WORDS", status) == 0
            assert await fw.read("DOUT") == 0
            assert await fw.read("ERROR") == bit("ERROR", "UNDERFLOW")
            await fw.write("ERROR", bit("ERROR", "UNDERFLOW"))
        assert field("STATUS", "AUTHENTIC", status) == authentic
        if authentic:
            got = [await fw.get_block() for _ in blocks_of(text)]
            assert b"".join(block.to_bytes(16, "big") for block in got) == padded(text)
            assert await fw.read("ERROR") == 0
        else:
            await fw.wait_idle()
            while field("STATUS", "OUT_WORDS", await fw.read("STATUS")):
                pass
            assert await fw.read("ERROR") == bit("ERROR", "AUTH_FAIL")
            assert field("STATUS", "OUT_WORDS", await fw.read("STATUS")) == 0
            assert await fw.read("DOUT") == 0
            storage = fw.memories["dout/storage"]
            for _ in range(FIFO_WORDS + 4):          # the zero fill takes a word an edge
                await ctx.tick()
            assert [ctx.get(storage[i]) for i in range(storage.depth)] == [0] * storage.depth

    run(dut, bench)


def test_encryption_results_are_not_held():
    """Only decryptions are held: an encryption's ciphertext reads out as it is made."""
    key, iv, aad, text, ciphertext, tag = random_message(52, 0, 64)
    dut = verified_peripheral()

    async def bench(fw, ctx):
        await set_key(fw, key)
        got, got_tag, status = await fw.gcm_message(iv=iv, aad=aad, text=text)
        assert (got, got_tag) == (padded(ciphertext), tag)

    run(dut, bench)


def test_a_decryption_longer_than_the_fifo_is_refused():
    key, iv, aad, text, ciphertext, tag = random_message(53, 0, 16 * (FIFO_WORDS // 4) + 1)
    dut = verified_peripheral()

    async def bench(fw, ctx):
        await set_key(fw, key)
        await start_decryption(fw, iv, aad, text, tag)
        assert await fw.read("ERROR") == bit("ERROR", "UNSUPPORTED")
        assert field("STATUS", "BUSY", await fw.read("STATUS")) == 0
        # Exactly the FIFO's four blocks are accepted.
        await fw.write("ERROR", 0xffff)
        await fw.write("TEXT_BYTES", 16 * (FIFO_WORDS // 4))
        await fw.write("CTRL", GCM_MODE | bit("CTRL", "DECRYPT") | bit("CTRL", "START"))
        assert await fw.read("ERROR") == 0
        assert field("STATUS", "BUSY", await fw.read("STATUS"))

    run(dut, bench)


@pytest.mark.parametrize("authentic", [True, False])
def test_through_the_dma_a_forged_message_writes_nothing(authentic):
    """GCM through the DMA (AAD and ciphertext read from memory): an authentic message's
    plaintext is written to the destination once checked; a forged one's never is, and the
    peripheral is idle and usable again (no CLEAR needed)."""
    key, iv, aad, text, ciphertext, tag = random_message(54 + authentic, 17, 48)
    if not authentic:
        tag = tag[:-1] + bytes([tag[-1] ^ 0x80])
    dut = verified_peripheral(dma=True)
    memory = WishboneMemory(dut.dma, wait_states=2, rng=random.Random(55))
    source, destination = 0x1000, 0x2000
    words = [(block >> (32 * (3 - j))) & 0xffff_ffff
             for block in blocks_of(aad) + blocks_of(ciphertext) for j in range(4)]
    memory.load(source, words)

    async def bench(fw, ctx):
        await set_key(fw, key)
        await fw.write("DMA_SOURCE", source)
        await fw.write("DMA_DESTINATION", destination)
        await fw.set_iv(int.from_bytes(iv, "big") << 32, 4)
        await fw.write("AAD_BYTES", len(aad))
        await fw.write("TEXT_BYTES", len(text))
        for index in range(4):
            await fw.write("TAG_EXPECTED", int.from_bytes(tag, "big") >> (32 * index) &
                           0xffff_ffff, index)
        await fw.write("CTRL", GCM_MODE | bit("CTRL", "DECRYPT") | bit("CTRL", "DMA") |
                       bit("CTRL", "START"))
        while not field("STATUS", "DONE", status := await fw.read("STATUS")):
            pass
        assert field("STATUS", "TAG_READY", status) and \
            field("STATUS", "AUTHENTIC", status) == authentic
        written = memory.dump(destination, 12)
        if authentic:
            got = b"".join(word.to_bytes(4, "big") for word in written)
            assert got == padded(text)
        else:
            assert memory.writes == [] and written == [0] * 12
            assert await fw.read("ERROR") == bit("ERROR", "AUTH_FAIL")
        assert field("STATUS", "BUSY", status) == 0

    run(dut, bench, memory)


def test_constructor_checks():
    with pytest.raises(ValueError, match=r"^verified_plaintext=True needs gcm=True$"):
        CipherPeripheral(AES(128), fifo_words=8, verified_plaintext=True)
    with pytest.raises(ValueError, match=r"^verified_plaintext=True needs an output FIFO"):
        CipherPeripheral(AES(128), gcm=True, verified_plaintext=True)
    with pytest.raises(TypeError, match=r"^verified_plaintext must be True or False"):
        CipherPeripheral(AES(128), gcm=True, fifo_words=8, verified_plaintext=1)
    with pytest.raises(TypeError, match=r"^dma must be True or False, not 'yes'$"):
        CipherPeripheral(AES(128), dma="yes")
