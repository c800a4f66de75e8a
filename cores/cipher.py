"""What every block-cipher core shares: its base class and the key/input/output handshake.

:class:`BlockCipher` is the contract as a type: the base of every cipher core (every catalog
entry's component, the tests' toy and broken cores, and the bus wrappers that stand in for a core,
:class:`~cipher_cores.cores.bus.CoreSelect` and :class:`~cipher_cores.cores.bus.CorePort`). It is a
:class:`~amaranth.lib.wiring.Component` whose signature is a
:class:`~cipher_cores.cores.interface.BlockCipherSignature`, with the figures every core states:
:attr:`~BlockCipher.block_bits`, :attr:`~BlockCipher.key_bits`, :attr:`~BlockCipher.decrypts`,
:attr:`~BlockCipher.latency`, :attr:`~BlockCipher.initiation_interval` and
:attr:`~BlockCipher.key_load_cycles`. Consumers (modes, GCM, the bus peripheral, the simulators)
take a :class:`BlockCipher` and read these attributes directly; :func:`check_block_cipher` is
how each refuses anything else.

:class:`Handshake` is the one piece of gateware that keeps the contract of
:class:`~cipher_cores.cores.interface.BlockCipherSignature` for a core that processes one block at a time: it
owns the "key loaded" flag and the idle / key expansion / rounds / output-pending state, drives
``key.ready``, ``input.ready`` and ``output.valid``, and gives the datapath one strobe per event
(``load_key``, ``load_block``, ``take_output``) and one level per phase (``expanding``,
``running``). The datapath only says when a key expansion or a block is done.

:class:`~cipher_cores.cores.aes.AES` and the tests' toy cipher use :class:`Handshake`.
:class:`~cipher_cores.cores.present.PRESENT` writes the same state machine inline: as a submodule, synthesis
maps it to 1 (PRESENT-80) or 4 (PRESENT-128) more iCE40 LUT4s, and the refactor was to change no
gateware cost.
"""

import abc

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .interface import BlockCipherSignature


__all__ = ["BlockCipher", "CoreFigures", "check_block_cipher", "check_unmasked", "Handshake"]


class BlockCipher(wiring.Component, metaclass=abc.ABCMeta):
    """Base class of the cipher cores: the shared signature, the decryption flag and the cycle
    figures.

    A subclass implements ``elaborate`` and the three cycle properties below (it cannot be
    instantiated without them), each computed from its parameters, never measured; the contract
    tests (``tests/test_contract.py``) measure every catalog configuration by simulation and check
    that the figures are exact, and the same for every key, block and direction. A family base
    (:class:`~cipher_cores.cores.aes.base.AESCipher`,
    :class:`~cipher_cores.cores.present.base.PRESENTCipher`) adds only what is its cipher's own:
    the key sizes it allows and its block size.

    Subclasses read their parameters as ``self._key_bits`` and ``self._decrypt`` in
    ``elaborate``. A subclass whose signature has members beyond the contract's sets the class
    attribute :attr:`signature_class` to a subclass of
    :class:`~cipher_cores.cores.interface.BlockCipherSignature` that adds them.

    Parameters
    ----------
    block_bits, key_bits : :class:`int`
        Widths of a block and of a key, as in
        :class:`~cipher_cores.cores.interface.BlockCipherSignature` (which checks them).
    decrypt : :class:`bool`
        Whether the core has a decryption path (the default). Without it the core encrypts every
        block, whatever the block's ``decrypt`` bit says; a core that cannot leave decryption out
        passes ``True``, one that only encrypts ``False``.
    random_bits : :class:`int`
        0 for an unmasked core; a masked core's width of fresh random bits per transfer of its
        ``random`` stream (:class:`~cipher_cores.cores.interface.BlockCipherSignature`).

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
    input : ``In(stream.Signature(BlockRequest(block_bits)))``
    output : ``Out(stream.Signature(unsigned(block_bits)))``
        As in :class:`~cipher_cores.cores.interface.BlockCipherSignature`, with its contract.
    random : ``In(stream.Signature(unsigned(random_bits)))``, if ``random_bits`` > 0
    """
    #: The signature's class, called as ``signature_class(block_bits, key_bits,
    #: random_bits=random_bits)``.
    signature_class = BlockCipherSignature

    def __init__(self, block_bits: int, key_bits: int, *, decrypt: bool = True,
                 random_bits: int = 0):
        if not isinstance(decrypt, bool):
            raise TypeError(f"decrypt must be a bool (True or False), not {decrypt!r}")
        super().__init__(self.signature_class(block_bits, key_bits, random_bits=random_bits))
        self._key_bits = key_bits
        self._decrypt = decrypt

    @property
    def block_bits(self) -> int:
        """Width of a block."""
        return self.signature.block_bits

    @property
    def key_bits(self) -> int:
        """Width of a key."""
        return self.signature.key_bits

    @property
    def random_bits(self) -> int:
        """Width of the ``random`` stream of a masked core; 0 for a core without one."""
        return self.signature.random_bits

    @property
    def decrypts(self) -> bool:
        """Whether the core can decrypt: ``False`` for an encrypt-only core, which encrypts every
        block whatever its ``decrypt`` bit says (so ECB and CBC cannot decrypt with it)."""
        return self._decrypt

    @property
    @abc.abstractmethod
    def latency(self) -> int:
        """Edges from the edge where a block transfers in to the edge where its result transfers
        out, with ``output.ready`` held high. The same for every key, block and direction."""

    @property
    @abc.abstractmethod
    def initiation_interval(self) -> int:
        """Edges between the input transfers of blocks offered back to back under one key (and
        between their results), with ``output.ready`` held high."""

    @property
    @abc.abstractmethod
    def key_load_cycles(self) -> int:
        """Edges from a key transfer to the first edge at which a block can transfer."""


