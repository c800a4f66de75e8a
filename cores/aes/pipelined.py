"""A pipelined AES-128/192/256 encryption core: all rounds unrolled, one block per clock.

Each round looks its 16 state bytes up in tables of ``S(x)`` and ``{02}·S(x)`` side by side (the
two columns of a T-table that are not derived by XOR), so a round is a look-up, an XOR of at most
six terms per bit (MixColumns and AddRoundKey together) and a register, which addresses the next
round's look-up. The tables are block RAM read through two registers (the RAM's address register
and, on ECP5, its own output register), so a round is three pipeline stages and no path crosses
a RAM's slow clock-to-output.
"""

import itertools

from amaranth.hdl import C, Cat, ClockSignal, Const, Instance, Module, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from ..cipher import BlockCipher
from .gf import xtime
from .reference import check_key_bits
from .round import join_bytes, state_bytes
from .sbox import SBOX
from .transforms import KEY_WORDS, MIX_COLUMNS, ROUNDS, SHIFT_ROWS, key_word_kind, rcon


__all__ = ["LOOKUP_TABLE", "KeyStep", "key_expansion_plan", "TableLookup", "PipelinedAES"]


#: The table every look-up reads: ``S(x)`` in bits 7..0 and ``{02}·S(x)`` in bits 15..8.
#: ``{03}·S(x)``, the third multiple MixColumns needs, is their XOR, taken in the round's XOR.
LOOKUP_TABLE = tuple(SBOX[x] | xtime(SBOX[x]) << 8 for x in range(256))


class KeyStep(tuple):
    """One cycle of the key expansion: ``(shift, kind, rcon_byte)``.

    ``shift``: the key-word chain takes a new word on the edge that ends this cycle. ``kind``:
    how the word being computed transforms the word before it (``"rot_sub_rcon"``, ``"sub"`` or
    ``None``, as :func:`~cores.aes.transforms.key_word_kind`); ``rcon_byte``: the round constant
    added to its most significant byte (0 if none).
    """
    __slots__ = ()

    def __new__(cls, shift, kind, rcon_byte):
        return super().__new__(cls, (shift, kind, rcon_byte))

    shift = property(lambda self: self[0])
    kind = property(lambda self: self[1])
    rcon_byte = property(lambda self: self[2])


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


#: The rows of block RAM on the ECP5 85F die (LFE5U-85F, LFE5UM-85F, LFE5UM5G-85F), as nextpnr
#: numbers them: each holds 13 groups of 4 ``DP16KD`` (read off nextpnr's placement of 208 RAMs).
ECP5_85F_RAM_ROWS = (82, 70, 46, 22)


def ecp5_85f_floorplan(count: int) -> list:
    """``count`` block RAM sites of the ECP5 85F die (nextpnr ``BEL`` names) along one snake:
    row 82 left to right, row 70 right to left, and so on, so that consecutive sites are
    neighbours. Each row gives its first 12 groups (six rounds of 8 RAMs): a round split between
    two rows had the critical path."""
    sites = []
    for index, row in enumerate(ECP5_85F_RAM_ROWS):
        order = (lambda values: values) if index % 2 == 0 else reversed
        for group in order(range(12)):
            for k in order(range(4)):
                # Groups of four sites, 9 columns apart; the die's centre adds 2 columns.
                x = 4 + 9 * group + 2 * k + (2 if group >= 7 else 0)
                sites.append(f"X{x}/Y{row}/EBR{k}")
    if count > len(sites):
        raise ValueError(f"the floorplan has {len(sites)} block RAM sites, not {count}")
    return sites[:count]


