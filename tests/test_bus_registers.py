# amaranth: UnusedElaboratable=no
"""The register file (:class:`~cipher_cores.cores.bus.registers.RegisterFile`) alone, driven by a
Wishbone master: its decoder, fields, strobes, refusals and ``clear`` are what the register map
(:data:`~cipher_cores.cores.bus.regmap.REGISTERS`) says, register by register."""

import random

import pytest

from cipher_cores.cores.bus.regmap import ADDRESS_BYTES, REGISTERS, register
from cipher_cores.cores.bus.registers import RegisterFile

from .support.bus_components import (high_edges, readable_mask, register_master, register_words,
                                     simulate)
from .support.peripheral import bit


ERROR_FLAGS = sum(item.mask for item in register("ERROR").fields)


def port(registers, name: str):
    """The value of register word ``name`` as a 32-bit value (its fields at their offsets)."""
    return getattr(registers, name).as_value()


def write_strobes(registers) -> dict:
    """Every ``<word>_write`` strobe of ``registers``, by name."""
    return {name: getattr(registers, name) for name in registers.signature.members
            if name.endswith("_write")}


def taken_edges(trace: list, write: bool) -> list:
    """The edges at which the register file took an access (``cyc``, ``stb``, not ``ack``)."""
    return [index + 1 for index, values in enumerate(trace)
            if values["cyc"] and values["stb"] and not values["ack"] and values["we"] == write]


def landed_edges(trace: list) -> list:
    """The edges at which the register file acknowledged a write: a write lands on them, and
    its ``<word>_write`` strobe is high at them."""
    return [edge + 1 for edge in taken_edges(trace, write=True)]


def bus_watch(registers, **more) -> dict:
    bus = registers.bus
    return {"cyc": bus.cyc, "stb": bus.stb, "we": bus.we, "ack": bus.ack, **more}


# The decoder, derived from the map -------------------------------------------------------------

def test_every_read_write_register_word_holds_what_is_written_at_its_offset():
    """Every ``rw`` word is written first, then each is read back: its ``rw`` fields, no other
    bits (``w1`` fields read 0), and the port shows the same value: no two words alias."""
    rng = random.Random(1)
    registers = RegisterFile()
    words = register_words("rw", stored=True)
    values = {name: rng.getrandbits(32) for _, _, _, name in words}
    assert {name for _, _, _, name in words} == {
        "ctrl", "irq_enable", "length", "aad_bytes", "text_bytes", "dma_source",
        "dma_destination"}

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for _, _, offset, name in words:
            await fw.access(offset, values[name])
        for reg, _, offset, name in words:
            want = values[name] & readable_mask(reg)
            assert await fw.access(offset) == want, name
            assert ctx.get(port(registers, name)) == want, name
        assert await fw.read("ERROR") == 0

    simulate(registers, bench)


def test_write_only_words_hold_what_is_written_and_read_zero():
    rng = random.Random(2)
    registers = RegisterFile()
    words = register_words("wo", stored=True)
    assert {reg.name for reg, *_ in words} == {"KEY", "TAG_EXPECTED", "RNG_SEED"}
    values = {name: rng.getrandbits(32) | 1 for _, _, _, name in words}

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for _, _, offset, name in words:
            await fw.access(offset, values[name])
        for _, _, offset, name in words:
            assert await fw.access(offset) == 0, name
            assert ctx.get(port(registers, name)) == values[name], name
        assert await fw.read("ERROR") == 0

    simulate(registers, bench)


