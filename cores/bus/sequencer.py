"""The message sequencer of the cipher peripheral: words in, the modes of operation (and GCM)
around the core, words out."""

from amaranth.hdl import C, Cat, Const, Module, Mux, ResetInserter, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..gcm import GCM
from ..gcm.core import keep_bits
from ..modes import Mode
from .scrubber import Scrubber
from .shared import CoreSelect, SharedCore


__all__ = ["MessageConfig", "MessageSequencer", "GCM_MODE"]


#: The ``CTRL.MODE`` value of AES-GCM (after the values of :class:`~cipher_cores.cores.modes.Mode`).
GCM_MODE = 5

#: Bits of a chunk of the counter incrementer: its carry chain is this long (the chunks' carries
#: are registered flags, so no carry ripples across the block).
_COUNTER_CHUNK = 16


class MessageConfig(data.StructLayout):
    """What a message is: the configuration registers, as the sequencer reads them at ``start``.

    Fields
    ------
    mode : ``unsigned(3)``
        :class:`~cipher_cores.cores.modes.Mode` value, or :data:`GCM_MODE`.
    decrypt : ``unsigned(1)``
    keysel : ``unsigned(2)``
        Which core.
    blocks : ``unsigned(16)``
        Blocks in a message of ECB, CBC, CFB, OFB or CTR.
    tag_bytes : ``unsigned(5)``
        GCM decryption: leading tag bytes compared (0: 16).
    aad_bytes, text_bytes : ``unsigned(32)``
        GCM: bytes of AAD and of text.
    """
    def __init__(self):
        super().__init__({
            "mode": unsigned(3), "decrypt": unsigned(1), "keysel": unsigned(2),
            "blocks": unsigned(16), "tag_bytes": unsigned(5),
            "aad_bytes": unsigned(32), "text_bytes": unsigned(32),
        })


