"""Arithmetic in GF(2^8) modulo the AES polynomial x^8 + x^4 + x^3 + x + 1 (FIPS-197, 4).

Plain Python on integers 0..255: used to compute the S-boxes and the MixColumns constants, never
typed in as tables.
"""

__all__ = ["AES_POLYNOMIAL", "xtime", "gf_mul", "gf_inverse"]


AES_POLYNOMIAL = 0x11b


def xtime(a: int) -> int:
    """Multiply ``a`` by x (the byte {02})."""
    a <<= 1
    return a ^ AES_POLYNOMIAL if a & 0x100 else a


def gf_mul(a: int, b: int) -> int:
    """Multiply two bytes in GF(2^8)."""
    product = 0
    while b:
        if b & 1:
            product ^= a
        a = xtime(a)
        b >>= 1
    return product


def gf_inverse(a: int) -> int:
    """The multiplicative inverse of ``a``, with 0 mapped to 0 as FIPS-197 5.1.1 does."""
    # a^254 = a^-1 for a != 0, since the multiplicative group has order 255; 0^254 = 0.
    result, power, exponent = 1, a, 254
    while exponent:
        if exponent & 1:
            result = gf_mul(result, power)
        power = gf_mul(power, power)
        exponent >>= 1
    return result if a else 0
