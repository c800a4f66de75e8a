"""Modes of operation (NIST SP 800-38A) around any core with a block-cipher stream interface.

:class:`ModeOfOperation` wraps one core (any :class:`~cipher_cores.cores.cipher.BlockCipher`, any
block size) and runs ECB, CBC, CFB (full-block feedback), OFB and CTR over messages: streams of
blocks with first/last markers, the IV (or initial counter block) arriving with the first block.
:class:`ECB`, :class:`CBC`, :class:`CFB`, :class:`OFB` and :class:`CTR` are the same component
fixed to one mode.
"""

from amaranth.hdl import C, Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from ..cipher import BlockCipher, check_block_cipher, check_unmasked


__all__ = ["Mode", "ModeRequest", "ModeResult", "ModeOfOperation",
           "ECB", "CBC", "CFB", "OFB", "CTR"]


class Mode(enum.Enum, shape=3):
    """A mode of operation. The values are the ones the Wishbone peripheral's ``CTRL.MODE`` field
    takes."""
    ECB = 0
    CBC = 1
    CFB = 2
    OFB = 3
    CTR = 4


class ModeRequest(data.StructLayout):
    """Payload of a mode's ``input`` stream: one block of a message.

    Fields
    ------
    block : ``unsigned(block_bits)``
        Plaintext (encrypting) or ciphertext (decrypting).
    iv : ``unsigned(block_bits)``
        The IV (CBC, CFB, OFB) or initial counter block (CTR); read only with ``first``.
    decrypt : ``unsigned(1)``
        The message's direction; read only with ``first`` (it holds for the whole message).
    first : ``unsigned(1)``
        This block starts a new message: the chaining value restarts from ``iv``.
    last : ``unsigned(1)``
        This block ends its message (passed through to the result; the mode needs no end marker).
    """
    def __init__(self, block_bits: int):
        super().__init__({
            "block": unsigned(block_bits), "iv": unsigned(block_bits),
            "decrypt": unsigned(1), "first": unsigned(1), "last": unsigned(1),
        })


class ModeResult(data.StructLayout):
    """Payload of a mode's ``output`` stream: one result block, with its request's
    ``first``/``last`` markers."""
    def __init__(self, block_bits: int):
        super().__init__({"block": unsigned(block_bits), "first": unsigned(1),
                          "last": unsigned(1)})


