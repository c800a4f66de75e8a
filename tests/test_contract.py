# amaranth: UnusedElaboratable=no
"""The contract of :class:`~cipher_cores.cores.interface.BlockCipherSignature`, checked on every configuration
of the catalog (and the toy cipher), and shown to catch each kind of violation on a deliberately
broken core (``tests/support/broken_cores.py``). The contract is a type too: every core is a
:class:`~cipher_cores.cores.cipher.BlockCipher`, and every consumer refuses anything else.

The checks are in :mod:`tests.support.contract`. Runs are short (a few keys, a few blocks); long
sweeps are in the cipher test modules, marked ``slow``.
"""

import gc
import warnings

import pytest
from amaranth.hdl import Module, UnusedElaboratable
from amaranth.lib import wiring

from cipher_cores.cores.bus import CipherPeripheral, CorePort, CoreSelect, SharedCore
from cipher_cores.cores.catalog import catalog, configurations
from cipher_cores.cores.cipher import BlockCipher
from cipher_cores.cores.gcm import GCM
from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.modes import ModeOfOperation
from cipher_cores.cores.selftest import SelfTest
from cipher_cores.cores.sim import LoadKey as SimLoadKey, simulate_cipher

from .support.broken_cores import BROKEN
from .support.contract import (check_figures, check_key_waits_for_idle,
                               check_no_block_before_first_key, check_reset, check_stream_rules,
                               check_waiting_key_goes_first)
from .support.toy_cipher import TOY_ENTRY


#: Configurations slow in the Python simulator (about 30 s for the six checks, up to 140 s for
#: PRESENT with 31 rounds per cycle), checked with ``-m slow``; the default run keeps at least
#: one of each architecture: AES with Boolean S-boxes at 128 bits (the look-up S-boxes at 192
#: and 256), PRESENT at 8 rounds per cycle with 80-bit keys and at 16 and 31 encrypt-only (the
#: unrolled round generator; both directions at 31 and 128-bit keys at 8, 16 and 31 in the slow
#: run; 128-bit keys at 1, 2 and 4), the bit-serial PRESENT and the PRESENT in block RAM at 80
#: bits, both directions.
SLOW_CONFIGS = {"aes-pipelined-192", "aes-pipelined-256", "aes-pipelined2x-192",
                "aes-pipelined2x-256", "aes-ttable-192:tables=sbox",
                "aes-ttable-256:tables=sbox", "aes-compact-256", "aes-compact-192:decrypt=no",
                "aes-compact-256:decrypt=no", "present-keytable-128",
                "present-keytable-128:decrypt=no", "aes-192:sbox=boolean", "aes-256:sbox=boolean",
                "present-serial-128", "present-serial-128:decrypt=no"} | {
    f"aes-{bits}:{sbox}decrypt=no" for bits in (128, 192, 256)
    for sbox in ("", "sbox=logic,", "sbox=boolean,")} - {"aes-128:decrypt=no"} | {
    f"present-128:rounds_per_cycle={rounds}{decrypt}" for rounds in (8, 16, 31)
    for decrypt in ("", ",decrypt=no")} | {
    "present-80:rounds_per_cycle=16", "present-bram-128", "present-bram-128:decrypt=no",
    "present-80:rounds_per_cycle=31", "present-bram-80:decrypt=no", "present-serial-80:decrypt=no",
    # About 30 s per check in the Python simulator (its compile); tests/test_aes_masked.py runs
    # aes-masked-128 in the default run.
    "aes-masked-128", "aes-masked-192", "aes-masked-256",
    # The serial masked PRESENT by default with four S-boxes (80 and 128 bits) and one (80).
    "present-masked-serial-80:sboxes_per_cycle=2", "present-masked-serial-128:sboxes_per_cycle=1",
    "present-masked-serial-128:sboxes_per_cycle=2"}
CONFIGS = configurations() + [TOY_ENTRY.config()]
each_config = pytest.mark.parametrize("config", [
    pytest.param(config, id=config.slug,
                 marks=pytest.mark.slow if config.text in SLOW_CONFIGS else ())
    for config in CONFIGS])


# Every configuration of the catalog keeps the contract.

@each_config
def test_stream_rules_hold_under_random_gaps_and_back_pressure(config):
    check_stream_rules(config)


@each_config
def test_figures_equal_the_properties_for_every_key_block_and_direction(config):
    check_figures(config)


@each_config
def test_no_block_is_accepted_before_the_first_key(config):
    check_no_block_before_first_key(config)


@each_config
def test_key_waits_until_the_block_in_flight_has_left(config):
    check_key_waits_for_idle(config)


@each_config
def test_a_waiting_key_goes_before_further_blocks(config):
    check_waiting_key_goes_first(config)


