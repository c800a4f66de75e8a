"""The shared block-cipher signature."""

import pytest
from amaranth.hdl import unsigned
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from cipher_cores.cores.interface import BlockCipherSignature, BlockRequest


def test_members_are_key_input_and_output_streams():
    signature = BlockCipherSignature(64, 80)
    assert signature.members["key"] == In(stream.Signature(unsigned(80)))
    assert signature.members["input"] == In(stream.Signature(BlockRequest(64)))
    assert signature.members["output"] == Out(stream.Signature(unsigned(64)))
    assert set(signature.members) == {"key", "input", "output"}


def test_request_layout_has_block_and_direction():
    layout = BlockRequest(128)
    assert layout["block"].shape == unsigned(128)
    assert layout["decrypt"].shape == unsigned(1)
    assert layout.size == 129


def test_signatures_compare_by_widths():
    assert BlockCipherSignature(128, 256) == BlockCipherSignature(128, 256)
    assert BlockCipherSignature(128, 256) != BlockCipherSignature(128, 128)
    assert repr(BlockCipherSignature(64, 128)) == \
        "BlockCipherSignature(block_bits=64, key_bits=128)"


@pytest.mark.parametrize("args, error, message", [
    ((0, 128), ValueError, "block_bits must be a positive integer, not 0"),
    ((128, "128"), TypeError, "key_bits must be a positive integer, not '128'"),
])
def test_bad_widths_are_rejected(args, error, message):
    with pytest.raises(error) as info:
        BlockCipherSignature(*args)
    assert str(info.value) == message
