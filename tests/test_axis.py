# amaranth: UnusedElaboratable=no
"""The AXI4-Stream form of the cipher cores (:mod:`cipher_cores.cores.axis`): the printed
vectors through the byte-swapped channels, random traffic against the reference models with
``tlast`` kept, key changes, encrypt-only cores, the cycle figures of the bare core, the ``tlast``
FIFO under back-pressure, the reset, argument checks and the ports of :func:`axis_top`."""

import random
import re

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Fragment
from amaranth.sim import Simulator

from cipher_cores.cores.axis import AXIStreamCipher, axis_top, tlast_depth
from cipher_cores.cores.catalog import catalog, configurations, parse_config
from cipher_cores.cores.flat_top import FlatTop
from cipher_cores.cores.sim import LoadKey, Process, simulate_cipher

from .support.axis import (Block, Key, expected_axis, from_axis, random_items, run_axis,
                           to_axis)
from .support.helpers import is_masked, vector_operations
from .support.toy_cipher import ToyCipher


def _vector_items(config) -> list:
    """The printed vectors (FIPS-197, the PRESENT paper) of ``config`` as :class:`Key` and
    :class:`Block` items, each block encrypted and decrypted, ``tlast`` on every other block."""
    items = []
    for op in vector_operations(config):
        if isinstance(op, LoadKey):
            items.append(Key(op.key))
        else:
            items.append(Block(op.block, op.decrypt, len(items) % 2 == 1))
    return items


# A masked core is left out: AXIStreamCipher cannot feed its random stream yet, and refuses it
# (tests/test_masked_consumers.py).
DEFAULTS = [pytest.param(entry.config(), id=entry.config().text)
            for entry in catalog().values() if not is_masked(entry.config())]


@pytest.mark.parametrize("config", DEFAULTS)
def test_printed_vectors_both_directions_through_the_byte_swapped_channels(config):
    items = _vector_items(config)
    assert any(item.decrypt for item in items if isinstance(item, Block))
    log = run_axis(AXIStreamCipher(config.build()), items)
    assert log.result_values(config.block_bits) == expected_axis(config, items)
    # The printed answers themselves, in the order vector_operations puts their blocks.
    vectors = config.vectors()
    printed = [vector for key in dict.fromkeys(vector.key for vector in vectors)
               for vector in vectors if vector.key == key]
    values = [value for value, _ in log.result_values(config.block_bits)]
    assert values[0::2] == [vector.ciphertext for vector in printed]
    if config.decrypts:         # an encrypt-only core encrypts the ciphertext too
        assert values[1::2] == [vector.plaintext for vector in printed]
    assert log.violations == []


def test_fips197_bytes_go_in_axi_lane_order():
    # FIPS-197 Appendix C.1 as printed: byte 0 of each sequence in byte lane 0 (tdata[7:0]).
    key = bytes.fromhex("000102030405060708090a0b0c0d0e0f")
    plaintext = bytes.fromhex("00112233445566778899aabbccddeeff")
    ciphertext = bytes.fromhex("69c4e0d86a7b0430d8cdb78070b4c55a")
    dut = AXIStreamCipher(parse_config("aes-128").build())
    results = []

    async def testbench(ctx):
        ctx.set(dut.s_axis_key_tdata, int.from_bytes(key, "little"))
        ctx.set(dut.s_axis_key_tvalid, 1)
        await ctx.tick().until(dut.s_axis_key_tready)
        ctx.set(dut.s_axis_key_tvalid, 0)
        for data, decrypt in ((plaintext, 0), (ciphertext, 1)):
            ctx.set(dut.s_axis_tdata, int.from_bytes(data, "little"))
            ctx.set(dut.s_axis_tuser, decrypt)
            ctx.set(dut.s_axis_tvalid, 1)
            await ctx.tick().until(dut.s_axis_tready)
            ctx.set(dut.s_axis_tvalid, 0)
            ctx.set(dut.m_axis_tready, 1)
            tdata, = await ctx.tick().sample(dut.m_axis_tdata).until(dut.m_axis_tvalid)
            ctx.set(dut.m_axis_tready, 0)
            results.append(tdata.to_bytes(16, "little"))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    assert results == [ciphertext, plaintext]
    assert results[0][0] == 0x69


