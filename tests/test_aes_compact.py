# amaranth: UnusedElaboratable=no
"""The narrow AES cores (the compact core and the block-RAM core) against FIPS-197, the NIST
AESAVS ECB files and pycryptodome, and the compact core's building blocks against their
definitions. The block-RAM core's own tests are in ``tests/test_aes_bram.py``; the stream
contract and the measured cycle figures are checked in ``tests/test_contract.py``."""

import random

import pytest
from amaranth.hdl import Cat, Fragment, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from cipher_cores.cores.aes.bram import BlockRamAES, half_mix_column
from cipher_cores.cores.aes.compact import CompactAES, diagonal_source, mix_column
from cipher_cores.cores.aes.compact_key import ring_plan
from cipher_cores.cores.aes.reference import expand_key_words
from cipher_cores.cores.aes.transforms import (INV_SHIFT_ROWS, KEY_WORDS, ROUNDS, SHIFT_ROWS, mix_columns)
from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_C
from cipher_cores.cores.catalog import get_core
from cipher_cores.cores.interface import BlockCipherSignature

from .support.helpers import LoadKey, Process, direction_changes, expected_results, simulate_cipher
from .support.nist import AESAVS_KINDS, aesavs_ecb_operations


KEY_SIZES = (128, 192, 256)
#: The tests below that take ``core_class`` run on both narrow cores.
narrow_cores = pytest.mark.parametrize("core_class", [CompactAES, BlockRamAES],
                                       ids=["compact", "bram"])


def oracle_results(operations, key_bits):
    """pycryptodome's answers (the round-based core's reference in :mod:`tests.support.helpers`)."""
    return expected_results(get_core("aes").config(key_bits), operations)


def assert_clean_run(run, expected):
    assert run.results == expected
    assert (run.key.violations, run.input.violations, run.output.violations) == ([], [], [])


# Known answers

@narrow_cores
@pytest.mark.parametrize("vector", FIPS197_APPENDIX_C, ids=lambda v: f"aes{v.key_bits}")
def test_fips197_appendix_c_both_directions(core_class, vector):
    """Encryption and decryption one after the other, and each twice in a row: every way the key
    schedule's ring is brought to a block's first round key."""
    operations, expected = direction_changes(vector)
    assert_clean_run(simulate_cipher(core_class(vector.key_bits), operations), expected)


@narrow_cores
@pytest.mark.parametrize("key_bits", KEY_SIZES)
@pytest.mark.parametrize("kind", AESAVS_KINDS)
def test_aesavs_ecb_file(core_class, kind, key_bits):
    """Every vector of the file, encrypt and decrypt sections, one compiled simulation; the key
    is loaded again only when it changes."""
    operations, expected = aesavs_ecb_operations(kind, key_bits)
    run = simulate_cipher(core_class(key_bits), operations, backend="cxxrtl")
    assert_clean_run(run, list(expected))


# Differential tests against pycryptodome

def direction_runs(rng, key_bits, *, keys, blocks_per_key):
    """Random keys and blocks in random directions, except that the first key's blocks go
    E E D D E D (every transition between directions) and the second key's first block is a
    decryption (the other direction right after a key load)."""
    operations = []
    for index in range(keys):
        operations.append(LoadKey(rng.getrandbits(key_bits)))
        pattern = [False, False, True, True, False, True] if index == 0 else \
            [rng.random() < 0.5 for _ in range(blocks_per_key)]
        if index == 1:
            pattern[0] = True
        operations += [Process(rng.getrandbits(128), decrypt) for decrypt in pattern]
    return operations


@narrow_cores
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_random_keys_directions_gaps_and_back_pressure_match_pycryptodome(core_class, key_bits):
    rng = random.Random(f"{core_class.__name__}-differential-{key_bits}")
    operations = direction_runs(rng, key_bits, keys=10, blocks_per_key=12)
    core = core_class(key_bits)
    run = simulate_cipher(core, operations, rng=rng, max_gap=3, max_stall=2 * core.latency,
                          backend="cxxrtl")
    assert_clean_run(run, oracle_results(operations, key_bits))
    assert max(run.latencies) > core.latency          # back-pressure did delay results


@narrow_cores
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_encryption_only_core_encrypts_every_block(core_class, key_bits):
    """``decrypt=False``: a block asking for decryption is encrypted, in the same cycles."""
    operations = direction_runs(random.Random(f"{core_class.__name__}-encrypt-only-{key_bits}"),
                                key_bits,
                                keys=2, blocks_per_key=6)
    core = core_class(key_bits, decrypt=False)
    run = simulate_cipher(core, operations, rng=random.Random(2), max_gap=2, max_stall=3)
    encryptions = [Process(op.block, False) if isinstance(op, Process) else op
                   for op in operations]
    assert_clean_run(run, oracle_results(encryptions, key_bits))
    full = core_class(key_bits)
    assert (core.latency, core.initiation_interval, core.key_load_cycles) == \
        (full.latency, full.initiation_interval, full.key_load_cycles)


