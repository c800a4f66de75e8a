"""A Wishbone bus master that moves 32-bit words between memory and a peripheral's word streams."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .wishbone import WishboneSignature


__all__ = ["WishboneDMA"]


class WishboneDMA(wiring.Component):
    """Direct memory access for the cipher peripheral: reads ``read_count`` words from memory
    into ``read_words`` and writes ``write_count`` words from ``write_words`` back to memory, on
    one Wishbone B4 classic bus, one access per edge when the memory and the streams keep up.

    The two counts are independent: an AES-GCM message reads its additional data and its text
    but writes only the results of the text, so it reads more words than it writes; a
    transfer may also only read, or only write.

    Parameters
    ----------
    count_bits : :class:`int`
        Width of ``read_count``, ``write_count`` and of the word counters, 1 to 30. The
        default, 18, reads and writes up to 262,143 words each (65,535 blocks of four words)
        per transfer.

    Members
    -------
    bus : ``Out(WishboneSignature(addr_width=30, data_width=32, granularity=8, features={"err"}))``
        The master port. ``adr`` is a word address (byte address >> 2); ``sel`` is always
        ``0b1111``; ``cyc`` and ``stb`` are one signal; ``dat_w`` is ``write_words.payload``
        (meaningful only in a write).
    source, destination : ``In(32)``
        Byte addresses of the first word to read and of the first word to write, multiples of
        4; sampled on the edge that accepts ``start``.
    read_count, write_count : ``In(count_bits)``
        How many words to read from ``source``, and how many to write to ``destination``;
        sampled with ``source``. Either may be 0: that direction makes no access (and
        ``source``, or ``destination``, is still checked for alignment).
    start : ``In(1)``
        Accepted on an edge where it is high while ``busy`` and ``abort`` are low (one edge is
        enough); ignored while ``busy`` is high.
    abort : ``In(1)``
        The peripheral's CLEAR: on the edge where it is high, the DMA drops ``cyc``/``stb``
        (low from that edge on: an access still open is abandoned, as a Wishbone master may by
        dropping ``cyc``), ``busy`` falls, and the addresses, counts and read register are
        zeroed (:meth:`secret_state`). No ``done``, ``bus_error`` or ``misaligned`` pulse
        follows.
    busy : ``Out(1)``
        High from the edge that accepted ``start`` to the edge where the last of the
        ``read_count + write_count`` accesses completed (or one ended with ``err``, or
        ``abort``): a transfer is over when both directions are.
    done : ``Out(1)``
        High for one cycle after the edge where the last access completed, after an access
        that ended with ``err`` (with ``bus_error``), and after an accepted ``start`` with
        both counts 0 (which moves nothing and never raises ``busy``). ``busy`` is low in
        that cycle, so a ``start`` there is accepted.
    bus_error : ``Out(1)``
        High for one cycle after the edge where an access ended with ``err``. The transfer
        stops there: nothing more is read or written, the DMA forgets the transfer as on
        ``abort`` (a word read and not yet taken is dropped), and the word whose write failed
        is not taken from ``write_words``.
    misaligned : ``Out(1)``
        High for one cycle after an edge where ``start`` was high and ``busy`` and ``abort``
        low, with ``source`` or ``destination`` not a multiple of 4: the start is refused,
        nothing moves and ``busy`` stays low.
    read_words : ``Out(stream.Signature(32))``
        The words read, in address order, held in one register until taken (and zeroed when
        taken).
    write_words : ``In(stream.Signature(32))``
        The words to write, in order: the n-th word taken goes to ``destination + 4 * n``. A
        word is taken (``ready`` high) on the edge its write completes with ``ack``.

    Cycle behaviour
    ---------------
    Edges are edges of the ``sync`` clock. The access of each cycle is chosen in that cycle:

    * an access strobed and not ended at the previous edge (wait states) goes on unchanged;
    * otherwise, if a write is left to do and ``write_words.valid`` is high, a write (writes go
      first, so that results drain and the cipher goes on);
    * otherwise, if a read is left to do and the read register is empty or taken on this edge
      (``~read_words.valid | read_words.ready``), a read;
    * otherwise no access: ``cyc`` and ``stb`` are low (the DMA holds the bus only while it has
      an access to make).

    An access ends on the edge where ``stb & (ack | err)``. With a target that acknowledges in
    the cycle of the strobe and streams that keep up, an access ends on every edge, reads and
    writes in any order, with ``cyc`` and ``stb`` high throughout: with
    ``n = read_count + write_count``, the ``n`` accesses end on the ``n`` edges that follow
    the edge accepting ``start``, and ``done`` is high in the cycle after the last (``n + 1``
    edges from the start edge to the first edge that sees ``done``). A target with ``N``
    wait states makes each access ``N + 1`` edges; nothing else changes.

    Combinational paths: ``cyc``, ``stb``, ``we`` and ``adr`` follow ``write_words.valid`` and
    ``read_words.ready`` in the cycle (never while an access is strobed and not ended), and
    ``write_words.ready`` follows ``ack`` and ``write_words.valid``. ``read_words.ready``
    reaches ``write_words.ready`` only through ``stb`` and ``ack`` in a cycle whose access is a
    read, where ``write_words.ready`` is low whatever ``ack`` is: a consumer that drives
    ``read_words.ready`` from ``write_words.ready`` (as a one-slot cipher may) makes a loop in
    the netlist but not in the logic.

    Area: each address is a latched base plus a word offset, and each direction's end a
    latched count, one adder, one incrementer and one comparison serving both directions; on
    iCE40 the DMA is 151 LUT4 and 173 flip-flops at the default ``count_bits`` (Yosys
    ``synth_ice40``).
    """
    def __init__(self, *, count_bits: int = 18):
        if not isinstance(count_bits, int) or isinstance(count_bits, bool):
            raise TypeError(f"count_bits must be an integer, not {count_bits!r}")
        if not 1 <= count_bits <= 30:
            raise ValueError(f"count_bits must be from 1 to 30, not {count_bits!r}")
        self._count_bits = count_bits
        super().__init__({
            "bus": Out(WishboneSignature(addr_width=30, data_width=32, granularity=8,
                                         features={"err"})),
            "source": In(32),
            "destination": In(32),
            "read_count": In(count_bits),
            "write_count": In(count_bits),
            "start": In(1),
            "abort": In(1),
            "busy": Out(1),
            "done": Out(1),
            "bus_error": Out(1),
            "misaligned": Out(1),
            "read_words": Out(stream.Signature(32)),
            "write_words": In(stream.Signature(32)),
        })
        # The registers that `abort` zeroes, made here so that tests can read them. Each address
        # is a base (the word address given at the start) plus an offset (the words done so
        # far): the bases load without logic, the offsets start from a reset, and one adder
        # and one incrementer serve reads and writes alike.
        self._source_base = Signal(30)
        self._destination_base = Signal(30)
        self._reads_done = Signal(count_bits)
        self._writes_done = Signal(count_bits)
        self._read_count = Signal(count_bits)
        self._write_count = Signal(count_bits)
        self._data = Signal(32)             # the read register (read_words.payload)

    @property
    def count_bits(self) -> int:
        return self._count_bits

    def secret_state(self) -> dict:
        """The registers ``abort`` (and an ``err``) zeroes, by name: ``"source"`` and
        ``"destination"`` (the word addresses given at the start), ``"reads done"``,
        ``"writes done"``, ``"read count"``, ``"write count"`` (the counts given at the start)
        and ``"data"`` (the read register), to read in simulation with ``ctx.get``."""
        return {"source": self._source_base, "destination": self._destination_base,
                "reads done": self._reads_done, "writes done": self._writes_done,
                "read count": self._read_count, "write count": self._write_count,
                "data": self._data}

    def elaborate(self, platform):
        m = Module()
        bus, read_words, write_words = self.bus, self.read_words, self.write_words

        # Whether a read (a write) is left to do: set by a start with `read_count`
        # (`write_count`) > 0, cleared on the edge the last one completes. Flip-flops, so that
        # `busy` and the choice of the access do not go through a comparison.
        reads_pending = Signal()
        writes_pending = Signal()
        busy = Signal()
        m.d.comb += busy.eq(reads_pending | writes_pending)

        def choose_access():
            # The access of this cycle: the one strobed and not ended at the last edge, else a
            # write if a word waits, else a read if the read register has room on this edge.
            held = Signal()         # an access was strobed and not ended at the last edge
            held_write = Signal()   # ... and it was a write
            want_write = writes_pending & write_words.valid
            read_room = ~read_words.valid | read_words.ready
            write = Signal()
            strobe = Signal()
            m.d.comb += [
                write.eq(Mux(held, held_write, want_write)),
                strobe.eq(held | want_write | (reads_pending & read_room)),
            ]
            m.d.sync += [
                held.eq(strobe & ~bus.ack & ~bus.err & ~self.abort),
                held_write.eq(write),
            ]
            return write, strobe

        write, strobe = choose_access()
        failed = strobe & bus.err
        completed = strobe & bus.ack & ~bus.err
        read_done = completed & ~write
        write_done = completed & write
        clear = self.abort | failed
        aligned = (self.source[:2] == 0) & (self.destination[:2] == 0)
        accept = self.start & ~busy & ~self.abort
        start = accept & aligned

        def addresses():
            # Each address is a base (the word address given at the start) plus an offset (the
            # words done so far): the bases and the counts load without logic, the offsets
            # start from a reset, and one adder and one incrementer serve both directions.
            with m.If(clear):
                m.d.sync += [self._source_base.eq(0), self._destination_base.eq(0),
                             self._read_count.eq(0), self._write_count.eq(0)]
            with m.Elif(start):
                m.d.sync += [self._source_base.eq(self.source[2:]),
                             self._destination_base.eq(self.destination[2:]),
                             self._read_count.eq(self.read_count),
                             self._write_count.eq(self.write_count)]
            offset = Mux(write, self._writes_done, self._reads_done)
            m.d.comb += bus.adr.eq(Mux(write, self._destination_base, self._source_base) + offset)
            # On the edge an access completes, `following` is its direction's new count, which
            # never exceeds that direction's latched count (`>=` takes the carry chain: fewer
            # LUTs than `==`; one comparison serves both directions, as the adder does).
            following = offset + 1
            last = following >= Mux(write, self._write_count, self._read_count)
            for done, pending, step, count in (
                    (self._reads_done, reads_pending, read_done, self.read_count),
                    (self._writes_done, writes_pending, write_done, self.write_count)):
                with m.If(clear | start):
                    m.d.sync += done.eq(0)
                with m.Elif(step):
                    m.d.sync += done.eq(following)
                with m.If(clear):
                    m.d.sync += pending.eq(0)
                with m.Elif(start):
                    m.d.sync += pending.eq(count != 0)
                with m.Elif(step & last):
                    m.d.sync += pending.eq(0)

        def read_register():
            # Filled by a read; zeroed when the consumer takes its word and by `clear`, so that
            # it holds a word only while `read_words.valid` is high.
            with m.If(clear):
                m.d.sync += read_words.valid.eq(0)
            with m.Elif(read_done):
                m.d.sync += read_words.valid.eq(1)
            with m.Elif(read_words.ready):
                m.d.sync += read_words.valid.eq(0)
            with m.If(clear | (read_words.ready & ~read_done)):
                m.d.sync += self._data.eq(0)
            with m.Elif(read_done):
                m.d.sync += self._data.eq(bus.dat_r)

        def pulses():
            # `done` follows the fall of `busy` (or a start with nothing to move), unless an
            # abort made it.
            was_busy = Signal()
            aborted = Signal()
            m.d.sync += [
                was_busy.eq(busy | start),
                aborted.eq(self.abort),
                self.bus_error.eq(failed & ~self.abort),
                self.misaligned.eq(accept & ~aligned),
            ]
            m.d.comb += self.done.eq(was_busy & ~busy & ~aborted)

        addresses()
        read_register()
        pulses()
        m.d.comb += [
            bus.cyc.eq(strobe),
            bus.stb.eq(strobe),
            bus.we.eq(write),
            bus.sel.eq(0b1111),
            bus.dat_w.eq(write_words.payload),
            write_words.ready.eq(write_done),
            read_words.payload.eq(self._data),
            self.busy.eq(busy),
        ]
        return m