def test_present_block_goes_in_most_significant_byte_first():
    # The PRESENT paper's vector: key 0, plaintext all ones, ciphertext a112ffc72f68417b.
    config = parse_config("present-80")
    items = [Key(0), Block(0xffffffffffffffff), Block(0xa112ffc72f68417b, True)]
    log = run_axis(AXIStreamCipher(config.build()), items)
    assert [tdata for _, tdata, _ in log.results] == [0x7b41682fc7ff12a1, 0xffffffffffffffff]
    assert log.results[0][1] & 0xff == 0xa1      # b63..b56 in tdata[7:0]


def _random_run(config, *, seed: int, keys: int, blocks_per_key: int, slow_blocks: int):
    """Random traffic on ``config``; ``slow_blocks`` blocks a key instead of
    ``blocks_per_key`` for the serial and block-RAM PRESENT cores (hundreds to thousands of
    edges a block)."""
    core = config.build()
    rng = random.Random(seed)
    items = random_items(config, rng, keys=keys,
                         blocks_per_key=blocks_per_key if core.latency < 200 else slow_blocks)
    log = run_axis(AXIStreamCipher(core), items, rng=rng, max_gap=3, ready_probability=0.4)
    assert log.result_values(config.block_bits) == expected_axis(config, items)
    assert [bool(last) for _, _, _, last in log.blocks] == \
        [item.last for item in items if isinstance(item, Block)]
    assert log.violations == []
    return log


@pytest.mark.parametrize("config", DEFAULTS)
def test_random_traffic_matches_the_model_and_keeps_tlast(config):
    _random_run(config, seed=26, keys=2, blocks_per_key=3, slow_blocks=1)


@pytest.mark.slow
@pytest.mark.parametrize("config", [pytest.param(config, id=config.text)
                                    for config in configurations() if not is_masked(config)])
def test_random_traffic_on_every_configuration(config):
    _random_run(config, seed=2026, keys=3, blocks_per_key=8, slow_blocks=2)


@pytest.mark.parametrize("text", ["aes-128", "present-80"])
def test_key_change_between_blocks(text):
    config = parse_config(text)
    rng = random.Random(7)
    key_a, key_b = rng.getrandbits(config.key_bits), rng.getrandbits(config.key_bits)
    block = rng.getrandbits(config.block_bits)
    items = [Key(key_a), Block(block, last=True), Key(key_b), Block(block),
             Block(block, True), Key(key_a), Block(block, last=True)]
    log = run_axis(AXIStreamCipher(config.build()), items)
    results = log.result_values(config.block_bits)
    assert results == [(config.encrypt(key_a, block), 1), (config.encrypt(key_b, block), 0),
                       (config.decrypt(key_b, block), 0), (config.encrypt(key_a, block), 1)]
    assert results[0] != results[1]


@pytest.mark.parametrize("text", ["aes-128:decrypt=no", "present-80:decrypt=no"])
def test_encrypt_only_core_ignores_tuser(text):
    config = parse_config(text)
    rng = random.Random(3)
    key = rng.getrandbits(config.key_bits)
    blocks = [rng.getrandbits(config.block_bits) for _ in range(2)]
    items = [Key(key), Block(blocks[0], decrypt=True), Block(blocks[1], decrypt=False)]
    log = run_axis(AXIStreamCipher(config.build()), items)
    assert [value for value, _ in log.result_values(config.block_bits)] == \
        [config.encrypt(key, block) for block in blocks]
    assert log.result_values(config.block_bits)[0][0] != config.decrypt(key, blocks[0])


