"""The AES S-boxes and transformation constants against their definitions in FIPS-197."""

import random

import pytest

from cipher_cores.cores.aes.gf import gf_inverse, gf_mul, xtime
from cipher_cores.cores.aes.sbox import INV_SBOX, SBOX, affine
from cipher_cores.cores.aes.transforms import (INV_MIX_COLUMNS, INV_MIX_PREPROCESS, INV_SHIFT_ROWS,
                                  MIX_COLUMNS, SHIFT_ROWS, column_transform, mix_columns)


def test_gf_inverse_is_the_multiplicative_inverse():
    assert gf_inverse(0) == 0
    for a in range(1, 256):
        assert gf_mul(a, gf_inverse(a)) == 1


def test_gf_multiplication_example_of_fips197_4_2():
    # FIPS-197 4.2: {57} . {83} = {c1}, and 4.2.1: {57} . {13} = {fe}.
    assert gf_mul(0x57, 0x83) == 0xc1
    assert gf_mul(0x57, 0x13) == 0xfe
    assert [xtime(v) for v in (0x57, 0xae, 0x47, 0x8e)] == [0xae, 0x47, 0x8e, 0x07]


def test_sbox_is_the_affine_map_of_the_inverse():
    for x in range(256):
        assert SBOX[x] == affine(gf_inverse(x))


def test_sbox_entries_printed_in_fips197():
    # FIPS-197 5.1.1: S({53}) = {ed}; Figure 7 starts with 63 7c 77 7b.
    assert SBOX[0x53] == 0xed
    assert SBOX[:4] == (0x63, 0x7c, 0x77, 0x7b)
    assert INV_SBOX[:4] == (0x52, 0x09, 0x6a, 0xd5)


def test_sbox_is_a_permutation_without_fixed_points_and_inverse_undoes_it():
    assert sorted(SBOX) == list(range(256))
    for x in range(256):
        assert INV_SBOX[SBOX[x]] == x
        assert SBOX[x] != x and SBOX[x] != x ^ 0xff


def test_shift_rows_rotates_row_r_left_by_r_and_inverse_undoes_it():
    for c in range(4):
        for r in range(4):
            assert SHIFT_ROWS[r + 4 * c] == r + 4 * ((c + r) % 4)
    assert [SHIFT_ROWS[INV_SHIFT_ROWS[i]] for i in range(16)] == list(range(16))


def test_mix_columns_and_its_inverse_are_inverse_matrices():
    rng = random.Random(1)
    for _ in range(20):
        state = [rng.randrange(256) for _ in range(16)]
        assert mix_columns(mix_columns(state), inverse=True) == state
    assert MIX_COLUMNS == (2, 3, 1, 1) and INV_MIX_COLUMNS == (0x0e, 0x0b, 0x0d, 0x09)


@pytest.mark.parametrize("seed", range(5))
def test_inv_mix_columns_is_mix_columns_after_preprocessing(seed):
    rng = random.Random(seed)
    state = [rng.randrange(256) for _ in range(16)]
    assert mix_columns(column_transform(state, INV_MIX_PREPROCESS)) == \
        mix_columns(state, inverse=True)
