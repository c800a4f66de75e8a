"""A Wishbone B4 peripheral around a block-cipher core and its modes of operation."""

from amaranth.hdl import C, Cat, Const, Module, Mux, ResetInserter, Signal
from amaranth.lib import fifo, wiring
from amaranth.lib.wiring import In, Out

from ..cipher import BlockCipher, check_block_cipher
from ..gcm import GCM
from ..gcm.core import keep_bits
from ..modes import Mode, ModeOfOperation
from . import regmap
from .wishbone import WishboneSignature


__all__ = ["CoreSelect", "CorePort", "SharedCore", "CipherPeripheral", "GCM_MODE"]


#: The ``CTRL.MODE`` value of AES-GCM (after the values of :class:`~cipher_cores.cores.modes.Mode`).
GCM_MODE = next(value for name, value, _ in regmap.register("CTRL").field("MODE").values
                if name == "GCM")


class CoreSelect(BlockCipher):
    """Several cores with one block size behind one core's interface: a
    :class:`~cipher_cores.cores.cipher.BlockCipher` with the widest key.

    ``select`` routes all three streams to one core; the key stream is as wide as the widest key,
    and a core takes its low ``key_bits``. ``select`` must only change while no block is in any
    core (the peripheral changes it only when idle). No registers: latency and rates are the
    selected core's, so the figures this component states are bounds: each is the largest of
    the cores' (exact when the cores agree), and it :attr:`decrypts` only if every core does.

    Parameters
    ----------
    cores : sequence of :class:`~cipher_cores.cores.cipher.BlockCipher`
        The cores (they become submodules), all with the same block size.

    Members
    -------
    key, input, output :
        As in :class:`~cipher_cores.cores.interface.BlockCipherSignature` with the widest key.
    select : :class:`Signal` (an attribute, not a port of the signature)
        The core in use; the parent drives it.
    """
    def __init__(self, cores):
        cores = tuple(cores)
        if not cores:
            raise ValueError("cores must hold at least one core")
        for index, core in enumerate(cores):
            check_block_cipher(core, f"cores[{index}]")
        if any(core.block_bits != cores[0].block_bits for core in cores):
            raise ValueError("all cores must have the same block size")
        self._cores = cores
        super().__init__(cores[0].block_bits, max(core.key_bits for core in cores),
                         decrypt=all(core.decrypts for core in cores))
        self.select = Signal(range(max(2, len(cores))), name="select")

    @property
    def cores(self) -> tuple:
        return self._cores

    @property
    def latency(self) -> int:
        """The longest latency of the cores."""
        return max(core.latency for core in self._cores)

    @property
    def initiation_interval(self) -> int:
        """The longest initiation interval of the cores."""
        return max(core.initiation_interval for core in self._cores)

    @property
    def key_load_cycles(self) -> int:
        """The longest key load of the cores."""
        return max(core.key_load_cycles for core in self._cores)

    def elaborate(self, platform):
        m = Module()
        for index, core in enumerate(self._cores):
            m.submodules[f"core{index}"] = core
            chosen = self.select == index
            m.d.comb += [
                core.key.payload.eq(self.key.payload[:core.key_bits]),
                core.key.valid.eq(self.key.valid & chosen),
                core.input.payload.eq(self.input.payload),
                core.input.valid.eq(self.input.valid & chosen),
                core.output.ready.eq(self.output.ready & chosen),
            ]
            with m.If(chosen):
                m.d.comb += [
                    self.key.ready.eq(core.key.ready),
                    self.input.ready.eq(core.input.ready),
                    self.output.valid.eq(core.output.valid),
                    self.output.payload.eq(core.output.payload),
                ]
        return m


class CorePort(BlockCipher):
    """One user's view of a :class:`SharedCore`: a :class:`~cipher_cores.cores.cipher.BlockCipher`
    with the core's widths and no logic of its own (the :class:`SharedCore` drives and reads its
    ports), so that a mode or GCM can take it as its core. Its :attr:`decrypts`,
    :attr:`latency`, :attr:`initiation_interval` and :attr:`key_load_cycles` are the core's.

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        The shared core.
    """
    def __init__(self, core):
        check_block_cipher(core, "core")
        self._core = core
        super().__init__(core.block_bits, core.key_bits, decrypt=core.decrypts)

    @property
    def latency(self) -> int:
        return self._core.latency

    @property
    def initiation_interval(self) -> int:
        return self._core.initiation_interval

    @property
    def key_load_cycles(self) -> int:
        return self._core.key_load_cycles

    def elaborate(self, platform):
        return Module()


