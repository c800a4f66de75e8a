# amaranth: UnusedElaboratable=no
"""The contract of :class:`~cipher_cores.cores.interface.BlockCipherSignature`, checked on every configuration
of the catalog (and the toy cipher), and shown to catch each kind of violation on a deliberately
broken core (``tests/broken_cores.py``). The contract is a type too: every core is a
:class:`~cipher_cores.cores.cipher.BlockCipher`, and every consumer refuses anything else.

Each ``check_*`` function raises :exc:`AssertionError` with a message naming the rule broken.
Runs are short (a few keys, a few blocks); long sweeps are in the cipher test modules, marked
``slow``.
"""

import gc
import random
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
from cipher_cores.cores.sim import LoadKey as SimLoadKey, simulate_cipher

from .broken_cores import BROKEN
from .support.helpers import (LoadKey, Process, expected_results, key_groups, pulse_reset,
                              random_operations, reference, run_testbench, run_with_contract,
                              stream_get, stream_put, ticks, wait_for)
from .toy_cipher import TOY_ENTRY


#: Configurations slow in the Python simulator (about 30 s for the six checks, up to 140 s for
#: PRESENT with 31 rounds per cycle), checked with ``-m slow``; the default run keeps at least
#: one of each architecture: AES with Boolean S-boxes at 128 bits (the look-up S-boxes at 192
#: and 256), PRESENT at 8, 16 and 31 rounds per cycle with 80-bit keys (128-bit keys at 1, 2
#: and 4), the bit-serial PRESENT at 80 bits.
SLOW_CONFIGS = {"aes-pipelined-192", "aes-pipelined-256", "aes-ttable-192:tables=sbox",
                "aes-ttable-256:tables=sbox", "aes-compact-256", "aes-compact-192:decrypt=no",
                "aes-compact-256:decrypt=no", "present-keytable-128",
                "present-keytable-128:decrypt=no", "aes-192:sbox=boolean", "aes-256:sbox=boolean",
                "present-serial-128", "present-serial-128:decrypt=no"} | {
    f"aes-{bits}:{sbox}decrypt=no" for bits in (128, 192, 256)
    for sbox in ("", "sbox=logic,", "sbox=boolean,")} - {"aes-128:decrypt=no"} | {
    f"present-128:rounds_per_cycle={rounds}{decrypt}" for rounds in (8, 16, 31)
    for decrypt in ("", ",decrypt=no")}
CONFIGS = configurations() + [TOY_ENTRY.config()]
each_config = pytest.mark.parametrize("config", [
    pytest.param(config, id=config.slug,
                 marks=pytest.mark.slow if config.text in SLOW_CONFIGS else ())
    for config in CONFIGS])


def assert_no_violations(violations):
    assert not violations, f"contract broken at {violations[0]}"


# The checks.

def check_stream_rules(config, seed="stream"):
    """Random keys and blocks with random gaps and back-pressure: the monitor sees no broken rule,
    the results are the reference's, and back-pressure did delay results."""
    core = config.build()
    rng = random.Random(f"{seed}-{config.slug}")
    operations = random_operations(config, rng, keys=2,
                                   blocks_per_key=2 if core.latency > LONG_LATENCY else 3)
    outcome = run_with_contract(core, operations, rng=rng, max_gap=3,
                                max_stall=2 * core.latency + 4)
    assert_no_violations(outcome.violations)
    run = outcome.run
    assert run.output.violations == [], "output stream rule broken"
    assert run.results == expected_results(config, operations), "results differ from the reference"
    assert any(latency > core.latency for latency in run.latencies), \
        "back-pressure never delayed a result: the check did not exercise stalls"


#: Cores with a longer latency (the bit-serial ones) get fewer blocks, to keep the run short.
LONG_LATENCY = 64


def constant_time_operations(config, rng, *, short=False):
    """Keys all zeros, all ones and random (``short``: the last left out); under each, blocks all
    zeros and all ones (under the last key, a random one too), each encrypted and decrypted."""
    operations = []
    keys = (0, (1 << config.key_bits) - 1, rng.getrandbits(config.key_bits))[:2 if short else 3]
    for index, key in enumerate(keys):
        operations.append(LoadKey(key))
        blocks = [0, (1 << config.block_bits) - 1]
        if index == len(keys) - 1:
            blocks.append(rng.getrandbits(config.block_bits))
        for block in blocks:
            operations += [Process(block, False), Process(block, True)]
    return operations


