"""Combinational AES round logic, wired from the definitions in :mod:`cipher_cores.cores.aes.transforms`.

A 128-bit state value holds byte ``i`` of the FIPS-197 byte sequence in bits
``[8*(15-i), 8*(16-i))``: byte 0 is the most significant, as in ``int.from_bytes(b, "big")``.
"""

from amaranth.hdl import Cat, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .transforms import (INV_MIX_PREPROCESS, INV_SHIFT_ROWS, MIX_COLUMNS, SHIFT_ROWS)


__all__ = ["state_bytes", "join_bytes", "xtime", "mul_const", "shift_rows", "column_transform",
           "mix_columns", "RoundFunction"]


def state_bytes(state: Value) -> list:
    """The 16 bytes of a 128-bit state, FIPS-197 byte 0 first."""
    return [state[8 * (15 - i):8 * (16 - i)] for i in range(16)]


def join_bytes(data) -> Value:
    """The inverse of :func:`state_bytes`."""
    return Cat(*reversed(list(data)))


def xtime(byte: Value) -> Value:
    """Multiply a byte by {02} in GF(2^8): a shift and a conditional reduction."""
    return (byte << 1)[:8] ^ (byte[7].replicate(8) & 0x1b)


def mul_const(byte: Value, constant: int) -> Value:
    """Multiply a byte by a constant in GF(2^8), as an XOR of shifted copies."""
    terms, power = [], byte
    for bit in range(8):
        if constant >> bit & 1:
            terms.append(power)
        power = xtime(power)
    result = terms[0]
    for term in terms[1:]:
        result = result ^ term
    return result


def shift_rows(state: Value, *, inverse: bool = False) -> Value:
    permutation = INV_SHIFT_ROWS if inverse else SHIFT_ROWS
    data = state_bytes(state)
    return join_bytes(data[permutation[i]] for i in range(16))


def column_transform(state: Value, coefficients) -> Value:
    """Multiply each column by the circulant matrix whose first row is ``coefficients``."""
    data = state_bytes(state)
    result = []
    for c in range(4):
        column = data[4 * c:4 * c + 4]
        for r in range(4):
            terms = [mul_const(column[k], coefficients[(k - r) % 4])
                     for k in range(4) if coefficients[(k - r) % 4]]
            value = terms[0]
            for term in terms[1:]:
                value = value ^ term
            result.append(value)
    return join_bytes(result)


def mix_columns(state: Value) -> Value:
    return column_transform(state, MIX_COLUMNS)


class RoundFunction(wiring.Component):
    """One AES round, either direction, given the S-box image of the state before it (combinational).

    ``substituted`` is SubBytes (encryption) or InvSubBytes (decryption) of the round's input, which
    commutes with (Inv)ShiftRows. Encryption gives MixColumns(ShiftRows(s)) ^ k, or ShiftRows(s) ^ k
    in the last round; decryption gives InvMixColumns(InvShiftRows(s) ^ k), or InvShiftRows(s) ^ k
    in the last round (FIPS-197 5.3). InvMixColumns is computed as MixColumns after a cheap
    preprocessing step, so both directions share one MixColumns circuit.

    Members
    -------
    substituted : ``In(128)``
    round_key : ``In(128)``
    decrypt : ``In(1)``
    last : ``In(1)``
        The last round, which has no (Inv)MixColumns.
    result : ``Out(128)``
    """
    substituted: In(128)
    round_key: In(128)
    decrypt: In(1)
    last: In(1)
    result: Out(128)

    def elaborate(self, platform):
        m = Module()
        # Each stage is a named signal: it keeps the netlist readable and stops the simulator
        # from inlining the whole round into every output bit.
        permuted = Signal(128)
        keyed = Signal(128)
        mix_input = Signal(128)
        mixed = Signal(128)
        m.d.comb += [
            permuted.eq(Mux(self.decrypt, shift_rows(self.substituted, inverse=True),
                            shift_rows(self.substituted))),
            keyed.eq(permuted ^ self.round_key),
            mix_input.eq(Mux(self.decrypt, column_transform(keyed, INV_MIX_PREPROCESS),
                             permuted)),
            mixed.eq(mix_columns(mix_input)),
            self.result.eq(Mux(self.last, keyed,
                               Mux(self.decrypt, mixed, mixed ^ self.round_key))),
        ]
        return m
