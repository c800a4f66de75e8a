"""The SoC's Wishbone arbiter: the CPU and the peripheral's DMA master share one bus."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..bus.wishbone import WishboneSignature


__all__ = ["WishboneArbiter"]


class WishboneArbiter(wiring.Component):
    """Two Wishbone B4 classic initiators, ``cpu`` and ``dma``, onto one bus, round robin.

    Members
    -------
    cpu : ``In(WishboneSignature(addr_width=30))``
        From the CPU (word address).
    dma : ``In(WishboneSignature(addr_width=30, features={"err"}))``
        From the cipher peripheral's DMA master. Its ``err`` is always 0: the SoC's address
        decoder acknowledges every address, mapped or not.
    bus : ``Out(WishboneSignature(addr_width=30))``
        To the address decoder.

    Arbitration is round robin between the two: the initiator that has the bus (the *owner*,
    the CPU after reset) keeps it for as long as it holds ``cyc`` high, for any number of
    accesses; in a cycle where the owner's ``cyc`` is low and the other's is high, the other
    gets the bus in that cycle (no cycle is lost to the hand-over) and becomes the owner. An
    initiator that is not granted simply waits, as for a target's wait states: its ``ack``
    stays low.

    One exception guards against an abandoned access. The targets of the SoC acknowledge on
    the edge after the strobe, from a flip-flop; an initiator that drops ``cyc`` before its
    ``ack`` (the DMA does when ``CTRL.CLEAR`` aborts it) may leave an ``ack`` in flight. So the
    bus is not handed over in the cycle after one where it carried a strobe without ``ack``:
    the other initiator gets it an edge later, and the stray ``ack`` reaches no one.

    Cycle behaviour and paths: the granted initiator's ``cyc``, ``stb``, ``we``, ``adr``,
    ``dat_w`` and ``sel`` reach ``bus`` through a multiplexer chosen in the cycle from both
    ``cyc`` and two flip-flops (the owner, and the access left without ``ack``); ``ack`` and
    ``dat_r`` go back to the owner of the previous edge, which is the granted initiator in
    every cycle an ``ack`` can arrive (a target's ``ack`` answers the strobe of the edge
    before). So no combinational path runs from an initiator's ``cyc`` to its own or the
    other's ``ack``: the arbiter closes no loop, whatever the initiators do with ``ack``.
    """
    cpu: In(WishboneSignature(addr_width=30))
    dma: In(WishboneSignature(addr_width=30, features={"err"}))
    bus: Out(WishboneSignature(addr_width=30))

    def elaborate(self, platform):
        m = Module()
        cpu, dma, bus = self.cpu, self.dma, self.bus

        owner_dma = Signal()        # the owner: 0 the CPU, 1 the DMA
        in_flight = Signal()        # the bus carried a strobe without ack at the last edge
        grant_dma = Signal()        # the initiator on the bus in this cycle
        owner_cyc = Mux(owner_dma, dma.cyc, cpu.cyc)
        other_cyc = Mux(owner_dma, cpu.cyc, dma.cyc)
        m.d.comb += grant_dma.eq(owner_dma ^ (~owner_cyc & other_cyc & ~in_flight))
        m.d.sync += [
            owner_dma.eq(grant_dma),
            in_flight.eq(bus.cyc & bus.stb & ~bus.ack),
        ]

        for name in ("cyc", "stb", "we", "adr", "dat_w", "sel"):
            m.d.comb += getattr(bus, name).eq(
                Mux(grant_dma, getattr(dma, name), getattr(cpu, name)))
        m.d.comb += [
            cpu.dat_r.eq(bus.dat_r),
            dma.dat_r.eq(bus.dat_r),
            cpu.ack.eq(bus.ack & ~owner_dma),
            dma.ack.eq(bus.ack & owner_dma),
            dma.err.eq(0),
        ]
        return m
