# amaranth: UnusedElaboratable=no
"""The Wishbone cipher peripheral, driven as firmware would drive it: a simulated Wishbone master
writes keys, IVs and messages and reads results, compared with pycryptodome and the mode model;
interrupts, key changes, any write order, bad accesses, CLEAR and reset."""

import random

import pytest
from amaranth.hdl import Fragment
from Crypto.Cipher import AES as PyAES
from Crypto.Util import Counter

from cipher_cores.cores.aes import AES
from cipher_cores.cores.bus import CipherPeripheral, WishboneSignature
from cipher_cores.cores.bus.regmap import register
from cipher_cores.cores.bus.sim import simulate_firmware, stream_message
from cipher_cores.cores.modes import Mode
from cipher_cores.cores.present import PRESENT
from cipher_cores.cores.present.reference import encrypt_block

from .support.peripheral import bit, field, present_model


def run(dut, bench, *, max_edges=40_000):
    """Simulate ``dut`` with the firmware ``bench(fw, ctx, rst, memories)``; ``rst`` is the
    domain reset, ``memories`` the design's memories by name."""
    async def program(fw):
        await bench(fw, fw.ctx, fw.rst, fw.memories)
    simulate_firmware(dut, program, max_edges=max_edges)


def aes_blocks(data):
    return [int.from_bytes(data[i:i + 16], "big") for i in range(0, len(data), 16)]


def aes_bytes(blocks):
    return b"".join(block.to_bytes(16, "big") for block in blocks)


# Messages ------------------------------------------------------------------------------------

def test_aes128_cbc_then_ctr_like_firmware():
    """Key and IV, a 5-block CBC message streamed in and out (pycryptodome), decrypted back;
    then CTR with a counter that carries across bytes."""
    rng = random.Random(1)
    key, iv = rng.randbytes(16), rng.randbytes(16)
    plaintext = rng.randbytes(80)
    dut = CipherPeripheral(AES(128))

    async def bench(fw, ctx, rst, memories):
        info = await fw.read("INFO")
        assert field("INFO", "BLOCK_WORDS", info) == 4
        assert field("INFO", "MODES", info) == 0b11111
        assert await fw.read("KEYSIZES") == 16
        await fw.set_key(int.from_bytes(key, "big"), 128)
        iv_int = int.from_bytes(iv, "big")
        result = await fw.message(Mode.CBC, aes_blocks(plaintext), iv=iv_int)
        assert aes_bytes(result) == PyAES.new(key, PyAES.MODE_CBC, iv=iv).encrypt(plaintext)
        back = await fw.message(Mode.CBC, result, decrypt=True, iv=iv_int)
        assert aes_bytes(back) == plaintext
        counter = 0xf0f1f2f3f4f5f6f7f8f9fafbfcfdfefe
        result = await fw.message(Mode.CTR, aes_blocks(plaintext), iv=counter)
        want = PyAES.new(key, PyAES.MODE_CTR,
                         counter=Counter.new(128, initial_value=counter)).encrypt(plaintext)
        assert aes_bytes(result) == want
        assert await fw.read("ERROR") == 0
        assert field("STATUS", "BUSY", await fw.read("STATUS")) == 0

    run(dut, bench)


def test_little_endian_data_words_are_the_block_bytes_as_a_little_endian_cpu_loads_them():
    """CTRL.LITTLE_ENDIAN: DIN takes and DOUT gives each word with bytes 4j..4j+3 in bits
    7:0..31:24 (a little-endian CPU's word load of the byte string); CLEAR turns it off."""
    rng = random.Random(7)
    key, plaintext = rng.randbytes(16), rng.randbytes(32)
    little = bit("CTRL", "LITTLE_ENDIAN")
    dut = CipherPeripheral(AES(128), fifo_words=8)

    async def bench(fw, ctx, rst, memories):
        await fw.set_key(int.from_bytes(key, "big"), 128)
        await fw.write("LENGTH", 2)
        await fw.write("CTRL", Mode.ECB.value | little | bit("CTRL", "START"))
        assert await fw.read("CTRL") & little
        for at in range(0, 32, 4):
            await fw.write("DIN", int.from_bytes(plaintext[at:at + 4], "little"))
        words = []
        for _ in range(8):
            while not field("STATUS", "OUT_WORDS", await fw.read("STATUS")):
                pass
            words.append(await fw.read("DOUT"))
        result = b"".join(word.to_bytes(4, "little") for word in words)
        assert result == PyAES.new(key, PyAES.MODE_ECB).encrypt(plaintext)
        await fw.write("CTRL", bit("CTRL", "CLEAR"))
        await fw.wait_idle()
        assert not await fw.read("CTRL") & little

    run(dut, bench)


