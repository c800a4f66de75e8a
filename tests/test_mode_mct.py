# amaranth: UnusedElaboratable=no
"""The NIST AESAVS Monte Carlo tests (MCT) for CBC, CFB128 and OFB, both directions,
AES-128/192/256, run by the mode of operation (:class:`cipher_cores.cores.modes.ModeOfOperation`) around the
round-based AES core, on the compiled (CXXRTL) simulator, and checked against the recorded NIST
values of the ``{CBC,CFB128,OFB}MCT{128,192,256}.rsp`` files.

The algorithm is that of the AESAVS document for the chaining modes: for each of 100 outer
iterations, one message of 1000 blocks under one key and IV, in which block 0 is the given
input, block 1 is the IV and every later block ``j + 1`` is the result of block ``j - 1``; then
the key is XORed with the last results as in ECB (see :func:`tests.support.nist.next_key`), the
last result becomes the IV and the second-to-last result the next given input.

The mode runs each whole message: one run of the compiled model per outer iteration, on
``LoadKey``, two given blocks and 998 :class:`~cipher_cores.cores.sim.cxxrtl.PutInput` operations chained to
the second-to-last output, so neither the chaining nor the block cipher is computed by the host.
The same algorithm run by pycryptodome (a cipher object continuing its chain across the message)
reproduces each file too, which checks the reading of the algorithm independently of the core.
"""

import pytest
from Crypto.Cipher import AES as PyCryptodomeAES

from cipher_cores.cores.aes import AES
from cipher_cores.cores.modes import Mode, ModeOfOperation
from cipher_cores.cores.sim import LoadKey
from cipher_cores.cores.sim.cxxrtl import PutInput, compile_model, run_model

from .support.nist import INNER, OUTER, aesavs_mct_records, next_key


KEY_SIZES = (128, 192, 256)
#: Each mode, with the name of its AESAVS files.
MODES = {Mode.CBC: "CBC", Mode.CFB: "CFB128", Mode.OFB: "OFB"}

directions = pytest.mark.parametrize("decrypt", [False, True], ids=["encrypt", "decrypt"])
key_sizes = pytest.mark.parametrize("key_bits", KEY_SIZES, ids=lambda bits: f"aes{bits}")
modes = pytest.mark.parametrize("mode", list(MODES), ids=lambda mode: MODES[mode])
#: The hardware runs CBC in the default run and CFB and OFB (a compiled model each) with -m slow.
hardware_modes = pytest.mark.parametrize("mode", [
    pytest.param(mode, id=name, marks=pytest.mark.slow if mode is not Mode.CBC else ())
    for mode, name in MODES.items()])


def nist_records(mode, key_bits, decrypt):
    """The 100 records of one direction of one AESAVS MCT file."""
    records = [r for r in aesavs_mct_records(MODES[mode], key_bits) if r.decrypt == decrypt]
    assert [r.count for r in records] == list(range(OUTER))
    return records


def mct(key_bits, record, message):
    """The 100 outer iterations from the first record's key, IV and given block, as
    ``(key, iv, given, result)`` tuples. ``message(key, iv, given)`` performs the 1000 block
    operations of one iteration and returns its last two results."""
    key, iv, given = record.key, record.iv, record.given
    iterations = []
    for _ in range(OUTER):
        second_last, last = message(key, iv, given)
        iterations.append((key, iv, given, last))
        key, iv, given = next_key(key, key_bits, second_last, last), last, second_last
    return iterations


def software_message(mode, key_bits, decrypt):
    """A ``message`` for :func:`mct` computed by pycryptodome."""
    def message(key, iv, given):
        key_bytes, iv_bytes = key.to_bytes(key_bits // 8, "big"), iv.to_bytes(16, "big")
        if mode == Mode.CBC:
            cipher = PyCryptodomeAES.new(key_bytes, PyCryptodomeAES.MODE_CBC, iv=iv_bytes)
        elif mode == Mode.CFB:
            cipher = PyCryptodomeAES.new(key_bytes, PyCryptodomeAES.MODE_CFB, iv=iv_bytes,
                                         segment_size=128)
        else:
            cipher = PyCryptodomeAES.new(key_bytes, PyCryptodomeAES.MODE_OFB, iv=iv_bytes)
        operate = cipher.decrypt if decrypt else cipher.encrypt
        results = []
        block = given
        for j in range(INNER):
            results.append(int.from_bytes(operate(block.to_bytes(16, "big")), "big"))
            block = iv if j == 0 else results[j - 1]
        return results[-2], results[-1]
    return message


def core_message(mode, key_bits, decrypt):
    """A ``message`` for :func:`mct` that runs the mode around the AES core's compiled model."""
    engine = ModeOfOperation(AES(key_bits), modes=(mode,))
    model = compile_model(engine)
    layout = engine.input.payload.shape()

    def request(block, iv=0, *, first=False, last=False):
        value = layout.const({"block": block, "iv": iv, "decrypt": decrypt, "first": first,
                              "last": last})
        return value.as_value().value

    def message(key, iv, given):
        operations = [LoadKey(key), PutInput(request(given, iv, first=True)),
                      PutInput(request(iv))]
        operations += [PutInput(request(0), chain=2)] * (INNER - 3)
        operations += [PutInput(request(0, last=True), chain=2)]
        run = run_model(model, engine, operations)
        assert (run.key.violations, run.input.violations, run.output.violations) == \
            ([], [], [])
        results = [layout_block(payload) for payload in run.results]
        assert len(results) == INNER
        # Each block after the second went in as the result two blocks before it.
        assert [layout_block(p) for p in run.input.payloads[2:]] == results[:-2]
        return results[-2], results[-1]
    return message


def layout_block(payload: int) -> int:
    """The block field of a mode's request or result (its low 128 bits)."""
    return payload & ((1 << 128) - 1)


def expected_iterations(records):
    return [(r.key, r.iv, r.given, r.expected) for r in records]


@modes
@key_sizes
@directions
def test_pycryptodome_reproduces_the_nist_file(mode, key_bits, decrypt):
    """The reading of the AESAVS algorithm, checked with a software AES against the file."""
    records = nist_records(mode, key_bits, decrypt)
    assert mct(key_bits, records[0], software_message(mode, key_bits, decrypt)) == \
        expected_iterations(records)


#: 100,000 blocks a file: AES-128 in the default run; 192 and 256 bits in the slow run (the
#: chaining does not depend on the key size, and the core's key sizes have their own MCT in
#: tests/test_aes_mct.py).
core_key_sizes = pytest.mark.parametrize("key_bits", [
    pytest.param(bits, id=f"aes{bits}", marks=[pytest.mark.slow] if bits != 128 else [])
    for bits in KEY_SIZES])


@hardware_modes
@core_key_sizes
@directions
def test_mode_and_core_pass_the_nist_file(mode, key_bits, decrypt):
    """All 100 outer iterations (100,000 blocks) by the hardware, against the file."""
    records = nist_records(mode, key_bits, decrypt)
    assert mct(key_bits, records[0], core_message(mode, key_bits, decrypt)) == \
        expected_iterations(records)
