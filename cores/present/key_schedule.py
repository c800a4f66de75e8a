"""The PRESENT key-register update as a combinational Amaranth value, built from :mod:`.tables`.

Bit ``i`` of a key value is bit ``k_i`` of the paper's key register k79..k0 (k127..k0).
"""

from amaranth.hdl import Cat, Value

from .sbox import sbox
from .tables import BLOCK_BITS, COUNTER_BITS, KEY_COUNTER_LSB, KEY_ROTATION, KEY_SBOX_NIBBLES


__all__ = ["update_key", "round_key"]


def _substitute_and_add(key: Value, counter: Value, key_bits: int, inverse: bool) -> Value:
    # The S-box on the top nibble(s) and the round counter added into five bits. These fields are
    # disjoint, so the order of the two steps does not matter.
    fields = [(lsb, 4, sbox(key[lsb:lsb + 4], inverse=inverse))
              for lsb in KEY_SBOX_NIBBLES[key_bits]]
    lsb = KEY_COUNTER_LSB[key_bits]
    fields.append((lsb, COUNTER_BITS, key[lsb:lsb + COUNTER_BITS] ^ counter[:COUNTER_BITS]))
    parts, position = [], 0
    for lsb, width, value in sorted(fields, key=lambda field: field[0]):
        assert lsb >= position, "key schedule fields overlap"
        parts += [key[position:lsb], value]
        position = lsb + width
    parts.append(key[position:])
    return Cat(*parts)


def update_key(key: Value, counter: Value, key_bits: int, *, inverse: bool = False) -> Value:
    """One update of the key register with the 5-bit round ``counter``.

    Forward: rotate left by 61, the S-box on the top nibble(s), add ``counter`` to k19..k15
    (k66..k62). With ``inverse``, the update undone: add ``counter``, the inverse S-box, rotate
    right by 61.
    """
    if inverse:
        return _substitute_and_add(key, counter, key_bits, inverse=True).rotate_right(KEY_ROTATION)
    return _substitute_and_add(key.rotate_left(KEY_ROTATION), counter, key_bits, inverse=False)


def round_key(key: Value, key_bits: int) -> Value:
    """The round key: the 64 leftmost bits of the key register."""
    return key[key_bits - BLOCK_BITS:]
