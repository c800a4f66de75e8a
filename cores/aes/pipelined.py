"""A pipelined AES-128/192/256 encryption core: all rounds unrolled, one block per clock.

Each round looks its 16 state bytes up in tables of ``S(x)`` and ``{02}·S(x)`` side by side (the
two columns of a T-table that are not derived by XOR), then XORs six terms per bit (MixColumns and
AddRoundKey together), split around a register, into the next round's look-up addresses. The
tables are block RAM read through two registers (the RAM's address register and, on ECP5, its own
output register: :class:`~cipher_cores.cores.block_ram.RegisteredRom`), so a round is three pipeline
stages, no path crosses a RAM's slow clock-to-output, and no datapath path has more than one LUT."""

import itertools
from dataclasses import dataclass

from amaranth.hdl import C, Cat, Module, Mux, Signal

from .base import AESCipher
from .. import fpga
from ..block_ram import RegisteredRom
from .gf import xtime
from .reference import check_key_bits
from .round import join_bytes, state_bytes
from .sbox import SBOX
from .transforms import KEY_WORDS, MIX_COLUMNS, ROUNDS, SHIFT_ROWS, key_word_kind, rcon


__all__ = ["LOOKUP_TABLE", "KeyStep", "SUB_WORD_CYCLES", "key_expansion_plan", "SECTION_ROUNDS",
           "PipelinedAES", "TwoLanePipelinedAES"]


#: The table every look-up reads: ``S(x)`` in bits 7..0 and ``{02}·S(x)`` in bits 15..8.
#: ``{03}·S(x)``, the third multiple MixColumns needs, is their XOR, taken in the round's XOR.
LOOKUP_TABLE = tuple(SBOX[x] | xtime(SBOX[x]) << 8 for x in range(256))


@dataclass(frozen=True)
class KeyStep:
    """One cycle of the key expansion."""
    #: The key-word chain takes a new word on the edge that ends this cycle.
    shift: bool
    #: How the word being computed transforms the word before it: ``"rot_sub_rcon"``, ``"sub"``
    #: or ``None`` (as :func:`~cipher_cores.cores.aes.transforms.key_word_kind`).
    kind: str | None
    #: The round constant added to the word's most significant byte (0 if none).
    rcon_byte: int


#: Rounds per section of the pipe: each section has a clock enable of its own (see
#: :class:`PipelinedAES`).
SECTION_ROUNDS = 3

#: Cycles a key word takes when it goes through SubWord: the S-box look-up has two registers
#: (address and output), then the XOR and the chain's register.
SUB_WORD_CYCLES = 3


