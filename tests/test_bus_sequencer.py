# amaranth: UnusedElaboratable=no
"""The message sequencer (:class:`~cipher_cores.cores.bus.sequencer.MessageSequencer`) alone,
around real cores: the testbench plays the peripheral (configuration, key and IV registers,
``start`` and ``clear``) and moves the message's words on ``word_in`` and ``word_out``; results
are compared with the mode model, and the core's own streams show when blocks enter and leave."""

import random
from dataclasses import dataclass
from typing import Callable

import pytest
from Crypto.Cipher import AES as PyAES

from cipher_cores.cores.aes import AES
from cipher_cores.cores.bus.sequencer import GCM_MODE, MessageSequencer
from cipher_cores.cores.modes import Mode
from cipher_cores.cores.present import PRESENT
from cipher_cores.cores.present.reference import decrypt_block, encrypt_block
from cipher_cores.cores.sim import stream_monitor

from .support.bus_components import SequencerDriver, high_edges, model, simulate, words_block
from .support.helpers import aes_oracle, stream_put, wait_for


FEEDBACK = {(Mode.CBC, False), (Mode.CFB, False), (Mode.OFB, False), (Mode.OFB, True)}


@dataclass(frozen=True)
class Cipher:
    """A core to build and its reference, ``encrypt(key, block)`` and ``decrypt(key, block)``."""
    build: Callable
    key_bits: int
    block_bits: int
    encrypt: Callable
    decrypt: Callable

    def model(self, mode, decrypt, key, iv, blocks) -> list:
        """The mode model's results for a message under ``key``."""
        return model(mode, decrypt, lambda x: self.encrypt(key, x),
                     lambda x: self.decrypt(key, x), iv, blocks, self.block_bits)


PRESENT_80 = Cipher(lambda: PRESENT(80, rounds_per_cycle=1), 80, 64,
                    lambda key, x: encrypt_block(key, x, 80),
                    lambda key, x: decrypt_block(key, x, 80))
PRESENT_128 = Cipher(lambda: PRESENT(128, rounds_per_cycle=1, decrypt=False), 128, 64,
                     lambda key, x: encrypt_block(key, x, 128),
                     lambda key, x: decrypt_block(key, x, 128))
AES_128 = Cipher(lambda: AES(128), 128, 128,
                 lambda key, x: aes_oracle(key, 128, x, False),
                 lambda key, x: aes_oracle(key, 128, x, True))
CIPHERS = {"present-80": PRESENT_80, "aes-128": AES_128}


def random_message(cipher, seed, blocks=3):
    rng = random.Random(seed)
    return (rng.getrandbits(cipher.key_bits), rng.getrandbits(cipher.block_bits),
            [rng.getrandbits(cipher.block_bits) for _ in range(blocks)])


def core_streams(seq) -> dict:
    return {"key": seq.cipher.key, "input": seq.cipher.input, "output": seq.cipher.output,
            "word in": seq.word_in}


def watch_events(seq) -> dict:
    return {name: getattr(seq, name) for name in (
        "start", "clear", "busy", "scrubbing", "started", "unsupported", "no_key", "key_set")}


# Messages ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CIPHERS))
def test_every_mode_matches_the_model_in_both_directions(name):
    cipher = CIPHERS[name]
    seq = MessageSequencer([cipher.build()])
    cases = [(mode, decrypt) for mode in Mode for decrypt in (False, True)]
    messages = {mode: random_message(cipher, mode.value) for mode in Mode}
    got = {}

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        for mode, decrypt in cases:
            key, iv, blocks = messages[mode]
            await driver.set_key(key)
            got[mode, decrypt] = await driver.message(mode, blocks, decrypt=decrypt, iv=iv)

    simulate(seq, bench, max_edges=20_000)
    for mode, decrypt in cases:
        assert got[mode, decrypt] == cipher.model(mode, decrypt, *messages[mode]), \
            (mode, decrypt)


