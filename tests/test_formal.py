# amaranth: UnusedElaboratable=no
"""Bounded proofs of the stream contract with SymbiYosys (harness: ``tests/support/formal.py``).

Each proof runs from power-up with every input free (reset included) for ``two_blocks_depth``
steps: the key load, one block and one more block, so that the second result leaves on the last
step. Three runs per configuration:

* the contract holds (sby: PASS);
* a property meant to fail, "fewer than two results ever leave", fails (sby: FAIL) on exactly the
  last step: the bound does cover two whole blocks, and the proof can fail;
* (marked ``slow``) the latency property with the latency off by one each way fails.

The toy cipher (fast to prove) shows that each property catches the violation it is meant for, on
the deliberately broken cores of ``tests/support/broken_cores.py`` and one more below.

All tests are marked ``formal``; those too long for the default run are also marked ``slow``
(``python -m pytest -m formal`` runs them all). Times are in the README.
"""

import math
from dataclasses import dataclass

import pytest
from amaranth.hdl import Module, Signal

from cipher_cores.cores.catalog import parse_config
from cipher_cores.cores.cipher import BlockCipher

from .support.broken_cores import BrokenCore
from .support.formal import (EXACT_LATENCY, IN_FLIGHT_BOUND, KEY_GOES_FIRST, KEY_READY_IDLE,
                             NO_BLOCK_BEFORE_KEY, NO_SPURIOUS_OUTPUT, OUTPUT_HOLDS, PAYLOAD_HOLDS,
                             PROPERTIES, REACHES_RESULTS, ContractHarness, prove_contract)
from .support.helpers import pass_through
from .support.toy_cipher import ToyCipher


pytestmark = pytest.mark.formal


def two_blocks_depth(core: BlockCipher) -> int:
    """Steps from power-up to the earliest transfer out of a second result, inclusive: a key on
    step 0, the first block ``key_load_cycles`` later, the second ``initiation_interval`` after
    that, its result ``latency`` after that."""
    return core.key_load_cycles + core.initiation_interval + core.latency + 1


@dataclass(frozen=True)
class Case:
    """A configuration to prove.

    ``witness_nomem``: the runs meant to fail map memories to logic for the solver (it finds a
    counterexample through AES' S-box memories faster so; the proof itself is faster with the
    memories as SMT arrays). ``extra_in_flight``: blocks the core documents holding beyond
    ``ceil(latency / initiation_interval)`` under back-pressure."""
    core: str
    witness_nomem: bool = False
    extra_in_flight: int = 0
    slow: bool = False

    def param(self):
        return pytest.param(self, id=self.core, marks=[pytest.mark.slow] if self.slow else [])

    def build(self):
        return parse_config(self.core).build()

    def max_in_flight(self, core) -> int:
        return math.ceil(core.latency / core.initiation_interval) + self.extra_in_flight


#: Measured on this machine (2 cores, shared), processor time of proof + witness, in the README.
CASES = [
    Case("present-80:rounds_per_cycle=31"),                 # every round unrolled, both directions
    Case("aes-128", witness_nomem=True),                    # S-boxes in block RAM
    Case("present-80", slow=True),                          # the paper's core: 98 steps
    Case("present-80:decrypt=no", slow=True),
    Case("present-80:rounds_per_cycle=4", slow=True),
    Case("present-80:rounds_per_cycle=8", slow=True),
    Case("present-128:rounds_per_cycle=31", slow=True),
    Case("present-keytable-80", slow=True),                 # round keys in block RAM: 49 s
    Case("aes-192", witness_nomem=True, slow=True),
    Case("aes-256", witness_nomem=True, slow=True),
    Case("aes-128:sbox=logic", witness_nomem=True, slow=True),
    Case("aes-128:sbox=boolean", witness_nomem=True, slow=True),
    # "Stage 31 is the output register, with a spare register beside it" (its docstring).
    Case("present-pipelined-80:decrypt=no", extra_in_flight=1, slow=True),
]
each_case = pytest.mark.parametrize("case", [case.param() for case in CASES])


def describe(outcome) -> str:
    return (f"sby {outcome.status} at depth {outcome.depth}, failed {list(outcome.failed)} at "
            f"step {outcome.step}\n{outcome.log[-3000:]}")


# The cipher cores.

@each_case
def test_contract_holds_for_two_whole_blocks(case):
    core = case.build()
    outcome = prove_contract(core, two_blocks_depth(core), max_in_flight=case.max_in_flight(core))
    assert outcome.status == "PASS", describe(outcome)