def key_expansion_plan(key_bits: int) -> tuple:
    """The :class:`KeyStep` of each cycle of the key expansion, for words ``w[Nk]`` to
    ``w[4 * Nr + 3]``: one cycle for a word that is an XOR of two earlier words,
    :data:`SUB_WORD_CYCLES` for a word through SubWord."""
    nk, nr = KEY_WORDS[check_key_bits(key_bits)], ROUNDS[key_bits]
    plan = []
    for i in range(nk, 4 * (nr + 1)):
        kind = key_word_kind(i, nk)
        rcon_byte = rcon(i // nk) >> 24 if kind == "rot_sub_rcon" else 0
        cycles = SUB_WORD_CYCLES if kind else 1
        plan += [KeyStep(cycle == cycles - 1, kind, rcon_byte) for cycle in range(cycles)]
    return tuple(plan)


class PipelinedAES(AESCipher):
    """AES-128/192/256 encryption (FIPS-197) with every round unrolled: a new block can enter
    on every clock edge.

    Pipeline: stage 0 registers the block with the first AddRoundKey. Round r (1..Nr) looks its
    16 state bytes up in 8 tables of two ports (:class:`~cipher_cores.cores.block_ram.RegisteredRom`, a
    ``DP16KD`` each on ECP5), which hold ``S(x)`` and
    ``{02}·S(x)`` (:data:`LOOKUP_TABLE`); the look-up takes two register stages (the RAM's
    address and output registers). SubBytes, ShiftRows, MixColumns and AddRoundKey end in an
    XOR of six terms per bit (``{03}·S`` is ``{02}·S ^ S``): four of them are XORed into the
    round's third register, the other two and the round key on the way to the next round's
    RAMs, so that every path has at most one LUT. In the last round the XOR (ShiftRows of
    ``S``, and the round key) goes into the output register. A ``valid`` bit travels with each
    block.

    Back-pressure: the pipe is cut into sections of :data:`SECTION_ROUNDS` rounds, each ending
    in a register with a spare one behind it (the last section's is the output register).
    Every stage of a section, the RAMs' registers and both end registers included, moves on
    the edges where the section's ``run`` is high, so no block is lost or duplicated. ``run``
    is a register, computed a cycle ahead: when the next section (or the consumer) does not
    take the section's last block on an edge where the section moves, that block goes into
    the spare, and the section stands still until the spare's block has been taken. So no
    enable depends on ``output.ready`` or on another section, and each reaches one section
    of the die only. With ``output.ready`` high the spares are never used.

    Round keys are expanded once per key load and held in registers: a chain of the
    4 (Nr + 1) key words, into which the expansion shifts one word at a time, ``w[i] =
    w[i - Nk] ^ t(w[i - 1])``, with SubWord looked up in two more tables. After the
    expansion word ``w[j]`` sits in link ``j`` of the chain and each round reads its key from
    fixed links. No round key is computed while blocks run.

    **A key change waits for the blocks in flight**: the round keys are shared by every block in
    the pipe, so ``key.ready`` is high only when no block is in the pipe (nor in an end or spare
    register), and while ``key.valid`` is high no block enters (the pipe drains, then the key
    loads). A key transferred while the previous one is still being expanded restarts the
    expansion.

    On the ECP5 85F die (``LFE5U-85F``, ``LFE5UM-85F``, ``LFE5UM5G-85F``) the block RAMs are
    placed by the die's floorplan (:func:`cipher_cores.cores.fpga.floorplan`,
    ``"aes.pipelined"``): round after round along the RAM rows, so that each round's RAMs are
    neighbours. Elsewhere the placer chooses. ``DP16KD`` are
    instantiated on every ECP5 (for their output registers); elsewhere the tables are
    :class:`~amaranth.lib.memory.Memory` (the core needs 8 Nr + 2 block RAMs: 82, 98 or 114,
    which no iCE40 has).

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    decrypt : :class:`bool`
        Must be ``False``: this core encrypts only (which is what the CTR, CFB, OFB and GCM modes
        need); the ``decrypt`` field of ``input.payload`` is ignored and every block is
        encrypted.

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        Loads a key, ``int.from_bytes(fips197_key_bytes, "big")``. ``key.ready`` is high when no
        block is in the pipe and no result is waiting.
    input : ``In(stream.Signature(BlockRequest(128)))``
        One block, ``int.from_bytes(fips197_block_bytes, "big")``. ``input.ready`` is low until
        the first key has been expanded, while ``key.valid`` is high, and while the pipe stands
        still.
    output : ``Out(stream.Signature(unsigned(128)))``
        The ciphertexts in the same byte order, in order: the output register, or the spare
        behind it while that holds the older result. With ``output.ready`` low the core holds
        up to :attr:`stages` + :attr:`spares` blocks.

    Cycle counts
    ------------
    In clock edges, with ``output.ready`` held high; Nr is 10, 12 or 14:

    ====================  =======  =======  =======
    figure                AES-128  AES-192  AES-256
    ====================  =======  =======  =======
    latency               34       40       47
    initiation interval   1        1        1
    key load              63       65       81
    ====================  =======  =======  =======

    * latency (:attr:`latency`): the :attr:`stages` from the edge where a block transfers in to
      the edge where its result transfers out: the input stage, three per round and the end
      register of each section but the last (3 Nr + 1 + ceil(Nr / 3) - 1).
    * initiation interval (:attr:`initiation_interval`): 1.
    * key load (:attr:`key_load_cycles`): the key is captured on its transfer edge and put in the
      chain on the next; one edge later (the expansion's first step is decoded meanwhile) each
      of the 4 Nr + 4 - Nk expanded words takes one edge, or :data:`SUB_WORD_CYCLES` for a word
      through SubWord (see :func:`key_expansion_plan`); a block can transfer on the edge after
      the last word. A key transfers at the earliest one edge after the last result of the
      previous key left.

    The figures are the same for all data and keys.

    Reset
    -----
    A reset at any time leaves an empty pipe with no key loaded; blocks in flight are dropped.
    """
    def __init__(self, key_bits: int = 128, *, decrypt: bool = False, lanes: int = 1):
        super().__init__(key_bits, decrypt=decrypt, lanes=lanes)
        if decrypt:
            raise ValueError("decrypt must be False: the pipelined AES core encrypts only")
        self._lanes = lanes

    @property
    def lanes(self) -> int:
        """Pipelines side by side (1 or 2), sharing the round keys: blocks per transfer."""
        return self._lanes

    @property
    def rounds(self) -> int:
        """Nr, the number of rounds."""
        return ROUNDS[self._key_bits]

    @property
    def stages(self) -> int:
        """Register stages a block goes through: the input stage, three per round (the look-up's
        address and output registers, and the register after the round's XOR, which in the last
        round is the output register), and the end register of each section but the last."""
        return 3 * self.rounds + 1 + len(self._sections()) - 1

    @property
    def spares(self) -> int:
        """Spare registers, one per section: with ``output.ready`` low the core holds
        :attr:`stages` + :attr:`spares` blocks."""
        return len(self._sections())

    @property
    def block_rams(self) -> int:
        """Tables of two ports (block RAMs): 8 per round and lane, and 2 for the key expansion."""
        return 8 * self.rounds * self._lanes + 2

    @property
    def latency(self) -> int:
        return self.stages

    @property
    def initiation_interval(self) -> int:
        return 1

    @property
    def key_load_cycles(self) -> int:
        # The transfer edge captures the key, the next puts it in the chain, the plan starts
        # one cycle later (its first step is decoded meanwhile); a block can transfer on the
        # edge after the plan's last.
        return 2 + len(key_expansion_plan(self._key_bits)) + 1

    def elaborate(self, platform):
        m = Module()
        nr = self.rounds
        sections = self._sections()

        # Handshake. The pipe is cut into sections of a few rounds, each ending in a register
        # with a spare behind it (the last one's is the output register). Every stage of a
        # section moves on an edge where the section's `run` is high; `run` is a register,
        # computed from the section's end a cycle ahead, so no enable depends on logic in the
        # same cycle, and each one reaches a section only (a single enable across the die,
        # then enables of the end registers that depended on the next section, were the
        # critical path). `input.ready` is `run & key_loaded & settled & ~key.valid` with the
        # first section's `run` (its stage 0 is near the input), `key_loaded & settled`
        # registered together (`accepting`, from their next values).
        runs = [Signal(init=1, name=f"run_{k}") for k in range(len(sections))]
        load_key = Signal()
        load_block = Signal()
        key_loaded = Signal()
        settled = Signal()          # the round keys of the last key are in place
        settled_next = Signal()
        accepting = Signal()
        m.d.comb += [
            load_key.eq(self.key.valid & self.key.ready),
            self.input.ready.eq(runs[0] & accepting & ~self.key.valid),
            load_block.eq(self.input.valid & self.input.ready),
        ]
        m.d.sync += [
            key_loaded.eq(key_loaded | load_key),
            settled.eq(settled_next),
            accepting.eq((key_loaded | load_key) & settled_next),
        ]
        # `key.ready`: no block in the core. The blocks in it are counted (one-hot, bit n for
        # n blocks) from the two transfers alone, so that `key.ready` does not gather the valid
        # bits of every section across the die in one cycle (which was the critical path).
        occupancy = Signal(self.stages + self.spares + 1, init=1)
        leaving = self.output.valid & self.output.ready
        with m.If(load_block & ~leaving):
            m.d.sync += occupancy.eq(Cat(C(0, 1), occupancy[:-1]))
        with m.Elif(leaving & ~load_block):
            m.d.sync += occupancy.eq(Cat(occupancy[1:], C(0, 1)))
        m.d.comb += self.key.ready.eq(occupancy[0])

        # Where the die has a floorplan (the ECP5 85F), the RAMs go in a row, round after round,
        # then the key's two: left to itself, nextpnr scattered each round's RAMs over the die
        # (91 MHz, every critical path a route of 4 to 6 ns between a round's RAMs).
        # With two lanes each lane has half of the floorplan's snake (two RAM rows) and is laid
        # out in it as one lane in the whole, the key's two RAMs after lane 0's rounds (with
        # each round's 16 RAMs side by side in one row, the route from a round to the next
        # was 4 groups of RAMs long: 159 MHz); where the floorplan has too few sites (two lanes
        # of AES-192 or AES-256) the placer chooses.
        lanes = self._lanes
        suffixes = [""] if lanes == 1 else [f"_lane{lane}" for lane in range(lanes)]
        sites = [None] * self.block_rams
        floorplan = fpga.floorplan(platform, "aes.pipelined")
        if floorplan is not None and lanes == 1:
            sites = floorplan.sites("rams", self.block_rams)
        elif floorplan is not None and 8 * nr + 2 <= len(floorplan.sites("rams")) // lanes:
            snake, half = floorplan.sites("rams"), len(floorplan.sites("rams")) // lanes
            sites = [snake[half * lane + 8 * (r - 1) + i]
                     for r in range(1, nr + 1) for lane in range(lanes) for i in range(8)]
            sites += snake[8 * nr:8 * nr + 2]

        round_keys = self._key_expansion(m, load_key, settled, settled_next,
                                         sites[8 * nr * lanes:])
        # Lanes after the first read registered copies of round keys 1 to Nr, which placement
        # can put by their lane's RAMs (one copy for both lanes, midway between their rows, was
        # the critical path: 182 MHz). A copy is a cycle late, which no block sees: round 1's
        # key is read three edges after the block's first (and stage 0 reads the chain).
        lane_keys = [round_keys]
        for suffix in suffixes[1:]:
            copies = [Signal(128, name=f"round_key_{r}{suffix}", reset_less=True)
                      for r in range(1, nr + 1)]
            m.d.sync += [copy.eq(key) for copy, key in zip(copies, round_keys[1:])]
            lane_keys.append([round_keys[0]] + copies)

        # Stage 0: the block and round key 0. The datapath registers have no reset: only the
        # valid bits say what they hold. Block 0 (lane 0) is the most significant.
        states = [Signal(128, name=f"stage_0{suffix}", reset_less=True) for suffix in suffixes]
        blocks = [self.input.payload.block[128 * (lanes - 1 - lane):128 * (lanes - lane)]
                  for lane in range(lanes)]
        with m.If(runs[0]):
            m.d.sync += [state.eq(block ^ round_keys[0]) for state, block in zip(states, blocks)]

        entering = load_block
        for k, rounds in enumerate(sections):
            run, last_section = runs[k], k == len(sections) - 1
            # The section's stages before its end register: three a round (two in the last
            # round, whose third is the output register), and stage 0 in the first section.
            valid = Signal(3 * len(rounds) + (k == 0) - last_section, name=f"valid_{k}")
            with m.If(run):
                m.d.sync += valid.eq(Cat(entering, valid[:-1]))
            for r in rounds:
                for lane, suffix in enumerate(suffixes):
                    first = 8 * ((r - 1) * lanes + lane)
                    states[lane] = self._round(m, r, states[lane], lane_keys[lane][r], run,
                                               sites[first:first + 8], suffix)
            ready = self.output.ready if last_section else runs[k + 1]
            head_valid, states, spare_valid_next = self._section_end(
                m, f"section_{k}", states, valid[-1], run, ready, suffixes)
            m.d.sync += run.eq(~spare_valid_next)
            entering = head_valid
        payload = states[0] if lanes == 1 else Cat(*reversed(states))
        m.d.comb += [self.output.valid.eq(entering), self.output.payload.eq(payload)]
        return m

    def _sections(self) -> list:
        """The rounds of each section: :data:`SECTION_ROUNDS` at a time."""
        rounds = list(range(1, self.rounds + 1))
        return [rounds[i:i + SECTION_ROUNDS] for i in range(0, len(rounds), SECTION_ROUNDS)]

    def _round(self, m, r, state, round_key, en, sites, suffix=""):
        """Round ``r`` on ``state`` (the register or the value that addresses its look-ups):
        the look-up (two stages), then the round's third register, which holds the XOR of four
        of the five look-up terms of each bit (``partial``, one LUT after the RAMs) and the S
        bytes themselves (``delayed``); the fifth term and the round key are added after it
        (one more LUT), on the way to the next round's RAMs, so every path is one LUT between
        two registers. Returns the round's result; in the last round, ShiftRows(S) and the
        round key, straight from the RAMs (its third register is the output register)."""
        looked_up = self._look_up(m, state, en, f"round_{r}{suffix}", sites)
        substituted = [word[:8] for word in looked_up]
        doubled = [word[8:] for word in looked_up]
        key_bytes = state_bytes(round_key)
        result = Signal(128, name=f"state_{r}{suffix}")
        if r == self.rounds:
            m.d.comb += result.eq(join_bytes(
                substituted[SHIFT_ROWS[i]] ^ key_bytes[i] for i in range(16)))
            return result
        partial = Signal(128, name=f"partial_{r}{suffix}", reset_less=True)
        delayed = Signal(128, name=f"delayed_{r}{suffix}", reset_less=True)
        late_lanes, early = [], []
        for i in range(16):
            terms, late_lane = self._mix_terms(i, substituted, doubled)
            value = terms[0]
            for term in terms[1:]:
                value = value ^ term
            early.append(value)
            late_lanes.append(late_lane)
        with m.If(en):
            m.d.sync += [partial.eq(join_bytes(early)), delayed.eq(join_bytes(substituted))]
        partial_bytes, delayed_bytes = state_bytes(partial), state_bytes(delayed)
        m.d.comb += result.eq(join_bytes(
            partial_bytes[i] ^ delayed_bytes[late_lanes[i]] ^ key_bytes[i] for i in range(16)))
        return result

    @staticmethod
    def _section_end(m, name, results, arriving, run, ready, suffixes) -> tuple:
        """A section's end register and the spare register behind it, one pair per lane
        (``results`` and the name ``suffixes`` by lane) with one pair of valid bits; returns
        the valid bit and the values of the older block they hold (the spare's, if it holds
        one: a list by lane), which the next section (or ``output``) takes on an edge where
        ``ready`` is high, and the next value of the spare's valid bit, which stops the section
        (its ``run``).

        Both registers move with the section (``run``): the end register takes the section's
        ``result`` (valid if ``arriving``), the spare takes the end register's block, which
        matters when that block is not taken on that edge. The section then stands still until
        the spare's block has been taken. So no enable depends on ``ready``.
        """
        ends = [Signal(128, name=f"{name}_end{suffix}", reset_less=True) for suffix in suffixes]
        end_valid = Signal(name=f"{name}_end_valid")
        spares = [Signal(128, name=f"{name}_spare{suffix}", reset_less=True)
                  for suffix in suffixes]
        spare_valid = Signal(name=f"{name}_spare_valid")
        spare_valid_next = Signal(name=f"{name}_spare_valid_next")
        with m.If(run):
            for lane, (end, spare, result) in enumerate(zip(ends, spares, results)):
                m.d.sync += [end.eq(result)] + [end_valid.eq(arriving)] * (lane == 0) + \
                    [spare.eq(end)]
        # The section runs only while the spare is empty: its head is then the end register.
        m.d.comb += spare_valid_next.eq(Mux(run, end_valid, spare_valid) & ~ready)
        m.d.sync += spare_valid.eq(spare_valid_next)
        heads = [Mux(spare_valid, spare, end) for end, spare in zip(ends, spares)]
        return spare_valid | end_valid, heads, spare_valid_next

    @staticmethod
    def _mix_terms(i, substituted, doubled) -> tuple:
        """Byte ``i`` of MixColumns(ShiftRows(SubBytes(s))) as look-up terms: ``S`` for a
        coefficient {01}, ``{02}·S`` for {02}, both for {03}. Returns the terms but one, and
        the state byte whose ``S`` is the one left out (the last with coefficient {01})."""
        row, column = i % 4, i // 4
        terms, late_lane = [], None
        for k in range(4):
            coefficient = MIX_COLUMNS[(k - row) % 4]
            assert coefficient in (1, 2, 3)
            lane = SHIFT_ROWS[k + 4 * column]
            if coefficient == 1:
                if late_lane is not None:
                    terms.append(substituted[late_lane])
                late_lane = lane
            elif coefficient & 1:
                terms.append(substituted[lane])
            if coefficient & 2:
                terms.append(doubled[lane])
        return terms, late_lane

    @staticmethod
    def _look_up(m, state, en, name, sites) -> list:
        """The :data:`LOOKUP_TABLE` word of each byte of ``state`` (a list by byte), two enabled
        edges later.

        The bytes are paired by diagonal: ShiftRows takes diagonal c to column c, which
        MixColumns mixes, so each column of the round's result reads two neighbouring RAMs
        only, and the spread of the state over the next round's RAMs is on the route from a
        register to a RAM address, which has no logic.
        """
        data = state_bytes(state)
        words = [None] * 16
        for pair in range(8):
            table = RegisteredRom(LOOKUP_TABLE, width=16, ports=2, sites=[sites[pair]])
            m.submodules[f"{name}_lookup_{pair}"] = table
            lanes = SHIFT_ROWS[2 * pair], SHIFT_ROWS[2 * pair + 1]
            for port, lane in enumerate(lanes):
                m.d.comb += table.addr[port].eq(data[lane])
                words[lane] = table.data[port]
            m.d.comb += table.en.eq(en)
        return words

    def _key_expansion(self, m, load_key, settled, settled_next, sites) -> list:
        """The key-word chain and its expansion; returns the Nr + 1 round keys (128-bit values
        read from the chain)."""
        nr, nk = self.rounds, KEY_WORDS[self._key_bits]
        plan = key_expansion_plan(self._key_bits)
        links = 4 * (nr + 1)
        chain = [Signal(32, name=f"key_word_{j}", reset_less=True) for j in range(links)]

        # The payload is captured on every edge and put in the chain on the edge after a key
        # transfer: the enable of the chain is then a register, not the producer's `key.valid`.
        captured_key = Signal(self._key_bits, reset_less=True)
        key_captured = Signal()
        m.d.sync += [captured_key.eq(self.key.payload), key_captured.eq(load_key)]

        # The plan, one step per cycle. Its controls are registered twice: decoded from the
        # cycle count near the counter, then copied next to the links they drive (decoding and
        # the route across the chain in one cycle was the critical path). The chain shifts by
        # groups of four links (a round key), each with an enable register of its own: one
        # enable for the whole chain was the critical path too. Group g only has to shift once
        # words of the key have come down to it, so its enable skips the shifts before
        # (`first_shift`): the groups' enables are different functions, which synthesis cannot
        # merge back into one register.
        done = len(plan)
        groups = nr + 1
        first_shift = [max(1, links - nk - (4 * g + 3)) for g in range(groups)]
        shift_number = list(itertools.accumulate(step.shift for step in plan))
        kinds = sorted({step.kind for step in plan}, key=str)

        def controls(name):
            return (Signal(range(len(kinds)), name=f"{name}kind"), Signal(8, name=f"{name}rcon"),
                    [Signal(name=f"{name}shift_{g}") for g in range(groups)],
                    Signal(name=f"{name}last"))

        decoded = controls("decoded_")
        kind, rcon_byte, shifts, last = controls("")

        def decode(index):
            step = plan[index] if index < done else KeyStep(False, None, 0)
            number = shift_number[index] if index < done else 0
            d_kind, d_rcon, d_shifts, d_last = decoded
            m.d.sync += [d_kind.eq(kinds.index(step.kind)), d_rcon.eq(step.rcon_byte),
                         d_last.eq(index == done - 1)]
            m.d.sync += [d_shifts[g].eq(step.shift and number >= first_shift[g])
                         for g in range(groups)]

        # `cycle` counts from the key transfer; its step is decoded on the next edge and in use
        # on the one after, when the key is in the chain.
        cycle = Signal(range(done + 1), init=done)     # `done`: no expansion running
        with m.If(load_key):
            m.d.sync += cycle.eq(0)
        with m.Elif(cycle != done):
            m.d.sync += cycle.eq(cycle + 1)
        with m.Switch(cycle):
            for index in range(done):
                with m.Case(index):
                    decode(index)
            with m.Default():
                decode(done)
        m.d.sync += [Cat(kind, rcon_byte, *shifts, last).eq(Cat(*decoded[:2], *decoded[2],
                                                                 decoded[3]))]
        # A new key: what is decoded from the previous expansion must not act on it. Cleared
        # where it is decoded, on the key's transfer edge, so that nothing is shifted on the
        # edge after the key goes into the chain (a shift before it only moves what the key
        # then replaces); `last` of the previous expansion is ignored on that edge (below).
        with m.If(load_key):
            m.d.sync += [decoded[3].eq(0)] + [shift.eq(0) for shift in decoded[2]]
        # Settled after the plan's last step; a key transferred on that edge (or any other)
        # unsettles the core.
        with m.If(load_key):
            m.d.comb += settled_next.eq(0)
        with m.Elif(last & ~key_captured):
            m.d.comb += settled_next.eq(1)
        with m.Else():
            m.d.comb += settled_next.eq(settled)

        # SubWord of the last word in the chain (rotated first, for "rot_sub_rcon"), looked up
        # on every edge; its result belongs to the word that was last two edges before.
        last = chain[-1]
        sub_input = last.rotate_left(8)
        if "sub" in kinds:
            sub_input = Signal(32)
            with m.If(kind == kinds.index("sub")):
                m.d.comb += sub_input.eq(last)
            with m.Else():
                m.d.comb += sub_input.eq(last.rotate_left(8))
        sub_bytes = []
        data = [sub_input[8 * (3 - b):8 * (4 - b)] for b in range(4)]   # MSB first
        for pair in range(2):
            table = RegisteredRom(LOOKUP_TABLE, width=16, ports=2, sites=[sites[pair]])
            m.submodules[f"key_lookup_{pair}"] = table
            m.d.comb += table.en.eq(1)
            for port in range(2):
                m.d.comb += table.addr[port].eq(data[2 * pair + port])
                sub_bytes.append(table.data[port][:8])
        sub_word = Cat(*reversed(sub_bytes))

        new_word = Signal(32)
        with m.If(kind == kinds.index(None)):
            m.d.comb += new_word.eq(chain[-nk] ^ last)
        with m.Else():
            m.d.comb += new_word.eq(chain[-nk] ^ sub_word ^ Cat(C(0, 24), rcon_byte))

        for j in range(links):
            with m.If(shifts[j // 4]):
                m.d.sync += chain[j].eq(chain[j + 1] if j < links - 1 else new_word)
        # The key goes into the top links (after the shift: it takes priority).
        key_words = [captured_key[32 * (nk - 1 - k):32 * (nk - k)] for k in range(nk)]
        with m.If(key_captured):
            for k in range(nk):
                m.d.sync += chain[links - nk + k].eq(key_words[k])

        return [Cat(*reversed(chain[4 * r:4 * r + 4])) for r in range(nr + 1)]


class TwoLanePipelinedAES(PipelinedAES):
    """:class:`PipelinedAES` with two lanes: two blocks per clock, 256 bits per transfer.

    Two pipelines side by side, moved by the same enables and valid bits, share one key
    expansion: lane 0 reads the round keys from the key-word chain, lane 1 from a registered copy
    of them (one cycle late, before any block can use them). Each transfer of ``input`` and ``output`` carries two blocks:
    block 0 in the most significant 128 bits (``block[128:256]``), block 1 in the least, each
    ``int.from_bytes(fips197_block_bytes, "big")``; the reference model is ECB of the two blocks
    under the one key. Latency, initiation interval and key load are those of
    :class:`PipelinedAES`; the core needs ``16 Nr + 2`` block RAMs (162 for AES-128, which the ECP5
    85F has: each lane gets half of the floorplan's snake, rows 82 and 70 for lane 0, rows 46 and
    22 for lane 1, laid out as the one-lane core is in the whole, the key expansion's 2 after lane
    0's rounds; AES-192, 194 RAMs, is placed by nextpnr; AES-256, 226, fits no ECP5).

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    decrypt : :class:`bool`
        Must be ``False``, as in :class:`PipelinedAES`.
    """
    def __init__(self, key_bits: int = 128, *, decrypt: bool = False):
        super().__init__(key_bits, decrypt=decrypt, lanes=2)
