# amaranth: UnusedElaboratable=no
"""The AXI4-Lite form of the peripheral: the bridge alone (against a Wishbone target with wait
states and errors, driven by a manager whose five channels move independently), and the
peripheral on AXI4-Lite driven as firmware would (every mode against the models, SLVERR where
the register map flags an access, the same edges per block as on Wishbone), and its exported
port names."""

import random

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Fragment, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In
from Crypto.Cipher import AES as PyAES

from cipher_cores.cores.aes import AES
from cipher_cores.cores.bus import (AXI4LiteSignature, AXI4LiteToWishbone, CipherPeripheral,
                                    WishboneSignature, axi_top)
from cipher_cores.cores.bus.axi import OKAY, SLVERR
from cipher_cores.cores.bus.regmap import register
from cipher_cores.cores.bus.sim import AXI4LiteFirmware, simulate_firmware, stream_message
from cipher_cores.cores.modes import Mode
from cipher_cores.cores.modes.reference import process_message
from cipher_cores.cores.present import PRESENT

from .support.bus_components import simulate
from .support.peripheral import bit


# The bridge alone --------------------------------------------------------------------------

class _Target(wiring.Component):
    """A Wishbone target for the bridge: 16 words of memory, ``wait`` edges before each answer
    (``ack``, or ``err`` for word 15, which holds nothing)."""
    def __init__(self, wait: int):
        self._wait = wait
        super().__init__({"bus": In(WishboneSignature(addr_width=6, features={"err"}))})

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        words = [Signal(32, name=f"word{i}") for i in range(16)]
        count = Signal(range(self._wait + 2))
        answer = Signal()
        m.d.comb += answer.eq(bus.cyc & bus.stb & (count == self._wait))
        with m.If(bus.cyc & bus.stb):
            m.d.sync += count.eq(count + 1)
            with m.If(answer):
                m.d.sync += count.eq(0)
        refused = bus.adr[:4] == 15
        m.d.comb += [bus.ack.eq(answer & ~refused), bus.err.eq(answer & refused)]
        for index, word in enumerate(words):
            with m.If(answer & bus.we & (bus.adr[:4] == index)):
                for lane in range(4):
                    with m.If(bus.sel[lane]):
                        m.d.sync += word[8 * lane:8 * lane + 8].eq(bus.dat_w[8 * lane:8 * lane + 8])
            with m.If(bus.adr[:4] == index):
                m.d.comb += bus.dat_r.eq(word)
        return m


class _BridgeBench(wiring.Component):
    def __init__(self, wait):
        self.bridge = AXI4LiteToWishbone(addr_width=6)
        self.target = _Target(wait)
        super().__init__({"axi": In(AXI4LiteSignature(addr_width=8))})

    def elaborate(self, platform):
        m = Module()
        m.submodules.bridge, m.submodules.target = self.bridge, self.target
        wiring.connect(m, wiring.flipped(self.axi), self.bridge.axi)
        wiring.connect(m, self.bridge.wishbone, self.target.bus)
        return m


async def _random_wait(ctx, rng, most):
    for _ in range(rng.randrange(most + 1)):
        await ctx.tick()


def _manager(dut, seed, writes, reads, log):
    """Testbenches for the five channels of a manager, each with its own random pauses:
    ``writes`` are ``(address, data, strobes)``, ``reads`` addresses; ``log`` gets the write
    responses and the read data and responses in order, and the edges of each transfer."""
    axi = dut.axi

    async def send(ctx, channel, items, fields):
        rng = random.Random(f"{seed}-{channel}")
        for item in items:
            await _random_wait(ctx, rng, 3)
            for name, value in zip(fields, item):
                ctx.set(getattr(axi, name), value)
            ctx.set(getattr(axi, channel + "valid"), 1)
            # AXI: once valid, the payload holds until the transfer.
            await ctx.tick().until(getattr(axi, channel + "ready"))
            ctx.set(getattr(axi, channel + "valid"), 0)

    async def receive(ctx, channel, count, fields):
        rng = random.Random(f"{seed}-{channel}")
        for _ in range(count):
            await _random_wait(ctx, rng, 3)
            ctx.set(getattr(axi, channel + "ready"), 1)
            *values, = await ctx.tick().sample(*(getattr(axi, f) for f in fields)).until(
                getattr(axi, channel + "valid"))
            ctx.set(getattr(axi, channel + "ready"), 0)
            log[channel].append(tuple(values))

    def bench(function, *args):
        async def run(ctx):
            await function(ctx, *args)
        return run

    return [
        bench(send, "aw", [(a,) for a, _, _ in writes], ["awaddr"]),
        bench(send, "w", [(d, s) for _, d, s in writes], ["wdata", "wstrb"]),
        bench(send, "ar", [(a,) for a in reads], ["araddr"]),
        bench(receive, "b", len(writes), ["bresp"]),
        bench(receive, "r", len(reads), ["rdata", "rresp"]),
    ]