def test_present_80_and_128_every_mode():
    """Two key sizes behind KEYSEL (PRESENT-128 encrypt-only): every mode that each can do, both
    directions, against the mode model; ECB/CBC decryption on the encrypt-only core is refused."""
    rng = random.Random(2)
    dut = CipherPeripheral([PRESENT(80, rounds_per_cycle=4),
                            PRESENT(128, rounds_per_cycle=8, decrypt=False)])
    keys = {0: (rng.getrandbits(80), 80), 1: (rng.getrandbits(128), 128)}

    async def bench(fw, ctx, rst, memories):
        assert await fw.read("KEYSIZES") == 10 | (16 << 8)
        assert field("INFO", "DECRYPTS", await fw.read("INFO")) == 0b01
        for keysel, (key, key_bits) in keys.items():
            await fw.set_key(key, key_bits)
            for mode in Mode:
                for decrypt in (False, True):
                    if keysel == 1 and decrypt and mode in (Mode.ECB, Mode.CBC):
                        continue
                    iv = rng.getrandbits(64)
                    blocks = [rng.getrandbits(64) for _ in range(3)]
                    got = await fw.message(mode, blocks, decrypt=decrypt, iv=iv, keysel=keysel)
                    assert got == present_model(mode, decrypt, key, key_bits, iv, blocks), \
                        (keysel, mode, decrypt)
        assert await fw.read("ERROR") == 0
        await fw.start(Mode.CBC, decrypt=True, keysel=1, length=1)
        assert await fw.read("ERROR") == bit("ERROR", "UNSUPPORTED")
        assert field("STATUS", "BUSY", await fw.read("STATUS")) == 0
        await fw.write("ERROR", 0xff)
        await fw.start(Mode.CBC, keysel=2, length=1)          # no third core
        assert await fw.read("ERROR") == bit("ERROR", "UNSUPPORTED")
        assert field("STATUS", "BUSY", await fw.read("STATUS")) == 0

    run(dut, bench)


# Streaming rate, as the report measures it ------------------------------------------------------

def test_streaming_keeps_the_bus_busy_with_a_fast_core():
    """A driver polling STATUS streams a CTR message: with a core faster than the bus, each block
    costs one STATUS read, two DIN writes and two DOUT reads at 2 edges each; results are right."""
    rng = random.Random(8)
    key, counter = rng.getrandbits(80), rng.getrandbits(64)
    blocks = [rng.getrandbits(64) for _ in range(10)]
    core = PRESENT(80, rounds_per_cycle=8)
    run_ = stream_message(CipherPeripheral(core, fifo_words=4), key=key,
                          key_bits=80, mode=Mode.CTR, decrypt=False, iv=counter, blocks=blocks)
    want = present_model(Mode.CTR, False, key, 80, counter, blocks)
    assert run_.results == want and run_.latency_result == want[0]
    assert run_.steady_intervals() and set(run_.steady_intervals()) == {2 * (1 + 2 + 2)}
    # After the last block is written, only reads: 2 edges each for STATUS and two words.
    assert run_.intervals()[-1] == 2 * (1 + 2)
    # START acts three edges after its write is taken (the write lands with its ack, the
    # START strobe an edge later, the start's decisions are registered), then loads the key
    # (ceil(31 / 8) + 3 = 7 edges for PRESENT with decryption); the block waits in the block
    # register meanwhile.
    assert core.key_load_cycles == 7 and run_.start_to_input == 3 + core.key_load_cycles
    assert run_.pending_at_result[-1] == 0


# Interrupts ----------------------------------------------------------------------------------

