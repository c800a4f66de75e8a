# amaranth: UnusedElaboratable=no
"""The PRESENT core: the paper's vectors, differential tests against the reference model, its
cycle table and the encrypt-only core. The stream contract and the measured cycle figures are
checked on every configuration in ``tests/test_contract.py``."""

import random
from collections import Counter

import pytest

from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.present import PRESENT, ROUNDS_PER_CYCLE
from cipher_cores.cores.present.reference import encrypt_block
from cipher_cores.cores.present.tables import BLOCK_BITS, KEY_SIZES

from .support.cell_models import SimulationPlatform
from .support.helpers import random_run as shared_random_run
from .support.helpers import (Process, check_output_holds, expected_results, key_groups,
                              random_operations, run_testbench, simulate_cipher, vector_operations)
from .support.contract import (check_figures, check_key_waits_for_idle,
                               check_no_block_before_first_key, check_reset, check_stream_rules,
                               check_waiting_key_goes_first)


CONFIGURATIONS = [(key_bits, rounds) for key_bits in KEY_SIZES for rounds in ROUNDS_PER_CYCLE]
CONFIGURATION_IDS = [f"{key_bits}-r{rounds}" for key_bits, rounds in CONFIGURATIONS]
#: 16 rounds per cycle (the unrolled round generator that 8 and 31 exercise too) in the slow run.
configurations = pytest.mark.parametrize("key_bits, rounds_per_cycle", [
    pytest.param(key_bits, rounds, id=name, marks=[pytest.mark.slow] if rounds == 16 else [])
    for (key_bits, rounds), name in zip(CONFIGURATIONS, CONFIGURATION_IDS)])


def present_config(key_bits, rounds_per_cycle=1, decrypt=True):
    return get_core("present").config(key_bits, rounds_per_cycle=rounds_per_cycle,
                                      decrypt=decrypt)


def random_run(key_bits, rounds_per_cycle, decrypt=True):
    # Encrypt-only cores get blocks asking for decryption too: they must encrypt them.
    return shared_random_run("present", key_bits, seed=rounds_per_cycle, keys=4,
                             blocks_per_key=6, rounds_per_cycle=rounds_per_cycle,
                             decrypt=decrypt)


# Constructor and parameters.

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_is_the_shared_interface(key_bits):
    assert PRESENT(key_bits).signature == BlockCipherSignature(64, key_bits)


def test_default_parameters():
    core = PRESENT()
    assert (core.key_bits, core.rounds_per_cycle, core.decrypts) == (80, 1, True)


@pytest.mark.parametrize("rounds_per_cycle, figure", [
    (1, 32), (2, 17), (4, 9), (8, 5), (16, 3), (31, 2),
])
def test_cycle_figures(rounds_per_cycle, figure):
    for key_bits in KEY_SIZES:
        core = PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle)
        assert core.latency == figure
        assert core.initiation_interval == figure
        assert core.key_load_cycles == figure + 2
        assert PRESENT(key_bits, rounds_per_cycle=rounds_per_cycle,
                       decrypt=False).key_load_cycles == 1


