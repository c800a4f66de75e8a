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

from amaranth.hdl import Cat, Const, Module, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from .boolean_sbox import BooleanSBox
from .reference import check_key_bits
from .sbox import SBOX
from .substitution import check_sbox
from .transforms import KEY_WORDS, ROUNDS, key_word_kind, rcon


__all__ = ["StepPlan", "key_step_plan", "KeySchedule"]


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


def _step_layouts(plans):
    """The distinct ``(position, kind)`` pairs of the plans, in a fixed order."""
    return sorted({(plan.position, plan.kind) for plan in plans},
                  key=lambda layout: (layout[0] is None, layout))


def _step_words(words, layout, backward, transformed):
    """Apply one step with the given layout to a window (a list of Nk word values).

    ``transformed`` is the value that replaces t(w[i-1]) at the transformed position (the S-box
    output, plus Rcon). Returns the S-box input (``None`` if the layout transforms nothing) and
    the new window's words. The S-box input only depends on words computed before the transformed
    one, so one set of S-boxes shared by every layout makes no combinational loop.
    """
    position, kind = layout
    nk = len(words)

    def sub_word_input(word):
        return word.rotate_left(8) if kind == "rot_sub_rcon" else word

    sub_input = None
    if not backward:
        w = dict(enumerate(words))
        for k in range(4):
            previous = w[nk + k - 1]
            if k == position:
                sub_input = sub_word_input(previous)
                w[nk + k] = w[k] ^ transformed
            else:
                w[nk + k] = w[k] ^ previous
        return sub_input, [w[4 + i] for i in range(nk)]
    else:
        w = {4 + i: word for i, word in enumerate(words)}
        for k in reversed(range(4)):
            previous = w[nk + k - 1]
            if k == position:
                sub_input = sub_word_input(previous)
                w[k] = w[nk + k] ^ transformed
            else:
                w[k] = w[nk + k] ^ previous
        return sub_input, [w[i] for i in range(nk)]


class KeySchedule(wiring.Component):
    """The key-schedule window register and one step of the schedule applied to it.

    The register holds a window, the step number to apply next and the direction; ``next_window``
    is the result of that step, combinationally. As with the state register
    (:class:`~cipher_cores.cores.aes.substitution.SubstitutedRegister`), the four SubWord S-boxes can be block
    RAM: their address is computed from the register's next value, so their output belongs to the
    register's current value with no extra cycle.

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    sbox : :class:`str`
        ``"bram"`` (4 synchronous 256x8 memories), ``"logic"`` or ``"boolean"`` (4 forward-only
        :class:`~cipher_cores.cores.aes.boolean_sbox.BooleanSBox`).

    Members
    -------
    d : ``In(32 * Nk)``
        Next window, loaded with ``d_step`` and ``d_backward`` when ``en`` is high. Word 0 in the
        most significant bits; window 0 is the key itself.
    d_step : ``In(range(Nr + 2))``
        The step to apply to that window, 1 to Nr (for 0 and Nr + 1, past either end of the
        schedule, ``next_window`` is unspecified).
    d_backward : ``In(1)``
        0 for a forward step (window ``step - 1`` to window ``step``), 1 for a backward one (window
        ``step`` to window ``step - 1``).
    en : ``In(1)``
    q, q_step, q_backward : ``Out``
        The registers.
    next_window : ``Out(32 * Nk)``
        ``q`` after step ``q_step`` in direction ``q_backward``; its 128 most significant bits are
        the round key it starts with.
    """
    def __init__(self, key_bits: int, *, sbox: str = "logic"):
        self._key_bits = check_key_bits(key_bits)
        self._sbox = check_sbox(sbox)
        nk, nr = KEY_WORDS[key_bits], ROUNDS[key_bits]
        super().__init__({
            "d": In(32 * nk),
            "d_step": In(range(nr + 2)),
            "d_backward": In(1),
            "en": In(1),
            "q": Out(32 * nk),
            "q_step": Out(range(nr + 2)),
            "q_backward": Out(1),
            "next_window": Out(32 * nk),
        })

    @property
    def key_bits(self) -> int:
        return self._key_bits

    @property
    def sbox(self) -> str:
        return self._sbox

    def elaborate(self, platform):
        m = Module()
        nk = KEY_WORDS[self._key_bits]
        plans = key_step_plan(self._key_bits)
        layouts = _step_layouts(plans)

        with m.If(self.en):
            m.d.sync += [
                self.q.eq(self.d),
                self.q_step.eq(self.d_step),
                self.q_backward.eq(self.d_backward),
            ]

        def select_sub_input(window, step, backward, name):
            """The S-box input of the step ``step`` in direction ``backward`` on ``window``."""
            words = _split_words(window, nk)
            layout_index = Signal(range(len(layouts)), name=f"{name}_layout")
            with m.Switch(step):
                for number, plan in enumerate(plans, start=1):
                    with m.Case(number):
                        m.d.comb += layout_index.eq(layouts.index((plan.position, plan.kind)))
            sub_input = Signal(32, name=f"{name}_sub_input")
            with m.Switch(layout_index):
                for index, layout in enumerate(layouts):
                    with m.Case(index):
                        for direction in (0, 1):
                            candidate, _ = _step_words(words, layout, direction, Const(0, 32))
                            if candidate is not None:
                                with m.If(backward == direction):
                                    m.d.comb += sub_input.eq(candidate)
            return sub_input

        # The four SubWord S-boxes, shared by every step and both directions.
        sub_out = Signal(32)
        if self._sbox == "bram":
            sub_address = select_sub_input(self.d, self.d_step, self.d_backward, "next")
        else:
            sub_address = select_sub_input(self.q, self.q_step, self.q_backward, "current")
        for i in range(4):
            if self._sbox == "boolean":
                m.submodules[f"sbox{i}"] = sbox = BooleanSBox(invertible=False)
                m.d.comb += [
                    sbox.i.eq(sub_address[8 * i:8 * (i + 1)]),
                    sub_out[8 * i:8 * (i + 1)].eq(sbox.o),
                ]
                continue
            if self._sbox == "bram":
                table = memory.Memory(shape=unsigned(8), depth=256, init=SBOX,
                                      attrs={"ram_style": "block"})
                port = table.read_port(domain="sync", transparent_for=())
                m.d.comb += port.en.eq(self.en)
            else:
                table = memory.Memory(shape=unsigned(8), depth=256, init=SBOX)
                port = table.read_port(domain="comb")
            m.submodules[f"sbox{i}"] = table
            m.d.comb += [
                port.addr.eq(sub_address[8 * i:8 * (i + 1)]),
                sub_out[8 * i:8 * (i + 1)].eq(port.data),
            ]

        rcon_word = Signal(32)
        layout_index = Signal(range(len(layouts)))
        with m.Switch(self.q_step):
            for number, plan in enumerate(plans, start=1):
                with m.Case(number):
                    m.d.comb += [
                        layout_index.eq(layouts.index((plan.position, plan.kind))),
                        rcon_word.eq(plan.rcon_word),
                    ]

        words = _split_words(self.q, nk)
        with m.Switch(layout_index):
            for index, layout in enumerate(layouts):
                transformed = sub_out ^ rcon_word if layout[1] == "rot_sub_rcon" else sub_out
                with m.Case(index):
                    for direction in (0, 1):
                        _, result = _step_words(words, layout, direction, transformed)
                        with m.If(self.q_backward == direction):
                            m.d.comb += self.next_window.eq(_join_words(result))

        return m
