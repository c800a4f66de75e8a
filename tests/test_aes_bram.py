# amaranth: UnusedElaboratable=no
"""The block-RAM AES core's own tests: its iCE40 form (the ``SB_RAM40_4K`` cells themselves)
against Yosys' model of the cell, its cycle figures and its construction. FIPS-197, the NIST
AESAVS ECB files and the differential tests against pycryptodome run on it beside the compact
core, in ``tests/test_aes_compact.py``; the stream contract and the measured cycle figures in
``tests/test_contract.py``."""

import pytest
from amaranth.hdl import Fragment

from cores.aes.bram import BlockRamAES
from cores.aes.transforms import ROUNDS
from cores.catalog import get_core
from cores.interface import BlockCipherSignature

from .test_aes_compact import KEY_SIZES
from .verilog_bench import check_ice40_form


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
