# amaranth: UnusedElaboratable=no
"""The command line: help, one-line errors with a non-zero exit, and the fast subcommands."""

import json
import subprocess
import sys

import pytest

from scripts.cli import main


# These tests use the toy cipher of tests/toy_cipher.py as core "toy".
pytestmark = pytest.mark.usefixtures("toy_in_catalog")


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code, err, message):
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("cipher-cores")
    assert message in lines[0]
    assert "Traceback" not in err


def test_help_explains(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for word in ("build", "report", "export", "demo", "YoWASP", "YOSYS"):
        assert word in out


@pytest.mark.parametrize("command", ["build", "report", "export", "demo", "list"])
def test_subcommand_help(capsys, command):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert "usage: cipher-cores " + command in capsys.readouterr().out


def test_no_command_prints_help(capsys):
    code, out, _ = run(capsys)
    assert code == 2 and "usage: cipher-cores" in out


@pytest.mark.parametrize("argv, message", [
    (["build", "--core", "des"], "unknown core 'des'; choose from aes, present"),
    (["build", "--board", "nexys"], "unknown board 'nexys'; choose from icebreaker"),
    (["build", "--core", "present", "--sbox", "bram"], "--sbox does not apply to core present"),
    (["build", "--core", "aes", "--key-bits", "80"], "AES takes --key-bits 128, 192, 256, not 80"),
    (["build", "--core", "aes", "--sbox", "rom"], "--sbox must be logic, bram or boolean, not 'rom'"),
    (["build", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["build", "--seed", "x"], "argument --seed: invalid int value: 'x'"),
    (["frob"], "invalid choice: 'frob'"),
    (["report", "--cores", "des-64"], "unknown core 'des'"),
    (["report", "--cores", "aes-100"], "AES takes key sizes 128, 192 or 256, not 100"),
    (["report", "--devices", "xc3s400"], "unknown device 'xc3s400'"),
    (["report", "--cores", "toy", "--seeds", "0"], "--seeds must be at least 1, not 0"),
    (["report", "--cores", "toy", "-j", "0"], "-j must be at least 1, not 0"),
    (["export", "--core", "toy"], "export needs --verilog FILE and/or --rtlil FILE"),
    (["demo", "--core", "des"], "unknown core 'des'"),
])
def test_errors_are_one_line(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert_one_line_error(code, err, message)


def test_console_script_error_has_no_traceback():
    result = subprocess.run([sys.executable, "-m", "scripts.cli", "build", "--board", "nope"],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "cipher-cores: error: unknown board 'nope'; choose from icebreaker, ice40-hx8k, "
        "ulx3s-85f, ulx3s-25f, orangecrab-25f, orangecrab-85f, icesugar-pro"]


def test_list(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "icebreaker" in out and "ecp5-85f" in out and "present" in out


def test_build_files_only(capsys, tmp_path):
    code, out, err = run(capsys, "build", "--core", "toy", "--build-dir", str(tmp_path),
                         "--no-build", "--quiet")
    assert code == 0, err
    assert "build files for TOY-80 on iCEBreaker" in out
    assert (tmp_path / "toy80_icebreaker" / "top.il").exists()


def test_demo_present(capsys):
    pytest.importorskip("cores.present")
    code, out, _ = run(capsys, "demo", "--core", "present")
    assert code == 0
    # The PRESENT paper's first vector, and the cycle counts measured in simulation.
    assert "ciphertext 5579c1387b228445  (expected 5579c1387b228445, 32 cycles)" in out
    assert "PRESENT-80: 32 cycles per block back to back" in out
    assert "MISMATCH" not in out


def test_demo_aes(capsys):
    code, out, _ = run(capsys, "demo", "--core", "aes")
    assert code == 0
    # FIPS-197 Appendix C.1.
    assert "ciphertext 69c4e0d86a7b0430d8cdb78070b4c55a" in out
    assert "OK" in out and "MISMATCH" not in out


def test_report_with_a_stub_build(capsys, tmp_path, monkeypatch):
    # The report command end to end, with place-and-route replaced by a canned measurement.
    import scripts.flow.build

    def fake_measure(config, device, *, seeds, root, progress, environ=None):
        return {"label": config.label, "config": config.to_dict(), "device": device.name,
                "family": device.family, "block_bits": config.block_bits, "fit": True,
                "fit_reason": "", "seeds": list(seeds), "build_dir": root,
                "core_cells": {"lut4": 200, "ff": 130, "carry": 0, "bram": 0, "io": 0,
                               "other": 0},
                "harness_cells": {}, "design_cells": {}, "design_utilization": {},
                "fmax_mhz": [50.0 + seed for seed in seeds], "elapsed_s": 0.1}

    monkeypatch.setattr(scripts.flow.build, "measure_device", fake_measure)
    monkeypatch.setattr("scripts.flow.toolchain.tool_versions", lambda *a, **k: {"yosys": "test"})
    monkeypatch.setattr("scripts.flow.toolchain.prepare_tools", lambda *a, **k: {})
    monkeypatch.setattr("scripts.flow.toolchain.configure_toolchain", lambda *a, **k: {})
    paths = {name: tmp_path / name for name in ("r.json", "r.md", "r.png")}
    code, out, err = run(capsys, "report", "--cores", "toy", "--devices", "ice40-up5k",
                         "ecp5-25f", "--seeds", "3", "--json", str(paths["r.json"]),
                         "--markdown", str(paths["r.md"]), "--plot", str(paths["r.png"]), "-q")
    assert code == 0, err
    report = json.loads(paths["r.json"].read_text())
    assert [row["device"] for row in report["rows"]] == ["ice40-up5k", "ecp5-25f"]
    assert report["rows"][0]["fmax_median_mhz"] == 52.0
    assert report["rows"][0]["cycles_per_block"] == 6    # simulated, not typed in
    assert report["seeds"] == [1, 2, 3]
    assert report["command"].startswith("cipher-cores report --cores toy")
    assert "![Area against throughput](r.png)" in paths["r.md"].read_text()
    assert paths["r.png"].read_bytes()[:4] == b"\x89PNG"
    # The papers' rows are those of the ciphers measured: none for the toy.
    assert "(paper)" not in out


def canned_build(fmax):
    def build_board(config, board, *, root, seed, loop_blocks, progress, do_build, fault):
        import os
        directory = os.path.join(root, f"{config.slug}_{board.name}")
        os.makedirs(directory, exist_ok=True)
        cells = {"lut4": 300, "ff": 150, "carry": 2, "bram": 0, "io": 0, "other": 0}
        return {"label": config.label, "board": board.name, "device": "iCE40UP5K",
                "build_dir": directory, "clock_mhz": 12.0, "seed": seed, "fmax_mhz": fmax,
                "timing_met": fmax >= 12.0, "core_cells": cells, "design_cells": cells,
                "design_utilization": {"ICESTORM_LC": {"used": 400, "available": 5280}},
                "bitstream": os.path.join(directory, "top.bin")}
    return build_board


@pytest.mark.parametrize("fmax, code", [(40.0, 0), (9.5, 1)])
def test_build_prints_its_report(capsys, tmp_path, monkeypatch, fmax, code):
    monkeypatch.setattr("scripts.flow.build.build_board", canned_build(fmax))
    monkeypatch.setattr("scripts.flow.toolchain.prepare_tools", lambda *a, **k: {})
    monkeypatch.setattr("scripts.flow.toolchain.configure_toolchain", lambda *a, **k: {})
    result, out, err = run(capsys, "build", "--core", "toy", "--build-dir", str(tmp_path), "-q")
    assert result == code
    assert "TOY-80 self-test on iCEBreaker (iCE40UP5K)" in out
    assert "core          300 LUT4, 150 FF, 2 carry, 0 BRAM  (≈150 Spartan-3 slices)" in out
    assert "ICESTORM_LC       400 / 5280" in out
    assert f"Fmax          {fmax:.1f} MHz (board clock 12 MHz, seed 1)" in out
    # The toy core takes 6 cycles per 64-bit block (simulated).
    assert "throughput    128.0 Mb/s at the board clock" in out
    assert any(line.startswith("TOY-80") and "icebreaker" in line for line in out.splitlines())
    assert "(paper)" not in out
    if code:
        assert_one_line_error(code, err, "timing not met: Fmax 9.5 MHz is below the 12 MHz")
    assert (tmp_path / "toy80_icebreaker" / "build.json").exists()
