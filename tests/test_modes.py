# amaranth: UnusedElaboratable=no
"""Modes of operation: the NIST vectors through the modes with AES, PRESENT against the Python
model of each mode, exact cycle counts, back-pressure, new messages and constructor checks."""

import functools
import random

import pytest
from Crypto.Cipher import AES as PyAES
from Crypto.Util import Counter

from cipher_cores.cores.aes import AES
from cipher_cores.cores.modes import CBC, CFB, CTR, ECB, OFB, Mode, ModeOfOperation
from cipher_cores.cores.modes.reference import MODE_NAMES, process_message
from cipher_cores.cores.present import PRESENT
from cipher_cores.cores.present.reference import decrypt_block, encrypt_block

from .support.mode_sim import Key, Message, check_vectors, simulate_mode
from .support.nist_modes import MODE_FILE_KINDS, ctr_vectors, mode_vectors, sp800_38a_ctr_vectors


MODE_CLASSES = {Mode.ECB: ECB, Mode.CBC: CBC, Mode.CFB: CFB, Mode.OFB: OFB, Mode.CTR: CTR}
KEY_SIZES = (128, 192, 256)


def default_subset(vectors):
    """The first, middle and last vectors of a known-answer file and every 32nd one."""
    return [v for i, v in enumerate(vectors)
            if i % 32 == 0 or i == len(vectors) - 1 or i == len(vectors) // 2]


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_nist_subset(key_bits):
    """In one simulation, both directions: for CBC, CFB128 and OFB the GFSbox and MMT files in
    full and a sample of KeySbox, VarKey and VarTxt; for CTR, SP 800-38A F.5 and the shipped
    AES-CTR file (RFC 3686's vectors, partial last blocks)."""
    groups = []
    for mode in ("CBC", "CFB", "OFB"):
        vectors = []
        for kind in MODE_FILE_KINDS:
            found = mode_vectors(mode, kind, key_bits)
            vectors += found if kind in ("GFSbox", "MMT") else default_subset(found)
        assert any(v.decrypt for v in vectors) and any(not v.decrypt for v in vectors)
        groups.append((Mode[mode], vectors))
    groups.append((Mode.CTR, sp800_38a_ctr_vectors(key_bits) + ctr_vectors(key_bits)))
    check_vectors(key_bits, groups)


@pytest.mark.slow
@pytest.mark.parametrize("key_bits", KEY_SIZES)
@pytest.mark.parametrize("mode", ["CBC", "CFB", "OFB"])
def test_nist_cavp_full(mode, key_bits):
    """Every vector of the five CAVP files of a mode and key size."""
    check_vectors(key_bits, [(Mode[mode], mode_vectors(mode, kind, key_bits))
                             for kind in MODE_FILE_KINDS])


def test_nist_under_back_pressure():
    """The MMT files of CBC, CFB128 and OFB and the CTR vectors with random gaps and stalls."""
    groups = [(Mode[mode], mode_vectors(mode, "MMT", 128)) for mode in ("CBC", "CFB", "OFB")]
    groups.append((Mode.CTR, sp800_38a_ctr_vectors(128) + ctr_vectors(128)))
    check_vectors(128, groups, rng=random.Random(7), max_gap=4, max_stall=25)


# PRESENT against the model ---------------------------------------------------------------------

def random_messages(rng, modes, block_bits, *, count, max_blocks, decrypts=True):
    messages = []
    for _ in range(count):
        mode = rng.choice(modes)
        decrypt = rng.random() < 0.5 and (decrypts or mode not in (Mode.ECB, Mode.CBC))
        messages.append(Message(mode, decrypt, rng.getrandbits(block_bits),
                                tuple(rng.getrandbits(block_bits)
                                      for _ in range(rng.randint(1, max_blocks)))))
    return messages


def expected(operations, encrypt, decrypt, block_bits, key_bits):
    results, key = [], None
    for op in operations:
        if isinstance(op, Key):
            key = op.key
            continue
        results.append(process_message(
            op.mode.name, op.decrypt, lambda x: encrypt(key, x, key_bits),
            lambda x: decrypt(key, x, key_bits), op.iv, op.blocks, block_bits))
    return results


@pytest.mark.parametrize("key_bits, rounds_per_cycle, decrypt", [
    (80, 1, True), (128, 4, True), (80, 8, False), (128, 31, False)])
@pytest.mark.parametrize("mode", list(Mode), ids=lambda mode: mode.name)
def test_present_against_model(mode, key_bits, rounds_per_cycle, decrypt):
    """Each mode with PRESENT (encrypt-only cores in ECB/CBC encrypt only), two keys, random
    messages, gaps and stalls."""
    rng = random.Random(f"{mode.name}-{key_bits}-{rounds_per_cycle}")
    core = PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle, decrypt=decrypt)
    operations = []
    for _ in range(2):
        operations.append(Key(rng.getrandbits(key_bits)))
        operations += random_messages(rng, [mode], 64, count=3, max_blocks=4, decrypts=decrypt)
    run = simulate_mode(MODE_CLASSES[mode](core), operations, rng=rng, max_gap=3,
                        max_stall=6)
    assert run.results == expected(operations, encrypt_block, decrypt_block, 64, key_bits)


def test_all_modes_interleaved_with_present_and_markers():
    """One component with all five modes; messages of random modes and directions follow each
    other without a gap; the markers come out with the results."""
    rng = random.Random(5)
    operations = [Key(rng.getrandbits(80))]
    operations += random_messages(rng, list(Mode), 64, count=12, max_blocks=3)
    operations.append(Key(rng.getrandbits(80)))
    operations += random_messages(rng, list(Mode), 64, count=12, max_blocks=3)
    run = simulate_mode(ModeOfOperation(PRESENT(80, rounds_per_cycle=8)), operations,
                        rng=rng, max_gap=2, max_stall=4)
    assert run.results == expected(operations, encrypt_block, decrypt_block, 64, 80)
    markers = []
    for op in operations:
        if isinstance(op, Message):
            n = len(op.blocks)
            markers += [(int(i == 0), int(i == n - 1)) for i in range(n)]
    assert run.markers == markers


