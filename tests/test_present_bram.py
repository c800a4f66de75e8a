# amaranth: UnusedElaboratable=no
"""The serial PRESENT core in block RAM: the paper's vectors, differential tests against the
reference model in both directions with key changes and back-pressure, its cycle figures, its
S-box table from the tables' definitions, and the iCE40 form (``SB_RAM40_4K`` instances) run in
Icarus Verilog with Yosys' own simulation model of the cell. The stream contract and the
measured figures are checked on every configuration in ``tests/test_contract.py``."""

import functools
import random

import pytest

from cores.catalog import get_core
from cores.interface import BlockCipherSignature
from cores.present import BlockRamPRESENT
from cores.present.bram import NIBBLE_MODES, nibble_function
from cores.present.tables import INV_SBOX, KEY_SIZES, SBOX

from .helpers import (expected_results, present_configurations, random_operations, simulate_cipher,
                      vector_operations)
from .verilog_bench import check_ice40_form


configurations = present_configurations


def bram_config(key_bits=80, decrypt=True):
    return get_core("present-bram").config(key_bits, decrypt=decrypt)


@functools.cache
def random_run(key_bits, decrypt=True):
    config = bram_config(key_bits, decrypt)
    # Encrypt-only cores get blocks asking for decryption too: they must encrypt them.
    operations = random_operations(config, random.Random(f"bram-{key_bits}"), keys=3,
                                   blocks_per_key=5, extreme_keys=True)
    run = simulate_cipher(config.build(), operations, rng=random.Random(key_bits),
                          max_gap=3, max_stall=3)
    return config, operations, run


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
    config, operations, run = random_run(key_bits, decrypt)
    assert run.results == expected_results(config, operations)


# The iCE40 form, its cells simulated by Yosys' model of SB_RAM40_4K.

@pytest.mark.parametrize("key_bits, decrypt", [
    (80, True),
    pytest.param(80, False, marks=pytest.mark.slow),
    pytest.param(128, True, marks=pytest.mark.slow),
], ids=["80-integrated", "80-encrypt-only", "128-integrated"])
def test_ice40_form_passes_its_vectors_with_yosys_model_of_the_ram_cell(key_bits, decrypt,
                                                                       icarus, tmp_path):
    check_ice40_form(BlockRamPRESENT(key_bits, decrypt=decrypt), bram_config(key_bits, decrypt),
                     icarus, tmp_path, rams=BlockRamPRESENT(key_bits).block_rams)
