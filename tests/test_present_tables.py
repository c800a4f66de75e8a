"""The PRESENT tables against their definitions in the paper (Bogdanov et al., CHES 2007)."""


import pytest

from cipher_cores.cores.present.tables import (BLOCK_BITS, COUNTER_BITS, INV_PERMUTATION, INV_SBOX,
                                  KEY_COUNTER_LSB, KEY_SBOX_NIBBLES, KEY_SIZES, PERMUTATION,
                                  SBOX, permute_bit)
from cipher_cores.cores.catalog import KnownAnswer
from cipher_cores.cores.present.vectors import PAPER_VECTORS, parse_vectors


# The paper's S-box table: S[x] for x = 0, 1, ..., F.
PUBLISHED_SBOX = "C 5 6 B 9 0 A D 3 E F 8 4 7 1 2"
# The first row of the paper's pLayer table: P(i) for i = 0..15.
PUBLISHED_PERMUTATION_ROW = [0, 16, 32, 48, 1, 17, 33, 49, 2, 18, 34, 50, 3, 19, 35, 51]


def test_sbox_is_the_published_table():
    assert SBOX == tuple(int(digit, 16) for digit in PUBLISHED_SBOX.split())


def test_inverse_sbox_inverts_sbox():
    assert sorted(SBOX) == list(range(16))
    assert all(INV_SBOX[SBOX[x]] == x for x in range(16))
    assert all(SBOX[INV_SBOX[y]] == y for y in range(16))


def test_sbox_has_the_design_properties():
    # The paper's S-box criteria: no fixed point; for every non-zero input difference, no output
    # difference occurs more than 4 times; every non-zero linear approximation holds for 4..12 of
    # the 16 inputs (Walsh coefficient at most 8).
    assert all(SBOX[x] != x for x in range(16))
    for delta_in in range(1, 16):
        counts = [0] * 16
        for x in range(16):
            counts[SBOX[x] ^ SBOX[x ^ delta_in]] += 1
        assert max(counts) <= 4
    for a in range(1, 16):
        for b in range(1, 16):
            agree = sum(bin(a & x).count("1") % 2 == bin(b & SBOX[x]).count("1") % 2
                        for x in range(16))
            assert abs(agree - 8) <= 4


def test_permutation_is_its_definition():
    assert PERMUTATION == tuple([16 * i % 63 for i in range(63)] + [63])
    assert list(PERMUTATION[:16]) == PUBLISHED_PERMUTATION_ROW
    assert permute_bit(63) == 63


def test_permute_bit_rejects_out_of_range_index():
    with pytest.raises(ValueError, match=r"^Bit index must be in range 0\.\.63, not 64$"):
        permute_bit(64)


def test_inverse_permutation_inverts_permutation():
    assert sorted(PERMUTATION) == list(range(BLOCK_BITS))
    assert all(INV_PERMUTATION[PERMUTATION[i]] == i for i in range(BLOCK_BITS))
    assert all(PERMUTATION[INV_PERMUTATION[j]] == j for j in range(BLOCK_BITS))


def test_permutation_spreads_each_sbox_output_over_four_sboxes():
    for nibble in range(16):
        targets = {PERMUTATION[4 * nibble + bit] // 4 for bit in range(4)}
        assert len(targets) == 4


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_key_schedule_fields_are_the_papers(key_bits):
    top = key_bits - 4
    expected_nibbles = (top,) if key_bits == 80 else (top, top - 4)
    assert KEY_SBOX_NIBBLES[key_bits] == expected_nibbles
    # k19..k15 for 80-bit keys, k66..k62 for 128-bit keys.
    assert KEY_COUNTER_LSB[key_bits] + COUNTER_BITS - 1 == {80: 19, 128: 66}[key_bits]


def test_paper_table_file_parses():
    vectors = PAPER_VECTORS
    assert [v.key_bits for v in vectors] == [80] * 4 + [128] * 4
    assert vectors[0] == KnownAnswer(80, 0, 0, 0x5579c1387b228445, "PRESENT paper")
    assert vectors[-1] == KnownAnswer(128, (1 << 128) - 1, (1 << 64) - 1, 0x628d9fbd4218e5b4,
                                      "PRESENT paper")


@pytest.mark.parametrize("text, message", [
    ("0 | 0", r"^Line 1: expected 3 columns separated by '\|', found 2$"),
    ("# c\n\n0000000000000000 | 00000000000000000000 | 000000000000000g",
     r"^Line 3: '000000000000000g' is not a hexadecimal number$"),
    ("00000000 | 00000000000000000000 | 0000000000000000", r"^Line 1: blocks must have 16 digits$"),
    ("0000000000000000 | 0000 | 0000000000000000",
     r"^Line 1: a key must have 20 or 32 digits, not 4$"),
])
def test_paper_table_rejects_malformed_rows(text, message):
    with pytest.raises(ValueError, match=message):
        parse_vectors(text)
