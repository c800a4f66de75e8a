# amaranth: UnusedElaboratable=no
"""The AES core against FIPS-197, the NIST AESAVS ECB files and pycryptodome. The stream
contract and the measured cycle figures are checked in ``tests/test_contract.py``.

The AESAVS files run on the compiled (CXXRTL) simulator, whose agreement with Amaranth's, cycle
for cycle, ``tests/test_sim_backends.py`` checks; everything else here on Amaranth's."""

import random

import pytest
from amaranth.hdl import Fragment

from cipher_cores.cores.aes import AES
from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_C
from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature

from .support.helpers import LoadKey, Process, expected_results, random_operations, simulate_cipher
from .support.nist import AESAVS_KINDS, aesavs_ecb_encrypt_operations, aesavs_ecb_operations


KEY_SIZES = (128, 192, 256)
ROUNDS = {128: 10, 192: 12, 256: 14}


def aes_config(key_bits, sbox="bram"):
    return get_core("aes").config(key_bits, sbox=sbox)


def assert_clean_run(run, expected):
    assert run.results == expected
    assert run.output.violations == []


# Known answers

@pytest.mark.parametrize("sbox", ["bram", "logic", "boolean"])
@pytest.mark.parametrize("vector", FIPS197_APPENDIX_C, ids=lambda v: f"aes{v.key_bits}")
def test_fips197_appendix_c_both_directions(vector, sbox):
    run = simulate_cipher(AES(vector.key_bits, sbox=sbox), [
        LoadKey(vector.key),
        Process(vector.plaintext, decrypt=False),
        Process(vector.ciphertext, decrypt=True),
    ])
    assert_clean_run(run, [vector.ciphertext, vector.plaintext])


@pytest.mark.parametrize("key_bits", KEY_SIZES)
@pytest.mark.parametrize("kind", AESAVS_KINDS)
def test_aesavs_ecb_file(kind, key_bits):
    """Every vector of the file, encrypt and decrypt sections, one compiled simulation; the key
    is loaded again only when it changes, so some blocks follow a key change and others run back
    to back."""
    operations, expected = aesavs_ecb_operations(kind, key_bits)
    run = simulate_cipher(AES(key_bits), operations, backend="cxxrtl")
    assert_clean_run(run, expected)


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_encrypt_only_core_passes_the_aesavs_encrypt_sections(key_bits):
    """``decrypt=False``: the encrypt sections of every ECB file; and a block whose ``decrypt``
    bit is set is encrypted all the same (the core has no inverse path to take)."""
    operations, expected = aesavs_ecb_encrypt_operations(key_bits)
    fips, = (v for v in FIPS197_APPENDIX_C if v.key_bits == key_bits)
    operations += [LoadKey(fips.key), Process(fips.plaintext, decrypt=True)]
    expected.append(fips.ciphertext)
    core = AES(key_bits, decrypt=False)
    assert core.decrypts is False
    assert_clean_run(simulate_cipher(core, operations), expected)


def test_encrypt_only_parameter_is_checked():
    with pytest.raises(TypeError, match=r"decrypt must be a bool \(True or False\), not 'no'"):
        AES(128, decrypt="no")


# Differential tests against pycryptodome

#: Boolean S-boxes (13 to 50 s each in the Python simulator) are in the slow run; in the default
#: run tests/test_aes_pycryptodome.py checks AES-128 with Boolean S-boxes against pycryptodome.
@pytest.mark.parametrize("key_bits, sbox", [
    pytest.param(key_bits, sbox, id=f"{key_bits}-{sbox}",
                 marks=pytest.mark.slow if sbox == "boolean" else ())
    for key_bits in KEY_SIZES for sbox in ("bram", "logic", "boolean")])
def test_random_keys_and_blocks_match_pycryptodome(key_bits, sbox):
    config = aes_config(key_bits, sbox)
    rng = random.Random(f"differential-{key_bits}-{sbox}")
    operations = random_operations(config, rng, keys=8, blocks_per_key=6)
    assert_clean_run(simulate_cipher(config.build(), operations),
                     expected_results(config, operations))


@pytest.mark.slow
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_long_random_sweep_matches_pycryptodome(key_bits):
    config = aes_config(key_bits)
    rng = random.Random(f"sweep-{key_bits}")
    operations = random_operations(config, rng, keys=100, blocks_per_key=20)
    run = simulate_cipher(config.build(), operations, rng=rng, max_gap=2, max_stall=2)
    assert_clean_run(run, expected_results(config, operations))


# Cycle figures (tests/test_contract.py measures them on every configuration)

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_latency_interval_and_key_load_are_nr_plus_one(key_bits):
    core = AES(key_bits)
    nr = ROUNDS[key_bits]
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == (nr + 1,) * 3


# Construction

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_block_cipher_signature(key_bits):
    core = AES(key_bits)
    assert core.signature == BlockCipherSignature(128, key_bits)
    assert core.key_bits == key_bits
    assert core.sbox == "bram"
    Fragment.get(core, None)  # elaborates with this signature


@pytest.mark.parametrize("key_bits, error, message", [
    (100, ValueError, "key_bits must be 128, 192 or 256, not 100"),
    (80, ValueError, "key_bits must be 128, 192 or 256, not 80"),
    ("128", TypeError, "key_bits must be an integer (128, 192 or 256), not '128'"),
    (128.0, TypeError, "key_bits must be an integer (128, 192 or 256), not 128.0"),
])
def test_bad_key_bits_is_rejected_with_the_allowed_values(key_bits, error, message):
    with pytest.raises(error) as info:
        AES(key_bits)
    assert str(info.value) == message


@pytest.mark.parametrize("sbox, error, message", [
    ("rom", ValueError, "sbox must be 'logic', 'bram' or 'boolean', not 'rom'"),
    (None, TypeError, "sbox must be a string ('logic', 'bram' or 'boolean'), not None"),
])
def test_bad_sbox_is_rejected_with_the_allowed_values(sbox, error, message):
    with pytest.raises(error) as info:
        AES(128, sbox=sbox)
    assert str(info.value) == message
