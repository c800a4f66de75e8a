"""A plain-Python PRESENT reference model (Bogdanov et al., CHES 2007), for 80- and 128-bit keys.

Blocks are the integer b63..b0 of the paper, keys the integer k79..k0 (k127..k0). Decryption uses
the round keys of the forward key schedule in reverse order, as in the paper; it does not use
:func:`update_key` with ``inverse=True`` (which the hardware uses), so the two are checked against
each other.
"""

from .tables import (BLOCK_BITS, COUNTER_BITS, INV_PERMUTATION, INV_SBOX, KEY_COUNTER_LSB,
                     KEY_ROTATION, KEY_SBOX_NIBBLES, KEY_SIZES, PERMUTATION, ROUNDS, SBOX)


__all__ = [
    "check_key_bits", "s_layer", "p_layer", "update_key", "round_key", "round_keys",
    "final_key", "encrypt_block", "decrypt_block",
]


def check_key_bits(key_bits) -> int:
    """Return ``key_bits`` if it is a PRESENT key size; raise ``TypeError``/``ValueError`` if not."""
    if not isinstance(key_bits, int) or isinstance(key_bits, bool):
        raise TypeError(f"key_bits must be an integer (80 or 128), not {key_bits!r}")
    if key_bits not in KEY_SIZES:
        raise ValueError(f"key_bits must be 80 or 128, not {key_bits!r}")
    return key_bits


def s_layer(state: int, *, inverse: bool = False) -> int:
    """sBoxLayer: the S-box (or its inverse) on each nibble w15..w0 of ``state``."""
    table = INV_SBOX if inverse else SBOX
    result = 0
    for i in range(BLOCK_BITS // 4):
        result |= table[(state >> (4 * i)) & 0xf] << (4 * i)
    return result


def p_layer(state: int, *, inverse: bool = False) -> int:
    """pLayer: bit ``i`` of ``state`` moves to bit P(i) (to P^-1(i) if ``inverse``)."""
    permutation = INV_PERMUTATION if inverse else PERMUTATION
    result = 0
    for i in range(BLOCK_BITS):
        result |= ((state >> i) & 1) << permutation[i]
    return result


def _rotate_left(value: int, amount: int, width: int) -> int:
    amount %= width
    mask = (1 << width) - 1
    return ((value << amount) | (value >> (width - amount))) & mask


def update_key(key: int, counter: int, key_bits: int = 80, *, inverse: bool = False) -> int:
    """One update of the key register with round counter ``counter`` (1..31).

    Forward: rotate left by 61, pass the top nibble(s) through the S-box, add ``counter`` to
    k19..k15 (k66..k62 for 128-bit keys). With ``inverse``, undo that update.
    """
    check_key_bits(key_bits)
    counter_lsb = KEY_COUNTER_LSB[key_bits]
    counter_mask = ((1 << COUNTER_BITS) - 1) << counter_lsb
    if inverse:
        key ^= (counter << counter_lsb) & counter_mask
    else:
        key = _rotate_left(key, KEY_ROTATION, key_bits)
    table = INV_SBOX if inverse else SBOX
    for lsb in KEY_SBOX_NIBBLES[key_bits]:
        key = key & ~(0xf << lsb) | table[(key >> lsb) & 0xf] << lsb
    if inverse:
        key = _rotate_left(key, -KEY_ROTATION, key_bits)
    else:
        key ^= (counter << counter_lsb) & counter_mask
    return key


def round_key(key_register: int, key_bits: int = 80) -> int:
    """The round key: the 64 leftmost bits of the key register."""
    return key_register >> (key_bits - BLOCK_BITS)


def round_keys(key: int, key_bits: int = 80) -> list:
    """The 32 round keys K1..K32 (``round_keys(...)[0]`` is K1)."""
    keys = [round_key(key, key_bits)]
    for counter in range(1, ROUNDS + 1):
        key = update_key(key, counter, key_bits)
        keys.append(round_key(key, key_bits))
    return keys


def final_key(key: int, key_bits: int = 80) -> int:
    """The key register after all 31 updates: its 64 leftmost bits are K32, the first round key
    of decryption."""
    for counter in range(1, ROUNDS + 1):
        key = update_key(key, counter, key_bits)
    return key


def encrypt_block(key: int, block: int, key_bits: int = 80) -> int:
    """Encrypt ``block`` (CHES 2007, Figure 1)."""
    keys = round_keys(key, key_bits)
    state = block
    for i in range(ROUNDS):
        state = p_layer(s_layer(state ^ keys[i]))
    return state ^ keys[ROUNDS]


def decrypt_block(key: int, block: int, key_bits: int = 80) -> int:
    """Decrypt ``block``: the inverse layers with the round keys in reverse order."""
    keys = round_keys(key, key_bits)
    state = block ^ keys[ROUNDS]
    for i in reversed(range(ROUNDS)):
        state = s_layer(p_layer(state, inverse=True), inverse=True) ^ keys[i]
    return state