CYCLE_CONFIGS = ["aes-128", "aes-pipelined-128", "aes-ttable-128", "aes-compact-128",
                 "present-80:rounds_per_cycle=4", "present-pipelined-80", "aes-bram-128"]


@pytest.mark.parametrize("text", CYCLE_CONFIGS)
def test_cycles_per_block_and_latency_are_the_bare_cores(text):
    config = parse_config(text)
    core = config.build()
    rng = random.Random(5)
    key = rng.getrandbits(config.key_bits)
    blocks = [(rng.getrandbits(config.block_bits), index % 2 == 1) for index in range(6)]
    items = [Key(key)] + [Block(block, decrypt, index % 3 == 0)
                          for index, (block, decrypt) in enumerate(blocks)]
    dut = AXIStreamCipher(core)
    log = run_axis(dut, items)          # blocks back to back, m_axis_tready high
    assert log.result_values(config.block_bits) == expected_axis(config, items)
    assert log.input_intervals == [core.initiation_interval] * 5
    assert log.output_intervals == [core.initiation_interval] * 5
    assert log.latencies == [core.latency] * 6
    assert log.blocks[0][0] - log.keys[0][0] == core.key_load_cycles
    # The bare core, simulated on the same operations, transfers on the very same edges.
    bare = simulate_cipher(config.build(), [LoadKey(key)] +
                           [Process(block, decrypt) for block, decrypt in blocks])
    assert [edge for edge, *_ in log.keys] == bare.key.edges
    assert [edge for edge, *_ in log.blocks] == bare.input.edges
    assert [edge for edge, *_ in log.results] == bare.output.edges


@pytest.mark.slow
def test_cycles_per_block_and_latency_of_the_serial_core():
    test_cycles_per_block_and_latency_are_the_bare_cores("present-serial-80")


@pytest.mark.parametrize("text, depth", [("aes-128", 2), ("aes-bram-128", 1),
                                         ("aes-ttable-128", 4), ("aes-pipelined-128", 35),
                                         ("present-pipelined-80", 33)])
def test_tlast_fifo_depth_from_latency_and_interval(text, depth):
    core = parse_config(text).build()
    dut = AXIStreamCipher(core)
    Fragment.get(dut, None)         # elaborated, so that Amaranth does not warn it went unused
    assert tlast_depth(core) == depth == dut.tlast_depth
    assert depth == core.latency // core.initiation_interval + 1


def test_full_tlast_fifo_holds_tready_low():
    # With its results held back, the pipelined AES core would take 37 blocks, more than the
    # 35 entries of the FIFO: the FIFO, full, stops the blocks, and every tlast is kept.
    config = parse_config("aes-pipelined-128")
    rng = random.Random(11)
    items = random_items(config, rng, keys=1, blocks_per_key=45)
    dut = AXIStreamCipher(config.build())
    log = run_axis(dut, items, rng=rng, stall_edges=120)
    assert log.max_in_flight == dut.tlast_depth == 35
    assert log.result_values(config.block_bits) == expected_axis(config, items)
    assert log.violations == []


