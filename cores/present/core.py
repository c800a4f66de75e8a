"""The PRESENT-80/128 encryption/decryption core."""

from amaranth.hdl import C, Cat, Module, Mux, Signal

from .. import fpga
from ..lut import lut4, pfumx
from .base import PRESENTCipher
from .round import Round
from .tables import (BLOCK_BITS, COUNTER_BITS, INV_SBOX, KEY_COUNTER_LSB, KEY_ROTATION,
                     KEY_SBOX_NIBBLES, ROUNDS, SBOX)


__all__ = ["ROUNDS_PER_CYCLE", "PRESENT"]


def _key_update_cells(m, platform, key, counter, backward):
    """Bit ``i`` of the key register's next value in a round, forwards or (``backward``)
    backwards, as LUT4 cells (:mod:`cipher_cores.cores.lut`): one LUT choosing between the two bits the
    register's rotation brings to ``i``, or, where the S-box or the round counter changes a bit,
    a LUT for each direction and a PFUMX between them. ``counter`` is the schedule counter
    register, complemented when ``backward``."""
    key_bits = len(key)
    sbox_fields = [range(lsb, lsb + 4) for lsb in KEY_SBOX_NIBBLES[key_bits]]
    counter_lsb = KEY_COUNTER_LSB[key_bits]
    counter_field = range(counter_lsb, counter_lsb + COUNTER_BITS)

    def changed(position, inverse, name):
        """Bit ``position`` after the S-box and counter addition, of the key turned left by 61
        (forwards) or of the key itself (``inverse``); ``None`` where neither changes it."""
        def source(bit):
            return key[bit if inverse else (bit - KEY_ROTATION) % key_bits]
        for field in sbox_fields:
            if position in field:
                table = INV_SBOX if inverse else SBOX
                bit = position - field.start
                return lut4(m, platform, lambda *nibble: (table[sum(
                    value << index for index, value in enumerate(nibble))] >> bit) & 1,
                    [source(field.start + index) for index in range(4)], name=name)
        if position in counter_field:
            return lut4(m, platform, lambda k, c, b, _: k ^ c ^ b,
                        [source(position), counter[position - counter_lsb], backward],
                        name=name)
        return None

    cells = []
    for i in range(key_bits):
        # Forwards the register turns left by 61 and then changes; backwards it changes and
        # then turns right by 61.
        forward_source, backward_source = (i - KEY_ROTATION) % key_bits, (i + KEY_ROTATION) % key_bits
        forward = changed(i, False, f"key_forward_{i}")
        backward_value = changed(backward_source, True, f"key_backward_{i}")
        if forward is None and backward_value is None:
            cells.append(lut4(m, platform, lambda b, moved_back, moved_forward, _:
                              moved_back if b else moved_forward,
                              [backward, key[backward_source], key[forward_source]],
                              name=f"key_update_{i}"))
            continue
        if forward is None:
            forward = lut4(m, platform, lambda k, *_: k, [key[forward_source]],
                           name=f"key_forward_{i}")
        if backward_value is None:
            backward_value = lut4(m, platform, lambda k, *_: k, [key[backward_source]],
                                  name=f"key_backward_{i}")
        cells.append(pfumx(m, platform, backward, backward_value, forward,
                           name=f"key_changed_{i}"))
    return cells


# Copies of the high fan-out selects (see `PRESENT.elaborate`).
_COPIES = 8
# State bits per copy of their clock enable (iCE40, encrypt-only): nextpnr-ice40 promotes a
# clock enable of more than 15 loads to a global buffer.
_ENABLE_LOADS = 13

#: The values :class:`PRESENT` accepts for ``rounds_per_cycle``; 31 unrolls every round.
ROUNDS_PER_CYCLE = (1, 2, 4, 8, 16, 31)


