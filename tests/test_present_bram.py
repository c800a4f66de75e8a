# amaranth: UnusedElaboratable=no
"""The serial PRESENT core in block RAM: the paper's vectors, differential tests against the
reference model in both directions with key changes and back-pressure, its cycle figures, its
S-box table from the tables' definitions. Its iCE40 form (``SB_RAM40_4K`` instances) runs in Icarus
Verilog with Yosys' own simulation model of the cell in ``tests/test_verilog_sim.py``; the stream
contract and the measured figures are checked on every configuration in
``tests/test_contract.py``."""

import pytest

from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.present import BlockRamPRESENT
from cipher_cores.cores.present.bram import NIBBLE_MODES, nibble_function
from cipher_cores.cores.present.tables import INV_SBOX, KEY_SIZES, SBOX

from .support.helpers import random_run as shared_random_run
from .support.helpers import (expected_results, present_configurations, simulate_cipher,
                              vector_operations)


configurations = present_configurations


def bram_config(key_bits=80, decrypt=True):
    return get_core("present-bram").config(key_bits, decrypt=decrypt)


def random_run(key_bits, decrypt=True):
    # Encrypt-only cores get blocks asking for decryption too: they must encrypt them.
    return shared_random_run("present-bram", key_bits, seed=f"bram-{key_bits}", keys=3,
                             blocks_per_key=5, gaps=(key_bits, 3, 3), decrypt=decrypt)


# Constructor and figures.

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_interface(key_bits):
    assert BlockRamPRESENT(key_bits).signature == BlockCipherSignature(64, key_bits)


@pytest.mark.parametrize("key_bits, key_load, block_rams", [(80, 2056, 12), (128, 2173, 15)])
@pytest.mark.parametrize("decrypt", [True, False])
def test_cycle_figures(key_bits, key_load, block_rams, decrypt):
    core = BlockRamPRESENT(key_bits, decrypt=decrypt)
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == (515, 515, key_load)
    assert core.block_rams == block_rams


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_bits": 64}, ValueError, "key_bits"),
    ({"decrypt": 1}, TypeError, "decrypt"),
])
def test_constructor_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        BlockRamPRESENT(**kwargs)


# The S-box table.

@pytest.mark.parametrize("mode", sorted(NIBBLE_MODES))
def test_sbox_table_is_the_paper_sbox_its_inverse_and_add_round_key(mode):
    for x in range(16):
        for k in range(16):
            expected = {0: SBOX[x ^ k], 2: INV_SBOX[x] ^ k}.get(mode, x ^ k)
            assert nibble_function(mode, x, k) == expected, (mode, x, k)


# Against the paper and the reference model.

@configurations
def test_paper_vectors(key_bits, decrypt):
    config = bram_config(key_bits, decrypt)
    operations = vector_operations(config)
    run = simulate_cipher(config.build(), operations)
    assert run.results == expected_results(config, operations)


@configurations
def test_random_blocks_with_key_changes_and_back_pressure_match_reference(key_bits, decrypt):
    config, _, operations, run = random_run(key_bits, decrypt)
    assert run.results == expected_results(config, operations)
