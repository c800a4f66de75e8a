"""A serial PRESENT-80/128 core: one S-box, for the smallest devices."""

from amaranth.hdl import Cat, Module, Mux, Signal

from .base import PRESENTCipher
from .key_schedule import update_key
from .round import p_layer
from .sbox import sbox
from .tables import BLOCK_BITS, KEY_ROTATION, ROUNDS


__all__ = ["SerialPRESENT"]


#: The state takes one S-box step every NIBBLE_BITS edges, when the key ring (one bit per edge)
#: has brought the next round-key nibble under the taps: the 16 steps of a pass are on frame
#: cycles 0, 4, ..., 60.
NIBBLE_BITS = 4
_STEPS = BLOCK_BITS // NIBBLE_BITS
_LAST_STEP = NIBBLE_BITS * (_STEPS - 1)
#: Frame cycles of the permutation steps, after the pass (decryption does two: P^-1 = P o P).
_PERMUTE = (_LAST_STEP + 1, _LAST_STEP + 2)
#: Bits of the loaded key per token flip-flop of the key copy (a power of two, at least 2; see
#: the class docstring).
TOKEN_BITS = 4


def _ring_rotation(amount: int, key_bits: int) -> int:
    # Edges the key ring turns in one frame: `amount` (mod key_bits) brings the next key
    # register under the same physical bits, and a frame needs at least the 61 edges of a pass.
    edges = amount % key_bits
    while edges <= _LAST_STEP:
        edges += key_bits
    return edges


