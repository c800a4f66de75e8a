"""The PRESENT round layers as combinational Amaranth values, built from :mod:`.tables`.

Each function takes a value and returns a new value; the core chains them inside its round logic.
Bit ``i`` of a state value is bit ``b_i`` of the paper.
"""

from amaranth.hdl import Cat, Const, Value

from .tables import BLOCK_BITS, INV_PERMUTATION, INV_SBOX, PERMUTATION, SBOX


__all__ = ["sbox", "s_layer", "p_layer", "encrypt_round", "decrypt_round"]


def sbox(nibble: Value, *, inverse: bool = False) -> Value:
    """The S-box (or its inverse) on a 4-bit value: a 16-entry look-up of a constant table."""
    table = INV_SBOX if inverse else SBOX
    rom = Const(sum(entry << (4 * index) for index, entry in enumerate(table)), 64)
    return rom.word_select(nibble, 4)


def s_layer(state: Value, *, inverse: bool = False) -> Value:
    """sBoxLayer: the S-box on each of the 16 nibbles w15..w0."""
    return Cat(sbox(state.word_select(i, 4), inverse=inverse) for i in range(BLOCK_BITS // 4))


def p_layer(state: Value, *, inverse: bool = False) -> Value:
    """pLayer: bit ``i`` moves to bit P(i) (to P^-1(i) if ``inverse``); wiring only."""
    # Output bit j comes from the input bit that moves to j.
    sources = PERMUTATION if inverse else INV_PERMUTATION
    return Cat(state[sources[j]] for j in range(BLOCK_BITS))


def encrypt_round(state: Value) -> Value:
    """One encryption round without its AddRoundKey: pLayer(sBoxLayer(state))."""
    return p_layer(s_layer(state))


def decrypt_round(state: Value) -> Value:
    """The inverse of :func:`encrypt_round`: sBoxLayer^-1(pLayer^-1(state))."""
    return s_layer(p_layer(state, inverse=True), inverse=True)
