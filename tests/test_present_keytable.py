# amaranth: UnusedElaboratable=no
"""The PRESENT core with its round keys in block RAM: the paper's vectors, differential tests
against the reference model, its cycle figures, the wait of a block whose direction was not
fetched, and the forms built for iCE40 and ECP5 (their cells simulated by models). The stream
contract and the measured figures are checked on every configuration in
``tests/test_contract.py``."""

import random

import pytest
from amaranth.hdl import Fragment

from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.present import KeyTablePRESENT
from cipher_cores.cores.present.tables import KEY_SIZES

from .support.cell_models import SimulationPlatform
from .support.helpers import random_run as shared_random_run
from .support.helpers import (expected_results, present_configurations, reference, run_testbench,
                              simulate_cipher, stream_get, stream_put, ticks, vector_operations)


configurations = present_configurations


def keytable_config(key_bits=80, decrypt=True):
    return get_core("present-keytable").config(key_bits, decrypt=decrypt)


def random_run(key_bits, decrypt=True):
    # Encrypt-only cores get blocks asking for decryption too: they must encrypt them.
    return shared_random_run("present-keytable", key_bits, seed=f"keytable-{key_bits}", keys=4,
                             blocks_per_key=6, decrypt=decrypt)


# Constructor and figures.

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_interface(key_bits):
    assert KeyTablePRESENT(key_bits).signature == BlockCipherSignature(64, key_bits)


@configurations
def test_cycle_figures(key_bits, decrypt):
    core = KeyTablePRESENT(key_bits, decrypt=decrypt)
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == (32, 32, 35)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_bits": 64}, ValueError, "key_bits"),
    ({"decrypt": 1}, TypeError, "decrypt"),
])
def test_constructor_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        KeyTablePRESENT(**kwargs)


# Function.

@configurations
def test_paper_vectors(key_bits, decrypt):
    config = keytable_config(key_bits, decrypt)
    operations = vector_operations(config)
    run = simulate_cipher(config.build(), operations)
    assert run.results == expected_results(config, operations)
    assert run.results


@configurations
def test_random_blocks_with_key_changes_match_reference(key_bits, decrypt):
    config, _, operations, run = random_run(key_bits, decrypt)
    assert run.results == expected_results(config, operations)
    assert set(run.latencies) == {32}


def test_a_late_block_of_the_other_direction_waits_for_its_round_keys():
    """A block offered while the core is idle transfers at once if its direction is the one
    whose round keys were fetched (the previous block's, or encryption after a key load), and
    4 edges later otherwise; every result is the reference's."""
    config = keytable_config()
    core = config.build()
    rng = random.Random("late")
    key = rng.getrandbits(80)
    directions = [False, False, True, True, False, True]
    waits, results, blocks = [], [], [rng.getrandbits(64) for _ in directions]

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, key)
        await ticks(ctx, core.key_load_cycles + 5)
        for block, direction in zip(blocks, directions):
            ctx.set(core.input.payload, {"block": block, "decrypt": int(direction)})
            ctx.set(core.input.valid, 1)
            waited = 0
            while not ctx.get(core.input.ready):
                await ctx.tick()
                waited += 1
            await ctx.tick()
            ctx.set(core.input.valid, 0)
            waits.append(waited)
            results.append(await stream_get(ctx, core.output))
            await ticks(ctx, 5)

    run_testbench(core, testbench)
    assert waits == [0, 0, 4, 0, 4, 4]
    assert results == [reference(config, key, block, direction)
                       for block, direction in zip(blocks, directions)]


# The forms built for the devices, their cells simulated (tests/support/cell_models.py).

class DeviceForm(KeyTablePRESENT):
    """The core as built for ``platform`` (a
    :class:`~tests.support.cell_models.SimulationPlatform`): its state bits of LUT cells
    (:mod:`cipher_cores.cores.lut`) and its table of ``DP16KD`` (ECP5) or ``SB_RAM40_4K`` (iCE40)
    instances (:mod:`cipher_cores.cores.block_ram`)."""
    def __init__(self, platform, key_bits, decrypt):
        self._platform = platform
        super().__init__(key_bits, decrypt=decrypt)

    def elaborate(self, platform):
        return Fragment.get(super().elaborate(self._platform), self._platform)


@pytest.mark.parametrize("family, key_bits, decrypt", [
    ("ice40", 80, True), ("ecp5", 80, True),
    # (The cell models simulate slowly, about 35 s a case.)
    pytest.param("ice40", 80, False, marks=pytest.mark.slow),
    pytest.param("ecp5", 80, False, marks=pytest.mark.slow),
    pytest.param("ice40", 128, True, marks=pytest.mark.slow),
    pytest.param("ecp5", 128, True, marks=pytest.mark.slow),
], ids=["ice40-80", "ecp5-80", "ice40-80-encrypt-only", "ecp5-80-encrypt-only", "ice40-128",
        "ecp5-128"])
def test_device_form_matches_reference(family, key_bits, decrypt):
    config, _, operations, _ = random_run(key_bits, decrypt)
    # (The cell models simulate slowly: four blocks under the first key, two under the next.)
    operations = operations[:5] + operations[7:10]
    platform = SimulationPlatform(family)
    run = simulate_cipher(DeviceForm(platform, key_bits, decrypt), operations)
    assert run.results == expected_results(config, operations)
    rams = {"ecp5": "DP16KD", "ice40": "SB_RAM40_4K"}
    assert platform.count(rams[family]) == 4
    assert platform.count(rams["ice40" if family == "ecp5" else "ecp5"]) == 0
    # Every state bit's next value is LUT cells (and on ECP5 with decryption, PFUMXes).
    luts = {"ecp5": "LUT4", "ice40": "SB_LUT4"}
    assert platform.count(luts[family]) >= 64
    assert platform.count("PFUMX") == (64 if family == "ecp5" and decrypt else 0)