class TableLookup(wiring.Component):
    """Two look-ups per clock in one table of 256 words, each through two registers.

    On ECP5 this is one ``DP16KD`` in true dual-port 1024x18 mode, each port with its output
    register (``REGMODE="OUTREG"``): the RAM's clock-to-output then leaves the critical path,
    which Yosys' block RAM mapping does not offer, so the RAM is instantiated directly. Elsewhere
    (iCE40, simulation, exported Verilog) it is a :class:`~amaranth.lib.memory.Memory` with two
    synchronous read ports, each followed by a register: the same cycle behaviour.

    Parameters
    ----------
    table : sequence of :class:`int`
        256 words.
    width : :class:`int`
        Bits of a word, at most 18.
    site : :class:`str` or ``None``
        On ECP5, the block RAM site nextpnr must place the RAM at (its ``BEL`` name, such as
        ``"X4/Y82/EBR0"``); ``None`` leaves the choice to the placer.

    Members
    -------
    addr_a, addr_b : ``In(8)``
        The two addresses, taken on an edge where ``en`` is high.
    en : ``In(1)``
        Enables both registers of both ports.
    data_a, data_b : ``Out(width)``
        The words at the addresses taken two enabled edges earlier.
    """
    def __init__(self, table, *, width: int, site: str | None = None):
        if len(table) != 256 or not 0 < width <= 18 or any(word >> width for word in table):
            raise ValueError("table must be 256 words of at most 18 bits")
        self._table = tuple(table)
        self._width = width
        self._site = site
        super().__init__({
            "addr_a": In(8), "addr_b": In(8), "en": In(1),
            "data_a": Out(width), "data_b": Out(width),
        })

    @staticmethod
    def initial_values(table) -> dict:
        """The ``INITVAL_00`` .. ``INITVAL_3F`` parameters of a ``DP16KD`` in 1024x18 mode
        holding ``table`` at addresses 0 onwards: each holds 16 words, word ``k`` in bits
        ``20 * k`` to ``20 * k + 17`` (as Yosys' own ECP5 block RAM mapping writes them)."""
        words = list(table) + [0] * (1024 - len(table))
        values = {}
        for row in range(64):
            value = 0
            for k in range(16):
                value |= words[16 * row + k] << (20 * k)
            values[f"INITVAL_{row:02X}"] = value
        return values

    def elaborate(self, platform):
        m = Module()
        ports = (("A", self.addr_a, self.data_a), ("B", self.addr_b, self.data_b))
        if getattr(platform, "family", None) == "ecp5":
            kwargs = {f"p_{name}": Const(value, 320)
                      for name, value in self.initial_values(self._table).items()}
            kwargs.update(p_GSR="AUTO", p_RESETMODE="SYNC", p_ASYNC_RESET_RELEASE="SYNC")
            if self._site is not None:
                kwargs["a_BEL"] = self._site
            for port, addr, data in ports:
                # In 18-bit mode the word address is ADx13..ADx4 (ADx1..0 are byte enables).
                address = Cat(C(0, 4), addr, C(0, 2))
                data_out = Signal(18, name=f"do{port.lower()}")
                kwargs.update({
                    f"p_DATA_WIDTH_{port}": 18, f"p_REGMODE_{port}": "OUTREG",
                    f"p_CSDECODE_{port}": "0b000", f"p_WRITEMODE_{port}": "NORMAL",
                    f"i_CLK{port}": ClockSignal("sync"), f"i_CE{port}": self.en,
                    f"i_OCE{port}": self.en, f"i_WE{port}": C(0), f"i_RST{port}": C(0),
                    **{f"i_CS{port}{bit}": C(0) for bit in range(3)},
                    **{f"i_AD{port}{bit}": address[bit] for bit in range(14)},
                    **{f"i_DI{port}{bit}": C(0) for bit in range(18)},
                    **{f"o_DO{port}{bit}": data_out[bit] for bit in range(18)},
                })
                m.d.comb += data.eq(data_out[:self._width])
            m.submodules.ram = Instance("DP16KD", **kwargs)
            return m

        m.submodules.ram = ram = memory.Memory(shape=unsigned(self._width), depth=256,
                                               init=self._table, attrs={"ram_style": "block"})
        for port, addr, data in ports:
            read = ram.read_port(domain="sync", transparent_for=())
            m.d.comb += [read.addr.eq(addr), read.en.eq(self.en)]
            with m.If(self.en):
                m.d.sync += data.eq(read.data)
        return m


