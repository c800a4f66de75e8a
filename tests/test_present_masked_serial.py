# amaranth: UnusedElaboratable=no
"""The serial masked PRESENT (:mod:`cipher_cores.cores.present.masked_serial`): the paper's
vectors and random differential tests against the reference model at every S-box count, exact
cycle figures and random transfers, stalls on the random stream, all-zero randomness, a key
offered while a block loads, the PRNG feeding the core, and bad parameters. (The sharing of the
S-box itself is tested in ``tests/test_present_masked.py``; the contract suite runs every
catalog configuration.)"""

import random
from dataclasses import dataclass

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.present import reference
from cipher_cores.cores.present.masked_serial import SBOXES_PER_CYCLE, SerialMaskedPRESENT
from cipher_cores.cores.present.tables import KEY_SBOX_NIBBLES, ROUNDS
from cipher_cores.cores.present.vectors import PAPER_VECTORS
from cipher_cores.cores.prng import PRNG
from cipher_cores.cores.sim import LoadKey, Process

from .support.helpers import stream_get, stream_put
from .support.masked_feed import MaskedRun, Segment, simulate_masked


def _random_operations(rng, key_bits, keys, blocks):
    operations, expected = [], []
    for _ in range(keys):
        key = rng.getrandbits(key_bits)
        operations.append(LoadKey(key))
        for _ in range(blocks):
            block = rng.getrandbits(64)
            operations.append(Process(block))
            expected.append(reference.encrypt_block(key, block, key_bits))
    return operations, expected


@dataclass
class Plan:
    """One simulation of a configuration: the paper's vectors (the last block twice, back to
    back) and random blocks with fresh random bits, then random blocks with all-zero random
    bits, then random blocks with ``random.valid`` low on a third of the edges."""
    core: SerialMaskedPRESENT
    run: MaskedRun
    segments: list
    ranges: dict
    expected: list

    def part(self, name: str) -> tuple:
        return self.run.results[self.ranges[name]], self.expected[self.ranges[name]]


#: (key_bits, sboxes_per_cycle) simulated: every S-box count at 80 bits (two in the slow run), four
#: at 128.
PLANS = [(80, sboxes) for sboxes in SBOXES_PER_CYCLE] + [(128, 4)]


@pytest.fixture(scope="module", params=[
    pytest.param(p, id=f"present{p[0]}-sboxes{p[1]}", marks=pytest.mark.slow if p == (80, 2) else ())
    for p in PLANS])
def plan(request):
    key_bits, sboxes = request.param
    rng = random.Random(f"serial-masked-{key_bits}-{sboxes}")
    vectors = [v for v in PAPER_VECTORS if v.key_bits == key_bits]
    paper = []
    for vector in vectors:
        paper += [LoadKey(vector.key), Process(vector.plaintext)]
    paper.append(Process(vectors[-1].plaintext))
    paper_expected = [v.ciphertext for v in vectors] + [vectors[-1].ciphertext]
    (fresh, fresh_expected), (zero, zero_expected), (gaps, gaps_expected) = (
        _random_operations(rng, key_bits, keys, 2) for keys in (2, 1, 1))
    segments = [Segment(paper + fresh), Segment(zero, zero_random=True),
                Segment(gaps, random_gap=0.35)]
    sizes = [len(paper_expected), len(fresh_expected), len(zero_expected), len(gaps_expected)]
    starts = [sum(sizes[:i]) for i in range(5)]
    ranges = {name: slice(starts[i], starts[i + 1])
              for i, name in enumerate(("paper", "fresh", "zero", "gaps"))}
    core = SerialMaskedPRESENT(key_bits, sboxes_per_cycle=sboxes)
    run = simulate_masked(core, segments, rng=rng)
    return Plan(core, run, segments, ranges,
                paper_expected + fresh_expected + zero_expected + gaps_expected)


@pytest.mark.parametrize("part", [
    pytest.param("paper", id="paper-vectors"),
    pytest.param("fresh", id="random-keys-and-blocks-match-the-reference"),
    pytest.param("zero", id="all-zero-randomness-gives-the-right-result")])
def test_results(plan, part):
    results, expected = plan.part(part)
    assert results == expected


def test_random_valid_gaps_stall_the_core_and_change_no_result(plan):
    results, expected = plan.part("gaps")
    assert results == expected
    part = plan.ranges["gaps"]
    latencies = [o - i for i, o in zip(plan.run.input_edges[part], plan.run.output_edges[part])]
    assert all(latency > plan.core.latency for latency in latencies)