def test_a_message_split_over_two_starts_continues_from_the_chaining_register():
    """In every mode, both directions: five blocks as two starts of 2 and 3 blocks, the IV
    written once before the first, give the five-block message's results."""
    cases = [(mode, decrypt) for mode in Mode for decrypt in (False, True)]
    key, iv, blocks = random_message(PRESENT_80, 10, blocks=5)
    seq = MessageSequencer([PRESENT_80.build()])
    got = {}

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(key)
        for mode, decrypt in cases:
            await driver.set_iv(iv)
            got[mode, decrypt] = []
            for part in (blocks[:2], blocks[2:]):
                await driver.start(mode, decrypt, blocks=len(part))
                got[mode, decrypt] += await driver.stream(part)
                await driver.wait_idle()

    simulate(seq, bench, max_edges=20_000)
    for mode, decrypt in cases:
        assert got[mode, decrypt] == PRESENT_80.model(mode, decrypt, key, iv, blocks), \
            (mode, decrypt)


def test_the_chaining_register_ends_on_the_value_that_continues_the_message():
    """``iv`` after a message: CBC and CFB the last ciphertext block, OFB the last output of the
    core, CTR the next counter (from a counter that wraps around)."""
    key, _, blocks = random_message(PRESENT_80, 30)
    seq = MessageSequencer([PRESENT_80.build()])
    cases = [(mode, decrypt) for mode in (Mode.CBC, Mode.CFB, Mode.OFB, Mode.CTR)
             for decrypt in (False, True)]
    iv = (1 << 64) - 2
    ends = {}

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(key)
        for mode, decrypt in cases:
            results = await driver.message(mode, blocks, decrypt=decrypt, iv=iv)
            ends[mode, decrypt] = (ctx.get(seq.iv), results)

    simulate(seq, bench)
    for (mode, decrypt), (end, results) in ends.items():
        ciphertext = blocks[-1] if decrypt else results[-1]
        want = {Mode.CBC: ciphertext, Mode.CFB: ciphertext, Mode.OFB: results[-1] ^ blocks[-1],
                Mode.CTR: (iv + len(blocks)) % (1 << 64)}[mode]
        assert end == want, (mode, decrypt)


def test_keysel_picks_the_core_and_each_core_takes_the_low_bits_of_the_key():
    rng = random.Random(31)
    key = rng.getrandbits(128)
    iv, blocks = rng.getrandbits(64), [rng.getrandbits(64) for _ in range(2)]
    seq = MessageSequencer([PRESENT_80.build(), PRESENT_128.build()])
    got = {}

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(key)
        for keysel in (1, 0, 1):
            got[keysel] = await driver.message(Mode.CBC, blocks, iv=iv, keysel=keysel)

    simulate(seq, bench)
    assert got[0] == PRESENT_80.model(Mode.CBC, False, key & ((1 << 80) - 1), iv, blocks)
    assert got[1] == PRESENT_128.model(Mode.CBC, False, key, iv, blocks)


def test_words_are_taken_before_start_until_the_block_register_is_full():
    """With no key and no start, ``word_in`` takes one block's words (counted by ``in_words``),
    then holds ``ready`` low; ``out_words`` stays 0."""
    seq = MessageSequencer([PRESENT_80.build()])

    async def bench(ctx):
        for index in range(2):
            assert ctx.get(seq.in_words) == index
            await stream_put(ctx, seq.word_in, 0x1111 * (index + 1))
        for _ in range(10):
            assert ctx.get(seq.in_words) == 2 and not ctx.get(seq.word_in.ready)
            assert ctx.get(seq.out_words) == 0 and not ctx.get(seq.word_out.valid)
            await ctx.tick()
        assert ctx.get(seq.secret_state()["in_block"]) == (0x1111 << 32) | 0x2222

    simulate(seq, bench)


# When blocks enter and leave the core -------------------------------------------------------------