def test_words_the_file_does_not_store_give_their_write_strobe_and_read_zero():
    """``IV`` and ``DIN``: a write is a one-edge strobe with ``write_data`` and ``write_sel``, on
    the edge that acknowledges it (the write is applied in the cycle after it was taken); a
    read returns 0 and flags nothing."""
    registers = RegisterFile()
    words = register_words("wo", stored=False)
    assert [name for *_, name in words] == ["din", "iv0", "iv1", "iv2", "iv3"]
    strobes = {name: getattr(registers, f"{name}_write") for *_, name in words}
    watch = bus_watch(registers, data=registers.write_data, sel=registers.write_sel, **strobes)

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for number, (_, _, offset, name) in enumerate(words):
            await fw.access(offset, 0x1000 + number, sel=0b0111)
        for _, _, offset, name in words:
            assert await fw.access(offset) == 0, name
        assert await fw.read("ERROR") == 0

    trace = simulate(registers, bench, watch=watch)
    writes = landed_edges(trace)
    for number, (*_, name) in enumerate(words):
        assert high_edges(trace, name) == [writes[number]], name
        edge = trace[writes[number] - 1]
        assert (edge["data"], edge["sel"]) == (0x1000 + number, 0b0111), name


def test_read_only_words_read_their_input_port():
    rng = random.Random(3)
    registers = RegisterFile()
    words = register_words("ro")
    assert {reg.name for reg, *_ in words} == {"STATUS", "IRQ_PENDING", "INFO", "KEYSIZES",
                                               "DOUT", "TAG"}
    values = {name: rng.getrandbits(32) & readable_mask(reg) for reg, _, _, name in words}

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for name, value in values.items():
            ctx.set(port(registers, name), value)
        for _, _, offset, name in words:
            assert await fw.access(offset) == values[name], name
        assert await fw.read("ERROR") == 0

    simulate(registers, bench)


def test_writes_to_read_only_words_flag_read_only_and_change_nothing():
    registers = RegisterFile()
    words = register_words("ro")

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for reg, _, offset, name in words:
            ctx.set(port(registers, name), 0x0102_0304 & readable_mask(reg))
            await fw.access(offset, 0xffff_ffff)
            assert await fw.read("ERROR") == bit("ERROR", "READ_ONLY"), name
            assert await fw.access(offset) == 0x0102_0304 & readable_mask(reg), name
            await fw.write("ERROR", bit("ERROR", "READ_ONLY"))

    simulate(registers, bench)


def test_unmapped_addresses_flag_bad_address_and_read_zero():
    """Every word address the map leaves free, read and written."""
    registers = RegisterFile()
    mapped = {offset for reg in REGISTERS for offset in reg.offsets()}
    unmapped = [offset for offset in range(0, ADDRESS_BYTES, 4) if offset not in mapped]
    assert unmapped == list(range(0x9C, 0x100, 4))

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for offset in unmapped:
            for value in (0xffff_ffff, None):
                data = await fw.access(offset, value)
                assert value is not None or data == 0, hex(offset)
                assert await fw.read("ERROR") == bit("ERROR", "BAD_ADDRESS"), hex(offset)
                await fw.write("ERROR", bit("ERROR", "BAD_ADDRESS"))

    simulate(registers, bench)


def test_absent_registers_and_words_are_unmapped_and_absent_fields_hold_nothing():
    absent = {"TAG", "KEY4", "KEY5", "KEY6", "KEY7", "IV2", "IV3", "CTRL.TAG_BYTES",
              "STATUS.TAG_READY"}
    registers = RegisterFile(absent=absent)
    assert registers.absent == frozenset(absent)
    members = registers.signature.members
    assert {"tag0", "key4", "key7", "iv2_write", "iv3_write"}.isdisjoint(members)
    assert {"key3", "iv1_write", "tag_expected0"} <= set(members)
    assert "tag_bytes" not in dict(registers.ctrl.shape())
    assert "tag_ready" not in dict(registers.status.shape())
    gone = [offset for name in ("TAG", "KEY", "IV") for index, offset
            in enumerate(register(name).offsets())
            if name == "TAG" or f"{name}{index}" in absent]

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for offset in gone:
            await fw.access(offset, 0x5555_5555)
            assert await fw.read("ERROR") == bit("ERROR", "BAD_ADDRESS"), hex(offset)
            await fw.write("ERROR", bit("ERROR", "BAD_ADDRESS"))
        await fw.write("KEY", 0x5555_5555, 3)
        await fw.write("CTRL", 0xffff_ffff)
        assert await fw.read("ERROR") == 0
        assert await fw.read("CTRL") == \
            readable_mask(register("CTRL")) & ~bit("CTRL", "TAG_BYTES")

    simulate(registers, bench)