class PRESENT(PRESENTCipher):
    """PRESENT-80/128 block cipher (Bogdanov et al., CHES 2007): one core that encrypts and
    decrypts, each block choosing its direction.

    The architecture is the integrated one of Pattalu Naidu and Kamala Kumari ("A High-Performance
    VLSI Architecture for the PRESENT Lightweight Cryptography"): a 64-bit datapath computing
    ``rounds_per_cycle`` rounds per clock, with the key schedule running in parallel with the
    rounds. There is no round-key table. For decryption the key schedule runs backwards, on the
    fly, from the key register after its 31 updates (whose 64 leftmost bits are K32); that register
    is derived once, when the key is loaded, by running the schedule forward.

    Registers: the state (also the output payload: it holds while a result waits), the running
    key register K, the loaded key and, with decryption, the final key register (K32 on top),
    derived once when the key is loaded by running the schedule forward. Every select of these
    registers is itself a register, decided one cycle ahead (or, for the loaded key, the key
    stream's ``valid``: the key is captured while it is offered and no block starts before it
    transfers); while no block runs, the state and K reload on every edge from the input
    payload and from the key the payload's direction starts from. The one net the streams
    drive into the datapath is the state's clock enable, low while a result waits for
    ``output.ready``: a separate result register would have taken the round logic's output to
    a second flip-flop outside its logic cell, on the critical path (removing it raised Fmax by
    about 15 % on iCE40 HX8K).

    Parameters
    ----------
    key_bits : :class:`int`
        80 (PRESENT-80) or 128 (PRESENT-128).
    rounds_per_cycle : :class:`int`
        Rounds computed per clock: 1, 2, 4, 8, 16 or 31 (31 unrolls every round). The last cycle of
        a block does the remainder of 31 rounds.
    decrypt : :class:`bool`
        With ``False`` the decryption path is left out (an encrypt-only core, e.g. for CTR mode):
        the ``decrypt`` field of ``input.payload`` is then ignored and every block is encrypted,
        and a key load costs a single cycle since no final key register is needed.

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        Loads a key: the integer k79..k0 (k127..k0) of the paper, k0 the least significant bit.
        ``key.ready`` is high only when the core is idle: no block in the core, no result waiting,
        no key load running.
    input : ``In(stream.Signature(BlockRequest(64)))``
        One block: ``block`` is the integer b63..b0 of the paper (b0 the least significant bit),
        ``decrypt`` selects the direction (0: encrypt, 1: decrypt). ``input.ready`` stays low until
        the first key has been loaded, and while ``key.valid`` is high: a key waiting to be loaded
        goes before any block, so a stream of blocks cannot hold a key back.
    output : ``Out(stream.Signature(unsigned(64)))``
        The result of each block, b63..b0, in order. Its payload is the state register.

    Cycle counts
    ------------
    With ``R = rounds_per_cycle`` and ``N = ceil(31 / R)`` round cycles, counted in clock edges:

    * latency (:attr:`latency`): ``N + 1`` from the edge where a block transfers in to the edge
      where its result transfers out, when ``output.ready`` is high. The transfer-in edge
      adds the first round key, each of the ``N`` round cycles computes R rounds (the last one
      the remainder), and the result is then valid.
    * initiation interval (:attr:`initiation_interval`): ``N + 1``; the next block transfers in on
      the edge where the previous result transfers out.
    * key load (:attr:`key_load_cycles`): ``N + 3`` from the key transfer edge to the first edge a
      block can transfer (one edge copies the key into K, the key schedule runs forward N
      cycles, one edge copies K into the final key register), or 1 when ``decrypt`` is
      ``False``. The key transfers at the earliest one edge
      after the previous result left, when the core is idle again.

    ================  =======  ===================  =========================
    rounds_per_cycle  latency  initiation interval  key load (decrypt=False)
    ================  =======  ===================  =========================
    1                 32       32                   34 (1)
    2                 17       17                   19 (1)
    4                 9        9                    11 (1)
    8                 5        5                    7 (1)
    16                3        3                    5 (1)
    31                2        2                    4 (1)
    ================  =======  ===================  =========================

    The figures are the same for both key sizes, both directions and all data and keys.

    Reset
    -----
    A reset at any time (also in the middle of a block or of a key load) leaves an idle core with
    no key loaded and no output pending.
    """
    def __init__(self, key_bits: int = 80, *, rounds_per_cycle: int = 1, decrypt: bool = True):
        if not isinstance(rounds_per_cycle, int) or isinstance(rounds_per_cycle, bool):
            raise TypeError(f"rounds_per_cycle must be an integer (1, 2, 4, 8, 16 or 31), "
                            f"not {rounds_per_cycle!r}")
        if rounds_per_cycle not in ROUNDS_PER_CYCLE:
            raise ValueError(f"rounds_per_cycle must be 1, 2, 4, 8, 16 or 31, "
                             f"not {rounds_per_cycle!r}")
        self._rounds_per_cycle = rounds_per_cycle
        super().__init__(key_bits, decrypt=decrypt)

    @property
    def rounds_per_cycle(self) -> int:
        return self._rounds_per_cycle

    @property
    def round_cycles(self) -> int:
        """Clock cycles spent on the 31 rounds of a block: ceil(31 / rounds_per_cycle)."""
        return -(-ROUNDS // self._rounds_per_cycle)

    @property
    def latency(self) -> int:
        return 1 + self.round_cycles

    @property
    def initiation_interval(self) -> int:
        return 1 + self.round_cycles

    @property
    def key_load_cycles(self) -> int:
        return 3 + self.round_cycles if self._decrypt else 1

    def elaborate(self, platform):
        m = Module()

        key_bits = self._key_bits
        per_cycle = self._rounds_per_cycle
        cycles = self.round_cycles
        remainder = ROUNDS - (cycles - 1) * per_cycle
        decrypt = self._decrypt
        # The encrypt-only core on iCE40 takes its control from LUT cells (see `handshake`).
        ice40 = fpga.family(platform) == "ice40"
        ice40_encrypt_only = not decrypt and ice40
        # Whether a slice holds two LUTs and a multiplexer between them (ECP5's PFUMX), of
        # which the decrypting core builds its state and key bits (see `datapath`).
        slice_cells = fpga.primitives(platform).slice_mux is not None

        # Every select of the datapath below is a register (or, for the key capture, the key
        # stream's own `valid`): of what the streams decide in the cycle, only the state's
        # clock enable (a result waiting for `output.ready`) reaches the 64-bit and 80-bit
        # registers, and no state bit waits for the handshake. The datapath registers have no
        # reset. While no block runs, the state and key registers reload every edge from the
        # input payload and from the key register a block starts from, so the edge where a
        # block transfers is an ordinary edge for them.
        state = Signal(BLOCK_BITS, reset_less=True)     # b63..b0, after the latest AddRoundKey
        key_reg = Signal(key_bits, reset_less=True)     # the running key register K
        key_first = Signal(key_bits, reset_less=True)   # the loaded key (K1 on top)
        key_final = Signal(key_bits, reset_less=True)   # the final key register (K32 on top)
        # The key schedule's round counter of sub-round 0 is `counter`, or its complement when
        # decrypting (31, 30, ... is ~0, ~1, ...): the register only counts up.
        counter = Signal(COUNTER_BITS, reset_less=True)
        decrypting = Signal(reset_less=True)            # direction of the rounds running

        # Control, one flag per state of the handshake, all registered.
        idle = Signal(init=1)               # key.ready; input.ready once a key is loaded
        key_loaded = Signal()
        reloading = Signal()                # first edge of a key expansion: K takes the key
        expanding = Signal()                # the key schedule runs forward (not a block)
        running = Signal()                  # a round cycle of a block
        advancing = Signal()                # running | expanding: K updates on this edge
        last = Signal()                     # this advancing cycle is the last one
        last_round = Signal()               # last & running
        last_expansion = Signal()           # last & expanding
        storing = Signal()                  # the edge after it: K holds K32
        output_valid = Signal()

        load_key = Signal()                 # a key transfers on this edge
        load_block = Signal()               # a block transfers on this edge
        take_output = Signal()              # the result transfers out on this edge

        round_units = []

        def rounds():
            """The rounds of one cycle, chained: sub-round `j` uses the schedule counter
            `counter + j` (its complement decrypting). Returns the round's state (with its round
            key), its layers (without) and its key register, taken after `remainder` sub-rounds
            in the last cycle."""
            states, layers, keys = [state], [None], [key_reg]
            for j in range(per_cycle):
                m.submodules[f"round_{j}"] = round_ = Round(key_bits, decrypt=decrypt)
                m.d.comb += [
                    round_.state_in.eq(states[-1]),
                    round_.key_in.eq(keys[-1]),
                ]
                if decrypt:
                    m.d.comb += [
                        round_.inverse.eq(decrypting),
                        round_.counter.eq((counter + j) ^ decrypting.replicate(COUNTER_BITS)),
                    ]
                else:
                    m.d.comb += round_.counter.eq(counter + j)
                round_units.append(round_)
                states.append(round_.state_out)
                layers.append(round_.layers_out)
                keys.append(round_.key_out)

            def pick(values):
                if remainder == per_cycle:
                    return values[per_cycle]
                return Mux(last, values[remainder], values[per_cycle])
            round_key_reg = Signal(key_bits)
            m.d.comb += round_key_reg.eq(pick(keys))
            if decrypt:
                round_state = Signal(BLOCK_BITS)
                m.d.comb += round_state.eq(pick(states))
                return round_state, round_key_reg
            # `keep`: without it the (delay-driven) LUT mapper merges the layers into the
            # register-input logic below and duplicates them.
            round_layers = Signal(BLOCK_BITS, attrs={"keep": 1})
            m.d.comb += round_layers.eq(pick(layers))
            return round_layers, round_key_reg

        def by_key_bit(selects, key_bit):
            # The copy of a select that drives key bit `key_bit` (and the state bit that adds it).
            return selects[key_bit * len(selects) // key_bits]

        def datapath(round_value, round_key_reg):
            """The next values of the state, key and result registers."""
            key_next = Signal(key_bits)
            state_next = Signal(BLOCK_BITS)
            block = self.input.payload.block
            offset = key_bits - BLOCK_BITS      # state bit i adds key bit i + offset
            if decrypt and slice_cells and per_cycle == 1:
                # On ECP5 each state bit, and each key bit the schedule only moves, is one
                # slice: a LUT4 for the running value, one for the start, and the slice's PFUMX
                # choosing between them, into the slice's flip-flop. The cells are placed by
                # hand (cipher_cores.cores.lut): the delay-driven LUT mapper merges such a split into wider
                # functions, whatever `keep` says. The state's running value adds K's update
                # (the round key) to the layers chosen by direction; so every path is two
                # LUTs and two PFUMXes at most (PRESENT-80 on ECP5-85F: 206 -> 230 MHz, 625 ->
                # 585 LUT4).
                round_ = round_units[0]
                update = _key_update_cells(m, platform, key_reg, counter, decrypting)
                # The block's direction goes straight into the LUTs that start from it (the
                # state's load ignores `reloading`: the state is not used during a key load).
                decrypt_block = self.input.payload.decrypt
                for i in range(key_bits):
                    start = lut4(m, platform,
                                 lambda d, reload, final, first: final if d and not reload
                                 else first,
                                 [decrypt_block, by_key_bit(reloading_copies, i), key_final[i],
                                  key_first[i]], name=f"key_start_{i}")
                    advance = by_key_bit(advancing_copies, i)
                    if update[i].name.startswith("key_update_"):
                        m.d.comb += key_next[i].eq(pfumx(m, platform, advance, update[i], start,
                                                         name=f"key_mux_{i}"))
                    else:
                        # An S-box or counter bit: its update is itself a PFUMX.
                        m.d.comb += key_next[i].eq(lut4(
                            m, platform, lambda a, u, s_, _: u if a else s_,
                            [advance, update[i], start], name=f"key_next_{i}"))
                for i in range(BLOCK_BITS):
                    k = i + offset
                    # While a block runs, K's next value is its update: the round key.
                    running_value = lut4(
                        m, platform, lambda back, f, b, key: (b if back else f) ^ key,
                        [decrypting, round_.layers_forward[i], round_.layers_backward[i],
                         update[k]], name=f"state_round_{i}")
                    load_value = lut4(
                        m, platform, lambda data, d, final, first: data ^ (final if d else first),
                        [block[i], decrypt_block, key_final[k], key_first[k]],
                        name=f"state_load_{i}")
                    m.d.comb += state_next[i].eq(pfumx(m, platform,
                                                       by_key_bit(running_copies, k),
                                                       running_value, load_value,
                                                       name=f"state_mux_{i}"))
            elif decrypt:
                # A block starts from the loaded key to encrypt, from the final key register to
                # decrypt; the first edge of a key expansion starts from the loaded key.
                start_key = Signal(key_bits)
                m.d.comb += [
                    start_key.eq(Cat(Mux(by_key_bit(from_final, i), key_final[i], key_first[i])
                                     for i in range(key_bits))),
                    key_next.eq(Cat(Mux(by_key_bit(advancing_copies, i), round_key_reg[i],
                                        start_key[i]) for i in range(key_bits))),
                    # Each state bit: the round's S-box and inverse S-box bits, the direction
                    # multiplexer with the round key, then the block load with its own key.
                    state_next.eq(Cat(Mux(by_key_bit(running_copies, i + offset), round_value[i],
                                          block[i] ^ start_key[i + offset])
                                      for i in range(BLOCK_BITS))),
                ]
            else:
                # Encrypt-only: every block starts from the loaded key. The key register's next
                # value is also the round key added to the state, in one LUT per state bit
                # after the S-box: block or layers, plus the key.
                m.d.comb += [
                    key_next.eq(Cat(Mux(by_key_bit(running_copies, i), round_key_reg[i],
                                        key_first[i]) for i in range(key_bits))),
                    state_next.eq(Cat(Mux(by_key_bit(running_copies, i + offset), round_value[i],
                                          block[i]) ^ key_next[i + offset]
                                      for i in range(BLOCK_BITS))),
                ]
            # The state is also the output register: it holds while a result waits for
            # `output.ready` (its clock enable, the one datapath net the stream drives), so the
            # round logic feeds only the flip-flop in its own logic cell.
            if ice40_encrypt_only:
                # The enable in copies of at most 15 loads: nextpnr-ice40 takes an enable of
                # more loads to a global buffer, at the edge of the die, far from the LUT that
                # computes it (HX8K: 1.9-2.0 ns of routing to the buffer, 0.6 through it).
                for first in range(0, BLOCK_BITS, _ENABLE_LOADS):
                    bits = slice(first, first + _ENABLE_LOADS)
                    enable = lut4(m, platform, lambda valid, ready, *_: not valid or ready,
                                  [output_valid, self.output.ready],
                                  name=f"state_enable_{first}")
                    with m.If(enable):
                        m.d.sync += state[bits].eq(state_next[bits])
            else:
                with m.If(~output_valid | self.output.ready):
                    m.d.sync += state.eq(state_next)
            m.d.sync += key_reg.eq(key_next)
            # The key is captured whenever it is offered (it holds until it transfers, and no
            # block starts while it waits); the enable is then the harness's `valid` itself.
            with m.If(self.key.valid):
                m.d.sync += key_first.eq(self.key.payload)
            if decrypt:
                if ice40:
                    # Copied from K the edge after the expansion, not from K's next value with
                    # it: on iCE40 that value's LUTs then feed one flip-flop each, K's, in their
                    # own logic cells (+10 % Fmax on HX8K). On ECP5 the LUT-less copy disturbs
                    # the packing of the state's flip-flops with their LUTs (-7 %).
                    with m.If(storing):
                        m.d.sync += key_final.eq(key_reg)
                else:
                    with m.If(last_expansion):
                        m.d.sync += key_final.eq(key_next)
            m.d.comb += self.output.payload.eq(state)

        def schedule_counter():
            """`counter`: 1 for the first encryption round, ~31 = 0 for the first decryption
            round, then R more each cycle; `last` a cycle ahead."""
            step = C(per_cycle, COUNTER_BITS)
            if decrypt:
                m.d.sync += decrypting.eq(Mux(running, decrypting,
                                              self.input.payload.decrypt & ~reloading &
                                              ~load_key & ~expanding))
                with m.If(advancing):
                    m.d.sync += counter.eq(counter + step)
                with m.Else():
                    m.d.sync += counter.eq(~(self.input.payload.decrypt & ~reloading))
                last_encrypt = counter == 1 + (cycles - 2) * per_cycle
                last_decrypt = counter == (cycles - 2) * per_cycle     # ~(31 - (cycles - 2) R)
                next_is_last = Mux(decrypting, last_decrypt, last_encrypt)
            else:
                m.d.sync += counter.eq(Mux(running, counter + step, 1))
                next_is_last = counter == 1 + (cycles - 2) * per_cycle
            # Registered a cycle ahead: `last` selects the remainder of 31 rounds, `last_round`
            # ends the rounds and `last_expansion` the key expansion.
            if cycles == 1:
                m.d.sync += [last.eq(1), last_round.eq(load_block)]
                if decrypt:
                    m.d.sync += last_expansion.eq(reloading)
            else:
                m.d.sync += [
                    last.eq(advancing & next_is_last),
                    last_round.eq(running & next_is_last),
                ]
                if decrypt:
                    m.d.sync += last_expansion.eq(expanding & next_is_last)

        def handshake():
            """The states of :class:`~cipher_cores.cores.cipher.Handshake` as one-hot flags: "Idle" (`idle`),
            "Expand key" (`reloading`, `expanding`, then `storing`), "Round" (`running`) and "Output"
            (`output_valid`), with its ready/valid and transitions."""
            if ice40_encrypt_only:
                # Idle is neither running nor holding a result; two LUT levels from the
                # streams to every control register: `offered` and `room` (their AND is
                # `load_block`), then the register's next value.
                m.d.comb += [
                    idle.eq(~running & ~output_valid),
                    self.input.ready.eq(lut4(m, platform, lambda key_valid, room_, *_:
                                             room_ and not key_valid,
                                             [self.key.valid, room], name="input_ready")),
                ]
            else:
                m.d.comb += self.input.ready.eq(~self.key.valid & (
                    (idle & key_loaded) | (output_valid & self.output.ready)))
            m.d.comb += [
                self.key.ready.eq(idle),
                self.output.valid.eq(output_valid),
                load_key.eq(self.key.valid & idle),
                load_block.eq(self.input.valid & self.input.ready),
                take_output.eq(output_valid & self.output.ready),
            ]
            if ice40:
                # One LUT into the flip-flop's D, in its own logic cell: as a clock enable (what
                # synthesis makes of `If(load_key)`) the key stream's `valid`, which comes from
                # afar, took a LUT and the slow route to the logic block's enable (iCE40 HX8K,
                # encrypt-only: 4.7-5.0 ns, the critical path).
                if ice40_encrypt_only:
                    m.d.sync += key_loaded.eq(lut4(m, platform, lambda held, valid, run, out:
                                                   held or (valid and not run and not out),
                                                   [key_loaded, self.key.valid, running,
                                                    output_valid], name="key_loaded_next"))
                else:
                    m.d.sync += key_loaded.eq(lut4(m, platform, lambda held, valid, ready, _:
                                                   held or (valid and ready),
                                                   [key_loaded, self.key.valid, idle],
                                                   name="key_loaded_next"))
            else:
                with m.If(load_key):
                    m.d.sync += key_loaded.eq(1)
            if not ice40_encrypt_only:
                m.d.sync += running.eq(load_block | (running & ~last_round))
            m.d.sync += output_valid.eq(last_round | (output_valid & ~self.output.ready))
            if decrypt:
                m.d.sync += [
                    storing.eq(last_expansion),
                    idle.eq((idle & ~load_key & ~load_block) | storing |
                            (take_output & ~load_block)),
                    reloading.eq(load_key),
                    expanding.eq(reloading | (expanding & ~last_expansion)),
                    advancing.eq(load_block | reloading | (advancing & ~last)),
                ]
            else:
                # Encrypt-only: a key load is one edge in "Idle".
                if not ice40_encrypt_only:
                    m.d.sync += idle.eq((idle & ~load_block) | (take_output & ~load_block))
                m.d.comb += advancing.eq(running)

        # Copies of the selects with the largest fan-out, each driving a slice of the key bits
        # and the state bits that add them: one net of ~150 loads routes slower than the LUTs
        # it feeds. Each copy keeps its own state in its next value, so synthesis does not
        # merge them back.
        running_copies = [Signal(name=f"running_{i}") for i in range(_COPIES)]
        # With decryption on ECP5, one LUT each from the shared `load_block` (the delay-driven
        # mapper would otherwise rebuild the whole handshake in front of every copy: 8 LUT4s a
        # copy, 96 in all with `advancing`).
        by_hand = decrypt and slice_cells
        if ice40_encrypt_only:
            # `running` is the first copy.
            m.d.comb += running.eq(running_copies[0])
            offered = lut4(m, platform, lambda valid, key_valid, *_: valid and not key_valid,
                           [self.input.valid, self.key.valid], name="offered")
            room = lut4(m, platform, lambda run, out, loaded, ready: (out and ready) or
                        (loaded and not run and not out),
                        [running, output_valid, key_loaded, self.output.ready], name="room")
        for index, copy in enumerate(running_copies):
            if ice40_encrypt_only:
                m.d.sync += copy.eq(lut4(m, platform, lambda o, r, held, end: (o and r) or
                                         (held and not end), [offered, room, copy, last_round],
                                         name=f"running_next_{index}"))
            elif by_hand:
                m.d.sync += copy.eq(lut4(m, platform, lambda start, held, end, _: start or
                                         (held and not end), [load_block, copy, last_round],
                                         name=f"running_next_{index}"))
            else:
                m.d.sync += copy.eq(load_block | (copy & ~last_round))
        if decrypt:
            advancing_copies = [Signal(name=f"advancing_{i}") for i in range(_COPIES)]
            reloading_copies = [Signal(name=f"reloading_{i}") for i in range(_COPIES)]
            from_final = [Signal(name=f"from_final_{i}") for i in range(_COPIES)]
            for index, (advancing_copy, reloading_copy, from_final_copy) in enumerate(zip(
                    advancing_copies, reloading_copies, from_final)):
                if by_hand:
                    m.d.sync += advancing_copy.eq(lut4(
                        m, platform, lambda start, reload, held, end: start or reload or
                        (held and not end), [load_block, reloading, advancing_copy, last],
                        name=f"advancing_next_{index}"))
                else:
                    m.d.sync += advancing_copy.eq(load_block | reloading |
                                                  (advancing_copy & ~last))
                m.d.sync += [
                    # `reloading` lasts one edge, after a key transfer.
                    reloading_copy.eq(load_key & ~reloading_copy),
                ]
                m.d.comb += from_final_copy.eq(self.input.payload.decrypt & ~reloading_copy)
        else:
            advancing_copies = running_copies

        datapath(*rounds())
        schedule_counter()
        handshake()
        return m
