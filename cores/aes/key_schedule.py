"""The AES key schedule computed on the fly, forwards for encryption and backwards for decryption.

The schedule (FIPS-197 5.2) is a recurrence on 32-bit words, ``w[i] = w[i-Nk] ^ t(w[i-1])``, where
``t`` is RotWord, SubWord and Rcon, SubWord alone, or nothing, depending on ``i``. The hardware keeps
a *window* of Nk consecutive words. Before step ``r`` (1 <= r <= Nr) it holds window ``r-1``, the
words ``w[4(r-1)] .. w[4(r-1)+Nk-1]``; a forward step produces window ``r`` (whose first four words
are round key ``r``), a backward step turns window ``r`` back into window ``r-1`` (whose first four
words are round key ``r-1``) with ``w[i-Nk] = w[i] ^ t(w[i-1])``. Step ``r`` adds or removes the
same four words in both directions, so one plan per step serves both, and the window after the last
forward step (window Nr, which for AES-192/256 runs past the round keys FIPS-197 lists) is where
decryption starts.

Each step transforms at most one of its four words, so four S-boxes suffice.
"""

from amaranth.hdl import Cat, Module, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from .reference import check_key_bits
from .sbox import SBOX
from .transforms import KEY_WORDS, ROUNDS, key_word_kind, rcon


__all__ = ["StepPlan", "key_step_plan", "KeyScheduleStep"]


class StepPlan(tuple):
    """What step ``r`` does: ``(position, kind, rcon_word)``.

    ``position`` (0..3) is the one of the step's four words whose predecessor is transformed, with
    ``kind`` ``"rot_sub_rcon"`` or ``"sub"`` and the Rcon word to add; ``(None, None, 0)`` if no
    word of the step is transformed.
    """
    __slots__ = ()

    def __new__(cls, position, kind, rcon_word):
        return super().__new__(cls, (position, kind, rcon_word))

    position = property(lambda self: self[0])
    kind = property(lambda self: self[1])
    rcon_word = property(lambda self: self[2])


def key_step_plan(key_bits: int) -> tuple:
    """The :class:`StepPlan` of steps 1..Nr (element 0 is step 1)."""
    nk, nr = KEY_WORDS[check_key_bits(key_bits)], ROUNDS[key_bits]
    plans = []
    for step in range(1, nr + 1):
        first = 4 * (step - 1) + nk
        special = [(position, key_word_kind(first + position, nk))
                   for position in range(4) if key_word_kind(first + position, nk)]
        assert len(special) <= 1
        if special:
            position, kind = special[0]
            rcon_word = rcon((first + position) // nk) if kind == "rot_sub_rcon" else 0
            plans.append(StepPlan(position, kind, rcon_word))
        else:
            plans.append(StepPlan(None, None, 0))
    return tuple(plans)


def _split_words(window, nk):
    return [window[32 * (nk - 1 - i):32 * (nk - i)] for i in range(nk)]


def _join_words(words):
    return Cat(*reversed(list(words)))


class KeyScheduleStep(wiring.Component):
    """One step of the AES key schedule, forwards or backwards (combinational).

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.

    Members
    -------
    window : ``In(32 * Nk)``
        Window ``step - 1`` (forwards) or window ``step`` (backwards); word 0 in the most
        significant bits. Window 0 is the key itself.
    step : ``In(range(Nr + 1))``
        The step number ``r``, 1 to Nr.
    backward : ``In(1)``
        0 to compute window ``step`` from window ``step - 1``; 1 for the reverse.
    next_window : ``Out(32 * Nk)``
        The resulting window; its 128 most significant bits are the round key it starts with.
    """
    def __init__(self, key_bits: int):
        self._key_bits = check_key_bits(key_bits)
        nk, nr = KEY_WORDS[key_bits], ROUNDS[key_bits]
        super().__init__({
            "window": In(32 * nk),
            "step": In(range(nr + 1)),
            "backward": In(1),
            "next_window": Out(32 * nk),
        })

    @property
    def key_bits(self) -> int:
        return self._key_bits

    def elaborate(self, platform):
        m = Module()
        nk = KEY_WORDS[self._key_bits]
        plans = key_step_plan(self._key_bits)

        # The four shared S-boxes of SubWord.
        sub_in = Signal(32)
        sub_out = Signal(32)
        rcon_word = Signal(32)
        for i in range(4):
            table = memory.Memory(shape=unsigned(8), depth=256, init=SBOX)
            m.submodules[f"sbox{i}"] = table
            port = table.read_port(domain="comb")
            m.d.comb += [
                port.addr.eq(sub_in[8 * i:8 * (i + 1)]),
                sub_out[8 * i:8 * (i + 1)].eq(port.data),
            ]

        words = _split_words(self.window, nk)

        def transform(kind):
            return sub_out ^ rcon_word if kind == "rot_sub_rcon" else sub_out

        def sub_word_input(kind, word):
            return word.rotate_left(8) if kind == "rot_sub_rcon" else word

        # For each distinct plan, the S-box input and the resulting window in each direction. The
        # S-box input only depends on words computed before the transformed one, so sharing the
        # S-boxes across plans makes no combinational loop.
        layouts = sorted({(plan.position, plan.kind) for plan in plans},
                         key=lambda p: (p[0] is None, p))
        forward, backward = [], []
        for position, kind in layouts:
            w = dict(enumerate(words))
            sub_input = None
            for k in range(4):
                previous = w[nk + k - 1]
                if k == position:
                    sub_input = sub_word_input(kind, previous)
                    w[nk + k] = w[k] ^ transform(kind)
                else:
                    w[nk + k] = w[k] ^ previous
            forward.append((sub_input, _join_words(w[4 + i] for i in range(nk))))

            w = {4 + i: word for i, word in enumerate(words)}
            sub_input = None
            for k in reversed(range(4)):
                previous = w[nk + k - 1]
                if k == position:
                    sub_input = sub_word_input(kind, previous)
                    w[k] = w[nk + k] ^ transform(kind)
                else:
                    w[k] = w[nk + k] ^ previous
            backward.append((sub_input, _join_words(w[i] for i in range(nk))))

        layout_index = Signal(range(len(layouts)))
        with m.Switch(self.step):
            for step, plan in enumerate(plans, start=1):
                with m.Case(step):
                    m.d.comb += [
                        layout_index.eq(layouts.index((plan.position, plan.kind))),
                        rcon_word.eq(plan.rcon_word),
                    ]

        with m.Switch(layout_index):
            for index in range(len(layouts)):
                with m.Case(index):
                    for direction, (sub_input, result) in ((0, forward[index]),
                                                           (1, backward[index])):
                        with m.If(self.backward == direction):
                            if sub_input is not None:
                                m.d.comb += sub_in.eq(sub_input)
                            m.d.comb += self.next_window.eq(result)

        return m
