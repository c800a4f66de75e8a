"""The on-the-fly AES key schedule, forwards and backwards, against the reference schedule."""

import random

import pytest
from amaranth.sim import Simulator

from cipher_cores.cores.aes.key_schedule import KeySchedule, key_step_plan
from cipher_cores.cores.aes.reference import expand_key_words
from cipher_cores.cores.aes.transforms import KEY_WORDS, ROUNDS


def window(words, step, key_words):
    """Window ``step``: key words 4*step .. 4*step + Nk - 1 as one integer, word 0 first."""
    return sum(words[4 * step + i] << (32 * (key_words - 1 - i)) for i in range(key_words))


@pytest.mark.parametrize("key_bits", [128, 192, 256])
def test_each_step_transforms_at_most_one_word(key_bits):
    plans = key_step_plan(key_bits)
    assert len(plans) == ROUNDS[key_bits]
    if key_bits != 192:
        assert all(plan.position == 0 for plan in plans)
    else:
        assert [plan.position for plan in plans[:3]] == [0, 2, None]


@pytest.mark.parametrize("sbox", ["bram", "logic", "boolean"])
@pytest.mark.parametrize("key_bits", [128, 192, 256])
def test_steps_match_the_reference_schedule_in_both_directions(key_bits, sbox):
    nk, nr = KEY_WORDS[key_bits], ROUNDS[key_bits]
    schedule = KeySchedule(key_bits, sbox=sbox)
    rng = random.Random(key_bits)
    keys = [0, (1 << key_bits) - 1] + [rng.getrandbits(key_bits) for _ in range(3)]

    async def bench(ctx):
        ctx.set(schedule.en, 1)
        for key in keys:
            # Past the round keys FIPS-197 lists, the recurrence simply goes on (window Nr).
            words = expand_key_words(key, key_bits, 4 * nr + nk)
            for step in range(1, nr + 1):
                for backward, start, end in ((0, step - 1, step), (1, step, step - 1)):
                    ctx.set(schedule.d, window(words, start, nk))
                    ctx.set(schedule.d_step, step)
                    ctx.set(schedule.d_backward, backward)
                    await ctx.tick()
                    assert ctx.get(schedule.next_window) == window(words, end, nk)

    sim = Simulator(schedule)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
