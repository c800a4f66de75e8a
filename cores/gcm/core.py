"""AES-GCM (NIST SP 800-38D) around any 128-bit block-cipher core of the library."""

from __future__ import annotations

import math

from amaranth.hdl import C, Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..cipher import BlockCipher, check_block_cipher, check_unmasked
from .ghash import GHASH, check_digit_bits, check_multiplier


__all__ = ["GCMStart", "GCMBlock", "GCMTag", "GCM", "MIN_TAG_BYTES", "COUNT_BITS",
           "keep_bits"]


#: The shortest tag a decryption accepts (SP 800-38D allows 32-bit tags for some uses).
MIN_TAG_BYTES = 4
#: Width of the counters of whole blocks of IV, AAD and text (so each is below 2^36 bytes).
COUNT_BITS = 32


class GCMStart(data.StructLayout):
    """Payload of the ``start`` stream: one transfer starts a message.

    Fields
    ------
    decrypt : ``unsigned(1)``
        0 to encrypt the message, 1 to decrypt it (and check its tag).
    """
    def __init__(self):
        super().__init__({"decrypt": unsigned(1)})


class GCMBlock(data.StructLayout):
    """Payload of the ``input`` and ``output`` streams: up to 16 bytes of a part of a message.

    Fields (the first in the low bits of the packed payload)
    ------
    data : ``unsigned(128)``
        The bytes, ``int.from_bytes(block_bytes, "big")``: byte ``i`` of block ``k`` of a part
        is byte ``16 k + i`` of the part, bits ``127 - 8 i`` down to ``120 - 8 i``. A partial
        block holds the leading bytes; the rest are ignored on ``input`` and zero on ``output``.
    keep : ``unsigned(16)``
        Byte enables, read only with ``last`` (every other block is whole): bit ``j`` enables
        ``data`` bits ``8 j + 7`` down to ``8 j``, as TKEEP does in AXI4-Stream. A block of ``n``
        bytes holds the leading ones, so its ``keep`` has the top ``n`` bits set
        (``0xFFFF`` for 16, ``0xF000`` for 4, ``0`` for none); other patterns are not
        supported. An empty ``last`` block (``keep`` 0) carries nothing and just ends its part:
        an empty AAD or text is one such block.
    last : ``unsigned(1)``
        This block ends its part (IV, AAD or text).

    In the expected tag (the last item of a decryption) ``keep`` gives the tag's length, 4 to 16
    leading bytes (those are compared), and ``last`` is ignored.
    """
    def __init__(self):
        super().__init__({"data": unsigned(128), "keep": unsigned(16), "last": unsigned(1)})


def keep_bits(length: int) -> int:
    """The ``keep`` field of a block holding the first ``length`` bytes (0 to 16)."""
    if not isinstance(length, int) or not 0 <= length <= 16:
        raise ValueError(f"length must be 0 to 16 bytes, not {length!r}")
    return ((1 << length) - 1) << (16 - length)


class GCMTag(data.StructLayout):
    """Payload of the ``tag`` stream: one transfer ends each message.

    Fields (first field in the low bits of the packed payload)
    ------
    tag : ``unsigned(128)``
        Encryption: the 128-bit tag, ``int.from_bytes(tag_bytes, "big")`` (a shorter tag is its
        leading bytes, the most significant ones). Decryption: 0 (the computed tag never leaves
        the core, so a forged message cannot be completed from it).
    authentic : ``unsigned(1)``
        Decryption: 1 if the expected tag matched, 0 if not. Encryption: always 0 (nothing was
        checked).
    """
    def __init__(self):
        super().__init__({"tag": unsigned(128), "authentic": unsigned(1)})


def _core_depth(core: BlockCipher) -> int:
    """Counter blocks in flight that keep ``core`` at its rate: its latency over its initiation
    interval, rounded up."""
    return max(1, math.ceil(core.latency / core.initiation_interval))


