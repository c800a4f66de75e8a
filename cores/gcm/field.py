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
SP 800-38D, the reference the tests hold the gateware to; :func:`reduce_wide` and
:func:`times_x_power` reduce a wide product and multiply by ``x**k`` in word form, written once
for Python integers and Amaranth values, from which the GHASH multipliers (:mod:`cipher_cores.cores.gcm.ghash`)
are built.
"""

from __future__ import annotations


__all__ = ["R", "BLOCK_BITS", "MASK", "degree_bit", "multiply", "times_x", "reduce_wide",
           "times_x_power"]


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


def reduce_wide(w, k: int):
    """Reduce a product that reaches degree ``127 + k``, on a Python integer or an Amaranth value
    alike (the result of a value is 128 bits wide).

    ``w`` holds the coefficients in a frame ``128 + k`` bits wide, continuing the integer bit
    order: bit ``127 + k - p`` is the coefficient of ``x**p``, so its ``k`` low bits are the
    degrees 128 and up. Each fold takes ``c`` of those low bits ``L`` off the frame (``w >> c``)
    and adds them back times ``x**128 = x**7 + x**2 + x + 1``: ``L * 0xE1`` carry-less (``L ^
    L << 5 ^ L << 6 ^ L << 7``) shifted left by ``121 - c``. Up to ``c = 121`` that lands below
    degree 128; wider products fold 64 bits at a time.
    """
    if not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative integer, not {k!r}")
    while k:
        c = k if k <= 121 else 64
        low = w & ((1 << c) - 1)
        w = (w >> c) ^ ((low ^ (low << 5) ^ (low << 6) ^ (low << 7)) << (121 - c))
        k -= c
        w = w & ((1 << (BLOCK_BITS + k)) - 1) if isinstance(w, int) else w[:BLOCK_BITS + k]
    return w


def times_x_power(v, k: int):
    """``v * x**k``, on a Python integer or an Amaranth value alike: ``v`` read in a frame ``k``
    bits wider is ``v * x**k`` before reduction (see :func:`reduce_wide`)."""
    return reduce_wide(v, k)