def check_figures(config):
    """At full speed: latency, initiation interval and key load are each one value, whatever the
    key, block and direction, and that value is the core's property; a key transfers on the edge
    after the previous result left."""
    core = config.build()
    operations = constant_time_operations(config, random.Random(f"figures-{config.slug}"),
                                          short=core.latency > LONG_LATENCY)
    outcome = run_with_contract(core, operations)
    assert_no_violations(outcome.violations)
    run = outcome.run
    assert run.results == expected_results(config, operations), "results differ from the reference"
    groups = key_groups(run, operations)
    latencies = set(run.latencies)
    intervals = {b[0] - a[0] for _, blocks in groups for a, b in zip(blocks, blocks[1:])}
    key_loads = {blocks[0][0] - key_edge for key_edge, blocks in groups}
    for name, measured in (("latency", latencies), ("initiation interval", intervals),
                           ("key load", key_loads)):
        assert len(measured) == 1, \
            f"{name} depends on the key, data or direction: {sorted(measured)}"
    assert latencies == {core.latency}, \
        f"latency: measured {latencies.pop()}, property {core.latency}"
    assert intervals == {core.initiation_interval}, \
        f"initiation interval: measured {intervals.pop()}, property {core.initiation_interval}"
    assert key_loads == {core.key_load_cycles}, \
        f"key load: measured {key_loads.pop()}, property {core.key_load_cycles}"
    output_intervals = {b[1] - a[1] for _, blocks in groups for a, b in zip(blocks, blocks[1:])}
    assert output_intervals == {core.initiation_interval}, \
        f"output interval: measured {sorted(output_intervals)}"
    assert [key_edge for key_edge, _ in groups[1:]] == \
        [blocks[-1][1] + 1 for _, blocks in groups[:-1]], \
        "a key waited longer than for the core to be idle"


async def put_block(ctx, core, block, decrypt=False):
    await stream_put(ctx, core.input, {"block": block, "decrypt": int(decrypt)})


async def check_idle_without_key(ctx, core, edges, when):
    """With a block offered, for ``edges`` edges: no block taken, no output, key.ready high."""
    ctx.set(core.input.valid, 1)
    ctx.set(core.input.payload, {"block": 0x0123456789abcdef, "decrypt": 0})
    for _ in range(edges):
        assert not ctx.get(core.input.ready), f"input.ready {when}, before a key"
        assert not ctx.get(core.output.valid), f"output.valid {when}"
        assert ctx.get(core.key.ready), f"key.ready low in an idle core {when}"
        await ctx.tick()
    ctx.set(core.input.valid, 0)


async def check_one_block(ctx, config, core, key, block, decrypt):
    await stream_put(ctx, core.key, key)
    await put_block(ctx, core, block, decrypt)
    assert await stream_get(ctx, core.output) == reference(config, key, block, decrypt), \
        "result differs from the reference"


def check_no_block_before_first_key(config):
    """After reset, with a block offered and no key: no block is taken, no output appears."""
    core = config.build()
    rng = random.Random(f"first-key-{config.slug}")
    violations = []

    async def testbench(ctx, rst):
        await check_idle_without_key(ctx, core, core.latency + core.key_load_cycles + 2,
                                     "after reset")
        await check_one_block(ctx, config, core, rng.getrandbits(config.key_bits),
                              rng.getrandbits(config.block_bits), True)

    run_testbench(core, testbench, monitor=violations)
    assert_no_violations(violations)


