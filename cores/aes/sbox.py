"""The AES S-box and inverse S-box, computed from their definition in FIPS-197 5.1.1.

``SBOX[x]`` is the affine map of the multiplicative inverse of ``x`` in GF(2^8); ``INV_SBOX`` is its
inverse permutation. These two tables are the only definition of SubBytes in the library: the
hardware, the reference model and the tests all read them.
"""

from .gf import gf_inverse


__all__ = ["affine", "SBOX", "INV_SBOX"]


def affine(b: int) -> int:
    """The affine transformation of FIPS-197 equation (5.1), with the constant c = {63}."""
    result = 0
    for i in range(8):
        bit = (b >> i) ^ (b >> (i + 4) % 8) ^ (b >> (i + 5) % 8) ^ (b >> (i + 6) % 8) \
            ^ (b >> (i + 7) % 8) ^ (0x63 >> i)
        result |= (bit & 1) << i
    return result


SBOX = tuple(affine(gf_inverse(x)) for x in range(256))
INV_SBOX = tuple(SBOX.index(y) for y in range(256))