def test_absent_with_a_name_the_map_does_not_have_raises():
    with pytest.raises(ValueError, match=r"^absent names \['CTRL\.NOPE', 'KEY8', 'LENGTH0'\], "
                                         r"which the register map does not have$"):
        RegisterFile(absent={"KEY8", "CTRL.NOPE", "LENGTH0", "KEY7", "TAG"})


# Fields --------------------------------------------------------------------------------------

def test_byte_lane_writes_change_only_the_selected_bytes():
    """Every byte select, on a stored ``rw`` register (DMA_SOURCE) and a stored ``wo`` one
    (KEY0)."""
    registers = RegisterFile()
    old, new = 0x1122_3344, 0xaabb_ccdd

    def merged(sel):
        lanes = sum(0xff << (8 * lane) for lane in range(4) if sel >> lane & 1)
        return (new & lanes) | (old & ~lanes)

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for sel in range(16):
            for name in ("DMA_SOURCE", "KEY"):
                await fw.write(name, old)
                await fw.write(name, new, sel=sel)
            assert await fw.read("DMA_SOURCE") == merged(sel), bin(sel)
            assert ctx.get(port(registers, "key0")) == merged(sel), bin(sel)

    simulate(registers, bench)


def test_error_flags_are_set_by_error_set_and_stay_set():
    registers = RegisterFile()

    async def bench(ctx):
        fw = register_master(ctx, registers)
        ctx.set(registers.error_set.as_value(), ERROR_FLAGS)
        await ctx.tick()
        ctx.set(registers.error_set.as_value(), 0)
        for _ in range(10):
            await ctx.tick()
        assert await fw.read("ERROR") == ERROR_FLAGS == 0x7ff

    simulate(registers, bench)


def test_error_flags_clear_where_a_one_is_written_in_a_selected_byte():
    registers = RegisterFile()
    busy_write, read_only = bit("ERROR", "BUSY_WRITE"), bit("ERROR", "READ_ONLY")

    async def bench(ctx):
        fw = register_master(ctx, registers)
        ctx.set(registers.error_set.as_value(), ERROR_FLAGS)
        await ctx.tick()
        ctx.set(registers.error_set.as_value(), 0)
        await fw.write("ERROR", 0)
        assert await fw.read("ERROR") == ERROR_FLAGS
        await fw.write("ERROR", busy_write | read_only)
        assert await fw.read("ERROR") == ERROR_FLAGS & ~(busy_write | read_only)
        await fw.write("ERROR", 0xffff_ffff, sel=0b0001)
        assert await fw.read("ERROR") == ERROR_FLAGS & ~0xff
        await fw.write("ERROR", 0xffff_ffff)
        assert await fw.read("ERROR") == 0

    simulate(registers, bench)