class MessageSequencer(wiring.Component):
    """Runs messages of ECB, CBC, CFB, OFB, CTR (and with ``gcm=True`` AES-GCM) through one of
    up to four cores, one 32-bit word at a time in and out, and zeroizes everything on ``clear``.

    The data path is four block registers, each with a small next-value function (no logic in
    front of ``in_block``'s shift, one LUT4 a bit for ``mask``, ``out_block`` and the core's
    input, three and the counter's sum for ``chain``):

    * ``in_block`` takes words (the most significant word of a block first);
    * the core's input is ``in_block`` (ECB, CBC decryption), ``in_block ^ chain`` (CBC
      encryption) or ``chain`` (CFB, OFB, CTR);
    * ``chain`` is the chaining value and the peripheral's (write-only) ``IV`` registers:
      written by the bus, it becomes the ciphertext a decryption feeds forward (CBC, CFB), the
      result an encryption feeds back (CBC, CFB: the ciphertext; OFB: the core's output) or the
      next counter (CTR, incremented in 16-bit chunks whose carries are registered flags, so no
      carry chain longer than 16 bits);
    * ``mask``, taken as the block enters the core, is what its result is XORed with: the
      previous ciphertext (CBC decryption), the input block (CFB, OFB, CTR) or 0;
    * ``out_block`` takes ``core output ^ mask`` as the result leaves the core, and gives it
      back a word an edge.

    One block is in the core at a time (a pipelined core works at its latency, not its
    initiation interval), while the next block's words come in and the previous result's words
    go out. Every enable of the 128-bit registers is driven by a flip-flop or a short path: the
    mode's demands are decoded at ``start`` and registered, a block's entry updates ``mask`` and
    ``chain`` on the edge after it entered, and a fed-back result goes from ``out_block`` into
    ``chain`` on the edge after it left. So with words arriving and leaving fast enough (DMA),
    a block takes the core's own interval plus one edge in ECB, CTR and CBC and CFB decryption,
    and plus two edges in CBC and CFB encryption and OFB, which feed each result back.

    Parameters
    ----------
    cores : sequence of :class:`~cipher_cores.cores.cipher.BlockCipher`
        1 to 4 cores with one block size of 32 to 128 bits (``keysel`` picks one).
    modes : sequence of :class:`~cipher_cores.cores.modes.Mode`
    gcm : :class:`bool`
        Build AES-GCM too, sharing the core (128-bit blocks).
    fifos : :class:`bool`
        The peripheral has data FIFOs for the scrubber to zero-fill (``fill``/``filled``).

    Members
    -------
    config : ``In(MessageConfig())``
        Read at ``start`` (and held by the peripheral while busy).
    key : ``In(key width)``
        The key registers (zero after ``clear``); the core loads them at a ``start`` after
        ``key_changed`` or a ``keysel`` change.
    key_changed : ``In(1)``
        A key word was written.
    tag_expected : ``In(128)``
        GCM decryption.
    start, clear : ``In(1)``
        One-edge commands: ``start`` is obeyed only while idle (not ``busy``: a start on a busy
        edge is ignored, nothing flagged); ``clear`` always.
    iv_write : ``In(block words)``, iv_data : ``In(32)``, iv_sel : ``In(4)``
        Bus writes to the ``IV`` words (with byte selects; only while idle).
    iv : ``Out(block_bits)``
        The chaining register, for ``IV`` reads.
    word_in : ``In(stream.Signature(32))``
        Message words; taken whenever ``in_block`` has room (also before ``start``).
    word_out : ``Out(stream.Signature(32))``
        Result words.
    busy : ``Out(1)``
        A message or the clear sequence is in progress, or a ``clear`` or an accepted ``start``
        is about to act (from flip-flops: it refuses the register writes).
    status_busy : ``Out(1)``
        ``busy``, or a ``start`` that will be accepted this cycle (for ``STATUS.BUSY``).
    scrubbing : ``Out(1)``
        The clear sequence is in progress.
    unsupported, no_key, auth_fail : ``Out(1)``
        One-edge events: a ``start`` refused (mode, direction, key size or tag length not
        built); a ``start`` with no key written since reset or clear; a GCM tag mismatch.
    tag : ``Out(128)``, tag_ready : ``Out(1)``, authentic : ``Out(1)``
        GCM's tag (encryption), whether the tag is in (or checked), and the check.
    key_set : ``Out(1)``
        A key has been written since reset or clear.
    started : ``Out(1)``
        High on the edge a ``start`` is accepted (a message begins).
    in_words, out_words : ``Out(range(words + 1))``
        Words in ``in_block`` and left in ``out_block``.
    fill : ``Out(1)``, filled : ``In(1)``, empty : ``Out(1)``
        The scrubber's FIFO steps (see :class:`~cipher_cores.cores.bus.scrubber.Scrubber`).
    """
    def __init__(self, cores, *, modes=tuple(Mode), gcm: bool = False, fifos: bool = False):
        cores = tuple(cores)
        for index, core in enumerate(cores):
            if core.latency < 2:
                raise ValueError(f"cores[{index}] has a latency of {core.latency} edges; the "
                                 f"peripheral needs at least 2")
        self._cores = cores
        self._modes = tuple(sorted(modes, key=lambda mode: mode.value))
        self._block_bits = block_bits = cores[0].block_bits
        self._words = block_bits // 32
        self._key_width = 32 * -(-max(core.key_bits for core in cores) // 32)
        cipher = cores[0] if len(cores) == 1 else CoreSelect(cores)
        self._select = None if len(cores) == 1 else cipher
        if gcm:
            self._share = SharedCore(cipher)
            self._cipher = self._share.ports[0]
            self._gcm = GCM(self._share.ports[1])
        else:
            self._share = self._gcm = None
            self._cipher = cipher
        self._fifos = fifos
        self._scrubber = Scrubber(cores=len(cores), depth=2, gcm=gcm, fifos=fifos)
        members = {
            "config": In(MessageConfig()),
            "key": In(self._key_width),
            "key_changed": In(1),
            "start": In(1), "clear": In(1),
            "iv_write": In(self._words), "iv_data": In(32), "iv_sel": In(4),
            "iv": Out(block_bits),
            "word_in": In(stream.Signature(32)),
            "word_out": Out(stream.Signature(32)),
            "busy": Out(1), "status_busy": Out(1), "scrubbing": Out(1),
            "unsupported": Out(1), "no_key": Out(1), "auth_fail": Out(1),
            "key_set": Out(1), "started": Out(1),
            "in_words": Out(range(self._words + 1)), "out_words": Out(range(self._words + 1)),
            "fill": Out(1), "filled": In(1), "empty": Out(1),
        }
        if gcm:
            members.update({"tag_expected": In(128), "tag": Out(128), "tag_ready": Out(1),
                            "authentic": Out(1)})
        super().__init__(members)
        self._in_block = Signal(block_bits, name="in_block")
        self._chain = Signal(block_bits, name="chain")
        self._mask = Signal(block_bits, name="mask")
        self._out_block = Signal(block_bits, name="out_block")

    @property
    def cores(self) -> tuple:
        return self._cores

    @property
    def modes(self) -> tuple:
        return self._modes

    @property
    def gcm(self) -> GCM | None:
        return self._gcm

    @property
    def cipher(self):
        """The core as the modes see it: the core, a :class:`CoreSelect` or a
        :class:`CorePort` of the :class:`SharedCore` (GCM builds)."""
        return self._cipher

    @property
    def scrubber(self) -> Scrubber:
        return self._scrubber

    def secret_state(self) -> dict:
        """The registers that hold key-derived or message material, by name."""
        return {"in_block": self._in_block, "chain": self._chain, "mask": self._mask,
                "out_block": self._out_block}

    def elaborate(self, platform):
        m = Module()
        words, block_bits = self._words, self._block_bits
        cores, gcm, cipher = self._cores, self._gcm, self._cipher
        config = self.config

        m.submodules.scrubber = scrub = self._scrubber
        core_reset = Signal()
        m.d.comb += core_reset.eq(scrub.reset)
        m.submodules.cipher = ResetInserter(core_reset)(
            self._share if gcm is not None else cipher)
        if gcm is not None:
            m.submodules.gcm = ResetInserter(core_reset)(gcm)
            m.submodules.modes_port = cipher     # the CorePort the modes use (no logic)
        m.d.comb += [self.scrubbing.eq(scrub.busy), self.fill.eq(scrub.fill),
                     scrub.filled.eq(self.filled), self.empty.eq(scrub.empty),
                     scrub.start.eq(self.clear)]

        in_block, chain, mask, out_block = (self._in_block, self._chain, self._mask,
                                            self._out_block)
        in_count = Signal(range(words + 1))
        out_count = Signal(range(words + 1))
        in_left = Signal(16)            # blocks still to enter the core
        out_left = Signal(16)           # results still to come
        in_flight = Signal()            # a block is in the core
        m.d.comb += [self.iv.eq(chain), self.in_words.eq(in_count),
                     self.out_words.eq(out_count)]

        # The message being run: the configuration as it was at start.
        decrypt = Signal()
        keysel = Signal(2)
        key_dirty = Signal(init=1)
        loaded_sel = Signal(2)
        key_set = self.key_set
        with m.If(self.key_changed):
            m.d.sync += [key_set.eq(1), key_dirty.eq(1)]

        # What the message's mode and direction ask of the data path, decoded at start from the
        # configuration and registered, so that no mode decoding sits on a path to the block
        # registers.
        def is_mode(which):
            return (config.mode == which.value) if which in self._modes else C(0, 1)
        ecb, cbc, cfb, ofb, ctr = (is_mode(which) for which in Mode)
        go_decrypt = config.decrypt
        plan_layout = data.StructLayout({
            "in_weight": 1,      # the core takes in_block ...
            "chain_weight": 1,   # ... XOR chain
            "core_decrypt": 1,   # the core decrypts (ECB, CBC decryption)
            "feed_in": 1,        # chain takes in_block as it enters (CBC, CFB decryption)
            "count": 1,          # chain counts (CTR)
            "feed_back": 1,      # chain takes the result (CBC, CFB encryption, OFB)
            "back_raw": 1,       # ... the core's output itself (OFB)
            "mask_chain": 1,     # the result is XORed with chain (CBC decryption) ...
            "mask_in": 1,        # ... or with in_block (CFB, OFB, CTR)
        })
        plan = Signal(plan_layout)
        plan_next = Signal(plan_layout)
        m.d.comb += [
            plan_next.in_weight.eq(ecb | cbc),
            plan_next.chain_weight.eq(~(ecb | (cbc & go_decrypt))),
            plan_next.core_decrypt.eq((ecb | cbc) & go_decrypt),
            plan_next.feed_in.eq((cbc | cfb) & go_decrypt),
            plan_next.count.eq(ctr),
            plan_next.feed_back.eq(((cbc | cfb) & ~go_decrypt) | ofb),
            plan_next.back_raw.eq(ofb),
            plan_next.mask_chain.eq(cbc & go_decrypt),
            plan_next.mask_in.eq(cfb | ofb | ctr),
        ]

        # Words in: whenever there is room (before start too), never while scrubbing.
        word_in = self.word_in
        m.d.comb += word_in.ready.eq((in_count != words) & ~scrub.busy)
        with m.If(word_in.valid & word_in.ready):
            m.d.sync += [in_block.eq(Cat(word_in.payload, in_block[:-32])),
                         in_count.eq(in_count + 1)]

        # Words out: the result's most significant word first.
        word_out = self.word_out
        m.d.comb += [word_out.valid.eq(out_count != 0), word_out.payload.eq(out_block[-32:])]
        with m.If(word_out.valid & word_out.ready):
            m.d.sync += [out_block.eq(Cat(C(0, 32), out_block[:-32])),
                         out_count.eq(out_count - 1)]

        # The counter's next value, in chunks: each chunk adds the AND of the (registered)
        # all-ones flags of the chunks below it.
        chunks = [(low, min(low + _COUNTER_CHUNK, block_bits))
                  for low in range(0, block_bits, _COUNTER_CHUNK)]
        all_ones = Signal(len(chunks))
        m.d.sync += all_ones.eq(Cat(*(chain[low:high].all() for low, high in chunks)))
        counter_next = Cat(*((chain[low:high] + all_ones[:index].all())[:high - low]
                             for index, (low, high) in enumerate(chunks)))

        # The core.
        core_in = Signal(block_bits)
        m.d.comb += core_in.eq((in_block & plan.in_weight.replicate(block_bits)) ^
                               (chain & plan.chain_weight.replicate(block_bits)))
        result = Signal(block_bits)
        m.d.comb += [
            cipher.key.payload.eq(self.key[:cipher.key_bits]),
            cipher.input.payload.block.eq(core_in),
            cipher.input.payload.decrypt.eq(plan.core_decrypt),
            result.eq(cipher.output.payload ^ mask),
        ]
        if self._select is not None:
            m.d.comb += self._select.select.eq(Mux(scrub.busy, scrub.select, keysel))

        # One block in the core at a time: the next enters on the edge after the result left.
        running = Signal()
        offer = Signal()            # cipher.input.valid for a block of the message
        in_full = Signal()
        more_in = Signal()          # blocks of the message still to enter the core
        enter = Signal()
        leave = Signal()
        m.d.comb += [
            in_full.eq(in_count == words),
            cipher.output.ready.eq(scrub.busy | (running & (out_count == 0))),
            leave.eq(cipher.output.valid & running & (out_count == 0)),
            # (The scrubber and a message never run at once.)
            cipher.input.valid.eq(scrub.block_valid | offer),
            enter.eq(cipher.input.valid & cipher.input.ready & ~scrub.busy),
            cipher.key.valid.eq(scrub.key_valid),
            scrub.key_ready.eq(cipher.key.ready),
            scrub.block_ready.eq(cipher.input.ready),
            scrub.result_valid.eq(cipher.output.valid),
        ]
        # The chaining register's next value, one AND-OR term per source (so each bit is
        # three LUT4s and an enable, whatever the modes): IV writes (a byte lane at a time), the
        # ciphertext a decryption feeds forward (CBC, CFB), the next counter (CTR), and the
        # result an encryption feeds back (CBC, CFB: core output ^ mask; OFB: core output).
        take_in = Signal()
        take_counter = Signal()
        take_result = Signal()
        # The block registers take what a block's entry asks for on the edge after it entered
        # (`entered`, a flip-flop, rather than the entry's handshake: a short path to the 128
        # enables). Nothing they read changes in between, and its result leaves at the
        # earliest on the edge after that (every core has a latency of at least 2).
        # Likewise the result an encryption feeds back is taken from out_block on the edge
        # after it left (`left`); mask still holds the block's (OFB takes out_block ^ mask, the
        # core's output), and the next block enters after that.
        entered = Signal()
        left = Signal()
        m.d.sync += [entered.eq(enter), left.eq(leave)]
        m.d.comb += [take_in.eq(entered & plan.feed_in), take_counter.eq(entered & plan.count),
                     take_result.eq(left & plan.feed_back)]
        feedback = out_block ^ (mask & plan.back_raw.replicate(block_bits))
        chain_next = ((in_block & take_in.replicate(block_bits)) |
                      (counter_next & take_counter.replicate(block_bits)) |
                      (feedback & take_result.replicate(block_bits)))
        iv_write, iv_sel, iv_data = self.iv_write, self.iv_sel, self.iv_data
        for index in range(words):
            for lane in range(4):
                low = 32 * index + 8 * lane
                write_lane = iv_write[index] & iv_sel[lane]
                with m.If(write_lane | take_in | take_counter | take_result):
                    m.d.sync += chain[low:low + 8].eq(
                        chain_next[low:low + 8] |
                        (iv_data[8 * lane:8 * lane + 8] & write_lane.replicate(8)))

        with m.If(enter):
            m.d.sync += in_count.eq(0)
        with m.If(entered):
            m.d.sync += [in_left.eq(in_left - 1), more_in.eq(in_left != 1)]
            # What the result will be XORed with.
            m.d.sync += mask.eq((chain & plan.mask_chain.replicate(block_bits)) |
                                (in_block & plan.mask_in.replicate(block_bits)))
        with m.If(leave):
            m.d.sync += [out_block.eq(result), out_count.eq(words), out_left.eq(out_left - 1)]

        # The block in the core: it leaves with its result (in CBC and CFB encryption and OFB,
        # an edge later: the result must reach chain first). The offer of the next block to the
        # core is a flip-flop, set from what the block register and the core will be after this
        # edge, so the core's input handshake starts from a register.
        in_flight_next = Signal()
        in_full_next = Signal()
        m.d.comb += [
            in_flight_next.eq(enter | (in_flight & ~(leave & ~plan.feed_back) &
                                       ~(left & plan.feed_back))),
            in_full_next.eq(~enter & (in_full | ((in_count == words - 1) &
                                                 word_in.valid & word_in.ready))),
        ]
        m.d.sync += [in_flight.eq(in_flight_next),
                     offer.eq(running & more_in & in_full_next & ~in_flight_next)]

        # Capabilities, checked at start.
        built = sum(1 << mode_.value for mode_ in self._modes) | \
            (0 if gcm is None else 1 << GCM_MODE)
        decrypting = sum(1 << i for i, core in enumerate(cores) if core.decrypts)
        refused = Signal()
        is_gcm_now = (config.mode == GCM_MODE) if gcm is not None else C(0, 1)
        refusal = (~Const(built, 8).bit_select(config.mode, 1) | (config.keysel >= len(cores)) |
                   (config.decrypt & ((config.mode == Mode.ECB.value) |
                                      (config.mode == Mode.CBC.value)) &
                    ~Const(decrypting, 4).bit_select(config.keysel, 1)))
        if gcm is not None:
            tag_length_ok = (config.tag_bytes == 0) | ((config.tag_bytes >= 4) &
                                                       (config.tag_bytes <= 16))
            refusal |= (config.mode == GCM_MODE) & config.decrypt & ~tag_length_ok
        # START is obeyed an edge after the command, on decisions registered from the
        # configuration (stable by then): no configuration decoding on a path to the registers
        # a start loads.
        start = Signal()
        has_blocks = Signal()
        is_gcm = Signal()
        needs_key = Signal()
        plan_ready = Signal(plan_layout)
        will_start = Signal()   # the start will be accepted (one flip-flop for busy)
        idle = Signal()         # no message, no clear sequence, no start about to act
        m.d.comb += idle.eq(~self.busy)
        m.d.sync += will_start.eq(self.start & idle & ~refusal & key_set &
                                  (is_gcm_now | (config.blocks != 0)))
        m.d.sync += [start.eq(self.start & idle), refused.eq(refusal),
                     has_blocks.eq(config.blocks != 0), is_gcm.eq(config.mode == GCM_MODE),
                     needs_key.eq(key_dirty | (config.keysel != loaded_sel)),
                     plan_ready.eq(plan_next)]

        if gcm is not None:
            tag, tag_ready, authentic = self.tag, self.tag_ready, self.authentic
            gcm_dirty = Signal(init=1)
            part_left = Signal(32)
            use_gcm = Signal()
            with m.If(self.key_changed):
                m.d.sync += gcm_dirty.eq(1)
            m.d.comb += [
                self._share.select.eq(Mux(scrub.busy, scrub.gcm_phase, use_gcm)),
                gcm.key.payload.eq(self.key[:cipher.key_bits]),
                gcm.start.payload.decrypt.eq(decrypt),
                gcm.key.valid.eq(scrub.gcm_key_valid),
                scrub.gcm_key_ready.eq(gcm.key.ready),
                scrub.gcm_idle.eq(gcm.start.ready),
            ]

        def leading_bytes(count):
            return Cat(*(count >= 16 - j for j in range(16)))

        busy = Signal()
        starting = Signal()     # the edge an accepted start acts on: busy already
        m.d.comb += [
            # (A start is only taken while idle, so `will_start` is the edge it acts on.)
            starting.eq(will_start),
            self.busy.eq(busy | scrub.busy | starting | self.clear),
            # STATUS.BUSY also shows a start about to act (a read right after START sees it).
            self.status_busy.eq(self.busy | (self.start & ~refusal & key_set &
                                             (is_gcm_now | (config.blocks != 0)))),
        ]

        # `busy` is a flip-flop: set as a message starts, cleared as the machine goes back to
        # Idle (the end of a message, or clear).
        def obey_clear():
            with m.If(self.clear):
                m.d.sync += busy.eq(0)
                m.next = "Idle"

        with m.FSM():
            with m.State("Idle"):
                # A refusal is flagged at once; an accepted start acts an edge later.
                with m.If(self.start & idle):
                    with m.If(refusal):
                        m.d.comb += self.unsupported.eq(1)
                    with m.Elif(~key_set):
                        m.d.comb += self.no_key.eq(1)
                    if gcm is not None:
                        with m.Elif(is_gcm_now | (config.blocks != 0)):
                            # The last GCM message's tag is gone from STATUS at once.
                            m.d.sync += [tag_ready.eq(0), authentic.eq(0)]
                with m.If(start & ~refused & key_set):
                    m.d.sync += busy.eq(has_blocks | is_gcm)
                    if gcm is not None:
                        with m.If(is_gcm):
                            m.d.comb += self.started.eq(1)
                            m.d.sync += [decrypt.eq(config.decrypt), plan.eq(0),
                                         keysel.eq(config.keysel),
                                         part_left.eq(config.aad_bytes), use_gcm.eq(1),
                                         tag_ready.eq(0), authentic.eq(0), tag.eq(0)]
                            with m.If(gcm_dirty | (config.keysel != loaded_sel)):
                                m.next = "GCM key"
                            with m.Else():
                                m.next = "GCM start"
                    with (m.Elif if gcm is not None else m.If)(has_blocks):
                        m.d.comb += self.started.eq(1)
                        m.d.sync += [decrypt.eq(config.decrypt), plan.eq(plan_ready),
                                     keysel.eq(config.keysel), in_left.eq(config.blocks),
                                     more_in.eq(1), out_left.eq(config.blocks)]
                        if gcm is not None:
                            m.d.sync += [use_gcm.eq(0), tag_ready.eq(0), authentic.eq(0),
                                         tag.eq(0)]
                        with m.If(needs_key):
                            m.next = "Key"
                        with m.Else():
                            m.next = "Run"

            with m.State("Key"):
                m.d.comb += [cipher.key.valid.eq(1)]
                with m.If(cipher.key.ready):
                    m.d.sync += [key_dirty.eq(0), loaded_sel.eq(keysel)]
                    m.next = "Run"
                obey_clear()

            with m.State("Run"):
                m.d.comb += [running.eq(1)]
                with m.If((out_left == 0) & (out_count == 0)):
                    m.d.sync += busy.eq(0)
                    m.next = "Idle"
                obey_clear()

            if gcm is not None:
                def gcm_part(on_last):
                    has_data = part_left != 0
                    last = part_left <= 16
                    m.d.comb += [
                        gcm.input.valid.eq(~has_data | (in_count == words)),
                        # An empty item's data is 0 (words may arrive while it waits).
                        gcm.input.payload.data.eq(in_block & has_data.replicate(block_bits)),
                        gcm.input.payload.keep.eq(leading_bytes(part_left)),
                        gcm.input.payload.last.eq(last),
                    ]
                    with m.If(gcm.input.valid & gcm.input.ready):
                        m.d.sync += part_left.eq(part_left - 16)
                        with m.If(has_data):
                            m.d.sync += in_count.eq(0)
                        with m.If(last):
                            on_last()

                with m.State("GCM key"):
                    m.d.comb += [gcm.key.valid.eq(1)]
                    with m.If(gcm.key.ready):
                        m.d.sync += [key_dirty.eq(0), gcm_dirty.eq(0), loaded_sel.eq(keysel)]
                        m.next = "GCM start"
                    obey_clear()

                with m.State("GCM start"):
                    m.d.comb += [gcm.start.valid.eq(1)]
                    with m.If(gcm.start.ready):
                        m.next = "GCM IV"
                    obey_clear()

                with m.State("GCM IV"):
                    m.d.comb += [gcm.input.valid.eq(1),
                                 gcm.input.payload.data.eq(chain),
                                 gcm.input.payload.keep.eq(keep_bits(12)),
                                 gcm.input.payload.last.eq(1)]
                    with m.If(gcm.input.ready):
                        m.next = "GCM AAD"
                    obey_clear()

                with m.State("GCM AAD"):

                    def aad_done():
                        m.d.sync += part_left.eq(config.text_bytes)
                        m.next = "GCM text"
                    gcm_part(aad_done)
                    obey_clear()

                with m.State("GCM text"):

                    def text_done():
                        with m.If(decrypt):
                            m.next = "GCM expected tag"
                        with m.Else():
                            m.next = "GCM tag"
                    gcm_part(text_done)
                    m.d.comb += gcm.output.ready.eq(out_count == 0)
                    with m.If(gcm.output.valid & gcm.output.ready &
                              (config.text_bytes != 0)):
                        m.d.sync += [out_block.eq(gcm.output.payload.data),
                                     out_count.eq(words)]
                    obey_clear()

                with m.State("GCM expected tag"):
                    m.d.comb += [gcm.input.valid.eq(1),
                                 gcm.input.payload.data.eq(self.tag_expected),
                                 gcm.input.payload.keep.eq(leading_bytes(
                                     Mux(config.tag_bytes == 0, 16, config.tag_bytes))),
                                 gcm.input.payload.last.eq(1)]
                    with m.If(gcm.input.ready):
                        m.next = "GCM tag"
                    obey_clear()

                with m.State("GCM tag"):
                    m.d.comb += [gcm.tag.ready.eq(out_count == 0)]
                    with m.If(gcm.tag.valid & gcm.tag.ready):
                        m.d.sync += [tag.eq(gcm.tag.payload.tag),
                                     authentic.eq(gcm.tag.payload.authentic),
                                     tag_ready.eq(1)]
                        with m.If(decrypt & ~gcm.tag.payload.authentic):
                            m.d.comb += self.auth_fail.eq(1)
                        m.d.sync += busy.eq(0)
                        m.next = "Idle"
                    obey_clear()

        with m.If(self.clear):
            # Everything the sequencer holds goes to zero now; the scrubber does the rest.
            zero = [in_block, chain, mask, out_block, in_count, out_count, in_left,
                    out_left, in_flight, offer, more_in, entered, left, plan, decrypt, keysel,
                    loaded_sel, key_set]
            if gcm is not None:
                zero += [self.tag, self.tag_ready, self.authentic, part_left, use_gcm]
                m.d.sync += gcm_dirty.eq(1)
            m.d.sync += [signal.eq(0) for signal in zero]
            m.d.sync += [key_dirty.eq(1), busy.eq(0)]
        return m
