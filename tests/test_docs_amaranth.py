"""The Amaranth integration page (``docs/amaranth.md``): its one Python example runs, passes its
own FIPS-197 check and prints what the page says; the README lists the page."""

import re
from pathlib import Path


ROOT = Path(__file__).parent.parent
PAGE = ROOT / "docs" / "amaranth.md"


def python_blocks(text: str) -> list:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)


def test_the_page_has_one_python_example():
    assert len(python_blocks(PAGE.read_text())) == 1


def test_the_example_encrypts_fips197_appendix_c1_through_axi4_stream(capsys):
    namespace = {}
    exec(compile(python_blocks(PAGE.read_text())[0], "docs/amaranth.md", "exec"), namespace)
    assert namespace["results"] == [(bytes.fromhex("69c4e0d86a7b0430d8cdb78070b4c55a"), 1)]
    # What it prints is what the comment on its print line says.
    printed = capsys.readouterr().out.split()
    assert printed == ["69c4e0d86a7b0430d8cdb78070b4c55a", "11", "11"]
    comment = re.search(r"print\(.*\)\s*# (.*)$", python_blocks(PAGE.read_text())[0], re.M)
    shown = comment.group(1).split()
    assert shown[0].split("...")[0] == printed[0][:8] and shown[0].endswith(printed[0][-4:])
    assert shown[1:] == printed[1:]


def test_the_readme_lists_the_page():
    rows = [line for line in (ROOT / "README.md").read_text().splitlines()
            if line.startswith("| [docs/amaranth.md](docs/amaranth.md) |")]
    assert len(rows) == 1
