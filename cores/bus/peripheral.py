"""A Wishbone B4 peripheral around a block-cipher core and its modes of operation.

Four parts, each a component of its own: the register file generated from the register map
(:class:`~cipher_cores.cores.bus.registers.RegisterFile`), the message sequencer with the
modes, GCM and the cores (:class:`~cipher_cores.cores.bus.sequencer.MessageSequencer`), the
scrubber that ``CTRL.CLEAR`` runs (:class:`~cipher_cores.cores.bus.scrubber.Scrubber`, inside the
sequencer), and optional data FIFOs; this module connects them.
"""

from amaranth.hdl import Cat, Module, Mux, ResetInserter, Signal
from amaranth.lib import fifo, wiring
from amaranth.lib.wiring import In, Out

from ..cipher import check_block_cipher
from ..gcm import GCM
from ..modes import Mode
from ..randomized import DEFAULT_SEED, RandomizedCore, check_seed
from . import regmap
from .axi import AXI4LiteSignature, AXI4LiteToWishbone
from .dma import WishboneDMA
from .registers import RegisterFile
from .sequencer import GCM_MODE, MessageSequencer
from .shared import CoreSelect, CorePort, SharedCore
from .wishbone import WishboneSignature


__all__ = ["CoreSelect", "CorePort", "SharedCore", "CipherPeripheral", "GCM_MODE", "PROTOCOLS"]


assert GCM_MODE == next(value for name, value, _ in regmap.register("CTRL").field("MODE").values
                        if name == "GCM")

#: What a build without GCM does not have.
_GCM_ONLY = ("AAD_BYTES", "TEXT_BYTES", "TAG", "TAG_EXPECTED", "CTRL.TAG_BYTES",
             "STATUS.TAG_READY", "STATUS.AUTHENTIC", "ERROR.AUTH_FAIL", "IRQ_ENABLE.TAG_READY",
             "IRQ_PENDING.TAG_READY")
#: What a build without the DMA master does not have.
_DMA_ONLY = ("DMA_SOURCE", "DMA_DESTINATION", "CTRL.DMA", "ERROR.DMA_BUS", "ERROR.DMA_ALIGN")
#: What a build without a masked core does not have.
_RNG_ONLY = ("RNG_SEED", "INFO.RNG")


#: The bus protocols the peripheral speaks (``protocol``), and what each is.
PROTOCOLS = {
    "wishbone": "Wishbone B4 classic target (bus errors flagged in ERROR, acknowledged)",
    "axi4-lite": "AXI4-Lite subordinate (bus errors flagged in ERROR and answered SLVERR)",
}


def _byte_swapped(word):
    return Cat(*(word[8 * (3 - i):8 * (4 - i)] for i in range(4)))