class CoreFigures:
    """The cycle figures of a component that wraps one core, ``self._core``, and adds no cycle
    to it (a :class:`BlockCipher` such as
    :class:`~cipher_cores.cores.randomized.RandomizedCore`, or an adapter such as
    :class:`~cipher_cores.cores.axis.AXIStreamCipher`): :attr:`~BlockCipher.latency`,
    :attr:`~BlockCipher.initiation_interval` and :attr:`~BlockCipher.key_load_cycles` are the
    core's. A mixin: put it first in the bases."""
    @property
    def latency(self) -> int:
        return self._core.latency

    @property
    def initiation_interval(self) -> int:
        return self._core.initiation_interval

    @property
    def key_load_cycles(self) -> int:
        return self._core.key_load_cycles


def check_block_cipher(core, name: str = "core") -> BlockCipher:
    """Return ``core`` if it is a :class:`BlockCipher`; raise :exc:`TypeError` naming the
    parameter ``name`` if it is not. Every consumer of a core checks its argument with this, so
    that they all refuse a non-core with the same message."""
    if not isinstance(core, BlockCipher):
        raise TypeError(f"{name} must be a BlockCipher (a cipher core of this library), "
                        f"not {core!r}")
    return core


def check_unmasked(core, consumer: str) -> BlockCipher:
    """Return ``core`` unless it is a masked core (``random_bits`` > 0), which ``consumer`` (a
    wrapper, top or bench that does not feed a ``random`` stream) refuses with
    :exc:`ValueError`: the core would wait for random bits forever. The message points to
    :class:`~cipher_cores.cores.randomized.RandomizedCore`, which such a consumer takes."""
    if getattr(core, "random_bits", 0):
        raise ValueError(f"{consumer} cannot feed the random stream of a masked core yet, "
                         f"and {core!r} has random_bits={core.random_bits}: wrap it in "
                         f"RandomizedCore (cipher_cores.cores.randomized), which feeds it "
                         f"from a PRNG")
    return core


