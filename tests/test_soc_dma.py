# amaranth: UnusedElaboratable=no
"""The SoC with the peripheral's DMA master: the arbiter that lets the CPU and the DMA share the
bus, and the whole system in the compiled simulator running the self-test through the DMA."""

from amaranth.hdl import Fragment, Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from cipher_cores.cores.bus.wishbone import WishboneSignature
from cipher_cores.cores.soc import CipherSoC, WishboneArbiter
from cipher_cores.scripts.flow.soc import SOC_BOARDS, parse_selftest_output, soc_markdown
from cipher_cores.scripts.flow.targets import parse_target

from .support.helpers import run_cli


class _Target(wiring.Component):
    """A RAM of 16 words that acknowledges on the edge after the strobe (as the SoC's do)."""
    bus: wiring.In(WishboneSignature(addr_width=30))

    def elaborate(self, platform):
        m = Module()
        from amaranth.lib import memory
        m.submodules.storage = storage = memory.Memory(shape=32, depth=16, init=[])
        read, write = storage.read_port(domain="comb"), storage.write_port()
        access = self.bus.cyc & self.bus.stb & ~self.bus.ack
        m.d.comb += [read.addr.eq(self.bus.adr[:4]), write.addr.eq(self.bus.adr[:4]),
                     write.data.eq(self.bus.dat_w), write.en.eq(access & self.bus.we)]
        m.d.sync += [self.bus.ack.eq(access), self.bus.dat_r.eq(read.data)]
        return m


def _system():
    m = Module()
    m.submodules.arbiter = arbiter = WishboneArbiter()
    m.submodules.target = target = _Target()
    wiring.connect(m, arbiter.bus, target.bus)
    return m, arbiter


def _run(m, *benches):
    sim = Simulator(m)
    sim.add_clock(1e-6)
    for bench in benches:
        sim.add_testbench(bench)
    sim.run()


async def _access(ctx, bus, address, value=None, *, keep=False):
    """One classic access, as PicoRV32 and the DMA make them: strobed until the edge that ends
    the cycle with ack high; returns (data, edges from the strobe to that edge). ``keep``: cyc
    stays high after (the initiator goes on to another access)."""
    ctx.set(bus.adr, address)
    ctx.set(bus.we, value is not None)
    ctx.set(bus.dat_w, value or 0)
    ctx.set(bus.sel, 0b1111)
    ctx.set(bus.cyc, 1)
    ctx.set(bus.stb, 1)
    for edges in range(1, 100):
        acked, data = ctx.get(bus.ack), ctx.get(bus.dat_r)
        await ctx.tick()
        if acked:
            ctx.set(bus.stb, 0)
            ctx.set(bus.cyc, keep)
            return data, edges
    raise AssertionError("no ack")


def test_arbiter_passes_either_initiator_alone_through():
    m, arbiter = _system()

    async def bench(ctx):
        # Two edges an access, as with the target alone: strobe, then ack.
        assert await _access(ctx, arbiter.cpu, 3, 0x1234) == (0, 2)
        assert await _access(ctx, arbiter.dma, 3) == (0x1234, 2)    # handed over at once
        assert await _access(ctx, arbiter.dma, 4, 0x55) == (0, 2)
        assert await _access(ctx, arbiter.cpu, 4) == (0x55, 2)
        assert ctx.get(arbiter.dma.err) == 0

    _run(m, bench)


def test_arbiter_lets_the_owner_keep_the_bus_while_it_holds_cyc():
    """The DMA holds cyc over three accesses: the CPU, asking meanwhile, waits for it to drop
    cyc and then gets the bus in that same cycle."""
    m, arbiter = _system()
    log = []

    async def dma(ctx):
        for word in range(3):
            _, edges = await _access(ctx, arbiter.dma, word, 10 + word, keep=word < 2)
            log.append(("dma", word, edges))

    async def cpu(ctx):
        await ctx.tick()                       # the DMA asks first
        data, edges = await _access(ctx, arbiter.cpu, 1)
        log.append(("cpu", data, edges))

    _run(m, dma, cpu)
    # The DMA's three accesses end on edges 2, 4 and 6 (its own pace); the CPU, asking from
    # edge 1, is granted in the cycle after edge 6 where the DMA has dropped cyc, and its access
    # ends two edges later: 7 edges from its strobe.
    assert log == [("dma", 0, 2), ("dma", 1, 2), ("dma", 2, 2), ("cpu", 11, 7)]


