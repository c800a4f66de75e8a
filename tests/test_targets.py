"""Every kind of report target is a :class:`~cipher_cores.scripts.flow.targets.Target`: it builds
itself and measures its own cycles, so the flow goes from a target's text to its figures by one
path, ``parse_target(text).cycles()``, whatever the kind."""

import pathlib

import pytest

from cipher_cores.cores.catalog import CoreConfig, parse_config
from cipher_cores.scripts.flow.external import ExternalConfig
from cipher_cores.scripts.flow.measure import measure_cycles
from cipher_cores.scripts.flow.targets import GCMConfig, PeripheralConfig, Target, parse_target


DESCRIPTION = pathlib.Path(__file__).parent / "data" / "external" / "toy_feistel.toml"

KINDS = [
    pytest.param("present-80", CoreConfig, id="core"),
    pytest.param("wishbone:present-80", PeripheralConfig, id="wishbone"),
    pytest.param("gcm:aes-128", GCMConfig, id="gcm"),
    pytest.param(f"verilog:{DESCRIPTION}", ExternalConfig, id="verilog"),
]


@pytest.mark.parametrize("text, kind", KINDS)
def test_every_kind_of_target_is_a_target(text, kind):
    target = parse_target(text)
    assert type(target) is kind
    assert isinstance(target, Target)


@pytest.mark.parametrize("text, kind", KINDS)
def test_a_target_reads_back_from_its_text(text, kind):
    target = parse_target(text)
    assert parse_target(target.text) == target


def test_something_without_cycles_is_not_a_target():
    # The protocol asks for cycles(): a configuration that cannot measure itself is not one.
    class NoCycles:
        label = slug = text = "x"
        block_bits = key_bits = 8
        decrypts = True

        def build(self):
            return None

        def to_dict(self):
            return {}

        def papers(self):
            return []
    assert not isinstance(NoCycles(), Target)


def test_gcm_is_not_an_external_core():
    assert not isinstance(parse_target("gcm:aes-128"), ExternalConfig)


def test_measure_cycles_asks_the_target():
    asked = []

    class Recorder:
        def cycles(self, *, blocks, seed):
            asked.append((blocks, seed))
            return "figures"
    assert measure_cycles(Recorder(), blocks=3, seed=5) == "figures"
    assert measure_cycles(Recorder()) == "figures"
    assert asked == [(3, 5), (None, 1)]


def test_a_core_measures_the_same_by_itself_and_through_the_flow():
    config = parse_config("present-80")
    figures = config.cycles(blocks=3)
    assert figures == measure_cycles(parse_target(config.text), blocks=3)
    assert (figures.verified, figures.through, figures.blocks) == (True, "stream", 3)


def test_a_core_simulates_six_blocks_unless_told():
    assert parse_config("present-80").cycles().blocks == 6


def test_a_declared_core_gives_its_description_whatever_it_is_asked():
    target = parse_target(f"verilog:{DESCRIPTION}")
    figures = target.cycles(blocks=3, seed=9)
    assert figures == target.cycles()
    assert (figures.through, figures.verified, figures.cycles_per_block) == \
        ("declared", False, target.description.cycles_per_block)