@pytest.mark.parametrize("wait", [1, 3])
@pytest.mark.parametrize("seed", range(3))
def test_the_bridge_moves_every_access_with_its_response_whatever_the_channel_timing(wait, seed):
    """Writes with any byte strobes, then reads of every word (and of the refused word 15),
    each channel pausing at random: the data read is what was written, SLVERR exactly for the
    target's ``err``, responses in order."""
    rng = random.Random(seed)
    memory = [0] * 16
    writes = []
    for _ in range(20):
        word, data, strobes = rng.randrange(16), rng.getrandbits(32), rng.randrange(1, 16)
        writes.append((4 * word + rng.randrange(4), data, strobes))   # low bits ignored
        if word != 15:
            for lane in range(4):
                if strobes >> lane & 1:
                    mask = 0xff << (8 * lane)
                    memory[word] = (memory[word] & ~mask) | (data & mask)
    dut = _BridgeBench(wait)
    log = {"b": [], "r": []}
    simulate(dut, *_manager(dut, seed, writes, [], log))
    assert log["b"] == [(SLVERR if address // 4 == 15 else OKAY,) for address, _, _ in writes]
    # A second run: the same writes, then reads of every word, the read channels' own
    # benches starting with the writes.
    dut = _BridgeBench(wait)
    log = {"b": [], "r": []}
    write_benches = _manager(dut, seed, writes, [], log)
    read_benches = _manager(dut, seed + 100, [], [4 * word for word in range(16)], log)

    async def addresses_after_the_writes(ctx):
        while len(log["b"]) < len(writes):
            await ctx.tick()
        await read_benches[2](ctx)
    simulate(dut, *write_benches, addresses_after_the_writes, read_benches[4])
    assert [value for value, _ in log["r"][:15]] == memory[:15]
    assert [response for _, response in log["r"]] == [OKAY] * 15 + [SLVERR]


def test_reads_and_writes_offered_together_alternate():
    """A read and a write waiting on every edge: the bridge serves them in turn, and every
    access takes two edges (address transfer to the next address transfer) with this target."""
    dut = _BridgeBench(1)
    edges = {"aw": [], "ar": []}
    count = 6

    def channel(name, fields):
        async def bench(ctx):
            axi = dut.axi
            for index in range(count):
                for field_name, value in fields(index):
                    ctx.set(getattr(axi, field_name), value)
                ctx.set(getattr(axi, name + "valid"), 1)
                if name == "aw":
                    ctx.set(axi.wvalid, 1)
                edge = 0
                while True:
                    edge += 1
                    _, _, ready = await ctx.tick().sample(getattr(axi, name + "ready"))
                    if ready:
                        break
                edges[name].append(edge)
            ctx.set(getattr(axi, name + "valid"), 0)
            ctx.set(axi.wvalid, 0)
        return bench

    async def responses(ctx):
        ctx.set(dut.axi.bready, 1)
        ctx.set(dut.axi.rready, 1)

    simulate(dut, responses,
             channel("aw", lambda i: [("awaddr", 4 * i), ("wdata", i), ("wstrb", 0b1111)]),
             channel("ar", lambda i: [("araddr", 4 * i)]))
    # Each address waits two edges for its turn after the first: the two alternate, one
    # access every two edges.
    assert edges["aw"][1:] == [4] * (count - 1)
    assert edges["ar"][1:] == [4] * (count - 1)


def test_the_bridge_refuses_what_it_cannot_build():
    with pytest.raises(ValueError, match="data_width"):
        AXI4LiteSignature(addr_width=8, data_width=16)
    with pytest.raises(TypeError, match="addr_width"):
        AXI4LiteSignature(addr_width=0)


# The peripheral on AXI4-Lite ---------------------------------------------------------------

def _aes(key):
    return lambda block: int.from_bytes(PyAES.new(key, PyAES.MODE_ECB).encrypt(
        block.to_bytes(16, "big")), "big")


def _aes_inverse(key):
    return lambda block: int.from_bytes(PyAES.new(key, PyAES.MODE_ECB).decrypt(
        block.to_bytes(16, "big")), "big")


def test_every_mode_both_directions_through_axi4_lite_matches_the_models():
    rng = random.Random(26)
    key = rng.randbytes(16)
    dut = CipherPeripheral(AES(128), protocol="axi4-lite")

    async def program(fw):
        assert isinstance(fw, AXI4LiteFirmware)
        await fw.set_key(int.from_bytes(key, "big"), 128)
        for mode in Mode:
            for decrypt in (False, True):
                iv, blocks = rng.getrandbits(128), [rng.getrandbits(128) for _ in range(3)]
                want = process_message(mode.name, decrypt, _aes(key), _aes_inverse(key), iv,
                                       blocks, 128)
                assert await fw.message(mode, blocks, iv=iv, decrypt=decrypt) == want, \
                    (mode, decrypt)
        assert await fw.read("ERROR") == 0
        assert set(fw.responses) == {OKAY}
    simulate_firmware(dut, program)


def test_accesses_the_map_flags_answer_slverr_and_set_the_flag():
    """An unmapped read and write, a write to a read-only register and a refused write while
    busy each get SLVERR, and the flag is set as on Wishbone; good accesses get OKAY (a DOUT
    underflow is the data path's error, not the access's: OKAY, flag set)."""
    dut = CipherPeripheral(PRESENT(80, rounds_per_cycle=8), protocol="axi4-lite")

    async def program(fw):
        await fw.set_key(0x1234, 80)
        cases = [
            (0x28, None, "BAD_ADDRESS", SLVERR), (0x7c, 5, "BAD_ADDRESS", SLVERR),
            (register("KEY").offsets()[3], 5, "BAD_ADDRESS", SLVERR),   # beyond an 80-bit key
            (register("STATUS").offset, 1, "READ_ONLY", SLVERR),
            (register("DOUT").offset, None, "UNDERFLOW", OKAY),
        ]
        for address, value, flag, response in cases:
            await fw.access(address, value)
            assert fw.responses[-1] == response, (hex(address), flag)
            assert await fw.read("ERROR") == bit("ERROR", flag)
            await fw.write("ERROR", bit("ERROR", flag))
            assert fw.responses[-2:] == [OKAY, OKAY]
        # Busy: a message waiting for its blocks refuses a key write.
        await fw.start(Mode.ECB, length=2)
        await fw.write("KEY", 1)
        assert fw.responses[-1] == SLVERR
        assert await fw.read("ERROR") == bit("ERROR", "BUSY_WRITE")
    simulate_firmware(dut, program)


def test_axi4_lite_takes_the_same_edges_per_block_as_wishbone():
    """The issue's bound is two edges a block; the bridge adds none: the same result edges,
    latency and START-to-input as the Wishbone form, for a fast and a slow core."""
    rng = random.Random(3)
    blocks = [rng.getrandbits(128) for _ in range(10)]
    for core in (lambda: AES(128), lambda: AES(128, sbox="bram")):
        runs = [stream_message(CipherPeripheral(core(), protocol=protocol), key=7, key_bits=128,
                               mode=Mode.CTR, decrypt=False, iv=99, blocks=blocks)
                for protocol in ("wishbone", "axi4-lite")]
        wishbone, axi = runs
        assert axi.results == wishbone.results
        assert axi.result_edges == wishbone.result_edges
        assert (axi.latency, axi.start_to_input) == (wishbone.latency, wishbone.start_to_input)


def test_the_peripheral_refuses_a_protocol_it_does_not_speak():
    with pytest.raises(ValueError, match="protocol must be one of 'wishbone', 'axi4-lite'"):
        CipherPeripheral(AES(128), protocol="apb")
    with pytest.raises(ValueError, match="dma=True needs protocol='wishbone'"):
        CipherPeripheral(AES(128), protocol="axi4-lite", dma=True)
    wishbone = CipherPeripheral(AES(128))
    with pytest.raises(ValueError, match="axi_top takes"):
        axi_top(wishbone)
    Fragment.get(wishbone, None)        # built, so elaborated (no UnusedElaboratable)


def test_the_exported_top_has_xilinx_style_ports():
    top = axi_top(CipherPeripheral(AES(128), protocol="axi4-lite"))
    text = rtlil.convert(top, name="aes_axi")
    module = text[text.index("module \\aes_axi"):]
    module = module[:module.index("\nend\n")]
    widths = {"aclk": 1, "aresetn": 1, "s_axi_awaddr": 8, "s_axi_awprot": 3, "s_axi_awvalid": 1,
              "s_axi_awready": 1, "s_axi_wdata": 32, "s_axi_wstrb": 4, "s_axi_wvalid": 1,
              "s_axi_wready": 1, "s_axi_bresp": 2, "s_axi_bvalid": 1, "s_axi_bready": 1,
              "s_axi_araddr": 8, "s_axi_arprot": 3, "s_axi_arvalid": 1, "s_axi_arready": 1,
              "s_axi_rdata": 32, "s_axi_rresp": 2, "s_axi_rvalid": 1, "s_axi_rready": 1,
              "irq": 1}
    found = {}
    for line in module.splitlines():
        parts = line.split()
        if parts[:1] == ["wire"] and ("input" in parts or "output" in parts):
            width = int(parts[parts.index("width") + 1]) if "width" in parts else 1
            found[parts[-1].lstrip("\\")] = width
    assert found == widths
