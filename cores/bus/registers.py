"""A Wishbone register file generated from the register map (:mod:`cipher_cores.cores.bus.regmap`).

The map says, for every register, its address, its fields, each field's access kind and whether
the file holds the value; :class:`RegisterFile` builds exactly that and nothing else: the
decoder, one flip-flop per stored field bit (written a byte lane at a time, so no multiplexer
sits in front of it), the one-edge strobes of ``w1`` fields, the sticky ``rw1c`` flags, and a
read multiplexer over the readable bits. The map, the C header, the Markdown table and the
hardware cannot drift apart: they are all made from :data:`~cipher_cores.cores.bus.regmap.REGISTERS`.
"""

from amaranth.hdl import Cat, Module, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from . import regmap
from .wishbone import WishboneSignature


__all__ = ["RegisterFile", "field_layout", "port_name"]


def field_layout(register: regmap.Register, omit=frozenset()) -> data.FlexibleLayout:
    """The fields of ``register`` (less those named in ``omit``, as ``"REG.FIELD"``) at their
    bit offsets in a 32-bit word; a register without fields is one 32-bit field ``value``."""
    fields = {item.name.lower(): data.Field(item.width, item.offset)
              for item in register.fields if f"{register.name}.{item.name}" not in omit}
    if not register.fields:
        fields = {"value": data.Field(regmap.BUS_DATA_WIDTH, 0)}
    return data.FlexibleLayout(regmap.BUS_DATA_WIDTH, fields)


def port_name(register: regmap.Register, index: int = 0) -> str:
    """``ctrl``, or ``key3`` for word 3 of a register with several words."""
    return register.name.lower() + (str(index) if register.count > 1 else "")