def test_cycle_figures_are_exact_with_random_valid_high(plan):
    core = plan.core
    part = plan.ranges["paper"]
    inputs, outputs = plan.run.input_edges[part], plan.run.output_edges[part]
    assert [o - i for i, o in zip(inputs, outputs)] == [core.latency] * len(inputs)
    assert inputs[-1] - inputs[-2] == outputs[-1] - outputs[-2] == core.initiation_interval
    assert inputs[0] - plan.run.key_edges[0] == core.key_load_cycles
    groups = 16 // core.sboxes_per_cycle
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == \
        (ROUNDS * (groups + 1) + 1, ROUNDS * (groups + 1) + groups + 2, groups + 1)


def test_random_transfers_one_per_key_and_per_load_and_round_clock(plan):
    operations = plan.segments[0].operations
    keys = sum(isinstance(op, LoadKey) for op in operations)
    blocks = sum(isinstance(op, Process) for op in operations)
    groups = 16 // plan.core.sboxes_per_cycle
    per_block = 1 + groups + ROUNDS * (groups + 1)
    assert plan.run.random_transfers[0] == keys + blocks * per_block


def test_a_key_offered_while_a_block_loads_goes_first():
    core = SerialMaskedPRESENT(80)
    rng = random.Random("key-during-load")
    first, second, block = rng.getrandbits(80), rng.getrandbits(80), rng.getrandbits(64)
    results = []

    async def random_source(ctx):
        while True:
            ctx.set(core.random.valid, 1)
            ctx.set(core.random.payload, rng.getrandbits(core.random_bits))
            await ctx.tick()

    async def bench(ctx):
        await stream_put(ctx, core.key, first)
        ctx.set(core.input.payload.block, block)
        ctx.set(core.input.valid, 1)
        await ctx.tick().repeat(2)      # the block's load has started
        assert not ctx.get(core.input.ready)
        await stream_put(ctx, core.key, second)
        await ctx.tick().until(core.input.ready)
        ctx.set(core.input.valid, 0)
        results.append(await stream_get(ctx, core.output))

    sim = Simulator(core)
    sim.add_clock(1e-8)
    sim.add_testbench(random_source, background=True)
    sim.add_testbench(bench)
    sim.run()
    assert results == [reference.encrypt_block(second, block, 80)]


def test_prng_feeds_the_core():
    m = Module()
    m.submodules.core = core = SerialMaskedPRESENT(80)
    m.submodules.prng = prng = PRNG(core.random_bits)
    wiring.connect(m, prng.random, core.random)
    operations, expected = _random_operations(random.Random("prng"), 80, keys=1, blocks=2)
    results = []

    async def bench(ctx):
        ctx.set(prng.seed.payload, 0x1234_5678_9ABC_DEF0_1357 | 0xC0FFEE << 80)
        ctx.set(prng.seed.valid, 1)
        await ctx.tick()
        ctx.set(prng.seed.valid, 0)
        for op in operations:
            if isinstance(op, LoadKey):
                await stream_put(ctx, core.key, op.key)
            else:
                await stream_put(ctx, core.input, {"block": op.block, "decrypt": 0})
                results.append(await stream_get(ctx, core.output))

    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert results == expected


@pytest.mark.parametrize("key_bits, sboxes", [(80, 1), (80, 4), (128, 2)])
def test_signature_and_randomness(key_bits, sboxes):
    core = SerialMaskedPRESENT(key_bits, sboxes_per_cycle=sboxes)
    assert core.signature == BlockCipherSignature(64, key_bits, random_bits=key_bits)
    assert core.decrypts is False
    groups, masks = 16 // sboxes, 8 * sboxes
    key_masks = 8 * len(KEY_SBOX_NIBBLES[key_bits])
    # A round clock's masks fit in a word.
    assert 2 * 4 * sboxes + key_masks <= core.random_bits
    assert core.random_bits_per_block == \
        key_bits + masks * groups + ROUNDS * (masks * (groups + 1) + key_masks)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"decrypt": True}, ValueError,
     "decrypt must be False: SerialMaskedPRESENT only encrypts, not True"),
    ({"decrypt": 1}, TypeError, "decrypt must be a bool (True or False), not 1"),
    ({"sboxes_per_cycle": 8}, ValueError, "sboxes_per_cycle must be one of 1, 2, 4, not 8"),
    ({"sboxes_per_cycle": "4"}, TypeError, "sboxes_per_cycle must be one of 1, 2, 4, not '4'"),
    ({"key_bits": 64}, ValueError, "key_bits"),
])
def test_bad_parameters(kwargs, error, message):
    with pytest.raises(error) as info:
        SerialMaskedPRESENT(**kwargs)
    assert message in str(info.value)
