"""Block RAMs read through two registers: the look-up tables and round-key memory of the AES
T-table and pipelined cores (:class:`~cipher_cores.cores.aes.ttable.TTableAES`,
:class:`~cipher_cores.cores.aes.pipelined.PipelinedAES`), and the round-key table of
:class:`~cipher_cores.cores.present.keytable.KeyTablePRESENT`.

A read takes two register stages: the RAM's address register, then a register on its output. On
ECP5 both are inside the ``DP16KD`` (the output register is ``REGMODE="OUTREG"``), so the RAM's
slow clock-to-output leaves the fabric's paths; Yosys' block RAM inference does not use that
register, so on ECP5 the RAMs are instantiated directly, in true dual-port 1024x18 mode. Elsewhere
(iCE40, simulation, exported Verilog) each is a :class:`~amaranth.lib.memory.Memory` with a
synchronous read port followed by a register: the same cycle behaviour, which Yosys maps to
``SB_RAM40_4K`` (iCE40) or ``DP16KD`` without its output register.

Both stages of a read port share one enable (``en``), so a core can stop its whole pipeline, RAM
registers included, and start it again without losing a read.

:class:`MixedWidthRam` is one iCE40 ``SB_RAM40_4K`` whose write and read ports have their own
widths (with a bit mask on a 16-bit write), the cell on iCE40 and a model of it elsewhere: the
serial PRESENT core of :mod:`cipher_cores.cores.present.bram` builds its bit permutation on it.

Which form a component builds comes from the platform through :mod:`cipher_cores.cores.fpga`
(its ``block_ram`` cell: ``"DP16KD"``, ``"SB_RAM40_4K"`` or none), and the cells are made by
:func:`~cipher_cores.cores.fpga.cell`, so a platform can supply models of them.
"""

from amaranth.hdl import C, Cat, ClockSignal, Const, Module, Mux, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from . import fpga


__all__ = ["DP16KD_WORDS", "DP16KD_WIDTH", "dp16kd_initial_values", "sb_ram40_4k", "RegisteredRom",
           "KeyMemory", "RegisteredRam", "SB_RAM40_MODES", "sb_ram40_pins", "MixedWidthRam"]


#: Words and bits of a ``DP16KD`` port in its 1024x18 mode.
DP16KD_WORDS = 1024
DP16KD_WIDTH = 18


