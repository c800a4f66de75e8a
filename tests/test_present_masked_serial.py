# amaranth: UnusedElaboratable=no
"""The serial masked PRESENT (:mod:`cipher_cores.cores.present.masked_serial`): the paper's
vectors and random differential tests against the reference model at every S-box count, exact
cycle figures and random transfers, stalls on the random stream, all-zero randomness, a key
offered while a block loads, and bad parameters. (The sharing of the S-box itself is tested in
``tests/test_present_masked.py``, a PRNG feeding the core in ``tests/test_randomized.py``; the
contract suite runs every catalog configuration.)"""

import random

import pytest
from amaranth.sim import Simulator

from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature
from cipher_cores.cores.present import reference
from cipher_cores.cores.present.masked_serial import SBOXES_PER_CYCLE, SerialMaskedPRESENT
from cipher_cores.cores.present.tables import KEY_SBOX_NIBBLES, ROUNDS
from cipher_cores.cores.present.vectors import PAPER_VECTORS

from .support.helpers import expected_results, random_operations, stream_get, stream_put
from .support.masked_feed import (check_cycle_figures, check_gaps_stall, first_segment_counts,
                                  masked_plan)


def _random_operations(rng, key_bits, keys, blocks):
    config = get_core("present-masked-serial").config(key_bits)
    operations = random_operations(config, rng, keys=keys, blocks_per_key=blocks)
    return operations, expected_results(config, operations)


#: (key_bits, sboxes_per_cycle) simulated: every S-box count at 80 bits, four at 128 (two S-boxes
#: and 128 bits in the slow run).
PLANS = [(80, sboxes) for sboxes in SBOXES_PER_CYCLE] + [(128, 4)]


@pytest.fixture(scope="module", params=[
    pytest.param(p, id=f"present{p[0]}-sboxes{p[1]}",
                 marks=pytest.mark.slow if p in ((80, 2), (128, 4)) else ())
    for p in PLANS])
def plan(request):
    """One simulation of a configuration (:func:`masked_plan`): the paper's vectors and random
    blocks with fresh random bits, all-zero random bits, then ``random.valid`` low a third of
    the time."""
    key_bits, sboxes = request.param
    config = get_core("present-masked-serial").config(key_bits, sboxes_per_cycle=sboxes)
    return masked_plan(config.build(), [v for v in PAPER_VECTORS if v.key_bits == key_bits],
                       config, random.Random(f"serial-masked-{key_bits}-{sboxes}"))


@pytest.mark.parametrize("part", [
    pytest.param("known", id="paper-vectors"),
    pytest.param("fresh", id="random-keys-and-blocks-match-the-reference"),
    pytest.param("zero", id="all-zero-randomness-gives-the-right-result")])
def test_results(plan, part):
    results, expected = plan.part(part)
    assert results == expected


def test_random_valid_gaps_stall_the_core_and_change_no_result(plan):
    check_gaps_stall(plan)


def test_cycle_figures_are_exact_with_random_valid_high(plan):
    check_cycle_figures(plan)
    core = plan.core
    groups = 16 // core.sboxes_per_cycle
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == \
        (ROUNDS * (groups + 1) + 1, ROUNDS * (groups + 1) + groups + 2, groups + 1)


def test_random_transfers_one_per_key_and_per_load_and_round_clock(plan):
    keys, blocks, transfers = first_segment_counts(plan)
    groups = 16 // plan.core.sboxes_per_cycle
    assert transfers == keys + blocks * (1 + groups + ROUNDS * (groups + 1))


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