class ModeOfOperation(wiring.Component):
    """ECB, CBC, CFB, OFB and CTR around a block-cipher core.

    Every mode follows NIST SP 800-38A. CFB is the full-block variant (CFB-b: CFB128 for AES,
    CFB64 for PRESENT). In CTR the whole block is the counter, a big-endian integer incremented
    by one per block modulo ``2**block_bits`` (for AES, the last byte of the counter block is the
    least significant, as in SP 800-38A and RFC 3686).

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        The block cipher (anything else: :exc:`TypeError`); it becomes a submodule. CFB, OFB and
        CTR only ever send it blocks to encrypt (``decrypt`` = 0), so they work with encrypt-only
        cores such as ``PRESENT(decrypt=False)``; ECB and CBC decryption need a core that
        decrypts (:attr:`~cipher_cores.cores.cipher.BlockCipher.decrypts`).
    modes : sequence of :class:`Mode`
        The modes to build (all five by default). With more than one, the ``mode`` port chooses.
    depth : :class:`int`
        Blocks the component can hold between a block entering the core and its result leaving
        (at least 2). 2 keeps the full rate of every core of this library (one block in the
        core while its predecessor's result leaves); a pipelined core needs its pipeline depth
        plus one.

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        Passed straight to the core's ``key`` stream (a key transfers once the core is idle).
    input : ``In(stream.Signature(ModeRequest(block_bits)))``
        The message blocks, in order. A block with ``first`` starts a new message from its
        ``iv``, in the direction of its ``decrypt`` (and the mode on the ``mode`` port): a message
        may start at any time, with no flush in between, whatever the previous one left.
    output : ``Out(stream.Signature(ModeResult(block_bits)))``
        One result per block, in order: ciphertext when encrypting, plaintext when decrypting.
        Only results ever appear here, never a chaining value or keystream.
    mode : ``In(Mode)``
        Only when more than one mode is built: the mode of a message, read with its first block.

    Byte order
    ----------
    As everywhere in the library, a block is an integer whose most significant byte is the first
    byte of the block in the byte order of the cipher's standard (FIPS-197 for AES), so message
    byte ``i`` of a block is bits ``block_bits - 8*i - 1 .. block_bits - 8*i - 8``.

    Cycle behaviour
    ---------------
    No register sits between the streams and the core: a block enters the core on the edge it
    transfers in, and its result leaves on the edge the core's result does, so the latency is the
    core's. With ``I`` the core's initiation interval and ``output.ready`` held high:

    * ECB, CTR, CBC decryption and CFB decryption keep the core's rate: one block every ``I``
      edges (the next block enters on the edge the previous result leaves). Nothing in these
      directions feeds a result back.
    * CBC encryption, CFB encryption and OFB feed each result back into the next block. The
      feedback is registered (every core has a combinational path from ``output.ready`` to
      ``input.ready``, so a direct path would be a loop): the chaining register takes the result
      on the edge it leaves and the next block enters one edge later, so one block every
      ``I + 1`` edges.

    The first block of a message waits, in the serial directions, for the previous message's last
    result to leave; otherwise a new message follows the last one at the same rate.
    """
    def __init__(self, core, *, modes=tuple(Mode), depth: int = 2):
        check_block_cipher(core, "core")
        check_unmasked(core, "ModeOfOperation")
        try:
            modes = tuple(modes)
        except TypeError:
            raise TypeError(f"modes must be a sequence of Mode, not {modes!r}") from None
        for mode in modes:
            if not isinstance(mode, Mode):
                raise TypeError(f"modes must be a sequence of Mode, not {modes!r}")
        if not modes:
            raise ValueError("modes must name at least one Mode")
        if len(set(modes)) != len(modes):
            raise ValueError(f"modes must not repeat a mode: {modes!r}")
        if not isinstance(depth, int) or isinstance(depth, bool):
            raise TypeError(f"depth must be an integer, not {depth!r}")
        if depth < 2:
            raise ValueError(f"depth must be at least 2, not {depth!r}")
        self._core = core
        self._modes = tuple(sorted(modes, key=lambda mode: mode.value))
        self._depth = depth
        block_bits, key_bits = core.block_bits, core.key_bits
        members = {
            "key": In(stream.Signature(unsigned(key_bits))),
            "input": In(stream.Signature(ModeRequest(block_bits))),
            "output": Out(stream.Signature(ModeResult(block_bits))),
        }
        if len(self._modes) > 1:
            members["mode"] = In(Mode)
        super().__init__(members)
        self._chain = Signal(block_bits, name="chain")

    @property
    def chain_register(self) -> Signal:
        """The chaining register (IV, previous ciphertext, keystream or counter), for
        inspection in simulation."""
        return self._chain

    @property
    def core(self) -> BlockCipher:
        return self._core

    @property
    def modes(self) -> tuple:
        return self._modes

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def block_bits(self) -> int:
        return self._core.block_bits

    @property
    def key_bits(self) -> int:
        return self._core.key_bits

    @property
    def decrypts(self) -> bool:
        """Whether the core decrypts (``False`` for an encrypt-only core: ECB and CBC then cannot
        decrypt)."""
        return self._core.decrypts

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self._core
        block_bits = self.block_bits
        modes = self._modes

        wiring.connect(m, wiring.flipped(self.key), core.key)

        # What rides beside a block from the edge it enters the core to the edge its result
        # leaves: the value XORed with the core's output, and the message markers.
        side_layout = data.StructLayout({"mask": unsigned(block_bits), "first": unsigned(1),
                                         "last": unsigned(1)})
        m.submodules.side = side = fifo.SyncFIFO(width=side_layout.size, depth=self._depth)
        side_in = data.View(side_layout, side.w_data)
        side_out = data.View(side_layout, side.r_data)

        chain = self._chain                     # IV / previous ciphertext / output / counter
        current = Signal(Mode, init=modes[0])   # mode of the message in progress
        decrypting = Signal()                   # direction of the message in progress
        feedback = Signal()                     # a result to be fed back is in the core

        request = self.input.payload
        first = request.first
        mode = Signal(Mode)
        if len(modes) > 1:
            m.d.comb += mode.eq(Mux(first, self.mode, current))
        else:
            m.d.comb += mode.eq(modes[0])
        decrypt = Mux(first, request.decrypt, decrypting)
        start = Mux(first, request.iv, chain)
        block = request.block

        def is_mode(which):
            return (mode == which) if which in modes else C(0, 1)

        ecb, cbc, cfb, ofb, ctr = (is_mode(which) for which in Mode)
        serial = Signal()
        m.d.comb += serial.eq((cbc & ~decrypt) | (cfb & ~decrypt) | ofb)

        core_block = Signal(block_bits)
        mask = Signal(block_bits)
        with m.If(ecb):
            m.d.comb += core_block.eq(block)
        with m.Elif(cbc):
            m.d.comb += [core_block.eq(Mux(decrypt, block, block ^ start)),
                         mask.eq(Mux(decrypt, start, 0))]
        with m.Else():          # CFB, OFB, CTR: the core encrypts the chaining value
            m.d.comb += [core_block.eq(start), mask.eq(block)]

        can_enter = Signal()
        m.d.comb += [
            can_enter.eq(~feedback & side.w_rdy),
            core.input.payload.block.eq(core_block),
            core.input.payload.decrypt.eq((ecb | cbc) & decrypt),
            core.input.valid.eq(self.input.valid & can_enter),
            self.input.ready.eq(core.input.ready & can_enter),
            side_in.mask.eq(mask),
            side_in.first.eq(request.first),
            side_in.last.eq(request.last),
        ]
        enter = self.input.valid & self.input.ready
        m.d.comb += side.w_en.eq(enter)
        with m.If(enter):
            m.d.sync += [current.eq(mode), decrypting.eq(decrypt), feedback.eq(serial)]
            with m.If((cbc | cfb) & decrypt):
                m.d.sync += chain.eq(block)
            with m.If(ctr):
                m.d.sync += chain.eq(start + 1)

        result = Signal(block_bits)
        m.d.comb += [
            result.eq(core.output.payload ^ side_out.mask),
            self.output.payload.block.eq(result),
            self.output.payload.first.eq(side_out.first),
            self.output.payload.last.eq(side_out.last),
            self.output.valid.eq(core.output.valid),
            core.output.ready.eq(self.output.ready),
        ]
        leave = core.output.valid & self.output.ready
        m.d.comb += side.r_en.eq(leave)
        with m.If(leave & feedback):
            # Only one block is in flight in a serial direction, so `current` is its mode.
            m.d.sync += [
                feedback.eq(0),
                chain.eq(Mux(current == Mode.CFB, result, core.output.payload)),
            ]
        return m