def test_start_acts_on_the_next_edge_and_loads_a_changed_key_first():
    """A start sampled at edge S: ``started`` at S + 1 (that one edge), ``busy`` from S + 1. The
    changed key goes to the core on the edge after ``started`` and the block waiting in
    ``in_block`` enters as soon as the core has loaded it (its key-load time later). A second
    start with the same key loads nothing: its waiting block is offered from a flip-flop set on
    the first edge the message runs, and enters on the edge after that."""
    core = PRESENT_80.build()
    seq = MessageSequencer([core])
    logs = {}
    key, iv, blocks = random_message(PRESENT_80, 40, blocks=2)

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(key)
        for block in blocks:
            await driver.put_block(block)
            await driver.start(Mode.ECB, blocks=1)
            assert await driver.get_block() == encrypt_block(key, block, 80)
            await driver.wait_idle()

    trace = simulate(seq, bench, watch=watch_events(seq),
                     background=[stream_monitor(core_streams(seq), logs)])
    starts = high_edges(trace, "start")
    started = high_edges(trace, "started")
    assert started == [edge + 1 for edge in starts]
    for edge in starts:
        assert not trace[edge - 1]["busy"] and trace[edge]["busy"]
    assert logs["key"].edges == [started[0] + 1]
    assert logs["key"].payloads == [key]
    assert logs["input"].edges == [started[0] + 1 + core.key_load_cycles, started[1] + 2]


def test_a_block_enters_the_core_on_the_edge_after_its_last_word():
    core = PRESENT_80.build()
    seq = MessageSequencer([core])
    logs = {}
    key, iv, blocks = random_message(PRESENT_80, 41, blocks=3)

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(key)
        await driver.start(Mode.CTR, blocks=3)
        for block in blocks:
            for _ in range(core.key_load_cycles + 4):   # the core has the key and no block
                await ctx.tick()
            await driver.put_block(block)
            await driver.get_block()

    simulate(seq, bench, background=[stream_monitor(core_streams(seq), logs)])
    last_words = logs["word in"].edges[1::2]
    assert logs["input"].edges == [edge + 1 for edge in last_words]


