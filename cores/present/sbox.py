"""The PRESENT S-box in hardware: a 16-entry look-up of the table in :mod:`.tables`."""

from amaranth.hdl import Const, Value

from .tables import INV_SBOX, SBOX


__all__ = ["sbox"]


def sbox(nibble: Value, *, inverse: bool = False) -> Value:
    """The S-box (or its inverse) on a 4-bit value, as a look-up of a constant 16-entry table."""
    table = INV_SBOX if inverse else SBOX
    rom = Const(sum(entry << (4 * index) for index, entry in enumerate(table)), 4 * len(table))
    return rom.word_select(nibble, 4)
