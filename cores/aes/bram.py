"""The block-RAM AES core: a 16-bit datapath with the state and every round key in block RAM.

:class:`BlockRamAES` keeps almost nothing in flip-flops. Four block RAMs of 4 kbit (one
``SB_RAM40_4K`` each on iCE40) do the work:

* **Two S-box tables** (``S0``, ``S1``), 512x8: ``S`` at 0..255 and ``InvS`` at 256..511, the
  direction an address bit. Two bytes of the state go through them each clock cycle.
* **Two state RAMs** (``A`` holds rows 0 and 2 of the state, ``B`` rows 1 and 3), 256x16, written a
  byte at a time. Each RAM row holds a state byte in its low lane and a round-key byte in its high
  lane, so one read gives both. Row ``{direction, n, r // 2, c}`` holds byte ``(r, c)`` of the state
  at the start of round ``n + 1`` (low lane) and the byte of round ``n + 1``'s key that meets it
  (high lane); round ``n + 1`` writes its result into rows ``{direction, n + 1, ...}``. Encryption
  and decryption each have their region (the ``direction`` address bit), with their round keys in
  the order and positions that direction reads them.

**(Inv)ShiftRows is an addressing pattern.** Output column ``d`` of a round reads byte ``(r, d + r)``
(``(r, d - r)`` when decrypting) of the round's input: rows 0 and 1 in one cycle, rows 2 and 3 in
the next. The round-key byte stored beside ``(r, d ± r)`` is therefore the one for output byte
``(r, d)``: the key expansion writes each round-key byte where that read finds it.

**The round, one column in two cycles**: the two bytes read go through the S-boxes, MixColumns
(or InvMixColumns, the standard inverse cipher with AddRoundKey before it) takes the four bytes of
the column, and the result is written a byte per RAM per cycle, with the round key XORed in. Half
a MixColumns unit does it (:func:`half_mix_column`): the matrix is circulant, so rows 2 and 3 of
a column are rows 0 and 1 of the column with its halves swapped, which two registers behind the
S-boxes give in the cycle after. The
block's own bytes are never stored: round 1 reads the block straight from ``input.payload`` (which
the stream rules hold while ``input.valid`` waits for ``input.ready``) and XORs it with round key
0, kept in the low lane of the rows round 1 reads. The last round's bytes, XORed with the last round
key, shift into the 128-bit output register.

**Rounds back to back.** Every output column of a round needs a byte of the column the previous
round wrote last, written two cycles after the next round wants to read it; the columns of round
``n`` are taken in the order ``s, s + 1, s + 2, s + 3`` with ``s = -(n - 1) mod 4``, so that the
late byte is always row 0 of the next round's first column, which is taken straight from the write
data (a forwarding path) instead of from the RAM.

**Key expansion** (FIPS-197 KeyExpansion, once per key): the last Nk words in a ring of
flip-flops, one word per four cycles, SubWord through the S-box tables, each round-key byte written
to the encryption region and to the decryption region.

On iCE40 the state RAMs are ``SB_RAM40_4K`` instances (:class:`~cipher_cores.cores.block_ram.MixedWidthRam`):
an inferred memory would come with Yosys' read-first logic, and no row is ever read on the edge
it is written.

Byte and bit order: a block or key is ``int.from_bytes(fips197_bytes, "big")``; byte ``4c + r`` of
the block is row ``r`` of column ``c`` of the state.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, unsigned
from amaranth.lib import memory

from ..block_ram import MixedWidthRam
from .base import AESCipher
from .sbox import INV_SBOX, SBOX
from .transforms import KEY_WORDS
from .round import xtime


__all__ = ["half_mix_column", "BlockRamAES"]


#: Cycles of a round: four columns, two bytes per RAM each.
ROUND_CYCLES = 8
#: Cycles of a key-expansion word: two writes to the encryption region, two to the decryption one.
WORD_CYCLES = 4


def _byte(value, index: int):
    """Byte ``index`` (0 = most significant) of a value ``8 * n`` bits wide."""
    width = len(value) // 8
    return value[8 * (width - 1 - index):8 * (width - index)]


def _one_hot_or(terms) -> "Value":
    """The OR of ``data & select`` over ``(data, select)`` pairs: a multiplexer whose selects are
    one-hot (or all low), which on 4-input LUTs costs half a LUT per data bit."""
    result = 0
    for data, select in terms:
        result = result | (data & select.replicate(len(data)))
    return result


def half_mix_column(m, a, decrypt) -> list:
    """Rows 0 and 1 of MixColumns (``decrypt`` low) or InvMixColumns (``decrypt`` high) of the
    four bytes ``a`` (row 0 first), as :func:`cipher_cores.cores.aes.compact.mix_column` computes them:
    MixColumns(a)_r = a_r ^ t ^ {02}·(a_r ^ a_r+1), t = a_0 ^ a_1 ^ a_2 ^ a_3, and
    InvMixColumns(a)_r = MixColumns(a)_r ^ {04}·(a_r ^ a_r+2) ^ {08}·t."""
    t = Signal(8, name="mix_sum")
    m.d.comb += t.eq(a[0] ^ a[1] ^ a[2] ^ a[3])
    result = []
    for r in range(2):
        mixed = a[r] ^ t ^ xtime(a[r] ^ a[r + 1])
        inverse = xtime(xtime(a[r] ^ a[r + 2])) ^ xtime(xtime(xtime(t)))
        byte = Signal(8, name=f"mix_out{r}")
        m.d.comb += byte.eq(mixed ^ Mux(decrypt, inverse, 0))
        result.append(byte)
    return result


class BlockRamAES(AESCipher):
    """AES-128/192/256 encryption and decryption (FIPS-197) with its state and round keys in
    block RAM, two bytes per clock cycle.

    Each block on ``input`` is encrypted or decrypted, as its ``decrypt`` bit asks, under the last
    key loaded on ``key``. The core holds one block at a time. See :mod:`cipher_cores.cores.aes.bram` for the
    architecture: four 4-kbit block RAMs (two S-box tables, two for the state and the round keys),
    a 16-bit datapath, round keys expanded once per key.

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    decrypt : :class:`bool`
        Whether the core decrypts (the inverse S-box, InvMixColumns and the decryption region of
        round keys); without it every block is encrypted, whatever its ``decrypt`` bit says.

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        A key, ``int.from_bytes(fips197_key_bytes, "big")``.
    input : ``In(stream.Signature(BlockRequest(128)))``
        A block, ``int.from_bytes(fips197_block_bytes, "big")``, and its direction. The core reads
        the block from the payload during the eight cycles before it raises ``input.ready``, so a
        source must hold ``valid`` and ``payload`` until the transfer, as the stream rules ask.
    output : ``Out(stream.Signature(unsigned(128)))``
        The result, in the same byte order.

    Timing
    ------
    With Nr = 10, 12, 14 rounds, all counts clock edges, the same for every key, block and
    direction, with ``output.ready`` held high:

    * a block is read from the payload in the 8 cycles ending with its transfer; its rounds take
      8·Nr cycles of reads from the first of those, and ``output.valid`` rises 3 cycles after the
      last read (the pipeline behind the reads is 2 cycles deep);
    * *latency*: 8·Nr − 5 edges (75, 91, 107) from the edge where a block transfers in to the edge
      where its result transfers out;
    * *initiation interval*: 8·Nr + 3 edges (83, 99, 115);
    * *key load*: 16·(Nr + 1) + 8 edges (184, 216, 248) from the key transfer to the first edge a
      block can transfer.

    ``key.ready`` is high only when no block is in the core. A key waiting on ``key`` goes before
    any further block: while ``key.valid`` is high, ``input.ready`` stays low, and a block being
    read from the payload is given up (read again after the key). After reset no key is loaded
    and ``input.ready`` stays low until one is.
    """
    def __init__(self, key_bits: int = 128, *, decrypt: bool = True):
        super().__init__(key_bits, decrypt=decrypt)

    @property
    def latency(self) -> int:
        return ROUND_CYCLES * self.rounds - 5

    @property
    def initiation_interval(self) -> int:
        return ROUND_CYCLES * self.rounds + 3

    @property
    def key_load_cycles(self) -> int:
        return WORD_CYCLES * 4 * (self.rounds + 1) + ROUND_CYCLES

    @property
    def block_rams(self) -> int:
        """Block RAMs the core needs: two S-box tables and two state/round-key RAMs."""
        return 4

    def elaborate(self, platform):
        m = Module()
        nr, nk = self.rounds, KEY_WORDS[self._key_bits]
        decrypts = self._decrypt
        request = self.input.payload

        # Memories. The S-box tables are read-only; A and B are written a byte lane at a time.
        tables = list(SBOX) + list(INV_SBOX) if decrypts else list(SBOX)
        sbox_ports = []
        for name in ("S0", "S1"):
            table = memory.Memory(shape=unsigned(8), depth=len(tables), init=tables,
                                  attrs={"ram_style": "block"})
            m.submodules[name] = table
            sbox_ports.append(table.read_port(domain="sync", transparent_for=()))
        # A and B are the cell itself on iCE40 (a behavioural model elsewhere): Yosys would wrap
        # an inferred memory in read-first logic, and no row is ever read on the edge it is
        # written.
        state_rams = []
        for name in ("A", "B"):
            ram = MixedWidthRam(read_mode=0, write_mode=0, byte_mask=True)
            m.submodules[name] = ram
            state_rams.append(ram)
        state_data = [ram.read_data for ram in state_rams]

        # Control.
        key_loaded = Signal()
        direction = Signal()            # of the block in the core; 0 during key expansion
        accepted = Signal()             # the block being read from the payload has transferred
        starting = Signal()             # Idle, and a block starts being read on this edge
        running = Signal()              # in Run (the block's reads and the pipeline's drain)
        expanding = Signal()
        idle = Signal()
        abort = Signal()                # Run: a block given up before its transfer
        expanded = Signal()             # Expand: the last cycle of the key expansion
        done = Signal()

        # Round reads: rnd = n - 1 for round n (Nr once the reads are done), k the round's k-th
        # column, phase the pair of rows (0: rows 0 and 1, 1: rows 2 and 3), column the output
        # column it is (s + k, s = -(n - 1) mod 4).
        rnd = Signal(range(16))
        k = Signal(2)
        phase = Signal()
        column = Signal(2)

        # Key expansion: cycle (0..3) of the word, word = j mod 4 (the round key's column),
        # before = m - 1 and after = Nr - 1 - m (mod 16) for round key m = j // 4, position
        # = j mod Nk.
        cycle = Signal(2)
        word = Signal(2)
        before = Signal(4)
        after = Signal(4)
        position = Signal(range(nk))
        rcon = Signal(8)

        read_direction = Signal()
        m.d.comb += read_direction.eq(Mux(idle, request.decrypt if decrypts else 0, direction))
        reading = Signal()
        m.d.comb += reading.eq((running | starting) & (rnd != nr))

        final_read = Signal()
        m.d.comb += final_read.eq((rnd == nr - 1) & (k == 3) & phase)
        payload_done = Signal()
        m.d.comb += payload_done.eq((rnd == 0) & (k == 3) & phase)

        def advance_reads():
            m.d.sync += phase.eq(~phase)
            with m.If(phase):
                m.d.sync += k.eq(k + 1)
                with m.If(k == 3):
                    m.d.sync += rnd.eq(rnd + 1)
                with m.Else():
                    m.d.sync += column.eq(column + 1)

        def clear_reads():
            m.d.sync += [rnd.eq(0), k.eq(0), phase.eq(0), column.eq(0)]

        # The pipeline behind the reads (stage 1: RAM data and S-box address, 2: S-box data,
        # 3: the write of rows 0 and 1 of the column read two cycles before).
        valid = [Signal(name=f"valid{s}") for s in range(4)]
        last = [Signal(name=f"last{s}") for s in range(4)]
        final = [Signal(name=f"final{s}") for s in range(3)]
        row_pair = [Signal(name=f"phase{s}") for s in range(4)]
        rounds = [Signal(4, name=f"rnd{s}") for s in range(4)]
        columns = [Signal(2, name=f"column{s}") for s in range(4)]
        forward = Signal()
        m.d.comb += [valid[0].eq(reading), last[0].eq(rnd == nr - 1), final[0].eq(final_read),
                     row_pair[0].eq(phase), rounds[0].eq(rnd), columns[0].eq(column)]
        for stage in range(1, 4):
            m.d.sync += [valid[stage].eq(valid[stage - 1]),
                         last[stage].eq(last[stage - 1]),
                         row_pair[stage].eq(row_pair[stage - 1]),
                         rounds[stage].eq(rounds[stage - 1]),
                         columns[stage].eq(columns[stage - 1])]
            if stage < 3:
                m.d.sync += final[stage].eq(final[stage - 1] & valid[stage - 1])
        m.d.sync += forward.eq(reading & (rnd != 0) & (k == 0) & ~phase)

        with m.FSM():
            with m.State("Idle"):
                m.d.comb += [idle.eq(1), self.key.ready.eq(1)]
                with m.If(self.key.valid):
                    m.d.sync += [key_loaded.eq(1), direction.eq(0), rnd.eq(nr), cycle.eq(0),
                                 word.eq(0), before.eq(15), after.eq(nr - 1), position.eq(0),
                                 rcon.eq(1)]
                    m.next = "Expand"
                with m.Elif(key_loaded & self.input.valid):
                    m.d.comb += starting.eq(1)
                    m.d.sync += [direction.eq(read_direction), accepted.eq(0)]
                    advance_reads()
                    m.next = "Run"
                with m.Else():
                    clear_reads()
            with m.State("Expand"):
                m.d.comb += expanding.eq(1)
                m.d.sync += cycle.eq(cycle + 1)
                with m.If(cycle == 3):
                    m.d.sync += [word.eq(word + 1), position.eq(
                        Mux(position == nk - 1, 0, position + 1))]
                    with m.If(position == 0):
                        m.d.sync += rcon.eq(xtime(rcon))
                    with m.If(word == 3):
                        m.d.sync += [before.eq(before + 1), after.eq(after - 1)]
                        with m.If(after == 15):
                            m.d.comb += expanded.eq(1)
                            clear_reads()
                            m.next = "Idle"
            with m.State("Run"):
                m.d.comb += running.eq(1)
                with m.If(~accepted & (self.key.valid | ~self.input.valid)):
                    # Give the block up before its transfer: a waiting key goes first.
                    m.d.comb += abort.eq(1)
                    clear_reads()
                    m.next = "Idle"
                with m.Else():
                    m.d.comb += self.input.ready.eq(~accepted & payload_done)
                    with m.If(payload_done):
                        m.d.sync += accepted.eq(1)
                    with m.If(reading):
                        advance_reads()
                    with m.If(final[2]):
                        m.next = "Done"
            with m.State("Done"):
                m.d.comb += [done.eq(1), self.output.valid.eq(1)]
                with m.If(self.output.ready):
                    clear_reads()
                    m.next = "Idle"

        # Key ring: the last Nk words of the key expansion, w[j] .. w[j + Nk - 1] in step j;
        # word 0 is written to the round-key RAMs, word Nk - 1 goes through SubWord.
        ring = [Signal(32, name=f"w{i}", reset_less=True) for i in range(nk)]
        head, tail = ring[0], ring[-1]
        substituting = Signal()     # this step's new word uses SubWord(RotWord(tail)) ^ Rcon
        half_substituting = Signal()   # AES-256, j mod 8 == 4: SubWord(tail)
        m.d.comb += substituting.eq(position == 0)
        if nk == 8:
            m.d.comb += half_substituting.eq(position == 4)
        temp_high = Signal(16, reset_less=True)      # SubWord's first two bytes, one cycle before the others
        sbox_data = [port.data for port in sbox_ports]
        m.d.sync += temp_high.eq(Cat(sbox_data[1], sbox_data[0]))
        temp = Signal(32)
        m.d.comb += temp.eq(Cat(sbox_data[1], sbox_data[0], temp_high) ^
                            Mux(substituting, rcon, 0) << 24)
        new_word = Signal(32)
        m.d.comb += new_word.eq(head ^ Mux(substituting | half_substituting, temp, tail))
        key_words = [_word_of(self.key.payload, i, nk) for i in range(nk)]
        with m.If(idle & self.key.valid):
            m.d.sync += [w.eq(value) for w, value in zip(ring, key_words)]
        with m.Elif(expanding & (cycle == 3)):
            m.d.sync += [a.eq(b) for a, b in zip(ring, ring[1:])]
            m.d.sync += tail.eq(new_word)

        # S-box addresses: the byte read from A (B) in the previous cycle, XORed in round 1 with
        # the block's byte at that position (selected a cycle before, into ``early``) and during
        # key expansion with SubWord's input bytes.
        block_bytes = [_byte(request.block, i) for i in range(16)]
        round_one = Signal()
        m.d.comb += round_one.eq(reading & (rnd == 0))

        # The block's bytes are selected by a one-hot ring that turns once per cycle, bit s in
        # step s of round 1. It is set (bit 0) whenever the next cycle may be step 0, and clear
        # during key expansion; in the later rounds it turns on but ``early`` is held at zero.
        order = Signal(8, init=1)
        with m.If((idle & ~self.key.valid & ~starting) | abort | done | expanded):
            m.d.sync += order.eq(1)
        with m.Elif((idle & self.key.valid) | expanding):
            m.d.sync += order.eq(0)
        with m.Else():
            m.d.sync += order.eq(order.rotate_left(1))

        def select(name, condition):
            # A signal of its own (kept through synthesis), so that each LUT of the OR below
            # takes two data bits and their selects.
            signal = Signal(name=name, attrs={"keep": 1})
            m.d.comb += signal.eq(condition)
            return signal

        selected = []
        for ram in range(2):
            terms = []
            # In step s of round 1, A reads byte (2p, c + 2p) and B byte (1 + 2p, c + 1 + 2p)
            # of the block, p = s % 2, c = s // 2; decrypting, B reads in step s what it reads
            # in step s + 4 when encrypting.
            for step in range(ROUND_CYCLES):
                pair, col = step % 2, step // 2
                row = 2 * pair + ram
                state_col = (col + ram + 2 * pair) % 4
                take = order[step] if ram == 0 else \
                    Mux(read_direction, order[(step - 4) % 8], order[step])
                terms.append((block_bytes[4 * state_col + row],
                              select(f"take{'AB'[ram]}{step}", take)))
            early = Signal(8, name=f"early{'AB'[ram]}", reset_less=True)
            m.d.sync += early.eq(Mux(round_one, _one_hot_or(terms), 0))
            selected.append(early)

        # SubWord's bytes go straight to the S-box addresses (the read data's lane is zero
        # then), in cycles 1 and 2 of a key-expansion step. RotWord: S0 takes tail bytes 1 and 3,
        # S1 bytes 2 and 0; without it (AES-256), bytes 0 and 2, 1 and 3.
        sub_bytes = []
        for ram in range(2):
            terms = []
            for pair in range(2):
                rotated = (1 + 2 * pair + ram) % 4
                terms.append((_byte(tail, rotated), select(
                    f"sub{'AB'[ram]}{pair}", expanding & substituting & (cycle == pair + 1))))
                if nk == 8:
                    terms.append((_byte(tail, 2 * pair + ram), select(
                        f"half{'AB'[ram]}{pair}",
                        expanding & half_substituting & (cycle == pair + 1))))
            sub_bytes.append(_one_hot_or(terms))

        write_data = [Signal(8, name=f"write{'AB'[ram]}") for ram in range(2)]
        forwarded = Signal(8)
        for ram in range(2):
            address = state_data[ram][:8] ^ selected[ram] ^ sub_bytes[ram]
            if ram == 0:
                # The forwarded byte is A's write data in this cycle (row 0 of the MixColumns
                # output, keyed), taken before the write multiplexer to keep the path short.
                address = Mux(forward, forwarded, address)
            port = sbox_ports[ram]
            m.d.comb += [
                port.addr.eq(Cat(address, direction)[:len(port.addr)]),
                port.en.eq(1),
            ]

        # Round keys travel beside their state bytes: key1 (one cycle after the read) keys the
        # S-box output when decrypting and in the last round; key2 (two cycles) keys the
        # MixColumns output when encrypting.
        key1 = [Signal(8, name=f"key1{'AB'[ram]}", reset_less=True) for ram in range(2)]
        key1_dec = [Signal(8, name=f"key1dec{'AB'[ram]}", reset_less=True) for ram in range(2)]
        key2 = [Signal(8, name=f"key2{'AB'[ram]}", reset_less=True) for ram in range(2)]
        keyed = [Signal(8, name=f"keyed{'AB'[ram]}") for ram in range(2)]
        for ram in range(2):
            m.d.sync += [
                key1[ram].eq(state_data[ram][8:]),
                key1_dec[ram].eq(Mux(direction | last[1], state_data[ram][8:], 0)),
                key2[ram].eq(Mux(direction, 0, key1[ram])),
            ]
            m.d.comb += keyed[ram].eq(sbox_data[ram] ^ key1_dec[ram])
        # Half a MixColumns unit: (Inv)MixColumns is circulant, so rows 2 and 3 of a column are
        # rows 0 and 1 of the column with its halves swapped. When the S-boxes give rows 2 and 3
        # (y2, y3), the unit takes (y0, y1, y2, y3) and gives rows 0 and 1; in the next cycle it
        # takes (y2, y3, y0, y1), from the two registers the S-box output passes through, and
        # gives rows 2 and 3.
        first_pair = [Signal(8, name=f"y{r}", reset_less=True) for r in range(2)]
        older_pair = [Signal(8, name=f"z{r}", reset_less=True) for r in range(2)]
        m.d.sync += [first_pair[0].eq(keyed[0]), first_pair[1].eq(keyed[1]),
                     older_pair[0].eq(first_pair[0]), older_pair[1].eq(first_pair[1])]
        halves = [Signal(8, name=f"mix_in{r}") for r in (2, 3)]
        m.d.comb += [halves[r].eq(Mux(row_pair[2], keyed[r], older_pair[r])) for r in range(2)]
        mixed = half_mix_column(m, [first_pair[0], first_pair[1], halves[0], halves[1]],
                                direction if decrypts else Const(0))
        m.d.comb += forwarded.eq(mixed[0] ^ key2[0])

        # Key-expansion writes: cycles 0 and 1 of a word to the encryption region, 2 and 3 to
        # the decryption one; round key 0 (encryption) and Nr (decryption) into the low lanes
        # of rows {direction, 0, ...}, the others into the high lanes, where the reads of the
        # round that uses them find them.
        key_direction = cycle[1]
        key_pair = cycle[0]
        low_lane_key = Signal()
        m.d.comb += low_lane_key.eq(Mux(key_direction, after == 15, before == 15))
        key_round = Signal(4)
        m.d.comb += key_round.eq(Mux(low_lane_key, 0, Mux(key_direction, after, before)))
        key_writing = Signal()
        m.d.comb += key_writing.eq(expanding & (~key_direction if not decrypts else 1))

        lanes = [Signal(2, name=f"lanes{'AB'[ram]}") for ram in range(2)]
        round_writing = Signal()
        m.d.comb += round_writing.eq(running & valid[3] & ~last[3])
        write_row = Cat(columns[3], row_pair[3], (rounds[3] + 1)[:4], direction)
        for ram, state_ram in enumerate(state_rams):
            key_byte = Mux(key_pair, _byte(head, 2 + ram), _byte(head, ram))
            round_byte = mixed[ram] ^ key2[ram]
            m.d.comb += write_data[ram].eq(Mux(expanding, key_byte, round_byte))
            if ram == 0:
                key_column = word + Mux(low_lane_key, 0, 2 * key_pair)
            else:
                key_column = word + Mux(low_lane_key, 0,
                                        1 + 2 * (key_pair ^ key_direction))
            key_row = Cat(key_column[:2], key_pair, key_round, key_direction)
            m.d.comb += [
                lanes[ram].eq(Cat(round_writing | (key_writing & low_lane_key),
                                key_writing & ~low_lane_key)),
            ]
            m.d.comb += [
                state_ram.write_addr.eq(Mux(expanding, key_row, write_row)),
                state_ram.write_data.eq(Cat(write_data[ram], key_byte)),
                state_ram.write_en.eq(lanes[ram].any()),
                state_ram.write_mask.eq(Cat(~lanes[ram][0].replicate(8),
                                            ~lanes[ram][1].replicate(8))),
            ]

        # Reads: rows {direction, n - 1, phase, column of the row}.
        for ram, state_ram in enumerate(state_rams):
            read_col = _read_column(ram, phase, column, read_direction)
            m.d.comb += [
                state_ram.read_addr.eq(Cat(read_col, phase, rnd, read_direction)),
            ]

        # Output: the last round's bytes, keyed, a pair per cycle in the order of its columns.
        slots = [Signal(16, name=f"out{j}", reset_less=True) for j in range(8)]
        with m.If(running & valid[2] & last[2]):
            m.d.sync += [a.eq(b) for a, b in zip(slots, slots[1:])]
            m.d.sync += slots[-1].eq(Cat(keyed[0], keyed[1]))
        start = (-(nr - 1)) % 4
        result = [None] * 16
        for j, slot in enumerate(slots):
            col = (start + j // 2) % 4
            result[4 * col + 2 * (j % 2)] = slot[:8]
            result[4 * col + 2 * (j % 2) + 1] = slot[8:]
        m.d.comb += self.output.payload.eq(Cat(*reversed(result)))
        return m


def _read_column(ram: int, phase, column, direction):
    """The state column RAM ``ram`` (A: rows 0 and 2, B: rows 1 and 3) reads for output column
    ``column`` and row pair ``phase``: row ``r`` is read at ``column + r`` when encrypting (ShiftRows)
    and ``column - r`` when decrypting, so A reads ``column + 2 * phase`` either way and B
    ``column + 1 + 2 * (phase ^ direction)``."""
    if ram == 0:
        return (column + Cat(Const(0, 1), phase))[:2]
    return (column + 1 + Cat(Const(0, 1), phase ^ direction))[:2]


def _word_of(value, index: int, words: int):
    """Word ``index`` (0 = most significant) of a value ``32 * words`` bits wide."""
    return value[32 * (words - 1 - index):32 * (words - index)]