def test_aresetn_empties_the_core_and_the_tlast_fifo():
    config = parse_config("present-80")
    top = axis_top(config.build())
    key, block = 0x0123456789abcdef0123, 0xfedcba9876543210
    seen = {}

    async def clock(ctx):
        while True:
            ctx.set(top.aclk, 0)
            await ctx.delay(5e-9)
            ctx.set(top.aclk, 1)
            await ctx.delay(5e-9)

    async def put(ctx, valid, ready, assignments):
        for signal, value in assignments:
            ctx.set(signal, value)
        ctx.set(valid, 1)
        await ctx.tick().until(ready)
        ctx.set(valid, 0)

    async def testbench(ctx):
        ctx.set(top.aresetn, 1)
        key_data = [(top.s_axis_key_tdata, to_axis(key, 80))]
        await put(ctx, top.s_axis_key_tvalid, top.s_axis_key_tready, key_data)
        await put(ctx, top.s_axis_tvalid, top.s_axis_tready,
                  [(top.s_axis_tdata, to_axis(block, 64)), (top.s_axis_tlast, 1)])
        await ctx.tick().until(top.m_axis_tvalid)       # the result waits, tlast 1 beside it
        seen["tlast before reset"] = ctx.get(top.m_axis_tlast)
        ctx.set(top.aresetn, 0)
        await ctx.tick()
        ctx.set(top.aresetn, 1)
        seen["after reset"] = (ctx.get(top.m_axis_tvalid), ctx.get(top.s_axis_tready),
                               ctx.get(top.s_axis_key_tready))
        await put(ctx, top.s_axis_key_tvalid, top.s_axis_key_tready, key_data)
        await put(ctx, top.s_axis_tvalid, top.s_axis_tready,
                  [(top.s_axis_tdata, to_axis(block, 64)), (top.s_axis_tlast, 0)])
        ctx.set(top.m_axis_tready, 1)
        tdata, tlast = await ctx.tick().sample(top.m_axis_tdata,
                                               top.m_axis_tlast).until(top.m_axis_tvalid)
        seen["result"] = (from_axis(tdata, 64), tlast)

    sim = Simulator(top)
    sim.add_testbench(clock, background=True)
    sim.add_testbench(testbench)
    sim.run()
    assert seen["tlast before reset"] == 1
    assert seen["after reset"] == (0, 0, 1)         # no result, no key, ready for a key
    assert seen["result"] == (config.encrypt(key, block), 0)


@pytest.mark.parametrize("bad", [None, "aes-128", ToyCipher, FlatTop])
def test_non_core_argument_raises_type_error(bad):
    message = re.escape(f"core must be a BlockCipher (a cipher core of this library), "
                        f"not {bad!r}")
    with pytest.raises(TypeError, match=message):
        AXIStreamCipher(bad)
    with pytest.raises(TypeError, match=message):
        axis_top(bad)


def test_block_width_not_whole_bytes_raises_value_error():
    with pytest.raises(ValueError, match=r"^the core's block_bits must be a multiple of 8 for "
                                         r"AXI4-Stream byte lanes, not 60$"):
        AXIStreamCipher(ToyCipher(block_bits=60, key_bits=80))
    with pytest.raises(ValueError, match=r"^the core's key_bits must be a multiple of 8 for "
                                         r"AXI4-Stream byte lanes, not 84$"):
        AXIStreamCipher(ToyCipher(block_bits=64, key_bits=84))


def _rtlil_ports(text: str, module: str = "top") -> dict:
    """``{name: (direction, width)}`` of the ports of ``module`` in RTLIL ``text``."""
    body = text.split(f"module \\{module}\n", 1)[1].split("\nend\n", 1)[0]
    ports = {}
    for match in re.finditer(r"^\s*wire width (\d+) (input|output) \d+\s+\\(\S+)$", body,
                             re.MULTILINE):
        width, direction, name = match.groups()
        ports[name] = (direction, int(width))
    return ports


@pytest.mark.parametrize("text", ["aes-256", "present-80"])
def test_axis_top_ports_in_rtlil(text):
    core = parse_config(text).build()
    ports = _rtlil_ports(rtlil.convert(axis_top(core), name="top"))
    block, key = core.block_bits, core.key_bits
    assert ports == {
        "aclk": ("input", 1), "aresetn": ("input", 1),
        "s_axis_key_tdata": ("input", key), "s_axis_key_tvalid": ("input", 1),
        "s_axis_key_tready": ("output", 1),
        "s_axis_tdata": ("input", block), "s_axis_tuser": ("input", 1),
        "s_axis_tlast": ("input", 1), "s_axis_tvalid": ("input", 1),
        "s_axis_tready": ("output", 1),
        "m_axis_tdata": ("output", block), "m_axis_tlast": ("output", 1),
        "m_axis_tvalid": ("output", 1), "m_axis_tready": ("input", 1),
    }