class RegisterFile(wiring.Component):
    """A Wishbone B4 classic target holding the registers of :data:`regmap.REGISTERS`.

    Parameters
    ----------
    absent : set of :class:`str`
        What this build does not have: registers (``"TAG"``), words of a register
        (``"KEY4"``) and fields (``"CTRL.TAG_BYTES"``). An absent register or word is unmapped
        (an access flags ``ERROR.BAD_ADDRESS`` and reads 0); an absent field holds nothing and
        reads 0.
    bus_errors : :class:`bool`
        Give the bus the ``err`` signal (:class:`WishboneSignature` feature ``"err"``) and end
        every access the file flags (``BAD_ADDRESS``, ``READ_ONLY``, ``BUSY_WRITE``) with
        ``err`` instead of ``ack`` (in the same cycle); the flag is set all the same. For a
        bus that reports errors to the initiator (AXI4-Lite's ``SLVERR``:
        :class:`~cipher_cores.cores.bus.axi.AXI4LiteToWishbone`).

    Members
    -------
    bus : ``In(WishboneSignature(addr_width=6, data_width=32, granularity=8))``
        With ``features={"err"}`` if ``bus_errors``.
    busy : ``In(1)``
        While high, writes to the registers marked ``busy_refused`` in the map are refused
        (nothing changes, ``ERROR.BUSY_WRITE`` is set); ``CTRL.CLEAR`` is always obeyed.
    clear : ``In(1)``
        Zeroes every stored register the map marks ``cleared``, on the next edge.
    error_set : ``In(field_layout(ERROR))``
        Sets ``ERROR`` flags (the file sets ``BUSY_WRITE``, ``BAD_ADDRESS`` and ``READ_ONLY``
        itself).
    write_data : ``Out(32)``, ``write_sel`` : ``Out(4)``
        The data and byte selects of the access in progress (for the write strobes below).
    For each register word (``ctrl``, ``key0`` ... ``key7``, named by :func:`port_name`):

    * stored (``rw``, ``wo``, ``rw1c``; ``w1`` fields are one-edge strobes): ``Out(layout)``,
      the value (a ``w1`` field is 1 for the one edge after the write that set it);
    * read-only: ``In(layout)``, what reads return (``value`` field for a register without
      fields);
    * not stored but writable (``IV``, ``DIN``): ``In(32)`` readback where readable, and
      ``<name>_write``: ``Out(1)``, high in the cycle the write is applied (the ack cycle, with
      ``write_data``, ``write_sel``), after the busy refusal;
    * every readable register also has ``<name>_read``: ``Out(1)``, high in the cycle a read
      is taken (``DOUT`` pops a word on its edge);
    * every writable stored register also has ``<name>_write``: ``Out(1)`` as above, after the
      busy refusal.

    Cycle behaviour
    ---------------
    An access is taken on the edge where ``cyc`` and ``stb`` are high and ``ack`` is low; ``ack``
    and the read data are registered, so each access takes two edges and ``ack`` is low for at
    least one edge between accesses. A write is registered when taken and applied in the cycle
    after, decoded from flip-flops (its strobes are high in that cycle, a ``w1`` field's an
    edge later): it lands on the edge that acknowledges it, and the next access sees it. A read
    of a ``rw1c`` register also sees the flags being raised in its own cycle.
    """
    def __init__(self, *, absent=frozenset(), bus_errors: bool = False):
        if not isinstance(bus_errors, bool):
            raise TypeError(f"bus_errors must be True or False, not {bus_errors!r}")
        self._bus_errors = bus_errors
        absent = frozenset(absent)
        known = {reg.name for reg in regmap.REGISTERS}
        known |= {port_name(reg, i).upper() for reg in regmap.REGISTERS if reg.count > 1
                  for i in range(reg.count)}
        known |= {f"{reg.name}.{item.name}" for reg in regmap.REGISTERS for item in reg.fields}
        unknown = absent - known
        if unknown:
            raise ValueError(f"absent names {sorted(unknown)!r}, which the register map does "
                             f"not have")
        self._absent = absent
        members = {
            "bus": In(WishboneSignature(addr_width=(regmap.ADDRESS_BYTES // 4 - 1).bit_length(),
                                        data_width=32, granularity=8,
                                        features={"err"} if bus_errors else ())),
            "busy": In(1),
            "clear": In(1),
            "error_set": In(field_layout(regmap.register("ERROR"))),
            "write_data": Out(32),
            "write_sel": Out(4),
        }
        self._words = []        # (register, index, name, layout)
        for reg in regmap.REGISTERS:
            if reg.name in absent:
                continue
            for index in range(reg.count):
                name = port_name(reg, index)
                if name.upper() in absent and reg.count > 1:
                    continue
                layout = field_layout(reg, absent)
                self._words.append((reg, index, name, layout))
                if reg.access == "ro":
                    members[name] = In(layout)
                elif reg.stored:
                    members[name] = Out(layout)
                elif reg.access == "rw":
                    members[name] = In(32)
                if reg.access in ("ro", "rw", "rw1c"):
                    members[f"{name}_read"] = Out(1)
                if reg.access != "ro":
                    members[f"{name}_write"] = Out(1)
        super().__init__(members)

    @property
    def absent(self) -> frozenset:
        return self._absent

    def elaborate(self, platform):
        m = Module()
        bus = self.bus

        # Reads are decoded from the bus and answered with ack; writes are registered when taken
        # and applied in the cycle after (the ack cycle), decoded from flip-flops: the bus
        # handshake reaches no write enable. A write lands on the edge that acknowledges it.
        take = Signal()
        if self._bus_errors:
            answering = Signal()    # the cycle after an access was taken: ack or err
            m.d.sync += answering.eq(take)
            m.d.comb += take.eq(bus.cyc & bus.stb & ~answering)
        else:
            m.d.comb += take.eq(bus.cyc & bus.stb & ~bus.ack)
            m.d.sync += bus.ack.eq(take)
        read = take & ~bus.we
        write = Signal()
        self._data = data = Signal.like(bus.dat_w)
        self._sel = sel = Signal.like(bus.sel)
        m.d.sync += [write.eq(take & bus.we), data.eq(bus.dat_w), sel.eq(bus.sel)]
        m.d.comb += [self.write_data.eq(data), self.write_sel.eq(sel)]

        own = {"BUSY_WRITE": Signal(), "BAD_ADDRESS": Signal(), "READ_ONLY": Signal()}
        self._own = own
        clear_bit = regmap.register("CTRL").field("CLEAR").offset
        read_values = []
        read_decoded = []

        for reg, index, name, layout in self._words:
            address = reg.offsets()[index] // 4
            here = Signal(name=f"{name}_here")          # the write being applied
            asked = Signal(name=f"{name}_asked")        # the access being taken
            # The address is decoded as the access is taken; a write's decode is registered
            # with it (one flip-flop per register word).
            m.d.comb += asked.eq(bus.adr == address)
            m.d.sync += here.eq(asked)
            refused = Signal(name=f"{name}_refused")
            if reg.busy_refused:
                if reg.name == "CTRL":
                    # CLEAR is obeyed while busy (and zeroes whatever else the write set).
                    m.d.comb += refused.eq(self.busy & ~(data[clear_bit] &
                                                         sel[clear_bit // 8]))
                else:
                    m.d.comb += refused.eq(self.busy)
            written = Signal(name=f"{name}_written")
            m.d.comb += written.eq(write & here & ~refused)
            with m.If(write & here & refused):
                m.d.comb += own["BUSY_WRITE"].eq(1)
            if reg.access != "ro":
                m.d.comb += getattr(self, f"{name}_write").eq(written)
            if reg.access in ("ro", "rw", "rw1c"):
                m.d.comb += getattr(self, f"{name}_read").eq(read & asked)

            if reg.access == "ro":
                value = getattr(self, name).as_value()
                with m.If(write & here):
                    m.d.comb += own["READ_ONLY"].eq(1)
            elif not reg.stored:
                value = getattr(self, name) if reg.access == "rw" else None
            else:
                value = self._stored(m, reg, name, written)
            read_decoded.append(asked)
            read_values.append((asked, value))

        # The read data: an OR of each readable word gated by its address decode (the words
        # are exclusive), registered on the edge the read is taken.
        read_value = 0
        for asked, value in read_values:
            if value is not None:
                read_value = read_value | (Value.cast(value) & asked.replicate(32))
        with m.If(read):
            m.d.sync += bus.dat_r.eq(read_value)
        unmapped = Signal()
        m.d.comb += unmapped.eq(~Cat(*read_decoded).any())
        unmapped_write = Signal()
        m.d.sync += unmapped_write.eq(take & bus.we & unmapped)
        with m.If((read & unmapped) | unmapped_write):
            m.d.comb += own["BAD_ADDRESS"].eq(1)
        if self._bus_errors:
            # The flags of the access being answered: a read's unmapped address (decoded as it
            # was taken), a write's (decoded now, from flip-flops) and its refusals.
            unmapped_read = Signal()
            m.d.sync += unmapped_read.eq(read & unmapped)
            refused = Signal()
            m.d.comb += refused.eq(unmapped_read | unmapped_write | own["BUSY_WRITE"] |
                                   own["READ_ONLY"])
            m.d.comb += [bus.ack.eq(answering & ~refused), bus.err.eq(answering & refused)]
        return m

    def _stored(self, m, reg, name, written):
        """The flip-flops of a stored register word; returns what a read returns."""
        port = getattr(self, name)
        readback = []
        for item in reg.fields or (regmap.Field("VALUE", 0, 32, reg.access, ""),):
            if reg.fields and f"{reg.name}.{item.name}" in self._absent:
                continue
            target = getattr(port, item.name.lower())
            bits = slice(item.offset, item.offset + item.width)
            if item.access == "w1":
                # A one-edge strobe: the write's bit, on the edge after the write.
                m.d.sync += target.eq(Cat(*(self._data[i] & self._sel[i // 8] & written
                                            for i in range(bits.start, bits.stop))))
                continue
            if item.access == "rw1c":
                error_set = getattr(self.error_set, item.name.lower())
                if item.name in self._own:
                    error_set = error_set | self._own[item.name]
                clear_bits = Cat(*(self._data[i] & self._sel[i // 8] & written
                                   for i in range(bits.start, bits.stop)))
                m.d.sync += target.eq((target & ~clear_bits) | error_set)
                # A read sees a flag raised in its own cycle too (a write's consequences are
                # flagged an edge or two after the write lands).
                pending = Signal.like(target, name=f"{name}_pending")
                m.d.comb += pending.eq(target | error_set)
                readback.append((item.offset, pending))
                if reg.cleared:
                    with m.If(self.clear):
                        m.d.sync += target.eq(0)
                continue
            else:
                # One byte lane at a time: the write enable of each flip-flop is its lane's.
                for lane in range(4):
                    low, high = max(bits.start, 8 * lane), min(bits.stop, 8 * lane + 8)
                    if low >= high:
                        continue
                    with m.If(written & self._sel[lane]):
                        m.d.sync += target[low - item.offset:high - item.offset].eq(
                            self._data[low:high])
            if item.access in ("rw", "rw1c"):
                readback.append((item.offset, target))
            if reg.cleared:
                with m.If(self.clear):
                    m.d.sync += target.eq(0)
        value = Signal(32, name=f"{name}_value")
        for offset, target in readback:
            m.d.comb += value[offset:offset + len(target)].eq(target)
        return value
