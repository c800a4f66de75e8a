"""A serial PRESENT-80/128 core whose state, round keys and S-box are in iCE40 block RAM."""

from amaranth.hdl import C, Cat, Module, Mux, Signal

from ..block_ram import MixedWidthRam
from .base import PRESENTCipher
from .tables import BLOCK_BITS, INV_SBOX, KEY_COUNTER_LSB, KEY_SBOX_NIBBLES, ROUNDS, SBOX


__all__ = ["BlockRamPRESENT", "nibble_function", "NIBBLE_MODES"]


_NIBBLES = BLOCK_BITS // 4
#: A pass: one nibble of the state read per edge (its result is written two edges later).
PASS_CYCLES = _NIBBLES
#: The 61 edges the key register turns in one step of the key schedule.
_TURNS = 61
#: Ring bit where the first half of the loaded key comes in (the second comes in half a ring on).
_ENTRY = 8

#: What a pass does to each nibble ``x`` of the state with its round-key nibble ``k``, by the
#: mode on the S-box table's two high address bits.
NIBBLE_MODES = {
    0: "S(x ^ k)",          # an encryption round (and the key schedule's S-box, with k = 0)
    1: "x ^ k",             # the lone AddRoundKey: K32 last when encrypting, first decrypting
    2: "S^-1(x) ^ k",       # a decryption round
    3: "x ^ k",             # (unused)
}


def nibble_function(mode: int, x: int, k: int) -> int:
    """The entry of the S-box table at ``mode``, ``x``, ``k`` (see :data:`NIBBLE_MODES`)."""
    if mode == 0:
        return SBOX[x ^ k]
    if mode == 2:
        return INV_SBOX[x] ^ k
    return x ^ k


def _table_rows() -> list:
    # 1024x4 words: word (mode << 8) | (x << 4) | k is lane `mode` of row 16 x + k, whose bit q
    # is bit 4 q + lane of the row (see MixedWidthRam).
    rows = []
    for row in range(256):
        value = 0
        for mode in range(4):
            word = nibble_function(mode, row >> 4, row & 15)
            for q in range(4):
                value |= ((word >> q) & 1) << (4 * q + mode)
        rows.append(value)
    return rows