def test_cycle_budget_of_one_round_per_cycle():
    core = PRESENT()
    # A key load: copy into K, 31 forward updates, copy K into the final key register.
    assert core.latency <= 32 and core.initiation_interval <= 32 and core.key_load_cycles <= 34


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_bits": 64}, ValueError, r"^key_bits must be 80 or 128, not 64$"),
    ({"key_bits": 256}, ValueError, r"^key_bits must be 80 or 128, not 256$"),
    ({"key_bits": "80"}, TypeError, r"^key_bits must be an integer \(80 or 128\), not '80'$"),
    ({"key_bits": 80.0}, TypeError, r"^key_bits must be an integer \(80 or 128\), not 80\.0$"),
    ({"key_bits": True}, TypeError, r"^key_bits must be an integer \(80 or 128\), not True$"),
    ({"rounds_per_cycle": 3}, ValueError,
     r"^rounds_per_cycle must be 1, 2, 4, 8, 16 or 31, not 3$"),
    ({"rounds_per_cycle": 0}, ValueError,
     r"^rounds_per_cycle must be 1, 2, 4, 8, 16 or 31, not 0$"),
    ({"rounds_per_cycle": 32}, ValueError,
     r"^rounds_per_cycle must be 1, 2, 4, 8, 16 or 31, not 32$"),
    ({"rounds_per_cycle": "1"}, TypeError,
     r"^rounds_per_cycle must be an integer \(1, 2, 4, 8, 16 or 31\), not '1'$"),
    ({"rounds_per_cycle": True}, TypeError,
     r"^rounds_per_cycle must be an integer \(1, 2, 4, 8, 16 or 31\), not True$"),
    ({"decrypt": 1}, TypeError, r"^decrypt must be a bool \(True or False\), not 1$"),
    ({"decrypt": None}, TypeError, r"^decrypt must be a bool \(True or False\), not None$"),
])
def test_constructor_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        PRESENT(**kwargs)


# The paper's vectors and differential tests, for every key size and rounds_per_cycle.

@configurations
def test_paper_vectors_both_directions(key_bits, rounds_per_cycle):
    config = present_config(key_bits, rounds_per_cycle)
    operations = vector_operations(config)
    run = simulate_cipher(config.build(), operations)
    assert run.results == expected_results(config, operations)
    assert len(run.results) == 8


#: The differential test at 31 rounds per cycle (15 to 50 s in the Python simulator) is in the
#: slow run; 1 to 16 rounds (16: the unrolled round generator of 31) and the paper's vectors at
#: 31 rounds stay in the default run, with the contract checks of tests/test_contract.py at 31.
@pytest.mark.parametrize("key_bits, rounds_per_cycle", [
    pytest.param(*configuration, marks=pytest.mark.slow) if configuration[1] == 31
    else configuration for configuration in CONFIGURATIONS], ids=CONFIGURATION_IDS)
def test_random_blocks_with_key_changes_match_reference(key_bits, rounds_per_cycle):
    config, _, operations, run = random_run(key_bits, rounds_per_cycle)
    assert run.results == expected_results(config, operations)


class DeviceForm(PRESENT):
    """The core as it is built for ``family`` (``"ice40"`` or ``"ecp5"``): on iCE40 the final key
    register copied from K rather than from K's next value and `key_loaded` an ``SB_LUT4`` cell;
    on ECP5 state and key bits of LUT4 and PFUMX cells (:mod:`cipher_cores.cores.lut`);
    encrypt-only on iCE40, the handshake of ``SB_LUT4`` cells and the state's clock enable in
    copies; the cells simulated with :class:`~tests.support.cell_models.LUTCellModel`, which a
    :class:`~tests.support.cell_models.SimulationPlatform` (:attr:`platform`) supplies."""
    def __init__(self, family, key_bits, rounds_per_cycle, decrypt=True):
        self.platform = SimulationPlatform(family)
        super().__init__(key_bits, rounds_per_cycle=rounds_per_cycle, decrypt=decrypt)

    def elaborate(self, platform):
        return super().elaborate(self.platform)


@pytest.mark.parametrize("family", ["ice40", "ecp5"])
@pytest.mark.parametrize("key_bits, rounds_per_cycle", [
    (80, 1), pytest.param(128, 1, marks=pytest.mark.slow), (80, 4)])   # 128 bits: -m slow
def test_device_form_matches_reference(family, key_bits, rounds_per_cycle):
    config, _, operations, _ = random_run(key_bits, rounds_per_cycle)
    vectors = vector_operations(config)
    for ops in (operations, vectors):
        core = DeviceForm(family, key_bits, rounds_per_cycle)
        run = simulate_cipher(core, ops)
        assert run.results == expected_results(config, ops)
    cells = Counter(cell.kind for cell in core.platform.cells)
    if family == "ice40":
        assert cells == {"SB_LUT4": 1}                  # `key_loaded`
    elif rounds_per_cycle == 1:
        assert cells["PFUMX"] == BLOCK_BITS + key_bits   # a slice per state bit and key bit
    else:
        assert set(cells) == {"LUT4"}