def test_an_error_read_sees_a_flag_raised_in_its_own_cycle():
    """A flag set through ``error_set`` on the edge an ERROR read is taken is in what the read
    returns (and stays set)."""
    registers = RegisterFile()
    bus = registers.bus
    overflow = bit("ERROR", "OVERFLOW")

    async def bench(ctx):
        fw = register_master(ctx, registers)
        ctx.set(bus.adr, register("ERROR").offset // 4)
        ctx.set(bus.we, 0)
        ctx.set(bus.cyc, 1)
        ctx.set(bus.stb, 1)
        ctx.set(registers.error_set.as_value(), overflow)
        await ctx.tick()
        ctx.set(registers.error_set.as_value(), 0)
        assert ctx.get(bus.ack) and ctx.get(bus.dat_r) == overflow
        ctx.set(bus.cyc, 0)
        ctx.set(bus.stb, 0)
        await ctx.tick()
        assert await fw.read("ERROR") == overflow

    simulate(registers, bench)


@pytest.mark.parametrize("field_name", ["START", "CLEAR"])
def test_write_one_fields_are_strobes_on_the_edge_after_the_write_lands(field_name):
    """A 1 written to CTRL.START or CTRL.CLEAR is high for exactly one edge, the edge after the
    one that acknowledged the write, and reads 0; a 0, or a 1 in a byte not selected, strobes
    nothing."""
    registers = RegisterFile()
    strobe = bit("CTRL", field_name)
    lane = (strobe.bit_length() - 1) // 8
    watch = bus_watch(registers, strobe=getattr(registers.ctrl, field_name.lower()))

    async def bench(ctx):
        fw = register_master(ctx, registers)
        await fw.write("CTRL", strobe | 0x3)
        assert await fw.read("CTRL") == 0x3
        await fw.write("CTRL", 0x3)
        await fw.write("CTRL", strobe, sel=0b1111 & ~(1 << lane))
        for _ in range(3):
            await ctx.tick()

    trace = simulate(registers, bench, watch=watch)
    assert high_edges(trace, "strobe") == [landed_edges(trace)[0] + 1]


def test_each_access_takes_two_edges_with_ack_low_between():
    """A master holding ``cyc`` and ``stb`` high gets an access taken every second edge, its
    ``ack`` on the edge after; ``length_read`` is high for the edges reads are taken."""
    registers = RegisterFile()
    bus = registers.bus
    watch = bus_watch(registers, read=registers.length_read)

    async def bench(ctx):
        ctx.set(bus.adr, register("LENGTH").offset // 4)
        ctx.set(bus.cyc, 1)
        ctx.set(bus.stb, 1)
        for _ in range(8):
            await ctx.tick()

    trace = simulate(registers, bench, watch=watch)
    assert [values["ack"] for values in trace[:8]] == [0, 1] * 4
    assert high_edges(trace, "read")[:4] == taken_edges(trace, write=False)[:4] == [1, 3, 5, 7]


def test_a_write_lands_on_the_edge_that_acknowledges_it_and_the_next_access_sees_it():
    """With ``stb`` held high: a write taken at edge 1 lands at edge 2 (its ack), and the read
    taken at edge 3 returns it."""
    registers = RegisterFile()
    bus = registers.bus

    async def bench(ctx):
        ctx.set(bus.adr, register("LENGTH").offset // 4)
        ctx.set(bus.sel, 0b1111)
        ctx.set(bus.dat_w, 0x1234)
        ctx.set(bus.we, 1)
        ctx.set(bus.cyc, 1)
        ctx.set(bus.stb, 1)
        await ctx.tick()
        ctx.set(bus.we, 0)
        assert ctx.get(bus.ack) and ctx.get(registers.length.blocks) == 0
        await ctx.tick()
        assert ctx.get(registers.length.blocks) == 0x1234
        await ctx.tick()
        assert ctx.get(bus.ack) and ctx.get(bus.dat_r) == 0x1234

    simulate(registers, bench)


def test_read_strobes_are_high_for_the_edge_a_read_is_taken():
    """``dout_read`` (DOUT pops a word on it): one edge per read, the edge the read is taken."""
    registers = RegisterFile()
    watch = bus_watch(registers, pop=registers.dout_read)

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for _ in range(3):
            await fw.read("DOUT")
            await fw.read("STATUS")
        await fw.write("DOUT", 1)

    trace = simulate(registers, bench, watch=watch)
    assert high_edges(trace, "pop") == taken_edges(trace, write=False)[::2]
    assert len(high_edges(trace, "pop")) == 3


# Busy ----------------------------------------------------------------------------------------

def test_writes_to_busy_refused_words_while_busy_change_nothing_and_flag_busy_write():
    """Every word the map marks ``busy_refused``: the stored ones keep their value, none gives
    its write strobe, and each write sets ERROR.BUSY_WRITE alone."""
    registers = RegisterFile()
    refused = [word for word in register_words() if word[0].busy_refused]
    assert {reg.name for reg, *_ in refused} == {
        "CTRL", "LENGTH", "AAD_BYTES", "TEXT_BYTES", "KEY", "IV", "TAG_EXPECTED", "DMA_SOURCE",
        "DMA_DESTINATION"}
    strobes = {f"{name}_write": getattr(registers, f"{name}_write") for *_, name in refused}

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for reg, _, offset, name in refused:
            if reg.stored:
                await fw.access(offset, 0x0505_0505)
        ctx.set(registers.busy, 1)
        for reg, _, offset, name in refused:
            await fw.access(offset, 0xfafa_fafa & ~bit("CTRL", "CLEAR"))
            assert await fw.read("ERROR") == bit("ERROR", "BUSY_WRITE"), name
            await fw.write("ERROR", bit("ERROR", "BUSY_WRITE"))
            if reg.stored:
                assert ctx.get(port(registers, name)) == \
                    0x0505_0505 & (readable_mask(reg) or 0xffff_ffff), name

    trace = simulate(registers, bench, watch={"busy": registers.busy, **strobes})
    assert any(values["busy"] for values in trace)
    assert [(name, edge) for name in strobes for edge in high_edges(trace, name)
            if trace[edge - 1]["busy"]] == []


def test_other_words_take_writes_while_busy():
    """IRQ_ENABLE, ERROR (write 1 to clear) and DIN are not refused while busy."""
    registers = RegisterFile()
    watch = bus_watch(registers, din=registers.din_write)

    async def bench(ctx):
        fw = register_master(ctx, registers)
        ctx.set(registers.busy, 1)
        await fw.write("IRQ_ENABLE", 0b10101)
        assert await fw.read("IRQ_ENABLE") == 0b10101
        ctx.set(registers.error_set.as_value(), ERROR_FLAGS)
        await ctx.tick()
        ctx.set(registers.error_set.as_value(), 0)
        await fw.write("ERROR", ERROR_FLAGS & ~bit("ERROR", "OVERFLOW"))
        assert await fw.read("ERROR") == bit("ERROR", "OVERFLOW")
        await fw.write("DIN", 7)

    trace = simulate(registers, bench, watch=watch)
    assert len(high_edges(trace, "din")) == 1


def test_ctrl_with_clear_is_obeyed_while_busy():
    """Busy: a CTRL write with CLEAR (in a selected byte) is taken, strobes CLEAR and flags
    nothing; with the CLEAR byte not selected it is refused like any other."""
    registers = RegisterFile()
    clear = bit("CTRL", "CLEAR")
    watch = bus_watch(registers, clear=registers.ctrl.clear, written=registers.ctrl_write)

    async def bench(ctx):
        fw = register_master(ctx, registers)
        ctx.set(registers.busy, 1)
        await fw.write("CTRL", clear | 0x2)
        assert await fw.read("ERROR") == 0
        await fw.write("CTRL", clear | 0x4, sel=0b0001)
        assert await fw.read("ERROR") == bit("ERROR", "BUSY_WRITE")
        assert await fw.read("CTRL") == 0x2

    trace = simulate(registers, bench, watch=watch)
    landed = landed_edges(trace)[0]
    assert high_edges(trace, "written") == [landed]
    assert high_edges(trace, "clear") == [landed + 1]


# Clear ---------------------------------------------------------------------------------------

def test_clear_zeroes_every_stored_register_marked_cleared_and_leaves_irq_enable():
    rng = random.Random(4)
    registers = RegisterFile()
    writable = [word for word in register_words("rw", "wo", stored=True)]
    values = {name: rng.getrandbits(32) | 0x100 for *_, name in writable}
    cleared = [name for reg, _, _, name in writable if reg.cleared]
    assert [name for reg, _, _, name in writable if not reg.cleared] == ["irq_enable"]

    async def bench(ctx):
        fw = register_master(ctx, registers)
        for _, _, offset, name in writable:
            await fw.access(offset, values[name])
        ctx.set(registers.error_set.as_value(), ERROR_FLAGS)
        await ctx.tick()
        ctx.set(registers.error_set.as_value(), 0)
        ctx.set(registers.clear, 1)
        await ctx.tick()
        ctx.set(registers.clear, 0)
        for name in cleared + ["error"]:
            assert ctx.get(port(registers, name)) == 0, name
        for reg, _, offset, name in writable:
            want = 0 if reg.cleared else values[name] & readable_mask(reg)
            assert await fw.access(offset) == want, name
        assert await fw.read("ERROR") == 0

    simulate(registers, bench)

