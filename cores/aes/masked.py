"""A first-order masked AES core: two shares everywhere, DOM S-boxes, the key schedule on the fly.

See :class:`MaskedAES`.
"""

from amaranth.hdl import Cat, Module, Mux, Signal

from .base import AESCipher
from .key_schedule import _join_words, _split_words, _step_layouts, _step_words, key_step_plan
from .masked_sbox import RANDOM_SLICES, MaskedSBox
from .masked_sbox import STAGES as SBOX_STAGES
from .reference import check_key_bits
from .round import join_bytes, mix_columns, shift_rows, state_bytes
from .transforms import KEY_WORDS


__all__ = ["STAGES", "STATE_SBOXES", "KEY_SBOXES", "SBOX_SLICE_BITS", "masked_random_bits",
           "MaskedAES"]


#: Cycles per round: the five register stages of :class:`~.masked_sbox.MaskedSBox`, then the
#: state (and key) register.
STAGES = SBOX_STAGES + 1
#: S-boxes on the state (the whole block at once) and on the key schedule (one word).
STATE_SBOXES, KEY_SBOXES = 16, 4
#: Fresh bits each S-box takes per cycle: one stage loads per cycle, and the widest (stage 4)
#: takes 8.
SBOX_SLICE_BITS = max(width for _, width in RANDOM_SLICES)


def masked_random_bits(key_bits: int) -> int:
    """Width of :class:`MaskedAES`'s ``random`` stream: 8 bits for each of the 20 S-boxes, or the
    key width if wider (a key is split into shares with one transfer)."""
    return max((STATE_SBOXES + KEY_SBOXES) * SBOX_SLICE_BITS, check_key_bits(key_bits))


