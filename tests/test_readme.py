"""The README's example design works as the README says."""

from pathlib import Path

from amaranth.sim import Simulator

from cores.aes.vectors import FIPS197_APPENDIX_C
from cores.sim import stream_get, stream_put


def readme_example():
    text = (Path(__file__).parent.parent / "README.md").read_text()
    start = text.index("```python\n") + len("```python\n")
    namespace = {}
    exec(compile(text[start:text.index("```", start)], "README.md", "exec"), namespace)
    return namespace


def test_readme_encryptor_encrypts_fips197_appendix_c1():
    vector = FIPS197_APPENDIX_C[0]
    encryptor = readme_example()["Encryptor"](vector.key)

    async def bench(ctx):
        for _ in range(2):
            await stream_put(ctx, encryptor.plaintext, vector.plaintext)
            assert await stream_get(ctx, encryptor.ciphertext) == vector.ciphertext

    sim = Simulator(encryptor)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
