# amaranth: UnusedElaboratable=no
"""The two-lane pipelined AES core (``aes-pipelined2x``, :class:`TwoLanePipelinedAES`): two
blocks per transfer, block 0 in the most significant 128 bits. FIPS-197 and the NIST AESAVS ECB
files with two different blocks in each transfer, differential tests against pycryptodome with key
changes, gaps and back-pressure, two blocks per clock, its figures, its catalog entry and its ECP5
form simulated with a model of the ``DP16KD``. The stream contract is checked in
``tests/test_contract.py``; the one-lane core in ``tests/test_aes_pipelined.py``.

The core is slow in the Python simulator: the runs of more than a few blocks use the compiled back
end (CXXRTL), one model for the module."""

import random

import pytest
from amaranth.hdl import Fragment

from cipher_cores.cores import fpga
from cipher_cores.cores.aes import PipelinedAES
from cipher_cores.cores.aes.pipelined import TwoLanePipelinedAES
from cipher_cores.cores.aes.transforms import ROUNDS
from cipher_cores.cores.aes.vectors import FIPS197_VECTORS
from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature

from .support.cell_models import SimulationPlatform
from .support.helpers import (LoadKey, Process, aes_oracle, check_key_load_cycles,
                              ecb_encryptions, encrypt_only_operations, key_groups,
                              simulate_cipher)
from .support.nist import aesavs_ecb_vectors


KEY_SIZES = (128, 192, 256)
AESAVS_KINDS = ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")
MASK = (1 << 128) - 1


def pair(first: int, second: int) -> int:
    """A transfer of two blocks: ``first`` is block 0, in the most significant half."""
    return first << 128 | second




# Constructor, parameters and figures.

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_carries_two_blocks(key_bits):
    core = TwoLanePipelinedAES(key_bits)
    assert core.signature == BlockCipherSignature(256, key_bits)
    assert (core.block_bits, core.lanes, core.decrypts) == (256, 2, False)
    assert PipelinedAES(key_bits, lanes=2).signature == core.signature
    assert PipelinedAES(key_bits).lanes == 1


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_cycle_figures_are_those_of_one_lane(key_bits):
    one, two = PipelinedAES(key_bits), TwoLanePipelinedAES(key_bits)
    figures = ("latency", "initiation_interval", "key_load_cycles", "stages", "spares")
    assert [getattr(two, name) for name in figures] == [getattr(one, name) for name in figures]


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_block_rams_are_sixteen_a_round_and_two_for_the_key(key_bits):
    assert TwoLanePipelinedAES(key_bits).block_rams == 16 * ROUNDS[key_bits] + 2


@pytest.mark.parametrize("kwargs, error, message", [
    ({"lanes": 3}, ValueError, r"^lanes must be 1 or 2, not 3$"),
    ({"lanes": 0}, ValueError, r"^lanes must be 1 or 2, not 0$"),
    ({"lanes": "2"}, TypeError, r"^lanes must be an integer \(1 or 2\), not '2'$"),
    ({"lanes": True}, TypeError, r"^lanes must be an integer \(1 or 2\), not True$"),
    ({"lanes": 2, "decrypt": True}, ValueError,
     r"^decrypt must be False: the pipelined AES core encrypts only$"),
])
def test_constructor_rejects_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        PipelinedAES(**kwargs)


def test_catalog_entry_builds_the_core_and_its_model_is_ecb_of_both_blocks():
    config = get_core("aes-pipelined2x").config(192)
    core = config.build()
    assert isinstance(core, TwoLanePipelinedAES) and core.key_bits == 192
    Fragment.get(core, None)        # elaborated, so Amaranth does not warn that it went unused
    assert (config.block_bits, config.decrypts) == (256, False)
    rng = random.Random("two-lane-model")
    key, first, second = rng.getrandbits(192), rng.getrandbits(128), rng.getrandbits(128)
    assert config.encrypt(key, pair(first, second)) == pair(
        aes_oracle(key, 192, first, False), aes_oracle(key, 192, second, False))