def test_the_next_block_enters_on_the_edge_after_the_previous_result_left():
    """One block in the core at a time, with words always there and results always taken: the
    next block enters on the edge after the previous result left, one edge later when the
    result is fed back (CBC and CFB encryption, OFB)."""
    cases = [(mode, decrypt) for mode in Mode for decrypt in (False, True)]
    key, iv, blocks = random_message(PRESENT_80, 42, blocks=4)
    seq = MessageSequencer([PRESENT_80.build()])
    logs = {}
    results = []
    done = []

    async def producer(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(key)
        for mode, decrypt in cases:
            await driver.set_iv(iv)
            await driver.start(mode, decrypt, blocks=len(blocks))
            for block in blocks:
                await driver.put_block(block)
            while len(results) < len(blocks) * (len(done) + 1):
                await ctx.tick()
            await driver.wait_idle()
            done.append((mode, decrypt))

    async def consumer(ctx):
        ctx.set(seq.word_out.ready, 1)
        words = []
        while len(results) < len(blocks) * len(cases):
            _, _, valid, payload = await ctx.tick().sample(seq.word_out.valid,
                                                           seq.word_out.payload)
            if valid:
                words.append(payload)
                if len(words) == 2:
                    results.append(words_block(words))
                    words = []

    simulate(seq, producer, consumer, background=[stream_monitor(core_streams(seq), logs)])
    n = len(blocks)
    for index, (mode, decrypt) in enumerate(cases):
        assert results[n * index:n * (index + 1)] == \
            PRESENT_80.model(mode, decrypt, key, iv, blocks), (mode, decrypt)
        entered = logs["input"].edges[n * index:n * (index + 1)]
        left = logs["output"].edges[n * index:n * (index + 1)]
        after = 2 if (mode, decrypt) in FEEDBACK else 1
        assert [b - a for a, b in zip(left, entered[1:])] == [after] * (n - 1), (mode, decrypt)


# Refusals ---------------------------------------------------------------------------------------

def refused(trace: list) -> dict:
    """Per start edge: the events flagged at it, and whether the sequencer got busy after it."""
    found = {}
    for edge in high_edges(trace, "start"):
        flags = tuple(name for name in ("unsupported", "no_key") if trace[edge - 1][name])
        busy = any(values["busy"] or values["started"] for values in trace[edge:edge + 3])
        found[edge] = (flags, busy)
    return found


def test_a_start_with_a_mode_not_built_is_refused_as_unsupported():
    """Built with ECB and CTR only: CBC, CFB, OFB, GCM (not built) and the values 6 and 7 are
    refused, flagged on the edge of the start, and nothing starts; ECB and CTR start."""
    seq = MessageSequencer([PRESENT_80.build()], modes=(Mode.CTR, Mode.ECB))
    assert seq.modes == (Mode.ECB, Mode.CTR)
    modes = [Mode.CBC, Mode.CFB, Mode.OFB, GCM_MODE, 6, 7, Mode.ECB, Mode.CTR]

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(1)
        for mode in modes:
            await driver.start(mode, blocks=1)
            for _ in range(3):
                await ctx.tick()
            await driver.pulse(seq.clear)       # ends an accepted message
            await driver.wait_idle()
            await driver.set_key(1)

    trace = simulate(seq, bench, watch=watch_events(seq))
    assert list(refused(trace).values()) == [(("unsupported",), False)] * 6 + [((), True)] * 2
    assert len(high_edges(trace, "unsupported")) == 6


def test_a_start_with_keysel_beyond_the_cores_is_refused_as_unsupported():
    seq = MessageSequencer([PRESENT_80.build(), PRESENT_128.build()])

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(1)
        for keysel in (2, 3):
            await driver.start(Mode.CTR, keysel=keysel, blocks=1)
            await ctx.tick()

    trace = simulate(seq, bench, watch=watch_events(seq))
    assert list(refused(trace).values()) == [(("unsupported",), False)] * 2


def test_ecb_and_cbc_decryption_on_an_encrypt_only_core_is_refused_as_unsupported():
    """KEYSEL 1 is an encrypt-only core: ECB and CBC decryption are refused there (not on
    KEYSEL 0); CFB, OFB and CTR decryption only encrypt blocks, and run."""
    seq = MessageSequencer([PRESENT_80.build(), PRESENT_128.build()])
    key, iv, blocks = random_message(PRESENT_128, 50, blocks=2)
    got = {}

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(key)
        for mode in (Mode.ECB, Mode.CBC):
            await driver.start(mode, decrypt=True, keysel=1, blocks=1)
            await ctx.tick()
        for mode in (Mode.ECB, Mode.CFB, Mode.OFB, Mode.CTR):
            keysel = 0 if mode == Mode.ECB else 1
            got[mode] = await driver.message(mode, blocks, decrypt=True, iv=iv, keysel=keysel)

    trace = simulate(seq, bench, watch=watch_events(seq))
    assert list(refused(trace).values()) == [(("unsupported",), False)] * 2 + [((), True)] * 4
    assert got.pop(Mode.ECB) == PRESENT_80.model(Mode.ECB, True, key & ((1 << 80) - 1), iv,
                                                 blocks)
    for mode, results in got.items():
        assert results == PRESENT_128.model(mode, True, key, iv, blocks), mode


def test_a_start_before_any_key_is_refused_as_no_key():
    seq = MessageSequencer([PRESENT_80.build()])
    key, iv, blocks = random_message(PRESENT_80, 51, blocks=1)
    got = []

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        assert not ctx.get(seq.key_set)
        await driver.start(Mode.ECB, blocks=1)
        await ctx.tick()
        await driver.set_key(key)
        assert ctx.get(seq.key_set)
        got.extend(await driver.message(Mode.ECB, blocks))

    trace = simulate(seq, bench, watch=watch_events(seq))
    assert list(refused(trace).values()) == [(("no_key",), False), ((), True)]
    assert got == PRESENT_80.model(Mode.ECB, False, key, iv, blocks)


def test_a_start_of_zero_blocks_does_nothing():
    seq = MessageSequencer([PRESENT_80.build()])

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(1)
        await driver.start(Mode.ECB, blocks=0)
        await ctx.tick()

    trace = simulate(seq, bench, watch=watch_events(seq))
    assert list(refused(trace).values()) == [((), False)]


def test_a_start_while_busy_is_ignored():
    """A second start (another mode, another length) in the middle of a message: no flag, no
    second ``started``, and the message finishes as it began."""
    key, iv, blocks = random_message(PRESENT_80, 52, blocks=3)
    seq = MessageSequencer([PRESENT_80.build()])
    got = []

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(key)
        await driver.set_iv(iv)
        await driver.start(Mode.CBC, blocks=3)
        await driver.put_block(blocks[0])
        await driver.put_block(blocks[1])
        await driver.start(Mode.ECB, decrypt=True, blocks=1)
        driver.configure(Mode.CBC, blocks=3)
        got.append(await driver.get_block())
        await driver.put_block(blocks[2])
        got.append(await driver.get_block())
        got.append(await driver.get_block())
        await driver.wait_idle()

    trace = simulate(seq, bench, watch=watch_events(seq))
    assert len(high_edges(trace, "started")) == 1
    assert high_edges(trace, "unsupported") == high_edges(trace, "no_key") == []
    assert got == PRESENT_80.model(Mode.CBC, False, key, iv, blocks)


def test_a_start_on_the_last_busy_edge_of_a_message_is_ignored():
    """A start sampled at the edge the message ends (its last word left the edge before;
    ``busy`` is still high) is a start while busy: nothing starts."""
    seq = MessageSequencer([PRESENT_80.build()])

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(1)
        await driver.put_block(2)
        await driver.start(Mode.ECB, blocks=1)
        ctx.set(seq.word_out.ready, 1)
        for _ in range(2):
            await wait_for(ctx, seq.word_out.valid)     # the result's two words leave
        await driver.start(Mode.ECB, blocks=1)
        for _ in range(4):
            await ctx.tick()

    trace = simulate(seq, bench, watch=watch_events(seq))
    last_start = high_edges(trace, "start")[-1]
    assert trace[last_start - 1]["busy"]
    assert len(high_edges(trace, "started")) == 1
    assert not trace[last_start]["busy"]


def test_a_start_while_scrubbing_is_ignored():
    """During the clear sequence (``busy`` and ``scrubbing`` high) a start flags nothing, even
    with no key, and starts nothing, even after a key was written."""
    seq = MessageSequencer([PRESENT_80.build()])

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(1)
        await driver.pulse(seq.clear)
        await driver.start(Mode.ECB, blocks=1)
        await driver.set_key(1)
        await driver.start(Mode.ECB, blocks=1)
        while ctx.get(seq.scrubbing):
            await ctx.tick()
        await ctx.tick()

    trace = simulate(seq, bench, watch=watch_events(seq))
    starts = high_edges(trace, "start")
    assert all(trace[edge - 1]["scrubbing"] for edge in starts)
    assert high_edges(trace, "no_key") == high_edges(trace, "unsupported") == []
    assert high_edges(trace, "started") == []


# Clear ----------------------------------------------------------------------------------------

async def clear(driver):
    """``clear`` for one edge, the key registers zeroed with it (as the peripheral does)."""
    driver.ctx.set(driver.seq.key, 0)
    await driver.pulse(driver.seq.clear)


async def mid_message(driver, key, iv, blocks):
    """A CFB encryption of ``blocks`` started, its first result waiting in ``out_block``, the
    second block in the core and the third in ``in_block``: every block register holds message
    material."""
    await driver.set_key(key)
    await driver.set_iv(iv)
    await driver.start(Mode.CFB, blocks=len(blocks))
    await driver.put_block(blocks[0])
    await driver.put_block(blocks[1])
    while driver.ctx.get(driver.seq.out_words) == 0:
        await driver.ctx.tick()
    await driver.put_block(blocks[2])


def test_clear_zeroes_the_secret_state_on_its_edge():
    key, iv, blocks = random_message(PRESENT_80, 60)
    seq = MessageSequencer([PRESENT_80.build()])

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await mid_message(driver, key, iv, blocks)
        assert all(driver.secret_state().values())
        await clear(driver)
        assert driver.secret_state() == dict.fromkeys(seq.secret_state(), 0)
        assert ctx.get(seq.in_words) == ctx.get(seq.out_words) == 0
        assert not ctx.get(seq.word_out.valid) and not ctx.get(seq.key_set)

    simulate(seq, bench)


def test_clear_runs_the_scrubber_through_the_core_with_zeros_only():
    """From the edge after ``clear``: ``scrubbing`` and ``busy`` high, then both low; meanwhile
    the core is given the zero key and zero blocks only, no word is taken and no result given,
    and the secret state stays zero."""
    key, iv, blocks = random_message(PRESENT_80, 61)
    seq = MessageSequencer([PRESENT_80.build()])
    logs = {}

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await mid_message(driver, key, iv, blocks)
        ctx.set(seq.word_in.valid, 1)
        ctx.set(seq.word_in.payload, 0xffff_ffff)
        ctx.set(seq.word_out.ready, 1)
        await clear(driver)
        while ctx.get(seq.scrubbing):
            await ctx.tick()
        await ctx.tick()

    watch = {**watch_events(seq), **seq.secret_state()}
    trace = simulate(seq, bench, watch=watch, background=[
        stream_monitor({**core_streams(seq), "word out": seq.word_out}, logs)])
    edge = high_edges(trace, "clear")[0]
    scrubbing = high_edges(trace, "scrubbing")
    assert scrubbing == list(range(edge + 1, scrubbing[-1] + 1)) and scrubbing[-1] < len(trace)
    assert high_edges(trace, "busy")[-1] == scrubbing[-1]
    during = range(edge + 1, scrubbing[-1] + 1)
    into_core = [transfer for name in ("key", "input") for transfer in logs[name].transfers
                 if transfer.edge in during]
    assert len(into_core) == 1 + 2 and {transfer.payload for transfer in into_core} == {0}
    assert [transfer for name in ("word in", "word out") for transfer in logs[name].transfers
            if transfer.edge in during] == []
    for values in trace[edge:scrubbing[-1]]:
        assert [values[name] for name in seq.secret_state()] == [0] * 4


def test_after_clear_a_start_needs_a_new_key_then_runs():
    key, iv, blocks = random_message(PRESENT_80, 62)
    seq = MessageSequencer([PRESENT_80.build()])
    got = []

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await mid_message(driver, key, iv, blocks)
        await clear(driver)
        await driver.wait_idle()
        await driver.start(Mode.CBC, blocks=1)
        await ctx.tick()
        await driver.set_key(key)
        got.extend(await driver.message(Mode.CBC, blocks, iv=iv))

    trace = simulate(seq, bench, watch=watch_events(seq))
    assert [flags for flags, _ in refused(trace).values()] == [(), ("no_key",), ()]
    assert got == PRESENT_80.model(Mode.CBC, False, key, iv, blocks)


# AES-GCM ----------------------------------------------------------------------------------------

def test_gcm_encryption_gives_pycryptodome_ciphertext_and_tag():
    """AES-GCM sharing the core: 20 bytes of AAD and 40 of text (partial last blocks), the
    text's blocks out (zero past the text) and the tag."""
    rng = random.Random(70)
    key, nonce, aad, text = (rng.randbytes(16), rng.randbytes(12), rng.randbytes(20),
                             rng.randbytes(40))
    cipher = PyAES.new(key, PyAES.MODE_GCM, nonce=nonce)
    cipher.update(aad)
    ciphertext, tag = cipher.encrypt_and_digest(text)
    seq = MessageSequencer([AES_128.build()], gcm=True)
    got = {}

    def blocks(data):
        data += bytes(-len(data) % 16)
        return [int.from_bytes(data[at:at + 16], "big") for at in range(0, len(data), 16)]

    async def bench(ctx):
        driver = SequencerDriver(ctx, seq)
        await driver.set_key(int.from_bytes(key, "big"))
        await driver.set_iv(int.from_bytes(nonce, "big") << 32)
        ctx.set(seq.config.aad_bytes, len(aad))
        ctx.set(seq.config.text_bytes, len(text))
        await driver.start(GCM_MODE)
        for block in blocks(aad):
            await driver.put_block(block)
        got["text"] = await driver.stream(blocks(text))
        while not ctx.get(seq.tag_ready):
            await ctx.tick()
        got["tag"] = ctx.get(seq.tag)

    simulate(seq, bench, max_edges=20_000)
    assert got["text"] == blocks(ciphertext)
    assert got["tag"] == int.from_bytes(tag, "big")
