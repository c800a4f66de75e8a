"""The word-serial AES key schedule of :class:`~cipher_cores.cores.aes.compact.CompactAES`.

The schedule (FIPS-197 5.2) is the recurrence ``w[i] = w[i-Nk] ^ t(w[i-1])``, run backwards as
``w[i-Nk] = w[i] ^ t(w[i-1])``. The core keeps ``L`` consecutive words in a *ring* of 32-bit
registers (``L`` = 4 for AES-128, 8 for AES-192 and AES-256) and computes one word per clock cycle,
four per round, in the order the round needs its round-key words (column 0 first) in both
directions. *Position* ``p`` of the ring is the words ``w[4p] .. w[4p + L - 1]`` in slots ``s1 ..
sL``; a forward step ``p`` goes from position ``p - 1`` to ``p``, a backward step ``p`` from
position ``p`` to ``p - 1``.

On each rotation every slot takes the next one's word (``s1`` from ``s2`` and so on, ``sL`` from
``s1``), except where a new word enters: at ``sL`` in a forward step (the word leaving ``s1`` is
dropped), at ``s4`` in a backward step (the word leaving ``s5``, or ``s1`` when ``L`` = 4, is
dropped). A short chain ``p1, p2, p3`` keeps the words dropped by a backward step for the one to
three cycles they are still needed. Only the entry slots have logic in front of them besides the
key load: the ring is a shift register.

Where each operand of the recurrence sits in each cycle, which word of a step goes through SubWord
and which ring words form that SubWord input, are not typed in: :func:`ring_plan` finds them by
running the ring symbolically on word indices and checks that they are the same for every step.
The SubWord input of a step is looked up in the cycle before the step (the core's S-box block RAMs
are busy with the state in the step's own cycles), so when the transformed word is not the step's
first (AES-192), its input is an XOR of ring words that :func:`ring_plan` derives from the
recurrence.

The round key word for column ``c`` of a round is in ``s4`` in the cycle after the ring computed
its ``c``-th word, in both directions and for every key size.

Two ring states matter between blocks: position 0 (where encryption starts and decryption ends)
and position Nr (where decryption starts and encryption ends). The ring ``delta`` holds their
slot-wise XOR, computed once per key, so a block in the same direction as the one before it
starts by XORing ``delta`` into the ring, one word per rotation, over ``L`` rotations; a block in
the other direction rotates the ring through the same ``L`` cycles unchanged. Either way a block
takes the same number of cycles.
"""

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .reference import check_key_bits
from .transforms import KEY_WORDS, ROUNDS, key_word_kind, rcon


__all__ = ["StepLayout", "RingPlan", "ring_plan", "KeyRing"]


@dataclass(frozen=True)
class StepLayout:
    """The word of one step that goes through SubWord.

    ``column`` is its place in the step (0..3), ``rot_word`` whether RotWord comes first (and
    ``rcon_byte`` is added to the most significant byte), ``address`` the ring slots whose XOR is
    the SubWord input, read in the cycle before the step. ``column`` is ``None`` for a step
    without SubWord.
    """
    column: int | None
    rot_word: bool = False
    rcon_byte: int = 0
    address: tuple = ()


@dataclass(frozen=True)
class RingPlan:
    """Where the key schedule's operands are, for one key size (see :func:`ring_plan`).

    ``x[backward][c]`` is the slot holding ``w[i-Nk]`` (forward) or ``w[i]`` (backward) in the
    cycle the ring computes the ``c``-th word of a step, ``y[backward][c]`` the slot holding
    ``w[i-1]`` when that word is not transformed (``None`` if it always is). ``steps[backward][p]`` is the
    :class:`StepLayout` of step ``p`` (1..Nr). ``key_slots`` are the slots a key is loaded into;
    for AES-192 (``half_step``) they are ``s3 .. s8``, and two forward rotations (the last two
    words of a step 0) complete position 0, with ``half_layout`` for their SubWord.
    """
    key_bits: int
    length: int
    key_slots: tuple
    x: tuple
    y: tuple
    steps: tuple
    half_step: bool
    half_layout: StepLayout | None


def _position(p, length):
    return {f"s{j}": 4 * p + j - 1 for j in range(1, length + 1)}


def _rotate(ring, length, backward, new):
    """The ring after one rotation in which word index ``new`` enters."""
    result = {f"s{j}": ring[f"s{j + 1}"] for j in range(1, length)}
    result[f"s{length}"] = ring["s1"]
    result["s4" if backward else f"s{length}"] = new
    result["p1"] = ring["s1" if length == 4 else "s5"]
    result["p2"], result["p3"] = ring.get("p1"), ring.get("p2")
    return result