@each_case
def test_bound_reaches_the_second_result_on_its_last_step(case):
    core = case.build()
    depth = two_blocks_depth(core)
    outcome = prove_contract(core, depth, reach_results=2, properties=(), zero_data=True,
                             memories_as_logic=case.witness_nomem)
    assert (outcome.status, outcome.failed, outcome.step) == \
        ("FAIL", (REACHES_RESULTS,), depth - 1), describe(outcome)


@pytest.mark.slow
@pytest.mark.parametrize("offset", [-1, 1])
@pytest.mark.parametrize("case", [case for case in CASES if not case.slow], ids=lambda c: c.core)
def test_latency_off_by_one_fails_on_the_first_result(case, offset):
    core = case.build()
    outcome = prove_contract(core, two_blocks_depth(core), latency=core.latency + offset,
                             properties=(EXACT_LATENCY,), zero_data=True,
                             memories_as_logic=case.witness_nomem)
    # The first block transfers in on step key_load_cycles; its result is due `latency` later.
    first_result = core.key_load_cycles + core.latency
    assert (outcome.status, outcome.failed, outcome.step) == \
        ("FAIL", (EXACT_LATENCY,), first_result + min(offset, 0)), describe(outcome)


# Each property catches its violation (on the toy cipher, 2 rounds).

def test_contract_holds_on_the_toy_cipher():
    core = ToyCipher(rounds=2)
    outcome = prove_contract(core, two_blocks_depth(core))
    assert outcome.status == "PASS", describe(outcome)
    reach = prove_contract(ToyCipher(rounds=2), two_blocks_depth(core), reach_results=2,
                           properties=())
    assert (reach.status, reach.failed, reach.step) == \
        ("FAIL", (REACHES_RESULTS,), two_blocks_depth(core) - 1), describe(reach)


class AcceptsWhileBusy(BlockCipher):
    """The toy cipher (2 rounds) with ``input.ready`` high whenever a key is loaded and none is
    offered: a block offered while another is in the core is taken, and lost."""
    def __init__(self):
        self._toy = ToyCipher(rounds=2)
        super().__init__(64, 80)

    @property
    def latency(self) -> int:
        return self._toy.latency

    @property
    def initiation_interval(self) -> int:
        return self._toy.initiation_interval

    @property
    def key_load_cycles(self) -> int:
        return self._toy.key_load_cycles

    def elaborate(self, platform):
        m = Module()
        m.submodules.toy = toy = self._toy
        pass_through(m, self, toy)
        key_loaded = Signal()
        with m.If(self.key.valid & self.key.ready):
            m.d.sync += key_loaded.eq(1)
        m.d.comb += self.input.ready.eq(key_loaded & ~self.key.valid)
        return m


BROKEN_CASES = [
    ("valid_drops", OUTPUT_HOLDS),
    ("payload_changes", PAYLOAD_HOLDS),
    ("spurious_output", NO_SPURIOUS_OUTPUT),
    ("accepts_while_busy", IN_FLIGHT_BOUND),
    ("key_ready_while_busy", KEY_READY_IDLE),
    ("ready_before_key", NO_BLOCK_BEFORE_KEY),
    ("survives_reset", NO_BLOCK_BEFORE_KEY),
    ("ready_while_key_valid", KEY_GOES_FIRST),
    ("wrong_latency", EXACT_LATENCY),
    ("data_dependent_timing", EXACT_LATENCY),
]


def test_every_property_has_a_broken_core():
    assert {prop for _, prop in BROKEN_CASES} == set(PROPERTIES)


@pytest.mark.parametrize("fault, prop", BROKEN_CASES, ids=[c[0] for c in BROKEN_CASES])
def test_each_broken_core_fails_its_property(fault, prop):
    core = AcceptsWhileBusy() if fault == "accepts_while_busy" else BrokenCore(fault=fault)
    outcome = prove_contract(core, two_blocks_depth(ToyCipher(rounds=2)), properties=(prop,))
    assert (outcome.status, outcome.failed) == ("FAIL", (prop,)), describe(outcome)


# The harness' arguments.

@pytest.mark.parametrize("kwargs, error, message", [
    ({"latency": 0}, ValueError, "latency must be a positive integer, not 0"),
    ({"max_in_flight": "2"}, TypeError, "max_in_flight must be a positive integer, not '2'"),
    ({"reach_results": -1}, ValueError, "reach_results must be a positive integer, not -1"),
    ({"properties": ("no such rule",)}, ValueError, r"properties must be among .* not \['no such"),
])
def test_harness_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        ContractHarness(ToyCipher(), **kwargs)


def test_harness_rejects_a_core_without_the_interface():
    with pytest.raises(TypeError, match="core must be a BlockCipher, not 'aes'"):
        ContractHarness("aes")


def test_prove_contract_rejects_a_bad_depth():
    with pytest.raises(ValueError, match="depth must be a positive integer, not 0"):
        prove_contract(ToyCipher(), 0)
