# amaranth: UnusedElaboratable=no
"""The PRESENT hardware layers, key-register update and Round against the reference model."""

import random

from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator
import pytest

from cipher_cores.cores.present import reference
from cipher_cores.cores.present.key_schedule import update_key
from cipher_cores.cores.present.round import Round, p_layer, s_layer
from cipher_cores.cores.present.sbox import sbox
from cipher_cores.cores.present.tables import INV_SBOX, KEY_SIZES, ROUNDS, SBOX


def evaluate(build, width_in, width_out, inputs):
    """Simulate the combinational ``build(input_signal)`` on each of ``inputs``."""
    m = Module()
    value_in, value_out = Signal(width_in), Signal(width_out)
    m.d.comb += value_out.eq(build(value_in))
    outputs = []

    async def testbench(ctx):
        for value in inputs:
            ctx.set(value_in, value)
            outputs.append(ctx.get(value_out))

    sim = Simulator(m)
    sim.add_testbench(testbench)
    sim.run()
    return outputs


def random_values(bits, count, seed=0):
    rng = random.Random(seed)
    return [0, (1 << bits) - 1] + [rng.getrandbits(bits) for _ in range(count)]


@pytest.mark.parametrize("inverse, table", [(False, SBOX), (True, INV_SBOX)])
def test_sbox_looks_up_the_table(inverse, table):
    assert evaluate(lambda x: sbox(x, inverse=inverse), 4, 4, range(16)) == list(table)


@pytest.mark.parametrize("inverse", [False, True])
def test_s_layer_matches_reference(inverse):
    states = random_values(64, 30)
    assert evaluate(lambda x: s_layer(x, inverse=inverse), 64, 64, states) == [
        reference.s_layer(state, inverse=inverse) for state in states]


@pytest.mark.parametrize("inverse", [False, True])
def test_p_layer_matches_reference(inverse):
    states = [1 << i for i in range(64)] + random_values(64, 30)
    assert evaluate(lambda x: p_layer(x, inverse=inverse), 64, 64, states) == [
        reference.p_layer(state, inverse=inverse) for state in states]


@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_key_update_matches_reference(key_bits, inverse):
    # The counter rides in the low five bits of the simulated input, above it the key.
    keys = random_values(key_bits, 8, seed=key_bits)
    inputs = [(key << 5) | counter for key in keys for counter in range(1, ROUNDS + 1)]
    outputs = evaluate(lambda x: update_key(x[5:], x[:5], key_bits, inverse=inverse),
                       key_bits + 5, key_bits, inputs)
    assert outputs == [reference.update_key(value >> 5, value & 31, key_bits, inverse=inverse)
                       for value in inputs]


def simulate_round(round_, cases):
    """Run ``round_`` on ``(state, key, counter, inverse)`` cases; returns (state, key) pairs."""
    results = []

    async def testbench(ctx):
        for state, key, counter, inverse in cases:
            ctx.set(round_.state_in, state)
            ctx.set(round_.key_in, key)
            ctx.set(round_.counter, counter)
            if round_.decrypt:
                ctx.set(round_.inverse, inverse)
            results.append((ctx.get(round_.state_out), ctx.get(round_.key_out)))

    sim = Simulator(round_)
    sim.add_testbench(testbench)
    sim.run()
    return results


def reference_round(state, key, counter, inverse, key_bits):
    key = reference.update_key(key, counter, key_bits, inverse=inverse)
    if inverse:
        state = reference.s_layer(reference.p_layer(state, inverse=True), inverse=True)
    else:
        state = reference.p_layer(reference.s_layer(state))
    return state ^ reference.round_key(key, key_bits), key


@pytest.mark.parametrize("decrypt", [True, False])
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_round_matches_reference(key_bits, decrypt):
    rng = random.Random(key_bits)
    cases = [(rng.getrandbits(64), rng.getrandbits(key_bits), rng.randint(1, ROUNDS),
              decrypt and rng.random() < 0.5) for _ in range(40)]
    assert simulate_round(Round(key_bits, decrypt=decrypt), cases) == [
        reference_round(*case, key_bits) for case in cases]


def test_round_without_decrypt_has_no_inverse_port():
    assert "inverse" in Round(80).signature.members
    assert "inverse" not in Round(80, decrypt=False).signature.members


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_bits": 96}, ValueError, r"^key_bits must be 80 or 128, not 96$"),
    ({"key_bits": 80, "decrypt": 1}, TypeError, r"^decrypt must be a bool, not 1$"),
])
def test_round_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        Round(**kwargs)
