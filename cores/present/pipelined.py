"""A pipelined PRESENT-80/128 core: 31 rounds unrolled, one block per clock."""

from amaranth.hdl import C, Cat, Module, Mux, Signal

from .base import PRESENTCipher
from .key_schedule import round_key, update_key
from .round import p_layer, s_layer
from .tables import BLOCK_BITS, COUNTER_BITS, ROUNDS


__all__ = ["PipelinedPRESENT"]


#: Key schedule registers sit at every KEY_SPACING-th stage; the stages between take their round
#: key from the register before them through at most KEY_SPACING - 1 updates. Two updates in a
#: row are still one LUT level (the second update's S-box reads bits the first one only
#: rotated and added a constant to), so the round keys cost no extra depth, and this halves the
#: ~2,500 key flip-flops of one register per stage, which is what makes the core fit an iCE40
#: HX8K.
KEY_SPACING = 2


class PipelinedPRESENT(PRESENTCipher):
    """PRESENT-80/128 (Bogdanov et al., CHES 2007) with the 31 rounds unrolled and a register
    after each: a new block can enter on every clock edge.

    Pipeline: stage 0 registers the block with the first AddRoundKey; stage r (1..31) registers
    round r, ``pLayer(sBoxLayer(x)) ^ K(r+1)``, so stage 31 holds the ciphertext. Each stage is
    two LUT levels (an S-box output bit, then the round-key XOR). A ``valid`` bit travels with each
    block. Stage 31 is the output register, with a spare register beside it: stages 0..30 move
    on one clock enable, ``run``, which is itself a register, set while the two output registers
    hold at most one result between them. When ``output.ready`` goes low with a result waiting,
    the block leaving stage 30 on that edge goes to the spare register and the pipe stands still
    from the next edge on, until the consumer takes a result; so no block is lost or duplicated,
    and no path runs from ``output.ready`` to the ~2,000 enables of the pipe (which, as one
    combinational enable, was the critical path on ECP5).

    Round keys are derived in the pipe beside the data, never stored as a table: the key registers
    form a chain along the stages, each computing :data:`KEY_SPACING` key-schedule updates from
    the one before on every clock, starting from the loaded key. The chain settles one register per
    clock after a key load, always ahead of the first block, which walks one stage per clock.
    With ``decrypt``, a second chain runs the schedule backwards from the final key register
    (K32 on top), derived by the first chain, and each block picks its direction.

    **A key change waits for the blocks in flight**: the round keys are those of the chain,
    shared by every block in the pipe, so ``key.ready`` is high only when the pipe is empty, and
    while ``key.valid`` is high no block enters (the pipe drains, then the key loads).

    Parameters
    ----------
    key_bits : :class:`int`
        80 (PRESENT-80) or 128 (PRESENT-128).
    decrypt : :class:`bool`
        With ``False`` (encrypt-only, e.g. for CTR mode) every block is encrypted and the
        ``decrypt`` field of ``input.payload`` is ignored. With ``True`` each stage has both the
        encryption and decryption round (about 2.5 times the logic: for large devices).

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        Loads a key: the integer k79..k0 (k127..k0), k0 the least significant bit. ``key.ready``
        is high when no block is in the pipe and no result is waiting.
    input : ``In(stream.Signature(BlockRequest(64)))``
        One block, the integer b63..b0 (b0 the least significant bit), and its direction
        (``decrypt``: 0 to encrypt, 1 to decrypt). ``input.ready`` is low until the first key
        has been loaded (and the key chains have settled, with ``decrypt``), while ``key.valid``
        is high, and while the pipe is stalled.
    output : ``Out(stream.Signature(unsigned(64)))``
        The results b63..b0, in order; the payload is the last stage's register.

    Cycle counts
    ------------
    In clock edges, with ``output.ready`` held high:

    ========================  =====================  ======================
    figure                    ``decrypt=False``      ``decrypt=True``
    ========================  =====================  ======================
    latency                   32                     32
    initiation interval       1                      1
    key load                  2                      18
    ========================  =====================  ======================

    * latency (:attr:`latency`): from the edge where a block transfers in to the edge where its
      result transfers out (32 register stages).
    * initiation interval (:attr:`initiation_interval`): 1; a block can transfer on every edge.
    * key load (:attr:`key_load_cycles`): from the key transfer to the first edge a block can
      transfer: the key is captured on the transfer edge and loaded on the next (2 edges). With
      ``decrypt`` the final key register must then come out of the forward chain (one edge per
      register, ``ceil(30 / KEY_SPACING)`` of them) and enter the backward one (one more edge).
      A key transfers at the earliest one edge after the last result of the previous key left.

    The figures are the same for both key sizes, both directions and all data and keys.

    Reset
    -----
    A reset at any time leaves an empty pipe with no key loaded; blocks in flight are dropped.
    """
    @property
    def stages(self) -> int:
        """Register stages a block goes through: the input stage and one per round."""
        return ROUNDS + 1

    @property
    def latency(self) -> int:
        """Edges from a block's input transfer to its output transfer, with ``output.ready``
        high."""
        return self.stages

    @property
    def initiation_interval(self) -> int:
        """Edges between the input transfers of back-to-back blocks."""
        return 1

    @property
    def key_load_cycles(self) -> int:
        """Edges from a key transfer to the first edge at which a block can transfer."""
        # The key goes through a capture register first (see `elaborate`).
        if not self._decrypt:
            return 2
        return 2 + len(self._forward_registers()) + 1

    @staticmethod
    def _forward_registers() -> list:
        # Indices i of the round keys K(i) held in forward-chain registers after the loaded
        # key (K1): K(1 + KEY_SPACING), K(1 + 2 * KEY_SPACING), ... up to K31.
        return list(range(1 + KEY_SPACING, ROUNDS + 1, KEY_SPACING))

    @staticmethod
    def _backward_registers() -> list:
        # Indices of the round keys held in the backward chain: K32, K(32 - KEY_SPACING), ...
        # down to K2.
        return list(range(ROUNDS + 1, 1, -KEY_SPACING))

    def elaborate(self, platform):
        m = Module()
        key_bits = self._key_bits

        # Handshake. `valid[r]` says stage r (0..30) holds a block; stages 0..30 move one step
        # on every edge where `run` is high. Stage 31 is the output register `head` and `spare`
        # is the register beside it (see the class docstring).
        valid = Signal(self.stages - 1)
        head_valid = Signal()
        spare_valid = Signal()
        run = Signal(init=1)
        key_loaded = Signal()
        load_key = Signal()
        load_block = Signal()
        incoming = Signal()         # a block leaves stage 30 on this edge
        head_free = Signal()        # the head register takes a new value on this edge
        head_valid_next = Signal()
        spare_valid_next = Signal()
        # `empty`: no block in any stage or output register, registered (as a wide NOR in front
        # of the key register's clock enable it was the critical path).
        empty = Signal(init=1)
        m.d.comb += [
            incoming.eq(run & valid[-1]),
            head_free.eq(~head_valid | self.output.ready),
            head_valid_next.eq(Mux(head_free, spare_valid | incoming, 1)),
            spare_valid_next.eq(Mux(head_free, spare_valid & incoming,
                                    spare_valid | incoming)),
            self.output.valid.eq(head_valid),
            self.key.ready.eq(empty),
            load_key.eq(self.key.valid & self.key.ready),
        ]
        # `keep`: left to itself, the LUT mapper puts the handshake terms at the bottom of the
        # NOR's tree, and they were the critical path.
        inner_empty = Signal(attrs={"keep": 1})
        m.d.comb += inner_empty.eq(valid[:-1] == 0)
        # Both output registers empty after this edge, written out from the registers rather
        # than from `head_free`: that net drives the 128 enables of the output registers, and
        # routed across them to `empty` it was the critical path.
        drained = Signal(attrs={"keep": 1})
        m.d.comb += drained.eq(~spare_valid & ~valid[-1] & (~head_valid | self.output.ready))
        with m.If(run):
            m.d.sync += valid.eq(Cat(load_block, valid[:-1]))
        m.d.sync += [
            head_valid.eq(head_valid_next),
            spare_valid.eq(spare_valid_next),
            run.eq(~(head_valid_next & spare_valid_next)),
            # A stalled pipe (`run` low) is never empty: both output registers hold a result.
            empty.eq(run & ~load_block & inner_empty & drained),
        ]
        # Counts the edges after a key load until the key (and with `decrypt`, the backward
        # chain) is in place for the first block.
        settled = Signal()
        settle = Signal(range(self.key_load_cycles), init=0)
        with m.If(load_key):
            m.d.sync += settle.eq(self.key_load_cycles - 1)
        with m.Elif(settle != 0):
            m.d.sync += settle.eq(settle - 1)
        m.d.comb += settled.eq(settle == 0)
        m.d.comb += [
            self.input.ready.eq(run & key_loaded & settled & ~self.key.valid),
            load_block.eq(self.input.valid & self.input.ready),
        ]
        with m.If(load_key):
            m.d.sync += key_loaded.eq(1)

        # The forward key chain: `forward[i]` is K(i) for every i in 1..32, a register or a few
        # updates of one. The registers change on every edge (no enable): they only ever hold
        # what the loaded key makes of them, so a block never sees anything else once the chain
        # has settled ahead of it.
        # The payload is captured on every edge, and copied into `loaded_key` on the edge after
        # a key transfer: the enable of those 80 (128) flip-flops is then a register, not the
        # producer's `key.valid` through a LUT and across the chip to a global buffer, which
        # was the critical path.
        captured_key = Signal(key_bits, reset_less=True)
        key_captured = Signal()
        loaded_key = Signal(key_bits, reset_less=True)
        m.d.sync += [
            captured_key.eq(self.key.payload),
            key_captured.eq(load_key),
        ]
        with m.If(key_captured):
            m.d.sync += loaded_key.eq(captured_key)
        forward = {1: loaded_key}
        for i in range(2, ROUNDS + 2):
            key = Signal(key_bits, name=f"forward_k{i}")
            m.d.comb += key.eq(update_key(forward[i - 1], C(i - 1, COUNTER_BITS), key_bits))
            if i in self._forward_registers():
                register = Signal(key_bits, name=f"forward_k{i}_reg", reset_less=True)
                m.d.sync += register.eq(key)
                key = register
            forward[i] = key

        # The backward chain, from the final key register, for decryption.
        backward = {}
        if self._decrypt:
            for i in range(ROUNDS + 1, 0, -1):
                if i == ROUNDS + 1:
                    key = forward[i]
                else:
                    key = Signal(key_bits, name=f"backward_k{i}")
                    m.d.comb += key.eq(update_key(backward[i + 1], C(i, COUNTER_BITS), key_bits,
                                                  inverse=True))
                if i in self._backward_registers():
                    register = Signal(key_bits, name=f"backward_k{i}_reg", reset_less=True)
                    m.d.sync += register.eq(key)
                    key = register
                backward[i] = key

        # The data stages. The datapath registers have no reset: only `valid` says what they
        # hold, and a reset on ~2,000 flip-flops would only cost routing.
        decrypting = Signal(self.stages)
        states = [Signal(BLOCK_BITS, name=f"stage_{r}", reset_less=True)
                  for r in range(self.stages)]
        block = self.input.payload.block
        if self._decrypt:
            direction = self.input.payload.decrypt
            with m.If(run):
                m.d.sync += decrypting.eq(decrypting[:-1].shift_left(1) | direction)
            first_key = Mux(direction, round_key(backward[ROUNDS + 1], key_bits),
                            round_key(forward[1], key_bits))
        else:
            first_key = round_key(forward[1], key_bits)
        with m.If(run):
            m.d.sync += states[0].eq(block ^ first_key)
        spare = Signal(BLOCK_BITS, reset_less=True)
        for r in range(1, self.stages):
            x = states[r - 1]
            # The S-box layer as a signal of its own: pLayer picks single bits of it, and the
            # simulator then compiles each S-box once rather than once per bit picked.
            substituted = Signal(BLOCK_BITS, name=f"substituted_{r}")
            m.d.comb += substituted.eq(s_layer(x))
            encrypted = p_layer(substituted) ^ round_key(forward[r + 1], key_bits)
            if self._decrypt:
                permuted = Signal(BLOCK_BITS, name=f"permuted_{r}")
                inverted = Signal(BLOCK_BITS, name=f"inverted_{r}")
                m.d.comb += [
                    permuted.eq(p_layer(x, inverse=True)),
                    inverted.eq(s_layer(permuted, inverse=True)),
                ]
                decrypted = inverted ^ round_key(backward[ROUNDS + 1 - r], key_bits)
                result = Mux(decrypting[r - 1], decrypted, encrypted)
            else:
                result = encrypted
            if r < self.stages - 1:
                with m.If(run):
                    m.d.sync += states[r].eq(result)
            else:
                # The output register takes the spare's result first, if it holds one; the
                # spare may load whenever the head is free (its old value is then either moving
                # to the head or invalid) or a block arrives.
                with m.If(head_free):
                    m.d.sync += states[r].eq(Mux(spare_valid, spare, result))
                with m.If(head_free | incoming):
                    m.d.sync += spare.eq(result)

        m.d.comb += self.output.payload.eq(states[-1])
        return m
