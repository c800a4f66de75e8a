"""A PRESENT round in hardware: the two layers as combinational values, and :class:`Round`, one
round with its key-register update, built from :mod:`.tables`.

Bit ``i`` of a state value is bit ``b_i`` of the paper, bit ``i`` of a key value is ``k_i``.
"""

from amaranth.hdl import Cat, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .key_schedule import round_key, update_key
from .reference import check_key_bits
from .sbox import sbox
from .tables import BLOCK_BITS, COUNTER_BITS, INV_PERMUTATION, PERMUTATION


__all__ = ["s_layer", "p_layer", "Round"]


def s_layer(state: Value, *, inverse: bool = False) -> Value:
    """sBoxLayer: the S-box (or its inverse) on each of the 16 nibbles w15..w0."""
    return Cat(sbox(state.word_select(i, 4), inverse=inverse) for i in range(BLOCK_BITS // 4))


def p_layer(state: Value, *, inverse: bool = False) -> Value:
    """pLayer: bit ``i`` moves to bit P(i) (to P^-1(i) if ``inverse``); wiring only."""
    # Output bit j comes from the input bit that moves to j.
    sources = PERMUTATION if inverse else INV_PERMUTATION
    return Cat(state[sources[j]] for j in range(BLOCK_BITS))


class Round(wiring.Component):
    """One PRESENT round and the key-register update that goes with it (combinational).

    Encrypting, ``key_out`` is ``key_in`` updated with ``counter`` and ``state_out`` is
    ``pLayer(sBoxLayer(state_in))`` plus the round key of ``key_out``. Decrypting, ``key_out`` is
    the update with ``counter`` undone and ``state_out`` is ``sBoxLayer^-1(pLayer^-1(state_in))``
    plus the round key of ``key_out``. Either way ``state_out`` is a state right after an
    AddRoundKey, like ``state_in``; ``layers_out`` is the same state before that AddRoundKey, for
    a user that adds the round key itself (the core does, for the last round of each cycle, so
    that one XOR serves both directions and the block load).

    Parameters
    ----------
    key_bits : :class:`int`
        80 or 128.
    decrypt : :class:`bool`
        Whether the round has the decryption path (and the ``inverse`` port).

    Members
    -------
    state_in : ``In(64)``
    key_in : ``In(key_bits)``
    counter : ``In(5)``
        The round counter of the key-schedule update (1..31).
    inverse : ``In(1)``
        1 to decrypt. Only present when ``decrypt`` is true.
    state_out : ``Out(64)``
    layers_out : ``Out(64)``
        ``state_out`` without the round key.
    key_out : ``Out(key_bits)``
    layers_forward, layers_backward : ``Out(64)``
        The two values ``layers_out`` chooses between (only when ``decrypt`` is true), for a
        user that makes that choice itself.
    """
    def __init__(self, key_bits: int, *, decrypt: bool = True):
        check_key_bits(key_bits)
        if not isinstance(decrypt, bool):
            raise TypeError(f"decrypt must be a bool, not {decrypt!r}")
        self._key_bits = key_bits
        self._decrypt = decrypt
        members = {
            "state_in": In(BLOCK_BITS),
            "key_in": In(key_bits),
            "counter": In(COUNTER_BITS),
            "state_out": Out(BLOCK_BITS),
            "layers_out": Out(BLOCK_BITS),
            "key_out": Out(key_bits),
        }
        if decrypt:
            members["inverse"] = In(1)
            members["layers_forward"] = Out(BLOCK_BITS)
            members["layers_backward"] = Out(BLOCK_BITS)
        super().__init__(members)

    @property
    def key_bits(self) -> int:
        return self._key_bits

    @property
    def decrypt(self) -> bool:
        return self._decrypt

    def elaborate(self, platform):
        m = Module()
        key_bits = self._key_bits

        # pLayer picks single bits of its input; from a signal, not from the S-box expressions,
        # or each S-box would be built once per bit picked from it. `keep` makes each S-box
        # output bit one LUT4 rather than letting the LUT mapper spread it over the logic after it.
        substituted = Signal(BLOCK_BITS, attrs={"keep": 1})
        m.d.comb += substituted.eq(s_layer(self.state_in))
        encrypted = p_layer(substituted)
        forward_key = update_key(self.key_in, self.counter, key_bits)

        if self._decrypt:
            decrypted = s_layer(p_layer(self.state_in, inverse=True), inverse=True)
            backward_key = update_key(self.key_in, self.counter, key_bits, inverse=True)
            m.d.comb += [
                self.key_out.eq(Mux(self.inverse, backward_key, forward_key)),
                self.layers_forward.eq(encrypted),
                self.layers_backward.eq(decrypted),
                self.layers_out.eq(Mux(self.inverse, decrypted, encrypted)),
            ]
        else:
            m.d.comb += [
                self.key_out.eq(forward_key),
                self.layers_out.eq(encrypted),
            ]
        m.d.comb += self.state_out.eq(self.layers_out ^ round_key(self.key_out, key_bits))
        return m