def _express(word, ring, nk):
    """Slots of ``ring`` whose XOR is ``w[word]``, by the recurrence through words that are not
    transformed."""
    slots = {index: slot for slot, index in ring.items() if index is not None}
    if word in slots:
        return {slots[word]}
    if word > max(slots):
        assert key_word_kind(word, nk) is None
        return _express(word - nk, ring, nk) ^ _express(word - 1, ring, nk)
    assert key_word_kind(word + nk, nk) is None
    return _express(word + nk, ring, nk) ^ _express(word + nk - 1, ring, nk)


def _layout(index, ring, nk, column):
    kind = key_word_kind(index, nk)
    if kind is None:
        return None
    return StepLayout(column, kind == "rot_sub_rcon",
                      rcon(index // nk) >> 24 if kind == "rot_sub_rcon" else 0,
                      tuple(sorted(_express(index - 1, ring, nk), key=lambda s: int(s[1:]))))


def _pick(found, what):
    """The one slot (preferring ring slots over the chain) that held the operand in every step."""
    common = set.intersection(*found)
    assert common, f"no single slot holds {what}"
    return min(common, key=lambda s: (s[0] == "p", int(s[1:])))


def ring_plan(key_bits: int) -> RingPlan:
    """Run the ring on word indices through every step in both directions and record where each
    operand is; raises :exc:`AssertionError` if an operand is not in one fixed slot, or a step
    does not end at the next position."""
    nk, nr = KEY_WORDS[check_key_bits(key_bits)], ROUNDS[key_bits]
    length = 4 if nk == 4 else 8
    xs, ys, all_steps = [], [], []
    for backward in (False, True):
        x_found = [[] for _ in range(4)]
        y_found = [[] for _ in range(4)]
        layouts = []
        for p in range(1, nr + 1):
            ring = _position(p if backward else p - 1, length)
            layout = StepLayout(None)
            for c in range(4):
                if backward:
                    new = 4 * (p - 1) + c
                    index, x_word = new + nk, new + nk
                else:
                    new = index = 4 * (p - 1) + length + c
                    x_word = index - nk
                x_found[c].append({slot for slot, word in ring.items() if word == x_word})
                if key_word_kind(index, nk) is None:
                    y_found[c].append({slot for slot, word in ring.items() if word == index - 1})
                else:
                    assert layout.column is None, "two transformed words in one step"
                    layout = _layout(index, _position(p if backward else p - 1, length), nk, c)
                ring = _rotate(ring, length, backward, new)
                assert ring["s4"] == (4 * (p - 1) + c if backward else 4 * p + c), \
                    "round key word not in s4"
            end = _position(p - 1 if backward else p, length)
            assert all(ring[slot] == end[slot] for slot in end), "step does not end at a position"
            layouts.append(layout)
        xs.append(tuple(_pick([set(s) for s in found], "x") for found in x_found))
        # A column whose word is transformed in every step needs no y: None.
        ys.append(tuple(_pick([set(s) for s in found], "y") if found else None
                        for found in y_found))
        all_steps.append(tuple(layouts))

    half_step = nk == 6
    half_layout = None
    key_slots = tuple(f"s{j}" for j in range(1, nk + 1))
    if half_step:
        # The key fills s3..s8: the ring as a forward step 0 leaves it after its first two words.
        key_slots = tuple(f"s{j}" for j in range(length - nk + 1, length + 1))
        ring = {slot: j for j, slot in enumerate(key_slots)}
        half_layout = _layout(nk, ring, nk, 2)
    return RingPlan(key_bits, length, key_slots, tuple(xs), tuple(ys), tuple(all_steps),
                    half_step, half_layout)


class KeyRing(wiring.Component):
    """The ring of key-schedule words and the ring ``delta`` (see the module documentation).

    The step a rotation belongs to is given by the core's round counter: in round ``r`` an
    encryption runs forward step ``r`` and a decryption backward step ``Nr + 1 - r``; the SubWord
    input shown in round ``r`` is that of the step of round ``r + 1``.

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.

    Members
    -------
    key : ``In(key_bits)``
        A key, word 0 in the most significant bits; loaded when ``load`` is high.
    load : ``In(1)``
        Load ``key`` and clear ``delta`` on this edge.
    rotate : ``In(1)``
        The ring rotates on this edge.
    restore : ``In(1)``
        The rotation carries ``s1`` round to ``sL``, XORed with ``delta``'s first word if
        ``xor_delta`` is high; otherwise it is a step of the schedule.
    xor_delta : ``In(1)``
    delta_rotate : ``In(1)``
        ``delta`` rotates on this edge.
    delta_accumulate : ``In(1)``
        While ``delta`` rotates, its last slot takes the word entering ``sL`` XORed in.
    backward : ``In(1)``
        The steps run backwards (decryption).
    round : ``In(range(Nr + 1))``
        The core's round counter.
    column : ``In(range(4))``
        Which word of the step this rotation computes.
    half : ``In(1)``
        AES-192 only: the rotation is one of the two that complete position 0 after a key load,
        and ``sub_address`` shows their SubWord input.
    sub : ``In(32)``
        SubWord of ``sub_address`` as it was in the cycle before (the block RAMs' output).
    round_key : ``Out(32)``
        ``s4``.
    sub_address : ``Out(32)``
    """
    def __init__(self, key_bits: int):
        self._plan = ring_plan(key_bits)
        nr = ROUNDS[key_bits]
        super().__init__({
            "key": In(key_bits),
            "load": In(1),
            "rotate": In(1),
            "restore": In(1),
            "xor_delta": In(1),
            "delta_rotate": In(1),
            "delta_accumulate": In(1),
            "backward": In(1),
            "round": In(range(nr + 1)),
            "column": In(range(4)),
            "half": In(1),
            "sub": In(32),
            "round_key": Out(32),
            "sub_address": Out(32),
        })

    @property
    def plan(self) -> RingPlan:
        return self._plan

    def _layouts(self, offset):
        """``{(round, backward): StepLayout}`` for the step of round ``round + offset``."""
        plan, nr = self._plan, ROUNDS[self._plan.key_bits]
        table = {}
        for number in range(nr + 1):
            step = number + offset
            for backward, steps in enumerate(plan.steps):
                index = nr + 1 - step if backward else step
                if 1 <= index <= nr:
                    table[number, backward] = steps[index - 1]
        return table

    def _select(self, m, name, shape, table):
        """A signal equal to ``table[(round, backward)]`` (a function of the two), with the most
        common value as the default so that synthesis sees how little it depends on."""
        signal = Signal(shape, name=name)
        values = list(table.values())
        common = max(sorted(set(values)), key=values.count)
        m.d.comb += signal.eq(common)
        if all(value == common for value in values):
            return signal
        by_direction = {backward: {v for (_, b), v in table.items() if b == backward}
                        for backward in (0, 1)}
        if all(len(v) == 1 for v in by_direction.values()):
            (forward,), (backward,) = by_direction[0], by_direction[1]
            m.d.comb += signal.eq(Mux(self.backward, backward, forward))
            return signal
        width = len(self.round)
        with m.Switch(Cat(self.round, self.backward)):
            for value in sorted(set(values) - {common}):
                cases = [number | backward << width for (number, backward), v in table.items()
                         if v == value]
                with m.Case(*cases):
                    m.d.comb += signal.eq(value)
        return signal

    def elaborate(self, platform):
        m = Module()
        plan = self._plan
        length = plan.length
        slots = {f"s{j}": Signal(32, name=f"s{j}", reset_less=True) for j in range(1, length + 1)}
        chain = {f"p{j}": Signal(32, name=f"p{j}", reset_less=True) for j in range(1, 4)}
        delta = [Signal(32, name=f"delta{j}", reset_less=True) for j in range(1, length + 1)]

        new = self._new_word(m, {**slots, **chain}, delta[0])
        self._sub_address(m, slots)

        key_words = [self.key.word_select(len(plan.key_slots) - 1 - i, 32)
                     for i in range(len(plan.key_slots))]
        step_backward = self.backward & ~self.restore & ~self.half
        with m.If(self.load):
            m.d.sync += [slots[name].eq(word) for name, word in zip(plan.key_slots, key_words)]
        with m.Elif(self.rotate):
            for j in range(1, length):
                m.d.sync += slots[f"s{j}"].eq(slots[f"s{j + 1}"])
            if length == 4:
                m.d.sync += slots["s4"].eq(new)
            else:
                m.d.sync += [
                    slots[f"s{length}"].eq(Mux(step_backward, slots["s1"], new)),
                    slots["s4"].eq(Mux(step_backward, new, slots["s5"])),
                ]
            m.d.sync += [
                chain["p1"].eq(slots["s1" if length == 4 else "s5"]),
                chain["p2"].eq(chain["p1"]),
                chain["p3"].eq(chain["p2"]),
            ]

        with m.If(self.load):
            m.d.sync += [word.eq(0) for word in delta]
        with m.Elif(self.delta_rotate):
            m.d.sync += [a.eq(b) for a, b in zip(delta, delta[1:])]
            m.d.sync += delta[-1].eq(delta[0] ^ Mux(self.delta_accumulate, new, 0))

        m.d.comb += self.round_key.eq(slots["s4"])
        return m

    def _slot_mux(self, m, name, table, operands):
        """A word equal to ``operands[table[backward][column]]`` (``None``: any), with no more
        selection logic than the table needs."""
        value = Signal(32, name=name)
        cells = {(backward, c): slot for backward in (0, 1) for c, slot in enumerate(table[backward])
                 if slot is not None}
        direction = self.backward & ~self.half
        rows = [{slot for (b, _), slot in cells.items() if b == backward} for backward in (0, 1)]
        if len(set(cells.values())) == 1:
            m.d.comb += value.eq(operands[next(iter(cells.values()))])
        elif all(len(row) == 1 for row in rows):
            (forward,), (backward,) = rows
            m.d.comb += value.eq(Mux(direction, operands[backward], operands[forward]))
        else:
            with m.Switch(Cat(self.column, direction)):
                for (backward, c), slot in cells.items():
                    with m.Case(c | backward << 2):
                        m.d.comb += value.eq(operands[slot])
        return value

    def _new_word(self, m, operands, delta_head):
        """The word entering the ring on this rotation."""
        plan = self._plan
        layouts = {k: v for k, v in self._layouts(0).items() if v.column is not None}
        column = self._select(m, "sub_column", range(4),
                              {k: v.column for k, v in layouts.items()})
        has_sub = self._select(m, "has_sub", 1,
                               {k: int(v.column is not None) for k, v in self._layouts(0).items()})
        rot_word = self._select(m, "rot_word", 1, {k: int(v.rot_word) for k, v in layouts.items()})
        rcon_byte = self._select(m, "rcon_byte", 8, {k: v.rcon_byte for k, v in layouts.items()})
        transformed = Signal()
        m.d.comb += transformed.eq(has_sub & (self.column == column))
        if plan.half_step:
            with m.If(self.half):
                m.d.comb += [
                    transformed.eq(self.column == plan.half_layout.column),
                    rot_word.eq(plan.half_layout.rot_word),
                    rcon_byte.eq(plan.half_layout.rcon_byte),
                ]
        # The block RAMs show SubWord in the first cycle of a step only (then the state's
        # columns): a word transformed later in its step (AES-192) reads a copy taken then.
        sub_word = self.sub
        if any(layout.column not in (None, 0) for steps in plan.steps for layout in steps):
            held = Signal(32)
            with m.If(self.rotate & ~self.restore & ~self.half & (self.column == 0)):
                m.d.sync += held.eq(self.sub)
            sub_word = Mux((self.column == 0) | self.half, self.sub, held)
        # RotWord commutes with SubWord: the block RAMs look the bytes up in place and the word
        # is rotated here.
        sub = Mux(rot_word, sub_word.rotate_left(8), sub_word) ^ Cat(Const(0, 24), rcon_byte)

        x = self._slot_mux(m, "x", plan.x, operands)
        y = self._slot_mux(m, "y", plan.y, operands)
        base = x if all(slot == "s1" for row in plan.x for slot in row) \
            else Mux(self.restore, operands["s1"], x)
        new = Signal(32)
        m.d.comb += new.eq(base ^ Mux(self.restore, Mux(self.xor_delta, delta_head, 0),
                                      Mux(transformed, sub, y)))
        return new

    def _sub_address(self, m, slots):
        """The SubWord input of the step of the next round: an XOR of ring slots."""
        def xor(address):
            value = slots[address[0]]
            for slot in address[1:]:
                value = value ^ slots[slot]
            return value

        layouts = {k: v.address for k, v in self._layouts(1).items() if v.column is not None}
        choices = sorted(set(layouts.values()))
        index = self._select(m, "address_layout", range(len(choices)),
                             {k: choices.index(v) for k, v in layouts.items()})
        value = xor(choices[0])
        for number, address in enumerate(choices[1:], start=1):
            value = Mux(index == number, xor(address), value)
        if self._plan.half_step:
            value = Mux(self.half, xor(self._plan.half_layout.address), value)
        m.d.comb += self.sub_address.eq(value)
