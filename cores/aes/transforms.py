"""The AES transformations of FIPS-197, defined once as plain Python.

The state is a sequence of 16 bytes in the FIPS-197 input order: byte ``r + 4*c`` is row ``r`` of
column ``c``. The reference model applies these functions to byte lists; the hardware builds its
wiring from the same permutations and coefficients, so there is a single definition of each step.
"""

from .gf import gf_mul, xtime
from .sbox import SBOX, INV_SBOX


__all__ = [
    "ROUNDS", "KEY_WORDS",
    "SHIFT_ROWS", "INV_SHIFT_ROWS", "MIX_COLUMNS", "INV_MIX_COLUMNS", "INV_MIX_PREPROCESS",
    "block_to_bytes", "bytes_to_block", "sub_bytes", "shift_rows", "column_transform", "mix_columns",
    "add_round_key", "rot_word", "sub_word", "rcon", "key_word_kind",
]


#: Number of rounds Nr for each key size (FIPS-197, Figure 4).
ROUNDS = {128: 10, 192: 12, 256: 14}
#: Number of 32-bit key words Nk for each key size.
KEY_WORDS = {128: 4, 192: 6, 256: 8}

#: ShiftRows (FIPS-197 5.1.2) as a byte permutation: output byte ``i`` is input byte
#: ``SHIFT_ROWS[i]``; row ``r`` is rotated left by ``r`` columns.
SHIFT_ROWS = tuple((r + 4 * ((c + r) % 4)) for c in range(4) for r in range(4))
#: InvShiftRows (FIPS-197 5.3.1), the inverse permutation.
INV_SHIFT_ROWS = tuple(SHIFT_ROWS.index(i) for i in range(16))

#: MixColumns coefficients (FIPS-197 5.1.3): output row ``r`` of a column is the sum over ``k`` of
#: ``MIX_COLUMNS[(k - r) % 4]`` times input row ``k``, i.e. a(x) = {03}x^3 + {01}x^2 + {01}x + {02}.
MIX_COLUMNS = (0x02, 0x03, 0x01, 0x01)
#: InvMixColumns coefficients (FIPS-197 5.3.3), a^-1(x) = {0b}x^3 + {0d}x^2 + {09}x + {0e}.
INV_MIX_COLUMNS = (0x0e, 0x0b, 0x0d, 0x09)
#: A column transformation P with InvMixColumns = MixColumns after P:
#: a^-1(x) = a(x) * ({04}x^2 + {05}) mod x^4 + 1. Lets one circuit serve both directions.
INV_MIX_PREPROCESS = (0x05, 0x00, 0x04, 0x00)


def block_to_bytes(block: int) -> list:
    """The 16 state bytes of a 128-bit block integer (most significant byte first)."""
    return list(block.to_bytes(16, "big"))


def bytes_to_block(state) -> int:
    """The 128-bit block integer of 16 state bytes."""
    return int.from_bytes(bytes(state), "big")


def sub_bytes(state, *, inverse: bool = False) -> list:
    table = INV_SBOX if inverse else SBOX
    return [table[b] for b in state]


def shift_rows(state, *, inverse: bool = False) -> list:
    permutation = INV_SHIFT_ROWS if inverse else SHIFT_ROWS
    return [state[permutation[i]] for i in range(16)]


def column_transform(state, coefficients) -> list:
    """Multiply each column by the circulant matrix whose first row is ``coefficients``."""
    result = []
    for c in range(4):
        column = state[4 * c:4 * c + 4]
        for r in range(4):
            value = 0
            for k in range(4):
                value ^= gf_mul(coefficients[(k - r) % 4], column[k])
            result.append(value)
    return result


def mix_columns(state, *, inverse: bool = False) -> list:
    return column_transform(state, INV_MIX_COLUMNS if inverse else MIX_COLUMNS)


def add_round_key(state, round_key: int) -> list:
    return [a ^ b for a, b in zip(state, block_to_bytes(round_key))]


def rot_word(word: int) -> int:
    """RotWord: [a0, a1, a2, a3] to [a1, a2, a3, a0]; a0 is the most significant byte."""
    return ((word << 8) | (word >> 24)) & 0xffffffff


def sub_word(word: int) -> int:
    return int.from_bytes(bytes(SBOX[b] for b in word.to_bytes(4, "big")), "big")


def rcon(index: int) -> int:
    """The round constant word Rcon[index] = [x^(index-1), 0, 0, 0], for index >= 1."""
    value = 1
    for _ in range(index - 1):
        value = xtime(value)
    return value << 24


def key_word_kind(i: int, key_words: int) -> str | None:
    """How key word ``w[i]`` (``i >= Nk``) transforms ``w[i-1]`` before adding ``w[i-Nk]``
    (FIPS-197 5.2): ``"rot_sub_rcon"``, ``"sub"`` (AES-256 only), or ``None``."""
    if i % key_words == 0:
        return "rot_sub_rcon"
    if key_words > 6 and i % key_words == 4:
        return "sub"
    return None
