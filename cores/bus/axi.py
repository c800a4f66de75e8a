"""AXI4-Lite: the bus signature and a bridge that puts a Wishbone target behind an AXI4-Lite
slave port (AMBA AXI and ACE Protocol Specification, ARM IHI 0022, the AXI4-Lite subset).

The peripheral's register file is a Wishbone B4 classic target
(:class:`~cipher_cores.cores.bus.registers.RegisterFile`); :class:`AXI4LiteToWishbone` gives it
AXI4-Lite's five channels without adding an edge to an access: the address (and write data) is
accepted on the edge the Wishbone target takes the access, and the response is offered in the
target's acknowledge cycle, so an access that waits for its response takes two edges, as on
Wishbone. A Wishbone ``err`` becomes the response ``SLVERR``.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .wishbone import WishboneSignature


__all__ = ["AXI4LiteSignature", "AXI4LiteToWishbone", "axi_top", "OKAY", "SLVERR"]


#: ``BRESP``/``RRESP`` values: the access succeeded, or the target refused it.
OKAY, SLVERR = 0b00, 0b10


class AXI4LiteSignature(wiring.Signature):
    """An AXI4-Lite interface, seen from the manager (master); a subordinate (slave) port is
    ``In(AXI4LiteSignature(...))``.

    Parameters
    ----------
    addr_width : :class:`int`
        Width of ``awaddr`` and ``araddr``: byte addresses.
    data_width : :class:`int`
        32 or 64 (AXI4-Lite's widths).

    Members
    -------
    Write address ``awaddr``, ``awprot`` (3 bits), ``awvalid``, ``awready``; write data
    ``wdata``, ``wstrb`` (a bit per byte lane), ``wvalid``, ``wready``; write response
    ``bresp`` (2 bits), ``bvalid``, ``bready``; read address ``araddr``, ``arprot``, ``arvalid``,
    ``arready``; read data ``rdata``, ``rresp``, ``rvalid``, ``rready``. A transfer happens on
    the edge where a channel's valid and ready are both high.
    """
    def __init__(self, *, addr_width: int, data_width: int = 32):
        if not isinstance(addr_width, int) or isinstance(addr_width, bool) or addr_width < 1:
            raise TypeError(f"addr_width must be a positive integer, not {addr_width!r}")
        if data_width not in (32, 64):
            raise ValueError(f"data_width must be 32 or 64, not {data_width!r}")
        self._addr_width, self._data_width = addr_width, data_width
        super().__init__({
            "awaddr": Out(addr_width), "awprot": Out(3), "awvalid": Out(1), "awready": In(1),
            "wdata": Out(data_width), "wstrb": Out(data_width // 8), "wvalid": Out(1),
            "wready": In(1),
            "bresp": In(2), "bvalid": In(1), "bready": Out(1),
            "araddr": Out(addr_width), "arprot": Out(3), "arvalid": Out(1), "arready": In(1),
            "rdata": In(data_width), "rresp": In(2), "rvalid": In(1), "rready": Out(1),
        })

    @property
    def addr_width(self) -> int:
        return self._addr_width

    @property
    def data_width(self) -> int:
        return self._data_width

    def __eq__(self, other):
        return (type(other) is type(self) and other.addr_width == self.addr_width and
                other.data_width == self.data_width)

    def __hash__(self):
        return hash((type(self), self._addr_width, self._data_width))

    def __repr__(self):
        return (f"AXI4LiteSignature(addr_width={self.addr_width}, "
                f"data_width={self.data_width})")


class AXI4LiteToWishbone(wiring.Component):
    """An AXI4-Lite subordinate port in front of a Wishbone B4 classic target with ``err``.

    Parameters
    ----------
    addr_width : :class:`int`
        Width of the Wishbone word address; the AXI byte address is ``addr_width`` + 2 bits
        (32-bit data). The two low address bits are ignored (``wstrb`` selects the bytes).

    Members
    -------
    axi : ``In(AXI4LiteSignature(addr_width=addr_width + 2, data_width=32))``
    wishbone : ``Out(WishboneSignature(addr_width=addr_width, data_width=32, granularity=8,
    features={"err"}))``

    Cycle behaviour
    ---------------
    One access at a time. A write waits for both its address and its data (``awvalid`` and
    ``wvalid``) and no write response still waiting to be taken; a read for ``arvalid`` and no
    read response waiting. When both a read and a write could start, they alternate. The
    access is offered to Wishbone at once (``cyc``/``stb`` follow the AXI valid signals in that
    cycle) and the AXI address and data are accepted (``awready``/``wready`` or ``arready``) on
    the edge the target takes it, then held for Wishbone until it ends; the response is offered
    (``bvalid``/``rvalid``, with ``rdata``) in the cycle of ``ack`` or ``err`` and held until
    taken. With a target that acknowledges on the edge after it takes an access (as
    :class:`~cipher_cores.cores.bus.registers.RegisterFile` does), an access takes two edges
    from its valid to its response transfer and the next access can start on that edge. A
    target that answers in the cycle it is strobed gets its response offered an edge later
    (AXI wants the response after the address transfer).

    Responses: ``OKAY``, or ``SLVERR`` for a Wishbone ``err`` (the target refused the access).
    ``awprot``/``arprot`` are ignored.
    """
    def __init__(self, *, addr_width: int):
        self._addr_width = addr_width
        super().__init__({
            "axi": In(AXI4LiteSignature(addr_width=addr_width + 2, data_width=32)),
            "wishbone": Out(WishboneSignature(addr_width=addr_width, data_width=32,
                                              granularity=8, features={"err"})),
        })

    def elaborate(self, platform):
        m = Module()
        axi, wb = self.axi, self.wishbone

        # A response waiting for its ready: set when the target answers and the manager is not
        # ready (or when the target answered in its strobe cycle), cleared when taken.
        b_held, b_err = Signal(), Signal()
        r_held, r_err, r_data = Signal(), Signal(), Signal(32)
        write_free = Signal()
        read_free = Signal()
        m.d.comb += [write_free.eq(~b_held | axi.bready), read_free.eq(~r_held | axi.rready)]

        # The access in progress (after the edge that started it), its direction and the
        # AXI request it holds for Wishbone.
        active, active_write = Signal(), Signal()
        held_adr, held_data, held_sel = Signal(self._addr_width), Signal(32), Signal(4)
        last_write = Signal()       # the last access started was a write: a read goes next

        want_write = Signal()
        want_read = Signal()
        m.d.comb += [want_write.eq(axi.awvalid & axi.wvalid & write_free),
                     want_read.eq(axi.arvalid & read_free)]
        start_write = Signal()
        start_read = Signal()
        m.d.comb += [
            start_write.eq(~active & want_write & ~(want_read & last_write)),
            start_read.eq(~active & want_read & ~start_write),
        ]
        strobe_write = Signal()
        m.d.comb += strobe_write.eq(Mux(active, active_write, start_write))

        m.d.comb += [
            wb.cyc.eq(active | start_write | start_read),
            wb.stb.eq(active | start_write | start_read),
            wb.we.eq(strobe_write),
            wb.adr.eq(Mux(active, held_adr,
                          Mux(start_write, axi.awaddr[2:], axi.araddr[2:]))),
            wb.dat_w.eq(Mux(active, held_data, axi.wdata)),
            wb.sel.eq(Mux(active, held_sel, Mux(start_write, axi.wstrb, 0b1111))),
            # The request is accepted as the access starts.
            axi.awready.eq(start_write),
            axi.wready.eq(start_write),
            axi.arready.eq(start_read),
        ]
        answered = Signal()
        m.d.comb += answered.eq(wb.ack | wb.err)

        with m.If(start_write | start_read):
            m.d.sync += [held_adr.eq(wb.adr), held_data.eq(wb.dat_w), held_sel.eq(wb.sel),
                         active_write.eq(start_write), last_write.eq(start_write)]
            with m.If(~answered):
                m.d.sync += active.eq(1)
        with m.If(active & answered):
            m.d.sync += active.eq(0)

        # The responses: offered in the answer cycle of an access in progress, else held.
        answer_write = Signal()
        answer_read = Signal()
        m.d.comb += [answer_write.eq(active & active_write & answered),
                     answer_read.eq(active & ~active_write & answered)]
        m.d.comb += [
            axi.bvalid.eq(b_held | answer_write),
            axi.bresp.eq(Mux(b_held, b_err, wb.err) << 1),
            axi.rvalid.eq(r_held | answer_read),
            axi.rresp.eq(Mux(r_held, r_err, wb.err) << 1),
            axi.rdata.eq(Mux(r_held, r_data, wb.dat_r)),
        ]
        with m.If(axi.bvalid & axi.bready):
            m.d.sync += b_held.eq(0)
        with m.If((answer_write & ~axi.bready) | (start_write & answered)):
            m.d.sync += [b_held.eq(1), b_err.eq(wb.err)]
        with m.If(axi.rvalid & axi.rready):
            m.d.sync += r_held.eq(0)
        with m.If((answer_read & ~axi.rready) | (start_read & answered)):
            m.d.sync += [r_held.eq(1), r_err.eq(wb.err), r_data.eq(wb.dat_r)]
        return m


def axi_top(peripheral):
    """``peripheral`` (a :class:`~cipher_cores.cores.bus.CipherPeripheral` built with
    ``protocol="axi4-lite"``) as a top module with Xilinx-style port names: ``aclk``, ``aresetn``
    (synchronous, active low), ``s_axi_awaddr`` ... ``s_axi_rready`` and ``irq``
    (a :class:`~cipher_cores.cores.flat_top.FlatTop`): what ``cipher-cores export --core
    axi:CORE`` writes."""
    from ..flat_top import FlatTop
    if getattr(peripheral, "protocol", None) != "axi4-lite":
        raise ValueError(f"axi_top takes a CipherPeripheral built with protocol='axi4-lite', "
                         f"not {peripheral!r}")
    return FlatTop(peripheral, name=lambda path: "s_axi_" + path[1] if path[0] == "bus"
                   else "_".join(map(str, path)))
