# amaranth: UnusedElaboratable=no
"""A masked core (``random_bits`` > 0) waits for random bits on its ``random`` stream. The bus
peripheral and the self-test feed it (each wraps it in a RandomizedCore, a PRNG of its own). Every
other wrapper refuses one at construction, with a ``ValueError`` naming itself and pointing to
RandomizedCore, instead of building a design that would wait forever; it takes the masked core
inside a RandomizedCore."""

import gc
import warnings

import pytest
from amaranth.hdl import UnusedElaboratable

from cipher_cores.cores.axis import AXIStreamCipher
from cipher_cores.cores.bus import CipherPeripheral, CoreSelect, SharedCore
from cipher_cores.cores.catalog import parse_config
from cipher_cores.cores.gcm import GCM
from cipher_cores.cores.modes import ModeOfOperation
from cipher_cores.cores.randomized import RandomizedCore
from cipher_cores.cores.selftest import SelfTest


class never_elaborated(warnings.catch_warnings):
    """The cores and wrappers here are built, never elaborated (some of them inside the library's
    modules, where this module's ``UnusedElaboratable=no`` does not reach): they are collected
    before the block ends, with Amaranth's warning about them ignored."""
    def __enter__(self):
        super().__enter__()
        warnings.simplefilter("ignore", UnusedElaboratable)

    def __exit__(self, *exc):
        gc.collect()
        return super().__exit__(*exc)


#: The consumers that cannot feed a random stream.
CONSUMERS = {
    "AXIStreamCipher": lambda core: AXIStreamCipher(core),
    "ModeOfOperation": lambda core: ModeOfOperation(core),
    "GCM": lambda core: GCM(core),
    "CoreSelect": lambda core: CoreSelect([core]),
    "SharedCore": lambda core: SharedCore(core),
}
#: The consumers that feed it, and where the masked core ends up.
FEEDERS = {
    "CipherPeripheral": (lambda core: CipherPeripheral(core),
                         lambda built: built.cores[0]),
    "SelfTest": (lambda core: SelfTest(core, vectors=[(0, 0, 0, 0)], loop_key=0, loop_blocks=1,
                                       check_value=0, check_blocks=1),
                 lambda built: built.core),
}


# GCM takes AES only (a 64-bit PRESENT is refused for its block size first).
@pytest.mark.parametrize("consumer, masked", [
    (consumer, masked) for consumer in CONSUMERS
    for masked in ("aes-masked-128", "present-masked-80")
    if not (consumer == "GCM" and masked.startswith("present"))])
def test_a_wrapper_without_a_random_source_refuses_a_masked_core(consumer, masked):
    with never_elaborated():
        core = parse_config(masked).build()
        assert core.random_bits > 0
        with pytest.raises(ValueError, match=f"^{consumer} cannot feed the random stream of a "
                                             f"masked core yet, .* wrap it in RandomizedCore "):
            CONSUMERS[consumer](core)
        del core


@pytest.mark.parametrize("consumer", list(CONSUMERS))
def test_the_same_wrapper_takes_the_unmasked_core_and_the_randomized_masked_one(consumer):
    with never_elaborated():
        CONSUMERS[consumer](parse_config("aes-128").build())
        CONSUMERS[consumer](RandomizedCore(parse_config("aes-masked-128").build()))


@pytest.mark.parametrize("feeder", list(FEEDERS))
@pytest.mark.parametrize("masked", ["aes-masked-128", "present-masked-80"])
def test_the_peripheral_and_the_self_test_wrap_a_masked_core_in_a_prng(feeder, masked):
    build, inner = FEEDERS[feeder]
    with never_elaborated():
        core = parse_config(masked).build()
        wrapped = inner(build(core))
        assert isinstance(wrapped, RandomizedCore) and wrapped.core is core
        assert wrapped.random_bits == 0
        del core, wrapped