class SerialPRESENT(PRESENTCipher):
    """PRESENT-80/128 (Bogdanov et al., CHES 2007) with one S-box: a 4-bit datapath, the key
    schedule one bit per clock, for the smallest devices. Encrypts and decrypts, each block
    choosing its direction (or encrypt-only).

    Where the bits live:

    * The state is a 64-bit shift register of 16 nibbles. An S-box *step* takes nibble w0
      through the S-box with its round-key nibble and shifts the result in as w15; 16 steps are a
      pass over the whole state. The pLayer is wiring: a *permute* step loads the register with
      ``pLayer(state) ^ A`` in one edge, where ``A`` holds a new block until that block's first
      step and zero after it, so the same multiplexer loads blocks. Decryption permutes twice
      (``pLayer^-1 = pLayer o pLayer``).
    * The key register is a ring turning one bit per edge (no multiplexer on most bits), whose
      bits ``key_bits - 64 .. key_bits - 61`` are the taps the S-box step reads. A *frame* is
      one key register's time in the ring: the round-key nibble n is under the taps on frame cycle
      4n. The rotation by 61 of the key schedule is the ring turning: 99 edges a frame forwards
      (80-bit keys) or 67 (128-bit), 61 backwards; the S-box and counter of the update are applied
      to the few bits concerned on the edge the rotation completes. Every frame lasts
      :attr:`frame_cycles` edges, the ring standing still for the rest when it turned less.
    * The loaded key stays in a register, and (with ``decrypt``) the final key register, derived
      once per key load by running the schedule forward, in a second ring. At the start of each
      block the start of the block's schedule is copied into the working ring, one bit per edge:
      the loaded key through a one-hot selection (a token shift register of K/4 flip-flops marks
      the group of four key bits being copied; one LUT per pair of bits gates the pair by its
      token; the pairs are ORed), the final key from its ring. On iCE40 UP5K (PRESENT-80) this
      took 20 flip-flops and about 15 LUT4 fewer than a binary 1-of-K multiplexer; with a token
      per pair of bits (40 flip-flops) 4 LUT4 fewer still. A ring loaded in parallel would take
      a LUT per bit.
    * The key schedule's round counter counts up in both directions: decrypting, its complement
      gives 31, 30, ..., 0.

    Parameters
    ----------
    key_bits : :class:`int`
        80 (PRESENT-80) or 128 (PRESENT-128).
    decrypt : :class:`bool`
        With ``False`` the decryption path and the final-key ring are left out: every block is
        encrypted (the ``decrypt`` field of ``input.payload`` is ignored), and a key load is a
        single edge.

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        Loads a key: the integer k79..k0 (k127..k0), k0 the least significant bit. ``key.ready``
        is high only when the core is idle (no block, no result waiting, no key being derived).
    input : ``In(stream.Signature(BlockRequest(64)))``
        One block, the integer b63..b0 (b0 the least significant bit), and its direction
        (``decrypt``: 0 to encrypt, 1 to decrypt). ``input.ready`` stays low until the first key
        has been loaded and while ``key.valid`` is high.
    output : ``Out(stream.Signature(unsigned(64)))``
        The result of each block, b63..b0, in order; its payload is the state register.

    Cycle counts
    ------------
    In clock edges, with ``output.ready`` held high, F = :attr:`frame_cycles` and K = key_bits:

    * latency: the block's key ring is copied (K edges), then 31 frames each with a pass and the
      permutation, then the pass of the last AddRoundKey (61 edges), and the result transfers on
      the edge after: ``K + 31 F + 62``.
    * initiation interval: the same; the next block transfers on the edge where the previous
      result transfers out.
    * key load: 1 without ``decrypt``; with it, ``2 K + 31 F + 1``: copy the key into the
      working ring, 31 frames of the schedule, copy the final key register out.

    ===========  =====  =======  ===================  ==========================
    key_bits     F      latency  initiation interval  key load (decrypt=False)
    ===========  =====  =======  ===================  ==========================
    80           99     3211     3211                 3230 (1)
    128          67     2267     2267                 2334 (1)
    ===========  =====  =======  ===================  ==========================

    The figures are the same for both directions and for all keys and data.

    Reset
    -----
    A reset at any time leaves an idle core with no key loaded and no output pending.
    """
    @property
    def forward_rotation(self) -> int:
        """Edges the key ring turns in a frame of the forward schedule."""
        return _ring_rotation(-KEY_ROTATION, self._key_bits)

    @property
    def backward_rotation(self) -> int:
        """Edges the key ring turns in a frame of the backward schedule."""
        return _ring_rotation(KEY_ROTATION, self._key_bits)

    @property
    def frame_cycles(self) -> int:
        """Edges of a frame: one round (or the key schedule step) in either direction."""
        return max(self.forward_rotation, self.backward_rotation, _PERMUTE[-1] + 1)

    @property
    def latency(self) -> int:
        """Edges from a block's input transfer to its output transfer, with ``output.ready``
        high."""
        return self._key_bits + ROUNDS * self.frame_cycles + _LAST_STEP + 2

    @property
    def initiation_interval(self) -> int:
        """Edges between the input transfers of back-to-back blocks (and between their results)."""
        return self.latency

    @property
    def key_load_cycles(self) -> int:
        """Edges from a key transfer to the first edge at which a block can transfer."""
        if not self._decrypt:
            return 1
        return 2 * self._key_bits + ROUNDS * self.frame_cycles + 1

    def elaborate(self, platform):
        m = Module()
        key_bits = self._key_bits
        frame = self.frame_cycles
        taps = key_bits - BLOCK_BITS

        # Datapath registers have no reset: the control says what they hold.
        state = Signal(BLOCK_BITS, reset_less=True)     # b63..b0, nibble w0 in the low bits
        block = Signal(BLOCK_BITS, reset_less=True)     # A: a new block until it enters state
        ring = Signal(key_bits, reset_less=True)        # the working key register, turning
        first_key = Signal(key_bits, reset_less=True)   # the loaded key
        final_key = Signal(key_bits, reset_less=True)   # the key register after 31 updates

        key_loaded = Signal()
        decrypting = Signal()                           # direction of the block in the core
        cycle = Signal(range(max(frame, key_bits)))
        # The key schedule's round counter is `frames`, which only counts up, complemented when
        # decrypting: 31, 30, ..., 0 is ~0, ~1, ..., ~31 (no up/down counter).
        frames = Signal(5)
        counter = Signal(5)
        if self._decrypt:
            m.d.comb += counter.eq(frames ^ decrypting.replicate(5))
        else:
            m.d.comb += counter.eq(frames)

        load_key = Signal()
        load_block = Signal()
        m.d.comb += [
            load_key.eq(self.key.valid & self.key.ready),
            load_block.eq(self.input.valid & self.input.ready),
            self.output.payload.eq(state),
        ]
        with m.If(load_key):
            m.d.sync += key_loaded.eq(1)
        if self._decrypt:
            with m.If(load_block):
                m.d.sync += decrypting.eq(self.input.payload.decrypt)

        # The S-box step: nibble w0 with the round-key nibble under the taps, into w15.
        head = state[:NIBBLE_BITS]
        round_key = ring[taps:taps + NIBBLE_BITS]
        bypass = Signal()           # the pass of the lone AddRoundKey (K32 first or last)
        tail = Signal(NIBBLE_BITS)
        if self._decrypt:
            # The lone AddRoundKey with K32 (decrypting, the first frame, counter 31; encrypting,
            # the last, counter 0) is at frames == 0 in both directions.
            m.d.comb += bypass.eq(frames == 0)
            with m.If(bypass):
                m.d.comb += tail.eq(head ^ round_key)
            with m.Elif(decrypting):
                m.d.comb += tail.eq(sbox(head, inverse=True) ^ round_key)
            with m.Else():
                m.d.comb += tail.eq(sbox(head ^ round_key))
        else:
            m.d.comb += bypass.eq(counter == 0)
            m.d.comb += tail.eq(Mux(bypass, head ^ round_key, sbox(head ^ round_key)))

        # What the registers do on this edge, set by the state machine below.
        step = Signal()             # an S-box step of the state
        permute = Signal()          # state <- pLayer(state) ^ A
        clear_block = Signal()      # A <- 0 (after its block entered the state)
        turn = Signal()             # the working ring turns one bit
        update = Signal()           # ... and completes a key schedule update on this edge
        copy = Signal()             # ... taking the bit from the block's start-of-schedule ring
        store = Signal()            # the final-key ring takes the working ring's bits

        # `load_block` clears the state so that the first permute step loads A.
        with m.If(load_block):
            m.d.sync += state.eq(0)
        with m.Elif(permute):
            m.d.sync += state.eq(p_layer(state) ^ block)
        with m.Elif(step):
            m.d.sync += state.eq(Cat(state[NIBBLE_BITS:], tail))
        with m.If(clear_block):
            m.d.sync += block.eq(0)
        with m.Elif(load_block):
            m.d.sync += block.eq(self.input.payload.block)

        # The ring turns towards bit 0; bit 0 comes back in at the top (or the copied bit does).
        turned = ring.rotate_right(1)
        forward = update_key(turned.rotate_right(KEY_ROTATION), counter, key_bits)
        backward = update_key(turned.rotate_left(KEY_ROTATION), counter, key_bits, inverse=True)
        # During a copy `cycle` counts the bits: the ring's top takes bit `cycle` of the loaded
        # key, which the K edges of the copy bring down to bit `cycle`. That bit is picked
        # without a binary multiplexer: a one-hot token (a shift register, which needs no logic
        # on iCE40) marks the group of TOKEN_BITS bits that `cycle` is in, each LUT gates a pair
        # of a group's bits chosen by cycle[0], and the pairs of one rank in every group are
        # ORed, the rank chosen by the next bits of `cycle`.
        groups = key_bits // TOKEN_BITS
        token = Signal(groups, reset_less=True)
        with m.If(~copy):
            m.d.sync += token.eq(1)
        with m.Elif(cycle[:TOKEN_BITS.bit_length() - 1] == TOKEN_BITS - 1):
            m.d.sync += token.eq(token.rotate_left(1))
        ranks = []
        for rank in range(TOKEN_BITS // 2):
            bits = [TOKEN_BITS * group + 2 * rank for group in range(groups)]
            ranks.append(Cat(token[group] & Mux(cycle[0], first_key[bit + 1], first_key[bit])
                             for group, bit in enumerate(bits)).any())
        rank_bits = (TOKEN_BITS // 2 - 1).bit_length()
        loaded_bit = Cat(ranks).bit_select(cycle[1:1 + rank_bits], 1) if rank_bits else ranks[0]
        source = Mux(decrypting, final_key[0], loaded_bit) if self._decrypt else loaded_bit
        with m.If(copy):
            m.d.sync += ring.eq(Cat(ring[1:], source))
        with m.Elif(update):
            m.d.sync += ring.eq(Mux(decrypting, backward, forward) if self._decrypt else forward)
        with m.Elif(turn):
            m.d.sync += ring.eq(turned)
        # The final-key ring turns once around while it is copied from (or into): it keeps its
        # alignment.
        with m.If(load_key):
            m.d.sync += first_key.eq(self.key.payload)
        if self._decrypt:
            with m.If(store):
                m.d.sync += final_key.eq(Cat(final_key[1:], ring[0]))
            with m.Elif(copy & decrypting):
                m.d.sync += final_key.eq(final_key.rotate_right(1))

        def frame_edges(rotation):
            # The ring turns on the first `rotation` edges of a frame and completes the update
            # on the last of them.
            m.d.comb += [
                turn.eq(1 if rotation == frame else cycle < rotation),
                update.eq(cycle == rotation - 1),
            ]

        with m.FSM():
            with m.State("Idle"):
                m.d.comb += [
                    self.key.ready.eq(1),
                    self.input.ready.eq(key_loaded & ~self.key.valid),
                ]
                # `cycle` is cleared on every edge here and in "Output", not on the transfers:
                # that keeps the streams' handshake out of the counter's clock enable.
                m.d.sync += cycle.eq(0)
                if self._decrypt:
                    with m.If(self.key.valid):
                        m.d.sync += decrypting.eq(0)
                        m.next = "Load key"
                with m.If(load_block):
                    m.next = "Copy key"

            if self._decrypt:
                with m.State("Load key"):
                    # The loaded key into the working ring, for the forward schedule.
                    m.d.comb += copy.eq(1)
                    m.d.sync += cycle.eq(cycle + 1)
                    with m.If(cycle == key_bits - 1):
                        m.d.sync += [cycle.eq(0), frames.eq(1)]
                        m.next = "Expand key"

                with m.State("Expand key"):
                    # 31 frames of the forward schedule, leaving the final key register.
                    frame_edges(self.forward_rotation)
                    m.d.sync += cycle.eq(cycle + 1)
                    with m.If(cycle == frame - 1):
                        m.d.sync += [cycle.eq(0), frames.eq(frames + 1)]
                        with m.If(counter == ROUNDS):
                            m.next = "Store key"

                with m.State("Store key"):
                    m.d.comb += [store.eq(1), turn.eq(1)]
                    m.d.sync += cycle.eq(cycle + 1)
                    with m.If(cycle == key_bits - 1):
                        m.next = "Idle"

            with m.State("Copy key"):
                # The block's start of the schedule into the working ring; meanwhile the block
                # enters the state on the first edge.
                m.d.comb += [
                    copy.eq(1),
                    permute.eq(cycle == 0),
                    clear_block.eq(cycle == 0),
                ]
                m.d.sync += cycle.eq(cycle + 1)
                with m.If(cycle == key_bits - 1):
                    m.d.sync += [cycle.eq(0), frames.eq(~decrypting)]
                    m.next = "Round"

            with m.State("Round"):
                # Frames of K1..K32 (encrypting) or K32..K1 (decrypting); the counter is 0 in
                # the last one, which ends after its pass.
                m.d.comb += step.eq((cycle[:2] == 0) & (cycle <= _LAST_STEP))
                with m.If(counter != 0):
                    m.d.comb += permute.eq((cycle == _PERMUTE[0]) |
                                           (decrypting & (cycle == _PERMUTE[1])))
                if self._decrypt:
                    with m.If(decrypting):
                        frame_edges(self.backward_rotation)
                    with m.Else():
                        frame_edges(self.forward_rotation)
                else:
                    frame_edges(self.forward_rotation)
                m.d.sync += cycle.eq(cycle + 1)
                with m.If(cycle == frame - 1):
                    m.d.sync += [
                        cycle.eq(0),
                        frames.eq(frames + 1),
                    ]
                with m.If((counter == 0) & (cycle == _LAST_STEP)):
                    m.next = "Output"

            with m.State("Output"):
                # The result leaves on an edge where output.ready is high, and the next block
                # can enter on that same edge. A key waits for "Idle".
                m.d.comb += [
                    self.output.valid.eq(1),
                    self.input.ready.eq(self.output.ready & ~self.key.valid),
                ]
                m.d.sync += cycle.eq(0)
                with m.If(self.output.ready):
                    m.next = "Idle"
                with m.If(load_block):
                    m.next = "Copy key"

        return m