def check_key_waits_for_idle(config):
    """A key offered while a block is in the core (its result held back) waits until the result
    has left; the next block then runs under the new key."""
    core = config.build()
    rng = random.Random(f"key-waits-{config.slug}")
    old_key, new_key = rng.getrandbits(config.key_bits), rng.getrandbits(config.key_bits)
    block = rng.getrandbits(config.block_bits)
    violations = []

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, old_key)
        await put_block(ctx, core, block)
        ctx.set(core.key.valid, 1)
        ctx.set(core.key.payload, new_key)
        for _ in range(core.latency + 5):
            assert not ctx.get(core.key.ready), "key.ready while a block is in flight"
            await ctx.tick()
        assert ctx.get(core.output.valid), "no result after the latency"
        assert await stream_get(ctx, core.output) == reference(config, old_key, block, False), \
            "result differs from the reference"
        await wait_for(ctx, core.key.ready)
        ctx.set(core.key.valid, 0)
        await put_block(ctx, core, block, True)
        assert await stream_get(ctx, core.output) == reference(config, new_key, block, True), \
            "the block after a key change did not use the new key"

    run_testbench(core, testbench, monitor=violations)
    assert_no_violations(violations)


def check_waiting_key_goes_first(config):
    """A key and a block offered together, in an idle core and while a block is in flight: the key
    transfers first, and the block runs under it."""
    core = config.build()
    rng = random.Random(f"key-first-{config.slug}")
    keys = [rng.getrandbits(config.key_bits) for _ in range(3)]
    blocks = [rng.getrandbits(config.block_bits) for _ in range(3)]
    violations, edges = [], {"key": [], "input": [], "output": []}

    async def offer_both(ctx, key, block):
        ctx.set(core.key.valid, 1)
        ctx.set(core.key.payload, key)
        ctx.set(core.input.valid, 1)
        ctx.set(core.input.payload, {"block": block, "decrypt": 0})
        edge = 0
        while ctx.get(core.key.valid) or ctx.get(core.input.valid):
            key_transfer = ctx.get(core.key.valid) and ctx.get(core.key.ready)
            input_transfer = ctx.get(core.input.valid) and ctx.get(core.input.ready)
            await ctx.tick()
            edge += 1
            if key_transfer:
                edges["key"].append(edge)
                ctx.set(core.key.valid, 0)
            if input_transfer:
                edges["input"].append(edge)
                ctx.set(core.input.valid, 0)
        return edges["key"][-1], edges["input"][-1]

    async def testbench(ctx, rst):
        await stream_put(ctx, core.key, keys[0])
        await ticks(ctx, core.key_load_cycles)
        key_edge, block_edge = await offer_both(ctx, keys[1], blocks[1])
        assert key_edge < block_edge, "a block went before the key offered with it"
        ctx.set(core.output.ready, 1)
        assert await stream_get(ctx, core.output) == reference(config, keys[1], blocks[1], False), \
            "the block did not use the key offered with it"
        await put_block(ctx, core, blocks[0])
        ctx.set(core.output.ready, 1)
        key_edge, block_edge = await offer_both(ctx, keys[2], blocks[2])
        assert key_edge < block_edge, "a block went before a waiting key"
        ctx.set(core.output.ready, 0)
        assert await stream_get(ctx, core.output) == reference(config, keys[2], blocks[2], False), \
            "the block did not use the key that waited"

    run_testbench(core, testbench, monitor=violations)
    assert_no_violations(violations)


RESET_POINTS = ("mid_key_load", "mid_block", "result_pending")


def check_reset(config, points=RESET_POINTS):
    """A reset in the middle of a key load, in the middle of a block, or with a result pending
    (each of ``points`` in turn, in one simulation) leaves an idle core with no key: no block is
    taken and no output appears until a new key is loaded, and then blocks run under it."""
    core = config.build()
    rng = random.Random(f"reset-{config.slug}")
    violations = []

    async def testbench(ctx, rst):
        for when in points:
            key, block = rng.getrandbits(config.key_bits), rng.getrandbits(config.block_bits)
            await stream_put(ctx, core.key, key)
            if when == "mid_key_load":
                await ticks(ctx, core.key_load_cycles // 2)
            else:
                await put_block(ctx, core, block, True)
                if when == "mid_block":
                    await ticks(ctx, rng.randrange(1, max(2, core.latency - 1)))
                else:
                    await wait_for(ctx, core.output.valid)
            await pulse_reset(ctx, rst)
            await check_idle_without_key(ctx, core, core.latency + core.key_load_cycles + 2,
                                         f"after a reset {when.replace('_', ' ')}")
            await check_one_block(ctx, config, core, key ^ 1, block, True)

    run_testbench(core, testbench, monitor=violations)
    assert_no_violations(violations)


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
