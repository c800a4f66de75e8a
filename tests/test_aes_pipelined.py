# amaranth: UnusedElaboratable=no
"""The pipelined AES core: FIPS-197 Appendix C, the NIST AESAVS ECB files (compiled simulation),
differential tests against pycryptodome with key changes, gaps and back-pressure, one block per
clock, key handling and reset; its table and key-expansion plan; its ECP5 form simulated with a
model of the ``DP16KD``, and its floorplan. The stream contract is checked in
``tests/test_contract.py``."""

import random

import pytest
from amaranth.hdl import Fragment

from cipher_cores.cores.aes import PipelinedAES
from cipher_cores.cores.aes.gf import gf_mul
from cipher_cores.cores import fpga
from cipher_cores.cores.aes.pipelined import LOOKUP_TABLE, SUB_WORD_CYCLES, key_expansion_plan
from cipher_cores.cores.aes.sbox import SBOX
from cipher_cores.cores.aes.transforms import KEY_WORDS, ROUNDS, key_word_kind, rcon
from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_C
from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature

from .support.helpers import (LoadKey, Process, aes_oracle, check_idle_without_key,
                              check_key_load_cycles, ecb_encryptions, encrypt_only_operations,
                              key_groups, pulse_reset, run_testbench,
                              simulate_cipher, stream_get, stream_put)
from .support.nist import aesavs_ecb_vectors
from .support.cell_models import SimulationPlatform


KEY_SIZES = (128, 192, 256)
AESAVS_KINDS = ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")


def pipelined_config(key_bits=128):
    return get_core("aes-pipelined").config(key_bits)




# Constructor, parameters and figures.

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_interface(key_bits):
    assert PipelinedAES(key_bits).signature == BlockCipherSignature(128, key_bits)


def test_default_parameters():
    core = PipelinedAES()
    assert (core.key_bits, core.decrypts, core.rounds, core.stages, core.spares) == \
        (128, False, 10, 34, 4)


@pytest.mark.parametrize("key_bits, latency, key_load", [(128, 34, 63), (192, 40, 65),
                                                         (256, 47, 81)])
def test_cycle_figures(key_bits, latency, key_load):
    core = PipelinedAES(key_bits)
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == \
        (latency, 1, key_load)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_bits": 64}, ValueError, r"^key_bits must be 128, 192 or 256, not 64$"),
    ({"key_bits": "128"}, TypeError,
     r"^key_bits must be an integer \(128, 192 or 256\), not '128'$"),
    ({"decrypt": 0}, TypeError, r"^decrypt must be a bool \(True or False\), not 0$"),
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
    operations = encrypt_only_operations(rng, 128, keys=3, transfers_per_key=12)
    run = simulate_cipher(PipelinedAES(128), operations, rng=rng, max_gap=2, max_stall=4)
    assert run.results == ecb_encryptions(operations, 128)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])
    assert max(run.latencies) > PipelinedAES(128).latency     # back-pressure did delay results


@pytest.mark.parametrize("key_bits", [
    128, pytest.param(192, marks=pytest.mark.slow), pytest.param(256, marks=pytest.mark.slow)])
def test_long_random_run_with_stalls_matches_pycryptodome(key_bits):
    """Compiled: 16 keys of 200 blocks, random gaps and back-pressure."""
    rng = random.Random(f"pipelined-sweep-{key_bits}")
    operations = encrypt_only_operations(rng, key_bits, keys=16, transfers_per_key=200)
    run = simulate_cipher(PipelinedAES(key_bits), operations, rng=rng, max_gap=2, max_stall=6,
                          backend="cxxrtl")
    assert run.results == ecb_encryptions(operations, key_bits)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])


# Cycle behaviour.

@pytest.fixture(scope="module")
def full_speed_run():
    """AES-128 at full speed: three keys, 40 blocks each, compiled."""
    core = PipelinedAES(128)
    operations = encrypt_only_operations(random.Random("full-speed"), 128, keys=3,
                                         transfers_per_key=40)
    return core, operations, simulate_cipher(core, operations, backend="cxxrtl")


def test_one_block_per_edge_at_the_stated_latency(full_speed_run):
    core, operations, run = full_speed_run
    assert run.results == ecb_encryptions(operations, 128)
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
        assert taken == core.stages + core.spares     # every stage, and every spare register
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


# The ECP5 form: DP16KD instances (simulated, tests/support/cell_models.py) and their sites.

class DeviceForm(PipelinedAES):
    """The core as it is built for ``platform`` (a
    :class:`~tests.support.cell_models.SimulationPlatform`), every submodule elaborated for it."""
    def __init__(self, key_bits, platform):
        self.platform = platform
        super().__init__(key_bits)

    def elaborate(self, platform):
        return Fragment.get(super().elaborate(self.platform), self.platform)


def test_ecp5_85f_form_with_a_model_of_dp16kd():
    """FIPS-197 and random blocks with key changes, gaps and back-pressure through the 82
    DP16KD instances, each placed at a site of the floorplan."""
    vector = FIPS197_APPENDIX_C[0]
    rng = random.Random("ecp5-85f")
    operations = [LoadKey(vector.key), Process(vector.plaintext)]
    operations += encrypt_only_operations(rng, 128, keys=2, transfers_per_key=8)
    platform = SimulationPlatform("ecp5", "LFE5U-85F")
    run = simulate_cipher(DeviceForm(128, platform), operations, rng=rng, max_gap=2,
                          max_stall=6)
    assert run.results == ecb_encryptions(operations, 128)
    assert run.results[0] == vector.ciphertext
    assert platform.count("DP16KD") == len(platform.cells) == 82
    plan = fpga.floorplan(platform, "aes.pipelined")
    assert sorted(platform.sites) == sorted(plan.sites("rams", 82))


def test_on_other_ecp5_devices_nextpnr_places_the_dp16kd():
    platform = SimulationPlatform("ecp5", "LFE5U-25F")
    Fragment.get(DeviceForm(128, platform), None)
    assert platform.sites == [None] * 82


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_block_rams_are_eight_a_round_and_two_for_the_key(key_bits):
    assert PipelinedAES(key_bits).block_rams == 8 * ROUNDS[key_bits] + 2


def test_floorplan_snakes_along_the_ram_rows():
    plan = fpga.floorplan(SimulationPlatform("ecp5", "LFE5U-85F"), "aes.pipelined")
    sites = plan.sites("rams")
    assert len(set(sites)) == 192
    with pytest.raises(ValueError, match=r"^the floorplan has 192 block RAM sites, not 193$"):
        plan.sites("rams", 193)
    position = [tuple(int(part[1:]) for part in site.split("/")[:2]) for site in sites]
    # Row 82 left to right, then row 70 right to left, ...: one row every 48 sites, and every
    # site a neighbour of the one before in its row.
    for index, row in enumerate((82, 70, 46, 22)):
        run = position[48 * index:48 * (index + 1)]
        assert {y for _, y in run} == {row}
        steps = [b[0] - a[0] for a, b in zip(run, run[1:])]
        assert all(0 < abs(step) <= 5 for step in steps)
        assert all((step > 0) == (index % 2 == 0) for step in steps)