class SharedCore(wiring.Component):
    """One block-cipher core used in turn by several users, each through a :class:`CorePort`.

    ``select`` routes the core's three streams to one port; the others see ``ready`` and
    ``valid`` low. ``select`` must only change while no key and no block is in the core and no
    user holds ``valid`` high (the peripheral changes it only when idle). No registers: latency
    and rates are the core's. A user finds the core with whatever key the last user loaded: it
    must load its own (the peripheral reloads the key after a switch that follows a key change).

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        The core (it becomes a submodule).
    users : :class:`int`
        Number of ports (at least 2).

    Members
    -------
    select : ``In(range(users))``
        The port in use.
    """
    def __init__(self, core, *, users: int = 2):
        check_block_cipher(core, "core")
        if not isinstance(users, int) or isinstance(users, bool):
            raise TypeError(f"users must be an integer, not {users!r}")
        if users < 2:
            raise ValueError(f"users must be at least 2, not {users!r}")
        self._core = core
        self._ports = tuple(CorePort(core) for _ in range(users))
        super().__init__({"select": In(range(users))})

    @property
    def core(self) -> BlockCipher:
        return self._core

    @property
    def ports(self) -> tuple:
        """The :class:`CorePort` of each user, by ``select`` value."""
        return self._ports

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self._core
        for index, port in enumerate(self._ports):
            chosen = self.select == index
            m.d.comb += [
                port.key.ready.eq(core.key.ready & chosen),
                port.input.ready.eq(core.input.ready & chosen),
                port.output.valid.eq(core.output.valid & chosen),
                port.output.payload.eq(core.output.payload),
            ]
            with m.If(chosen):
                m.d.comb += [
                    core.key.valid.eq(port.key.valid),
                    core.key.payload.eq(port.key.payload),
                    core.input.valid.eq(port.input.valid),
                    core.input.payload.eq(port.input.payload),
                    core.output.ready.eq(port.output.ready),
                ]
        return m


def _word_address(name: str, index: int = 0) -> int:
    return regmap.register(name).offsets()[index] // 4


def _place(register_name: str, **values):
    """A 32-bit value with each named field of the register set to ``values[field]``."""
    reg = regmap.register(register_name)
    parts, position = [], 0
    for item in sorted(reg.fields, key=lambda f: f.offset):
        if item.name not in values:
            continue
        if item.offset > position:
            parts.append(C(0, item.offset - position))
        value = values[item.name]
        parts.append(value[:item.width] if len(value) >= item.width else
                     Cat(value, C(0, item.width - len(value))))
        position = item.offset + item.width
    parts.append(C(0, regmap.BUS_DATA_WIDTH - position))
    return Cat(*parts)


def _field(value, register_name: str, field_name: str):
    item = regmap.register(register_name).field(field_name)
    return value[item.offset:item.offset + item.width]