class FormConfig:
    """A catalog configuration whose :meth:`build` makes a :class:`DeviceForm` instead."""
    def __init__(self, config, device):
        self._config, self._device = config, device

    def __getattr__(self, name):
        return getattr(self._config, name)

    def build(self):
        options = self._config.all_options()
        return DeviceForm(self._device, self._config.key_bits, options["rounds_per_cycle"],
                          decrypt=options["decrypt"])


@pytest.mark.parametrize("check", [
    check_stream_rules, check_figures, check_no_block_before_first_key, check_key_waits_for_idle,
    check_waiting_key_goes_first, check_reset], ids=lambda check: check.__name__[6:])
def test_encrypt_only_ice40_form_keeps_the_contract(check):
    # On iCE40 the encrypt-only core has a handshake of its own (SB_LUT4 cells, `running` and
    # `output_valid` standing for the idle flag) and its state's clock enable in copies.
    check(FormConfig(present_config(80, 1, decrypt=False), "ice40"))


@pytest.mark.slow
@pytest.mark.parametrize("decrypt", [True, False], ids=["integrated", "encrypt-only"])
@configurations
def test_long_random_sweep_at_full_speed(key_bits, rounds_per_cycle, decrypt):
    config = present_config(key_bits, rounds_per_cycle, decrypt)
    core = config.build()
    operations = random_operations(config, random.Random(1000 + rounds_per_cycle), keys=16,
                                   blocks_per_key=16, extreme_keys=True)
    run = simulate_cipher(core, operations)
    assert run.results == expected_results(config, operations)
    assert run.latencies == [core.latency] * len(run.results)
    groups = key_groups(run, operations)
    assert [blocks[0][0] - key_edge for key_edge, blocks in groups] == \
        [core.key_load_cycles] * len(groups)
    for _, blocks in groups:
        edges = [edge for edge, _ in blocks]
        assert {b - a for a, b in zip(edges, edges[1:])} == {core.initiation_interval}


@pytest.mark.slow
@pytest.mark.parametrize("decrypt", [True, False], ids=["integrated", "encrypt-only"])
@configurations
def test_long_random_sweep_with_stalls(key_bits, rounds_per_cycle, decrypt):
    config = present_config(key_bits, rounds_per_cycle, decrypt)
    core = config.build()
    operations = random_operations(config, random.Random(2000 + rounds_per_cycle), keys=12,
                                   blocks_per_key=12, extreme_keys=True)
    run = simulate_cipher(core, operations, rng=random.Random(key_bits + rounds_per_cycle),
                          max_gap=8, max_stall=3 * core.latency)
    assert run.results == expected_results(config, operations)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])


# The encrypt-only core.

@configurations
def test_encrypt_only_core_encrypts_every_block(key_bits, rounds_per_cycle):
    config, _, operations, run = random_run(key_bits, rounds_per_cycle, decrypt=False)
    assert any(op.decrypt for op in operations if isinstance(op, Process))
    assert run.results == [encrypt_block(key, op.block, key_bits)
                           for key, op in keyed_blocks(operations)]


def keyed_blocks(operations):
    """(key, Process) for each block of ``operations``."""
    key = None
    for op in operations:
        if isinstance(op, Process):
            yield key, op
        else:
            key = op.key


# One block at a time: the next block waits for the result to be taken (the contract itself is
# checked on every configuration in tests/test_contract.py).

def test_output_holds_while_not_ready():
    config = present_config(80, rounds_per_cycle=8)
    core = config.build()

    async def testbench(ctx, rst):
        await check_output_holds(ctx, config, core, 0x0123456789abcdef0123, 0x0011223344556677,
                                 decrypt=True)

    run_testbench(core, testbench)
