"""The constants of PRESENT (Bogdanov et al., CHES 2007), defined once.

The S-box is the 4-bit table published in the paper; its inverse, the bit permutation pLayer and
its inverse are computed from their definitions. The reference model, the hardware and the tests
all read these tables, so there is a single definition of each step.

States are the integer b63..b0 of the paper and keys the integer k79..k0 (k127..k0): bit ``i`` of
the integer is bit ``b_i`` (``k_i``).
"""

__all__ = [
    "ROUNDS", "BLOCK_BITS", "KEY_SIZES", "COUNTER_BITS",
    "SBOX", "INV_SBOX", "permute_bit", "PERMUTATION", "INV_PERMUTATION",
    "KEY_ROTATION", "KEY_SBOX_NIBBLES", "KEY_COUNTER_LSB",
]


#: Number of rounds; there are ``ROUNDS + 1`` round keys K1..K32.
ROUNDS = 31
#: Width of a block (the state b63..b0).
BLOCK_BITS = 64
#: The two key sizes of PRESENT-80 and PRESENT-128.
KEY_SIZES = (80, 128)
#: Width of the round counter added into the key register by the key schedule.
COUNTER_BITS = 5

#: The S-box S[x] as published (CHES 2007, Table 1): x = 0..F gives C 5 6 B 9 0 A D 3 E F 8 4 7 1 2.
SBOX = tuple(int(digit, 16) for digit in "C56B90AD3EF84712")
#: The inverse S-box, computed from :data:`SBOX`.
INV_SBOX = tuple(SBOX.index(y) for y in range(16))


def permute_bit(i: int) -> int:
    """The pLayer: bit ``i`` of the state moves to bit position P(i) = 16 * i mod 63, P(63) = 63."""
    if not 0 <= i < BLOCK_BITS:
        raise ValueError(f"Bit index must be in range 0..63, not {i!r}")
    return 63 if i == 63 else (16 * i) % 63


#: ``PERMUTATION[i]`` is P(i), the position bit ``i`` moves to.
PERMUTATION = tuple(permute_bit(i) for i in range(BLOCK_BITS))
#: ``INV_PERMUTATION[j]`` is P^-1(j), the bit that moves to position ``j``.
INV_PERMUTATION = tuple(PERMUTATION.index(j) for j in range(BLOCK_BITS))

#: Each key schedule update first rotates the key register left by this many bits.
KEY_ROTATION = 61
#: The least significant bit of each key-register nibble that then goes through the S-box
#: (k79..k76 for 80-bit keys; k127..k124 and k123..k120 for 128-bit keys).
KEY_SBOX_NIBBLES = {80: (76,), 128: (124, 120)}
#: The least significant bit of the five key-register bits the round counter is added to
#: (k19..k15 for 80-bit keys, k66..k62 for 128-bit keys).
KEY_COUNTER_LSB = {80: 15, 128: 62}
