# amaranth: UnusedElaboratable=no
"""The RISC-V SoC: its parts alone (bus decoder, RAM, system controller), the ELF loader, the
firmware kit's generated headers, and the whole system in the compiled simulator running the
self-test firmware and programs written as a user would write them."""

import struct

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from cipher_cores.cores.bus.wishbone import WishboneSignature
from cipher_cores.cores.selftest.uart import uart_decode
from cipher_cores.cores.soc import CipherSoC, PicoRV32, SystemController, WishboneDecoder, WishboneRAM
from cipher_cores.cores.soc import memory_map
from cipher_cores.cores.soc.elf import FirmwareError, load_elf, parse_elf
from cipher_cores.scripts.flow.firmware import KIT, build_selftest, compile_firmware
from cipher_cores.scripts.flow.soc import parse_selftest_output
from cipher_cores.scripts.flow.targets import parse_target

from .support.helpers import assert_one_line_error, run_cli


# --- a Wishbone master for the parts' testbenches ---------------------------------------------

async def access(ctx, bus, address, value=None, sel=0b1111, limit=1000):
    """One classic cycle on ``bus`` (word ``address``); returns the read data and the edges
    until ``ack``."""
    ctx.set(bus.adr, address)
    ctx.set(bus.we, value is not None)
    ctx.set(bus.dat_w, value or 0)
    ctx.set(bus.sel, sel)
    ctx.set(bus.cyc, 1)
    ctx.set(bus.stb, 1)
    for edges in range(1, limit):
        await ctx.tick()
        if ctx.get(bus.ack):
            data = ctx.get(bus.dat_r)
            ctx.set(bus.cyc, 0)
            ctx.set(bus.stb, 0)
            await ctx.tick()
            return data, edges
    raise AssertionError("no ack")


