"""GHASH (NIST SP 800-38D, Algorithm 2) as a digit-serial multiplier in GF(2^128).

:class:`GHASH` absorbs 128-bit blocks: ``Y <- (Y ^ X) * H``. Each multiplication consumes
``digit_bits`` bits of the operand ``Y ^ X`` per clock cycle, highest degree first (Horner's rule:
``Z <- Z * x**d + D * H`` for each d-bit digit ``D``), so ``128 / digit_bits`` steps make one
product: pick ``digit_bits`` so that GHASH keeps pace with the block cipher beside it (16 bits
beside the round-based AES, whose 11 to 15 cycles a block leave room for its 8 steps).

Ways to form ``D * H`` (``multiplier``):

* ``"logic"``: AND/XOR gates, ``128 * digit_bits`` AND terms.
* ``"bram"``: tables in block RAM, one per 8 bits of the digit: table ``j`` holds
  ``n * x**(8j) * H`` for the 256 polynomials ``n`` of degree below 8, so a step is an XOR of
  ``digit_bits / 8`` table words and the shifted accumulator. The tables depend on ``H``: loading
  ``H`` fills them (382 cycles), from the recurrences ``T[2n] = T[n] * x`` and
  ``T[2n + 1] = T[2n] ^ H``, reading back entries already written.
* ``"mixed"`` (``digit_bits`` of 16 or more): as ``"bram"``, but the lowest 8 bits of each digit
  are multiplied by AND/XOR logic (about 600 LUT4) instead of a table, which saves one table:
  8 block RAMs on iCE40, where a 256 x 128-bit table takes eight 256 x 16 RAMs of the 30 an
  UP5K has. Same cycles as ``"bram"``.
* ``"auto"``: ``"mixed"`` on iCE40 (with 16-bit digits or wider), ``"bram"`` elsewhere.

The bit order is the library's: a block is ``int.from_bytes(block, "big")``, and (see
:mod:`cipher_cores.cores.gcm.field`) the coefficient of ``x**i`` is bit ``127 - i`` of that integer (SP 800-38D's
bit 0, the most significant bit of byte 0, is ``x**0``).
"""

from __future__ import annotations

from amaranth.hdl import C, Cat, ClockSignal, Module, Mux, ResetSignal, Signal, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .. import fpga
from ..block_ram import sb_ram40_4k
from .field import BLOCK_BITS, reduce_wide, times_x_power


__all__ = ["DIGIT_BITS", "MULTIPLIERS", "GHASHRequest", "GHASH", "check_digit_bits",
           "check_multiplier"]


#: The digit sizes a :class:`GHASH` can be built with (bits of the operand consumed per cycle).
DIGIT_BITS = (1, 2, 4, 8, 16, 32, 64, 128)
#: How a step forms ``digit * H``: AND/XOR logic, look-up tables in block RAM, tables for all but
#: the lowest 8 bits of the digit, or the best of the last two for the device.
MULTIPLIERS = ("logic", "bram", "mixed", "auto")
#: The multipliers that keep their products in tables (and fill them when ``H`` is loaded).
TABLE_MULTIPLIERS = ("bram", "mixed", "auto")
#: Bits of the digit one table look-up consumes in the ``"bram"`` multiplier.
TABLE_BITS = 8
#: Edges the ``"bram"`` multiplier spends filling its tables after ``H`` is loaded: ``T[1]``,
#: then a read and two writes for each of the pairs 1 to 127.
FILL_CYCLES = 1 + 3 * 127


def check_digit_bits(digit_bits, multiplier: str = "logic") -> int:
    minimum = 2 * TABLE_BITS if multiplier == "mixed" else TABLE_BITS
    allowed = DIGIT_BITS if multiplier == "logic" else \
        tuple(d for d in DIGIT_BITS if d % TABLE_BITS == 0 and d >= minimum)
    if not isinstance(digit_bits, int) or isinstance(digit_bits, bool):
        raise TypeError(f"digit_bits must be an integer, one of "
                        f"{', '.join(map(str, allowed))}; not {digit_bits!r}")
    if digit_bits not in allowed:
        raise ValueError(f"digit_bits must be one of {', '.join(map(str, allowed))} "
                         f"with multiplier={multiplier!r}, not {digit_bits!r}")
    return digit_bits


