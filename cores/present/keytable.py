"""The PRESENT-80/128 round core with its 32 round keys in a block RAM."""

from amaranth.hdl import Cat, Module, Mux, Signal

from .. import fpga
from ..block_ram import RegisteredRam
from ..lut import lut4, pfumx
from .base import PRESENTCipher
from .key_schedule import round_key, update_key
from .round import p_layer, s_layer
from .tables import BLOCK_BITS, COUNTER_BITS, INV_SBOX, ROUNDS, SBOX


__all__ = ["READ_STAGES", "KeyTablePRESENT"]


#: Round keys K1..K32, one word of the table each.
_ROUND_KEYS = ROUNDS + 1
_INDEX_BITS = (_ROUND_KEYS - 1).bit_length()
#: Edges from a round key's address to its word at the state's logic: the RAM's address register
#: and its output register (:class:`~cipher_cores.cores.block_ram.RegisteredRam`).
READ_STAGES = 2
# Copies of the `running` select, each driving a slice of the state bits.
_COPIES = 4


class KeyTablePRESENT(PRESENTCipher):
    """PRESENT-80/128 block cipher (Bogdanov et al., CHES 2007), one round per clock, encrypting
    and decrypting (each block choosing its direction), with the round keys K1..K32 in a block
    RAM: the smallest of our round cores that decrypt.

    The key schedule runs once per key load, forwards, writing K1..K32 (the 64 leftmost bits of
    the key register after 0..31 updates) into a 32-word table; a block then reads its round keys
    from the table, K1, K2, ..., K32 to encrypt and K32, K31, ..., K1 to decrypt. Compared with
    :class:`~cipher_cores.cores.present.PRESENT`, which runs the schedule beside the rounds in both directions,
    this saves the backward schedule and the multiplexers that restart the key register from the
    loaded or the final key for each block (about 40 % of the LUTs), for 2 (iCE40) or 4 (ECP5)
    block RAMs.

    The state register holds the state after its latest AddRoundKey and is also the output
    payload (it holds while a result waits). Each state bit is four LUT4s: the S-box bit and the
    inverse S-box bit of the two layers, then the direction chosen and the round key added, then
    the block load (the block plus the first round key) or the round (on ECP5 the last two share
    a slice, with its multiplexer between them; :mod:`cipher_cores.cores.lut`).

    The table is read through two registers (:data:`READ_STAGES`), so a round key is addressed
    two edges before it is added: while no block runs, the table's output register holds the
    first round key of a direction (K1 or K32) and the next one is in its address register. A
    block whose direction is the one fetched transfers at once; the core fetches the direction of
    the block offered on ``input`` when the previous block's 29th round ends (or when a key
    expansion ends), and keeps the previous direction when no block is offered then. A block
    whose direction is the other one waits ``READ_STAGES + 2`` = 4 edges while the table is read
    again (``input.ready`` stays low; it depends on the offered ``decrypt`` bit, which the stream
    holds while ``valid`` is high).

    Parameters
    ----------
    key_bits : :class:`int`
        80 (PRESENT-80) or 128 (PRESENT-128).
    decrypt : :class:`bool`
        With ``False`` the decryption path is left out: every block is encrypted (the ``decrypt``
        field of ``input.payload`` is ignored).

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        Loads a key: the integer k79..k0 (k127..k0) of the paper, k0 the least significant bit.
        ``key.ready`` is high only when the core is idle: no block in the core, no result waiting,
        no key load or table read running.
    input : ``In(stream.Signature(BlockRequest(64)))``
        One block: ``block`` is the integer b63..b0 of the paper, ``decrypt`` selects the
        direction. ``input.ready`` stays low until the first key has been loaded, and while
        ``key.valid`` is high.
    output : ``Out(stream.Signature(unsigned(64)))``
        The result of each block, b63..b0, in order. Its payload is the state register.

    Cycle counts
    ------------
    In clock edges, for both key sizes, both directions and all data and keys:

    * latency (:attr:`latency`): 32 from the edge where a block transfers in (adding K1 or K32)
      to the edge where its result transfers out, with ``output.ready`` high: 31 round edges,
      then the result is valid.
    * initiation interval (:attr:`initiation_interval`): 32; the next block transfers in on the
      edge where the previous result transfers out, when it was offered (or has the previous
      block's direction); otherwise 4 edges later.
    * key load (:attr:`key_load_cycles`): 35 from the key transfer edge to the first edge a block
      can transfer: one edge takes the key, 32 write K1..K32, 2 read the first round keys of the
      direction of the block offered then (of the previous direction if none is offered; a block
      of the other direction then waits 4 edges more).

    Reset
    -----
    A reset at any time leaves an idle core with no key loaded and no output pending (the table
    keeps its words, which the next key load overwrites).
    """
    @property
    def latency(self) -> int:
        return 1 + ROUNDS

    @property
    def initiation_interval(self) -> int:
        return 1 + ROUNDS

    @property
    def key_load_cycles(self) -> int:
        return 1 + _ROUND_KEYS + READ_STAGES

    def elaborate(self, platform):
        m = Module()
        key_bits = self._key_bits
        decrypt = self._decrypt

        m.submodules.round_keys = table = RegisteredRam(depth=_ROUND_KEYS, width=BLOCK_BITS,
                                                        enables=_COPIES)

        state = Signal(BLOCK_BITS, reset_less=True)     # b63..b0, after the latest AddRoundKey
        # The key register runs the schedule while the table is written; otherwise it follows
        # the key stream's payload, so the edge a key transfers is an ordinary edge for it.
        key_reg = Signal(key_bits, reset_less=True)
        # The schedule's round counter: K(counter) is in the key register, written into word
        # counter - 1 of the table.
        counter = Signal(COUNTER_BITS, reset_less=True)
        # The step of the next round key to read (step s is word s to encrypt, word 31 - s =
        # ~s to decrypt), less one while a block runs: it only counts on registered flags, and
        # two on the last round edge, so that the edge a block transfers needs no increment.
        step = Signal(_INDEX_BITS, reset_less=True)
        step_plus_one = Signal(_INDEX_BITS, reset_less=True)    # step + 1, kept beside it
        fetching = Signal(reset_less=True)      # the direction whose round keys are read
        decrypting = Signal(reset_less=True)    # the direction of the block running

        # Control, one flag per state of the handshake, all registered.
        idle = Signal(init=1)               # key.ready
        key_loaded = Signal()
        expanding = Signal()                # the table is written, K1..K32
        rereading = Signal()                # the edge before the table is read again
        priming = Signal()                  # the table's first round keys are read
        primed = Signal()                   # the table's output holds a first round key
        accepting = Signal()                # idle & key_loaded & primed
        running = Signal()                  # a round edge of a block
        last_round = Signal()
        switching = Signal()                # the next edge addresses a block's last round key
        output_valid = Signal()

        load_key = Signal()
        load_block = Signal()
        take_output = Signal()
        reread = Signal()                   # the offered block needs the other direction
        # The table's read registers take their next words: one copy per slice of the word.
        advance = Signal(_COPIES)

        round_key_word = table.read_data
        offered_decrypt = self.input.payload.decrypt if decrypt else 0
        matches = (fetching == offered_decrypt) if decrypt else 1
        last_expansion = Signal()           # (registered a cycle ahead)
        last_priming = priming & (step == READ_STAGES - 1)

        # The handshake. A block is offered (valid, no key waiting, its direction fetched) and
        # there is room for it (idle, or the result leaves). On iCE40 each is one LUT4
        # (cipher_cores.cores.lut), so that the table's read enables are two LUT levels from the streams
        # (HX8K: 177 -> 195 MHz); on ECP5 the LUT mapper does better by itself (226 MHz, 203
        # with the cells).
        ice40 = fpga.family(platform) == "ice40"
        offered, room = Signal(), Signal()
        if ice40:
            m.d.comb += [
                offered.eq(lut4(m, platform, lambda valid, key_valid, fetched, wanted: valid and
                                not key_valid and (fetched == wanted or not decrypt),
                                [self.input.valid, self.key.valid, fetching, offered_decrypt],
                                name="offered")),
                room.eq(lut4(m, platform, lambda ready_, waiting, taken, _: ready_ or
                             (waiting and taken), [accepting, output_valid, self.output.ready],
                             name="room")),
            ]
        else:
            m.d.comb += [
                offered.eq(self.input.valid & ~self.key.valid & matches),
                room.eq(accepting | (output_valid & self.output.ready)),
            ]
        m.d.comb += [
            self.key.ready.eq(idle),
            self.input.ready.eq(~self.key.valid & matches &
                                (accepting | (output_valid & self.output.ready))),
            self.output.valid.eq(output_valid),
            load_key.eq(self.key.valid & idle),
            load_block.eq(offered & room),
            take_output.eq(output_valid & self.output.ready),
            reread.eq(accepting & ~self.key.valid & self.input.valid & ~matches),
        ]
        idle_next = Signal()
        key_loaded_next = Signal()
        primed_next = Signal()
        m.d.comb += [
            idle_next.eq((idle & ~load_key & ~load_block & ~reread) | last_priming |
                         (take_output & ~load_block)),
            key_loaded_next.eq(key_loaded | load_key),
            primed_next.eq(Mux(load_key | reread, 0, primed | last_priming)),
        ]
        m.d.sync += [
            idle.eq(idle_next),
            key_loaded.eq(key_loaded_next),
            primed.eq(primed_next),
            # Decided a cycle ahead, so that the stream handshake is one LUT level deep.
            accepting.eq(idle_next & key_loaded_next & primed_next),
            expanding.eq(load_key | (expanding & ~last_expansion)),
            last_expansion.eq(expanding & (counter == _ROUND_KEYS - 1)),
            rereading.eq(reread),
            priming.eq(last_expansion | rereading | (priming & ~last_priming)),
            running.eq(load_block | (running & ~last_round)),
            # On round edge j the step is READ_STAGES + j - 1: registered a cycle ahead, the
            # last round edge (31) and the edge before the one addressing step 31 (29 - S).
            last_round.eq(running & (step == (READ_STAGES + ROUNDS - 2) % _ROUND_KEYS)),
            switching.eq(running & (step == _ROUND_KEYS - 3)),
            output_valid.eq(last_round | (output_valid & ~self.output.ready)),
        ]

        # The key expansion, and the steps: cleared while the table is written and before it is
        # read again, then one a read, and two on a block's last round edge (32 a block).
        m.d.sync += [
            counter.eq(Mux(expanding, counter + 1, 1)),
            key_reg.eq(Mux(expanding, update_key(key_reg, counter, key_bits), self.key.payload)),
            step.eq(Mux(expanding | rereading, 0,
                        step + Mux(last_round, 2, running | priming))),
            step_plus_one.eq(Mux(expanding | rereading, 1,
                                 step_plus_one + Mux(last_round, 2, running | priming))),
        ]

        # The round keys: the step wraps from 31 to 0 on the edge after the one addressing a
        # block's last round key; the words read next are the first two of the next block's
        # direction, that of the block offered then (if any).
        if decrypt:
            m.d.sync += [
                fetching.eq(Mux(self.input.valid &
                                (switching | last_expansion | (accepting & ~self.key.valid)),
                                offered_decrypt, fetching)),
                decrypting.eq(Mux(running, decrypting, fetching)),
            ]
        # The step addressed: one LUT4 per address bit (no adder on the way to the RAM).
        read_step = Signal(_INDEX_BITS)
        m.d.comb += [
            read_step.eq(Mux(running, step_plus_one, step)),
            table.write_addr.eq(counter - 1),
            table.write_data.eq(round_key(key_reg, key_bits)),
            table.write_en.eq(expanding),
            table.read_addr.eq(read_step ^ fetching.replicate(_INDEX_BITS) if decrypt
                               else read_step),
            table.read_en.eq(advance),
        ]

        # The state: copies of `running`, each selecting a slice of the state bits (one net of
        # 64 loads routes slower than the LUTs it feeds).
        running_copies = [Signal(name=f"running_{i}") for i in range(_COPIES)]
        for copy in running_copies:
            m.d.sync += copy.eq(load_block | (copy & ~last_round))
        if ice40:
            # Registered `running | priming`, a copy per enable: the enable is then one LUT4.
            streaming_copies = [Signal(name=f"streaming_{i}") for i in range(_COPIES)]
            for index, (copy, running_copy) in enumerate(zip(streaming_copies, running_copies)):
                m.d.sync += copy.eq(load_block | (running_copy & ~last_round) | last_expansion |
                                    rereading | (priming & ~last_priming))
                m.d.comb += advance[index].eq(lut4(
                    m, platform, lambda streaming, offer, space, _: streaming or
                    (offer and space), [copy, offered, room], name=f"advance_{index}"))
        else:
            m.d.comb += advance.eq(Cat(load_block | copy | priming for copy in running_copies))

        def select(bit):
            return running_copies[bit * _COPIES // BLOCK_BITS]

        block = self.input.payload.block
        state_next = Signal(BLOCK_BITS)
        if fpga.primitives(platform).lut is not None:
            self._cells(m, platform, state, block, round_key_word,
                        decrypting if decrypt else None, select, state_next)
        else:
            # The same functions as whole words (simulation, exported Verilog, formal checks).
            run = Cat(select(i) for i in range(BLOCK_BITS))
            forward = p_layer(s_layer(state))
            if decrypt:
                backward = s_layer(p_layer(state, inverse=True), inverse=True)
                running_value = Mux(decrypting, backward, forward) ^ round_key_word
                m.d.comb += state_next.eq((running_value & run) |
                                          ((block ^ round_key_word) & ~run))
            else:
                m.d.comb += state_next.eq(((forward & run) | (block & ~run)) ^ round_key_word)
        # The state is also the output register: it holds while a result waits.
        with m.If(~output_valid | self.output.ready):
            m.d.sync += state.eq(state_next)
        m.d.comb += self.output.payload.eq(state)
        return m

    @staticmethod
    def _cells(m, platform, state, block, key, decrypting, select, state_next):
        """The state's next value as LUT cells (:mod:`cipher_cores.cores.lut`): the delay-driven LUT mapper
        would otherwise merge the S-boxes into the logic after them and duplicate them (iCE40
        HX8K: 579 LUT4 instead of about 400). ``decrypting`` is ``None`` without decryption."""
        def sbox_bits(nibbles, table, name):
            return Cat(lut4(m, platform, lambda *x, bit=bit: (table[sum(
                value << k for k, value in enumerate(x))] >> bit) & 1,
                [nibbles[4 * n + k] for k in range(4)], name=f"{name}_{4 * n + bit}")
                for n in range(BLOCK_BITS // 4) for bit in range(4))

        forward = p_layer(sbox_bits(state, SBOX, "sbox"))
        if decrypting is not None:
            backward = sbox_bits(p_layer(state, inverse=True), INV_SBOX, "inverse_sbox")
        for i in range(BLOCK_BITS):
            run = select(i)
            if decrypting is None:
                m.d.comb += state_next[i].eq(lut4(
                    m, platform, lambda r, f, b, k: (f if r else b) ^ k,
                    [run, forward[i], block[i], key[i]], name=f"state_next_{i}"))
                continue
            running_value = lut4(m, platform, lambda back, f, b, k: (b if back else f) ^ k,
                                 [decrypting, forward[i], backward[i], key[i]],
                                 name=f"state_round_{i}")
            if fpga.primitives(platform).slice_mux is not None:
                # The round LUT, the load LUT and the slice's PFUMX between them: one slice.
                load_value = lut4(m, platform, lambda data, k, *_: data ^ k, [block[i], key[i]],
                                  name=f"state_load_{i}")
                m.d.comb += state_next[i].eq(pfumx(m, platform, run, running_value, load_value,
                                                   name=f"state_mux_{i}"))
            else:
                m.d.comb += state_next[i].eq(lut4(
                    m, platform, lambda r, value, data, k: value if r else data ^ k,
                    [run, running_value, block[i], key[i]], name=f"state_next_{i}"))
