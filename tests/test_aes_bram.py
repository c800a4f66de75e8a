# amaranth: UnusedElaboratable=no
"""The block-RAM AES core's own tests: its iCE40 form (the ``SB_RAM40_4K`` cells themselves)
against Yosys' model of the cell, its cycle figures and its construction. FIPS-197, the NIST
AESAVS ECB files and the differential tests against pycryptodome run on it beside the compact
core, in ``tests/test_aes_compact.py``; the stream contract and the measured cycle figures in
``tests/test_contract.py``."""

import random

import pytest
from amaranth.hdl import Cat, Fragment, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from cores.aes.bram import BlockRamAES, half_mix_column
from cores.aes.transforms import ROUNDS, mix_columns
from cores.catalog import get_core
from cores.gcm.core import GCM
from cores.gcm.sim import simulate_gcm
from cores.interface import BlockCipherSignature
from cores.modes import Mode, ModeOfOperation

from .mode_sim import Key, Message, simulate_mode
from .nist_modes import MODE_FILE_KINDS, mode_vectors, sp800_38a_ctr_vectors
from .test_aes_compact import KEY_SIZES
from .test_gcm import check_against_pycryptodome
from .test_gcm import random_operations as gcm_random_operations
from .verilog_bench import check_ice40_form


# Building blocks against their definitions

class _HalfMixColumn(wiring.Component):
    column: In(32)
    decrypt: In(1)
    result: Out(16)

    def elaborate(self, platform):
        m = Module()
        data = [self.column[8 * (3 - r):8 * (4 - r)] for r in range(4)]
        result = half_mix_column(m, data, self.decrypt)
        m.d.comb += self.result.eq(Cat(*reversed(result)))
        return m


def test_half_mix_column_gives_rows_0_and_1_and_with_halves_swapped_rows_2_and_3():
    """Against (Inv)MixColumns of the transforms module: the unit on (a0, a1, a2, a3) gives rows
    0 and 1, on (a2, a3, a0, a1) rows 2 and 3, so one half unit serves a column in two cycles."""
    dut = _HalfMixColumn()
    rng = random.Random("half-mix-column")
    columns = [0, 0xffffffff, 0xdb135345, 0xf20a225c] + [rng.getrandbits(32) for _ in range(60)]

    async def testbench(ctx):
        for column in columns:
            data = list(column.to_bytes(4, "big"))
            swapped = int.from_bytes(bytes(data[2:] + data[:2]), "big")
            for decrypt in (0, 1):
                mixed = mix_columns(data + [0] * 12, inverse=bool(decrypt))[:4]
                ctx.set(dut.decrypt, decrypt)
                ctx.set(dut.column, column)
                assert ctx.get(dut.result) == int.from_bytes(bytes(mixed[:2]), "big")
                ctx.set(dut.column, swapped)
                assert ctx.get(dut.result) == int.from_bytes(bytes(mixed[2:]), "big")

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()


# The iCE40 form, its state RAMs simulated by Yosys' model of SB_RAM40_4K.

@pytest.mark.parametrize("key_bits, decrypt", [
    (128, True),
    pytest.param(128, False, marks=pytest.mark.slow),
    pytest.param(256, True, marks=pytest.mark.slow),
], ids=["128-integrated", "128-encrypt-only", "256-integrated"])
def test_ice40_form_passes_its_vectors_with_yosys_model_of_the_ram_cell(key_bits, decrypt,
                                                                       icarus, tmp_path):
    # The two state RAMs are instances; the S-box tables are inferred (read-only) memories.
    check_ice40_form(BlockRamAES(key_bits, decrypt=decrypt),
                     get_core("aes-bram").config(key_bits, decrypt=decrypt), icarus, tmp_path,
                     rams=2)


# Our wrappers hold the payload while they wait, as the core needs.

def test_modes_of_operation_around_the_core_pass_nist_vectors_under_back_pressure():
    """CBC, CFB and OFB (the first vectors of each AESAVS file, both directions) and CTR
    (SP 800-38A) through :class:`~cores.modes.ModeOfOperation`, with gaps and stalls: the
    engine's chaining keeps ``input.payload`` still while the core reads it."""
    operations, checked, key = [], [], None
    groups = [(Mode[name], [vector for kind in MODE_FILE_KINDS
                            for vector in mode_vectors(name, kind, 128)[:2]])
              for name in ("CBC", "CFB", "OFB")] + [(Mode.CTR, sp800_38a_ctr_vectors(128))]
    for mode, vectors in groups:
        for vector in vectors:
            if vector.key != key:
                operations.append(Key(vector.key))
                key = vector.key
            operations.append(Message(mode, vector.decrypt, vector.iv, vector.given))
            checked.append(vector)
    run = simulate_mode(ModeOfOperation(BlockRamAES(128)), operations, rng=random.Random(3),
                        max_gap=3, max_stall=5, max_edges=200_000)
    for vector, result in zip(checked, run.results, strict=True):
        got = b"".join(block.to_bytes(16, "big") for block in result)[:vector.length]
        want = b"".join(block.to_bytes(16, "big") for block in vector.expected)[:vector.length]
        assert got == want, vector.source


def test_gcm_around_the_encrypt_only_core_matches_pycryptodome():
    rng = random.Random("bram-gcm")
    operations, expected = gcm_random_operations(rng, 128, 6)
    run = simulate_gcm(GCM(BlockRamAES(128, decrypt=False)), operations, rng=rng, max_gap=3,
                       max_stall=3, backend="cxxrtl", max_edges=500_000)
    check_against_pycryptodome(run, expected)


# Construction

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_and_cycle_figures(key_bits):
    core = BlockRamAES(key_bits)
    assert core.signature == BlockCipherSignature(128, key_bits)
    assert (core.key_bits, core.decrypt, core.block_rams) == (key_bits, True, 4)
    nr = ROUNDS[key_bits]
    # Eight cycles a round from the first payload read (the transfer is on the eighth), two more
    # to the last S-box look-up, one in "Done" with the result.
    assert core.initiation_interval == 8 * nr + 3
    assert core.latency == core.initiation_interval - 8
    # Four cycles for each of the 4 (Nr + 1) words, then the block's eight payload reads.
    assert core.key_load_cycles == 16 * (nr + 1) + 8
    Fragment.get(core, None)