def test_catalog_vectors_put_fips197_in_block_0_and_another_block_in_block_1():
    entry = get_core("aes-pipelined2x")
    assert len(entry.vectors) == len(FIPS197_VECTORS)
    for two, one in zip(entry.vectors, FIPS197_VECTORS):
        assert (two.key_bits, two.key) == (one.key_bits, one.key)
        assert (two.plaintext >> 128, two.ciphertext >> 128) == (one.plaintext, one.ciphertext)
        assert two.plaintext & MASK == one.ciphertext != one.plaintext
        assert two.ciphertext & MASK == aes_oracle(one.key, one.key_bits, one.ciphertext, False)


# Known answers and differential tests.

def fips197_operations(key_bits) -> tuple:
    """Each FIPS-197 vector of ``key_bits`` in block 0 with another vector's plaintext in block
    1, then the other way round (a known answer in each lane in turn); the second transfer asks
    for decryption, which an encrypt-only core ignores."""
    operations, expected = [], []
    for vector in (v for v in FIPS197_VECTORS if v.key_bits == key_bits):
        other = next(v for v in FIPS197_VECTORS if v.plaintext != vector.plaintext).plaintext
        answer = aes_oracle(vector.key, key_bits, other, False)
        operations += [LoadKey(vector.key), Process(pair(vector.plaintext, other)),
                       Process(pair(other, vector.plaintext), decrypt=True)]
        expected += [pair(vector.ciphertext, answer), pair(answer, vector.ciphertext)]
    return operations, expected


def aesavs_operations(key_bits) -> tuple:
    """The vectors of the five AESAVS ECB files as encryptions (a decryption vector's plaintext
    encrypts to its ciphertext), each (key, plaintext) once, two different ones of the same key
    per transfer (a key's odd one out is paired with the first of its key); the key is loaded
    again only when it changes."""
    by_key, seen = {}, set()
    for kind in AESAVS_KINDS:
        vectors = aesavs_ecb_vectors(kind, key_bits)
        assert vectors
        for vector in vectors:
            for plaintext, ciphertext in zip(vector.plaintext, vector.ciphertext):
                if (vector.key, plaintext) not in seen:
                    seen.add((vector.key, plaintext))
                    by_key.setdefault(vector.key, []).append((plaintext, ciphertext))
    operations, expected = [], []
    for key, answers in by_key.items():
        if len(answers) == 1:
            continue                # one block under its key: nothing to pair it with
        if len(answers) % 2:
            answers = answers + answers[:1]
        operations.append(LoadKey(key))
        for (p0, c0), (p1, c1) in zip(answers[0::2], answers[1::2]):
            operations.append(Process(pair(p0, p1)))
            expected.append(pair(c0, c1))
    return operations, expected


def test_fips197_in_both_lanes_python_simulator():
    """FIPS-197 Appendix C.1 in each lane in turn, in the Python simulator."""
    operations, expected = fips197_operations(128)
    operations = operations[-3:]            # Appendix C.1
    run = simulate_cipher(TwoLanePipelinedAES(128), operations)
    assert run.results == expected[-2:]
    assert run.results[0] >> 128 == run.results[1] & MASK == FIPS197_VECTORS[1].ciphertext
    assert run.output.violations == []


