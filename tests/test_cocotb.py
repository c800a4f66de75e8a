"""The exported Verilog under cocotb: the Wishbone peripheral, the AXI4-Lite peripheral and the
AXI4-Stream core, each exported through ``cipher-cores export`` and driven in Icarus Verilog by
the cocotb test modules of ``tests/cocotb/`` with the bus masters and stream models of
cocotbext-wishbone and cocotbext-axi, their results checked against pycryptodome and FIPS-197;
and the cocotb example of ``docs/verilog.md``, run as the page gives it.

Each design is exported and built once per module and worker, and each bench module run once
on it (``tests.support.cocotb_run.run_cocotb``; every cocotb test resets the design first): each
pytest test checks the outcome of one cocotb test, and fails when that cocotb test failed or did
not run. Icarus (Debian package ``iverilog``) is a requirement: without it these tests fail,
saying so.
"""

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cipher_cores.scripts.cli import main

from .support.cocotb_run import build, export_verilog, read_results, run_cocotb


ROOT = Path(__file__).parent.parent
PAGE = ROOT / "docs" / "verilog.md"
SEED = 2026


@dataclass(frozen=True)
class Export:
    """An exported top module: its Verilog file and the cocotb runner it is built in."""
    verilog: Path
    runner: object


def exported(tmp_path_factory, arguments: list, name: str) -> Export:
    """``cipher-cores export ARGUMENTS --name NAME`` into a new folder, built for cocotb."""
    folder = tmp_path_factory.mktemp(name)
    verilog = export_verilog(arguments, folder / f"{name}.v", name)
    return Export(verilog, build([verilog], name, folder / "build"))


def run_all(export: Export, module: str, toplevel: str, tmp_path_factory):
    """Every cocotb test of ``module`` in one simulator run (each test resets the design
    first); the tests below check one each."""
    return run_cocotb(export.runner, module, toplevel, tmp_path_factory.mktemp(module),
                      seed=SEED)


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
    run.check_case("test_passes")
    with pytest.raises(AssertionError, match=r"(?s)\.test_fails failed: .*q is not d"):
        run.check_case("test_fails")
    with pytest.raises(AssertionError, match=r"no cocotb test test_other ran"):
        run.check_case("test_other")


# --- Wishbone peripheral ------------------------------------------------------------------

@pytest.fixture(scope="module")
def wishbone(tmp_path_factory, icarus):
    """The Wishbone peripheral around AES-128, exported as ``aes_wb`` and built for cocotb."""
    return exported(tmp_path_factory, ["--core", "wishbone:aes-128"], "aes_wb")


@pytest.fixture(scope="module")
def wishbone_run(wishbone, tmp_path_factory):
    """The cocotb tests of the Wishbone peripheral, run once."""
    return run_all(wishbone, "wishbone_bench", "aes_wb", tmp_path_factory)


def test_wishbone_peripheral_passes_the_fips197_vector_in_ecb(wishbone_run):
    wishbone_run.check_case("test_fips197_ecb")


def test_wishbone_peripheral_cbc_message_matches_pycryptodome(wishbone_run):
    wishbone_run.check_case("test_cbc_message")


def test_wishbone_peripheral_ctr_message_matches_pycryptodome(wishbone_run):
    wishbone_run.check_case("test_ctr_message")


# --- AXI4-Lite peripheral -----------------------------------------------------------------

@pytest.fixture(scope="module")
def axi_lite(tmp_path_factory, icarus):
    """The AXI4-Lite peripheral around AES-128, exported as ``aes_axi`` and built for cocotb."""
    return exported(tmp_path_factory, ["--core", "axi:aes-128"], "aes_axi")


@pytest.fixture(scope="module")
def axi_lite_run(axi_lite, tmp_path_factory):
    """The cocotb tests of the AXI4-Lite peripheral, run once."""
    return run_all(axi_lite, "axi_lite_bench", "aes_axi", tmp_path_factory)


def test_axi_lite_peripheral_passes_the_fips197_vector_in_ecb(axi_lite_run):
    axi_lite_run.check_case("test_fips197_ecb")


def test_axi_lite_peripheral_cbc_message_matches_pycryptodome(axi_lite_run):
    axi_lite_run.check_case("test_cbc_message")


def test_axi_lite_peripheral_ctr_message_matches_pycryptodome(axi_lite_run):
    axi_lite_run.check_case("test_ctr_message")


def test_axi_lite_read_of_an_unmapped_address_answers_slverr_and_flags_it(axi_lite_run):
    axi_lite_run.check_case("test_unmapped_read_answers_slverr")


def test_axi_lite_write_to_an_unmapped_address_answers_slverr_and_flags_it(axi_lite_run):
    axi_lite_run.check_case("test_unmapped_write_answers_slverr")


def test_axi_lite_write_to_a_read_only_register_answers_slverr_and_flags_it(axi_lite_run):
    axi_lite_run.check_case("test_read_only_write_answers_slverr")


