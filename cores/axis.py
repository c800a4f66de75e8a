"""The AXI4-Stream form of a cipher core: Xilinx-style flat ports, bytes in AXI order, ``tlast``.

:class:`AXIStreamCipher` puts any :class:`~cipher_cores.cores.cipher.BlockCipher` behind three
AXI4-Stream channels (a key channel, a slave channel of blocks and a master channel of results),
one whole block or key per transfer, with the byte order of AXI4-Stream and a ``tlast`` that
travels with each block through the core. :func:`axis_top` is the same with its own ``aclk`` and
active-low ``aresetn`` (:class:`~cipher_cores.cores.flat_top.FlatTop`): the module that
``cipher-cores export --axis`` writes.
"""

from amaranth.hdl import Cat, Module, Value
from amaranth.lib import fifo, wiring
from amaranth.lib.wiring import In, Out

from .cipher import BlockCipher, CoreFigures, check_block_cipher, check_unmasked
from .flat_top import FlatTop


__all__ = ["AXIStreamCipher", "axis_top", "byte_swap", "tlast_depth"]


def byte_swap(value: Value, bits: int) -> Value:
    """``value`` (``bits`` wide, a multiple of 8) with its bytes in the opposite order: byte lane
    0 (bits 7..0) of the result is the most significant byte of ``value``. Its own inverse."""
    count = bits // 8
    return Cat(value.word_select(count - 1 - lane, 8) for lane in range(count))


def tlast_depth(core: BlockCipher) -> int:
    """Entries of the ``tlast`` FIFO that let ``core`` run at full speed.

    With results taken as soon as they are valid, block ``k`` enters at edge ``k * II`` and
    leaves at edge ``k * II + L`` (``II`` the initiation interval, ``L`` the latency). Just
    before the edge where block ``k`` enters, the blocks ``j < k`` still inside are those with
    ``j * II + L >= k * II`` (one leaving on that very edge still counts, as the FIFO's room is
    read before the edge): ``L // II`` of them. One more entry takes block ``k``."""
    check_block_cipher(core, "core")
    return core.latency // core.initiation_interval + 1


def _check_bytes(name: str, bits: int):
    if bits % 8:
        raise ValueError(f"{name} must be a multiple of 8 for AXI4-Stream byte lanes, "
                         f"not {bits!r}")


