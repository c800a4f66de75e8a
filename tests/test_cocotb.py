"""The exported Verilog under cocotb: the Wishbone peripheral, the AXI4-Lite peripheral and the
AXI4-Stream core, each exported through ``cipher-cores export`` and driven in Icarus Verilog by
the cocotb test modules of ``tests/cocotb/`` with the bus masters and stream models of
cocotbext-wishbone and cocotbext-axi, their results checked against pycryptodome and FIPS-197;
and the cocotb example of ``docs/verilog.md``, run as the page gives it.

Each pytest test runs one cocotb test (``tests.support.cocotb_run.run_cocotb``) on a build
made once per module and worker, and fails when that cocotb test fails. Icarus (Debian package
``iverilog``) is a requirement: without it these tests fail, saying so.
"""

from pathlib import Path

import pytest

from .support.cocotb_run import build, export_verilog, run_cocotb


ROOT = Path(__file__).parent.parent
SEED = 2026


@pytest.fixture(scope="module")
def wishbone(tmp_path_factory, icarus):
    """The Wishbone peripheral around AES-128, exported as ``aes_wb`` and built for cocotb."""
    folder = tmp_path_factory.mktemp("wishbone")
    verilog = export_verilog(["--core", "wishbone:aes-128"], folder / "aes_wb.v", "aes_wb")
    return build([verilog], "aes_wb", folder / "build")


def run_one(runner, module: str, toplevel: str, testcase: str, tmp_path: Path):
    run = run_cocotb(runner, module, toplevel, tmp_path / testcase, testcase=testcase,
                     seed=SEED)
    run.check(expected=1)
    return run


# --- the harness ----------------------------------------------------------------------------

_FAILING = '''
import cocotb
from cocotb.triggers import Timer


@cocotb.test()
async def test_passes(dut):
    dut.d.value = 1
    await Timer(1, "ns")
    assert dut.q.value == 0


@cocotb.test()
async def test_fails(dut):
    dut.d.value = 1
    await Timer(1, "ns")
    assert dut.q.value == 1, "q is not d"
'''


def test_a_failing_cocotb_test_fails_the_check_with_its_message(icarus, tmp_path):
    (tmp_path / "inverter.v").write_text(
        "module inverter(input d, output q);\n  assign q = ~d;\nendmodule\n")
    (tmp_path / "inverter_bench.py").write_text(_FAILING)
    runner = build([tmp_path / "inverter.v"], "inverter", tmp_path / "build")
    run = run_cocotb(runner, "inverter_bench", "inverter", tmp_path / "run",
                     python_path=(tmp_path,))
    assert [(case.name, case.failure is None) for case in run.cases] == \
        [("test_passes", True), ("test_fails", False)]
    with pytest.raises(AssertionError, match=r"(?s)cocotb tests failed:\ntest_fails: .*q is not d"):
        run.check()


# --- Wishbone peripheral ------------------------------------------------------------------

def test_wishbone_peripheral_passes_the_fips197_vector_in_ecb(wishbone, tmp_path):
    run_one(wishbone, "wishbone_bench", "aes_wb", "test_fips197_ecb", tmp_path)


def test_wishbone_peripheral_cbc_message_matches_pycryptodome(wishbone, tmp_path):
    run_one(wishbone, "wishbone_bench", "aes_wb", "test_cbc_message", tmp_path)


def test_wishbone_peripheral_ctr_message_matches_pycryptodome(wishbone, tmp_path):
    run_one(wishbone, "wishbone_bench", "aes_wb", "test_ctr_message", tmp_path)


# --- AXI4-Lite peripheral -----------------------------------------------------------------

@pytest.fixture(scope="module")
def axi_lite(tmp_path_factory, icarus):
    """The AXI4-Lite peripheral around AES-128, exported as ``aes_axi`` and built for cocotb."""
    folder = tmp_path_factory.mktemp("axi_lite")
    verilog = export_verilog(["--core", "axi:aes-128"], folder / "aes_axi.v", "aes_axi")
    return build([verilog], "aes_axi", folder / "build")


def test_axi_lite_peripheral_passes_the_fips197_vector_in_ecb(axi_lite, tmp_path):
    run_one(axi_lite, "axi_lite_bench", "aes_axi", "test_fips197_ecb", tmp_path)


def test_axi_lite_peripheral_cbc_message_matches_pycryptodome(axi_lite, tmp_path):
    run_one(axi_lite, "axi_lite_bench", "aes_axi", "test_cbc_message", tmp_path)


def test_axi_lite_peripheral_ctr_message_matches_pycryptodome(axi_lite, tmp_path):
    run_one(axi_lite, "axi_lite_bench", "aes_axi", "test_ctr_message", tmp_path)


def test_axi_lite_read_of_an_unmapped_address_answers_slverr_and_flags_it(axi_lite, tmp_path):
    run_one(axi_lite, "axi_lite_bench", "aes_axi", "test_unmapped_read_answers_slverr", tmp_path)


def test_axi_lite_write_to_an_unmapped_address_answers_slverr_and_flags_it(axi_lite, tmp_path):
    run_one(axi_lite, "axi_lite_bench", "aes_axi", "test_unmapped_write_answers_slverr",
            tmp_path)


def test_axi_lite_write_to_a_read_only_register_answers_slverr_and_flags_it(axi_lite, tmp_path):
    run_one(axi_lite, "axi_lite_bench", "aes_axi", "test_read_only_write_answers_slverr",
            tmp_path)


# --- AXI4-Stream core ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def axi_stream(tmp_path_factory, icarus):
    """AES-128 with AXI4-Stream channels, exported as ``aes_axis`` and built for cocotb."""
    folder = tmp_path_factory.mktemp("axi_stream")
    verilog = export_verilog(["--core", "aes", "--key-bits", "128", "--axis"],
                             folder / "aes_axis.v", "aes_axis")
    return build([verilog], "aes_axis", folder / "build")


def test_axi_stream_core_encrypts_frames_keeping_their_boundaries(axi_stream, tmp_path):
    run_one(axi_stream, "axis_bench", "aes_axis", "test_encrypt_frames", tmp_path)


def test_axi_stream_core_decrypts_frames_keeping_their_boundaries(axi_stream, tmp_path):
    run_one(axi_stream, "axis_bench", "aes_axis", "test_decrypt_frames", tmp_path)
