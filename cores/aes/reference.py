"""A plain-Python AES reference model (FIPS-197), for all three key sizes.

Blocks and keys are integers: ``int.from_bytes(fips197_bytes, "big")``.
"""

from .transforms import (ROUNDS, KEY_WORDS, add_round_key, block_to_bytes, bytes_to_block,
                         key_word_kind, mix_columns, rcon, rot_word, shift_rows, sub_bytes,
                         sub_word)


__all__ = ["check_key_bits", "expand_key_words", "round_keys", "encrypt_block", "decrypt_block"]


def check_key_bits(key_bits) -> int:
    """Return ``key_bits`` if it is an AES key size; raise ``TypeError``/``ValueError`` if not."""
    if not isinstance(key_bits, int) or isinstance(key_bits, bool):
        raise TypeError(f"key_bits must be an integer (128, 192 or 256), not {key_bits!r}")
    if key_bits not in ROUNDS:
        raise ValueError(f"key_bits must be 128, 192 or 256, not {key_bits!r}")
    return key_bits


def expand_key_words(key: int, key_bits: int, count: int | None = None) -> list:
    """The key schedule w[0..count-1] (FIPS-197 5.2) as 32-bit integers.

    ``count`` defaults to 4 * (Nr + 1); a larger count continues the same recurrence.
    """
    check_key_bits(key_bits)
    nk = KEY_WORDS[key_bits]
    if count is None:
        count = 4 * (ROUNDS[key_bits] + 1)
    words = [(key >> (32 * (nk - 1 - i))) & 0xffffffff for i in range(nk)]
    for i in range(nk, count):
        temp = words[i - 1]
        kind = key_word_kind(i, nk)
        if kind == "rot_sub_rcon":
            temp = sub_word(rot_word(temp)) ^ rcon(i // nk)
        elif kind == "sub":
            temp = sub_word(temp)
        words.append(words[i - nk] ^ temp)
    return words


def round_keys(key: int, key_bits: int) -> list:
    """The Nr + 1 round keys as 128-bit integers, round key 0 first."""
    words = expand_key_words(key, key_bits)
    return [(words[4 * r] << 96) | (words[4 * r + 1] << 64) | (words[4 * r + 2] << 32)
            | words[4 * r + 3] for r in range(len(words) // 4)]


def encrypt_block(key: int, block: int, key_bits: int = 128) -> int:
    """Cipher(), FIPS-197 5.1."""
    keys = round_keys(key, key_bits)
    nr = ROUNDS[key_bits]
    state = add_round_key(block_to_bytes(block), keys[0])
    for r in range(1, nr):
        state = add_round_key(mix_columns(shift_rows(sub_bytes(state))), keys[r])
    state = add_round_key(shift_rows(sub_bytes(state)), keys[nr])
    return bytes_to_block(state)


def decrypt_block(key: int, block: int, key_bits: int = 128) -> int:
    """InvCipher(), FIPS-197 5.3."""
    keys = round_keys(key, key_bits)
    nr = ROUNDS[key_bits]
    state = add_round_key(block_to_bytes(block), keys[nr])
    for r in range(nr - 1, 0, -1):
        state = shift_rows(state, inverse=True)
        state = sub_bytes(state, inverse=True)
        state = mix_columns(add_round_key(state, keys[r]), inverse=True)
    state = sub_bytes(shift_rows(state, inverse=True), inverse=True)
    return bytes_to_block(add_round_key(state, keys[0]))