class CipherPeripheral(wiring.Component):
    """A Wishbone B4 classic target that encrypts and decrypts messages with a core and its modes
    of operation, with optional data FIFOs and an interrupt. The register map is
    :data:`cipher_cores.cores.bus.regmap.REGISTERS` (the tables in ``docs/wishbone.md``, the C header
    ``cores/soc/firmware/cipher_wishbone.h``).

    Parameters
    ----------
    cores : a core, or a sequence of 1 to 4 cores
        Cores (:class:`~cipher_cores.cores.cipher.BlockCipher`), one block size within the limits
        of :meth:`check_limits` (a multiple of 32 bits, at most 128; keys of at most 256 bits);
        ``CTRL.KEYSEL`` picks one (for example ``[AES(128), AES(256)]`` for two key sizes).
        Encrypt-only cores (``decrypt=False``) refuse ECB and CBC decryption
        (``ERROR.UNSUPPORTED``). A masked core (``random_bits`` > 0) is wrapped in a
        :class:`~cipher_cores.cores.randomized.RandomizedCore` (a PRNG of its own, seeded with
        ``rng_seed`` at reset), and the build has the ``RNG_SEED`` registers to reseed it.
    modes : sequence of :class:`~cipher_cores.cores.modes.Mode`
        The modes to build (all by default).
    fifo_words : :class:`int`
        Depth of the input and of the output FIFO, in words: 0 (the default) for none, or one
        block to 255 words. Without FIFOs, ``DIN`` words go straight into the block register
        (one block can wait there, also before ``START``) and ``DOUT`` words come straight out
        of the result register; a FIFO is a memory with a registered read port
        (:class:`~amaranth.lib.fifo.SyncFIFOBuffered`), which synthesis puts in block RAM, for
        firmware that writes several blocks ahead.
    gcm : :class:`bool`
        Also build AES-GCM (``CTRL.MODE`` = :data:`GCM_MODE`) around the same cores, which must
        have 128-bit blocks. Without it the registers GCM adds are unmapped
        (``ERROR.BAD_ADDRESS``).
    protocol : :class:`str`
        The register interface's bus, one of :data:`PROTOCOLS`: ``"wishbone"`` (the default)
        or ``"axi4-lite"``. The registers and their behaviour are the same; on AXI4-Lite an
        access that the map flags (``ERROR.BAD_ADDRESS``, ``READ_ONLY``, ``BUSY_WRITE``) also
        gets the response ``SLVERR`` (:class:`~cipher_cores.cores.bus.axi.AXI4LiteToWishbone`:
        no edge added to an access). The DMA master is a Wishbone initiator: ``dma`` needs
        ``"wishbone"``.
    rng_seed : :class:`int`
        With a masked core: the seed its PRNG takes at reset and at ``CTRL.CLEAR``, 0..2**160-1
        (:data:`~cipher_cores.cores.randomized.DEFAULT_SEED` by default). A constant seed gives
        repeatable masks, not secret ones: firmware reseeds through ``RNG_SEED0..4`` from a
        true random source (see "Masked cores" below).

    Members
    -------
    bus : ``In(WishboneSignature(addr_width=6, data_width=32, granularity=8))``
        The register interface; with ``protocol="axi4-lite"``
        ``In(AXI4LiteSignature(addr_width=8, data_width=32))`` (byte addresses).
    irq : ``Out(1)``
        High while a condition of ``IRQ_PENDING`` is true (``IRQ_ENABLE`` and the condition).

    Operation
    ---------
    Firmware writes the key (``KEY``), the IV (``IV``), the length in blocks (``LENGTH``), and
    ``CTRL`` with ``START`` and the mode, direction and key size, in any order (``START`` last);
    message words go into ``DIN`` (before or after ``START``), results come out of ``DOUT``,
    one block's words most significant first. ``STATUS.BUSY`` is high from ``START`` until the
    last result has left the result register (into the output FIFO, or read from ``DOUT``);
    while busy, key, IV, ``LENGTH`` and ``CTRL`` writes are refused (and flagged), so nothing
    is ever half-applied; ``STATUS.DONE`` rises as ``BUSY`` falls. When the output is full the
    core holds its result: nothing is dropped. The ``IV`` registers (write-only) are the
    chaining register: after a message they hold the value that continues it.

    AES-GCM (``gcm=True``)
    ----------------------
    One core, two users: the modes and :class:`~cipher_cores.cores.gcm.GCM` (with its default
    GHASH) each take a :class:`CorePort` of a :class:`SharedCore`; the sequencer points the
    share at the user of the message at ``START``. The modes load the key only if it (or
    ``KEYSEL``) changed since the core's last load, GCM only if it changed since GCM's own last
    load (H = E_K(0) and GHASH's tables belong to a key).

    Firmware writes the key, the 96-bit IV in ``IV3..IV1`` (IV bytes 0..3 in ``IV3``; ``IV0``
    unused), ``AAD_BYTES`` and ``TEXT_BYTES`` (any byte counts, 0 included), and to decrypt
    ``TAG_EXPECTED`` (and ``CTRL.TAG_BYTES`` for a tag of 4 to 15 bytes), then ``CTRL`` with
    ``MODE`` GCM, ``DECRYPT`` and ``START``. ``LENGTH`` is not used. The AAD and then the text go
    into ``DIN`` in whole blocks, each part's last block padded with any bytes (a part of 0
    bytes takes no block); a result block per text block comes out of ``DOUT``, zero past the
    text. ``STATUS.TAG_READY`` (interrupt ``TAG_READY``) rises as ``BUSY`` falls: ``TAG0..TAG3``
    hold the tag of an encryption; after a decryption they read 0 and ``STATUS.AUTHENTIC`` says
    whether the tag matched (a mismatch also sets ``ERROR.AUTH_FAIL``). A decryption's
    plaintext leaves through ``DOUT`` before its tag is checked: firmware must hold it until
    ``AUTHENTIC``. ``START`` (any mode) and ``CLEAR`` clear ``TAG_READY``, ``AUTHENTIC`` and
    ``TAG``.

    Cycle behaviour
    ---------------
    Every access takes two edges (registered ``ack``; ``ack`` is low for at least one edge
    between accesses); a write lands on the edge that acknowledges it. ``START`` acts three
    edges after its write is taken (the write lands, the START strobe follows, the start's
    decisions are registered: all from flip-flops); it loads the key into the
    core first if it changed since the last load (or ``KEYSEL`` did): the core's key-load time.
    A block enters the core on the edge after its last word arrives in the block register
    (a FIFO's read register adds one edge), and its result is in the result register on the
    the edge the core gives it; the next block enters on the edge after the result left (CBC
    and CFB encryption and OFB: two edges after). One block is in the core at a time.

    ``CTRL.CLEAR`` aborts whatever is running and zeroizes: the key, IV and configuration
    registers, the block registers, the core (reset, then loaded with an all-zero key and given
    two all-zero blocks), GCM (reset and loaded with the zero key) and both FIFOs' storage
    (filled with zeros, then emptied). ``STATUS.BUSY`` is high until it is done.

    Masked cores
    ------------
    A masked core takes fresh random bits from a PRNG (Trivium,
    :class:`~cipher_cores.cores.prng.PRNG`) inside its
    :class:`~cipher_cores.cores.randomized.RandomizedCore`; ``INFO.RNG`` is set. After reset and
    after ``CTRL.CLEAR`` (which resets the core) the PRNG starts from ``rng_seed``, so the masks
    repeat from one reset to the next: firmware writes a seed from a true random source into
    ``RNG_SEED0..RNG_SEED4`` (the write of ``RNG_SEED4`` reseeds, on the edge after it lands,
    every masked core's PRNG with the five words; at any time, also while busy). After each
    seed the PRNG warms up for ceil(1152 / width) edges (8 for the masked PRESENT-80 and
    AES-128), in which the core stalls where it needs random bits; results do not change.
    Without a masked core the ``RNG_SEED`` registers do not exist (unmapped; no flip-flops).
    """
    #: Width of the bus's word address (:data:`~cipher_cores.cores.bus.regmap.ADDRESS_BYTES` / 4).
    ADDRESS_WIDTH = (regmap.ADDRESS_BYTES // 4 - 1).bit_length()

    def __init__(self, cores, *, modes=tuple(Mode), fifo_words: int = 0, gcm: bool = False,
                 dma: bool = False, verified_plaintext: bool = False,
                 protocol: str = "wishbone", rng_seed: int = DEFAULT_SEED):
        if isinstance(cores, wiring.Component):
            cores = (cores,)
        try:
            cores = tuple(cores)
        except TypeError:
            raise TypeError(f"cores must be a core or a sequence of cores, not {cores!r}") \
                from None
        if not 1 <= len(cores) <= 4:
            raise ValueError(f"cores must hold 1 to 4 cores, not {len(cores)}")
        for index, core in enumerate(cores):
            check_block_cipher(core, f"cores[{index}]")
        block_bits = cores[0].block_bits
        if any(core.block_bits != block_bits for core in cores):
            raise ValueError("all cores must have the same block size")
        try:
            modes = tuple(modes)
        except TypeError:
            raise TypeError(f"modes must be a sequence of Mode, not {modes!r}") from None
        if not modes or not all(isinstance(mode, Mode) for mode in modes):
            raise TypeError(f"modes must be a non-empty sequence of Mode, not {modes!r}")
        if len(set(modes)) != len(modes):
            raise ValueError(f"modes must not repeat a mode: {modes!r}")
        widest = max(cores, key=lambda core: core.key_bits)
        if fifo_words is None:
            fifo_words = 0
        self.check_limits(block_bits, widest.key_bits, fifo_words=fifo_words, gcm=gcm,
                          dma=dma, verified_plaintext=verified_plaintext,
                          protocol=protocol, core=type(widest).__name__)
        check_seed(rng_seed, "rng_seed")
        self._protocol = protocol
        self._verified = verified_plaintext
        # Masked cores get a PRNG each, behind the plain core interface.
        cores = tuple(RandomizedCore(core, seed=rng_seed) if core.random_bits else core
                      for core in cores)
        self._randomized = tuple(core for core in cores if isinstance(core, RandomizedCore))
        self._cores = cores
        self._fifo_words = fifo_words
        self._block_words = words = block_bits // 32
        self._key_words = -(-widest.key_bits // 32)
        self._sequencer = MessageSequencer(cores, modes=modes, gcm=gcm, fifos=fifo_words > 0)
        absent = set() if gcm else set(_GCM_ONLY)
        if dma:
            # GCM's word counts reach 2**30 (the whole address space); the modes' 2**16 blocks.
            self._dma = WishboneDMA(count_bits=30 if gcm else 18)
        else:
            self._dma = None
            absent |= set(_DMA_ONLY)
        absent |= {f"KEY{i}" for i in range(self._key_words, regmap.register("KEY").count)}
        absent |= {f"IV{i}" for i in range(words, regmap.register("IV").count)}
        if not self._randomized:
            absent |= set(_RNG_ONLY)
        self._registers = RegisterFile(absent=absent, bus_errors=protocol == "axi4-lite")
        if fifo_words:
            self._din = fifo.SyncFIFOBuffered(width=32, depth=fifo_words)
            self._dout = fifo.SyncFIFOBuffered(width=32, depth=fifo_words)
        else:
            self._din = self._dout = None
        if protocol == "axi4-lite":
            self._bridge = AXI4LiteToWishbone(addr_width=self.ADDRESS_WIDTH)
            bus = AXI4LiteSignature(addr_width=self.ADDRESS_WIDTH + 2, data_width=32)
        else:
            self._bridge = None
            bus = WishboneSignature(addr_width=self.ADDRESS_WIDTH, data_width=32, granularity=8)
        members = {"bus": In(bus), "irq": Out(1)}
        if dma:
            members["dma"] = Out(self._dma.signature.members["bus"].signature)
        super().__init__(members)

    @staticmethod
    def check_limits(block_bits: int, key_bits: int, *, fifo_words: int | None = None,
                     gcm: bool = False, dma: bool = False, verified_plaintext: bool = False,
                     protocol: str = "wishbone", core: str = "the core"):
        """Check that the peripheral can be built around cores of ``block_bits`` and (at most)
        ``key_bits``, with ``fifo_words`` (``None``: the default) and ``gcm``; raise
        :exc:`ValueError` or :exc:`TypeError` (one line, naming ``core`` or the parameter) if
        not. The constructor asks this, and so does the build flow before it builds anything
        (:class:`~cipher_cores.scripts.flow.targets.PeripheralConfig`).

        The limits: a block is one to four 32-bit words (``DIN``/``DOUT`` move whole words), a
        key at most 256 bits (eight ``KEY`` registers), a FIFO holds one block to 255 words (or
        there is none: 0),
        GCM needs 128-bit blocks, and verified plaintext needs GCM and an output FIFO.
        """
        if block_bits % 32 or not 0 < block_bits <= 128:
            raise ValueError(f"the Wishbone peripheral takes blocks of 32, 64, 96 or 128 bits; "
                             f"{core} has {block_bits}")
        if key_bits > 256:
            raise ValueError(f"the Wishbone peripheral takes keys of at most 256 bits; "
                             f"{core} has {key_bits}")
        if fifo_words is not None:
            if not isinstance(fifo_words, int) or isinstance(fifo_words, bool):
                raise TypeError(f"fifo_words must be an integer, not {fifo_words!r}")
            words = block_bits // 32
            if not (fifo_words == 0 or words <= fifo_words <= 255):
                raise ValueError(f"fifo_words must be 0 (no FIFO) or from {words} (one block) "
                                 f"to 255, not {fifo_words}")
        if not isinstance(gcm, bool):
            raise TypeError(f"gcm must be True or False, not {gcm!r}")
        if gcm and block_bits != 128:
            raise ValueError(f"gcm=True needs cores with 128-bit blocks (AES), not "
                             f"{block_bits}-bit ones")
        for name, value in (("dma", dma), ("verified_plaintext", verified_plaintext)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, not {value!r}")
        if not isinstance(protocol, str) or protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(map(repr, PROTOCOLS))}, not "
                             f"{protocol!r}")
        if dma and protocol != "wishbone":
            raise ValueError(f"dma=True needs protocol='wishbone' (the DMA master is a "
                             f"Wishbone initiator), not {protocol!r}")
        if verified_plaintext and not gcm:
            raise ValueError("verified_plaintext=True needs gcm=True")
        if verified_plaintext and not fifo_words:
            raise ValueError("verified_plaintext=True needs an output FIFO (fifo_words of at "
                             "least one block) to hold the plaintext until the tag is checked")

    @property
    def protocol(self) -> str:
        """The register interface's bus (a key of :data:`PROTOCOLS`)."""
        return self._protocol

    @property
    def cores(self) -> tuple:
        """The cores behind ``CTRL.KEYSEL``, each masked one inside its
        :class:`~cipher_cores.cores.randomized.RandomizedCore`."""
        return self._cores

    @property
    def randomized_cores(self) -> tuple:
        """The :class:`~cipher_cores.cores.randomized.RandomizedCore` of each masked core (empty
        without one): their ``core.random`` streams are what the masked cores take."""
        return self._randomized

    @property
    def gcm(self) -> GCM | None:
        """The :class:`~cipher_cores.cores.gcm.GCM` sharing the core with the modes, or ``None``
        (not built)."""
        return self._sequencer.gcm

    @property
    def sequencer(self) -> MessageSequencer:
        return self._sequencer

    @property
    def registers(self) -> RegisterFile:
        return self._registers

    @property
    def engine(self):
        """The core as the modes see it (a :class:`~cipher_cores.cores.cipher.BlockCipher`: the
        core, a :class:`CoreSelect` or a :class:`CorePort`), to watch its streams."""
        return self._sequencer.cipher

    @property
    def fifo_words(self) -> int:
        return self._fifo_words

    @property
    def block_words(self) -> int:
        return self._block_words

    @property
    def buffer_words(self) -> int:
        """Words ``DIN`` takes ahead of the core: the input FIFO and the block register."""
        return self._fifo_words + self._block_words

    def secret_state(self) -> dict:
        """The registers that hold key, IV or message material, by name, for inspection in
        simulation (``CTRL.CLEAR`` zeroes them all)."""
        regs = self._registers
        state = dict(self._sequencer.secret_state())
        state["key"] = Cat(*(getattr(regs, f"key{i}").as_value()
                             for i in range(self._key_words)))
        if self.gcm is not None:
            state["tag"] = self._sequencer.tag
            state["tag_expected"] = Cat(*(getattr(regs, f"tag_expected{i}").as_value()
                                          for i in range(4)))
        return state

    def dma_state(self) -> dict:
        """The DMA master's registers (addresses, counts, data), by name, for inspection in
        simulation (``CTRL.CLEAR`` zeroes them); empty without ``dma``."""
        return {} if self._dma is None else dict(self._dma.secret_state())

    def fifo_storage(self) -> dict:
        """The data FIFOs (their memories are found in the elaborated design by tests)."""
        return {} if self._din is None else {"din": self._din, "dout": self._dout}

    def elaborate(self, platform):
        m = Module()
        words, depth = self._block_words, self._fifo_words
        m.submodules.registers = regs = self._registers
        m.submodules.sequencer = seq = self._sequencer
        if self._bridge is not None:
            m.submodules.bridge = bridge = self._bridge
            wiring.connect(m, wiring.flipped(self.bus), bridge.axi)
            wiring.connect(m, bridge.wishbone, regs.bus)
        else:
            wiring.connect(m, wiring.flipped(self.bus), regs.bus)
        gcm = seq.gcm

        ctrl = regs.ctrl
        m.d.comb += [
            regs.clear.eq(ctrl.clear),
            seq.clear.eq(ctrl.clear),
            seq.config.mode.eq(ctrl.mode),
            seq.config.decrypt.eq(ctrl.decrypt),
            seq.config.keysel.eq(ctrl.keysel),
            seq.config.blocks.eq(regs.length.blocks),
            seq.key.eq(Cat(*(getattr(regs, f"key{i}").value for i in range(self._key_words)))),
            seq.key_changed.eq(Cat(*(getattr(regs, f"key{i}_write")
                                     for i in range(self._key_words))).any()),
            seq.iv_data.eq(regs.write_data),
            seq.iv_sel.eq(regs.write_sel),
        ]
        for i in range(words):
            m.d.comb += seq.iv_write[i].eq(getattr(regs, f"iv{i}_write"))
        if gcm is not None:
            m.d.comb += [
                seq.config.tag_bytes.eq(ctrl.tag_bytes),
                seq.config.aad_bytes.eq(regs.aad_bytes.bytes),
                seq.config.text_bytes.eq(regs.text_bytes.bytes),
                seq.tag_expected.eq(Cat(*(getattr(regs, f"tag_expected{i}").value
                                          for i in range(4)))),
            ]
            for i in range(4):
                m.d.comb += getattr(regs, f"tag{i}").value.eq(seq.tag[32 * i:32 * i + 32])

        busy = Signal()
        scrubbing = seq.scrubbing
        errors = regs.error_set
        dma = self._dma

        # START reaches the sequencer unless the DMA or verified plaintext refuse it.
        start = Signal()
        refuse = Signal()
        too_long_refused = Signal()
        if dma is not None:
            misaligned = ctrl.dma & (regs.dma_source.address[:2].any() |
                                     regs.dma_destination.address[:2].any())
            with m.If(ctrl.start & misaligned):
                m.d.comb += [refuse.eq(1), errors.dma_align.eq(1)]
        if self._verified:
            # The whole plaintext must fit in the output FIFO to be held there.
            capacity = 16 * (depth // 4)
            too_long = ((ctrl.mode == GCM_MODE) & ctrl.decrypt &
                        (regs.text_bytes.bytes > capacity))
            with m.If(ctrl.start & too_long):
                m.d.comb += [refuse.eq(1), too_long_refused.eq(1)]
        m.d.comb += [start.eq(ctrl.start & ~refuse), seq.start.eq(start)]

        discard = Signal()          # a verified decryption failed: drop its plaintext
        # The DMA moves the words of a message started with CTRL.DMA.
        moving = Signal()           # the DMA owns the word paths
        if dma is not None:
            m.submodules.dma = dma
            wiring.connect(m, dma.bus, wiring.flipped(self.dma))
            m.d.comb += [busy.eq(seq.busy | dma.busy), moving.eq(ctrl.dma & busy)]
            if gcm is not None:
                def blocks(count):
                    return count[4:] + count[:4].any()
                gcm_in = (blocks(regs.aad_bytes.bytes) + blocks(regs.text_bytes.bytes)) << 2
                gcm_out = blocks(regs.text_bytes.bytes) << 2
                is_gcm = ctrl.mode == GCM_MODE
                read_count = Mux(is_gcm, gcm_in, regs.length.blocks * words)
                write_count = Mux(is_gcm, gcm_out, regs.length.blocks * words)
            else:
                read_count = write_count = regs.length.blocks * words
            m.d.comb += [
                dma.source.eq(regs.dma_source.address),
                dma.destination.eq(regs.dma_destination.address),
                dma.read_count.eq(read_count),
                dma.write_count.eq(write_count),
                dma.start.eq(seq.started & ctrl.dma),
                # CLEAR, or a verified decryption's plaintext being discarded, stops it.
                dma.abort.eq(ctrl.clear | discard),
                errors.dma_bus.eq(dma.bus_error),
            ]
        else:
            m.d.comb += busy.eq(seq.busy)
        m.d.comb += regs.busy.eq(busy)

        def in_order(word):
            # CTRL.LITTLE_ENDIAN: words hold a block's bytes as a little-endian CPU loads them.
            return Mux(ctrl.little_endian, _byte_swapped(word), word)

        # Verified plaintext: a GCM decryption's results stay in the output FIFO until its tag
        # is checked; if it does not match they are overwritten with zeros and dropped.
        holding = Signal()
        discarding = Signal()
        if self._verified:
            with m.If(seq.started & (ctrl.mode == GCM_MODE) & ctrl.decrypt):
                m.d.sync += holding.eq(1)
            with m.If(seq.tag_ready & seq.authentic):
                m.d.sync += holding.eq(0)
            # Discarding: the output FIFO is emptied (the edge of `discard`), filled with zeros
            # (every entry of its storage is overwritten) and emptied again.
            m.d.comb += discard.eq(seq.auth_fail & holding)
            with m.If(discard):
                m.d.sync += discarding.eq(1)
            with m.If(ctrl.clear):
                m.d.sync += [holding.eq(0), discarding.eq(0)]

        # Words in: DIN writes (or the DMA's reads), through the input FIFO if there is one.
        din_write = regs.din_write
        din_push = Signal()
        m.d.comb += din_push.eq(din_write & (regs.write_sel == 0b1111) & ~scrubbing & ~moving)
        room = Signal()
        word = Signal(32)
        pushed = Signal()
        if dma is not None:
            m.d.comb += [word.eq(in_order(Mux(moving, dma.read_words.payload,
                                              regs.write_data))),
                         pushed.eq(Mux(moving, dma.read_words.valid, din_push))]
        else:
            m.d.comb += [word.eq(in_order(regs.write_data)), pushed.eq(din_push)]
        if self._din is not None:
            m.submodules.din = din = ResetInserter(seq.empty)(self._din)
            din = self._din
            m.d.comb += [
                room.eq(din.w_rdy),
                din.w_en.eq((pushed & din.w_rdy) | seq.fill),
                din.w_data.eq(Mux(seq.fill, 0, word)),
                seq.word_in.valid.eq(din.r_rdy),
                seq.word_in.payload.eq(din.r_data),
                din.r_en.eq(seq.word_in.ready),
            ]
            in_free = depth - din.w_level
            in_space = din.w_level <= depth - words
        else:
            m.d.comb += [
                room.eq(seq.word_in.ready),
                seq.word_in.valid.eq(pushed),
                seq.word_in.payload.eq(word),
            ]
            in_free = words - seq.in_words
            in_space = seq.in_words == 0
        if dma is not None:
            m.d.comb += dma.read_words.ready.eq(moving & room)
        with m.If(din_write):
            with m.If(regs.write_sel != 0b1111):
                m.d.comb += errors.byte_select.eq(1)
            with m.Elif(scrubbing | moving):
                m.d.comb += errors.busy_write.eq(1)
            with m.Elif(~room):
                m.d.comb += errors.overflow.eq(1)

        # Words out: DOUT reads (or the DMA's writes), through the output FIFO if there is one.
        dout_read = regs.dout_read
        out_valid = Signal()        # a word can leave
        out_word = Signal(32)
        taken = Signal()
        if self._dout is not None:
            m.submodules.dout = dout = ResetInserter(
                seq.empty | discard | (discarding & ~self._dout.w_rdy))(self._dout)
            dout = self._dout
            filling = seq.fill | discarding
            m.d.comb += [
                dout.w_en.eq(seq.word_out.valid | filling),
                dout.w_data.eq(Mux(discarding, 0, seq.word_out.payload)),
                seq.word_out.ready.eq(dout.w_rdy & ~filling),
                out_valid.eq(dout.r_rdy & ~scrubbing & ~holding),
                out_word.eq(dout.r_data),
                dout.r_en.eq(taken),
            ]
            if self._verified:
                with m.If(discarding & ~dout.w_rdy):
                    m.d.sync += [discarding.eq(0), holding.eq(0)]
            out_words = dout.r_level
            out_ready = dout.r_level >= words
            m.d.comb += seq.filled.eq(~din.w_rdy & ~dout.w_rdy)
        else:
            m.d.comb += [
                out_valid.eq(seq.word_out.valid & ~scrubbing),
                out_word.eq(seq.word_out.payload),
                seq.word_out.ready.eq(taken),
            ]
            out_words = seq.out_words
            out_ready = seq.out_words == words
        if dma is not None:
            m.d.comb += [
                dma.write_words.valid.eq(moving & out_valid),
                dma.write_words.payload.eq(in_order(out_word)),
                taken.eq(Mux(moving, dma.write_words.ready, dout_read & out_valid)),
            ]
        else:
            m.d.comb += taken.eq(dout_read & out_valid)
        m.d.comb += regs.dout.value.eq(Mux(out_valid & ~moving, in_order(out_word), 0))
        with m.If(dout_read & ~(out_valid & ~moving)):
            m.d.comb += errors.underflow.eq(1)

        m.d.comb += [errors.no_key.eq(seq.no_key),
                     errors.unsupported.eq(seq.unsupported | too_long_refused)]
        if gcm is not None:
            m.d.comb += errors.auth_fail.eq(seq.auth_fail)

        # STATUS.DONE: set as BUSY falls, cleared by START.
        done = Signal()
        was_busy = Signal()
        m.d.sync += was_busy.eq(busy)
        with m.If(was_busy & ~busy):
            m.d.sync += done.eq(1)
        with m.If(ctrl.start & ~busy):
            m.d.sync += done.eq(0)

        status_in_space = Signal()
        status_out_ready = Signal()
        error_any = Signal()
        hidden = Signal()           # no word can be read from DOUT now
        m.d.comb += hidden.eq(scrubbing | holding | moving)
        m.d.comb += [status_in_space.eq(in_space & ~scrubbing & ~moving),
                     status_out_ready.eq(out_ready & ~hidden),
                     error_any.eq(regs.error.as_value().any())]
        status = regs.status
        m.d.comb += [
            status.busy.eq(busy | seq.status_busy), status.in_space.eq(status_in_space),
            status.out_ready.eq(status_out_ready), status.key_set.eq(seq.key_set),
            # (A START about to act hides the last message's DONE and tag at once.)
            status.error.eq(error_any), status.done.eq(done & ~ctrl.start),
            status.in_free.eq(Mux(scrubbing | moving, 0, in_free)),
            status.out_words.eq(Mux(hidden, 0, out_words)),
        ]
        irq_enable = regs.irq_enable
        pending = regs.irq_pending
        m.d.comb += [
            pending.out_ready.eq(status_out_ready & irq_enable.out_ready),
            pending.in_space.eq(status_in_space & irq_enable.in_space),
            pending.error.eq(error_any & irq_enable.error),
            pending.done.eq(done & ~ctrl.start & irq_enable.done),
        ]
        if gcm is not None:
            tag_ready = seq.tag_ready & ~ctrl.start
            m.d.comb += [status.tag_ready.eq(tag_ready),
                         status.authentic.eq(seq.authentic & ~ctrl.start),
                         pending.tag_ready.eq(tag_ready & irq_enable.tag_ready)]
        m.d.sync += self.irq.eq(pending.as_value().any())

        # Reseeding: the write of the last RNG_SEED word strobes every PRNG on the edge after it
        # lands (the five words are then all in their registers).
        if self._randomized:
            seed_words = regmap.register("RNG_SEED").count
            reseed = Signal()
            m.d.sync += reseed.eq(getattr(regs, f"rng_seed{seed_words - 1}_write"))
            seed = Cat(*(getattr(regs, f"rng_seed{i}").value for i in range(seed_words)))
            for core in self._randomized:
                m.d.comb += [core.reseed.valid.eq(reseed), core.reseed.payload.eq(seed)]
            m.d.comb += regs.info.rng.eq(1)

        # What this build is.
        cores = self._cores
        built = sum(1 << mode.value for mode in seq.modes) | \
            (0 if gcm is None else 1 << GCM_MODE)
        m.d.comb += [
            regs.info.block_words.eq(words), regs.info.modes.eq(built),
            regs.info.decrypts.eq(sum(1 << i for i, core in enumerate(cores) if core.decrypts)),
            regs.info.fifo_words.eq(depth),
            regs.info.dma.eq(dma is not None),
            regs.info.verified.eq(self._verified),
            regs.keysizes.as_value().eq(sum(-(-core.key_bits // 8) << (8 * i)
                                            for i, core in enumerate(cores))),
        ]
        return m
