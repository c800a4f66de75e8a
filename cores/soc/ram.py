"""Block RAM on the SoC's Wishbone bus, initialised with the firmware image."""

from __future__ import annotations

from amaranth.hdl import Module, Mux
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In

from ..bus.wishbone import WishboneSignature


__all__ = ["WishboneRAM", "image_words"]


def image_words(image: bytes) -> list:
    """``image`` (a little-endian RV32 memory image) as 32-bit words, zero-padded."""
    padded = bytes(image) + bytes(-len(image) % 4)
    return [int.from_bytes(padded[at:at + 4], "little") for at in range(0, len(padded), 4)]


class WishboneRAM(wiring.Component):
    """A RAM of 32-bit words with byte writes, on a Wishbone B4 classic target port.

    Parameters
    ----------
    size_bytes : :class:`int`
        A power of two from 512 bytes to 256 KiB.
    image : :class:`bytes`
        Initial contents from address 0 (little-endian words, as a RV32 CPU sees them); the rest
        is zero. At most ``size_bytes``.

    Members
    -------
    bus : ``In(WishboneSignature(addr_width=log2(size_bytes // 4)))``

    Every access is acknowledged on the next edge (one wait state: the read port is
    registered, so synthesis puts the words in block RAM: ``SB_RAM40_4K`` on iCE40, ``DP16KD``
    on ECP5).
    """
    def __init__(self, *, size_bytes: int, image: bytes = b""):
        if not isinstance(size_bytes, int) or isinstance(size_bytes, bool):
            raise TypeError(f"size_bytes must be an integer, not {size_bytes!r}")
        if size_bytes < 512 or size_bytes > (256 << 10) or size_bytes & (size_bytes - 1):
            raise ValueError(f"size_bytes must be a power of two from 512 to 262144, "
                             f"not {size_bytes!r}")
        if len(image) > size_bytes:
            raise ValueError(f"image of {len(image)} bytes does not fit in {size_bytes} bytes "
                             f"of RAM ({len(image) - size_bytes} bytes too many)")
        self._size_bytes = size_bytes
        self._words = image_words(image)
        super().__init__({
            "bus": In(WishboneSignature(addr_width=(size_bytes // 4).bit_length() - 1)),
        })

    @property
    def size_bytes(self) -> int:
        return self._size_bytes

    def elaborate(self, platform):
        m = Module()
        m.submodules.memory = storage = memory.Memory(
            shape=32, depth=self._size_bytes // 4, init=self._words,
            attrs={"ram_style": "block"})
        read = storage.read_port()
        write = storage.write_port(granularity=8)
        access = self.bus.cyc & self.bus.stb & ~self.bus.ack
        m.d.comb += [
            read.addr.eq(self.bus.adr),
            write.addr.eq(self.bus.adr),
            write.data.eq(self.bus.dat_w),
            write.en.eq(Mux(access & self.bus.we, self.bus.sel, 0)),
            self.bus.dat_r.eq(read.data),
        ]
        m.d.sync += self.bus.ack.eq(access)
        return m
