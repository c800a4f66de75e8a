"""The plain-Python PRESENT reference model against the paper's table."""

import random

import pytest

from cipher_cores.cores.present.reference import (check_key_bits, decrypt_block, encrypt_block, final_key,
                                     p_layer, round_key, round_keys, s_layer, update_key)
from cipher_cores.cores.present.tables import KEY_SIZES, ROUNDS
from cipher_cores.cores.present.vectors import PAPER_VECTORS




def vector_id(vector):
    return f"{vector.key_bits}-{vector.key:x}-{vector.plaintext:x}"


@pytest.mark.parametrize("vector", PAPER_VECTORS, ids=vector_id)
def test_encrypt_paper_vector(vector):
    assert encrypt_block(vector.key, vector.plaintext, vector.key_bits) == vector.ciphertext


@pytest.mark.parametrize("vector", PAPER_VECTORS, ids=vector_id)
def test_decrypt_paper_vector(vector):
    assert decrypt_block(vector.key, vector.ciphertext, vector.key_bits) == vector.plaintext


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_decrypt_inverts_encrypt(key_bits):
    rng = random.Random(key_bits)
    for _ in range(50):
        key, block = rng.getrandbits(key_bits), rng.getrandbits(64)
        assert decrypt_block(key, encrypt_block(key, block, key_bits), key_bits) == block


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_inverse_key_update_undoes_update(key_bits):
    rng = random.Random(key_bits)
    for counter in range(1, ROUNDS + 1):
        key = rng.getrandbits(key_bits)
        updated = update_key(key, counter, key_bits)
        assert updated != key
        assert update_key(updated, counter, key_bits, inverse=True) == key


def test_key_update_80_rotates_substitutes_and_adds_counter():
    # All-zero key, counter 1: the rotation leaves zeros, S[0] = C goes to k79..k76, 1 to k15.
    assert update_key(0, 1, 80) == (0xc << 76) | (1 << 15)


def test_key_update_128_rotates_substitutes_and_adds_counter():
    # S[0] = C goes to both k127..k124 and k123..k120; counter 1 to k62.
    assert update_key(0, 1, 128) == (0xcc << 120) | (1 << 62)


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_round_keys_are_the_leftmost_64_bits(key_bits):
    key = random.Random(1).getrandbits(key_bits)
    keys = round_keys(key, key_bits)
    assert len(keys) == ROUNDS + 1
    assert keys[0] == key >> (key_bits - 64)
    assert keys[-1] == round_key(final_key(key, key_bits), key_bits)


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_final_key_runs_backwards_to_the_key(key_bits):
    key = random.Random(2).getrandbits(key_bits)
    register = final_key(key, key_bits)
    for counter in range(ROUNDS, 0, -1):
        register = update_key(register, counter, key_bits, inverse=True)
    assert register == key


def test_layers_invert():
    rng = random.Random(3)
    for _ in range(50):
        state = rng.getrandbits(64)
        assert s_layer(s_layer(state), inverse=True) == state
        assert p_layer(p_layer(state), inverse=True) == state


def test_p_layer_moves_bit_i_to_p_i():
    assert p_layer(1 << 1) == 1 << 16
    assert p_layer(1 << 4) == 1 << 1
    assert p_layer(1 << 63) == 1 << 63


@pytest.mark.parametrize("key_bits, error, message", [
    (64, ValueError, r"^key_bits must be 80 or 128, not 64$"),
    ("80", TypeError, r"^key_bits must be an integer \(80 or 128\), not '80'$"),
    (True, TypeError, r"^key_bits must be an integer \(80 or 128\), not True$"),
])
def test_check_key_bits_rejects(key_bits, error, message):
    with pytest.raises(error, match=message):
        check_key_bits(key_bits)