# About two minutes each from an empty cache (the CXXRTL model's compile): in the slow run; the
# default run checks FIPS-197 in both lanes in the Python simulator, and the one-lane pipeline's
# AESAVS files (tests/test_aes_pipelined.py).
@pytest.mark.slow
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_fips197_and_aesavs_ecb_files_two_blocks_a_transfer(key_bits):
    """FIPS-197 (the vectors of this key size) and GFSbox, KeySbox, VarKey, VarTxt and MMT,
    encryption and decryption sections, two different blocks per transfer, with the core
    compiled by CXXRTL, at full speed: the transfers of a key follow each other on consecutive
    edges (two blocks per clock), each at the stated latency, and the key load cycles are
    exact (many keys, each with a few transfers)."""
    core = TwoLanePipelinedAES(key_bits)
    fips_operations, fips_expected = fips197_operations(key_bits)
    avs_operations, avs_expected = aesavs_operations(key_bits)
    assert len(fips_expected) >= 2 and len(avs_expected) > 120
    operations = fips_operations + avs_operations
    run = simulate_cipher(core, operations, backend="cxxrtl")
    assert run.results == fips_expected + avs_expected
    assert run.output.violations == []
    assert run.latencies == [core.latency] * len(run.results)
    for _, transfers in key_groups(run, operations):
        for edges in zip(*transfers):
            assert [b - a for a, b in zip(edges, edges[1:])] == [1] * (len(edges) - 1)
    check_key_load_cycles(core, run, operations)


@pytest.mark.slow
def test_random_keys_blocks_gaps_and_back_pressure_match_pycryptodome():
    """Compiled: 16 keys of 100 transfers (200 blocks), random gaps and back-pressure."""
    rng = random.Random("two-lane-sweep")
    operations = encrypt_only_operations(rng, 128, keys=16, transfers_per_key=100, lanes=2)
    run = simulate_cipher(TwoLanePipelinedAES(128), operations, rng=rng, max_gap=2,
                          max_stall=6, backend="cxxrtl")
    assert run.results == ecb_encryptions(operations, 128, lanes=2)
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])
    assert max(run.latencies) > TwoLanePipelinedAES(128).latency    # back-pressure delayed some


# The ECP5 85F form.

class DeviceForm(TwoLanePipelinedAES):
    """The core as elaborated for ``platform`` (a model of its cells), simulated as one."""
    def __init__(self, key_bits, platform):
        self.platform = platform
        super().__init__(key_bits)

    def elaborate(self, platform):
        return Fragment.get(super().elaborate(self.platform), self.platform)


def test_ecp5_85f_floorplan_gives_each_lane_two_ram_rows():
    """The 162 DP16KD instances: each lane laid out in half of the floorplan's snake (rows 82
    and 70, rows 46 and 22) as the one-lane core is in the whole (6 rounds a row, each round's 8
    RAMs side by side), the key expansion's 2 after lane 0's rounds."""
    platform = SimulationPlatform("ecp5", "LFE5U-85F")
    Fragment.get(DeviceForm(128, platform), None)
    assert platform.count("DP16KD") == len(platform.cells) == 162
    snake = fpga.floorplan(platform, "aes.pipelined").sites("rams")
    # Made in this order: the key expansion's 2, then round after round, lane 0 then lane 1.
    rounds = [snake[96 * lane + 8 * (r - 1) + i]
              for r in range(1, 11) for lane in range(2) for i in range(8)]
    assert platform.sites == snake[80:82] + rounds
    rows = [{site.split("/")[1] for site in platform.sites[2 + 16 * (r - 1) + 8 * lane:][:8]}
            for r in (1, 6, 7, 10) for lane in range(2)]
    assert rows == [{"Y82"}, {"Y46"}, {"Y82"}, {"Y46"}, {"Y70"}, {"Y22"}, {"Y70"}, {"Y22"}]


@pytest.mark.slow
def test_ecp5_85f_form_with_a_model_of_dp16kd():
    """FIPS-197 Appendix C.1 in each lane in turn through the models of the 162 DP16KD."""
    operations, expected = fips197_operations(128)
    run = simulate_cipher(DeviceForm(128, SimulationPlatform("ecp5", "LFE5U-85F")),
                          operations[-3:])
    assert run.results == expected[-2:]


@pytest.mark.slow
@pytest.mark.parametrize("key_bits", [192, 256])
def test_where_the_floorplan_is_too_small_nextpnr_places_the_dp16kd(key_bits):
    platform = SimulationPlatform("ecp5", "LFE5U-85F")
    Fragment.get(DeviceForm(key_bits, platform), None)
    assert platform.sites == [None] * (16 * ROUNDS[key_bits] + 2)