def test_interrupt_output_ready_input_space_and_error():
    dut = CipherPeripheral(PRESENT(80, rounds_per_cycle=8), fifo_words=4)
    key = 0x0123456789abcdef0123

    async def bench(fw, ctx, rst, memories):
        assert not ctx.get(dut.irq)
        await fw.write("IRQ_ENABLE", bit("IRQ_ENABLE", "IN_SPACE"))
        await fw.read("STATUS")
        assert ctx.get(dut.irq)                       # empty input FIFO: room for a block
        assert await fw.read("IRQ_PENDING") == bit("IRQ_PENDING", "IN_SPACE")
        await fw.put_block(1)
        await fw.put_block(2)
        await fw.put_block(3)     # full (the FIFO's two blocks and the block register): no space
        assert not ctx.get(dut.irq)
        await fw.write("IRQ_ENABLE", bit("IRQ_ENABLE", "OUT_READY"))
        await fw.set_key(key, 80)
        await fw.start(Mode.ECB, length=2)
        edges = 0
        while not ctx.get(dut.irq):
            await ctx.tick()
            edges += 1
        assert edges < 40
        assert await fw.read("IRQ_PENDING") == bit("IRQ_PENDING", "OUT_READY")
        assert await fw.get_block() == encrypt_block(key, 1, 80)
        # The second result follows; the line stays high while a whole block waits.
        await fw.wait_idle()
        assert ctx.get(dut.irq)
        assert await fw.get_block() == encrypt_block(key, 2, 80)
        await fw.read("STATUS")
        assert not ctx.get(dut.irq)
        # Errors: a read of an empty DOUT raises ERROR, cleared by writing 1.
        await fw.write("IRQ_ENABLE", bit("IRQ_ENABLE", "ERROR"))
        assert await fw.read("DOUT") == 0
        await fw.read("STATUS")
        assert ctx.get(dut.irq)
        await fw.write("ERROR", bit("ERROR", "UNDERFLOW"))
        await fw.read("STATUS")
        assert not ctx.get(dut.irq)

    run(dut, bench)


# Keys, ordering, refused writes ----------------------------------------------------------------

def test_back_to_back_messages_with_key_change_and_refused_writes_while_busy():
    """Message 1 under key A; key, IV, LENGTH and CTRL writes during it are refused and flagged
    and change nothing; key B for message 2, started right after."""
    rng = random.Random(3)
    key_a, key_b = rng.getrandbits(80), rng.getrandbits(80)
    iv = rng.getrandbits(64)
    blocks = [rng.getrandbits(64) for _ in range(4)]
    dut = CipherPeripheral(PRESENT(80, rounds_per_cycle=2), fifo_words=8)

    async def bench(fw, ctx, rst, memories):
        await fw.set_key(key_a, 80)
        await fw.set_iv(iv, 2)
        await fw.start(Mode.CBC, length=4)
        await fw.put_block(blocks[0])
        assert field("STATUS", "BUSY", await fw.read("STATUS"))
        await fw.set_key(key_b, 80)                            # refused
        await fw.set_iv(0, 2)                                  # refused
        await fw.write("LENGTH", 1)                            # refused
        await fw.write("CTRL", Mode.ECB.value | bit("CTRL", "START"))  # refused
        assert await fw.read("ERROR") == bit("ERROR", "BUSY_WRITE")
        # (The refused IV write shows in the results below: the IV is write-only.)
        assert await fw.read("LENGTH") == 4 and await fw.read("IV", 0) == 0
        assert field("CTRL", "MODE", await fw.read("CTRL")) == Mode.CBC.value
        await fw.write("ERROR", 0xff)
        results = await fw.stream(blocks[1:], expect=4)
        assert results == present_model(Mode.CBC, False, key_a, 80, iv, blocks)
        await fw.wait_idle()
        await fw.set_key(key_b, 80)
        assert await fw.message(Mode.CBC, blocks, iv=iv) == \
            present_model(Mode.CBC, False, key_b, 80, iv, blocks)
        assert await fw.read("ERROR") == 0

    run(dut, bench)


