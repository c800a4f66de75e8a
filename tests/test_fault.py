# amaranth: UnusedElaboratable=no
"""FaultDetecting: the checked core's vectors and contract, a forced fault (a register of the
core set from the testbench), the sticky alert, and a small fault-injection campaign."""

import argparse
import random

import pytest
from amaranth.hdl import ClockDomain, Fragment, Module
from amaranth.sim import Simulator

from cipher_cores.cores.catalog import parse_config
from cipher_cores.cores.fault import Check, FaultDetecting, fault_detecting_config
from cipher_cores.cores.sim import watchdog
from cipher_cores.scripts.flow import faults

from .support.contract import (check_figures, check_no_block_before_first_key, check_reset,
                               check_stream_rules, check_waiting_key_goes_first)
from .support.helpers import (assert_one_line_error, expected_results, reference,
                              simulate_cipher, stream_get, stream_put, ticks,
                              vector_operations, wait_for)


CONFIGS = ["present-80", "aes"]


def checked(text):
    return fault_detecting_config(parse_config(text))


def bare(text):
    """A new core of ``text``, built here (so this module's UnusedElaboratable=no covers it)."""
    config = parse_config(text)
    return config.spec.component(key_bits=config.key_bits, **config.all_options())


@pytest.mark.parametrize("text", CONFIGS)
def test_printed_vectors(text):
    config = checked(text)
    operations = vector_operations(config)
    assert simulate_cipher(config.build(), operations).results == \
        expected_results(config, operations)


@pytest.mark.parametrize("text", CONFIGS + [
    pytest.param("present-80:decrypt=no", marks=pytest.mark.slow),
    pytest.param("aes:decrypt=no", marks=pytest.mark.slow)])
def test_contract(text):
    config = checked(text)
    check_figures(config)
    check_stream_rules(config)
    check_no_block_before_first_key(config)
    check_waiting_key_goes_first(config)
    check_reset(config)


@pytest.mark.parametrize("text, latency, key_load", [("present-80", 2 * 32 + 34 + 3, 34 + 3),
                                                     ("aes", 2 * 11 + 11 + 3, 11 + 3)])
def test_figures_from_the_core(text, latency, key_load):
    core = FaultDetecting(bare(text))
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == \
        (latency, latency + 1, key_load)


def test_check_defaults_to_the_inverse_where_the_core_decrypts():
    assert FaultDetecting(bare("present-80")).check is Check.INVERSE
    assert FaultDetecting(bare("present-80:decrypt=no")).check is Check.TWICE


def test_bad_arguments():
    with pytest.raises(TypeError, match=r"^core must be a BlockCipher"):
        FaultDetecting(object())
    with pytest.raises(ValueError, match=r"^check must be 'inverse', 'twice' or None, "
                                         r"not 'thrice'$"):
        FaultDetecting(bare("aes"), check="thrice")
    with pytest.raises(ValueError, match=r"^check must be 'twice' for an encrypt-only core "
                                         r"\(core\.decrypts is False\), not 'inverse'$"):
        FaultDetecting(bare("aes:decrypt=no"), check="inverse")


def _sync_registers(fragment, path):
    """The registers (signals assigned in ``sync``) of the subfragment at ``path``, by name."""
    for name in path:
        fragment = next(sub for sub, sub_name, _ in fragment.subfragments if sub_name == name)
    return {signal.name: signal for statement in fragment.statements.get("sync", ())
            for signal in statement._lhs_signals()}


class Bench:
    """A checked PRESENT-80 in a simulator, with the core's registers reachable by name."""

    def __init__(self, text="present-80"):
        self.config = checked(text)
        self.dut = self.config.build()
        m = Module()
        m.domains.sync = domain = ClockDomain()
        m.submodules.dut = self.dut
        fragment = Fragment.get(m, None)
        self.core_registers = _sync_registers(fragment, ["dut", "core"])
        self.wrapper_registers = _sync_registers(fragment, ["dut"])
        self.rst = domain.rst
        self.sim = Simulator(fragment)
        self.sim.add_clock(1e-8)
        self.rng = random.Random(text)
        self.key = self.rng.getrandbits(self.config.key_bits)
        self.blocks = [self.rng.getrandbits(self.config.block_bits) for _ in range(2)]

    def run(self, testbench):
        self.sim.add_testbench(watchdog(20 * self.dut.latency), background=True)
        self.sim.add_testbench(testbench)
        self.sim.run()

    def expected(self, key, block, decrypt=False):
        return reference(self.config, key, block, decrypt)

    async def put(self, ctx, block, decrypt=False):
        await stream_put(ctx, self.dut.input, {"block": block, "decrypt": int(decrypt)})

    async def start(self, ctx, decrypt=False):
        """Load the key and put the first block."""
        await stream_put(ctx, self.dut.key, self.key)
        await self.put(ctx, self.blocks[0], decrypt)

    async def assert_block_caught(self, ctx, block, what):
        """Offer ``block``: for a latency and more no result comes out, then ``alert`` is high."""
        await self.put(ctx, block)
        ctx.set(self.dut.output.ready, 1)
        for _ in range(self.dut.latency + 2):
            assert not ctx.get(self.dut.output.valid), f"a result under {what} came out"
            await ctx.tick()
        assert ctx.get(self.dut.alert), f"{what} went unseen"

    async def assert_alerted(self, ctx, edges):
        """For ``edges`` edges: alert high, no result offered, no block taken, key.ready high."""
        dut = self.dut
        ctx.set(dut.input.valid, 1)
        ctx.set(dut.output.ready, 1)
        for _ in range(edges):
            assert ctx.get(dut.alert), "alert fell without a reset or a new key"
            assert not ctx.get(dut.output.valid), "a result came out after the alert"
            assert ctx.get(dut.output.payload) == 0, "the output payload shows a result"
            assert not ctx.get(dut.input.ready), "a block was taken while alerted"
            assert ctx.get(dut.key.ready), "key.ready low while alerted"
            await ctx.tick()
        ctx.set(dut.input.valid, 0)
        ctx.set(dut.output.ready, 0)