def simulate(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


def sysctl_word(name):
    return memory_map.sysctl_offset(name) // 4


# --- parts ------------------------------------------------------------------------------------

class _Target(wiring.Component):
    """A register that acknowledges every access on the next edge and remembers writes."""
    bus: wiring.In(WishboneSignature(addr_width=4))

    def elaborate(self, platform):
        m = Module()
        access_now = self.bus.cyc & self.bus.stb & ~self.bus.ack
        m.d.sync += self.bus.ack.eq(access_now)
        with m.If(access_now & self.bus.we):
            m.d.sync += self.bus.dat_r.eq(self.bus.dat_w + self.bus.adr)
        return m


def test_decoder_routes_by_region_and_acknowledges_unmapped_addresses():
    m = Module()
    m.submodules.decoder = decoder = WishboneDecoder({"low": (0x0000_0000, 4),
                                                      "high": (0x9000_0000, 4)})
    m.submodules.low = low = _Target()
    m.submodules.high = high = _Target()
    wiring.connect(m, decoder.low, low.bus)
    wiring.connect(m, decoder.high, high.bus)

    async def bench(ctx):
        await access(ctx, decoder.bus, 0x0000_0003, 100)
        await access(ctx, decoder.bus, 0x9000_0000 >> 2 | 5, 200)
        assert (await access(ctx, decoder.bus, 0))[0] == 103          # low kept its write
        assert (await access(ctx, decoder.bus, 0x9000_0000 >> 2))[0] == 205
        data, edges = await access(ctx, decoder.bus, 0x4000_0000 >> 2, 7)
        assert edges == 1                                              # unmapped: ack, no hang
        assert (await access(ctx, decoder.bus, 0x4000_0000 >> 2))[0] == 0

    simulate(m, bench)


def test_decoder_refuses_overlapping_or_misaligned_regions():
    with pytest.raises(ValueError, match="overlaps"):
        WishboneDecoder({"a": (0x8000_0000, 4), "b": (0x8000_0000, 4)})
    with pytest.raises(ValueError, match="must be a multiple of 0x10000000"):
        WishboneDecoder({"a": (0x8000_1000, 4)})


def test_ram_starts_with_the_image_and_writes_bytes_by_select():
    ram = WishboneRAM(size_bytes=1024, image=bytes(range(1, 9)))

    async def bench(ctx):
        assert (await access(ctx, ram.bus, 0))[0] == 0x04030201        # little-endian words
        assert (await access(ctx, ram.bus, 1))[0] == 0x08070605
        assert (await access(ctx, ram.bus, 2))[0] == 0
        await access(ctx, ram.bus, 1, 0xaabbccdd, sel=0b0100)
        data, edges = await access(ctx, ram.bus, 1)
        assert (data, edges) == (0x08bb0605, 1)

    simulate(ram, bench)


def test_ram_checks_its_size_and_image():
    with pytest.raises(ValueError, match="power of two from 512"):
        WishboneRAM(size_bytes=3000)
    with pytest.raises(ValueError, match=r"does not fit in 512 bytes of RAM \(4 bytes too many\)"):
        WishboneRAM(size_bytes=512, image=bytes(516))


def test_system_controller_registers():
    sysctl = SystemController(clock_hz=12_000_000, ram_bytes=8192, uart_divisor=4)

    async def bench(ctx):
        assert (await access(ctx, sysctl.bus, sysctl_word("CLOCK_HZ")))[0] == 12_000_000
        assert (await access(ctx, sysctl.bus, sysctl_word("RAM_BYTES")))[0] == 8192
        first = (await access(ctx, sysctl.bus, sysctl_word("CYCLES")))[0]
        second = (await access(ctx, sysctl.bus, sysctl_word("CYCLES")))[0]
        assert second - first == 2                     # an access and an idle edge
        assert not ctx.get(sysctl.exited)
        await access(ctx, sysctl.bus, sysctl_word("EXIT"), 5)
        await access(ctx, sysctl.bus, sysctl_word("EXIT"), 0)   # the first status stays
        assert ctx.get(sysctl.exited) and ctx.get(sysctl.exit_status) == 5

    simulate(sysctl, bench)


def test_uart_writes_wait_for_the_transmitter_and_reach_the_line():
    divisor = 4
    sysctl = SystemController(clock_hz=1000, ram_bytes=1024, uart_divisor=divisor)
    line, console = [], []

    async def bench(ctx):
        _, first = await access(ctx, sysctl.bus, sysctl_word("UART_DATA"), ord("O"))
        _, second = await access(ctx, sysctl.bus, sysctl_word("UART_DATA"), ord("K"))
        assert first == 1 and second >= 10 * divisor - 2   # waited for the first byte to go
        for _ in range(12 * divisor):
            await ctx.tick()

    async def monitor(ctx):
        async for _, _, tx, valid, byte in ctx.tick().sample(sysctl.uart_tx, sysctl.console_valid,
                                                       sysctl.console_byte):
            line.append(tx)
            if valid:
                console.append(byte)

    sim = Simulator(sysctl)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.add_process(monitor)
    sim.run()
    assert uart_decode(line, divisor) == b"OK"
    assert bytes(console) == b"OK"


def test_constructors_check_their_arguments():
    with pytest.raises(ValueError, match="isa must be one of rv32i, rv32im, rv32imc, not 'rv64i'"):
        PicoRV32(isa="rv64i")
    with pytest.raises(TypeError, match="interrupts must be True or False"):
        PicoRV32(interrupts=1)
    with pytest.raises(ValueError, match="uart_divisor must be a positive integer"):
        SystemController(clock_hz=1, ram_bytes=1024, uart_divisor=0)
    with pytest.raises(TypeError, match="peripheral must be a CipherPeripheral"):
        CipherSoC(object(), ram_bytes=1024, clock_hz=1, uart_divisor=1)


# --- the ELF loader ---------------------------------------------------------------------------

def elf_header(*, elf_class=1, order=1, machine=243, entry=0, kind=2):
    header = bytearray(52)
    header[:6] = b"\x7fELF" + bytes([elf_class, order])
    struct.pack_into("<HHIIIIIHHHHHH", header, 16, kind, machine, 1, entry, 52, 0, 0, 52, 32,
                     0, 40, 0, 0)
    return bytes(header)


def test_loader_refuses_what_the_cpu_cannot_run():
    with pytest.raises(FirmwareError, match="fw: not an ELF file"):
        parse_elf(b"hello", "fw")
    with pytest.raises(FirmwareError, match="an ELF for x86-64, not RISC-V"):
        parse_elf(elf_header(machine=62), "fw")
    with pytest.raises(FirmwareError, match="a 64-bit little-endian ELF for RISC-V; the SoC "
                                            "runs 32-bit little-endian RISC-V"):
        parse_elf(elf_header(elf_class=2), "fw")
    with pytest.raises(FirmwareError, match="entry point 0x00001000, but the CPU starts at "
                                            "0x00000000"):
        parse_elf(elf_header(entry=0x1000), "fw")
    with pytest.raises(FirmwareError, match="no loadable segment"):
        parse_elf(elf_header(), "fw")


# --- the kit ----------------------------------------------------------------------------------

def test_kit_memory_map_header_is_generated_from_its_description():
    assert (KIT / "soc_map.h").read_text() == memory_map.header_text(), \
        "regenerate with python -m cipher_cores.cores.soc.memory_map --header cores/soc/firmware/soc_map.h"


# --- the whole system in the compiled simulator -----------------------------------------------

#: The AES self-test with GCM (about 40 s of firmware in the compiled simulator) is in the slow
#: run; the default run has the PRESENT one, and an AES SoC runs the user programs below.
@pytest.mark.parametrize("core, gcm", [pytest.param("aes-bram-128", True, marks=pytest.mark.slow),
                                       ("present-80", False)])
def test_selftest_firmware_passes_every_check(capsys, core, gcm):
    """The self-test runs every vector in every mode (and GCM), the interrupt check and the
    benchmarks, and ends with a summary line that says PASS (exit status 0)."""
    code, out, err = run_cli(capsys, "soc", "simulate", "--core", core,
                             *(["--gcm"] if gcm else []), "-q")
    assert code == 0, err
    lines = out.splitlines()
    results = [line for line in lines if line.startswith(("PASS", "FAIL"))]
    assert results and all(line.startswith("PASS ") for line in results), out
    assert any("interrupt" in line for line in results)
    if gcm:
        assert any("(forged tag refused)" in line for line in results)
        assert any(line.startswith("BENCH GCM-seal") for line in lines)
    summary = lines[-1]
    assert summary.startswith("SUMMARY ") and summary.endswith("; PASS")
    assert f"{len(results)}/{len(results)} passed" in summary
    if core.startswith("aes"):
        assert "speed-up" in summary
    assert "DMA" not in out                            # no DMA built: none measured


USER_PROGRAM = r"""
#include "cipher.h"
#include "soc.h"

/* FIPS-197 Appendix C.1, written as a user of the kit would. */
static const uint8_t key[16] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
static const uint8_t plain[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                  0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
static const uint8_t cipher[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                   0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};

int main(void)
{
    uint8_t out[17];
    cipher_info info;
    cipher_init(&info);
    /* out + 1 is not word-aligned: the driver's byte path. */
    int status = cipher_run(CIPHER_ECB, key, 16, 0, plain, out + 1, 1);
    int wrong = 0;
    for (int i = 0; i < 16; i++)
        wrong |= out[1 + i] != cipher[i];
    uint32_t start = soc_cycles();
    soc_printf("blocks of %u bytes, status %d, %s, %u cycles later\n", info.block_bytes,
               status, wrong ? "wrong" : "right", soc_cycles() - start);
    return wrong ? 7 : 0;
}
"""


@pytest.fixture(scope="module")
def user_programs(tmp_path_factory):
    """ELF files of small programs built against the kit, as a user would build them."""
    folder = tmp_path_factory.mktemp("programs")
    sources = {"fips197": USER_PROGRAM,
               "trap": "int main(void) { __builtin_trap(); }\n",
               "spin": "int main(void) { for (;;) ; }\n",
               "status": "int main(void) { return 3; }\n"}
    programs = {}
    for name, text in sources.items():
        (folder / f"{name}.c").write_text(text)
        programs[name] = compile_firmware([folder / f"{name}.c"], folder / f"{name}.elf",
                                          isa="rv32i")
    # The same program with compressed instructions and M, as compilers make it by default.
    programs["fips197-rv32imc"] = compile_firmware([folder / "fips197.c"],
                                                   folder / "fips197-rv32imc.elf", isa="rv32imc")
    return programs


# The user programs run on the SoC without GCM: they do not use it, and that SoC is a smaller
# model to compile (the GCM SoC runs the self-test, with -m slow).
@pytest.mark.parametrize("program", ["fips197", "fips197-rv32imc"])
def test_a_user_program_runs_unchanged(capsys, user_programs, program):
    code, out, err = run_cli(capsys, "soc", "simulate", "--core", "aes-bram-128",
                             "--firmware", str(user_programs[program]), "-q")
    assert code == 0, err
    assert out.startswith("blocks of 16 bytes, status 0, right, ")


@pytest.mark.parametrize("program, extra, message", [
    ("trap", [], "the CPU trapped at pc 0x"),
    ("spin", ["--max-cycles", "20000"], "timeout: the firmware did not exit within 20,000 "
                                        "cycles"),
    ("status", [], "firmware exited with status 3 after"),
])
def test_runs_that_end_badly_give_one_line_and_exit_1(capsys, user_programs, program, extra,
                                                     message):
    code, out, err = run_cli(capsys, "soc", "simulate", "--core", "aes-bram-128",
                             "--firmware", str(user_programs[program]), "-q", *extra)
    assert_one_line_error(code, err, message)


def test_bad_firmware_files_give_one_line_and_exit_1(capsys, tmp_path, user_programs):
    text = tmp_path / "notes.txt"
    text.write_text("not a program")
    code, _, err = run_cli(capsys, "soc", "simulate", "--core", "aes-bram-128",
                           "--firmware", str(text))
    assert_one_line_error(code, err, "notes.txt: not an ELF file")
    other = tmp_path / "x86.elf"
    other.write_bytes(elf_header(machine=62))
    code, _, err = run_cli(capsys, "soc", "simulate", "--core", "aes-bram-128",
                           "--firmware", str(other))
    assert_one_line_error(code, err, "an ELF for x86-64, not RISC-V")
    needed = load_elf(user_programs["fips197"], ram_bytes=1 << 20).ram_needed
    code, _, err = run_cli(capsys, "soc", "simulate", "--core", "aes-bram-128",
                           "--firmware", str(user_programs["fips197"]), "--ram-kib", "1")
    assert_one_line_error(code, err, f"needs {needed:,} bytes of RAM, the SoC has 1,024 "
                                     f"({needed - 1024:,} bytes too many)")


@pytest.mark.parametrize("argv, message", [
    (["simulate", "--core", "present-80", "--gcm"],
     "--core present-80: gcm=True needs cores with 128-bit blocks (AES), not 64-bit ones"),
    (["simulate", "--core", "des-64"], "--core des-64: unknown core"),
    (["build", "--core", "aes-128", "--board", "icesugar-pro"],
     "--board must be one of icebreaker, ice40-hx8k, ulx3s-85f, orangecrab-25f"),
    (["simulate", "--core", "aes-128", "--ram-kib", "3"], "--ram-kib must be a power of two"),
])
def test_bad_arguments_give_one_line_and_exit_1(capsys, argv, message):
    code, _, err = run_cli(capsys, "soc", *argv)
    assert_one_line_error(code, err, message)


def test_selftest_vectors_come_from_the_official_files(tmp_path):
    """The AES self-test's mode vectors are the NIST files' and SP 800-38A's, by name."""
    build_selftest(parse_target("wishbone-gcm:aes-128"), tmp_path)
    header = (tmp_path / "selftest_vectors.h").read_text()
    for source in ("FIPS-197 Appendix C.1", "ECBMMT128.rsp", "CBCMMT128.rsp",
                   "CFB128MMT128.rsp", "OFBMMT128.rsp", "SP 800-38A F.5 CTR-AES128",
                   "gcmEncryptExtIV128.rsp", "gcmDecrypt128.rsp"):
        assert source in header


# --- measuring the SoC -----------------------------------------------------------------------

def test_selftest_output_is_parsed_into_cycles_and_speedup():
    text = ("PASS something\n"
            "BENCH CBC-encrypt 32 blocks 10243 cycles 320.1 cycles/block\n"
            "BENCH software-AES-128-CBC-encrypt 8 blocks 65177 cycles 8147.1 cycles/block\n"
            "SUMMARY X: 17/17 passed; CBC 320.1 cycles/block; software AES-128 CBC 8147.1 "
            "cycles/block; speed-up 25.5x; PASS\n")
    figures = parse_selftest_output(text)
    assert figures["cycles_per_block"] == {"CBC-encrypt": 320.1}
    assert (figures["software"], figures["speedup"], figures["passed"]) == (8147.1, 25.5, True)
    assert not parse_selftest_output(text.replace("; PASS", "; FAIL"))["passed"]


@pytest.mark.build
def test_soc_builds_for_the_ulx3s_and_meets_its_clock(capsys, tmp_path):
    """A bitstream of the SoC with the round AES and the full self-test (place and route)."""
    code, out, err = run_cli(capsys, "soc", "build", "--board", "ulx3s-85f", "--core",
                             "aes-128", "--build-dir", str(tmp_path), "-q")
    assert code == 0, err
    assert "bitstream" in out and "top.bit" in out
    assert (tmp_path / "soc_wishbone_aes128_ulx3s-85f" / "top.bit").exists()


@pytest.mark.slow
@pytest.mark.parametrize("core", [
    "aes-128", "aes-256", "aes-128:decrypt=no", "aes-pipelined-128:decrypt=no", "aes-ttable-192",
    "aes-compact-128", "aes-bram-256", "present-128", "present-80:decrypt=no",
    "present-keytable-80", "present-serial-128", "present-bram-80", "present-pipelined-80:decrypt=no",
])
def test_every_architecture_passes_the_selftest_in_the_soc(capsys, core):
    """Any catalog core can go into the SoC by name: its self-test passes there."""
    code, out, err = run_cli(capsys, "soc", "simulate", "--core", core, "-q")
    assert code == 0, err
    assert out.splitlines()[-1].endswith("; PASS")