def test_writes_in_any_order():
    """Key words, IV words, LENGTH and the message words (before START) in several orders: the
    same result each time, START last."""
    rng = random.Random(4)
    key, iv = rng.getrandbits(80), rng.getrandbits(64)
    blocks = [rng.getrandbits(64) for _ in range(2)]
    want = present_model(Mode.OFB, False, key, 80, iv, blocks)
    steps = [("KEY", i, (key >> (32 * i)) & 0xffffffff) for i in range(3)]
    steps += [("IV", i, (iv >> (32 * i)) & 0xffffffff) for i in range(2)]
    steps += [("LENGTH", 0, 2), ("DIN", None, None)]
    orders = [steps, steps[::-1]] + [rng.sample(steps, len(steps)) for _ in range(2)]
    dut = CipherPeripheral(PRESENT(80, rounds_per_cycle=8), fifo_words=4)

    async def bench(fw, ctx, rst, memories):
        for order in orders:
            for name, index, value in order:
                if name == "DIN":
                    for block in blocks:
                        await fw.put_block(block)
                else:
                    await fw.write(name, value, index)
            await fw.write("CTRL", Mode.OFB.value | bit("CTRL", "START"))
            await fw.wait_idle()
            assert [await fw.get_block() for _ in blocks] == want
            assert await fw.read("ERROR") == 0
            await fw.write("CTRL", bit("CTRL", "CLEAR"))
            await fw.wait_idle()

    run(dut, bench)


def test_bad_accesses_are_acknowledged_flagged_and_harmless():
    rng = random.Random(5)
    key, iv = rng.getrandbits(80), rng.getrandbits(64)
    blocks = [rng.getrandbits(64) for _ in range(2)]
    dut = CipherPeripheral(PRESENT(80, rounds_per_cycle=8))

    async def bench(fw, ctx, rst, memories):
        await fw.set_key(key, 80)
        await fw.set_iv(iv, 2)
        cases = [
            (0x28, 0x1234, "BAD_ADDRESS"), (0x7c, None, "BAD_ADDRESS"),
            (register("KEY").offsets()[3], 5, "BAD_ADDRESS"),      # beyond an 80-bit key
            (register("IV").offsets()[2], 5, "BAD_ADDRESS"),       # beyond a 64-bit block
            (register("STATUS").offset, 0xffffffff, "READ_ONLY"),
            (register("INFO").offset, 1, "READ_ONLY"),
            (register("DOUT").offset, 1, "READ_ONLY"),
            (register("DOUT").offset, None, "UNDERFLOW"),
        ]
        for address, value, flag in cases:
            data = await fw.access(address, value)
            if value is None:
                assert data == 0
            assert await fw.read("ERROR") == bit("ERROR", flag), (hex(address), flag)
            await fw.write("ERROR", bit("ERROR", flag))
            assert await fw.read("ERROR") == 0
        assert await fw.read("KEY", 0) == 0                  # write-only: reads 0, no error
        await fw.access(register("DIN").offset, 0x1234, sel=0b0011)
        assert await fw.read("ERROR") == bit("ERROR", "BYTE_SELECT")
        await fw.write("ERROR", 0xff)
        await fw.start(Mode.CTR, length=0)                   # nothing to do
        assert field("STATUS", "BUSY", await fw.read("STATUS")) == 0
        # Byte-select writes to a register: only the selected bytes change.
        await fw.write("LENGTH", 0xffff)
        await fw.write("LENGTH", 0x0002, sel=0b0001)
        assert await fw.read("LENGTH") == 0xff02
        await fw.write("LENGTH", 2)
        # None of it touched the key, IV or data path.
        assert await fw.message(Mode.CFB, blocks, iv=iv) == \
            present_model(Mode.CFB, False, key, 80, iv, blocks)
        for _ in range(4):
            await fw.put_block(0)
        await fw.write("DIN", 1)
        assert await fw.read("ERROR") == bit("ERROR", "OVERFLOW")

    run(dut, bench)


