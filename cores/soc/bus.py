"""The SoC's Wishbone interconnect: one initiator, targets selected by the top address bits."""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..bus.wishbone import WishboneSignature
from .memory_map import REGION_SHIFT


__all__ = ["WishboneDecoder"]


class WishboneDecoder(wiring.Component):
    """Routes one Wishbone B4 classic initiator to the target whose region holds the address.

    Parameters
    ----------
    regions : mapping of name to ``(base, addr_width)``
        Each target's byte base address (a multiple of ``2 ** REGION_SHIFT``, see
        :mod:`cipher_cores.cores.soc.memory_map`) and the width of its word address. The region is chosen by
        byte-address bits ``31..REGION_SHIFT``; the target sees the low ``addr_width`` bits of
        the word address.

    Members
    -------
    bus : ``In(WishboneSignature(addr_width=30))``
        From the initiator (a word address: byte address // 4).
    <name> : ``Out(WishboneSignature(addr_width=...))``
        One per region, to its target.

    An access outside every region is acknowledged on the next edge; a write does nothing and a
    read returns 0, so a stray pointer never hangs the bus. No registers on the path: a target's
    ``ack`` and ``dat_r`` reach the initiator in the same cycle.
    """
    def __init__(self, regions: dict):
        if not regions:
            raise ValueError("regions must name at least one target")
        selects = {}
        for name, (base, addr_width) in regions.items():
            if base % (1 << REGION_SHIFT) or not 0 <= base < (1 << 32):
                raise ValueError(f"region {name!r}: base {base:#x} must be a multiple of "
                                 f"{1 << REGION_SHIFT:#x} below 2**32")
            if not 0 < addr_width <= REGION_SHIFT - 2:
                raise ValueError(f"region {name!r}: addr_width must be from 1 to "
                                 f"{REGION_SHIFT - 2}, not {addr_width!r}")
            select = base >> REGION_SHIFT
            if select in selects.values():
                raise ValueError(f"region {name!r} overlaps another at {base:#x}")
            selects[name] = select
        self._regions = dict(regions)
        self._selects = selects
        super().__init__({
            "bus": In(WishboneSignature(addr_width=30)),
            **{name: Out(WishboneSignature(addr_width=addr_width))
               for name, (_, addr_width) in regions.items()},
        })

    def elaborate(self, platform):
        m = Module()
        select = self.bus.adr[REGION_SHIFT - 2:]
        unmapped_ack = Signal()
        m.d.comb += self.bus.ack.eq(unmapped_ack)
        matched = []
        for name, (_, addr_width) in self._regions.items():
            target = getattr(self, name)
            chosen = select == self._selects[name]
            matched.append(chosen)
            m.d.comb += [
                target.adr.eq(self.bus.adr[:addr_width]),
                target.dat_w.eq(self.bus.dat_w),
                target.sel.eq(self.bus.sel),
                target.we.eq(self.bus.we),
                target.cyc.eq(self.bus.cyc & chosen),
                target.stb.eq(self.bus.stb & chosen),
            ]
            with m.If(chosen):
                m.d.comb += [self.bus.ack.eq(target.ack), self.bus.dat_r.eq(target.dat_r)]
        unmapped = self.bus.cyc & self.bus.stb
        for chosen in matched:
            unmapped &= ~chosen
        m.d.sync += unmapped_ack.eq(unmapped & ~unmapped_ack)
        return m