class PipelinedAES(BlockCipher):
    """AES-128/192/256 encryption (FIPS-197) with every round unrolled: a new block can enter
    on every clock edge.

    Pipeline: stage 0 registers the block with the first AddRoundKey. Round r (1..Nr) looks its
    16 state bytes up in 8 :class:`TableLookup` (two bytes each), which hold ``S(x)`` and
    ``{02}·S(x)`` (:data:`LOOKUP_TABLE`); the look-up takes two register stages (the RAM's
    address and output registers). SubBytes, ShiftRows, MixColumns and AddRoundKey then end in
    one XOR of at most six terms per bit (``{03}·S`` is ``{02}·S ^ S``), registered in the
    round's third stage, which is the address of the next round's look-up; in the last round
    the XOR (ShiftRows of ``S``, and the round key) goes into the output register. So a block
    goes through 3 Nr + 1 registers, and every path between two of them is one route and at
    most two LUTs. A ``valid`` bit travels with each block.

    Back-pressure: every stage moves on the edges where ``run`` is high, one clock enable for
    the whole pipe (the RAMs' registers included), so no block is lost or duplicated. ``run``
    is a register, computed a cycle ahead, so that the consumer's ``output.ready`` does not
    reach ~3,000 enables across the die: when the consumer stops taking results, the result
    that comes out of the pipe on the next edge waits in a spare register behind the output
    register, and the pipe stands still until the output register has taken it.

    Round keys are expanded once per key load and held in registers: a chain of the
    4 (Nr + 1) key words, into which the expansion shifts one word at a time, ``w[i] =
    w[i - Nk] ^ t(w[i - 1])``, with SubWord looked up in two more :class:`TableLookup`. After the
    expansion word ``w[j]`` sits in link ``j`` of the chain and each round reads its key from
    fixed links. No round key is computed while blocks run.

    **A key change waits for the blocks in flight**: the round keys are shared by every block in
    the pipe, so ``key.ready`` is high only when the pipe and both output registers are empty,
    and while ``key.valid`` is high no block enters (the pipe drains, then the key loads). A key
    transferred while the previous one is still being expanded restarts the expansion.

    On the ECP5 85F die (``LFE5U-85F``, ``LFE5UM-85F``, ``LFE5UM5G-85F``) the block RAMs are
    placed by the core (:func:`ecp5_85f_floorplan`): round after round along the RAM rows, so
    that each round's RAMs are neighbours. Elsewhere the placer chooses.

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
        The ciphertexts in the same byte order, in order; the payload is the output register.
        With ``output.ready`` low the core holds up to :attr:`stages` + 1 blocks.

    Cycle counts
    ------------
    In clock edges, with ``output.ready`` held high; Nr is 10, 12 or 14:

    ====================  =======  =======  =======
    figure                AES-128  AES-192  AES-256
    ====================  =======  =======  =======
    latency               31       37       43
    initiation interval   1        1        1
    key load              63       65       81
    ====================  =======  =======  =======

    * latency (:attr:`latency`): 3 Nr + 1 register stages from the edge where a block transfers
      in to the edge where its result transfers out (the input stage, three per round).
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
    def __init__(self, key_bits: int = 128, *, decrypt: bool = False):
        check_key_bits(key_bits)
        if not isinstance(decrypt, bool):
            raise TypeError(f"decrypt must be a bool, not {decrypt!r}")
        if decrypt:
            raise ValueError("decrypt must be False: the pipelined AES core encrypts only")
        self._key_bits = key_bits
        super().__init__(128, key_bits)

    @property
    def decrypt(self) -> bool:
        """Whether the core decrypts: always ``False``."""
        return False

    @property
    def rounds(self) -> int:
        """Nr, the number of rounds."""
        return ROUNDS[self._key_bits]

    @property
    def stages(self) -> int:
        """Register stages a block goes through: the input stage, three per round (the look-up's
        address and output registers, and the register after the round's XOR, which in the last
        round is the output register)."""
        return 3 * self.rounds + 1

    @property
    def block_rams(self) -> int:
        """Tables of :class:`TableLookup` (block RAMs): 8 per round and 2 for the key expansion."""
        return 8 * self.rounds + 2

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
        nr, nk = self.rounds, KEY_WORDS[self._key_bits]

        # Handshake. Every stage but the output moves on an edge where `run` is high; `run` is
        # a register (computed from the output slots a cycle ahead), so the consumer's `ready`
        # never reaches the clock enables of the ~3,000 registers and 160 RAM ports spread
        # along the pipe, which was the critical path. The cost: when the consumer stops
        # taking results, one more result comes out of the pipe than there is room for in the
        # output register, and waits in a spare one.
        # `input.ready` is `run & key_loaded & settled & ~key.valid`, its first three terms
        # registered together (`accepting`, from their next values), so that `run`, whose
        # register sits in the middle of its enables, has no other load.
        valid = Signal(self.stages - 1)     # every stage before the output register
        run = Signal(init=1)
        run_next = Signal()
        load_key = Signal()
        load_block = Signal()
        key_loaded = Signal()
        settled = Signal()          # the round keys of the last key are in place
        settled_next = Signal()
        accepting = Signal()
        m.d.comb += [
            load_key.eq(self.key.valid & self.key.ready),
            self.input.ready.eq(accepting & ~self.key.valid),
            load_block.eq(self.input.valid & self.input.ready),
        ]
        with m.If(run):
            m.d.sync += valid.eq(Cat(load_block, valid[:-1]))
        m.d.sync += [
            key_loaded.eq(key_loaded | load_key),
            settled.eq(settled_next),
            run.eq(run_next),
            accepting.eq(run_next & (key_loaded | load_key) & settled_next),
        ]

        # On the ECP5 85F die the RAMs go in a row, round after round, then the key's two: left to
        # itself, nextpnr scattered each round's RAMs over the die (91 MHz, every critical path
        # a route of 4 to 6 ns between a round's RAMs).
        sites = [None] * self.block_rams
        if getattr(platform, "family", None) == "ecp5" and \
                str(getattr(platform, "device", "")).endswith("-85F"):
            sites = ecp5_85f_floorplan(self.block_rams)

        round_keys = self._key_expansion(m, load_key, settled, settled_next, sites[8 * nr:])

        # Stage 0: the block and round key 0. The datapath registers have no reset: only
        # `valid` says what they hold.
        stage_0 = Signal(128, reset_less=True)
        with m.If(run):
            m.d.sync += stage_0.eq(self.input.payload.block ^ round_keys[0])

        # Round r: the look-up (two stages), then the round's third register, which holds
        # the XOR of four of the five look-up terms of each bit (`partial`, one LUT after the
        # RAMs) and the S bytes themselves (`delayed`); the fifth term and the round key are
        # added after it (one more LUT), on the way to the next round's RAMs. Every path is
        # then one LUT between two registers.
        state = stage_0
        for r in range(1, nr + 1):
            looked_up = self._look_up(m, state, run, f"round_{r}",
                                      sites[8 * (r - 1):8 * r])
            substituted = [word[:8] for word in looked_up]
            doubled = [word[8:] for word in looked_up]
            key_bytes = state_bytes(round_keys[r])
            if r == nr:
                state = Signal(128, name=f"state_{r}")
                m.d.comb += state.eq(join_bytes(
                    substituted[SHIFT_ROWS[i]] ^ key_bytes[i] for i in range(16)))
                break
            partial = Signal(128, name=f"partial_{r}", reset_less=True)
            delayed = Signal(128, name=f"delayed_{r}", reset_less=True)
            late_lanes = []
            early = []
            for i in range(16):
                terms, late_lane = self._mix_terms(i, substituted, doubled)
                value = terms[0]
                for term in terms[1:]:
                    value = value ^ term
                early.append(value)
                late_lanes.append(late_lane)
            with m.If(run):
                m.d.sync += [partial.eq(join_bytes(early)), delayed.eq(join_bytes(substituted))]
            partial_bytes, delayed_bytes = state_bytes(partial), state_bytes(delayed)
            state = Signal(128, name=f"state_{r}")
            m.d.comb += state.eq(join_bytes(
                partial_bytes[i] ^ delayed_bytes[late_lanes[i]] ^ key_bytes[i]
                for i in range(16)))

        self._output_slots(m, state, valid[-1], run_next, load_block, valid)
        return m

    def _output_slots(self, m, result, arriving, run_next, load_block, valid):
        """The output register (``output.payload``) and the spare register behind it.

        ``result`` is the last round's result, ``arriving`` its valid bit: it arrives on an
        edge where ``run`` is high. It goes into the output register if that is free or being
        taken, else into the spare, which then stops the pipe (``run`` low) until the output
        register, taken, has been refilled from it: drives ``run_next``, which ``run`` takes on
        every edge. Also drives ``key.ready``: high when no block is in the pipe or in either
        register (``empty``, registered).
        """
        spare = Signal(128, reset_less=True)
        spare_valid = Signal()
        taken = Signal()
        empty = Signal(init=1)
        m.d.comb += [
            self.key.ready.eq(empty),
            taken.eq(self.output.valid & self.output.ready),
        ]
        output_valid_next = Signal()
        spare_valid_next = Signal()
        with m.If(spare_valid):
            # The pipe stands still; the output register takes the spare when it is taken.
            m.d.comb += [output_valid_next.eq(1), spare_valid_next.eq(~taken)]
            with m.If(taken):
                m.d.sync += self.output.payload.eq(spare)
        with m.Else():
            m.d.comb += [
                output_valid_next.eq(arriving | (self.output.valid & ~taken)),
                spare_valid_next.eq(arriving & self.output.valid & ~taken),
            ]
            with m.If(arriving):
                with m.If(self.output.valid & ~taken):
                    m.d.sync += spare.eq(result)
                with m.Else():
                    m.d.sync += self.output.payload.eq(result)
        m.d.sync += [
            self.output.valid.eq(output_valid_next),
            spare_valid.eq(spare_valid_next),
        ]
        m.d.comb += run_next.eq(~spare_valid_next)
        # Empty after this edge: both registers, and every stage. If the pipe runs on this edge
        # its stages shift (so they are empty after it if no block enters and the stages
        # before the last are empty); if it stands still the spare holds a result and the
        # output register will hold one, so the terms below are low anyway: `run` need not
        # be read. `keep`: the NOR of the stages is a net of its own, the handshake terms come
        # after it (as in PipelinedPRESENT).
        inner_empty = Signal(attrs={"keep": 1})
        m.d.comb += inner_empty.eq(valid[:-1] == 0)
        m.d.sync += empty.eq(~output_valid_next & ~spare_valid_next & ~load_block & inner_empty)

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
            lookup = TableLookup(LOOKUP_TABLE, width=16, site=sites[pair])
            m.submodules[f"{name}_lookup_{pair}"] = lookup
            lane_a, lane_b = SHIFT_ROWS[2 * pair], SHIFT_ROWS[2 * pair + 1]
            m.d.comb += [
                lookup.addr_a.eq(data[lane_a]),
                lookup.addr_b.eq(data[lane_b]),
                lookup.en.eq(en),
            ]
            words[lane_a], words[lane_b] = lookup.data_a, lookup.data_b
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
        # A new key: what is decoded from the previous expansion must not act on it.
        with m.If(load_key):
            m.d.sync += decoded[3].eq(0)
        with m.If(key_captured):
            m.d.sync += [shift.eq(0) for shift in shifts] + [last.eq(0)]
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
        for pair in range(2):
            lookup = TableLookup(LOOKUP_TABLE, width=16, site=sites[pair])
            m.submodules[f"key_lookup_{pair}"] = lookup
            data = [sub_input[8 * (3 - b):8 * (4 - b)] for b in range(4)]   # MSB first
            m.d.comb += [
                lookup.addr_a.eq(data[2 * pair]),
                lookup.addr_b.eq(data[2 * pair + 1]),
                lookup.en.eq(1),
            ]
            sub_bytes += [lookup.data_a[:8], lookup.data_b[:8]]
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