@pytest.mark.parametrize("mode", list(Mode))
def test_a_message_split_over_several_starts_continues_from_the_iv_registers(mode):
    """The IV registers are the chaining register: five blocks as 2 + 3 blocks (the IV written
    once, before the first START) give the five-block message's results, in every mode, with no
    FIFO (words straight into the block register)."""
    rng = random.Random(20 + mode.value)
    key, iv = rng.getrandbits(80), rng.getrandbits(64)
    blocks = [rng.getrandbits(64) for _ in range(5)]
    dut = CipherPeripheral(PRESENT(80, rounds_per_cycle=8))
    assert dut.fifo_words == 0

    async def bench(fw, ctx, rst, memories):
        await fw.set_key(key, 80)
        await fw.set_iv(iv, 2)
        got = []
        for part in (blocks[:2], blocks[2:]):
            await fw.start(mode, length=len(part))
            got += await fw.stream(part)
            await fw.wait_idle()
        assert got == present_model(mode, False, key, 80, iv, blocks)
        assert await fw.read("IV", 0) == 0 and await fw.read("ERROR") == 0

    run(dut, bench)


def test_start_without_key_is_refused():
    dut = CipherPeripheral(PRESENT(80, rounds_per_cycle=8))

    async def bench(fw, ctx, rst, memories):
        await fw.start(Mode.ECB, length=1)
        assert await fw.read("ERROR") == bit("ERROR", "NO_KEY")
        assert field("STATUS", "BUSY", await fw.read("STATUS")) == 0

    run(dut, bench)


# Clear and reset -----------------------------------------------------------------------------

def test_clear_mid_message_zeroizes_everything():
    """CLEAR in the middle of a message: the key, IV, buffers, chaining register and both FIFOs'
    storage (read in the simulation, not through the bus) are all zero; the core was reloaded
    with a zero key; a new START needs a new key."""
    rng = random.Random(6)
    key, iv = rng.getrandbits(128), rng.getrandbits(128)
    blocks = [rng.getrandbits(128) for _ in range(3)]
    dut = CipherPeripheral(AES(128), fifo_words=8)

    async def bench(fw, ctx, rst, memories):
        await fw.set_key(key, 128)
        await fw.write("IRQ_ENABLE", 0b111)
        await fw.set_iv(iv, 4)
        await fw.start(Mode.CBC, length=3)
        for block in blocks[:2]:
            await fw.put_block(block)
        while not field("STATUS", "OUT_READY", await fw.read("STATUS")):
            pass
        await fw.put_block(blocks[2])
        assert ctx.get(dut.secret_state()["key"]) == key
        assert ctx.get(dut.secret_state()["chain"]) != 0
        assert any(ctx.get(memories["dout/storage"][i]) for i in range(8))
        await fw.write("CTRL", bit("CTRL", "CLEAR"))
        assert field("STATUS", "BUSY", await fw.read("STATUS"))
        await fw.wait_idle()
        for name, signal in dut.secret_state().items():
            assert ctx.get(signal) == 0, name
        for name, data in memories.items():
            if name.startswith(("din", "dout")):
                values = [ctx.get(data[i]) for i in range(data.depth)]
                assert values == [0] * data.depth, name
        assert {"din/storage", "dout/storage"} <= set(memories)
        status = await fw.read("STATUS")
        assert field("STATUS", "KEY_SET", status) == 0
        assert field("STATUS", "OUT_WORDS", status) == 0 and field("STATUS", "IN_FREE",
                                                                    status) == 8
        for name in ("ERROR", "LENGTH", "CTRL", "IV"):
            assert await fw.read(name) == 0, name
        assert await fw.read("IRQ_ENABLE") == 0b111
        await fw.start(Mode.ECB, length=1)
        assert await fw.read("ERROR") == bit("ERROR", "NO_KEY")
        await fw.write("ERROR", 0xff)
        # Works again afterwards.
        await fw.set_key(key, 128)
        got = await fw.message(Mode.CBC, blocks, iv=iv)
        kb = key.to_bytes(16, "big")
        assert aes_bytes(got) == PyAES.new(kb, PyAES.MODE_CBC, iv=iv.to_bytes(16, "big")) \
            .encrypt(aes_bytes(blocks))

    run(dut, bench)