def check_multiplier(multiplier) -> str:
    choices = ", ".join(f"'{name}'" for name in MULTIPLIERS)
    if not isinstance(multiplier, str):
        raise TypeError(f"multiplier must be a string ({choices}), not {multiplier!r}")
    if multiplier not in MULTIPLIERS:
        raise ValueError(f"multiplier must be one of {choices}, not {multiplier!r}")
    return multiplier


class GHASHRequest(data.StructLayout):
    """Payload of :class:`GHASH`'s ``input`` stream.

    Fields
    ------
    block : ``unsigned(128)``
        ``X``, the block to absorb (``int.from_bytes(block, "big")``).
    first : ``unsigned(1)``
        Start a new hash: absorb ``X`` into ``Y = 0`` instead of the current state.
    final : ``unsigned(1)``
        Only add, do not multiply: ``operand`` becomes ``Y ^ X`` (or ``X`` with ``first``) and
        the state ``Y`` is left as it was. GCM uses this to form ``S ^ E_K(J0)``.
    """
    def __init__(self):
        super().__init__({"block": unsigned(BLOCK_BITS), "first": unsigned(1),
                          "final": unsigned(1)})


def _xor_all(terms):
    """The XOR of ``terms``, as a balanced tree (0 if there are none)."""
    terms = list(terms)
    if not terms:
        return C(0, 1)
    while len(terms) > 1:
        terms = [a ^ b for a, b in zip(terms[::2], terms[1::2])] + terms[len(terms) & ~1:]
    return terms[0]


def _digit_degrees(digit, width: int) -> list:
    """The bits of a ``width``-bit digit (a slice of the integer) by relative degree: entry ``i``
    multiplies ``x**i``. The slice's most significant bit is the lowest degree."""
    return [digit[width - 1 - i] for i in range(width)]


#: Edges the pipelined GHASH spends filling its tables after ``H`` is loaded: one for each of
#: the 16 entries of each of the 32 nibbles' tables.
TABLE_FILL_CYCLES = 16 * BLOCK_BITS // 4
#: Copies of the pipelined GHASH's loop register on ECP5, each feeding the AND
#: terms of ``128 / COPIES`` bits of the product.
COPIES = 8


def _copies(m, platform, name: str, value, *, enable, clear=None) -> list:
    """``COPIES`` registers that load ``value`` on each edge where ``enable`` is high and are
    cleared (before ``enable``) where ``clear`` is, or by the domain's reset; their outputs.

    On ECP5 (where :func:`~cipher_cores.cores.fpga.primitives` names ``TRELLIS_FF`` as the
    kept flip-flop) they are ``TRELLIS_FF`` cells marked ``keep``: registers with the same inputs
    would be merged into one by synthesis (``opt_merge``), and a ``keep`` on a signal does not
    stop it. Elsewhere (and in simulation) one register stands for all the copies."""
    if fpga.primitives(platform).kept_flip_flop != "TRELLIS_FF":
        register = Signal(len(value), name=name)
        with m.If(enable):
            m.d.sync += register.eq(value)
        if clear is not None:
            with m.If(clear):
                m.d.sync += register.eq(0)
        return [register] * COPIES
    d, ce, lsr = Signal(len(value), name=f"{name}_next"), Signal(name=f"{name}_enable"), \
        Signal(name=f"{name}_clear")
    reset = ResetSignal("sync", allow_reset_less=True)
    m.d.comb += [d.eq(value), ce.eq(enable),
                 lsr.eq((clear if clear is not None else 0) | reset)]
    registers = []
    for k in range(COPIES):
        register = Signal(len(value), name=f"{name}_{k}")
        for i in range(len(value)):
            m.submodules[f"{name}_{k}_{i}"] = fpga.cell(
                platform, "TRELLIS_FF", a_keep=1, p_GSR="DISABLED", p_CEMUX="CE", p_CLKMUX="CLK",
                p_LSRMUX="LSR", p_SRMODE="LSR_OVER_CE", p_REGSET="RESET",
                i_CLK=ClockSignal("sync"), i_LSR=lsr, i_CE=ce, i_DI=d[i], o_Q=register[i])
        registers.append(register)
    return registers