def test_arbiter_takes_turns_when_both_keep_asking():
    """Round robin: after the CPU's access, the waiting DMA goes first, and the other way (each
    drops cyc for a cycle between accesses, as PicoRV32 does)."""
    m, arbiter = _system()
    order = []

    async def cpu(ctx):
        for word in range(3):
            await _access(ctx, arbiter.cpu, word, word)
            order.append("cpu")
            await ctx.tick()

    async def dma(ctx):
        for word in range(3):
            await _access(ctx, arbiter.dma, 8 + word, word)
            order.append("dma")
            await ctx.tick()

    _run(m, cpu, dma)
    assert order == ["cpu", "dma"] * 3


def test_arbiter_hands_no_stray_ack_to_the_next_owner():
    """The DMA drops cyc before its ack (as CTRL.CLEAR makes it): the ack its strobe leaves in
    flight reaches nobody, the CPU gets the bus an edge later and its read is its own."""
    m, arbiter = _system()

    async def bench(ctx):
        await _access(ctx, arbiter.cpu, 2, 0xabcd)
        ctx.set(arbiter.dma.adr, 5)
        ctx.set(arbiter.dma.cyc, 1)
        ctx.set(arbiter.dma.stb, 1)
        await ctx.tick()                            # the target takes the DMA's strobe
        ctx.set(arbiter.dma.cyc, 0)                 # abandoned before the ack
        ctx.set(arbiter.dma.stb, 0)
        ctx.set(arbiter.cpu.adr, 2)
        ctx.set(arbiter.cpu.we, 0)
        ctx.set(arbiter.cpu.cyc, 1)
        ctx.set(arbiter.cpu.stb, 1)
        assert ctx.get(arbiter.bus.ack) == 1        # the stray ack ...
        assert ctx.get(arbiter.cpu.ack) == 0        # ... is not the CPU's
        assert ctx.get(arbiter.bus.cyc) == 0        # and the bus rests for that cycle
        await ctx.tick()
        assert ctx.get(arbiter.bus.cyc) == 1 and ctx.get(arbiter.cpu.ack) == 0
        await ctx.tick()
        assert ctx.get(arbiter.cpu.ack) == 1 and ctx.get(arbiter.cpu.dat_r) == 0xabcd

    _run(m, bench)


def test_arbiter_ack_does_not_follow_cyc_combinationally():
    """An initiator's ack goes to the owner of the last edge: raising the other's cyc in the
    cycle changes where the bus's ack goes only from the next edge."""
    arbiter = WishboneArbiter()

    async def bench(ctx):
        ctx.set(arbiter.bus.ack, 1)
        assert (ctx.get(arbiter.cpu.ack), ctx.get(arbiter.dma.ack)) == (1, 0)
        ctx.set(arbiter.dma.cyc, 1)
        assert ctx.get(arbiter.bus.cyc) == 1        # the DMA is granted in the cycle ...
        assert (ctx.get(arbiter.cpu.ack), ctx.get(arbiter.dma.ack)) == (1, 0)
        ctx.set(arbiter.bus.ack, 0)
        await ctx.tick()                            # ... and owns the bus from the edge
        ctx.set(arbiter.bus.ack, 1)
        assert (ctx.get(arbiter.cpu.ack), ctx.get(arbiter.dma.ack)) == (0, 1)

    _run(arbiter, bench)


def test_soc_puts_the_arbiter_in_only_with_a_dma():
    plain = CipherSoC(parse_target("wishbone:aes-bram-128").build(), ram_bytes=1024,
                      clock_hz=1, uart_divisor=1)
    with_dma = CipherSoC(parse_target("wishbone-dma:aes-bram-128").build(), ram_bytes=1024,
                         clock_hz=1, uart_divisor=1)
    assert plain.arbiter is None and isinstance(with_dma.arbiter, WishboneArbiter)
    for soc in (plain, with_dma):       # both elaborate (and nothing built is left unused)
        Fragment.get(soc, None)