def test_reset_mid_message_then_a_fresh_message():
    rng = random.Random(7)
    key, iv = rng.getrandbits(80), rng.getrandbits(64)
    blocks = [rng.getrandbits(64) for _ in range(3)]
    dut = CipherPeripheral(PRESENT(80, rounds_per_cycle=4), fifo_words=4)

    async def bench(fw, ctx, rst, memories):
        await fw.set_key(key, 80)
        await fw.set_iv(iv, 2)
        await fw.start(Mode.OFB, length=3)
        await fw.put_block(blocks[0])
        await fw.put_block(blocks[1])
        ctx.set(rst, 1)
        await ctx.tick()
        ctx.set(rst, 0)
        status = await fw.read("STATUS")
        assert field("STATUS", "BUSY", status) == 0 and field("STATUS", "KEY_SET", status) == 0
        assert field("STATUS", "IN_FREE", status) == 4
        assert await fw.read("ERROR") == 0 and not ctx.get(dut.irq)
        await fw.set_key(key, 80)
        assert await fw.message(Mode.OFB, blocks, iv=iv) == \
            present_model(Mode.OFB, False, key, 80, iv, blocks)

    run(dut, bench)


# Construction --------------------------------------------------------------------------------

def test_constructor_checks():
    with pytest.raises(TypeError, match="cores must be a core or a sequence"):
        CipherPeripheral(3)
    with pytest.raises(ValueError, match="1 to 4 cores"):
        CipherPeripheral([])
    with pytest.raises(TypeError, match=r"^cores\[0\] must be a BlockCipher \(a cipher core of "
                                        r"this library\), not <object "):
        CipherPeripheral([object()])
    with pytest.raises(ValueError, match="same block size"):
        CipherPeripheral([PRESENT(80), AES(128)])
    with pytest.raises(TypeError, match="fifo_words must be an integer"):
        CipherPeripheral(PRESENT(80), fifo_words="4")
    with pytest.raises(ValueError, match=r"fifo_words must be 0 \(no FIFO\) or from 2 "):
        CipherPeripheral(PRESENT(80), fifo_words=1)
    with pytest.raises(TypeError, match="addr_width must be an integer"):
        WishboneSignature(addr_width="5")
    with pytest.raises(ValueError, match="data_width must be 8, 16, 32 or 64"):
        WishboneSignature(addr_width=5, data_width=24)
    with pytest.raises(ValueError, match="granularity must be 8"):
        WishboneSignature(addr_width=5, granularity=16)
    peripheral = CipherPeripheral(PRESENT(80))
    # Elaborated, so that its FIFOs and mode are not reported unused when collected later.
    Fragment.get(peripheral, None)
    signature = peripheral.signature
    assert signature.members["bus"].signature.flip() == WishboneSignature(addr_width=6)
    assert "ack" in signature.members["bus"].signature.members


def test_the_peripheral_limits_live_in_one_place():
    """The constructor and the build flow's target ask the same
    :meth:`CipherPeripheral.check_limits`, which names the core."""
    from cipher_cores.cores.catalog import parse_config
    from cipher_cores.scripts.flow.targets import PeripheralConfig
    from .support.toy_cipher import ToyCipher
    with pytest.raises(ValueError, match=r"^the Wishbone peripheral takes blocks of 32, 64, 96 "
                                         r"or 128 bits; ToyCipher has 48$"):
        CipherPeripheral(ToyCipher(block_bits=48))
    with pytest.raises(ValueError, match=r"^the Wishbone peripheral takes keys of at most 256 "
                                         r"bits; ToyCipher has 512$"):
        CipherPeripheral([ToyCipher(key_bits=80), ToyCipher(key_bits=512)])
    with pytest.raises(ValueError, match=r"^the Wishbone peripheral takes keys of at most 256 "
                                         r"bits; AES-128 has 512$"):
        CipherPeripheral.check_limits(128, 512, core="AES-128")
    with pytest.raises(ValueError, match=r"^fifo_words must be 0 \(no FIFO\) or from 4 \(one block\) to 255, "
                                         r"not 2$"):
        PeripheralConfig(parse_config("aes-128"), fifo_words=2)
    with pytest.raises(ValueError, match=r"^gcm=True needs cores with 128-bit blocks \(AES\), "
                                         r"not 64-bit ones$"):
        PeripheralConfig(parse_config("present-80"), bus="wishbone-gcm")
    CipherPeripheral.check_limits(64, 80, fifo_words=255)