class _SingleMode(ModeOfOperation):
    _MODE = None

    def __init__(self, core, *, depth: int = 2):
        super().__init__(core, modes=(self._MODE,), depth=depth)


class ECB(_SingleMode):
    """Electronic codebook: each block alone. :class:`ModeOfOperation` with ``modes=(Mode.ECB,)``;
    the full rate of the core in both directions. ``iv`` is ignored."""
    _MODE = Mode.ECB


class CBC(_SingleMode):
    """Cipher block chaining. :class:`ModeOfOperation` with ``modes=(Mode.CBC,)``: encryption
    takes ``I + 1`` edges a block (registered feedback), decryption the core's ``I``."""
    _MODE = Mode.CBC


class CFB(_SingleMode):
    """Full-block cipher feedback. :class:`ModeOfOperation` with ``modes=(Mode.CFB,)``; only
    encrypts with the core. Encryption ``I + 1`` edges a block, decryption ``I``."""
    _MODE = Mode.CFB


class OFB(_SingleMode):
    """Output feedback. :class:`ModeOfOperation` with ``modes=(Mode.OFB,)``; only encrypts with
    the core; ``I + 1`` edges a block in both directions (the keystream feeds itself)."""
    _MODE = Mode.OFB


class CTR(_SingleMode):
    """Counter mode. :class:`ModeOfOperation` with ``modes=(Mode.CTR,)``; only encrypts with the
    core, at its full rate (the counter never waits for a result)."""
    _MODE = Mode.CTR
