"""A round-based AES core built around block RAM look-ups: T-tables (SubBytes and MixColumns in
one look-up) with three blocks interleaved, and round keys expanded once into block RAM.

See :class:`TTableAES` for the architecture, its cycle counts and its byte order.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from .base import AESCipher
from .. import fpga
from ..block_ram import KeyMemory, RegisteredRom
from .gf import gf_mul
from .reference import check_key_bits
from .round import column_transform, join_bytes, mix_columns, shift_rows, state_bytes, xtime
from .sbox import INV_SBOX, SBOX
from .transforms import (INV_MIX_COLUMNS, INV_MIX_PREPROCESS, KEY_WORDS, MIX_COLUMNS, ROUNDS,
                         key_word_kind)


__all__ = ["TABLE_KINDS", "STAGES", "table_word", "T_TABLE", "S_TABLE", "mirror",
           "initiation_interval", "expansion_schedule", "expansion_edges", "KeyExpansion",
           "TTableAES"]


#: The ``tables`` a :class:`TTableAES` takes: ``"auto"`` (T-tables, except on iCE40),
#: ``"ttable"`` or ``"sbox"``.
TABLE_KINDS = ("auto", "ttable", "sbox")

#: Register stages around the round loop (the RAM's address and output registers and the state
#: register), hence blocks in flight.
STAGES = 3


def table_word(coefficients, value: int) -> int:
    """The 32-bit column word ``[c0·v, c1·v, c2·v, c3·v]`` (row 0 in the most significant byte)
    that an input byte ``value`` in row 0 of a column adds to the column after multiplying it by
    the circulant matrix whose first row is ``coefficients`` (as in
    :func:`~cipher_cores.cores.aes.transforms.column_transform`): row ``r`` gets
    ``coefficients[-r % 4] · value``."""
    word = 0
    for row in range(4):
        word = word << 8 | gf_mul(coefficients[-row % 4], value)
    return word


#: The T-table of every look-up, 1024 words, addressed by ``{last, inverse, x}``:
#: Te0 (``[2, 1, 1, 3]·S(x)``), Td0 (``[e, 9, d, b]·InvS(x)``), and for the last round
#: ``[S(x), 0, 0, 0]`` and ``[InvS(x), 0, 0, 0]``. Row ``k`` of a column reads the same word
#: rotated right by ``k`` bytes.
T_TABLE = tuple(
    [table_word(MIX_COLUMNS, SBOX[x]) for x in range(256)] +
    [table_word(INV_MIX_COLUMNS, INV_SBOX[x]) for x in range(256)] +
    [table_word((1, 0, 0, 0), SBOX[x]) for x in range(256)] +
    [table_word((1, 0, 0, 0), INV_SBOX[x]) for x in range(256)])

#: The table of the S-box form, 512 bytes addressed by ``{inverse, x}``: S(x), then InvS(x).
S_TABLE = tuple(SBOX) + tuple(INV_SBOX)


def _columns(value):
    """The four 32-bit columns of a 128-bit state, column 0 (the most significant) first."""
    return [value[32 * (3 - c):32 * (4 - c)] for c in range(4)]


def _join_columns(columns):
    return Cat(*reversed(list(columns)))


def mirror(value):
    """The state with its columns in reverse order (column ``c`` to column ``-c mod 4``: columns 1
    and 3 swap). Decryption runs on the mirrored state, where InvShiftRows is wired as
    ShiftRows."""
    columns = _columns(value)
    return _join_columns(columns[-c % 4] for c in range(4))


def initiation_interval(rounds: int, stages: int = STAGES) -> int:
    """Edges between blocks: the smallest number from ``rounds + 1`` up that shares no factor
    with ``stages``, so that blocks offered back to back land in every slot of the loop in turn
    (see :class:`TTableAES`)."""
    interval = rounds + 1
    while any(interval % p == 0 and stages % p == 0 for p in range(2, stages + 1)):
        interval += 1
    return interval


class Kind(enum.Enum, shape=2):
    """What a slot of the round loop holds."""
    IDLE = 0
    BLOCK = 1
    CONVERT = 2             # a round key being turned into its decryption form


class Region(enum.Enum, shape=2):
    """The regions of the round-key memory (the upper two bits of its address)."""
    ENCRYPT = 0             # round key r at r
    DECRYPT = 1             # the equivalent inverse cipher's round key j at j
    ZERO = 2                # never written: all zero


#: Passes through the loop that turn a round key into its decryption form.
CONVERSION_PASSES = 4

#: A slot's record, which travels round the loop with its block.
SLOT = data.StructLayout({
    "kind": Kind,
    "inverse": 1,           # a block being decrypted (its state is mirrored)
    "count": 4,             # the round key (or conversion pass) the slot asks for next
    "tag": 4,               # a conversion: the encryption round key it converts
    "last": 1,              # the pass in the loop: its look-up region
    "inverse_table": 1,
    # At the slot's next head edge:
    "ending": 1,            # it starts its last pass;
    "done": 1,              # its result (or converted round key) leaves the loop;
    "free": 1,              # it can take a new block (it is idle or done).
})


#: Edges a :class:`KeyExpansion` step that needs SubWord waits for the S-boxes (the RAM's two
#: registers and one more).
SUB_WORD_WAIT = 3


def expansion_schedule(key_bits: int) -> tuple:
    """What :class:`KeyExpansion` does on each edge after ``start``: 1 for a step (a word
    written, the window shifted), 0 for an edge waiting for SubWord. Steps ``s`` that use
    SubWord wait :data:`SUB_WORD_WAIT` edges, except the last Nk, whose words are past the round
    keys."""
    nk, nr = KEY_WORDS[check_key_bits(key_bits)], ROUNDS[key_bits]
    steps = 4 * (nr + 1)
    schedule = []
    for step in range(steps):
        if step < steps - nk and key_word_kind(step + nk, nk) is not None:
            schedule += [0] * SUB_WORD_WAIT
        schedule.append(1)
    return tuple(schedule)


def expansion_edges(key_bits: int) -> int:
    """Edges :class:`KeyExpansion` runs for after ``start`` (see :func:`expansion_schedule`)."""
    return len(expansion_schedule(key_bits))


class KeyExpansion(wiring.Component):
    """The AES key expansion (FIPS-197 5.2), one 32-bit word per clock.

    It holds a window of Nk words, ``w[s] .. w[s+Nk-1]``; on each step it shows ``w[s]`` on
    ``word`` (with ``column_we`` and ``round`` saying where it belongs: column ``s mod 4`` of round
    key ``s div 4``) and computes ``w[s+Nk] = w[s] ^ t(w[s+Nk-1])``. SubWord reads four S-boxes in
    block RAM (a :class:`~cipher_cores.cores.block_ram.RegisteredRom`, two register stages, and a third
    after it) addressed from the window's last word register, so a step that needs SubWord waits
    for it; which edges
    step is a fixed table (:func:`expansion_schedule`), read one edge ahead into a register.
    Every path from a RAM or to one starts or ends at a register.

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    sites : sequence of :class:`str`
        On ECP5, the sites of the S-boxes' two ``DP16KD`` (see
        :class:`~cipher_cores.cores.block_ram.RegisteredRom`), or ``None``.

    Members
    -------
    key : ``In(key_bits)``
        The key, taken into the window on every edge where ``load`` is high.
    load : ``In(1)``
        High while the window may follow ``key`` (the core's ``key.ready``: the window is not
        in use then, and after the key transfer it keeps the key).
    start : ``In(1)``
        The expansion starts on this edge, which must also take the key into the window.
    word : ``Out(32)``
        ``w[s]``.
    column_we : ``Out(4)``
        One-hot, bit ``s mod 4``, on the edge that writes ``w[s]``; zero on any other edge.
    round : ``Out(4)``
        ``s div 4``.
    next_round : ``Out(4)``
        ``round`` on the next edge, for a memory whose address is a register.
    running : ``Out(1)``
        From ``start`` up to the edge of the last word.
    done : ``Out(1)``
        High on the edge of the last word (``s = 4 Nr + 3``).
    """
    def __init__(self, key_bits: int, *, sites=None):
        self._key_bits = check_key_bits(key_bits)
        self._sites = sites
        super().__init__({
            "key": In(key_bits), "load": In(1), "start": In(1), "word": Out(32),
            "column_we": Out(4),
            "round": Out(4), "next_round": Out(4), "running": Out(1), "done": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        nk = KEY_WORDS[self._key_bits]
        schedule = expansion_schedule(self._key_bits)
        words = [Signal(32, name=f"w{j}") for j in range(nk)]
        key_words = [self.key[32 * (nk - 1 - j):32 * (nk - j)] for j in range(nk)]
        # The counters are back at their initial values when the expansion ends, so that only
        # ``running`` depends on ``start`` (the window follows the key while ``load`` is high).
        stepping = Signal()                     # this edge of the schedule steps
        last = Signal()                         # the schedule's last edge
        ahead = Signal(range(len(schedule) + 1), init=1)    # the next edge of the schedule
        column = Signal(4, init=1)              # one-hot: s mod 4
        round_ = Signal(4)                      # s div 4
        phase = Signal(range(nk))               # s mod Nk: how w[s + Nk] is computed
        rcon = Signal(8, init=1)

        m.submodules.sbox = sbox = RegisteredRom(SBOX, width=8, ports=4, sites=self._sites)
        sub = Signal(32)        # a third register: the S-box RAMs can be far from the window
        m.d.sync += sub.eq(Cat(sbox.data[i] for i in range(4)))

        new_word = Signal(32)
        with m.Switch(phase):
            with m.Case(0):
                m.d.comb += new_word.eq(words[0] ^ sub ^ (rcon << 24))
            if nk > 6:
                with m.Case(4):
                    m.d.comb += new_word.eq(words[0] ^ sub)
            with m.Default():
                m.d.comb += new_word.eq(words[0] ^ words[-1])

        # RotWord before SubWord, except in AES-256's SubWord-only step.
        address = words[-1].rotate_left(8)
        if nk > 6:
            address = Mux(phase == 4, words[-1], address)
        m.d.comb += sbox.en.eq(1)
        for i in range(4):
            m.d.comb += sbox.addr[i].eq(address[8 * i:8 * (i + 1)])

        with m.If(self.load | stepping):
            m.d.sync += [words[j].eq(Mux(self.load, key_words[j], words[j + 1]))
                         for j in range(nk - 1)]
            m.d.sync += words[-1].eq(Mux(self.load, key_words[-1], new_word))
        with m.If(self.start):
            m.d.sync += self.running.eq(1)

        # The schedule is read one edge ahead, so that whether an edge steps is a register.
        with m.If(self.running):
            m.d.sync += ahead.eq(ahead + 1)
            with m.Switch(ahead):
                for index, value in enumerate(schedule):
                    with m.Case(index):
                        m.d.sync += [stepping.eq(value), last.eq(index == len(schedule) - 1)]
        with m.If(stepping):
            m.d.sync += [column.eq(column.rotate_left(1)),
                         phase.eq(Mux(phase == nk - 1, 0, phase + 1))]
            with m.If(column[3]):
                m.d.sync += round_.eq(round_ + 1)
            with m.If(phase == 0):
                m.d.sync += rcon.eq(xtime(rcon))
        with m.If(last):
            m.d.sync += [self.running.eq(0), stepping.eq(0), last.eq(0), ahead.eq(1),
                         column.eq(1), round_.eq(0), phase.eq(0), rcon.eq(1)]

        m.d.comb += [
            self.word.eq(words[0]),
            self.round.eq(round_),
            self.next_round.eq(round_ + (stepping & column[3])),
            self.done.eq(last),
            self.column_we.eq(Mux(stepping, column, 0)),
        ]
        return m


class TTableAES(AESCipher):
    """AES-128/192/256 encryption and decryption (FIPS-197), round-based, with the rounds looked
    up in block RAM and three blocks interleaved.

    **The round.** Each of the 16 state bytes addresses a table in block RAM that gives, in one
    look-up, the byte's whole contribution to its column after SubBytes and MixColumns: the
    T-table ``Te0 = [2, 1, 1, 3]·S(x)`` (rows 1 to 3 read it rotated, which is wiring). A round is
    then the look-up, a 4-input XOR per bit (the four words of a column; ShiftRows is wiring),
    and the round key's XOR, which is the next look-up's address. Each table holds 1024 words:
    ``Te0``, ``Td0 = [e, 9, d, b]·InvS(x)``, and for the last round ``[S(x), 0, 0, 0]`` and
    ``[InvS(x), 0, 0, 0]``; two bits of the address choose the region, so every round, the last
    one and both directions go through the same XOR.

    **Decryption** is the equivalent inverse cipher (FIPS-197 5.3.5): Td0 look-ups and round keys
    with InvMixColumns applied. A decrypted block's state is kept *mirrored* (columns in reverse
    order), where InvShiftRows is wired exactly as ShiftRows, so both directions share the XOR's
    wiring; the mirror is a 2-way choice on columns 1 and 3 where the block and the round key
    enter and where the result leaves.

    **Three blocks in flight.** The loop has three registers: the RAM's address register, its
    output register and the state register after the XOR (on ECP5 the first two are inside the
    ``DP16KD``; elsewhere the second is in the fabric). A round of one block takes three edges,
    and three blocks take turns, one round on each edge, each in its *slot* of the loop. A block
    that transfers takes the slot two edges from the head of the loop, if it will be free then,
    so blocks offered back to back enter every :func:`initiation_interval` edges (Nr + 1, or
    Nr + 2 for AES-256, so that consecutive blocks fall in different slots). When a result is
    ready but the previous one has not been taken, the whole loop, RAM registers included, holds
    still (one registered enable) until it is. Every control decision is made an edge ahead,
    into registers, so that no logic but the round's XOR stands in front of a RAM.

    **Round keys** are expanded once, when a key is loaded, into a round-key memory in block RAM
    (:class:`KeyExpansion`, one word per clock, waiting for SubWord), from which each round
    reads its key three edges ahead (the key path is off the loop). The decryption keys are then
    derived by the loop itself: four passes through the tables (SubBytes with ShiftRows,
    InvSubBytes with ShiftRows, SubBytes with ShiftRows, then Td0) turn a round key ``k`` into
    ``InvMixColumns(k)`` (ShiftRows four times is the identity, and S and InvS cancel), three
    round keys at a time, and the results are written back. That is why a key load takes 139 to
    180 edges.

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    tables : :class:`str`
        ``"ttable"``: the 1024x32 T-tables above (16 ``DP16KD`` on ECP5, two 1024x18 look-ups
        each in true dual-port mode, one pair of RAMs per two look-ups). ``"sbox"``: 512x8 tables
        of S and InvS (16 ``SB_RAM40_4K`` on iCE40, whose block RAM is too small for T-tables),
        with MixColumns, and InvMixColumns as MixColumns after a cheap step, in logic between the
        look-up and the state register; same cycles. ``"auto"`` (the default): ``"sbox"`` on
        iCE40, ``"ttable"`` anywhere else (simulation included).

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        A key, ``int.from_bytes(fips197_key_bytes, "big")``.
    input : ``In(stream.Signature(BlockRequest(128)))``
        A block, ``int.from_bytes(fips197_block_bytes, "big")``, and its direction.
    output : ``Out(stream.Signature(unsigned(128)))``
        The results in the same byte order, in order.

    Cycle counts
    ------------
    In clock edges, the same for every key, block and direction, with ``output.ready`` held
    high (``tests/test_contract.py`` measures them):

    * *latency*: 3 (Nr + 1) + 3 (36, 42, 48 for Nr = 10, 12, 14): two edges until the block's
      slot reaches the head of the loop, one that asks for round key 0, Nr + 1 passes of three
      edges, and the edge where the result transfers;
    * *initiation interval*: 11, 13, 16 (:func:`initiation_interval`): a block every interval,
      with up to three in flight;
    * *key load*: 139, 155, 180 edges from the key transfer to the first block: the expansion
      (:func:`expansion_edges`: 4 (Nr + 1) words and the SubWord waits), then Nr + 1
      conversions, three at a time, 15 edges each.

    ``key.ready`` is high only when no block is in the core and no result waits. While
    ``key.valid`` is high, ``input.ready`` stays low. After reset no key is loaded and
    ``input.ready`` stays low until one is.
    """
    def __init__(self, key_bits: int = 128, *, tables: str = "auto"):
        if not isinstance(tables, str):
            raise TypeError(f"tables must be a string ('auto', 'ttable' or 'sbox'), "
                            f"not {tables!r}")
        if tables not in TABLE_KINDS:
            raise ValueError(f"tables must be 'auto', 'ttable' or 'sbox', not {tables!r}")
        self._tables = tables
        super().__init__(key_bits, decrypt=True)

    @property
    def tables(self) -> str:
        return self._tables

    @property
    def latency(self) -> int:
        # Two edges until the block's slot reaches the head, one head edge that asks for round
        # key 0, then Nr + 1 passes to the result, which leaves on the next edge.
        return 2 + STAGES * (self.rounds + 1) + 1

    @property
    def initiation_interval(self) -> int:
        return initiation_interval(self.rounds)

    @property
    def key_load_cycles(self) -> int:
        nr = self.rounds
        # From the edge after the expansion, the conversions take the slots in turn, each for
        # CONVERSION_PASSES + 1 head edges; the last (round key Nr) is written back on the edge
        # after it leaves the loop, and a block can transfer on the edge after that.
        turn = (CONVERSION_PASSES + 1) * STAGES
        last_start = expansion_edges(self._key_bits) + 2 + turn * (nr // STAGES) + nr % STAGES
        return last_start + turn + 2

    def table_kind(self, platform) -> str:
        """The tables built for ``platform``: ``"ttable"`` or ``"sbox"``."""
        if self._tables != "auto":
            return self._tables
        return "sbox" if fpga.family(platform) == "ice40" else "ttable"

    def elaborate(self, platform):
        m = Module()
        nr = self.rounds
        interval = self.initiation_interval
        ttable = self.table_kind(platform) == "ttable"

        # The slots, by the stage they are at on this edge: the head takes its next look-up
        # address (its state and round key), the next one its state, the last one its look-up.
        # On every edge that is not frozen the ring turns by one.
        ring = [Signal(SLOT, name=f"slot{i}") for i in range(STAGES)]
        head, f_slot = ring[:2]
        advance = Signal(init=1)        # the loop turns on this edge (a register: the enable
                                        # of every register and RAM of the loop)

        state = Signal(128)             # the XOR of the look-ups, before the round key
        round_key = Signal(128)         # the round key (and, as a block enters, the block)
        block = Signal(128)             # a block, from its transfer until it enters
        entering = Signal(128)          # that block (mirrored if decrypted), on the edge it is
                                        # XORed into round_key
        keyed = Signal(128)             # the state and its round key: the next address
        result = Signal(128)
        result_valid = Signal()

        # Where the die has a floorplan for the T-table form (the ECP5 85F), its RAMs are
        # placed by it (see cipher_cores.cores.fpga): the loop's paths stay short.
        floorplan = fpga.floorplan(platform, "aes.ttable") if ttable else None

        def sites(group):
            return floorplan.sites(group) if floorplan else None

        m.submodules.expansion = expansion = KeyExpansion(self._key_bits, sites=sites("sub_word"))
        m.submodules.keys = keys = KeyMemory(sites=sites("keys"))
        if ttable:
            m.submodules.lookup = lookup = RegisteredRom(
                T_TABLE, width=32, ports=16, sites=sites("lookup"))
        else:
            m.submodules.lookup = lookup = RegisteredRom(S_TABLE, width=8, ports=16)

        head_finishing = head.done & (head.kind == Kind.BLOCK)
        head_converted = head.done & (head.kind == Kind.CONVERT)

        # --- handshake -------------------------------------------------------------------
        # key.ready and input.ready (but for key.valid) are registers, computed from the next
        # state; a transfer is booked on the edge after it. The handshake thus adds no logic in
        # front of the block RAMs.
        loading = Signal()              # a key is being expanded and converted
        operational = Signal()          # a key is loaded and no other is loading
        converting = Signal()
        loaded = Signal()               # the last converted round key is written back now
        idle = Signal(init=1)           # key.ready: no block in the core and no key loading
        accept = Signal()               # input.ready, but for key.valid
        in_core = Signal(range(8))      # blocks transferred in whose results have not left
        spacing = Signal(range(interval))   # advancing edges until the next block may enter
        spaced = Signal(init=1)         # spacing is zero
        transferred = Signal()          # a block transferred on the previous edge...
        transferred_advancing = Signal()    # ...which was not frozen
        # A transferred block takes the slot that was third from the head on its transfer
        # edge; ``target`` is that slot's place in the ring, down to 0 (the head).
        pending = Signal()
        target = Signal(range(3))
        pending_inverse = Signal()

        take = result_valid & self.output.ready
        m.d.comb += [
            self.key.ready.eq(idle),
            self.input.ready.eq(accept & ~self.key.valid),
            self.output.valid.eq(result_valid),
            self.output.payload.eq(result),
        ]
        load_key = self.key.valid & self.key.ready
        load_block = self.input.valid & self.input.ready

        # While input.ready is high the block register follows the payload; after a transfer
        # input.ready is low, so it holds the block that transferred.
        with m.If(accept):
            m.d.sync += [block.eq(self.input.payload.block),
                         pending_inverse.eq(self.input.payload.decrypt)]
        m.d.sync += [transferred.eq(load_block), transferred_advancing.eq(advance)]
        with m.If(transferred):
            m.d.sync += [
                pending.eq(1), target.eq(Mux(transferred_advancing, 1, 2) - advance),
                spacing.eq(interval - 1 - advance),
            ]
        with m.Elif(advance):
            with m.If(target != 0):
                m.d.sync += target.eq(target - 1)
            with m.If(spacing != 0):
                m.d.sync += spacing.eq(spacing - 1)
        new_block = pending & (target == 0) & advance     # the head takes the pending block
        with m.If(new_block):
            m.d.sync += pending.eq(0)

        next_spaced = ~load_block & (spaced | (advance & (spacing == 1)))
        next_operational = (operational | loaded) & ~load_key
        m.d.sync += [
            spaced.eq(next_spaced),
            in_core.eq(in_core + load_block - take),
            idle.eq(~load_key & ~(loading & ~loaded) & ~load_block &
                    ((in_core == 0) | ((in_core == 1) & take))),
        ]
        with m.If(load_key):
            m.d.sync += loading.eq(1)
        with m.If(loaded):
            m.d.sync += [loading.eq(0), converting.eq(0)]
        with m.If(expansion.done):
            m.d.sync += converting.eq(1)
        m.d.sync += operational.eq(next_operational)

        # --- what the head does on the next edge, decided on this one ----------------------
        # (so that the look-up region and the round-key address come straight from registers).
        # These registers change only on edges that are not frozen: a frozen edge keeps the
        # head, and what was decided for it still holds.
        conversion = Signal(range(nr + 2))      # the next round key to convert
        new_conversion = Signal()               # the head takes a round key to convert...
        new_tag = Signal(4)                     # ...this one
        region = Signal(2)              # {last, inverse_table} of the pass the head starts
        key_address = Signal(6)         # the round key the head asks for, three edges ahead
        clear_state = Signal()          # the state stage's slot starts anew
        entering_select = Signal()      # the look-up stage's slot has taken the block

        upcoming = ring[1]
        upcoming_block = (pending & (target == 1)) | (transferred & transferred_advancing)
        upcoming_conversion = converting & upcoming.free & (conversion <= nr)
        with m.If(advance):
            m.d.sync += [
                new_conversion.eq(upcoming_conversion), new_tag.eq(conversion),
                clear_state.eq((ring[2].kind != Kind.IDLE) & (ring[2].count == 1)),
                entering_select.eq(new_block),
            ]
            with m.If(upcoming_conversion):
                m.d.sync += conversion.eq(conversion + 1)
            with m.Switch(upcoming.kind):
                with m.Case(Kind.BLOCK):
                    m.d.sync += region.eq(Cat(upcoming.inverse, upcoming.ending))
                with m.Case(Kind.CONVERT):
                    # Passes: S with ShiftRows, InvS with ShiftRows, S with ShiftRows, then Td0
                    # (InvMixColumns) or, for the first and last round keys, InvS with
                    # ShiftRows.
                    plain = (upcoming.tag == 0) | (upcoming.tag == nr)
                    with m.Switch(upcoming.count):
                        with m.Case(1, 3):
                            m.d.sync += region.eq(0b10)
                        with m.Case(2):
                            m.d.sync += region.eq(0b11)
                        with m.Case(4):
                            m.d.sync += region.eq(Cat(1, plain))
            with m.If(upcoming_block):
                m.d.sync += key_address.eq(Cat(Const(0, 4), pending_inverse, 0))
            with m.Elif(upcoming_conversion):
                m.d.sync += key_address.eq(Cat(conversion[:4], Region.ENCRYPT))
            with m.Elif(upcoming.kind == Kind.BLOCK):
                m.d.sync += key_address.eq(Cat(upcoming.count, upcoming.inverse, 0))
            with m.Else():
                m.d.sync += key_address.eq(Cat(Const(0, 4), Region.ZERO))
        with m.If(load_key):
            m.d.sync += conversion.eq(0)
        # While the key expands, the round-key address is where its next word goes.
        with m.If(expansion.running):
            m.d.sync += key_address.eq(Cat(expansion.next_round, Region.ENCRYPT))

        # The head's record after this edge. ``count`` is the round key it asks for next.
        new_head = Signal(SLOT)
        ending = (((head.kind == Kind.BLOCK) & (head.count == nr - 1)) |
                  ((head.kind == Kind.CONVERT) & (head.count == CONVERSION_PASSES - 1)))
        m.d.comb += [
            new_head.eq(head), new_head.count.eq(head.count + 1),
            new_head.last.eq(region[1]), new_head.inverse_table.eq(region[0]),
            new_head.ending.eq(ending), new_head.done.eq(head.ending),
            new_head.free.eq(head.ending),
        ]
        with m.If(head.done):
            m.d.comb += [new_head.kind.eq(Kind.IDLE), new_head.free.eq(1)]
        with m.If(new_block):
            m.d.comb += [new_head.kind.eq(Kind.BLOCK), new_head.inverse.eq(pending_inverse)]
        with m.Elif(new_conversion):
            m.d.comb += [new_head.kind.eq(Kind.CONVERT), new_head.inverse.eq(0),
                         new_head.tag.eq(new_tag)]
        with m.If(new_block | new_conversion):
            m.d.comb += [new_head.count.eq(1), new_head.ending.eq(0), new_head.done.eq(0),
                         new_head.free.eq(0)]
        with m.Elif(head.kind == Kind.IDLE):
            m.d.comb += new_head.free.eq(1)
        with m.If(advance):
            m.d.sync += [ring[i].eq(ring[i + 1]) for i in range(STAGES - 1)]
            m.d.sync += ring[-1].eq(new_head)
        # A block may transfer when its slot (the third from the head) will be free when it
        # reaches the head, a key is loaded and blocks are spaced as the slots require.
        target_free = Mux(advance, new_head.free, ring[2].free)
        m.d.sync += accept.eq(~load_block & next_operational & next_spaced & target_free)

        # --- the loop ------------------------------------------------------------------------
        looked_up = [lookup.data[i] for i in range(16)]
        if ttable:
            # Column c gets, from row k, the word of byte (k, c + k) rotated right by k bytes.
            state_next = _join_columns(
                _xor(looked_up[k + 4 * ((c + k) % 4)].rotate_right(8 * k) for k in range(4))
                for c in range(4))
            m.d.comb += keyed.eq(state ^ round_key)
        else:
            # Named stages, as in RoundFunction: they also keep the simulator from inlining the
            # round into every bit.
            substituted = Signal(128)
            preprocessed = Signal(128)
            mixed = Signal(128)
            preprocess = f_slot.inverse_table & ~f_slot.last
            m.d.comb += [
                substituted.eq(shift_rows(join_bytes(looked_up))),
                preprocessed.eq(column_transform(substituted, INV_MIX_PREPROCESS)),
                mixed.eq(mix_columns(state)),
                keyed.eq(Mux(head.last, state, mixed) ^ round_key),
            ]
            state_next = Mux(preprocess, preprocessed, substituted)

        for i, byte in enumerate(state_bytes(keyed)):
            m.d.comb += lookup.addr[i].eq(Cat(byte, region if ttable else region[0]))
        m.d.comb += lookup.en.eq(advance)

        with m.If(advance):
            with m.If(clear_state):
                m.d.sync += state.eq(0)
            with m.Else():
                m.d.sync += state.eq(state_next)
            # The block enters mirrored if it is decrypted, so that the round key's path is
            # one multiplexer and one XOR.
            with m.If(entering_select):
                m.d.sync += entering.eq(Mux(pending_inverse, mirror(block), block))
            with m.Else():
                m.d.sync += entering.eq(0)
            m.d.sync += round_key.eq(Mux(f_slot.inverse, mirror(keys.read_data),
                                         keys.read_data) ^ entering)

        # --- results and converted round keys ------------------------------------------------
        with m.If(head.done & advance):
            m.d.sync += result.eq(Mux(head.inverse, mirror(keyed), keyed))
        with m.If(head_finishing & advance):
            m.d.sync += result_valid.eq(1)
        with m.Elif(take):
            m.d.sync += result_valid.eq(0)

        # The loop stops on an edge where a block would finish while the previous result is
        # still waiting; decided one edge ahead, so that the enable is a register.
        upcoming_finishing = Mux(advance, ring[1].done & (ring[1].kind == Kind.BLOCK),
                                 head_finishing)
        result_busy = (result_valid & ~self.output.ready) | (advance & head_finishing)
        m.d.sync += advance.eq(~(upcoming_finishing & result_busy))

        # --- round keys ----------------------------------------------------------------------
        writing = Signal()              # a converted round key is written back now
        write_tag = Signal(4)
        m.d.sync += [
            # (The loop never stops while a key loads: no result can be waiting.)
            writing.eq(head_converted), write_tag.eq(head.tag),
            loaded.eq(head_converted & (head.tag == nr)),
        ]
        m.d.comb += [
            expansion.key.eq(self.key.payload),
            expansion.load.eq(idle),
            expansion.start.eq(load_key),
            keys.read_addr.eq(key_address),
            keys.read_en.eq(advance),
            keys.column_data.eq(expansion.word),
            keys.column_we.eq(expansion.column_we),
            keys.entry_addr.eq(Cat((nr - write_tag)[:4], Region.DECRYPT)),
            keys.entry_data.eq(result),
            keys.entry_we.eq(writing),
        ]
        return m


def _xor(values):
    values = list(values)
    result = values[0]
    for value in values[1:]:
        result = result ^ value
    return result
