"""The plain-Python AES model against FIPS-197 and pycryptodome."""

import random

import pytest
from cipher_cores.cores.aes.reference import decrypt_block, encrypt_block, expand_key_words, round_keys
from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_C

from .support.helpers import aes_oracle


@pytest.mark.parametrize("vector", FIPS197_APPENDIX_C, ids=lambda v: f"aes{v.key_bits}")
def test_appendix_c_vectors(vector):
    assert encrypt_block(vector.key, vector.plaintext, vector.key_bits) == vector.ciphertext
    assert decrypt_block(vector.key, vector.ciphertext, vector.key_bits) == vector.plaintext


def test_key_expansion_of_fips197_appendix_a1():
    key = 0x2b7e151628aed2a6abf7158809cf4f3c
    words = expand_key_words(key, 128)
    assert len(words) == 44
    # First and last words derived in Appendix A.1.
    assert words[4] == 0xa0fafe17
    assert words[43] == 0xb6630ca6


@pytest.mark.parametrize("key_bits, rounds", [(128, 10), (192, 12), (256, 14)])
def test_round_key_count(key_bits, rounds):
    assert len(round_keys(0, key_bits)) == rounds + 1


@pytest.mark.parametrize("key_bits", [128, 192, 256])
def test_random_blocks_match_pycryptodome(key_bits):
    rng = random.Random(key_bits)
    for _ in range(50):
        key, block = rng.getrandbits(key_bits), rng.getrandbits(128)
        expected = aes_oracle(key, key_bits, block, decrypt=False)
        assert encrypt_block(key, block, key_bits) == expected
        assert decrypt_block(key, expected, key_bits) == block


@pytest.mark.parametrize("key_bits, error, message", [
    (64, ValueError, "key_bits must be 128, 192 or 256, not 64"),
    (None, TypeError, "key_bits must be an integer (128, 192 or 256), not None"),
])
def test_bad_key_bits(key_bits, error, message):
    with pytest.raises(error) as info:
        encrypt_block(0, 0, key_bits)
    assert str(info.value) == message