class AXIStreamCipher(CoreFigures, wiring.Component):
    """A cipher core with AXI4-Stream channels: a key channel, blocks in, results out.

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        Any cipher core of this library (:exc:`TypeError` otherwise), with block and key widths
        that are whole bytes (:exc:`ValueError` otherwise). It becomes a submodule.

    Members
    -------
    s_axis_key_tdata : ``In(key_bits)``
    s_axis_key_tvalid : ``In(1)``
    s_axis_key_tready : ``Out(1)``
        The key channel: each transfer loads a key, used for every block accepted after it. As
        for the core, ``s_axis_key_tready`` is high only when no block is in the core, and a
        waiting key goes before any further block.
    s_axis_tdata : ``In(block_bits)``
        A block: plaintext to encrypt or ciphertext to decrypt.
    s_axis_tuser : ``In(1)``
        1 to decrypt the block, 0 to encrypt it. An encrypt-only core (``decrypt=False``)
        encrypts every block, whatever ``s_axis_tuser`` says.
    s_axis_tlast : ``In(1)``
        Passed through with the block: it comes out as the ``m_axis_tlast`` of its result (a
        message boundary for a DMA engine). The adapter gives it no other meaning.
    s_axis_tvalid : ``In(1)``
    s_axis_tready : ``Out(1)``
        The block channel's handshake: the core's ``input.ready``, and low while the ``tlast``
        FIFO is full.
    m_axis_tdata : ``Out(block_bits)``
        A result, one per block, in the order the blocks went in.
    m_axis_tlast : ``Out(1)``
        The ``s_axis_tlast`` that came in with the block of this result.
    m_axis_tvalid : ``Out(1)``
    m_axis_tready : ``In(1)``
        The result channel's handshake (the core's ``output.valid`` and ``output.ready``).

    Every channel follows the AXI4-Stream handshake (the rules of :mod:`amaranth.lib.stream`): a
    transfer happens on a rising edge of the clock where ``tvalid`` and ``tready`` are both high;
    once ``m_axis_tvalid`` is high, it and ``m_axis_tdata``/``m_axis_tlast`` hold until the
    transfer. There is no ``tkeep``/``tstrb``: every transfer is a whole block or key.

    Byte order
    ----------
    As AXI4-Stream has it, byte lane ``i`` (``tdata[8i+7:8i]``) is byte ``i`` of the stream: for
    AES, ``tdata[7:0]`` is the first byte of the FIPS-197 byte sequence of the block or key, so
    ``tdata`` is ``int.from_bytes(fips197_bytes, "little")``. The core's integers are big-endian
    (:class:`~cipher_cores.cores.interface.BlockCipherSignature`); the adapter reverses the
    bytes on each channel, which costs only wires. For PRESENT the block b63..b0 and the key
    k79..k0 (or k127..k0) are written as bytes most significant first, so ``tdata[7:0]`` is
    b63..b56 (k79..k72).

    Cycle behaviour
    ---------------
    The adapter adds no register on the data or handshake paths: with ``m_axis_tready`` held high, a result comes
    :attr:`latency` edges after its block went in and blocks go in every
    :attr:`initiation_interval` edges, the core's figures; a key load costs the core's
    :attr:`key_load_cycles`. The ``tlast`` bits wait in a FIFO of :func:`tlast_depth` entries
    (``latency // initiation_interval + 1``), which is never full at full speed; when results
    are held back (``m_axis_tready`` low) and the core could take more blocks than that, the
    full FIFO holds ``s_axis_tready`` low, so that every ``tlast`` is kept.

    Reset
    -----
    The ``sync`` domain's reset (``aresetn`` low in :func:`axis_top`) empties the core and the
    ``tlast`` FIFO and leaves no key loaded, as it does for the core.
    """
    def __init__(self, core: BlockCipher):
        check_block_cipher(core, "core")
        check_unmasked(core, "AXIStreamCipher")
        _check_bytes("the core's block_bits", core.block_bits)
        _check_bytes("the core's key_bits", core.key_bits)
        self._core = core
        self._depth = tlast_depth(core)
        super().__init__({
            "s_axis_key_tdata":  In(core.key_bits),
            "s_axis_key_tvalid": In(1),
            "s_axis_key_tready": Out(1),
            "s_axis_tdata":      In(core.block_bits),
            "s_axis_tuser":      In(1),
            "s_axis_tlast":      In(1),
            "s_axis_tvalid":     In(1),
            "s_axis_tready":     Out(1),
            "m_axis_tdata":      Out(core.block_bits),
            "m_axis_tlast":      Out(1),
            "m_axis_tvalid":     Out(1),
            "m_axis_tready":     In(1),
        })

    @property
    def core(self) -> BlockCipher:
        """The wrapped core."""
        return self._core

    @property
    def block_bits(self) -> int:
        return self._core.block_bits

    @property
    def key_bits(self) -> int:
        return self._core.key_bits

    @property
    def tlast_depth(self) -> int:
        """Entries of the ``tlast`` FIFO (:func:`tlast_depth`)."""
        return self._depth

    def elaborate(self, platform):
        m = Module()
        core = m.submodules.core = self._core
        # Unbuffered: the head entry is readable on the edge after its write, and a core's
        # latency is at least one edge, so m_axis_tlast is always there with its result.
        tlast = m.submodules.tlast = fifo.SyncFIFO(width=1, depth=self._depth)

        def key_channel():
            m.d.comb += [
                core.key.payload.eq(byte_swap(self.s_axis_key_tdata, self.key_bits)),
                core.key.valid.eq(self.s_axis_key_tvalid),
                self.s_axis_key_tready.eq(core.key.ready),
            ]

        def block_channel():
            # The core sees the block only while the FIFO has room, so that the core and the
            # FIFO take it on the same edge. The room can only shrink by a transfer, so the
            # core's input.valid, once high, holds until the transfer, as streams require.
            m.d.comb += [
                core.input.payload.block.eq(byte_swap(self.s_axis_tdata, self.block_bits)),
                core.input.payload.decrypt.eq(self.s_axis_tuser),
                core.input.valid.eq(self.s_axis_tvalid & tlast.w_rdy),
                self.s_axis_tready.eq(core.input.ready & tlast.w_rdy),
                tlast.w_data.eq(self.s_axis_tlast),
                tlast.w_en.eq(self.s_axis_tvalid & self.s_axis_tready),
            ]

        def result_channel():
            m.d.comb += [
                self.m_axis_tdata.eq(byte_swap(core.output.payload, self.block_bits)),
                self.m_axis_tlast.eq(tlast.r_data),
                self.m_axis_tvalid.eq(core.output.valid),
                core.output.ready.eq(self.m_axis_tready),
                tlast.r_en.eq(core.output.valid & self.m_axis_tready),
            ]

        key_channel()
        block_channel()
        result_channel()
        return m


def axis_top(core: BlockCipher) -> FlatTop:
    """``core`` as :class:`AXIStreamCipher` in a :class:`~cipher_cores.cores.flat_top.FlatTop`:
    the ports of :class:`AXIStreamCipher` under their own names, plus the clock ``aclk`` and the
    synchronous, active-low reset ``aresetn``. This is the module ``cipher-cores export --axis``
    writes."""
    check_block_cipher(core, "core")     # before anything is built that would go unused
    return FlatTop(AXIStreamCipher(core), name=lambda path: path[0])