class Handshake(wiring.Component):
    """The key/input/output handshake of a core that holds one block at a time.

    The core connects its streams with :meth:`connect_streams` (which drives ``key.ready``,
    ``input.ready`` and ``output.valid`` and reads the other handshake signals), tells the
    handshake when its key expansion and its rounds are done, and drives its datapath from the
    strobes. Everything else in the contract of :class:`~cipher_cores.cores.interface.BlockCipherSignature`
    follows from this state machine:

    ========== ============================== ===================================================
    state      ready / valid                  leaves
    ========== ============================== ===================================================
    Idle       ``key.ready``; ``input.ready``  to "Expand key" on a key transfer (if
               if a key is loaded and          ``expands_key``); to "Round" on a block transfer
               ``key.valid`` is low
    Expand key none                           to "Idle" on the edge where ``key_done`` is high
    Round      none                           to "Output" on the edge where ``block_done`` is high
    Output     ``output.valid``; with         to "Idle" on the output transfer, or to "Round" if
               ``overlap``, ``input.ready``    a block transfers on the same edge
               if ``output.ready`` is high
               and ``key.valid`` is low
    ========== ============================== ===================================================

    So ``key.ready`` is high only in "Idle" (no block in the core, no result waiting, no key
    expansion running), no block is accepted before the first key (the *key loaded* flag, cleared
    by reset), a waiting key goes before any further block (``input.ready`` is low while
    ``key.valid`` is high), and ``output.valid`` is a state, so it holds until the transfer. A
    reset returns to "Idle" with no key loaded.

    Cycle counts, with E the cycles of "Expand key" (the edges up to and including the one where
    ``key_done`` is high) and R those of "Round": latency R + 1; initiation interval R + 1 with
    ``overlap``, R + 2 without; key load E + 1 with ``expands_key``, 1 without.

    Parameters
    ----------
    expands_key : :class:`bool`
        Whether a key transfer is followed by a key expansion ("Expand key"); without one a block
        can transfer on the edge after the key.
    overlap : :class:`bool`
        Whether a block can transfer on the edge where the previous result transfers out (the
        datapath must then load the block and hand over the result on the same edge).

    Members
    -------
    key_valid, input_valid, output_ready : ``In(1)``
        The core's ``key.valid``, ``input.valid`` and ``output.ready``.
    key_ready, input_ready, output_valid : ``Out(1)``
        The core's ``key.ready``, ``input.ready`` and ``output.valid``.
    key_done : ``In(1)``
        High in the last cycle of the key expansion (read only in "Expand key").
    block_done : ``In(1)``
        High in the last round cycle of a block (read only in "Round").
    load_key : ``Out(1)``
        A key transfers on this edge.
    load_block : ``Out(1)``
        A block transfers on this edge.
    take_output : ``Out(1)``
        The result transfers out on this edge.
    expanding : ``Out(1)``
        In "Expand key": the key expansion advances on this edge.
    running : ``Out(1)``
        In "Round": the rounds advance on this edge.
    advancing : ``Out(1)``
        ``expanding | running``: the datapath's counter advances on this edge.
    key_loaded : ``Out(1)``
        A key has been loaded since reset.
    """
    key_valid: In(1)
    key_ready: Out(1)
    input_valid: In(1)
    input_ready: Out(1)
    output_valid: Out(1)
    output_ready: In(1)

    key_done: In(1)
    block_done: In(1)

    load_key: Out(1)
    load_block: Out(1)
    take_output: Out(1)
    expanding: Out(1)
    running: Out(1)
    advancing: Out(1)
    key_loaded: Out(1)

    def __init__(self, *, expands_key: bool = True, overlap: bool = True):
        for name, value in (("expands_key", expands_key), ("overlap", overlap)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be a bool, not {value!r}")
        self._expands_key = expands_key
        self._overlap = overlap
        super().__init__()

    @property
    def expands_key(self) -> bool:
        return self._expands_key

    @property
    def overlap(self) -> bool:
        return self._overlap

    def connect_streams(self, m: Module, core: wiring.Component):
        """Connect the ``valid``/``ready`` signals of ``core``'s three streams to this handshake
        (in ``m.d.comb``). The payloads are the datapath's business."""
        m.d.comb += [
            self.key_valid.eq(core.key.valid),
            core.key.ready.eq(self.key_ready),
            self.input_valid.eq(core.input.valid),
            core.input.ready.eq(self.input_ready),
            core.output.valid.eq(self.output_valid),
            self.output_ready.eq(core.output.ready),
        ]

    def elaborate(self, platform):
        m = Module()

        m.d.comb += [
            self.load_key.eq(self.key_valid & self.key_ready),
            self.load_block.eq(self.input_valid & self.input_ready),
            self.take_output.eq(self.output_valid & self.output_ready),
        ]
        with m.If(self.load_key):
            m.d.sync += self.key_loaded.eq(1)

        with m.FSM():
            with m.State("Idle"):
                m.d.comb += [
                    self.key_ready.eq(1),
                    self.input_ready.eq(self.key_loaded & ~self.key_valid),
                ]
                if self._expands_key:
                    with m.If(self.key_valid):
                        m.next = "Expand key"
                with m.If(self.load_block):
                    m.next = "Round"

            if self._expands_key:
                with m.State("Expand key"):
                    m.d.comb += [self.expanding.eq(1), self.advancing.eq(1)]
                    with m.If(self.key_done):
                        m.next = "Idle"

            with m.State("Round"):
                m.d.comb += [self.running.eq(1), self.advancing.eq(1)]
                with m.If(self.block_done):
                    m.next = "Output"

            with m.State("Output"):
                # The result leaves on an edge where output.ready is high; with `overlap` the
                # datapath can take the next block on that same edge. A key waits for "Idle".
                m.d.comb += self.output_valid.eq(1)
                if self._overlap:
                    m.d.comb += self.input_ready.eq(self.output_ready & ~self.key_valid)
                with m.If(self.output_ready):
                    m.next = "Idle"
                with m.If(self.load_block):
                    m.next = "Round"

        return m