def test_message_restarts_mid_message():
    """A block with ``first`` restarts the chain even if the previous message had no ``last``."""
    rng = random.Random(9)
    key = rng.getrandbits(80)
    cut = Message(Mode.CBC, False, rng.getrandbits(64), (1, 2, 3))
    whole = Message(Mode.CBC, False, rng.getrandbits(64), (4, 5))
    engine = CBC(PRESENT(80, rounds_per_cycle=16))
    run = simulate_mode(engine, [Key(key), cut, whole])
    assert run.results == expected([Key(key), cut, whole], encrypt_block, decrypt_block, 64, 80)


# The model itself ----------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODE_NAMES)
def test_model_matches_pycryptodome(mode):
    rng = random.Random(mode)
    key, iv = rng.randbytes(16), rng.getrandbits(128)
    blocks = [rng.getrandbits(128) for _ in range(5)]
    data = b"".join(b.to_bytes(16, "big") for b in blocks)
    ecb = PyAES.new(key, PyAES.MODE_ECB)

    def enc(x):
        return int.from_bytes(ecb.encrypt(x.to_bytes(16, "big")), "big")

    def dec(x):
        return int.from_bytes(ecb.decrypt(x.to_bytes(16, "big")), "big")

    ivb = iv.to_bytes(16, "big")
    make = {
        "ECB": lambda: PyAES.new(key, PyAES.MODE_ECB),
        "CBC": lambda: PyAES.new(key, PyAES.MODE_CBC, iv=ivb),
        "CFB": lambda: PyAES.new(key, PyAES.MODE_CFB, iv=ivb, segment_size=128),
        "OFB": lambda: PyAES.new(key, PyAES.MODE_OFB, iv=ivb),
        "CTR": lambda: PyAES.new(key, PyAES.MODE_CTR,
                                 counter=Counter.new(128, initial_value=iv)),
    }[mode]
    encrypted = process_message(mode, False, enc, dec, iv, blocks, 128)
    assert b"".join(b.to_bytes(16, "big") for b in encrypted) == make().encrypt(data)
    assert process_message(mode, True, enc, dec, iv, encrypted, 128) == blocks


def test_model_checks_its_arguments():
    with pytest.raises(ValueError, match="mode must be one of"):
        process_message("XTS", False, None, None, 0, [], 128)


# Cycle counts --------------------------------------------------------------------------------

SERIAL = {(Mode.CBC, False), (Mode.CFB, False), (Mode.OFB, False), (Mode.OFB, True)}


@functools.cache
def measured(core_name):
    """Per (mode, direction): the latencies and output intervals of a 6-block message, every
    message in one simulation through one component, ``output.ready`` held high."""
    core = AES(128) if core_name == "aes128" else PRESENT(80, rounds_per_cycle=4)
    messages = [Message(mode, decrypt, 3, tuple(range(6)))
                for mode in Mode for decrypt in (False, True)]
    run = simulate_mode(ModeOfOperation(core), [Key(1)] + messages)
    figures = {}
    for index, message in enumerate(messages):
        ins = run.input_edges[6 * index:6 * index + 6]
        outs = run.output_edges[6 * index:6 * index + 6]
        figures[message.mode, message.decrypt] = (
            [o - i for i, o in zip(ins, outs)], [b - a for a, b in zip(outs, outs[1:])],
            core.latency, core.initiation_interval)
    return figures


@pytest.mark.parametrize("core_name", ["aes128", "present80-r4"])
@pytest.mark.parametrize("decrypt", [False, True], ids=["encrypt", "decrypt"])
@pytest.mark.parametrize("mode", list(Mode), ids=lambda mode: mode.name)
def test_cycles_per_block(mode, decrypt, core_name):
    """Latency is the core's; chaining directions take one edge more than the core's interval,
    the others none."""
    latencies, intervals, latency, interval = measured(core_name)[mode, decrypt]
    assert set(latencies) == {latency}
    assert set(intervals) == {interval + ((mode, decrypt) in SERIAL)}


# Constructor checks --------------------------------------------------------------------------

def test_constructor_checks():
    core = PRESENT(80)
    with pytest.raises(TypeError, match=r"^core must be a BlockCipher \(a cipher core of this "
                                        r"library\), not <object "):
        ModeOfOperation(object())
    with pytest.raises(TypeError, match="modes must be a sequence of Mode"):
        ModeOfOperation(core, modes=["CBC"])
    with pytest.raises(TypeError, match="modes must be a sequence of Mode"):
        ModeOfOperation(core, modes=3)
    with pytest.raises(ValueError, match="at least one"):
        ModeOfOperation(core, modes=())
    with pytest.raises(ValueError, match="must not repeat"):
        ModeOfOperation(core, modes=(Mode.CBC, Mode.CBC))
    with pytest.raises(TypeError, match="depth must be an integer"):
        CTR(core, depth=2.0)
    with pytest.raises(ValueError, match="depth must be at least 2"):
        CTR(core, depth=1)


def test_signature():
    engine = ModeOfOperation(PRESENT(80, decrypt=False), modes=(Mode.CTR, Mode.CBC))
    assert engine.modes == (Mode.CBC, Mode.CTR)
    assert "mode" in engine.signature.members
    assert not engine.decrypts
    assert "mode" not in CTR(AES(128)).signature.members
    assert CTR(AES(256)).key_bits == 256 and CTR(AES(256)).block_bits == 128