def test_axi_lite_key_write_while_busy_answers_slverr_and_flags_it(axi_lite_run):
    axi_lite_run.check_case("test_busy_write_answers_slverr")

# --- AXI4-Stream core ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def axi_stream(tmp_path_factory, icarus):
    """AES-128 with AXI4-Stream channels, exported as ``aes_axis`` and built for cocotb."""
    return exported(tmp_path_factory, ["--core", "aes", "--key-bits", "128", "--axis"],
                    "aes_axis")


@pytest.fixture(scope="module")
def axi_stream_run(axi_stream, tmp_path_factory):
    """The cocotb tests of the AXI4-Stream core, run once."""
    return run_all(axi_stream, "axis_bench", "aes_axis", tmp_path_factory)


def test_axi_stream_core_encrypts_frames_keeping_their_boundaries(axi_stream_run):
    axi_stream_run.check_case("test_encrypt_frames")


def test_axi_stream_core_decrypts_frames_keeping_their_boundaries(axi_stream_run):
    axi_stream_run.check_case("test_decrypt_frames")


def test_axi_stream_core_uses_each_key_for_the_frames_sent_after_it(axi_stream_run):
    axi_stream_run.check_case("test_key_change_between_frames")

# --- docs/verilog.md ----------------------------------------------------------------------

def page_blocks(language: str) -> list:
    """The fenced ``language`` blocks of ``docs/verilog.md``, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", PAGE.read_text(), flags=re.M | re.S)


def page_file(name: str) -> str:
    """The Python block of the page that is the file ``name`` (its first line says so)."""
    found = [block for block in page_blocks("python") if block.startswith(f"# {name}:")]
    assert len(found) == 1, f"docs/verilog.md has {len(found)} blocks for {name}"
    return found[0]


def test_the_pages_verilog_example_compiles_against_both_axi_exports(axi_lite, axi_stream,
                                                                       icarus, tmp_path):
    example, = page_blocks("verilog")
    (tmp_path / "example.v").write_text(example)
    iverilog, _ = icarus
    compiled = subprocess.run([iverilog, "-g2005", "-s", "crypto_subsystem", "-o",
                               str(tmp_path / "example.vvp"), str(tmp_path / "example.v"),
                               str(axi_lite.verilog), str(axi_stream.verilog)],
                              capture_output=True, text=True)
    # Icarus warns about a port width that does not match, and fails on a port that does not
    # exist: the example must do neither.
    assert compiled.returncode == 0 and compiled.stdout + compiled.stderr == "", \
        compiled.stdout + compiled.stderr


def test_the_pages_cocotb_example_passes_as_the_page_runs_it(icarus, tmp_path, monkeypatch):
    commands, = [block for block in page_blocks("sh") if "run_cocotb.py" in block]
    lines = commands.strip().splitlines()
    export, = [line for line in lines if line.startswith("cipher-cores export")]
    assert lines[-1] == "python run_cocotb.py"
    for name in ("cocotb_aes_axis.py", "run_cocotb.py"):
        (tmp_path / name).write_text(page_file(name))
    monkeypatch.chdir(tmp_path)
    for variable in ("AMARANTH_USE_YOSYS", "YOSYS", "CIPHER_CORES_TOOL_VARS"):
        # Set first so that monkeypatch restores it (absent) after export has set it.
        monkeypatch.setenv(variable, "")
        monkeypatch.delenv(variable)
    assert main(shlex.split(export)[1:]) == 0
    # As a user runs it: a plain Python, not under pytest (the runner ends a pytest run itself).
    environment = {key: value for key, value in os.environ.items()
                   if key != "PYTEST_CURRENT_TEST"}
    ran = subprocess.run([sys.executable, "run_cocotb.py"], cwd=tmp_path, env=environment,
                         capture_output=True, text=True)
    output = ran.stdout + ran.stderr
    assert ran.returncode == 0, output[-3000:]
    assert "1 of 1 cocotb tests passed" in ran.stdout
    cases = read_results(tmp_path / "sim_build" / "results.xml")
    assert [(case.name, case.failure) for case in cases] == [("encrypt_and_decrypt", None)]


def test_every_cocotb_test_is_checked_here():
    """Each ``@cocotb.test`` of the bench modules has a pytest test above that checks it."""
    benches = {"wishbone": "wishbone_bench", "axi_lite": "axi_lite_bench",
               "axi_stream": "axis_bench"}
    checked = {(benches[run], case) for run, case in re.findall(
        r'(\w+)_run\.check_case\("(\w+)"\)', Path(__file__).read_text())}
    written = {(bench.stem, name)
               for bench in (ROOT / "tests" / "cocotb").glob("*_bench.py")
               for name in re.findall(r"^@cocotb\.test\(.*\)\nasync def (\w+)",
                                      bench.read_text(), flags=re.M)}
    assert len(written) == 13
    assert checked == written