@narrow_cores
@pytest.mark.parametrize("key_bits", [
    128, pytest.param(192, marks=pytest.mark.slow), pytest.param(256, marks=pytest.mark.slow)])
def test_python_and_compiled_simulations_agree(core_class, key_bits):
    """The same run, gaps and stalls on both back ends: same results at the same edges."""
    operations = direction_runs(random.Random(f"{core_class.__name__}-backends-{key_bits}"),
                                key_bits,
                                keys=2, blocks_per_key=3)
    core = core_class(key_bits)
    runs = [simulate_cipher(core, operations, rng=random.Random(1), max_gap=2, max_stall=5,
                            backend=backend) for backend in ("python", "cxxrtl")]
    assert runs[0] == runs[1]
    assert_clean_run(runs[0], oracle_results(operations, key_bits))


@narrow_cores
@pytest.mark.slow
@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_long_random_sweep_matches_pycryptodome(core_class, key_bits):
    """Compiled: 1000 keys of 25 blocks each in random directions, random gaps and stalls
    (about 5 s per key size)."""
    rng = random.Random(f"{core_class.__name__}-sweep-{key_bits}")
    operations = direction_runs(rng, key_bits, keys=1000, blocks_per_key=25)
    run = simulate_cipher(core_class(key_bits), operations, rng=rng, max_gap=3, max_stall=4,
                          backend="cxxrtl")
    assert_clean_run(run, oracle_results(operations, key_bits))


# Building blocks against their definitions

class _ColumnUnit(wiring.Component):
    """A column function of the narrow cores (``function(m, bytes, decrypt, last)``, bytes row 0
    first) as a component with the column in and ``result_bytes`` bytes of result out."""
    def __init__(self, function, result_bytes: int):
        self._function = function
        super().__init__({"column": In(32), "decrypt": In(1), "last": In(1),
                          "result": Out(8 * result_bytes)})

    def elaborate(self, platform):
        m = Module()
        data = [self.column[8 * (3 - r):8 * (4 - r)] for r in range(4)]
        result = self._function(m, data, self.decrypt, self.last)
        m.d.comb += self.result.eq(Cat(*reversed(result)))
        return m


def check_column_unit(dut, seed: str, check):
    """``check(ctx, data, decrypt)`` for ``dut`` (a :class:`_ColumnUnit`) on 64 columns (all
    zeros, all ones, two well-known MixColumns test columns and random ones) in both directions."""
    rng = random.Random(seed)
    columns = [0, 0xffffffff, 0xdb135345, 0xf20a225c] + [rng.getrandbits(32) for _ in range(60)]

    async def testbench(ctx):
        for column in columns:
            for decrypt in (0, 1):
                ctx.set(dut.decrypt, decrypt)
                check(ctx, list(column.to_bytes(4, "big")), decrypt)

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()


def _word(data) -> int:
    return int.from_bytes(bytes(data), "big")


def test_mix_column_is_mixcolumns_invmixcolumns_or_nothing():
    dut = _ColumnUnit(mix_column, 4)

    def check(ctx, data, decrypt):
        expected = _word(mix_columns(data + [0] * 12, inverse=bool(decrypt))[:4])
        ctx.set(dut.column, _word(data))
        ctx.set(dut.last, 0)
        assert ctx.get(dut.result) == expected, (data, decrypt)
        ctx.set(dut.last, 1)
        assert ctx.get(dut.result) == _word(data)

    check_column_unit(dut, "mix-column", check)


def test_half_mix_column_gives_rows_0_and_1_and_with_halves_swapped_rows_2_and_3():
    """The block-RAM core's unit on (a0, a1, a2, a3) gives rows 0 and 1 of (Inv)MixColumns, on
    (a2, a3, a0, a1) rows 2 and 3, so one half unit serves a column in two cycles."""
    dut = _ColumnUnit(lambda m, data, decrypt, last: half_mix_column(m, data, decrypt), 2)

    def check(ctx, data, decrypt):
        mixed = mix_columns(data + [0] * 12, inverse=bool(decrypt))[:4]
        ctx.set(dut.column, _word(data))
        assert ctx.get(dut.result) == _word(mixed[:2]), (data, decrypt)
        ctx.set(dut.column, _word(data[2:] + data[:2]))
        assert ctx.get(dut.result) == _word(mixed[2:]), (data, decrypt)

    check_column_unit(dut, "half-mix-column", check)