class MaskedAES(AESCipher):
    """AES encryption (FIPS-197) masked at first order with two shares, for 128-, 192- and 256-bit
    keys.

    Source and model
    ----------------
    The S-boxes are the DOM-indep first-order AES S-box of Gross, Mangard and Korak (TIS 2016,
    CT-RSA 2017), :class:`~cipher_cores.cores.aes.masked_sbox.MaskedSBox`: 16 on the state and 4
    on the key schedule's SubWord. A key is split into two shares on its transfer
    (``k0 = key ^ r``, ``k1 = r``), a block on its transfer (``s0 = block ^ r ^ k0``,
    ``s1 = r ^ k1``), with bits of the ``random`` stream; ShiftRows, MixColumns, AddRoundKey,
    RotWord, Rcon and the key schedule's XORs act on each share alone. The shares meet only at
    the output, and no intermediate state is ever recombined, not even in logic: the last round
    also writes its shares into two output registers, zero at every other time, and the output is
    their XOR. No register holds an unmasked value other than the control.

    What is claimed: first-order security in the glitch-robust probing model of the DOM papers,
    by their construction (each cross-domain product remasked with fresh bits and registered
    before it meets another term; the S-box stages load on separate edges, each with its own
    fresh bits), if the ``random`` stream is uniform and fresh. What is not: a proof for this
    netlist (the leakage test measures it), higher orders (two shares are broken by a
    second-order attack), transition leakage between the unrelated values a register holds in
    successive blocks, the key shares being re-randomized between blocks (they are split once,
    on the key transfer), and faults. With all-zero randomness the core computes the right
    result, unprotected.

    Architecture and cycles
    -----------------------
    A round takes :data:`STAGES` = 6 cycles: the five S-box stages load one per edge, then the state
    register takes ``MixColumns(ShiftRows(S)) ^ round key`` (no MixColumns in the last round) and
    the key window (as in :mod:`~cipher_cores.cores.aes.key_schedule`: Nk words, round key ``r``
    its first four after step ``r``) takes its next step, whose one transformed word went through
    the four key S-boxes in the same six cycles. A second, stored copy of the key's shares
    restarts the window for each block.

    * ``latency`` = ``initiation_interval`` = 6 Nr + 1 (61, 73, 85 cycles for 128, 192, 256-bit
      keys): blocks overlap the output of the previous one.
    * ``key_load_cycles`` = 1.
    * The core takes a ``random`` transfer on each key transfer, each block transfer and each
      round cycle, and waits (no key, block or stage advances) while ``random.valid`` is low; the
      figures hold with ``random.valid`` high.
    * Random bits per block: 6 Nr + 1 transfers of :func:`masked_random_bits` bits (160, 192,
      256); of them the block's split uses 128, and each round uses 20 x 18 = 360 (each S-box
      stage 1 to 4 reads its own slice, 4, 2, 4 and 8 bits, of its S-box's 8-bit field of the
      transfer on its edge): 128 + 360 Nr in all (3,728 for AES-128). A key transfer uses
      ``key_bits`` bits.

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    decrypt : :class:`bool`
        Must be ``False``: the core encrypts every block, whatever its ``decrypt`` bit says.

    Members
    -------
    key, input, output : as in :class:`~cipher_cores.cores.interface.BlockCipherSignature`
    random : ``In(stream.Signature(unsigned(masked_random_bits(key_bits))))``
        Fresh random bits. S-box ``j`` (0..15 on state byte ``j``, 16..19 on the key word's bytes)
        takes bits ``[8j, 8j+8)``; splits take the low 128 (block) or ``key_bits`` (key) bits.

    Byte order: blocks and keys are ``int.from_bytes(fips197_bytes, "big")``, as everywhere in
    the library. A reset leaves the core idle with no key loaded.
    """
    def __init__(self, key_bits: int = 128, *, decrypt: bool = False):
        if not isinstance(decrypt, bool):
            raise TypeError(f"decrypt must be a bool (True or False), not {decrypt!r}")
        if decrypt:
            raise ValueError("decrypt must be False: MaskedAES encrypts only, not True")
        super().__init__(key_bits, decrypt=False, random_bits=masked_random_bits(key_bits))

    @property
    def latency(self) -> int:
        return STAGES * self.rounds + 1

    @property
    def initiation_interval(self) -> int:
        return STAGES * self.rounds + 1

    @property
    def key_load_cycles(self) -> int:
        return 1

    def elaborate(self, platform):
        m = Module()
        key_bits, nr, nk = self._key_bits, self.rounds, KEY_WORDS[self._key_bits]
        plans = key_step_plan(key_bits)
        layouts = _step_layouts(plans)
        shares = range(2)

        state = [Signal(128, name=f"state{i}") for i in shares]
        key_store = [Signal(key_bits, name=f"key{i}") for i in shares]
        window = [Signal(key_bits, name=f"window{i}") for i in shares]
        round_ = Signal(range(1, nr + 1))
        cycle = Signal(range(STAGES))
        key_loaded = Signal()

        key_ready, input_ready, running = Signal(), Signal(), Signal()
        load_key = self.key.valid & self.key.ready
        load_block = self.input.valid & self.input.ready
        advance = running & self.random.valid
        finish_round = advance & (cycle == STAGES - 1)
        m.d.comb += [
            self.key.ready.eq(key_ready & self.random.valid),
            self.input.ready.eq(input_ready & self.random.valid),
            self.random.ready.eq(running | (self.key.valid & key_ready)
                                 | (self.input.valid & input_ready)),
        ]

        def control():
            with m.FSM():
                with m.State("Idle"):
                    m.d.comb += [key_ready.eq(1), input_ready.eq(key_loaded & ~self.key.valid)]
                    with m.If(load_block):
                        m.next = "Round"
                with m.State("Round"):
                    m.d.comb += running.eq(1)
                    with m.If(finish_round & (round_ == nr)):
                        m.next = "Output"
                with m.State("Output"):
                    m.d.comb += [
                        self.output.valid.eq(1),
                        input_ready.eq(self.output.ready & ~self.key.valid),
                    ]
                    with m.If(self.output.ready):
                        m.next = "Idle"
                    with m.If(load_block):
                        m.next = "Round"
            with m.If(load_key):
                m.d.sync += key_loaded.eq(1)
            with m.If(load_block):
                m.d.sync += [round_.eq(1), cycle.eq(0)]
            with m.Elif(advance):
                m.d.sync += cycle.eq(Mux(cycle == STAGES - 1, 0, cycle + 1))
                with m.If(finish_round & (round_ != nr)):
                    m.d.sync += round_.eq(round_ + 1)

        def sboxes(name, count, first, inputs):
            """``count`` masked S-boxes on the bytes of the two shares ``inputs``; their output
            shares (byte ``j`` of each from S-box ``j``)."""
            stage_load = Signal(SBOX_STAGES, name=f"{name}_stage_load")
            m.d.comb += stage_load.eq(Mux(advance, 1 << cycle, 0))
            outputs = [[], []]
            for j in range(count):
                sbox = m.submodules[f"{name}_sbox{j}"] = MaskedSBox()
                fresh = self.random.payload[SBOX_SLICE_BITS * (first + j):][:SBOX_SLICE_BITS]
                m.d.comb += [
                    sbox.i0.eq(inputs[0][j]),
                    sbox.i1.eq(inputs[1][j]),
                    sbox.advance.eq(stage_load),
                    sbox.random.eq(Cat(*(fresh[:width] for _, width in RANDOM_SLICES))),
                ]
                outputs[0].append(sbox.o0)
                outputs[1].append(sbox.o1)
            return outputs

        def key_step():
            """The key window's next step (per share) and the round key it starts with."""
            layout_index = Signal(range(len(layouts)))
            rcon_word = Signal(32)
            with m.Switch(round_):
                for step, plan in enumerate(plans, start=1):
                    with m.Case(step):
                        m.d.comb += [
                            layout_index.eq(layouts.index((plan.position, plan.kind))),
                            rcon_word.eq(plan.rcon_word),
                        ]
            transformed = [Signal(32, name=f"sub_word{i}") for i in shares]
            sub_inputs, next_windows = [[], []], [[], []]
            for i in shares:
                words = _split_words(window[i], nk)
                added = transformed[i] ^ (rcon_word if i == 0 else 0)
                for layout in layouts:
                    sub_input, new_words = _step_words(words, layout, False, added)
                    sub_inputs[i].append(words[-1] if sub_input is None else sub_input)
                    next_windows[i].append(_join_words(new_words))
            chosen = [Signal(32, name=f"sub_input{i}") for i in shares]
            nexts = [Signal(key_bits, name=f"next_window{i}") for i in shares]
            with m.Switch(layout_index):
                for index in range(len(layouts)):
                    with m.Case(index):
                        m.d.comb += [chosen[i].eq(sub_inputs[i][index]) for i in shares]
                        m.d.comb += [nexts[i].eq(next_windows[i][index]) for i in shares]
            out = sboxes("key", KEY_SBOXES, STATE_SBOXES,
                         [[chosen[i][8 * b:8 * b + 8] for b in range(4)] for i in shares])
            m.d.comb += [transformed[i].eq(Cat(*out[i])) for i in shares]
            return nexts, [nexts[i][-128:] for i in shares]

        def rounds(round_keys):
            out = sboxes("state", STATE_SBOXES, 0, [state_bytes(state[i]) for i in shares])
            results = []
            for i in shares:
                shifted = shift_rows(join_bytes(out[i]))
                mixed = Mux(round_ == nr, shifted, mix_columns(shifted))
                results.append(mixed ^ round_keys[i])
            return results

        control()
        next_windows, round_keys = key_step()
        next_states = rounds(round_keys)

        split = self.random.payload
        with m.If(load_key):
            m.d.sync += [
                key_store[0].eq(self.key.payload ^ split[:key_bits]),
                key_store[1].eq(split[:key_bits]),
            ]
        with m.If(load_block):
            block = self.input.payload.block
            m.d.sync += [
                state[0].eq(block ^ split[:128] ^ key_store[0][-128:]),
                state[1].eq(split[:128] ^ key_store[1][-128:]),
                window[0].eq(key_store[0]),
                window[1].eq(key_store[1]),
            ]
        with m.Elif(finish_round):
            m.d.sync += [state[i].eq(next_states[i]) for i in shares]
            m.d.sync += [window[i].eq(next_windows[i]) for i in shares]

        # The shares meet only here, in registers that hold zero unless the result is offered.
        result = [Signal(128, name=f"result{i}") for i in shares]
        with m.If(finish_round & (round_ == nr)):
            m.d.sync += [result[i].eq(next_states[i]) for i in shares]
        with m.Elif(self.output.valid & self.output.ready):
            m.d.sync += [result[i].eq(0) for i in shares]
        m.d.comb += self.output.payload.eq(result[0] ^ result[1])
        return m
