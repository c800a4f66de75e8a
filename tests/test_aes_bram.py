# amaranth: UnusedElaboratable=no
"""The block-RAM AES core's own tests: the modes of operation and GCM around it, its cycle
figures and its construction. FIPS-197, the NIST AESAVS ECB files and the differential tests
against pycryptodome run on it beside the compact core, in ``tests/test_aes_compact.py``; its
iCE40 form (the ``SB_RAM40_4K`` cells themselves) against Yosys' model of the cell in
``tests/test_verilog_sim.py``; the stream contract and the measured cycle figures in
``tests/test_contract.py``."""

import random

import pytest
from amaranth.hdl import Fragment

from cipher_cores.cores.aes.bram import BlockRamAES
from cipher_cores.cores.aes.transforms import ROUNDS
from cipher_cores.cores.gcm.core import GCM
from cipher_cores.cores.gcm.sim import simulate_gcm
from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.modes import Mode

from .support.gcm_oracle import check_against_pycryptodome
from .support.gcm_oracle import random_operations as gcm_random_operations
from .support.mode_sim import check_vectors
from .support.nist_modes import MODE_FILE_KINDS, mode_vectors, sp800_38a_ctr_vectors


KEY_SIZES = tuple(ROUNDS)


# Our wrappers hold the payload while they wait, as the core needs.

def test_modes_of_operation_around_the_core_pass_nist_vectors_under_back_pressure():
    """CBC, CFB and OFB (the first vectors of each AESAVS file, both directions) and CTR
    (SP 800-38A) through :class:`~cipher_cores.cores.modes.ModeOfOperation`, with gaps and stalls: the
    engine's chaining keeps ``input.payload`` still while the core reads it."""
    groups = [(Mode[name], [vector for kind in MODE_FILE_KINDS
                            for vector in mode_vectors(name, kind, 128)[:2]])
              for name in ("CBC", "CFB", "OFB")] + [(Mode.CTR, sp800_38a_ctr_vectors(128))]
    check_vectors(128, groups, core=BlockRamAES(128), rng=random.Random(3), max_gap=3,
                  max_stall=5, max_edges=200_000)


@pytest.mark.slow      # a minute to compile GCM around it; GCM is checked with other cores by default
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
    assert (core.key_bits, core.decrypts, core.block_rams) == (key_bits, True, 4)
    nr = ROUNDS[key_bits]
    # Eight cycles a round from the first payload read (the transfer is on the eighth), two more
    # to the last S-box look-up, one in "Done" with the result.
    assert core.initiation_interval == 8 * nr + 3
    assert core.latency == core.initiation_interval - 8
    # Four cycles for each of the 4 (Nr + 1) words, then the block's eight payload reads.
    assert core.key_load_cycles == 16 * (nr + 1) + 8
    Fragment.get(core, None)
