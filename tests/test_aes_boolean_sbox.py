# amaranth: UnusedElaboratable=no
"""The tower-field AES S-box: field arithmetic, basis change and hardware, exhaustively."""

import pytest
from amaranth.sim import Simulator

from cipher_cores.cores.aes.boolean_sbox import (BooleanSBox, tower_constants, tower_inverse,
                                    tower_isomorphism, tower_mul, tower_sbox)
from cipher_cores.cores.aes.gf import gf_inverse, gf_mul
from cipher_cores.cores.aes.sbox import INV_SBOX, SBOX


def to_aes(x):
    columns, _ = tower_isomorphism()
    result = 0
    for i, column in enumerate(columns):
        if (x >> i) & 1:
            result ^= column
    return result


@pytest.mark.parametrize("level", [1, 2, 3])
def test_each_tower_level_is_a_field(level):
    size = 1 << (1 << level)
    for a in range(1, size):
        assert tower_mul(a, tower_inverse(a, level), level) == 1
    assert tower_inverse(0, level) == 0


def test_tower_constants_are_the_smallest_irreducible_ones():
    assert tower_constants() == (None, 1, 2, 8)


def test_basis_change_is_a_field_isomorphism():
    images = [to_aes(x) for x in range(256)]
    assert sorted(images) == list(range(256))
    assert to_aes(1) == 1
    for a in range(256):
        for b in range(256):
            assert to_aes(a ^ b) == images[a] ^ images[b]
            assert to_aes(tower_mul(a, b)) == gf_mul(images[a], images[b])


def test_tower_inverse_is_the_aes_field_inverse():
    for x in range(256):
        assert to_aes(tower_inverse(x)) == gf_inverse(to_aes(x))


def test_tower_sbox_model_matches_the_tables():
    assert [tower_sbox(x) for x in range(256)] == list(SBOX)
    assert [tower_sbox(x, inverse=True) for x in range(256)] == list(INV_SBOX)


def simulate_all_inputs(sbox, directions):
    """The hardware's output for every input byte, per direction."""
    outputs = {}

    async def bench(ctx):
        for inverse in directions:
            if sbox.invertible:
                ctx.set(sbox.inverse, inverse)
            for x in range(256):
                ctx.set(sbox.i, x)
                outputs[inverse, x] = ctx.get(sbox.o)

    sim = Simulator(sbox)
    sim.add_testbench(bench)
    sim.run()
    return outputs


def test_invertible_sbox_matches_sbox_and_inv_sbox_on_all_inputs():
    outputs = simulate_all_inputs(BooleanSBox(), (0, 1))
    assert [outputs[0, x] for x in range(256)] == list(SBOX)
    assert [outputs[1, x] for x in range(256)] == list(INV_SBOX)


def test_forward_only_sbox_matches_sbox_on_all_inputs():
    sbox = BooleanSBox(invertible=False)
    assert "inverse" not in sbox.signature.members
    outputs = simulate_all_inputs(sbox, (0,))
    assert [outputs[0, x] for x in range(256)] == list(SBOX)


def test_non_bool_invertible_is_rejected():
    with pytest.raises(TypeError, match=r"^invertible must be a bool, not 1$"):
        BooleanSBox(invertible=1)