class GHASH(wiring.Component):
    """GHASH_H with a digit-serial multiplier: ``Y <- (Y ^ X) * H`` for each absorbed block.

    Parameters
    ----------
    digit_bits : :class:`int`
        Bits of the operand consumed per clock cycle: 1, 2, 4, 8, 16, 32, 64 or 128 (``"logic"``);
        8, 16, 32, 64 or 128 (``"bram"``). A multiplication takes ``steps = 128 / digit_bits``
        cycles.
    multiplier : :class:`str`
        ``"logic"`` (AND/XOR gates), ``"bram"`` (``digit_bits / 8`` tables of 256 x 128 bits,
        each eight 256 x 16 block RAMs with one port shared by reads and writes, filled when
        ``H`` is loaded), ``"mixed"`` (one table fewer: the lowest 8 bits of each digit in
        logic) or ``"auto"`` (``"mixed"`` on iCE40 with 16-bit digits or wider, else
        ``"bram"``; see :meth:`multiplier_for`).

    Members
    -------
    h : ``In(stream.Signature(unsigned(128)))``
        The hash subkey ``H`` (for GCM, ``E_K(0^128)``). A transfer loads it (and with
        ``"bram"`` starts filling the tables); the state ``Y`` is left alone. Ready when
        ``busy`` is low.
    input : ``In(stream.Signature(GHASHRequest()))``
        Blocks to absorb, see :class:`GHASHRequest`. Ready when an ``H`` has been loaded since
        reset, ``busy`` is low, and neither ``h.valid`` nor ``restore.valid`` is high (a waiting
        ``H`` or restore goes first).
    restore : ``In(stream.Signature(unsigned(128)))``
        Sets the state ``Y`` (a value read from ``state`` earlier, to resume a hash saved between
        packets). Ready when ``busy`` is low.
    state : ``Out(128)``
        ``Y``, the hash so far: read it when ``busy`` is low (to finish a hash or to save it).
    operand : ``Out(128)``
        ``Y ^ X`` of the last block absorbed (``X`` with ``first``): the value being multiplied,
        or after a ``final`` block, the sum.
    busy : ``Out(1)``
        A multiplication is running, or the tables are being filled.

    Timing
    ------
    With ``steps = 128 / digit_bits``, in clock edges:

    * ``"logic"``: the first step happens on the edge where the block transfers, so ``busy`` is
      high for ``steps - 1`` cycles after it and a block can be absorbed every ``steps`` edges
      (8 for 16-bit digits); ``state`` holds the product from the edge after the last step.
    * ``"bram"``, ``"mixed"``, ``"auto"``: the transfer edge loads the operand, the next ``steps`` edges look its digits
      up and each step follows its look-up by one edge, so a block every ``steps + 2`` edges (10
      for 16-bit digits).
    * ``"logic"`` with 128-bit digits (:attr:`pipelined`), beside a core that delivers a block
      every edge: the transfer edge registers the block, the next forms what the loop adds
      (the block, plus the state it starts from if it starts a hash), and the third multiplies
      and adds (a ``final`` block only adds, to ``operand``). So ``busy`` is high for the two
      cycles after each transfer (:attr:`pipeline_delay`) and ``state`` and ``operand`` hold
      the result from the third edge on; ``input.ready`` does not wait for those cycles, so
      blocks transfer on every edge. It multiplies by ``H`` with a 16-entry table for each
      nibble of the operand (what that nibble's value contributes to the product; distributed
      RAM on ECP5, 1,024 ``TRELLIS_DPR16X4``), filled an entry an edge in the 512 edges after
      ``H`` is loaded (``busy`` high, ``h_load_cycles`` = 513). On ECP5 the loop register is
      held in eight copies (``TRELLIS_FF`` instances), each addressing the tables of 16 bits of
      the product.
    * A ``final`` block, a restore and (``"logic"``) loading ``H`` take the one transfer edge
      (a block: three edges when :attr:`pipelined`).
      With tables, loading ``H`` keeps ``busy`` high for the 382 edges that fill the tables.

    Nothing depends on the data: every block takes the same number of cycles.
    """
    def __init__(self, *, digit_bits: int = 16, multiplier: str = "logic"):
        self._multiplier = check_multiplier(multiplier)
        self._digit_bits = check_digit_bits(digit_bits, self._multiplier)
        super().__init__({
            "h": In(stream.Signature(unsigned(BLOCK_BITS))),
            "input": In(stream.Signature(GHASHRequest())),
            "restore": In(stream.Signature(unsigned(BLOCK_BITS))),
            "state": Out(BLOCK_BITS),
            "operand": Out(BLOCK_BITS),
            "busy": Out(1),
        })

    @property
    def digit_bits(self) -> int:
        return self._digit_bits

    @property
    def multiplier(self) -> str:
        return self._multiplier

    def multiplier_for(self, platform) -> str:
        """The multiplier built for ``platform``: ``"auto"`` resolved (``"mixed"`` when the
        platform's ``family`` is iCE40 and the digit has 16 bits or more, else ``"bram"``)."""
        if self._multiplier != "auto":
            return self._multiplier
        ice40 = fpga.family(platform) == "ice40"
        return "mixed" if ice40 and self._digit_bits >= 2 * TABLE_BITS else "bram"

    @property
    def pipelined(self) -> bool:
        """Whether a whole product is formed a cycle from a registered block (``"logic"`` with
        128-bit digits): see *Timing*."""
        return self._multiplier == "logic" and self._digit_bits == BLOCK_BITS

    @property
    def pipeline_delay(self) -> int:
        """Edges by which a pipelined GHASH's results trail its transfers: ``busy`` stays high
        for that many cycles after the last transfer (``input.ready`` does not wait for them);
        2 when :attr:`pipelined`, else 0."""
        return 2 if self.pipelined else 0

    @property
    def steps(self) -> int:
        """Multiplication steps per block: ``128 / digit_bits``."""
        return BLOCK_BITS // self._digit_bits

    @property
    def block_cycles(self) -> int:
        """Edges between blocks absorbed back to back."""
        return self.steps + (2 if self._multiplier in TABLE_MULTIPLIERS else 0)

    @property
    def h_load_cycles(self) -> int:
        """Edges from an ``H`` transfer to the first edge a block can transfer."""
        if self.pipelined:
            return 1 + TABLE_FILL_CYCLES      # the tables fill (see *Timing*)
        return 1 + (FILL_CYCLES if self._multiplier in TABLE_MULTIPLIERS else 0)

    def elaborate(self, platform):
        m = Module()
        d, steps = self._digit_bits, self.steps

        h = Signal(BLOCK_BITS)
        h_loaded = Signal()
        accumulator = Signal(BLOCK_BITS)     # Z: the partial product; Y once the steps are done
        operand = Signal(BLOCK_BITS)         # A = Y ^ X, read a digit at a time
        running = Signal()
        index = Signal(range(max(steps, 2)))     # digit to apply (logic: on this edge)
        busy = Signal()

        request = self.input.payload
        take = Signal()
        holds_input = Signal()           # no block now (busy, except in a pipelined GHASH)
        m.d.comb += [
            # A waiting H or restore goes before the next block.
            self.input.ready.eq(h_loaded & ~holds_input & ~self.h.valid & ~self.restore.valid),
            self.h.ready.eq(~busy),
            self.restore.ready.eq(~busy),
            take.eq(self.input.valid & self.input.ready),
            self.state.eq(accumulator),
            self.operand.eq(operand),
            self.busy.eq(busy),
        ]
        new_operand = Signal(BLOCK_BITS)
        m.d.comb += new_operand.eq(Mux(request.first, 0, accumulator) ^ request.block)
        multiply = take & ~request.final

        def digit_of(value, position):
            """Digit ``position`` (a constant) of ``value``."""
            return value[d * position:d * (position + 1)]

        def digit_at(name, offset):
            """Digit ``index + offset`` of the operand register, as a signal: a multiplexer
            over the digit positions (a variable ``word_select`` would become a shifter)."""
            digit = Signal(d, name=name)
            with m.Switch(index):
                for position in range(steps - offset):
                    with m.Case(position):
                        m.d.comb += digit.eq(digit_of(operand, position + offset))
            return digit

        with m.If(self.h.valid & self.h.ready):
            m.d.sync += [h.eq(self.h.payload), h_loaded.eq(1)]
        kind = self.multiplier_for(platform)
        if self.pipelined:
            self._pipelined(m, platform, h=h, take=take, busy=busy, holds_input=holds_input,
                            accumulator=accumulator, operand=operand)
            return m

        with m.If(self.restore.valid & self.restore.ready):
            m.d.sync += accumulator.eq(self.restore.payload)

        m.d.comb += holds_input.eq(busy)
        with m.If(take):
            m.d.sync += operand.eq(new_operand)
        if kind == "logic":
            # Step 0 happens on the transfer edge, on the digit of the operand being loaded.
            digit = Signal(d)
            m.d.comb += digit.eq(Mux(take, digit_of(new_operand, 0), digit_at("current", 0)))
            product = self._logic_product(m, Mux(take, 0, accumulator),
                                          _digit_degrees(digit, d), h)
            m.d.comb += busy.eq(running)
            with m.If(multiply):
                m.d.sync += [accumulator.eq(product), index.eq(1 % steps),
                             running.eq(steps > 1)]
            with m.Elif(running):
                m.d.sync += [accumulator.eq(product), index.eq(index + 1)]
                with m.If(index == steps - 1):
                    m.d.sync += running.eq(0)
        else:
            # The edge after the transfer looks up digit 0 (`index` is the digit whose table
            # address is presented), and each step applies, one edge later, the words looked up:
            # no path runs from the incoming block to a table address.
            filling, stepping = Signal(), Signal()
            m.d.comb += busy.eq(running | stepping | filling)
            looked_up = self._tables(m, platform, next_digit=digit_at("fetched", 0), h=h,
                                     filling=filling, start_fill=self.h.valid & self.h.ready,
                                     in_logic=1 if kind == "mixed" else 0)
            product = times_x_power(accumulator, d) ^ _xor_all(looked_up)
            m.d.sync += stepping.eq(running)
            with m.If(multiply):
                m.d.sync += [accumulator.eq(0), index.eq(0), running.eq(1)]
            with m.Elif(running):
                m.d.sync += index.eq(index + 1)
                with m.If(index == steps - 1):
                    m.d.sync += running.eq(0)
            with m.If(stepping):
                m.d.sync += accumulator.eq(product)
        return m

    def _pipelined(self, m, platform, *, h, take, busy, holds_input, accumulator, operand):
        """The whole-product GHASH (:attr:`pipelined`), one block an edge.

        The loop register holds ``T``, the operand of the last block multiplied (``Y ^ X``),
        not ``Y``: the next block makes it ``T * H ^ X'`` (``Y ^ X'``), so the loop is the
        tables read at the register's nibbles, an XOR tree, one more XOR with a registered
        block, and nothing else, and ``Y = T * H`` is that tree's output. A block that starts a hash clears the
        register the edge before (a synchronous reset, no multiplexer in the loop) and brings
        the state it starts from in its addend: 0 with ``first``, else ``V``, the state set by
        a restore or kept over a new ``H`` (``stale`` says that ``V``, not ``T * H``, is the
        state). Three edges a block: the transfer registers ``X``; the next forms the addend
        (and clears the register); the third multiplies-and-adds and forms ``operand``. The
        register is held in :data:`COPIES` copies, each addressing the tables of
        ``128 / COPIES`` bits of the product: one register feeding all 128 trees made the net
        spread over the whole multiplier, the slowest part of the loop.
        """
        request = self.input.payload
        restoring = Signal()
        m.d.comb += restoring.eq(self.restore.valid & self.restore.ready)

        # Multiplying by H is linear: T * H is the XOR, over the 32 nibbles of T, of what each
        # nibble contributes. Nibble g (bits 4g + j of the integer, j = 0..3, the coefficients
        # of x**(127 - 4g - j)) with value e contributes e(x) * G_g, where e(x) is the sum of
        # x**(3 - j) over its set bits and G_g = H * x**(124 - 4g): so a 16-entry table per
        # nibble, read at the nibble, replaces the 16 columns that multiplied it, and a
        # product bit is an XOR of 32 table bits. The tables are 16 x 16-bit memories with an
        # asynchronous read, which synthesis makes distributed RAM on ECP5 (four
        # TRELLIS_DPR16X4 each): four AND terms of four product bits in one RAM's LUTs, where a
        # matrix took 16 flip-flops and 8 LUT4s, so the multiplier packs into about half the
        # slices and each tree is two LUT levels shorter. One table per nibble and loop
        # register copy, for the 128 / COPIES product bits that copy serves.
        share = BLOCK_BITS // COPIES
        fill_count = Signal(range(TABLE_FILL_CYCLES + 1))
        filling = Signal()
        generator = Signal(BLOCK_BITS, reset_less=True)     # G_g for the nibble being filled
        entry = Signal(4)
        m.d.comb += entry.eq(fill_count[:4])
        with m.If(self.h.valid & self.h.ready):
            # Nibble 31 first: G_31 = H; each nibble before it is the next one's times x**4.
            m.d.sync += [generator.eq(self.h.payload), fill_count.eq(0), filling.eq(1)]
        with m.Elif(filling):
            m.d.sync += [fill_count.eq(fill_count + 1),
                         filling.eq(fill_count != TABLE_FILL_CYCLES - 1)]
            with m.If(entry == 15):
                m.d.sync += generator.eq(times_x_power(generator, 4))
        # The word written, its entry and the nibble's write enable, registered: they reach
        # every table (the entry every one of them), far from the fill logic.
        word = Signal(BLOCK_BITS, reset_less=True)
        m.d.sync += word.eq(_xor_all(Mux(entry[j], times_x_power(generator, 3 - j), 0)
                                     for j in range(4)))
        write_enable = Signal(BLOCK_BITS // 4)      # bit o: nibble 31 - o
        m.d.sync += write_enable.eq(Mux(filling, C(1, BLOCK_BITS // 4) << fill_count[4:], 0))
        write_entries = _copies(m, platform, "table_entry", entry, enable=C(1, 1))

        def times_h(copies, name):
            """The product of the value held in ``copies`` and H: the XOR of the table words
            read at its nibbles, each slice of ``128 / len(copies)`` product bits from the
            tables that copy addresses."""
            product = Signal(BLOCK_BITS, name=name)
            slices = []
            for k, copy in enumerate(copies):
                if k and copy is copies[0]:
                    continue                    # one register stands for all the copies
                width = BLOCK_BITS if all(c is copy for c in copies) else share
                rows = slice(share * k, share * k + width)
                words = []
                for g in range(BLOCK_BITS // 4):
                    table = memory.Memory(shape=unsigned(width), depth=16, init=[])
                    m.submodules[f"{name}_table{g}_{k}"] = table
                    read, write = table.read_port(domain="comb"), table.write_port()
                    m.d.comb += [read.addr.eq(copy[4 * g:4 * g + 4]),
                                 write.addr.eq(write_entries[k]), write.data.eq(word[rows]),
                                 write.en.eq(write_enable[BLOCK_BITS // 4 - 1 - g])]
                    words.append(read.data)
                slices.append(_xor_all(words))
            m.d.comb += product.eq(Cat(*slices))
            return product

        # The register T in copies, the product T * H (Y), and the state shown.
        loop = Signal(BLOCK_BITS)
        clear, multiplying = Signal(), Signal()
        copies = _copies(m, platform, "operand_t", loop, enable=multiplying, clear=clear)
        product = times_h(copies, "t_times_h")
        saved = Signal(BLOCK_BITS)          # V: the state while `stale`
        stale = Signal(init=1)
        state = Signal(BLOCK_BITS)
        m.d.comb += state.eq(Mux(stale, saved, product))
        with m.If(restoring):
            m.d.sync += [saved.eq(self.restore.payload), stale.eq(1)]
        with m.Elif(self.h.valid & self.h.ready):
            m.d.sync += [saved.eq(state), stale.eq(1)]      # Y is kept over the new tables

        # Stage 1, the transfer edge: the block.
        pending = Signal()
        block = Signal(BLOCK_BITS, reset_less=True)
        first, final = Signal(), Signal()
        m.d.sync += pending.eq(take)
        with m.If(take):
            m.d.sync += [block.eq(request.block), first.eq(request.first),
                         final.eq(request.final)]

        # Stage 2: the addend; a block that starts a hash clears T (after any block before it).
        starts = Signal()
        m.d.comb += [starts.eq(first | stale),
                     clear.eq(pending & ~final & starts)]
        addend = Signal(BLOCK_BITS, reset_less=True)
        later_block = Signal(BLOCK_BITS, reset_less=True)
        adding, later_first, later_stale = Signal(), Signal(), Signal()
        m.d.sync += [addend.eq(block ^ Mux(stale & ~first, saved, 0)),
                     later_block.eq(block), later_first.eq(first), later_stale.eq(stale),
                     adding.eq(pending), multiplying.eq(pending & ~final)]
        with m.If(pending & ~final):
            m.d.sync += stale.eq(0)

        # Stage 3, the loop: T <- T * H ^ X (T * H is 0 after a clear).
        m.d.comb += loop.eq(product ^ addend)
        with m.If(adding):
            m.d.sync += operand.eq(Mux(later_first, 0, Mux(later_stale, saved, product)) ^
                                   later_block)

        m.d.comb += [accumulator.eq(state),
                     busy.eq(pending | adding | filling),
                     holds_input.eq(filling)]

    @staticmethod
    def _logic_product(m, accumulator, degrees, h):
        """``accumulator * x**d + D * H`` for the ``d``-bit digit ``D`` whose bit of degree ``i``
        is ``degrees[i]``: the product before reduction, in a frame ``d`` bits wider (the
        accumulator as it is, and ``H * x**i`` for each digit bit of degree ``i`` that is set),
        then one reduction (:func:`~cipher_cores.cores.gcm.field.reduce_wide`). Reducing once, rather than
        each ``H * x**i``, is what keeps this to about two AND terms a LUT."""
        d = len(degrees)
        terms = [accumulator]
        for i, bit in enumerate(degrees):
            terms.append(Mux(bit, h << (d - i), 0))
        unreduced = Signal(BLOCK_BITS + d)
        product = Signal(BLOCK_BITS)
        m.d.comb += [unreduced.eq(_xor_all(terms)), product.eq(reduce_wide(unreduced, d))]
        return product

    def _tables(self, m, platform, *, next_digit, h, filling, start_fill, in_logic=0):
        """The look-up tables, their addresses, and the fill that follows a new ``H``. Returns
        the table words read on the previous edge, for ``next_digit`` then (the first
        ``in_logic`` of them formed by AND/XOR logic from the digit bits registered then,
        instead of read from a table).

        Each table has one port, shared by reads and writes, and is built from 16-bit-wide
        memories: so synthesis maps it to block RAMs in single-port read-before-write mode
        (``DP16KD`` on ECP5) with nothing around them. On iCE40 they are ``SB_RAM40_4K``
        instances (:func:`~cipher_cores.cores.block_ram.sb_ram40_4k`): Yosys would emulate the read of a
        word being written, which the fill never uses, with a flip-flop and a LUT a bit. A read port and a write port at
        different addresses would need logic to settle collisions (about 140 LUT4 and 128 FFs
        a table on ECP5).

        Entry ``n`` of table 0 is ``n * H`` (``n`` a polynomial of degree < 8, its bit ``b`` the
        coefficient of ``x**b``); table ``j`` holds the same times ``x**(8j)``. The fill takes
        entries in pairs, from ``T[2n] = T[n] * x`` and ``T[2n + 1] = T[2n] ^ H``: for ``n`` =
        1 to 127, one edge reads ``T[n]`` and the next two write ``T[2n]`` and ``T[2n + 1]``,
        after a first edge that writes ``T[1] = H``. Entry 0 stays 0 from the memories' initial
        contents: it is never written. When the first tables are in logic, the fill runs the
        same recurrences on the first table in RAM, ``j``, with ``H * x**(8j)`` for ``H``.
        """
        d = self._digit_bits
        tables = d // TABLE_BITS

        pair = Signal(7)                 # n: T[2n] and T[2n + 1] are written after T[n] is read
        phase = Signal(range(3))         # 0: read T[n], 1: write T[2n], 2: write T[2n + 1]
        even = Signal(BLOCK_BITS)        # T[2n], kept for T[2n + 1]
        with m.If(start_fill):
            m.d.sync += [filling.eq(1), pair.eq(0), phase.eq(2), even.eq(0)]

        fill_address = Signal(8)
        m.d.comb += fill_address.eq(Mux(phase == 0, pair, Cat(phase == 2, pair)))
        writing = Signal()
        m.d.comb += writing.eq(filling & (phase != 0))
        with m.If(filling):
            m.d.sync += phase.eq(Mux(phase == 2, 0, phase + 1))
            with m.If(phase == 2):
                m.d.sync += pair.eq(pair + 1)
                with m.If(pair == 127):
                    m.d.sync += filling.eq(0)

        degrees = _digit_degrees(next_digit, d)

        looked_up, written = [], Signal(BLOCK_BITS)
        for j in range(in_logic):
            # Registered like a RAM's address, so the word arrives on the same edge as theirs.
            held = Signal(TABLE_BITS, name=f"logic{j}_digit")
            m.d.sync += held.eq(Cat(*degrees[TABLE_BITS * j:TABLE_BITS * (j + 1)]))
            word = Signal(BLOCK_BITS, name=f"logic{j}_data")
            m.d.comb += word.eq(times_x_power(
                self._logic_product(m, C(0, BLOCK_BITS), list(held), h), TABLE_BITS * j))
            looked_up.append(word)
        for j in range(in_logic, tables):
            address = Signal(8, name=f"table{j}_address")
            m.d.comb += address.eq(Mux(filling, fill_address,
                                       Cat(*degrees[TABLE_BITS * j:TABLE_BITS * (j + 1)])))
            data = times_x_power(written, TABLE_BITS * (j - in_logic))
            words = []
            for k in range(BLOCK_BITS // 16):
                if fpga.primitives(platform).block_ram == "SB_RAM40_4K":
                    # By hand: Yosys' mapping of the Memory below emulates what a read of the
                    # word being written returns with a flip-flop and a LUT per bit, and that
                    # read is never used here (a fill step writes T[2n] or T[2n + 1] and uses
                    # the T[n] read on the edge before).
                    word = Signal(16, name=f"table{j}_{k}_data")
                    m.submodules[f"table{j}_{k}"] = sb_ram40_4k(
                        platform, read_addr=address, read_en=C(1, 1), read_data=word,
                        write_addr=address, write_en=writing,
                        write_data=data[16 * k:16 * (k + 1)])
                    words.append(word)
                    continue
                table = memory.Memory(shape=unsigned(16), depth=256, init=[],
                                      attrs={"ram_style": "block"})
                m.submodules[f"table{j}_{k}"] = table
                read, write = table.read_port(domain="sync", transparent_for=()), \
                    table.write_port()
                m.d.comb += [read.addr.eq(address), write.addr.eq(address),
                             write.data.eq(data[16 * k:16 * (k + 1)]), write.en.eq(writing)]
                words.append(read.data)
            word = Signal(BLOCK_BITS, name=f"table{j}_data")
            m.d.comb += word.eq(Cat(*words))
            looked_up.append(word)

        base = times_x_power(h, TABLE_BITS * in_logic)      # T[1] of the first table in RAM
        m.d.comb += written.eq(Mux(phase == 2, even ^ base,
                                   times_x_power(looked_up[in_logic], 1)))
        with m.If(filling & (phase == 1)):
            m.d.sync += even.eq(written)
        return looked_up