class GCM(wiring.Component):
    """AES-GCM authenticated encryption and decryption (NIST SP 800-38D) on streams.

    The block cipher is any core of the library (a :class:`~cipher_cores.cores.cipher.BlockCipher`)
    with 128-bit blocks (the round-based :class:`~cipher_cores.cores.aes.AES` of
    any key size and S-box, or a pipelined one): GCM only asks it to encrypt, and keeps as many
    counter blocks in flight as the core's ``latency`` and ``initiation_interval`` call for.
    GHASH is a :class:`~cipher_cores.cores.gcm.ghash.GHASH` whose digit size and multiplier are parameters,
    so that it keeps pace with the core.

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        The block cipher (it becomes a submodule), with ``block_bits == 128`` (anything else:
        :exc:`TypeError`, or :exc:`ValueError` for another block size).
    digit_bits : :class:`int`
        GHASH digit size (bits multiplied per cycle), see :class:`~cipher_cores.cores.gcm.ghash.GHASH`. The
        default 16 (10 cycles a block in block RAM, 8 in logic) keeps pace with the round-based
        AES (11 to 15).
    multiplier : :class:`str`
        GHASH multiplier: ``"auto"`` (the default: ``"bram"``, except on iCE40 where it is
        ``"mixed"``), ``"bram"`` (two tables of 256 x 128 bits in block RAM, 16 ``DP16KD`` on
        ECP5 or ``SB_RAM40_4K`` on iCE40, filled in 382 edges at each key load, about 450 LUT4
        with 16-bit digits), ``"mixed"`` (one of the two tables replaced by AND/XOR logic: 8
        block RAMs fewer for about 600 LUT4 more, so that GCM with the round-based AES fits
        the 30 block RAMs of an iCE40 UP5K; same cycles) or ``"logic"`` (AND/XOR gates, about
        2,000 LUT4 with 16-bit digits, no block RAM and no fill; with 128-bit digits a whole
        product a cycle, beside a pipelined AES). With ``digit_bits=8`` the block-RAM GHASH has
        one table (8 block RAMs) and takes 18 edges a block.
    depth : :class:`int` or ``None``
        Counter blocks in flight in the core; by default ``ceil(latency / initiation_interval)``
        of the core (1 for the round-based AES).

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        A key, as the core takes it. Accepted between messages (before the first ``start`` or
        after a ``tag`` transfer); GCM then computes ``H = E_K(0^128)`` with the core and loads
        it into GHASH before the next message starts.
    start : ``In(stream.Signature(GCMStart()))``
        Starts a message in the direction it gives. Accepted once a key is loaded, between
        messages, when no key is waiting and GHASH is idle.
    input : ``In(stream.Signature(GCMBlock()))``
        The message, as items in this order, each part ending with an item that has ``last``:
        the IV, the AAD, the text (plaintext or ciphertext), and for a decryption one more item
        holding the expected tag (``keep`` gives its length). An empty AAD or text is one item
        with ``last`` and ``keep`` = 0. A 12-byte IV (one item with ``last`` and ``keep`` =
        ``0xFFF0``) gives ``J0 = IV || 0^31 || 1``; an IV of any other length goes through
        GHASH (SP 800-38D, 7.1 step 2).
    output : ``Out(stream.Signature(GCMBlock()))``
        One item per text item, in order, with its ``keep`` and ``last``: the ciphertext
        (encrypting) or the plaintext (decrypting), zero in the bytes ``keep`` leaves out.
    tag : ``Out(stream.Signature(GCMTag()))``
        One transfer per message, after its last ``output`` item: the tag (encryption) or
        whether the expected tag matched (decryption).

    Decryption releases the plaintext before the tag is checked
    -----------------------------------------------------------
    The plaintext leaves on ``output`` as the ciphertext arrives, before the tag can be checked
    (the tag covers the whole ciphertext). The consumer must hold or discard it until ``tag``
    says ``authentic``; nothing in the core holds a message back (that would take a buffer the
    size of the longest message). The check compares all 16 bytes at once (XOR, then an OR over
    the bytes the tag's length covers), so its timing depends neither on the data nor on where
    a mismatch is: a pass and a fail take the same cycles. The computed tag never leaves the
    core on a decryption: ``tag.payload.tag`` is 0.

    Cycle behaviour
    ---------------
    The streams follow the rules of :mod:`amaranth.lib.stream`. A text result is formed as its
    text block comes in (its keystream was computed ahead), so ``output.valid`` follows
    ``input.valid`` within the cycle and both transfer on the same edge: there is a
    combinational path from ``input`` to ``output`` (and from ``output.ready`` to
    ``input.ready``), none from a stream's ``ready`` to its own ``valid``.

    With the round-based AES (latency = interval = Nr + 1) and the default GHASH, a text block
    passes every ``cycles_per_block`` = Nr + 1 edges (11 for AES-128): the core encrypts counter
    block ``i + 1`` while GHASH absorbs ciphertext block ``i``, and the first counter block is
    encrypted while the AAD is hashed. AAD blocks are absorbed every ``ghash.block_cycles``
    edges. After the last text block GHASH absorbs the lengths block while the core encrypts
    ``J0``: the tag leaves ``2 * ghash.block_cycles + 1`` edges after the last text block (21
    with the default GHASH; ``latency + 2`` if the core takes longer; ``ghash.pipeline_delay``
    (2) more with a pipelined GHASH, whose sum is ready that many edges after a block; 2 more
    when decrypting, to check and clear). A key load takes the
    core's key expansion, one block (``H``) and, with tables (any multiplier but
    ``"logic"``), the table fill: the first IV block can be absorbed ``key_load_cycles +
    latency + 2 + ghash.h_load_cycles - 1`` edges after the key (406 for AES-128 with the default GHASH, 24
    with ``"logic"``). A reset returns to the idle state with no key loaded.

    Byte and bit order
    ------------------
    Keys are as the core takes them; blocks, IVs, tags and data are ``int.from_bytes(bytes,
    "big")`` (the first byte in the most significant bits). GHASH follows SP 800-38D's bit
    order on these integers (see :mod:`cipher_cores.cores.gcm.field`).

    Limits: the AAD and the text each up to ``2**32 - 1`` whole blocks (GCM itself limits the
    text to ``2**32 - 2`` blocks), the IV from 1 byte to ``2**36`` bytes.
    """
    def __init__(self, core, *, digit_bits: int = 16, multiplier: str = "auto",
                 depth: int | None = None):
        check_unmasked(check_block_cipher(core, "core"), "GCM")
        if core.block_bits != 128:
            raise ValueError(f"core must have 128-bit blocks, not {core.block_bits}-bit ones")
        check_digit_bits(digit_bits, check_multiplier(multiplier))
        if depth is None:
            depth = _core_depth(core)
        if not isinstance(depth, int) or isinstance(depth, bool):
            raise TypeError(f"depth must be a positive integer or None, not {depth!r}")
        if depth < 1:
            raise ValueError(f"depth must be a positive integer or None, not {depth!r}")
        self._core = core
        self._ghash = GHASH(digit_bits=digit_bits, multiplier=multiplier)
        self._depth = depth
        super().__init__({
            "key": In(stream.Signature(unsigned(core.key_bits))),
            "start": In(stream.Signature(GCMStart())),
            "input": In(stream.Signature(GCMBlock())),
            "output": Out(stream.Signature(GCMBlock())),
            "tag": Out(stream.Signature(GCMTag())),
        })

    @property
    def core(self) -> BlockCipher:
        return self._core

    @property
    def ghash(self) -> GHASH:
        return self._ghash

    @property
    def key_bits(self) -> int:
        return self._core.key_bits

    @property
    def digit_bits(self) -> int:
        return self._ghash.digit_bits

    @property
    def multiplier(self) -> str:
        return self._ghash.multiplier

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def cycles_per_block(self) -> int:
        """Edges between the text blocks of a long message at full speed: the slower of GHASH
        (``ghash.block_cycles``) and the core (its initiation interval, or its latency shared
        by the ``depth`` blocks in flight). 11 for AES-128 with the default GHASH."""
        core = self._core
        return max(self._ghash.block_cycles, core.initiation_interval,
                   math.ceil(core.latency / self._depth))

    def elaborate(self, platform):
        m = Module()
        m.submodules.cipher = cipher = self._core
        m.submodules.ghash = ghash = self._ghash

        item = self.input.payload
        keystream = cipher.output.payload

        key_loaded = Signal()
        decrypting = Signal()
        # Datapath registers have no reset (it would take a LUT a bit where another value
        # loads them); the control state does.
        counter = Signal(128, reset_less=True)   # the next counter block (0 to hash the key)
        j0_low = Signal(32, reset_less=True)     # the last 32 bits of J0 (the rest: counter's)
        low = Signal(32)                 # the counter block's last 32 bits (see below)
        in_flight = Signal(range(self._depth + 1))   # counter blocks sent, results not taken
        j0_sent = Signal()               # E_K(J0) is on its way
        authentic = Signal()
        tag_keep = Signal(16)            # the expected tag's byte enables

        # Length of the part being counted (IV, AAD, then text) and of the AAD.
        blocks = Signal(COUNT_BITS, name="blocks", reset_less=True)
        tail = Signal(4, name="tail", reset_less=True)
        aad_blocks = Signal(COUNT_BITS, name="aad_blocks", reset_less=True)
        aad_tail = Signal(4, name="aad_tail", reset_less=True)

        # What the state asks of the datapath, registered: each transition (`goto`) loads the
        # values of the state it enters, so they come straight from flip-flops.
        controls = Signal(data.StructLayout({
            "use_data": 1,               # the GHASH block includes the input data, masked
            "use_keystream": 1,          # ... the keystream, masked (encrypting text)
            "use_whole_keystream": 1,    # ... the whole core output (E_K(J0), for the tag)
            "use_lengths": 1,            # ... the lengths block
            "tag_item": 1,               # the input item is the expected tag
            "counting": 1,               # input items count towards the part's length
        }))
        state_controls = {
            "IV": {"use_data": 1, "counting": 1},
            "IV more": {"use_data": 1, "counting": 1},
            "IV lengths": {"use_lengths": 1},
            "AAD": {"use_data": 1, "counting": 1},
            "Text": {"use_data": 1, "use_keystream": ~decrypting, "counting": 1},
            "Lengths": {"use_lengths": 1},
            "Tag": {"use_data": decrypting, "use_whole_keystream": 1, "tag_item": 1},
        }

        def goto(state):
            m.next = state
            values = state_controls.get(state, {})
            m.d.sync += [getattr(controls, name).eq(values.get(name, 0))
                         for name in controls.shape().members]

        use_one = Signal()               # the GHASH block has 1 in its last bit (for J0)
        send_j0 = Signal()               # the core's input is J0 rather than the counter
        clear = Signal()                 # set the GHASH state to 0

        # The bytes of the item that count: all 16 unless it is a last block (or the tag).
        def byte_mask(bits):
            """A 128-bit mask from 16 byte bits, bit j covering bits 8j+7..8j."""
            return Cat(*[bits[j].replicate(8) for j in range(16)])

        byte_valid = Signal(16)
        m.d.comb += byte_valid.eq(item.keep | ~(item.last | controls.tag_item).replicate(16))
        has_bytes = Signal()
        m.d.comb += has_bytes.eq(~item.last | item.keep.any())

        # `keep`: one mask bit a byte, shared by its 8 bits.
        data_bytes = Signal(16, attrs={"keep": 1})
        keystream_bytes = Signal(16, attrs={"keep": 1})
        m.d.comb += [
            data_bytes.eq(byte_valid & controls.use_data.replicate(16)),
            keystream_bytes.eq((byte_valid & controls.use_keystream.replicate(16)) |
                               controls.use_whole_keystream.replicate(16)),
        ]

        # The lengths block [len(A)]_64 || [len(C)]_64 in bits (or [0]_64 || [len(IV)]_64).
        def length_bits(whole, partial):
            return Cat(C(0, 3), partial, whole, C(0, 64 - 3 - 4 - COUNT_BITS))
        lengths = Cat(length_bits(blocks, tail), length_bits(aad_blocks, aad_tail))

        # The GHASH block: every source masked, so the state picks what goes in. GHASH adds it
        # to its state; the state is cleared (not masked) when a hash starts, so that the sum of
        # a bit and its masks fits two LUT4s.
        m.d.comb += [
            ghash.input.payload.block.eq((item.data & byte_mask(data_bytes)) ^
                                         (keystream & byte_mask(keystream_bytes)) ^
                                         (lengths & controls.use_lengths.replicate(128)) ^
                                         use_one),
            ghash.input.payload.first.eq(0),
            ghash.restore.payload.eq(0),
            ghash.restore.valid.eq(clear),
            ghash.h.payload.eq(keystream),
            self.output.payload.data.eq((item.data ^ keystream) & byte_mask(byte_valid)),
            self.output.payload.keep.eq(item.keep),
            self.output.payload.last.eq(item.last),
            self.tag.payload.tag.eq(ghash.operand),
            self.tag.payload.authentic.eq(authentic),
            cipher.input.payload.block.eq(Cat(Mux(send_j0, j0_low, low), counter[32:])),
            cipher.input.payload.decrypt.eq(0),
            cipher.key.payload.eq(self.key.payload),
        ]

        take_item = self.input.valid & self.input.ready
        core_in = cipher.input.valid & cipher.input.ready
        core_out = cipher.output.valid & cipher.output.ready
        absorb = ghash.input.valid & ghash.input.ready

        # Counter blocks in flight; the counter advances with each one sent.
        with m.If(core_in & ~core_out):
            m.d.sync += in_flight.eq(in_flight + 1)
        with m.Elif(core_out & ~core_in):
            m.d.sync += in_flight.eq(in_flight - 1)
        with m.If(core_in & send_j0):
            m.d.sync += j0_sent.eq(1)

        # The counter: cleared (to hash the key), loaded with J0, or stepped (inc32). The upper
        # 96 bits are written as one enable and one value, so that synthesis finds a clock
        # enable and a synchronous reset instead of a multiplexer a bit. The low 32 bits step
        # an edge late: `stepped` records that a counter block was sent (or inc32 asked for),
        # and the counter block is `counter[:32] + stepped`, which the register takes on every
        # edge. So the handshake of a counter block (which depends on the consumer's `ready`
        # and the incoming item, through `output` and `input`) loads one flip-flop, not an
        # enable of 32 across the die from the core's input (that was a critical path); the
        # counter blocks, and the edges they are sent on, are the same.
        clear_counter, load_counter, increment = Signal(), Signal(), Signal()
        stepped = Signal()
        m.d.sync += stepped.eq(increment | (core_in & ~send_j0))
        m.d.comb += low.eq(counter[:32] + stepped)
        with m.If(clear_counter | load_counter):
            m.d.sync += counter[32:].eq(Mux(clear_counter, 0, ghash.operand[32:]))
        m.d.sync += counter[:32].eq(Mux(clear_counter, 0, Mux(load_counter, ghash.operand[:32],
                                                              low)))

        # Length of the part: whole blocks, and the bytes of a partial last block (the number
        # of leading bytes `keep` enables: 16 - the position of its lowest set bit).
        whole = ~item.last | item.keep[0]
        partial = Signal(4)
        for j in reversed(range(1, 16)):
            with m.If(item.keep[j]):
                m.d.comb += partial.eq(16 - j)
        blocks_next = Signal(COUNT_BITS, name="blocks_next")
        tail_next = Signal(4, name="tail_next")
        m.d.comb += [blocks_next.eq(blocks + whole),
                     tail_next.eq(Mux(item.last & ~whole, partial, tail))]
        # As for the counter: one enable and one value (cleared or counted) per register.
        restart, start_aad, save_aad = Signal(), Signal(), Signal()
        with m.If(restart | (controls.counting & take_item)):
            m.d.sync += [blocks.eq(Mux(restart, 0, blocks_next)),
                         tail.eq(Mux(restart, 0, tail_next))]
        with m.If(start_aad | save_aad):
            m.d.sync += [aad_blocks.eq(Mux(start_aad, 0, blocks_next)),
                         aad_tail.eq(Mux(start_aad, 0, tail_next))]

        def absorb_items():
            """IV and AAD items go to GHASH only (an empty last item is just taken)."""
            m.d.comb += [ghash.input.valid.eq(self.input.valid & has_bytes),
                         self.input.ready.eq(ghash.input.ready | ~has_bytes)]

        def absorb_alone(final=0):
            """Absorb a block made of what the state's controls select, once GHASH is free."""
            m.d.comb += [ghash.input.valid.eq(1), ghash.input.payload.final.eq(final)]

        def prefetch(more):
            """Keep up to ``depth`` counter blocks in the core while ``more`` may be needed."""
            m.d.comb += cipher.input.valid.eq(more & ((in_flight < self._depth) | core_out))

        def tag_block():
            """Drain counter blocks the text did not use, then encrypt J0."""
            m.d.comb += [send_j0.eq(1),
                         cipher.input.valid.eq(~j0_sent & (in_flight == 0)),
                         cipher.output.ready.eq(~j0_sent)]

        with m.FSM():
            with m.State("Idle"):
                m.d.comb += [
                    cipher.key.valid.eq(self.key.valid),
                    self.key.ready.eq(cipher.key.ready),
                    self.start.ready.eq(key_loaded & ~self.key.valid & ghash.restore.ready),
                    clear.eq(self.start.valid & self.start.ready),
                    clear_counter.eq(self.key.valid & self.key.ready),
                ]
                with m.If(self.key.valid & self.key.ready):
                    m.d.sync += key_loaded.eq(1)
                    goto("Hash key")
                with m.If(self.start.valid & self.start.ready):
                    m.d.sync += [decrypting.eq(self.start.payload.decrypt), authentic.eq(0),
                                 j0_sent.eq(0)]
                    m.d.comb += [restart.eq(1), start_aad.eq(1)]
                    goto("IV")

            with m.State("Hash key"):
                m.d.comb += cipher.input.valid.eq(1)         # the counter is 0
                with m.If(core_in):
                    goto("Load H")

            with m.State("Load H"):
                m.d.comb += [ghash.h.valid.eq(cipher.output.valid),
                             cipher.output.ready.eq(ghash.h.ready)]
                with m.If(core_out):
                    goto("Idle")

            with m.State("IV"):
                # A 12-byte IV: J0 = IV || 0^31 || 1, formed as a sum (GHASH's state is 0).
                absorb_items()
                short = item.last & (item.keep == keep_bits(12))
                m.d.comb += [use_one.eq(short), ghash.input.payload.final.eq(short)]
                with m.If(take_item):
                    with m.If(short):
                        goto("Load J0")
                    with m.Elif(item.last):
                        goto("IV lengths")
                    with m.Else():
                        goto("IV more")

            with m.State("IV more"):
                absorb_items()
                with m.If(take_item & item.last):
                    goto("IV lengths")

            with m.State("IV lengths"):
                absorb_alone()
                with m.If(absorb):
                    goto("IV hash")

            with m.State("IV hash"):
                absorb_alone(final=1)                        # the sum is the state, J0
                with m.If(absorb):
                    goto("Load J0")

            with m.State("Load J0"):
                # GHASH's sum is ready once it is idle (at once, unless it is pipelined).
                with m.If(~ghash.busy):
                    m.d.sync += j0_low.eq(ghash.operand[:32])
                    m.d.comb += [load_counter.eq(1), restart.eq(1),
                                 clear.eq(1)]                # GHASH is idle: a hash starts
                    goto("Count")

            with m.State("Count"):
                m.d.comb += increment.eq(1)                  # inc32(J0)
                goto("AAD")

            with m.State("AAD"):
                absorb_items()
                prefetch(1)
                with m.If(take_item & item.last):
                    m.d.comb += [save_aad.eq(1), restart.eq(1)]
                    goto("Text")

            with m.State("Text"):
                ready_to_go = Signal()
                m.d.comb += [
                    ready_to_go.eq((cipher.output.valid & ghash.input.ready) | ~has_bytes),
                    self.output.valid.eq(self.input.valid & ready_to_go),
                    self.input.ready.eq(self.output.ready & ready_to_go),
                    ghash.input.valid.eq(take_item & has_bytes),
                    cipher.output.ready.eq(take_item & has_bytes),
                ]
                prefetch(~(take_item & item.last))
                with m.If(take_item & item.last):
                    goto("Lengths")

            with m.State("Lengths"):
                tag_block()
                absorb_alone()
                with m.If(absorb):
                    goto("Tag")

            with m.State("Tag"):
                tag_block()
                final_ready = Signal()
                m.d.comb += [
                    final_ready.eq(j0_sent & cipher.output.valid & ghash.input.ready),
                    ghash.input.payload.final.eq(1),
                    # Before J0 is sent tag_block() drains; then E_K(J0) leaves with the sum.
                    cipher.output.ready.eq(~j0_sent | absorb),
                ]
                with m.If(decrypting):
                    # The expected tag is added too: the sum is zero where it matches.
                    m.d.comb += [self.input.ready.eq(final_ready),
                                 ghash.input.valid.eq(self.input.valid & final_ready)]
                with m.Else():
                    m.d.comb += ghash.input.valid.eq(final_ready)
                with m.If(absorb):
                    m.d.sync += tag_keep.eq(item.keep)
                    with m.If(decrypting):
                        goto("Check")
                    with m.Else():
                        goto("Report")

            with m.State("Check"):
                mismatch = (ghash.operand & byte_mask(tag_keep)).any()
                with m.If(~ghash.busy):
                    # Tags shorter than MIN_TAG_BYTES never pass.
                    m.d.sync += authentic.eq(~mismatch & tag_keep[16 - MIN_TAG_BYTES])
                    m.d.comb += clear.eq(1)
                    goto("Clear")

            with m.State("Clear"):
                # The sum would show the computed tag: replace it by 0 + 0.
                absorb_alone(final=1)
                with m.If(absorb):
                    goto("Report")

            with m.State("Report"):
                m.d.comb += self.tag.valid.eq(~ghash.busy)
                with m.If(self.tag.valid & self.tag.ready):
                    goto("Idle")

        return m
