"""The Python examples of the README and of the pages in docs/ work as the pages say."""

from pathlib import Path

import pytest
from amaranth.hdl import Elaboratable, Fragment

from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_C

from .support.helpers import run_testbench, stream_get, stream_put


ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


#: Put on the line before a block that must not run here (it builds a bitstream), with the test
#: that checks what it shows instead.
NOT_RUN = "<!-- not run by tests/test_readme.py:"


def examples(page: Path) -> list:
    """The Python code blocks of ``page``, in order, but those marked :data:`NOT_RUN`."""
    text = page.read_text()
    blocks, start = [], 0
    while (start := text.find("```python\n", start)) >= 0:
        marked = text[:start].rstrip().endswith("-->") and \
            text[:start].rstrip().rsplit("\n", 1)[-1].startswith(NOT_RUN)
        start += len("```python\n")
        end = text.index("```", start)
        if not marked:
            blocks.append(text[start:end])
        start = end
    return blocks


def run_example(page: Path, index: int) -> dict:
    namespace = {}
    exec(compile(examples(page)[index], str(page.relative_to(ROOT)), "exec"), namespace)
    return namespace


def test_readme_encryptor_encrypts_fips197_appendix_c1():
    vector = FIPS197_APPENDIX_C[0]
    encryptor = run_example(ROOT / "README.md", 0)["Encryptor"](vector.key)

    async def bench(ctx, rst):
        for _ in range(2):
            await stream_put(ctx, encryptor.plaintext, vector.plaintext)
            assert await stream_get(ctx, encryptor.ciphertext) == vector.ciphertext

    run_testbench(encryptor, bench)


def test_present_page_example_runs_and_its_assertion_holds(capsys):
    namespace = run_example(ROOT / "docs" / "present.md", 0)
    assert namespace["run"].results == [0x5579c1387b228445, 0]
    # What it prints is what the page says it prints (the comment on its print line), and
    # those are the documented PRESENT-80 figures.
    assert capsys.readouterr().out.split() == ["32", "32", "34"]


EXAMPLES = [pytest.param(page, index, id=f"{page.relative_to(ROOT)}-{index}")
            for page in PAGES for index in range(len(examples(page)))]


def test_the_readme_and_the_pages_have_examples():
    assert {page.name for page, _ in (param.values for param in EXAMPLES)} >= {
        "README.md", "present.md", "aes.md", "modes.md", "gcm.md", "peripheral.md"}


@pytest.mark.parametrize("page, index", EXAMPLES)
def test_every_example_runs_and_what_it_builds_elaborates(page, index):
    namespace = run_example(page, index)
    built = [value for value in namespace.values() if isinstance(value, Elaboratable)]
    for value in built:
        # Elaborating also marks it used, so Amaranth does not warn that it never was.
        assert isinstance(Fragment.get(value, None), Fragment)
