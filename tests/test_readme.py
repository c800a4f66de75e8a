"""The README's examples work as the README says."""

from pathlib import Path

from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_C

from .support.helpers import run_testbench, stream_get, stream_put


def readme_examples():
    """The Python code blocks of the README, in order."""
    text = (Path(__file__).parent.parent / "README.md").read_text()
    blocks, start = [], 0
    while (start := text.find("```python\n", start)) >= 0:
        start += len("```python\n")
        end = text.index("```", start)
        blocks.append(text[start:end])
        start = end
    return blocks


def run_example(index):
    namespace = {}
    exec(compile(readme_examples()[index], "README.md", "exec"), namespace)
    return namespace


def test_readme_encryptor_encrypts_fips197_appendix_c1():
    vector = FIPS197_APPENDIX_C[0]
    encryptor = run_example(0)["Encryptor"](vector.key)

    async def bench(ctx, rst):
        for _ in range(2):
            await stream_put(ctx, encryptor.plaintext, vector.plaintext)
            assert await stream_get(ctx, encryptor.ciphertext) == vector.ciphertext

    run_testbench(encryptor, bench)


def test_readme_present_example_runs_and_its_assertion_holds(capsys):
    namespace = run_example(1)
    assert namespace["run"].results == [0x5579c1387b228445, 0]
    # What it prints is what the README says it prints (the comment on its print line), and
    # those are the documented PRESENT-80 figures.
    assert capsys.readouterr().out.split() == ["32", "32", "34"]