def dp16kd_initial_values(words) -> dict:
    """The ``INITVAL_00`` .. ``INITVAL_3F`` parameters of a ``DP16KD`` in 1024x18 mode holding
    ``words`` (at most 1024 words of at most 18 bits) from address 0: parameter ``INITVAL_xx``
    holds words ``16 * xx`` to ``16 * xx + 15``, word ``k`` in its bits ``20 * k`` to
    ``20 * k + 17`` (the layout Yosys' own ECP5 block RAM mapping writes)."""
    words = list(words)
    if len(words) > DP16KD_WORDS or any(not 0 <= word < 1 << DP16KD_WIDTH for word in words):
        raise ValueError("a DP16KD holds at most 1024 words of 18 bits")
    words += [0] * (DP16KD_WORDS - len(words))
    values = {}
    for row in range(DP16KD_WORDS // 16):
        value = 0
        for k in range(16):
            value |= words[16 * row + k] << (20 * k)
        values[f"INITVAL_{row:02X}"] = value
    return values


def sb_ram40_4k(platform, *, read_addr, read_en, read_data, write_addr, write_en, write_data):
    """An ``SB_RAM40_4K`` in 256x16 mode (``READ_MODE = WRITE_MODE = 0``), every bit of a word
    written (``MASK`` 0), read on an edge where ``read_en`` is high (``RE``): the cell
    :func:`~cipher_cores.cores.fpga.cell` makes for ``platform``."""
    def address(value):
        return Cat(value, C(0, 11 - len(value)))

    def word(value):
        return Cat(value, C(0, 16 - len(value)))
    return fpga.cell(platform, "SB_RAM40_4K", p_READ_MODE=0, p_WRITE_MODE=0,
                     i_RCLK=ClockSignal("sync"), i_RCLKE=C(1), i_RE=read_en,
                     i_RADDR=address(read_addr), o_RDATA=read_data,
                     i_WCLK=ClockSignal("sync"), i_WCLKE=write_en, i_WE=write_en,
                     i_WADDR=address(write_addr), i_WDATA=word(write_data), i_MASK=C(0, 16))


def _dp16kd(platform, init, ports, site=None):
    """A ``DP16KD`` in true dual-port 1024x18 mode with both output registers, as
    :func:`~cipher_cores.cores.fpga.cell` makes it for ``platform``.

    ``ports`` maps ``"A"`` and ``"B"`` to dictionaries of ``addr`` (10 bits), ``ce`` (address
    register enable), ``oce`` (output register enable), ``we`` (write enable), ``di`` and ``do``
    (18 bits); a missing port is tied off. ``site``: the ``BEL`` nextpnr must place it at."""
    kwargs = {f"p_{name}": Const(value, 320)
              for name, value in dp16kd_initial_values(init).items()}
    kwargs.update(p_GSR="AUTO", p_RESETMODE="SYNC", p_ASYNC_RESET_RELEASE="SYNC")
    if site is not None:
        kwargs["a_BEL"] = site
    for name in ("A", "B"):
        port = ports.get(name, {})
        # In 18-bit mode the word address is ADx13..ADx4; ADx1..0 are the write byte enables.
        addr = port.get("addr", C(0, 10))
        address = Cat(C(0b11, 2), C(0, 2), addr, C(0, 10 - len(addr)))
        kwargs.update({
            f"p_DATA_WIDTH_{name}": DP16KD_WIDTH, f"p_REGMODE_{name}": "OUTREG",
            f"p_CSDECODE_{name}": "0b000", f"p_WRITEMODE_{name}": "NORMAL",
            f"i_CLK{name}": ClockSignal("sync"),
            f"i_CE{name}": port.get("ce", C(0)), f"i_OCE{name}": port.get("oce", C(0)),
            f"i_WE{name}": port.get("we", C(0)), f"i_RST{name}": C(0),
            **{f"i_CS{name}{bit}": C(0) for bit in range(3)},
            **{f"i_AD{name}{bit}": address[bit] for bit in range(14)},
        })
        di = port.get("di", C(0, DP16KD_WIDTH))
        di = Cat(di, C(0, DP16KD_WIDTH - len(di)))
        kwargs.update({f"i_DI{name}{bit}": di[bit] for bit in range(DP16KD_WIDTH)})
        if "do" in port:
            kwargs.update({f"o_DO{name}{bit}": port["do"][bit] for bit in range(DP16KD_WIDTH)})
    return fpga.cell(platform, "DP16KD", **kwargs)


class RegisteredRom(wiring.Component):
    """A read-only table with ``ports`` read ports, each read through two registers.

    Parameters
    ----------
    table : sequence of :class:`int`
        The words, at most 1024 (a power of two) for the ``DP16KD`` form.
    width : :class:`int`
        Bits of a word.
    ports : :class:`int`
        Read ports.
    sites : sequence of :class:`str`
        On ECP5, the ``BEL`` of each ``DP16KD`` (a :func:`~cipher_cores.cores.fpga.floorplan`),
        in the order
        they are made: for each pair of ports, each 18-bit slice of the word; or ``None``.

    Members
    -------
    addr : ``In(unsigned(abits)).array(ports)``
        Each port's address, taken on an edge where ``en`` is high.
    en : ``In(1)``
        Enables both registers of every port.
    data : ``Out(width).array(ports)``
        The word at the address a port took two enabled edges earlier.

    On ECP5 the table is ``ceil(width / 18)`` ``DP16KD`` per two ports (each RAM serves a slice
    of 18 bits to two ports); elsewhere one :class:`~amaranth.lib.memory.Memory` with ``ports``
    synchronous read ports (which synthesis duplicates per port) and a register after each.
    """
    def __init__(self, table, *, width: int, ports: int, sites=None):
        table = tuple(table)
        depth = len(table)
        if depth < 2 or depth & (depth - 1):
            raise ValueError(f"table must hold a power of two of words, not {depth}")
        if any(not 0 <= word < 1 << width for word in table):
            raise ValueError(f"every word of table must fit in {width} bits")
        self._table = table
        self._width = width
        self._ports = ports
        self._sites = None if sites is None else list(sites)
        if self._sites is not None and len(self._sites) != self.block_rams:
            raise ValueError(f"sites must name {self.block_rams} block RAM sites, "
                             f"not {len(self._sites)}")
        super().__init__({
            "addr": In(unsigned(depth.bit_length() - 1)).array(ports),
            "en": In(1),
            "data": Out(width).array(ports),
        })

    @property
    def block_rams(self) -> int:
        """``DP16KD`` in the ECP5 form."""
        return (self._ports + 1) // 2 * -(-self._width // DP16KD_WIDTH)

    def elaborate(self, platform):
        m = Module()
        if fpga.primitives(platform).block_ram == "DP16KD" and len(self._table) <= DP16KD_WORDS:
            slices = range(0, self._width, DP16KD_WIDTH)
            sites = iter(self._sites or [None] * self.block_rams)
            for pair in range(0, self._ports, 2):
                for low in slices:
                    high = min(low + DP16KD_WIDTH, self._width)
                    init = [(word >> low) & ((1 << (high - low)) - 1) for word in self._table]
                    ports = {}
                    for name, index in zip("AB", range(pair, min(pair + 2, self._ports))):
                        data_out = Signal(DP16KD_WIDTH, name=f"do{index}_{low}")
                        ports[name] = {"addr": self.addr[index], "ce": self.en,
                                       "oce": self.en, "do": data_out}
                        m.d.comb += self.data[index][low:high].eq(data_out[:high - low])
                    m.submodules[f"ram{pair}_{low}"] = _dp16kd(platform, init, ports,
                                                               next(sites))
            return m

        m.submodules.rom = rom = memory.Memory(shape=unsigned(self._width),
                                               depth=len(self._table), init=self._table,
                                               attrs={"ram_style": "block"})
        for index in range(self._ports):
            read = rom.read_port(domain="sync", transparent_for=())
            m.d.comb += [read.addr.eq(self.addr[index]), read.en.eq(self.en)]
            with m.If(self.en):
                m.d.sync += self.data[index].eq(read.data)
        return m


class KeyMemory(wiring.Component):
    """The round-key memory: 64 entries of 128 bits, one read port through two registers and
    two write ports, one writing a 32-bit column, the other a whole entry.

    An entry holds columns 0 to 3 of a round key, column 0 in the most significant bits (as a
    128-bit block does).

    Members
    -------
    read_addr : ``In(6)``
        Taken on an edge where ``read_en`` is high; also where column writes go.
    read_en : ``In(1)``
        Enables both registers of the read port.
    read_data : ``Out(128)``
        The entry at the address taken two enabled edges earlier.
    column_data : ``In(32)``, column_we : ``In(4)``
        Writes ``column_data`` into column ``c`` of entry ``read_addr`` on an edge where bit
        ``c`` of ``column_we`` and ``read_en`` are high (on ECP5 the read and these writes share
        a port; the read data is then meaningless).
    entry_addr : ``In(6)``, entry_data : ``In(128)``, entry_we : ``In(1)``
        Writes a whole entry. Never on the same edge as a column write.

    ``sites``, on ECP5, places the 8 ``DP16KD`` (a :func:`~cipher_cores.cores.fpga.floorplan`),
    column 0's low and high halves first.

    On ECP5: 8 ``DP16KD`` (a column's high and low halves), port A reading and writing columns,
    port B writing entries, so that neither write needs a multiplexer. On iCE40: 8
    ``SB_RAM40_4K`` (the same halves), an address register before them, their one write port's
    address and data multiplexed and a column write masking the other columns. Elsewhere: one
    :class:`~amaranth.lib.memory.Memory` (Yosys maps it to 8 ``SB_RAM40_4K`` on iCE40) with one
    write port, whose data and address are multiplexed between the two writes.
    """
    def __init__(self, *, sites=None):
        self._sites = None if sites is None else list(sites)
        if self._sites is not None and len(self._sites) != 8:
            raise ValueError(f"sites must name 8 block RAM sites, not {len(self._sites)}")
        super().__init__()

    read_addr: In(6)
    read_en: In(1)
    read_data: Out(128)
    column_data: In(32)
    column_we: In(4)
    entry_addr: In(6)
    entry_data: In(128)
    entry_we: In(1)

    def elaborate(self, platform):
        m = Module()
        block_ram = fpga.primitives(platform).block_ram
        if block_ram == "DP16KD":
            sites = iter(self._sites or [None] * 8)
            for column in range(4):
                top = 32 * (4 - column)
                for half in (0, 16):
                    bits = slice(top - 32 + half, top - 16 + half)
                    data_out = Signal(DP16KD_WIDTH, name=f"do{column}_{half}")
                    m.submodules[f"ram{column}_{half}"] = _dp16kd(platform, [], {
                        "A": {"addr": self.read_addr, "ce": self.read_en,
                              "oce": self.read_en, "we": self.column_we[column],
                              "di": self.column_data[half:half + 16], "do": data_out},
                        "B": {"addr": self.entry_addr, "ce": self.entry_we,
                              "we": self.entry_we, "di": self.entry_data[bits]},
                    }, next(sites))
                    m.d.comb += self.read_data[bits].eq(data_out[:16])
            return m

        if block_ram == "SB_RAM40_4K":
            # By hand, as in RegisteredRam: an address register, then the RAMs' output latches;
            # one write port, whose address, data and bit mask choose between the two writes
            # (Yosys' mapping of the Memory below emulates its read-during-write behaviour with
            # a flip-flop and a LUT per bit).
            address = Signal(6, reset_less=True)
            with m.If(self.read_en):
                m.d.sync += address.eq(self.read_addr)
            write_addr = Signal(6)
            m.d.comb += write_addr.eq(Mux(self.entry_we, self.entry_addr, self.read_addr))
            write_en = self.entry_we | (self.column_we.any() & self.read_en)
            for column in range(4):
                top = 32 * (4 - column)
                keep = Signal(name=f"keep_{column}")    # MASK: 1 leaves a bit unwritten
                m.d.comb += keep.eq(~self.entry_we & ~self.column_we[column])
                for half in (0, 16):
                    bits = slice(top - 32 + half, top - 16 + half)
                    data_out = Signal(16, name=f"rdata{column}_{half}")
                    data_in = Signal(16, name=f"wdata{column}_{half}")
                    m.d.comb += data_in.eq(Mux(self.entry_we, self.entry_data[bits],
                                               self.column_data[half:half + 16]))
                    m.submodules[f"ram{column}_{half}"] = fpga.cell(
                        platform, "SB_RAM40_4K", p_READ_MODE=0, p_WRITE_MODE=0,
                        i_RCLK=ClockSignal("sync"), i_RCLKE=C(1), i_RE=self.read_en,
                        i_RADDR=Cat(address, C(0, 5)), o_RDATA=data_out,
                        i_WCLK=ClockSignal("sync"), i_WCLKE=write_en, i_WE=write_en,
                        i_WADDR=Cat(write_addr, C(0, 5)), i_WDATA=data_in,
                        i_MASK=keep.replicate(16))
                    m.d.comb += self.read_data[bits].eq(data_out)
            return m

        m.submodules.keys = keys = memory.Memory(shape=unsigned(128), depth=64, init=[],
                                                 attrs={"ram_style": "block"})
        write = keys.write_port(granularity=32)
        m.d.comb += [
            write.addr.eq(Mux(self.entry_we, self.entry_addr, self.read_addr)),
            write.data.eq(Mux(self.entry_we, self.entry_data, self.column_data.replicate(4))),
            # Column c is the memory's lane 3 - c (column 0 is in the most significant bits).
            write.en.eq(Mux(self.entry_we, 0b1111, self.column_we[::-1])),
        ]
        read = keys.read_port(domain="sync", transparent_for=())
        m.d.comb += [read.addr.eq(self.read_addr), read.en.eq(self.read_en)]
        with m.If(self.read_en):
            m.d.sync += self.read_data.eq(read.data)
        return m


class RegisteredRam(wiring.Component):
    """A RAM of ``depth`` words of ``width`` bits with one write port and one read port, the read
    through two registers.

    Parameters
    ----------
    depth : :class:`int`
        Words, a power of two, at most 1024.
    width : :class:`int`
        Bits of a word.
    enables : :class:`int`
        Copies of the read enable, each enabling an equal slice of the word (and the RAMs that
        hold it): a user drives them with copies of one signal, so that no single net enables
        every register (iCE40 routes such a net through a global buffer, +2.5 ns).

    Members
    -------
    write_addr : ``In(abits)``, write_data : ``In(width)``, write_en : ``In(1)``
        Writes ``write_data`` at ``write_addr`` on an edge where ``write_en`` is high.
    read_addr : ``In(abits)``
        Taken on an edge where ``read_en`` is high.
    read_en : ``In(enables)``
        Enables both registers of the read port (all copies equal).
    read_data : ``Out(width)``
        The word at the address taken two enabled edges earlier. A read and a write of the same
        word on one edge read the old word.

    On ECP5 ``ceil(width / 18)`` ``DP16KD`` (port A reads, port B writes); on iCE40 (up to 256
    words) an address register and ``ceil(width / 16)`` ``SB_RAM40_4K``; elsewhere a
    :class:`~amaranth.lib.memory.Memory` with a synchronous read port and a register after it.
    """
    def __init__(self, *, depth: int, width: int, enables: int = 1):
        if depth < 2 or depth > DP16KD_WORDS or depth & (depth - 1):
            raise ValueError(f"depth must be a power of two from 2 to 1024, not {depth!r}")
        if width % enables:
            raise ValueError(f"enables ({enables}) must divide width ({width})")
        self._depth = depth
        self._width = width
        self._enables = enables
        abits = depth.bit_length() - 1
        super().__init__({
            "write_addr": In(abits), "write_data": In(width), "write_en": In(1),
            "read_addr": In(abits), "read_en": In(enables), "read_data": Out(width),
        })

    def _enable(self, bit):
        """The copy of the read enable for bit ``bit`` of the word."""
        return self.read_en[bit * self._enables // self._width]

    def elaborate(self, platform):
        m = Module()
        block_ram = fpga.primitives(platform).block_ram
        if block_ram == "DP16KD":
            for low in range(0, self._width, DP16KD_WIDTH):
                high = min(low + DP16KD_WIDTH, self._width)
                data_out = Signal(DP16KD_WIDTH, name=f"do_{low}")
                m.submodules[f"ram_{low}"] = _dp16kd(platform, [], {
                    "A": {"addr": self.read_addr, "ce": self._enable(low),
                          "oce": self._enable(low), "do": data_out},
                    "B": {"addr": self.write_addr, "ce": self.write_en, "we": self.write_en,
                          "di": self.write_data[low:high]},
                })
                m.d.comb += self.read_data[low:high].eq(data_out[:high - low])
            return m

        if block_ram == "SB_RAM40_4K" and self._depth <= 256:
            # The first register is the address, in the fabric, the second the RAM's own output
            # latch (which holds while ``RE`` is low): the word goes from the RAM to its users
            # with no register in between to enable. By hand, also because Yosys' mapping of a
            # Memory with a write port and a non-transparent read port emulates its
            # read-during-write behaviour with a flip-flop and a LUT per bit (the read and the
            # write of a word never meet here).
            address = Signal.like(self.read_addr, reset_less=True)
            with m.If(self.read_en[0]):
                m.d.sync += address.eq(self.read_addr)
            for low in range(0, self._width, 16):
                high = min(low + 16, self._width)
                data_out = Signal(16, name=f"rdata_{low}")
                m.submodules[f"ram_{low}"] = sb_ram40_4k(
                    platform, read_addr=address, read_en=self._enable(low), read_data=data_out,
                    write_addr=self.write_addr, write_en=self.write_en,
                    write_data=self.write_data[low:high])
                m.d.comb += self.read_data[low:high].eq(data_out[:high - low])
            return m

        m.submodules.ram = ram = memory.Memory(shape=unsigned(self._width), depth=self._depth,
                                               init=[], attrs={"ram_style": "block"})
        write = ram.write_port()
        m.d.comb += [write.addr.eq(self.write_addr), write.data.eq(self.write_data),
                     write.en.eq(self.write_en)]
        read = ram.read_port(domain="sync", transparent_for=())
        m.d.comb += [read.addr.eq(self.read_addr), read.en.eq(self.read_en[0])]
        output = Signal(self._width, reset_less=True)
        for copy in range(self._enables):
            bits = slice(copy * self._width // self._enables,
                         (copy + 1) * self._width // self._enables)
            with m.If(self.read_en[copy]):
                m.d.sync += output[bits].eq(read.data[bits])
        m.d.comb += self.read_data.eq(output)
        return m


#: ``READ_MODE`` / ``WRITE_MODE`` of an ``SB_RAM40_4K``: the words and bits of a port.
SB_RAM40_MODES = {0: (256, 16), 1: (512, 8), 2: (1024, 4), 3: (2048, 2)}


def sb_ram40_pins(mode: int) -> tuple:
    """The ``RDATA`` / ``WDATA`` pins that carry bits 0, 1, ... of a narrow word in ``mode``
    (iCE40 ``SB_RAM40_4K``: 16 bits use every pin, 8 bits the even ones, 4 bits pins 1, 5, 9,
    13, 2 bits pins 3 and 11)."""
    return {0: tuple(range(16)), 1: tuple(range(0, 16, 2)), 2: (1, 5, 9, 13), 3: (3, 11)}[mode]


class MixedWidthRam(wiring.Component):
    """One iCE40 ``SB_RAM40_4K`` with its write and read ports in their own widths, as a
    component: the cell itself on iCE40, a model of it elsewhere.

    The RAM is 256 rows of 16 bits. A port of ``2**mode`` times the words of a 16-bit port
    (``mode`` 0 to 3: 16, 8, 4 or 2 bits) addresses bit lane ``l`` of every group of ``2**mode``
    bits of a row by the address bits above the row (``addr[8:]``): so in 1024x4 mode
    (``mode`` 2) word ``(l << 8) | row`` is bits ``l, 4 + l, 8 + l, 12 + l`` of the row. A write
    in 256x16 mode writes the bits ``mask`` leaves at 0. That is how the cell behaves (Yosys'
    simulation model of ``SB_RAM40_4K`` says the same), and what the PRESENT core of
    :mod:`cipher_cores.cores.present.bram` builds its bit permutation on: one masked 16-bit write scatters
    four bits to four narrow words.

    Parameters
    ----------
    read_mode, write_mode : :class:`int`
        0 (256x16), 1 (512x8), 2 (1024x4) or 3 (2048x2).
    init : sequence of :class:`int`
        Initial rows (16-bit), from row 0; the rest are 0.
    writes : :class:`bool`
        Whether the write port is used (a read-only table without).
    byte_mask : :class:`bool`
        In 256x16 mode, whether ``write_mask`` is the same across each byte (bits 0 and 8 stand
        for their bytes): the model then writes whole bytes, which other devices' block RAMs
        do natively (one ``DP16KD`` on ECP5 instead of one per two bits).

    Members
    -------
    read_addr : ``In(11)``
        Taken on every edge.
    read_data : ``Out(read width)``
        The word at the address taken on the previous edge.
    write_addr : ``In(11)``, write_data : ``In(write width)``, write_en : ``In(1)``
        Written on an edge where ``write_en`` is high (only with ``writes``).
    write_mask : ``In(16)``
        In 256x16 mode, the bits of the row left unwritten (1 keeps a bit).
    """
    def __init__(self, *, read_mode: int, write_mode: int = 0, init=(), writes: bool = True,
                 byte_mask: bool = False):
        for name, mode in (("read_mode", read_mode), ("write_mode", write_mode)):
            if mode not in SB_RAM40_MODES:
                raise ValueError(f"{name} must be 0, 1, 2 or 3, not {mode!r}")
        init = tuple(init)
        if len(init) > 256 or any(not 0 <= row < 1 << 16 for row in init):
            raise ValueError("init must be at most 256 rows of 16 bits")
        self._read_mode = read_mode
        self._write_mode = write_mode
        self._init = init + (0,) * (256 - len(init))
        self._writes = writes
        if byte_mask and write_mode != 0:
            raise ValueError(f"byte_mask needs write_mode 0 (256x16), not {write_mode}")
        self._byte_mask = byte_mask
        super().__init__({
            "read_addr": In(11),
            "read_data": Out(SB_RAM40_MODES[read_mode][1]),
            "write_addr": In(11),
            "write_data": In(SB_RAM40_MODES[write_mode][1]),
            "write_en": In(1),
            "write_mask": In(16),
        })

    def elaborate(self, platform):
        m = Module()
        read_pins = sb_ram40_pins(self._read_mode)
        write_pins = sb_ram40_pins(self._write_mode)
        if fpga.primitives(platform).block_ram == "SB_RAM40_4K":
            rdata = Signal(16)
            wdata = [C(0)] * 16
            for bit, pin in enumerate(write_pins):
                wdata[pin] = self.write_data[bit]
            init = {f"p_INIT_{index:X}": Const(sum(self._init[16 * index + row] << (16 * row)
                                                    for row in range(16)), 256)
                    for index in range(16)}
            write_en = self.write_en if self._writes else C(0)
            m.submodules.ram = fpga.cell(
                platform, "SB_RAM40_4K", p_READ_MODE=self._read_mode,
                p_WRITE_MODE=self._write_mode,
                **init,
                i_RCLK=ClockSignal("sync"), i_RCLKE=C(1), i_RE=C(1),
                i_RADDR=self.read_addr, o_RDATA=rdata,
                i_WCLK=ClockSignal("sync"), i_WCLKE=write_en, i_WE=write_en,
                i_WADDR=self.write_addr, i_WDATA=Cat(*wdata),
                i_MASK=self.write_mask if self._write_mode == 0 else C(0, 16))
            m.d.comb += self.read_data.eq(Cat(rdata[pin] for pin in read_pins))
            return m

        # The model: a 16-bit memory, each bit (or each byte) written on its own.
        m.submodules.rows = rows = memory.Memory(shape=unsigned(16), depth=256, init=self._init)
        if self._writes and self._byte_mask:
            write = rows.write_port(granularity=8)
            m.d.comb += [
                write.addr.eq(self.write_addr[:8]),
                write.data.eq(self.write_data),
                write.en.eq(self.write_en.replicate(2) &
                            ~Cat(self.write_mask[0], self.write_mask[8])),
            ]
        elif self._writes:
            write = rows.write_port(granularity=1)
            lanes = 1 << self._write_mode       # bits of a group, one per narrow word
            lane = self.write_addr[8:8 + self._write_mode]
            if self._write_mode == 0:
                keep = self.write_mask
            else:
                keep = Cat((lane != bit % lanes) for bit in range(16))
            width = len(self.write_data)
            m.d.comb += [
                write.addr.eq(self.write_addr[:8]),
                write.data.eq(Cat(self.write_data[bit // lanes] for bit in range(16))
                              if self._write_mode else self.write_data),
                write.en.eq(self.write_en.replicate(16) & ~keep),
            ]
            assert width * lanes == 16
        read = rows.read_port(domain="sync", transparent_for=())
        m.d.comb += read.addr.eq(self.read_addr[:8])
        lanes = 1 << self._read_mode
        if self._read_mode == 0:
            m.d.comb += self.read_data.eq(read.data)
        else:
            lane = Signal(self._read_mode, name="read_lane")
            m.d.sync += lane.eq(self.read_addr[8:8 + self._read_mode])
            m.d.comb += self.read_data.eq(Cat(read.data[lanes * group:lanes * (group + 1)]
                                              .bit_select(lane, 1)
                                              for group in range(16 // lanes)))
        return m