@each_config
def test_reset_mid_key_load_mid_block_or_with_a_result_pending_leaves_no_key(config):
    check_reset(config)


# The checks catch each kind of violation.

BROKEN_CASES = [
    ("valid_drops", check_stream_rules, "output.valid dropped before the transfer"),
    ("payload_changes", check_stream_rules, "output.payload changed while valid"),
    ("spurious_output", check_stream_rules, "output.valid with no block in flight"),
    ("key_ready_while_busy", check_key_waits_for_idle, "key.ready while a block is in flight"),
    ("ready_before_key", check_no_block_before_first_key, "input.ready after reset, before a key"),
    ("ready_while_key_valid", check_stream_rules, "input.ready while key.valid"),
    ("wrong_latency", check_figures, "latency: measured 3, property 4"),
    ("wrong_interval", check_figures, "initiation interval: measured 4, property 3"),
    ("wrong_key_load", check_figures, "key load: measured 1, property 2"),
    ("data_dependent_timing", check_figures,
     r"latency depends on the key, data or direction: \[3, 4\]"),
    ("survives_reset", check_reset, "input.ready after a reset mid key load, before a key"),
]


@pytest.mark.parametrize("fault, check, message", BROKEN_CASES, ids=[c[0] for c in BROKEN_CASES])
def test_each_broken_core_fails_its_check(fault, check, message):
    with pytest.raises(AssertionError, match=message):
        check(BROKEN[fault].config())


def test_the_checks_pass_on_the_core_the_broken_ones_wrap():
    toy = TOY_ENTRY.config()
    for check in (check_stream_rules, check_figures, check_no_block_before_first_key,
                  check_key_waits_for_idle, check_waiting_key_goes_first, check_reset):
        check(toy)


# The contract as a type.

def test_every_catalog_entry_builds_a_block_cipher_stating_its_configuration():
    for entry in catalog().values():
        assert issubclass(entry.component, BlockCipher), entry.name
    # The cores are built, not elaborated: they are collected here, with Amaranth's warning
    # about unused elaboratables (created in the catalog's module, not this one) ignored.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        for config in CONFIGS + [entry.config() for entry in BROKEN.values()]:
            core = config.build()
            assert isinstance(core, BlockCipher), config.text
            assert (core.block_bits, core.key_bits, core.decrypts) == \
                (config.block_bits, config.key_bits, config.decrypts), config.text
            for figure in (core.latency, core.initiation_interval, core.key_load_cycles):
                assert type(figure) is int and figure > 0, config.text
        del core
        gc.collect()


class LookAlike(wiring.Component):
    """The right ports and figures, but not a :class:`BlockCipher`: duck typing is not enough."""
    latency = initiation_interval = key_load_cycles = 1
    decrypts = True

    def __init__(self):
        super().__init__(BlockCipherSignature(128, 128))

    def elaborate(self, platform):
        return Module()


NON_CORE_CONSUMERS = {
    "ModeOfOperation": (lambda core: ModeOfOperation(core), "core"),
    "GCM": (lambda core: GCM(core), "core"),
    "CipherPeripheral": (lambda core: CipherPeripheral([core]), "cores[0]"),
    "SharedCore": (lambda core: SharedCore(core), "core"),
    "CorePort": (lambda core: CorePort(core), "core"),
    "CoreSelect": (lambda core: CoreSelect([core]), "cores[0]"),
    "simulate_cipher": (lambda core: simulate_cipher(core, [SimLoadKey(0)]), "core"),
    "SelfTest": (lambda core: SelfTest(core, vectors=[(0, 0, 0, 0)], loop_key=0, loop_blocks=1,
                                       check_value=0, check_blocks=1), "core"),
}


@pytest.mark.parametrize("consumer", NON_CORE_CONSUMERS)
@pytest.mark.parametrize("non_core", [LookAlike, lambda: "aes"], ids=["look-alike", "text"])
def test_a_consumer_refuses_what_is_not_a_block_cipher(consumer, non_core):
    build, name = NON_CORE_CONSUMERS[consumer]
    value = non_core()
    with pytest.raises(TypeError) as info:
        build(value)
    assert info.value.args[0] == \
        f"{name} must be a BlockCipher (a cipher core of this library), not {value!r}"


def test_an_entry_whose_component_is_not_a_block_cipher_is_refused_when_built():
    import dataclasses
    entry = dataclasses.replace(TOY_ENTRY, component=lambda key_bits: LookAlike())
    with pytest.raises(TypeError, match=r"^the component of catalog entry 'toy' must be a "
                                        r"BlockCipher \(a cipher core of this library\), "
                                        r"not <.*LookAlike object at .*>$"):
        entry.config().build()