class CipherPeripheral(wiring.Component):
    """A Wishbone B4 classic target that encrypts and decrypts messages with a core and its modes
    of operation, with data FIFOs and an interrupt. The register map is :data:`cipher_cores.cores.bus.regmap.
    REGISTERS` (the tables in ``docs/wishbone.md``, the C header ``cores/soc/firmware/cipher_wishbone.h``).

    Parameters
    ----------
    cores : a core, or a sequence of 1 to 4 cores
        Cores (:class:`~cipher_cores.cores.cipher.BlockCipher`), one block size within the limits
        of :meth:`check_limits` (a multiple of 32 bits, at most 128; keys of at most 256 bits);
        ``CTRL.KEYSEL`` picks one (for example
        ``[AES(128), AES(256)]`` for two key sizes). Encrypt-only cores (``decrypt=False``) refuse
        ECB and CBC decryption (``ERROR.UNSUPPORTED``).
    modes : sequence of :class:`~cipher_cores.cores.modes.Mode`
        The modes to build (all by default).
    fifo_words : :class:`int`
        Depth of the input and of the output FIFO, in words (default: two blocks; at least one
        block, at most 255). Each FIFO is a memory with a registered read port
        (:class:`~amaranth.lib.fifo.SyncFIFOBuffered`), which synthesis puts in block RAM:
        with flip-flops and multiplexers instead, the AES-128 peripheral was 419 iCE40 LUT4s
        larger.
    gcm : :class:`bool`
        Also build AES-GCM (``CTRL.MODE`` = :data:`GCM_MODE`, see below) around the same cores,
        which must have 128-bit blocks. Off by default: without it the registers GCM adds are
        unmapped (``ERROR.BAD_ADDRESS``) and the design is what it was before GCM existed.

    Members
    -------
    bus : ``In(WishboneSignature(addr_width=5, data_width=32, granularity=8))``
        The register interface.
    irq : ``Out(1)``
        High while a condition of ``IRQ_PENDING`` is true (``IRQ_ENABLE`` and the condition).

    Operation
    ---------
    Firmware writes the key (``KEY``), the IV (``IV``), the length in blocks (``LENGTH``), and
    ``CTRL`` with ``START`` and the mode, direction and key size, in any order (``START`` last);
    message words go into ``DIN`` (before or after ``START``), results come out of ``DOUT``,
    one block's words most significant first. ``STATUS.BUSY`` is high from ``START`` until the
    last result is in the output FIFO; while busy, key, IV, ``LENGTH`` and ``CTRL`` writes are
    refused (and flagged), so nothing is ever half-applied. When the output FIFO is full the core
    holds its result: nothing is dropped.

    AES-GCM (``gcm=True``)
    ----------------------
    One core, two users: the modes (:class:`~cipher_cores.cores.modes.ModeOfOperation`) and
    :class:`~cipher_cores.cores.gcm.GCM` (with its default GHASH) each take a :class:`CorePort` of a
    :class:`SharedCore` as their core; the peripheral points the share at the user of the
    message at ``START`` (only while idle, so no block or key is ever in flight across a
    switch). The core keeps the key the last user loaded, so a switch costs nothing while the
    key is the same: the modes load the key only if it (or ``KEYSEL``) changed since the core's
    last load, GCM only if it changed since GCM's own last load (H = E_K(0) and GHASH's tables
    belong to a key: CBC with a new key, then GCM, loads it twice).

    Firmware writes the key, the 96-bit IV in ``IV3..IV1`` (IV bytes 0..3 in ``IV3``; ``IV0``
    unused), ``AAD_BYTES`` and ``TEXT_BYTES`` (any byte counts, 0 included), and to decrypt
    ``TAG_EXPECTED`` (and ``CTRL.TAG_BYTES`` for a tag of 4 to 15 bytes), then ``CTRL`` with
    ``MODE`` GCM, ``DECRYPT`` and ``START``. ``LENGTH`` is not used. The AAD and then the text go
    into ``DIN`` in whole blocks, each part's last block padded with any bytes (a part of 0
    bytes takes no block); a result block per text block comes out of ``DOUT``, zero past the
    text. The peripheral turns these into GCM's items: the IV (``keep`` of 12 bytes), the AAD
    and text blocks (``keep`` from the byte counts, an empty ``last`` item for an empty part),
    and the expected tag. ``STATUS.TAG_READY`` (interrupt ``TAG_READY``) rises as ``BUSY`` falls,
    once the tag has arrived and the last result is in the output FIFO: ``TAG0..TAG3`` hold the
    tag of an encryption; after a decryption they read 0 and ``STATUS.AUTHENTIC`` says whether
    the tag matched (GCM compares in constant time; a mismatch also sets ``ERROR.AUTH_FAIL``).
    A decryption's plaintext leaves through ``DOUT`` before its tag is checked: firmware must
    hold it until ``AUTHENTIC``. ``START`` (any mode) and ``CLEAR`` clear ``TAG_READY``,
    ``AUTHENTIC`` and ``TAG``.

    Cycles with AES-128 and the default GHASH: a key load through GCM takes the core's key
    expansion, H and GHASH's table fill (about 405 edges from ``START`` to the IV); with the key
    loaded, GCM starts on the edge after ``START``. Text blocks then pass at the bus's pace
    (four ``DIN`` writes and four ``DOUT`` reads: 16 to 18 edges a block with ``STATUS``
    polled; GCM alone takes 11), and the tag arrives 21 edges after the last text block enters
    GCM (23 when decrypting, the expected tag's item taken on the way).

    Cycle behaviour
    ---------------
    Every access takes two edges (registered ``ack``; ``ack`` is low for at least one edge
    between accesses). ``START`` loads the key into the core first if it changed since the last
    load (or ``KEYSEL`` did): the core's key-load time (AES: Nr + 1 edges; PRESENT with
    decryption: 32 / N + 1). A block enters the mode when its last word has left the input
    FIFO; the mode adds one edge per block in CBC/CFB encryption and OFB, none otherwise (see
    :class:`~cipher_cores.cores.modes.ModeOfOperation`); a result takes one edge per word to reach the output
    FIFO, while the next block is already in the core. Each FIFO's read register adds one edge
    to a lone block's latency. With data ready, the bus is the limit: 2 edges per word written
    or read.

    ``CTRL.CLEAR`` aborts whatever is running and zeroizes: the key, IV and configuration
    registers, the block buffers, the mode's chaining register, the core (reset, then loaded
    with an all-zero key and given ``depth`` all-zero blocks, which also overwrites the mode's
    side buffer), and both FIFOs' storage (filled with zeros, then emptied). With GCM, GCM is
    reset too and then loaded with the all-zero key, so that its H and GHASH's tables no longer
    derive from the key (about 405 edges more). It takes about (key load + 2 core intervals) per
    core plus the FIFO depth; ``STATUS.BUSY`` is high until it is done.
    """
    def __init__(self, cores, *, modes=tuple(Mode), fifo_words: int | None = None,
                 gcm: bool = False):
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
        widest = max(cores, key=lambda core: core.key_bits)
        words = block_bits // 32
        if fifo_words is None:
            fifo_words = 2 * words
        self.check_limits(block_bits, widest.key_bits, fifo_words=fifo_words, gcm=gcm,
                          core=type(widest).__name__)
        self._cores = cores
        self._fifo_words = fifo_words
        self._block_words = words
        cipher = cores[0] if len(cores) == 1 else CoreSelect(cores)
        self._select = None if len(cores) == 1 else cipher
        if gcm:
            # One core, two users: the modes (port 0) and GCM (port 1).
            self._share = SharedCore(cipher)
            self._engine = ModeOfOperation(self._share.ports[0], modes=modes)
            self._gcm = GCM(self._share.ports[1])
        else:
            self._share = self._gcm = None
            self._engine = ModeOfOperation(cipher, modes=modes)
        self._din = fifo.SyncFIFOBuffered(width=32, depth=fifo_words)
        self._dout = fifo.SyncFIFOBuffered(width=32, depth=fifo_words)
        super().__init__({
            "bus": In(WishboneSignature(addr_width=5, data_width=32, granularity=8)),
            "irq": Out(1),
        })
        key_width = 32 * -(-widest.key_bits // 32)
        self._key = Signal(key_width, name="key")
        self._iv = Signal(block_bits, name="iv")
        self._in_block = Signal(block_bits, name="in_block")
        self._out_block = Signal(block_bits, name="out_block")
        self._tag = Signal(128, name="tag")
        self._tag_expected = Signal(128, name="tag_expected")

    @staticmethod
    def check_limits(block_bits: int, key_bits: int, *, fifo_words: int | None = None,
                     gcm: bool = False, core: str = "the core"):
        """Check that the peripheral can be built around cores of ``block_bits`` and (at most)
        ``key_bits``, with ``fifo_words`` (``None``: the default) and ``gcm``; raise
        :exc:`ValueError` or :exc:`TypeError` (one line, naming ``core`` or the parameter) if
        not. The constructor asks this, and so does the build flow before it builds anything
        (:class:`~cipher_cores.scripts.flow.targets.PeripheralConfig`).

        The limits: a block is one to four 32-bit words (``DIN``/``DOUT`` move whole words), a
        key at most 256 bits (eight ``KEY`` registers), a FIFO holds one block to 255 words,
        and GCM needs 128-bit blocks.
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
            if not words <= fifo_words <= 255:
                raise ValueError(f"fifo_words must be from {words} (one block) to 255, "
                                 f"not {fifo_words}")
        if not isinstance(gcm, bool):
            raise TypeError(f"gcm must be True or False, not {gcm!r}")
        if gcm and block_bits != 128:
            raise ValueError(f"gcm=True needs cores with 128-bit blocks (AES), not "
                             f"{block_bits}-bit ones")

    @property
    def cores(self) -> tuple:
        return self._cores

    @property
    def gcm(self) -> GCM | None:
        """The :class:`~cipher_cores.cores.gcm.GCM` sharing the core with the modes, or ``None`` (not
        built)."""
        return self._gcm

    @property
    def engine(self) -> ModeOfOperation:
        """The mode of operation (with the core inside)."""
        return self._engine

    @property
    def fifo_words(self) -> int:
        return self._fifo_words

    @property
    def block_words(self) -> int:
        return self._block_words

    def secret_state(self) -> dict:
        """The registers that hold key, IV or message material, by name, for inspection in
        simulation (``CTRL.CLEAR`` zeroes them all)."""
        state = {"key": self._key, "iv": self._iv, "in_block": self._in_block,
                 "out_block": self._out_block, "chain": self._engine.chain_register}
        if self._gcm is not None:
            state.update(tag=self._tag, tag_expected=self._tag_expected)
        return state

    def fifo_storage(self) -> dict:
        """The data FIFOs (their memories are found in the elaborated design by tests)."""
        return {"din": self._din, "dout": self._dout}

    def elaborate(self, platform):
        m = Module()
        bus, engine, gcm = self.bus, self._engine, self._gcm
        words, depth = self._block_words, self._fifo_words
        cores = self._cores
        key_words = len(self._key) // 32

        scrub_reset = Signal()      # resets the mode and the core
        fifo_reset = Signal()       # empties both FIFOs
        m.submodules.engine = ResetInserter(scrub_reset)(engine)
        if gcm is not None:
            m.submodules.share = ResetInserter(scrub_reset)(self._share)
            m.submodules.gcm = ResetInserter(scrub_reset)(gcm)
        m.submodules.din = din = ResetInserter(fifo_reset)(self._din)
        m.submodules.dout = dout = ResetInserter(fifo_reset)(self._dout)
        din, dout = self._din, self._dout

        # Programmer-visible state.
        key, iv = self._key, self._iv
        mode = Signal(3)
        decrypt = Signal()
        keysel = Signal(2)
        little_endian = Signal()         # CTRL.LITTLE_ENDIAN
        length = Signal(16)
        errors = Signal(8 if gcm is None else 9)
        irq_enable = Signal(3 if gcm is None else 4)
        key_set = Signal()
        key_dirty = Signal(init=1)
        loaded_sel = Signal(2)

        # GCM state (only used in GCM builds).
        tag, tag_expected = self._tag, self._tag_expected
        tag_bytes = Signal(5)            # CTRL.TAG_BYTES
        aad_bytes = Signal(32)
        text_bytes = Signal(32)
        part_left = Signal(32)           # bytes of the AAD, then of the text, still to go in
        tag_ready = Signal()
        authentic = Signal()
        use_gcm = Signal()               # the shared core's user: 0 the modes, 1 GCM
        gcm_dirty = Signal(init=1)       # GCM's H is not that of the key registers
        scrub_gcm = Signal()

        # Message state.
        in_block, out_block = self._in_block, self._out_block
        in_count = Signal(range(words + 1))
        out_count = Signal(range(words + 1))
        in_left = Signal(16)
        out_left = Signal(16)
        first = Signal()
        busy = Signal()
        scrubbing = Signal()

        # Clear state.
        scrub_sel = Signal(2)
        scrub_in = Signal(range(engine.depth + 1))
        scrub_out = Signal(range(engine.depth + 1))

        # Wishbone: one access taken per edge where cyc & stb are high and ack is low; ack and
        # read data are registered.
        take = Signal()
        m.d.comb += take.eq(bus.cyc & bus.stb & ~bus.ack)
        m.d.sync += bus.ack.eq(take)
        write = take & bus.we
        read = take & ~bus.we
        wmask = Cat(*(bus.sel[i].replicate(8) for i in range(4)))

        def merged(old):
            return (old & ~wmask) | (bus.dat_w & wmask)

        def configure(target):
            """A write to a configuration register: refused and flagged while busy."""
            with m.If(write):
                with m.If(busy):
                    m.d.comb += flag("BUSY_WRITE")
                with m.Else():
                    m.d.sync += target.eq(merged(target))

        rdata = Signal(32)
        with m.If(take):
            m.d.sync += bus.dat_r.eq(rdata)

        error_set = Signal(len(errors))
        error_clear = Signal(len(errors))
        m.d.sync += errors.eq((errors & ~error_clear) | error_set)

        def flag(name):
            item = regmap.register("ERROR").field(name)
            return error_set[item.offset].eq(1)

        # Capabilities.
        built = sum(1 << mode_.value for mode_ in engine.modes) | \
            (0 if gcm is None else 1 << GCM_MODE)
        decrypting_cores = sum(1 << i for i, core in enumerate(cores) if core.decrypts)
        keysizes = sum((core.key_bits // 8 if core.key_bits % 8 == 0 else
                        -(-core.key_bits // 8)) << (8 * i)
                       for i, core in enumerate(cores))

        in_space = Signal()
        out_ready = Signal()
        m.d.comb += [
            in_space.eq(~scrubbing & (din.w_level <= depth - words)),
            out_ready.eq(~scrubbing & (dout.r_level >= words)),
        ]
        conditions = Cat(out_ready, in_space, errors.any(), *([] if gcm is None else [tag_ready]))
        m.d.sync += self.irq.eq((conditions & irq_enable).any())

        gcm_fields = {} if gcm is None else {"TAG_BYTES": tag_bytes}
        ctrl_image = _place("CTRL", MODE=mode, DECRYPT=decrypt, KEYSEL=keysel,
                            LITTLE_ENDIAN=little_endian, **gcm_fields)
        ctrl_next = merged(ctrl_image)
        next_mode = _field(ctrl_next, "CTRL", "MODE")
        next_decrypt = _field(ctrl_next, "CTRL", "DECRYPT")
        next_keysel = _field(ctrl_next, "CTRL", "KEYSEL")
        next_little_endian = _field(ctrl_next, "CTRL", "LITTLE_ENDIAN")
        next_tag_bytes = _field(ctrl_next, "CTRL", "TAG_BYTES")
        start_bit = _field(bus.dat_w & wmask, "CTRL", "START")
        clear_bit = _field(bus.dat_w & wmask, "CTRL", "CLEAR")

        do_start = Signal()
        do_clear = Signal()

        din_push = Signal()
        dout_pop = Signal()

        with m.Switch(bus.adr):
            with m.Case(_word_address("CTRL")):
                m.d.comb += rdata.eq(ctrl_image)
                with m.If(write):
                    with m.If(clear_bit):
                        m.d.comb += do_clear.eq(1)
                    with m.Elif(busy):
                        m.d.comb += flag("BUSY_WRITE")
                    with m.Else():
                        m.d.sync += [mode.eq(next_mode), decrypt.eq(next_decrypt),
                                     keysel.eq(next_keysel),
                                     little_endian.eq(next_little_endian)]
                        if gcm is not None:
                            m.d.sync += tag_bytes.eq(next_tag_bytes)
                        with m.If(next_keysel != keysel):
                            m.d.sync += key_dirty.eq(1)
                            if gcm is not None:
                                m.d.sync += gcm_dirty.eq(1)
                        m.d.comb += do_start.eq(start_bit)
            with m.Case(_word_address("STATUS")):
                gcm_status = {} if gcm is None else {"TAG_READY": tag_ready,
                                                     "AUTHENTIC": authentic}
                m.d.comb += rdata.eq(_place(
                    "STATUS", BUSY=busy, IN_SPACE=in_space, OUT_READY=out_ready,
                    KEY_SET=key_set, ERROR=errors.any(),
                    IN_FREE=Mux(scrubbing, 0, depth - din.w_level),
                    OUT_WORDS=Mux(scrubbing, 0, dout.r_level), **gcm_status))
                with m.If(write):
                    m.d.comb += flag("READ_ONLY")
            with m.Case(_word_address("ERROR")):
                m.d.comb += rdata.eq(errors)
                with m.If(write):
                    m.d.comb += error_clear.eq(bus.dat_w & wmask)
            with m.Case(_word_address("IRQ_ENABLE")):
                m.d.comb += rdata.eq(irq_enable)
                with m.If(write):
                    m.d.sync += irq_enable.eq(merged(irq_enable))
            with m.Case(_word_address("IRQ_PENDING")):
                m.d.comb += rdata.eq(conditions & irq_enable)
                with m.If(write):
                    m.d.comb += flag("READ_ONLY")
            with m.Case(_word_address("LENGTH")):
                m.d.comb += rdata.eq(length)
                configure(length)
            with m.Case(_word_address("INFO")):
                m.d.comb += rdata.eq(_place(
                    "INFO", BLOCK_WORDS=C(words, 4), MODES=C(built, 6),
                    DECRYPTS=C(decrypting_cores, 4), FIFO_WORDS=C(depth, 8)))
                with m.If(write):
                    m.d.comb += flag("READ_ONLY")
            with m.Case(_word_address("KEYSIZES")):
                m.d.comb += rdata.eq(keysizes)
                with m.If(write):
                    m.d.comb += flag("READ_ONLY")
            with m.Case(_word_address("DIN")):
                with m.If(write):
                    with m.If(bus.sel != 0b1111):
                        m.d.comb += flag("BYTE_SELECT")
                    with m.Elif(scrubbing):
                        m.d.comb += flag("BUSY_WRITE")
                    with m.Elif(~din.w_rdy):
                        m.d.comb += flag("OVERFLOW")
                    with m.Else():
                        m.d.comb += din_push.eq(1)
            with m.Case(_word_address("DOUT")):
                with m.If(write):
                    m.d.comb += flag("READ_ONLY")
                with m.Elif(read):
                    with m.If(dout.r_rdy & ~scrubbing):
                        m.d.comb += [dout_pop.eq(1), rdata.eq(dout.r_data)]
                    with m.Else():
                        m.d.comb += flag("UNDERFLOW")
            for index in range(regmap.register("KEY").count):
                with m.Case(_word_address("KEY", index)):
                    if index >= key_words:
                        with m.If(take):
                            m.d.comb += flag("BAD_ADDRESS")
                        continue
                    word = key[32 * index:32 * index + 32]
                    with m.If(write):
                        with m.If(busy):
                            m.d.comb += flag("BUSY_WRITE")
                        with m.Else():
                            m.d.sync += [word.eq(merged(word)), key_set.eq(1),
                                         key_dirty.eq(1)]
                            if gcm is not None:
                                m.d.sync += gcm_dirty.eq(1)
            for index in range(regmap.register("IV").count):
                with m.Case(_word_address("IV", index)):
                    if index >= words:
                        with m.If(take):
                            m.d.comb += flag("BAD_ADDRESS")
                        continue
                    word = iv[32 * index:32 * index + 32]
                    m.d.comb += rdata.eq(word)
                    configure(word)
            if gcm is not None:
                for name, target in (("AAD_BYTES", aad_bytes), ("TEXT_BYTES", text_bytes)):
                    with m.Case(_word_address(name)):
                        m.d.comb += rdata.eq(target)
                        configure(target)
                for index in range(4):
                    with m.Case(_word_address("TAG", index)):
                        m.d.comb += rdata.eq(tag[32 * index:32 * index + 32])
                        with m.If(write):
                            m.d.comb += flag("READ_ONLY")
                    with m.Case(_word_address("TAG_EXPECTED", index)):
                        configure(tag_expected[32 * index:32 * index + 32])
            with m.Default():
                with m.If(take):
                    m.d.comb += flag("BAD_ADDRESS")

        # The data path between the FIFOs and the mode.
        if "mode" in engine.signature.members:      # a port only when several modes are built
            m.d.comb += engine.mode.eq(Mux(scrubbing, Mode.ECB, mode))
        if self._select is not None:
            m.d.comb += self._select.select.eq(Mux(scrubbing, scrub_sel, keysel))
        def in_order(word):
            # The byte order of CTRL.LITTLE_ENDIAN: with the zeroing below, still one LUT4 a bit.
            return Mux(little_endian, Cat(*(word[8 * (3 - i):8 * (4 - i)] for i in range(4))),
                       word)

        m.d.comb += [
            din.w_data.eq(Mux(scrubbing, 0, in_order(bus.dat_w))),
            din.w_en.eq(din_push),
            dout.r_en.eq(dout_pop),
            engine.key.payload.eq(Mux(scrubbing, 0, key)),
            engine.input.payload.block.eq(Mux(scrubbing, 0, in_block)),
            engine.input.payload.iv.eq(Mux(scrubbing, 0, iv)),
            engine.input.payload.decrypt.eq(~scrubbing & decrypt),
            engine.input.payload.first.eq(scrubbing | first),
            engine.input.payload.last.eq(scrubbing | (in_left == 1)),
            dout.w_data.eq(Mux(scrubbing, 0, in_order(out_block[-32:]))),
        ]
        if gcm is not None:
            m.d.comb += [
                self._share.select.eq(Mux(scrubbing, scrub_gcm, use_gcm)),
                gcm.key.payload.eq(Mux(scrubbing, 0, key)),
                gcm.start.payload.decrypt.eq(decrypt),
            ]

        def clear_everything():
            zero = [key, iv, mode, decrypt, keysel, little_endian, length, errors, key_set,
                    loaded_sel, in_block, out_block, in_count, out_count, in_left, out_left,
                    first]
            if gcm is not None:
                zero += [tag, tag_expected, tag_bytes, aad_bytes, text_bytes, part_left,
                         tag_ready, authentic, use_gcm]
                m.d.sync += gcm_dirty.eq(1)
            m.d.sync += [signal.eq(0) for signal in zero]
            m.d.sync += [key_dirty.eq(1), scrub_sel.eq(0)]

        def assemble(more):
            """Assemble a block from the input FIFO, most significant word first."""
            with m.If((in_count != words) & more & din.r_rdy):
                m.d.comb += din.r_en.eq(1)
                m.d.sync += [in_block.eq(Cat(din.r_data, in_block[:-32])),
                             in_count.eq(in_count + 1)]

        def drain():
            """Move the result block into the output FIFO, one word an edge."""
            with m.If((out_count != 0) & dout.w_rdy):
                m.d.comb += dout.w_en.eq(1)
                m.d.sync += [out_block.eq(Cat(C(0, 32), out_block[:-32])),
                             out_count.eq(out_count - 1)]

        def leading_bytes(count):
            """A GCM ``keep`` mask enabling the first ``min(count, 16)`` bytes."""
            return Cat(*(count >= 16 - j for j in range(16)))

        mode_known = Signal()
        m.d.comb += mode_known.eq(Const(built, 8).bit_select(next_mode, 1))
        refused = Signal()
        refusal = (~mode_known | (next_keysel >= len(cores)) |
                   (next_decrypt & ((next_mode == Mode.ECB.value) |
                                    (next_mode == Mode.CBC.value)) &
                    ~Const(decrypting_cores, 4).bit_select(next_keysel, 1)))
        if gcm is not None:
            # A GCM decryption compares 4 to 16 bytes of tag.
            tag_length_ok = (next_tag_bytes == 0) | ((next_tag_bytes >= 4) &
                                                     (next_tag_bytes <= 16))
            refusal |= (next_mode == GCM_MODE) & next_decrypt & ~tag_length_ok
        m.d.comb += refused.eq(refusal)

        def obey_clear():
            # CLEAR wins over whatever the state does on this edge.
            with m.If(do_clear):
                clear_everything()
                m.next = "Scrub reset"

        with m.FSM():
            with m.State("Idle"):
                with m.If(do_start):
                    with m.If(refused):
                        m.d.comb += flag("UNSUPPORTED")
                    with m.Elif(~key_set):
                        m.d.comb += flag("NO_KEY")
                    if gcm is not None:
                        with m.Elif(next_mode == GCM_MODE):
                            m.d.sync += [part_left.eq(aad_bytes), in_count.eq(0),
                                         out_count.eq(0), use_gcm.eq(1), tag_ready.eq(0),
                                         authentic.eq(0), tag.eq(0)]
                            with m.If(gcm_dirty | (next_keysel != loaded_sel)):
                                m.next = "GCM key"
                            with m.Else():
                                m.next = "GCM start"
                    with m.Elif(length != 0):
                        m.d.sync += [in_left.eq(length), out_left.eq(length), first.eq(1),
                                     in_count.eq(0), out_count.eq(0)]
                        if gcm is not None:
                            m.d.sync += [use_gcm.eq(0), tag_ready.eq(0), authentic.eq(0),
                                         tag.eq(0)]
                        with m.If(key_dirty | (next_keysel != loaded_sel)):
                            m.next = "Key"
                        with m.Else():
                            m.next = "Run"
                obey_clear()

            with m.State("Key"):
                m.d.comb += [busy.eq(1), engine.key.valid.eq(1)]
                with m.If(engine.key.ready):
                    m.d.sync += [key_dirty.eq(0), loaded_sel.eq(keysel)]
                    m.next = "Run"
                obey_clear()

            with m.State("Run"):
                m.d.comb += busy.eq(1)
                assemble(in_left != 0)
                m.d.comb += engine.input.valid.eq((in_count == words) & (in_left != 0))
                with m.If(engine.input.valid & engine.input.ready):
                    m.d.sync += [in_count.eq(0), in_left.eq(in_left - 1), first.eq(0)]
                # Take a result when the previous one is all in the output FIFO.
                m.d.comb += engine.output.ready.eq(out_count == 0)
                with m.If(engine.output.valid & engine.output.ready):
                    m.d.sync += [out_block.eq(engine.output.payload.block),
                                 out_count.eq(words), out_left.eq(out_left - 1)]
                drain()
                with m.If((out_left == 0) & (out_count == 0)):
                    m.next = "Idle"
                obey_clear()

            if gcm is not None:
                def gcm_part(on_last):
                    """Items of the AAD or the text: ``part_left`` bytes from the input FIFO in
                    whole blocks, or one empty item if there are none."""
                    has_data = part_left != 0
                    last = part_left <= 16
                    assemble(has_data)
                    m.d.comb += [
                        gcm.input.valid.eq(~has_data | (in_count == words)),
                        gcm.input.payload.data.eq(in_block),
                        gcm.input.payload.keep.eq(leading_bytes(part_left)),
                        gcm.input.payload.last.eq(last),
                    ]
                    with m.If(gcm.input.valid & gcm.input.ready):
                        m.d.sync += [in_count.eq(0), part_left.eq(part_left - 16)]
                        with m.If(last):
                            on_last()

                with m.State("GCM key"):
                    m.d.comb += [busy.eq(1), gcm.key.valid.eq(1)]
                    with m.If(gcm.key.ready):
                        m.d.sync += [key_dirty.eq(0), gcm_dirty.eq(0), loaded_sel.eq(keysel)]
                        m.next = "GCM start"
                    obey_clear()

                with m.State("GCM start"):
                    # Accepted once GCM has H (after a key load: the core, then GHASH's fill).
                    m.d.comb += [busy.eq(1), gcm.start.valid.eq(1)]
                    with m.If(gcm.start.ready):
                        m.next = "GCM IV"
                    obey_clear()

                with m.State("GCM IV"):
                    m.d.comb += [busy.eq(1), gcm.input.valid.eq(1),
                                 gcm.input.payload.data.eq(iv),
                                 gcm.input.payload.keep.eq(keep_bits(12)),
                                 gcm.input.payload.last.eq(1)]
                    with m.If(gcm.input.ready):
                        m.next = "GCM AAD"
                    obey_clear()

                with m.State("GCM AAD"):
                    m.d.comb += busy.eq(1)

                    def aad_done():
                        m.d.sync += part_left.eq(text_bytes)
                        m.next = "GCM text"
                    gcm_part(aad_done)
                    obey_clear()

                with m.State("GCM text"):
                    m.d.comb += busy.eq(1)

                    def text_done():
                        with m.If(decrypt):
                            m.next = "GCM expected tag"
                        with m.Else():
                            m.next = "GCM tag"
                    gcm_part(text_done)
                    # A result per text item (an empty text's one item is dropped), taken when
                    # the previous result is all in the output FIFO.
                    m.d.comb += gcm.output.ready.eq(out_count == 0)
                    with m.If(gcm.output.valid & gcm.output.ready & (text_bytes != 0)):
                        m.d.sync += [out_block.eq(gcm.output.payload.data),
                                     out_count.eq(words)]
                    drain()
                    obey_clear()

                with m.State("GCM expected tag"):
                    # Decrypting, the expected tag is the last item.
                    m.d.comb += [busy.eq(1), gcm.input.valid.eq(1),
                                 gcm.input.payload.data.eq(tag_expected),
                                 gcm.input.payload.keep.eq(
                                     leading_bytes(Mux(tag_bytes == 0, 16, tag_bytes))),
                                 gcm.input.payload.last.eq(1)]
                    drain()
                    with m.If(gcm.input.ready):
                        m.next = "GCM tag"
                    obey_clear()

                with m.State("GCM tag"):
                    # The tag (encrypting) or the check (decrypting), taken once the last result
                    # is in the output FIFO: TAG_READY rises as BUSY falls.
                    m.d.comb += [busy.eq(1), gcm.tag.ready.eq(out_count == 0)]
                    drain()
                    with m.If(gcm.tag.valid & gcm.tag.ready):
                        m.d.sync += [tag.eq(gcm.tag.payload.tag),
                                     authentic.eq(gcm.tag.payload.authentic), tag_ready.eq(1)]
                        with m.If(decrypt & ~gcm.tag.payload.authentic):
                            m.d.comb += flag("AUTH_FAIL")
                        m.next = "Idle"
                    obey_clear()

            with m.State("Scrub reset"):
                m.d.comb += [busy.eq(1), scrubbing.eq(1), scrub_reset.eq(1), fifo_reset.eq(1)]
                m.next = "Scrub key"
                obey_clear()

            with m.State("Scrub key"):
                m.d.comb += [busy.eq(1), scrubbing.eq(1), engine.key.valid.eq(1)]
                with m.If(engine.key.ready):
                    m.d.sync += [scrub_in.eq(0), scrub_out.eq(0)]
                    m.next = "Scrub blocks"
                obey_clear()

            with m.State("Scrub blocks"):
                m.d.comb += [busy.eq(1), scrubbing.eq(1),
                             engine.input.valid.eq(scrub_in != engine.depth),
                             engine.output.ready.eq(1)]
                with m.If(engine.input.valid & engine.input.ready):
                    m.d.sync += scrub_in.eq(scrub_in + 1)
                with m.If(engine.output.valid):
                    m.d.sync += scrub_out.eq(scrub_out + 1)
                with m.If(scrub_out == engine.depth):
                    with m.If(scrub_sel == len(cores) - 1):
                        m.next = "Scrub FIFOs" if gcm is None else "Scrub GCM key"
                    with m.Else():
                        m.d.sync += scrub_sel.eq(scrub_sel + 1)
                        m.next = "Scrub key"
                obey_clear()

            if gcm is not None:
                with m.State("Scrub GCM key"):
                    # GCM takes an all-zero key: H and GHASH's tables no longer hold the key's.
                    m.d.comb += [busy.eq(1), scrubbing.eq(1), scrub_gcm.eq(1),
                                 gcm.key.valid.eq(1)]
                    with m.If(gcm.key.ready):
                        m.next = "Scrub GCM wait"
                    obey_clear()

                with m.State("Scrub GCM wait"):
                    m.d.comb += [busy.eq(1), scrubbing.eq(1), scrub_gcm.eq(1)]
                    with m.If(gcm.start.ready):
                        m.next = "Scrub FIFOs"
                    obey_clear()

            with m.State("Scrub FIFOs"):
                m.d.comb += [busy.eq(1), scrubbing.eq(1), din.w_en.eq(1), dout.w_en.eq(1)]
                with m.If(~din.w_rdy & ~dout.w_rdy):
                    m.next = "Scrub done"
                obey_clear()

            with m.State("Scrub done"):
                m.d.comb += [busy.eq(1), scrubbing.eq(1), fifo_reset.eq(1)]
                m.next = "Idle"
                obey_clear()

        return m