# --- the flow ----------------------------------------------------------------------------------

def test_presets_put_the_dma_on_the_ecp5_boards_only():
    assert {name: preset.dma for name, preset in SOC_BOARDS.items()} == {
        "icebreaker": False, "ice40-hx8k": False, "ulx3s-85f": True, "orangecrab-25f": True}


def test_dma_benchmarks_are_parsed_apart_and_shown_beside_the_cpu_driven_ones():
    text = ("BENCH CBC-encrypt 32 blocks 9949 cycles 310.9 cycles/block\n"
            "BENCH CTR-encrypt 32 blocks 9600 cycles 300.0 cycles/block\n"
            "BENCH DMA-CBC-encrypt 32 blocks 700 cycles 21.9 cycles/block\n"
            "BENCH DMA-CTR-encrypt 32 blocks 600 cycles 18.8 cycles/block\n"
            "SUMMARY X: 3/3 passed; CBC 310.9 cycles/block; PASS\n")
    figures = parse_selftest_output(text)
    assert figures["cycles_per_block"] == {"CBC-encrypt": 310.9, "CTR-encrypt": 300.0}
    assert figures["dma_cycles_per_block"] == {"CBC-encrypt": 21.9, "CTR-encrypt": 18.8}
    without = parse_selftest_output(text.replace("BENCH DMA", "# "))
    assert without["dma_cycles_per_block"] == {}
    board = {"title": "B", "device": "D", "isa": "rv32imc", "interrupts": True,
             "ram_bytes": 4096, "variant": "full", "fit": False, "reason": "no"}
    report = {"boards": [dict(board, core="aes-128", dma=True, cycles=figures),
                         dict(board, core="aes-bram-128", dma=False, cycles=without)]}
    table = soc_markdown(report)
    assert "| DMA CBC-encrypt | DMA CTR-encrypt |" in table
    assert "| 310.9 | 300.0 | 21.9 | 18.8 |" in table
    assert "| 310.9 | 300.0 | - | - |" in table


def test_dma_with_gcm_is_refused_in_one_line(capsys):
    code, _, err = run_cli(capsys, "soc", "simulate", "--core", "aes-128", "--gcm", "--dma")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "--dma and --gcm" in err


# --- the whole system in the compiled simulator ------------------------------------------------

def test_selftest_passes_through_the_dma(capsys):
    """The self-test on an SoC whose peripheral has a DMA: the known answers pass through the
    DMA as through the CPU, a misaligned buffer is refused, the DONE interrupt ends a DMA
    message, and the cycles per block through the DMA are measured. (The small self-test:
    FIPS-197 and CBC; the full one, every mode through the DMA, takes 10 s more.)"""
    code, out, err = run_cli(capsys, "soc", "simulate", "--core", "aes-bram-128", "--dma",
                             "--variant", "small", "-q")
    assert code == 0, err
    lines = out.splitlines()
    through_dma = [line for line in lines if line.startswith(("PASS DMA", "FAIL DMA"))]
    assert all(line.startswith("PASS") for line in through_dma), out
    assert {"PASS DMA FIPS-197 Appendix C.1 encrypt", "PASS DMA FIPS-197 Appendix C.1 decrypt",
            "PASS DMA CBCMMT128.rsp ENCRYPT COUNT=1", "PASS DMA CBCMMT128.rsp DECRYPT COUNT=1",
            "PASS DMA: a buffer that is not word-aligned is refused",
            "PASS DMA interrupt: DONE signals the results in RAM"} <= set(through_dma), out
    figures = parse_selftest_output(out)
    assert set(figures["dma_cycles_per_block"]) == {"CBC-encrypt", "CTR-encrypt"}
    # The DMA's pace is the core's (83 edges a block for the block-RAM AES), not the CPU's.
    for mode, cycles in figures["dma_cycles_per_block"].items():
        assert 83 <= cycles < figures["cycles_per_block"][mode], (mode, figures)
    assert lines[-1].startswith("SUMMARY ") and lines[-1].endswith("; PASS")