class BlockRamPRESENT(PRESENTCipher):
    """PRESENT-80/128 (Bogdanov et al., CHES 2007), one nibble per clock, with the state, the
    32 round keys and the S-box in block RAM: the core for a device whose logic is scarce and
    whose block RAMs are not (iCE40 UP5K: 5,280 LUT4 and 30 RAMs). Encrypts and decrypts, each
    block choosing its direction (or encrypt-only).

    Each RAM is an iCE40 ``SB_RAM40_4K`` (:class:`~cipher_cores.cores.block_ram.MixedWidthRam`: the cell on
    iCE40, a model of it elsewhere), whose write port takes 16 bits under a bit mask and whose
    read port reads 4 (or 2) of them:

    * **The state**, two banks of 64 bits in one RAM, read a nibble per edge; the pLayer is the
      write: the four output bits of S-box ``j`` go to four different nibbles, which the layout
      puts in one row and one group of four bits, so one masked write places them. Encrypting,
      nibble ``n`` is lane ``n // 4`` of row ``n % 4``; decrypting (pLayer^-1), lane ``n % 4``
      of row ``n // 4`` (the core then addresses the RAM with the two halves of the nibble index
      swapped: four LUT4s).
    * **The S-box** is a table of 1024 nibbles: the pass's mode, the state nibble and the
      round-key nibble address the result (:data:`NIBBLE_MODES`), so the S-box, its inverse
      and AddRoundKey take no logic.
    * **The round keys** K1..K32 are a table of 512 nibbles, written once per key load.
    * **A loaded block and key** go into RAMs straight from the stream payloads (4 RAMs for a
      block, ``key_bits / 16`` for a key), each holding its slice in its own row, so that
      reading all of them at one address gives one slice and zeros: the nibble (or key bits)
      is the XOR of their outputs and no multiplexer is needed. A parallel load into registers
      would take a LUT4 per bit.

    The key schedule runs once per key, on a ring of ``key_bits`` flip-flops turning one bit per
    edge: the loaded key comes in two bits per edge (``key_bits / 2`` edges), then each of the
    32 round keys is written to its table as its 16 nibbles pass under the ring's top nibble
    (61 edges, the schedule's rotation by 61), and the update's S-box goes through the S-box
    table (two edges; PRESENT-128's second S-box two more).

    A block takes 32 passes of 16 edges: encrypting, 31 rounds ``S(x ^ K_i)`` then
    ``x ^ K32``; decrypting, ``x ^ K32`` then 31 rounds ``S^-1(x) ^ K_i``, the pLayer^-1
    written before each. The first pass reads the loaded block, the last one shifts the result
    into the output register, a nibble per edge.

    Parameters
    ----------
    key_bits : :class:`int`
        80 (PRESENT-80) or 128 (PRESENT-128).
    decrypt : :class:`bool`
        With ``False`` every block is encrypted (the ``decrypt`` field of ``input.payload`` is
        ignored).

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        Loads a key: the integer k79..k0 (k127..k0), k0 the least significant bit. ``key.ready``
        is high only when the core is idle (no block, no result waiting, no key being expanded).
    input : ``In(stream.Signature(BlockRequest(64)))``
        One block, the integer b63..b0 (b0 the least significant bit), and its direction
        (``decrypt``). ``input.ready`` stays low until the first key has been expanded and
        while ``key.valid`` is high.
    output : ``Out(stream.Signature(unsigned(64)))``
        The result of each block, b63..b0, in order.

    Cycle counts
    ------------
    In clock edges, with ``output.ready`` held high:

    * latency: ``32 * 16 + 3`` = 515 (32 passes, the last result nibble two edges later, and
      the transfer); the same both ways.
    * initiation interval: 515; the next block transfers on the edge where the previous result
      transfers out.
    * key load: ``key_bits / 2 + 62 + 31 * 63 + 1`` = 2,056 (PRESENT-80) or, with two S-boxes
      an update (and the edge the ring stops on for the second), ``64 + 62 + 31 * 66 + 1`` =
      2,173 (PRESENT-128).

    Block RAMs: ``4 + key_bits / 16 + 3`` ``SB_RAM40_4K`` (12 for PRESENT-80, 15 for
    PRESENT-128).

    Reset
    -----
    A reset at any time leaves an idle core with no key loaded and no output pending.
    """
    @property
    def latency(self) -> int:
        return (ROUNDS + 1) * PASS_CYCLES + 3

    @property
    def initiation_interval(self) -> int:
        return self.latency

    @property
    def key_load_cycles(self) -> int:
        # Each S-box of an update takes two edges; PRESENT-128's second one also the edge on
        # which the ring stops for it.
        sboxes = len(KEY_SBOX_NIBBLES[self._key_bits])
        return self._key_bits // 2 + (_TURNS + 1) + ROUNDS * (_TURNS + 3 * sboxes - 1) + 1

    @property
    def block_rams(self) -> int:
        """``SB_RAM40_4K`` cells: block, key, state, round keys, S-box table."""
        return 4 + self._key_bits // 16 + 3

    def elaborate(self, platform):
        m = Module()
        key_bits = self._key_bits
        half = key_bits // 2
        sbox_nibbles = len(KEY_SBOX_NIBBLES[key_bits])

        # --- Control state --------------------------------------------------------------------
        count = Signal(6)               # down: key bits, turns of a key step, nibble of a pass
        nibble = count[:4]              # the nibble a pass reads on this edge
        round_index = Signal(5)         # i - 1 of the round key K_i being written or used
        key_loaded = Signal()
        decrypting = Signal() if self._decrypt else C(0)
        first = Signal()                # the pass reads the loaded block
        bank = Signal()                 # the state bank being read
        second_pending = Signal()       # PRESENT-128: the update's second S-box is to come

        load_key = Signal()
        load_block = Signal()
        clear_ring = Signal()
        turn = Signal()                 # the ring turns one bit
        write_round_key = Signal()
        key_sbox = Signal()             # the ring's top nibble addresses the S-box table
        update = Signal()               # the ring's top nibble takes the S-box table's word
        running = Signal()              # a pass reads a nibble on this edge
        pass_end = Signal()
        m.d.comb += [
            load_key.eq(self.key.valid & self.key.ready),
            load_block.eq(self.input.valid & self.input.ready),
            pass_end.eq(running & (nibble == 0)),
        ]

        # The last pass: K32 encrypting, K1 decrypting.
        last = Signal()
        m.d.comb += last.eq(running & (round_index == Mux(decrypting, 0, ROUNDS)))
        # Nibble index as the state RAM's wiring takes it: swapped halves when decrypting.
        address = Signal(4)
        m.d.comb += address.eq(Mux(decrypting, Cat(nibble[2:], nibble[:2]), nibble))

        # Pipeline: stage 1 addresses the S-box table, stage 2 writes its word.
        valid = Signal(2)
        address_delay = [Signal(4, reset_less=True, name=f"address_{i}") for i in (1, 2)]
        write_bank = [Signal(reset_less=True, name=f"write_bank_{i}") for i in (1, 2)]
        last_delay = [Signal(name=f"last_{i}") for i in (1, 2)]
        mode = Signal(2)                # of the S-box table, for the nibble in stage 1
        m.d.sync += [
            valid.eq(Cat(running, valid[0])),
            address_delay[0].eq(address), address_delay[1].eq(address_delay[0]),
            write_bank[0].eq(~bank), write_bank[1].eq(write_bank[0]),
            last_delay[0].eq(last), last_delay[1].eq(last_delay[0]),
            # x ^ K32: the first pass decrypting, the last encrypting.
            mode.eq(Cat(running & Mux(decrypting, first, last), running & decrypting)),
        ]

        # --- The RAMs ---------------------------------------------------------------------------
        def ram(name, **kwargs):
            m.submodules[name] = cell = MixedWidthRam(**kwargs)
            return cell

        # The loaded block: RAM i holds nibbles 4i..4i+3 in row i, nibble 4i+l in lane l.
        block_rams = [ram(f"block_{i}", read_mode=2) for i in range(4)]
        block_rows = Cat(nibble[2:], ~(running & first))
        block_nibble = C(0, 4)
        for i, cell in enumerate(block_rams):
            m.d.comb += [
                cell.write_addr.eq(i), cell.write_en.eq(load_block), cell.write_mask.eq(0),
                cell.write_data.eq(Cat(self.input.payload.block[4 * (4 * i + bit % 4) + bit // 4]
                                       for bit in range(16))),
                cell.read_addr.eq(Cat(block_rows, C(0, 5), nibble[:2])),
            ]
            block_nibble = block_nibble ^ cell.read_data

        # The loaded key, read on counts 63 down to 64 - half: the bit read on count c enters
        # the ring at ENTRY (and ENTRY + half) and is c - (64 - half) bits further on when the
        # load ends. RAM i holds its 16 bits in row 8 - key_bits / 16 + i, the row those counts
        # read (count[5:3]), lane l holding bit 0 and 8 + l bit 1 of the 2048x2 word.
        key_rams = [ram(f"key_{i}", read_mode=3) for i in range(key_bits // 16)]
        key_in = C(0, 2)
        loading = Signal()
        for i, cell in enumerate(key_rams):
            row = 8 - len(key_rams) + i
            bits = [(_ENTRY + 8 * row + lane - (64 - half)) % key_bits for lane in range(8)]
            bits += [(_ENTRY + half + 8 * row + lane - (64 - half)) % key_bits
                     for lane in range(8)]
            m.d.comb += [
                cell.write_addr.eq(row), cell.write_en.eq(load_key), cell.write_mask.eq(0),
                cell.write_data.eq(Cat(self.key.payload[bit] for bit in bits)),
                cell.read_addr.eq(Cat(count[3:6], ~loading, C(0, 4), count[:3])),
            ]
            key_in = key_in ^ cell.read_data

        # The ring: the key register, bit p the key's bit p, turning left one bit per edge.
        ring = Signal(key_bits, reset_less=True)
        top = ring[key_bits - 4:]
        z = Signal(4)                   # the S-box table's word

        # The state: rows {zero, bank, a[1:0]}, lane a[3:2] for nibble address a; the zero rows
        # (never written) are read when a pass takes the loaded block, or none.
        state_ram = ram("state", read_mode=2)
        stage2 = address_delay[1]
        m.d.comb += [
            state_ram.read_addr.eq(Cat(address[:2], bank, ~(running & ~first), C(0, 4),
                                       address[2:])),
            state_ram.write_addr.eq(Cat(stage2[2:], write_bank[1])),
            state_ram.write_data.eq(z.replicate(4)),
            state_ram.write_mask.eq(Cat((stage2[:2] != group).replicate(4)
                                        for group in range(4))),
            state_ram.write_en.eq(valid[1] & ~last_delay[1]),
        ]

        # The round keys: nibble n of K_{i+1} is word (n[1:0] << 8) | (i << 2) | n[3:2].
        round_keys = ram("round_keys", read_mode=2, write_mode=2)
        written = count[2:6]
        m.d.comb += [
            round_keys.write_addr.eq(Cat(written[2:], round_index, C(0, 1), written[:2])),
            round_keys.write_data.eq(top),
            round_keys.write_en.eq(write_round_key),
            round_keys.read_addr.eq(Cat(nibble[2:], round_index, ~running, nibble[:2])),
        ]

        # The S-box table.
        x = Signal(4)
        m.d.comb += x.eq(block_nibble ^ state_ram.read_data ^ (top & key_sbox.replicate(4)))
        table = ram("sbox_table", read_mode=2, init=_table_rows(), writes=False)
        m.d.comb += [
            table.read_addr.eq(Cat(round_keys.read_data, x, mode)),
            z.eq(table.read_data),
        ]

        # --- The key ring -------------------------------------------------------------------------
        turned = Signal(key_bits)
        m.d.comb += turned.eq(Cat(ring[-1], ring[:-1]))
        entries = Signal(key_bits)
        m.d.comb += [entries[_ENTRY].eq(key_in[0]), entries[_ENTRY + half].eq(key_in[1])]
        updated = Signal(key_bits)
        counter_lsb = KEY_COUNTER_LSB[key_bits]
        add_counter = Signal()
        m.d.comb += [
            updated.eq(Cat(ring[:key_bits - 4], z)),
            updated[counter_lsb:counter_lsb + 5].eq(
                ring[counter_lsb:counter_lsb + 5] ^ (round_index & add_counter.replicate(5))),
        ]
        with m.If(clear_ring):
            m.d.sync += ring.eq(0)
        with m.Elif(turn):
            m.d.sync += ring.eq(turned ^ entries)
        with m.Elif(update):
            m.d.sync += ring.eq(updated)

        # --- The output register --------------------------------------------------------------
        result = Signal(BLOCK_BITS, reset_less=True)
        m.d.comb += self.output.payload.eq(result)
        with m.If(valid[1] & last_delay[1]):
            m.d.sync += result.eq(Cat(z, result[:-4]))

        # --- Control ------------------------------------------------------------------------------
        def wait_for_block():
            # Set on every edge while a block may transfer, so that no register but the FSM's
            # is enabled by the streams' handshake: a pass starts from count 63 (nibble 15).
            m.d.sync += [count.eq(63), first.eq(1),
                         round_index.eq(Mux(self.input.payload.decrypt, ROUNDS, 0)
                                        if self._decrypt else 0)]
            if self._decrypt:
                m.d.sync += decrypting.eq(self.input.payload.decrypt)

        with m.FSM():
            with m.State("Idle"):
                m.d.comb += [
                    self.key.ready.eq(1),
                    self.input.ready.eq(key_loaded & ~self.key.valid),
                ]
                wait_for_block()
                with m.If(self.key.valid):
                    m.next = "Load key"
                with m.Elif(load_block):
                    m.next = "Run"

            with m.State("Load key"):
                # Two bits of the key come in from the key RAMs per edge, each read an edge
                # before; the ring (zero until the first bits arrive) turns on every edge and one
                # more after the last read. The first edge clears the ring and the flags.
                m.d.comb += [loading.eq(1), turn.eq(1), clear_ring.eq(count == 63)]
                m.d.sync += [count.eq(count - 1), round_index.eq(0), key_loaded.eq(0)]
                if sbox_nibbles == 2:
                    m.d.sync += second_pending.eq(0)        # K1 is the loaded key itself
                with m.If(count == 64 - half):
                    m.d.sync += count.eq(_TURNS)
                    m.next = "Expand"

            with m.State("Expand"):
                # Round key K_{i+1} (i = round_index): its nibble count / 4 is under the top of
                # the ring on the counts that are multiples of 4, 60 down to 0.
                divert = Signal()
                if sbox_nibbles == 2:
                    m.d.comb += divert.eq(second_pending & (count == _TURNS - 5))
                with m.If(divert):
                    m.next = "Key S-box"
                with m.Else():
                    m.d.comb += [turn.eq(1), write_round_key.eq(count[:2] == 0)]
                    m.d.sync += count.eq(count - 1)
                    with m.If(count == 0):
                        m.d.sync += [round_index.eq(round_index + 1), count.eq(_TURNS - 1)]
                        if sbox_nibbles == 2:
                            m.d.sync += second_pending.eq(1)
                        with m.If(round_index == ROUNDS):
                            m.d.sync += key_loaded.eq(1)
                            m.next = "Idle"
                        with m.Else():
                            m.next = "Key S-box"

            with m.State("Key S-box"):
                m.d.comb += key_sbox.eq(1)
                m.next = "Key update"

            with m.State("Key update"):
                # The update's counter goes in with its first S-box (count 60).
                m.d.comb += [update.eq(1), add_counter.eq(count[2])]
                with m.If(~count[2]):
                    m.d.sync += second_pending.eq(0)
                m.next = "Expand"

            with m.State("Run"):
                m.d.comb += running.eq(1)
                m.d.sync += count.eq(count - 1)
                with m.If(pass_end):
                    m.d.sync += [
                        round_index.eq(round_index + Mux(decrypting, -1, 1)),
                        bank.eq(~bank),
                        first.eq(0),
                    ]
                    with m.If(last):
                        m.next = "Drain"

            with m.State("Drain"):
                # The last two nibbles of the result are in the pipeline.
                with m.If(~valid[0]):
                    m.next = "Output"

            with m.State("Output"):
                m.d.comb += [
                    self.output.valid.eq(1),
                    self.input.ready.eq(self.output.ready & ~self.key.valid),
                ]
                wait_for_block()
                with m.If(self.output.ready):
                    m.next = "Idle"
                with m.If(load_block):
                    m.next = "Run"

        return m