def _flip(ctx, register, bit=0):
    ctx.set(register, ctx.get(register) ^ (1 << bit))


def test_fault_mid_block_raises_alert_and_withholds_result():
    bench = Bench()
    dut = bench.dut

    async def testbench(ctx):
        await bench.start(ctx)
        ctx.set(dut.output.ready, 1)
        await ticks(ctx, 10)                        # in the middle of the first pass
        assert not ctx.get(dut.alert)
        _flip(ctx, bench.core_registers["state"], 17)
        for _ in range(dut.latency):
            assert not ctx.get(dut.output.valid), "a result after a fault in the state"
            await ctx.tick()
        await bench.assert_alerted(ctx, 3 * dut.latency)

    bench.run(testbench)


def test_alert_is_cleared_by_a_new_key_and_blocks_run_again():
    bench = Bench()
    dut, core = bench.dut, bench.dut.core
    new_key, block = bench.key ^ 0x5a5a, bench.blocks[0]

    async def testbench(ctx):
        await bench.start(ctx, decrypt=True)
        await ticks(ctx, core.latency + core.key_load_cycles + 10)     # in the check pass
        _flip(ctx, bench.core_registers["state"], 3)
        await wait_for(ctx, dut.alert)
        await bench.assert_alerted(ctx, 20)
        await stream_put(ctx, dut.key, new_key)
        assert not ctx.get(dut.alert), "a new key left the alert high"
        await bench.put(ctx, block, True)
        assert await stream_get(ctx, dut.output) == bench.expected(new_key, block, True)
        assert not ctx.get(dut.alert)

    bench.run(testbench)


def test_alert_is_cleared_by_reset():
    bench = Bench()
    dut = bench.dut

    async def testbench(ctx):
        await bench.start(ctx)
        await ticks(ctx, 4)
        _flip(ctx, bench.core_registers["counter"], 1)
        await wait_for(ctx, dut.alert)
        ctx.set(bench.rst, 1)
        await ctx.tick()
        ctx.set(bench.rst, 0)
        assert not ctx.get(dut.alert), "reset left the alert high"
        assert not ctx.get(dut.input.ready), "a block accepted after reset without a key"

    bench.run(testbench)


@pytest.mark.parametrize("text", ["present-80", "present-80:decrypt=no"])
def test_key_register_fault_between_blocks_is_caught_on_the_next_block(text):
    """A persistent fault: the core's loaded key flipped while the wrapper is idle. Computing
    twice (encrypt-only) without the key reload, both passes would use the wrong key and
    agree."""
    bench = Bench(text)

    async def testbench(ctx):
        await bench.start(ctx)
        assert await stream_get(ctx, bench.dut.output) == \
            bench.expected(bench.key, bench.blocks[0])
        await ticks(ctx, 2)
        _flip(ctx, bench.core_registers["key_first"], 40)
        await bench.assert_block_caught(ctx, bench.blocks[1], "a flipped key register")

    bench.run(testbench)


def test_wrapper_key_copy_fault_is_caught():
    bench = Bench()

    async def testbench(ctx):
        await stream_put(ctx, bench.dut.key, bench.key)
        await ticks(ctx, bench.dut.key_load_cycles)
        _flip(ctx, bench.wrapper_registers["key_copy"], 5)
        await bench.assert_block_caught(ctx, bench.blocks[0], "a flipped key copy")

    bench.run(testbench)


def test_small_campaign_has_no_silent_result():
    campaign = faults.run_campaign(parse_config("present-80"), faults=200, seed=3)
    assert campaign.counts["silent"] == 0
    assert campaign.counts["stalled"] == 0
    assert campaign.counts["detected"] > 50, "the campaign detected (almost) nothing"
    assert sum(campaign.counts.values()) == 200
    names = {name for name, _ in campaign.flip_flops}
    assert {"core state", "core key_first", "key_copy", "engine result"} <= names


@pytest.mark.slow
def test_unprotected_campaign_finds_silent_results():
    """The campaign can see a silent result: the bare core releases many."""
    campaign = faults.run_campaign(parse_config("present-80"), faults=300, checked=False)
    assert campaign.counts["silent"] > 100
    assert campaign.counts["detected"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("text", ["present-80", "aes", "aes:decrypt=no", "present-80:decrypt=no"])
def test_campaign_10000_faults(text):
    campaign = faults.run_campaign(parse_config(text), faults=10000)
    assert campaign.counts["silent"] == 0
    assert campaign.counts["stalled"] == 0


def test_cli_error_is_one_line(capsys):
    parser = argparse.ArgumentParser()
    faults.add_arguments(parser)
    code = faults.run(parser.parse_args(["--core", "nonsense", "--faults", "5"]))
    assert_one_line_error(code, capsys.readouterr().err, "unknown core 'nonsense'")
    code = faults.run(parser.parse_args(["--core", "present-80", "--blocks", "1"]))
    assert_one_line_error(code, capsys.readouterr().err, "blocks must be an integer of at least 2")
