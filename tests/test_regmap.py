"""The register map: the committed Markdown table and C header are what the generator writes; the
C header and the firmware example compile; the map has no overlaps."""

import shutil
import subprocess
from pathlib import Path

import pytest

from cipher_cores.cores.bus import regmap


DOCS = Path(__file__).parent.parent / "docs"
KIT = Path(__file__).parent.parent / "cores" / "soc" / "firmware"
REGENERATE = ("run: python -m cipher_cores.cores.bus.regmap --markdown docs/wishbone.md "
              "--header cores/soc/firmware/cipher_wishbone.h")


def test_committed_markdown_is_generated():
    assert (DOCS / "wishbone.md").read_text() == regmap.markdown(), \
        REGENERATE


def test_committed_header_is_generated():
    assert (KIT / "cipher_wishbone.h").read_text() == regmap.c_header(), \
        REGENERATE


def test_main_writes_both_files(tmp_path):
    assert regmap.main(["--markdown", str(tmp_path / "m.md"),
                        "--header", str(tmp_path / "h.h")]) == 0
    assert (tmp_path / "m.md").read_text() == regmap.markdown()
    assert (tmp_path / "h.h").read_text() == regmap.c_header()


def test_header_names_every_register_and_field():
    header = regmap.c_header()
    for reg in regmap.REGISTERS:
        assert f"#define CIPHER_{reg.name} " in header
        for item in reg.fields:
            assert f"CIPHER_{reg.name}_{item.name}_MASK " in header
    assert "#define CIPHER_CTRL_MODE_CTR" in header


def test_lookup_errors():
    with pytest.raises(KeyError, match="no register"):
        regmap.register("NOPE")
    with pytest.raises(KeyError, match="has no field"):
        regmap.register("CTRL").field("NOPE")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_firmware_example_compiles(tmp_path):
    (tmp_path / "cipher_wishbone.h").write_text(regmap.c_header())
    result = subprocess.run(
        ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
         "-I", str(tmp_path), str(DOCS / "firmware_example.c")],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
