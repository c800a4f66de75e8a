"""GF(2^128) as GCM uses it (NIST SP 800-38D, section 6.3), on the library's integers.

Bit order
---------
SP 800-38D numbers the bits of a block from the left: bit 0 is the most significant bit of
byte 0. As a field element, bit ``i`` is the coefficient of ``x**i`` of a polynomial modulo
``x**128 + x**7 + x**2 + x + 1``. The library holds a block as ``int.from_bytes(block, "big")``,
so the coefficient of ``x**i`` is **bit 127 - i of the integer**: the integer's most
significant bit is ``x**0`` and its least significant bit is ``x**127``. Multiplying by ``x``
therefore shifts the integer *right* by one, and the ``x**127`` coefficient that falls off (the
integer's bit 0) comes back as ``x**7 + x**2 + x + 1``, the constant :data:`R` (``0xE1`` followed by
15 zero bytes) of SP 800-38D.

Everything the hardware needs is derived here, once: :func:`multiply` is Algorithm 1 of
SP 800-38D, the reference the tests hold the gateware to; :func:`times_x_power` is "multiply by
``x**k``" in word form, written once for Python integers and Amaranth values, from which the GHASH
multipliers (:mod:`cores.gcm.ghash`) are built.
"""

from __future__ import annotations


__all__ = ["R", "BLOCK_BITS", "MASK", "degree_bit", "multiply", "times_x", "times_x_power"]


#: Bits of a block and of a field element.
BLOCK_BITS = 128
#: All 128 bits.
MASK = (1 << BLOCK_BITS) - 1
#: ``x**128`` reduced: ``x**7 + x**2 + x + 1`` in the integer bit order (SP 800-38D's R).
R = 0xE1 << 120


def degree_bit(degree: int) -> int:
    """The bit of the integer that holds the coefficient of ``x**degree`` (0 <= degree < 128)."""
    if not 0 <= degree < BLOCK_BITS:
        raise ValueError(f"degree must be 0..127, not {degree!r}")
    return BLOCK_BITS - 1 - degree


def multiply(x: int, y: int) -> int:
    """``x * y`` in GF(2^128): Algorithm 1 of SP 800-38D (bit by bit, ``x``'s bit 0 first)."""
    z, v = 0, y
    for i in range(BLOCK_BITS):
        if (x >> degree_bit(i)) & 1:
            z ^= v
        v = (v >> 1) ^ (R if v & 1 else 0)
    return z


def times_x(v: int) -> int:
    """``v * x``: one step of Algorithm 1's ``V`` update."""
    return (v >> 1) ^ (R if v & 1 else 0)


def times_x_power(v, k: int):
    """``v * x**k``, on a Python integer or an Amaranth value alike (the result of a value is
    128 bits wide).

    Word form of ``k`` steps of :func:`times_x`: ``v`` shifts right by ``k`` and its ``k`` low
    bits ``L`` (degrees ``128 - k`` to 127) come back multiplied by ``x**128 = x**7 + x**2 + x +
    1``, which is ``L * 0xE1`` carry-less (``L ^ L << 5 ^ L << 6 ^ L << 7``) shifted left by
    ``121 - k``. Beyond ``k = 121`` that product would reach degree 128 again, so larger powers go
    in two halves.
    """
    if not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative integer, not {k!r}")
    if k == 0:
        return v
    if k > 121:
        return times_x_power(times_x_power(v, k // 2), k - k // 2)
    low = v & ((1 << k) - 1)
    result = (v >> k) ^ ((low ^ (low << 5) ^ (low << 6) ^ (low << 7)) << (121 - k))
    return result & MASK if isinstance(result, int) else result[:BLOCK_BITS]