@pytest.mark.parametrize("decrypt", [False, True])
def test_diagonal_sources_read_what_shiftrows_selects(decrypt):
    """Run the state ring of a round on labels (old column, row): in cycle c (sampled on edge
    c + 1) each row's source holds the byte (Inv)ShiftRows puts in column c, although new columns
    enter the tail on edges 2..5; and after the five edges the ring holds the new columns in
    order."""
    ring = [[("old", c, r) for r in range(4)] for c in range(4)]
    side = [[None] * 4, [None] * 4]
    permutation = INV_SHIFT_ROWS if decrypt else SHIFT_ROWS
    for cycle in range(5):
        if cycle < 4:
            for row in range(4):
                source = diagonal_source(row, decrypt, cycle)
                word = ring[int(source[1])] if source[0] == "P" else side[int(source[-1])]
                wanted = permutation[4 * cycle + row]
                assert word[row] == ("old", wanted // 4, wanted % 4), (row, cycle, source)
        tail = [("new", cycle - 1, r) for r in range(4)] if cycle else ring[0]
        side = [ring[0], side[0]]
        ring = ring[1:] + [tail]
    assert ring == [[("new", c, r) for r in range(4)] for c in range(4)]


@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_key_ring_plan_computes_the_key_schedule(key_bits):
    """Run a ring of real key words by the plan (operand slots, SubWord layouts) forwards from
    position 0 to Nr and backwards again: the word in s4 after computing word c of a step is
    column c of that round's key, and every step ends at the next position."""
    from cipher_cores.cores.aes.sbox import SBOX

    def sub_word(word):
        return int.from_bytes(bytes(SBOX[b] for b in word.to_bytes(4, "big")), "big")

    plan, nr = ring_plan(key_bits), ROUNDS[key_bits]
    length = plan.length
    key = random.Random(f"ring-{key_bits}").getrandbits(key_bits)
    words = expand_key_words(key, key_bits, 4 * nr + length)

    def position(p):
        return {f"s{j}": words[4 * p + j - 1] for j in range(1, length + 1)}

    for backward in (False, True):
        for step in range(1, nr + 1):
            ring = position(step if backward else step - 1)
            layout = plan.steps[backward][step - 1]
            if layout.column is not None:
                address = 0
                for slot in layout.address:
                    address ^= ring[slot]
                sub = sub_word(address)
                if layout.rot_word:
                    sub = ((sub << 8) | (sub >> 24)) & 0xffffffff
                sub ^= layout.rcon_byte << 24
            for c in range(4):
                x, y = ring[plan.x[backward][c]], ring.get(plan.y[backward][c])
                new = x ^ (sub if c == layout.column else y)
                rotated = {f"s{j}": ring[f"s{j % length + 1}"] for j in range(1, length + 1)}
                rotated["s4" if backward else f"s{length}"] = new
                rotated["p1"] = ring["s1" if length == 4 else "s5"]
                rotated["p2"], rotated["p3"] = ring.get("p1"), ring.get("p2")
                ring = rotated
                expected = words[4 * (step - 1) + c] if backward else words[4 * step + c]
                assert ring["s4"] == expected, (backward, step, c)
            end = position(step - 1 if backward else step)
            assert {slot: ring[slot] for slot in end} == end, (backward, step)


# Construction

@pytest.mark.parametrize("key_bits", KEY_SIZES)
def test_signature_and_cycle_figures(key_bits):
    core = CompactAES(key_bits)
    assert core.signature == BlockCipherSignature(128, key_bits)
    assert (core.key_bits, core.decrypts) == (key_bits, True)
    nr, length = ROUNDS[key_bits], ring_plan(key_bits).length
    # Round 0 (AddRoundKey while the key schedule's ring turns L times, then a SubWord look-up)
    # and Nr rounds of five cycles, plus the edge the result leaves on.
    assert core.latency == core.initiation_interval == length + 2 + 5 * nr
    # AES-192's key fills six of the ring's eight words: two more are computed first.
    assert core.key_load_cycles == core.latency + (3 if KEY_WORDS[key_bits] == 6 else 0)
    Fragment.get(core, None)


@pytest.mark.parametrize("key_bits, error, message", [
    (100, ValueError, "key_bits must be 128, 192 or 256, not 100"),
    ("128", TypeError, "key_bits must be an integer (128, 192 or 256), not '128'"),
    (True, TypeError, "key_bits must be an integer (128, 192 or 256), not True"),
])
@narrow_cores
def test_bad_key_bits_is_rejected_with_the_allowed_values(core_class, key_bits, error, message):
    with pytest.raises(error) as info:
        core_class(key_bits)
    assert str(info.value) == message


@narrow_cores
def test_decrypt_must_be_a_bool(core_class):
    with pytest.raises(TypeError) as info:
        core_class(128, decrypt="no")
    assert str(info.value) == "decrypt must be a bool (True or False), not 'no'"
