"""The leakage test (scripts/flow/leakage.py): its statistics, its power model and a whole run."""

import json
import math
import random

import pytest

from cipher_cores.scripts.flow import leakage
from cipher_cores.scripts.flow.leakage import (Moments, Netlist, evaluator_stats, first_order_t,
                                               main, second_order_t, toggle_counts)


def _two_pass(samples):
    """Count, mean and centred sums of powers 2..4, by the definition."""
    n = len(samples)
    mean = sum(samples) / n
    return n, mean, *(sum((x - mean) ** k for x in samples) for k in (2, 3, 4))


def _welch_two_pass(a, b):
    def mean_var(xs):
        mean = sum(xs) / len(xs)
        return mean, sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)
    (ma, va), (mb, vb) = mean_var(a), mean_var(b)
    return (ma - mb) / math.sqrt(va / len(a) + vb / len(b))


def _samples(rng, count, mean, spread):
    return [float(round(rng.gauss(mean, spread) + rng.expovariate(0.5))) for _ in range(count)]


def _assert_moments(moments, samples):
    for got, want in zip((moments.n, moments.mean, moments.m2, moments.m3, moments.m4),
                         _two_pass(samples)):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-6)


def test_one_pass_moments_match_two_pass():
    samples = _samples(random.Random(1), 3000, 180, 9)
    moments = Moments()
    for x in samples:
        moments = moments.add(x)
    _assert_moments(moments, samples)


def test_evaluator_moments_match_two_pass():
    samples = _samples(random.Random(2), 3000, 700, 25)
    _assert_moments(evaluator_stats(samples), samples)


def test_merged_moments_match_two_pass():
    samples = _samples(random.Random(3), 2001, 50, 4)
    parts = [samples[:700], samples[700:701], samples[701:]]
    merged = sum((evaluator_stats(part) for part in parts), Moments())
    _assert_moments(merged, samples)


def test_t_statistics_match_two_pass():
    rng = random.Random(4)
    a, b = _samples(rng, 1500, 100, 5), _samples(rng, 1700, 100.6, 7)
    ma, mb = evaluator_stats(a), evaluator_stats(b)
    assert first_order_t(ma, mb) == pytest.approx(_welch_two_pass(a, b), rel=1e-9)
    # Second order: Welch's t of the samples squared after centring each population on its mean.
    centred = [[(x - sum(xs) / len(xs)) ** 2 for x in xs] for xs in (a, b)]
    assert second_order_t(ma, mb) == pytest.approx(_welch_two_pass(*centred), rel=1e-9)


def test_second_order_sees_a_difference_in_spread_alone():
    rng = random.Random(5)
    a = [rng.gauss(0, 1) for _ in range(4000)]
    b = [rng.gauss(0, 2) for _ in range(4000)]
    ma, mb = (sum((Moments(),), Moments()) for _ in range(2))
    for x in a:
        ma = ma.add(x)
    for x in b:
        mb = mb.add(x)
    assert abs(first_order_t(ma, mb)) < 4.5
    assert abs(second_order_t(ma, mb)) > 4.5


def test_toggle_counts_of_a_two_bit_counter():
    # Nets 2, 3: the counter's flip-flops q0, q1; nets 4, 5: the cells d0 = ~q0, d1 = q0 ^ q1
    # (truth tables over a + 2b). The states run 00, 01, 10, 11, 00, ...
    not_a = sum(1 << i for i in range(16) if not i & 1)
    xor_ab = sum(1 << i for i in range(16) if (i & 1) ^ (i >> 1 & 1))
    counter = Netlist(nets=6, ports={}, ffs=[(2, 4, 1, 0, 0, 0, 0, 0), (3, 5, 1, 0, 0, 0, 0, 0)],
                      cells=[(4, 2, 0, 0, 0, not_a), (5, 2, 3, 0, 0, xor_ab)])
    counts = toggle_counts(counter, 9)
    # Flip-flops: the Hamming distance of consecutive counts (0->1: 1, 1->2: 2, 2->3: 1,
    # 3->0: 2); cells: (d0, d1) runs (1,0), (0,1), (1,1), (0,0), so 2, 1, 2, 1 changes.
    assert counts[1:] == [(1, 2), (2, 1), (1, 2), (2, 1)] * 2
    # In the first cycle only the cells settle from 0: d0 becomes 1.
    assert counts[0] == (0, 1)


def test_unprotected_present_leaks(tmp_path):
    path = tmp_path / "present.json"
    assert main(["--core", "present-80", "--traces", "3000", "--jobs", "1", "--probe", "5",
                 "--json", str(path)]) == 0
    result = json.loads(path.read_text())
    assert result["order1"]["leaks"] and result["order1"]["max_abs_t"] > 4.5
    assert result["traces"] == 3000 and result["cycles"] >= 32
    assert len(result["t"]["all"]["order1"]) == result["cycles"]
    # Net by net in cycle 5: the state register's bits (the output port's) leak.
    probed = result["probe"]["t"]
    assert result["probe"]["cycle"] == 5 and len(probed) > 900
    leaking = [name for name, t in probed.items() if abs(t) > 4.5]
    assert any(name.startswith("output__payload[") for name in leaking)


def test_random_versus_random_passes(tmp_path):
    # The control: both populations random, so nothing tells them apart.
    path = tmp_path / "control.json"
    assert main(["--core", "present-80", "--traces", "3000", "--jobs", "1", "--control",
                 "--json", str(path)]) == 0
    result = json.loads(path.read_text())
    assert result["control"]
    assert result["order1"]["max_abs_t"] < 4.5 and not result["order1"]["leaks"]


@pytest.mark.parametrize("argv, message", [
    (["--core", "nonesuch", "--traces", "100"], "unknown core 'nonesuch'"),
    (["--core", "present-80", "--traces", "0"], "argument --traces: must be a positive integer"),
    (["--core", "present-80", "--traces", "100", "--device", "virtex"], "unknown device"),
    (["--core", "present-80", "--traces", "100", "--groups", "all,wires"], "argument --groups"),
    (["--core", "present-80", "--traces", "3", "--jobs", "1"], "--traces must be at least 4"),
    (["--core", "present-80", "--traces", "100", "--probe", "99"], "--probe must be a cycle"),
])
def test_bad_input_gives_one_line(argv, message, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert message in err


def test_hex_value_cuts_from_the_left():
    assert leakage._hex_value(leakage.TVLA_KEY, 128) == int(leakage.TVLA_KEY, 16)
    assert leakage._hex_value(leakage.TVLA_KEY, 80) == int(leakage.TVLA_KEY[:20], 16)
    assert leakage._hex_value("abc", 6) == 0xab >> 2


def _yosys_json(cells):
    return {"modules": {"top": {
        "ports": {"a": {"direction": "input", "bits": [2]}, "b": {"direction": "input",
                                                                  "bits": [3]}},
        "netnames": {"q": {"bits": [4], "attributes": {"init": "1"}}},
        "cells": cells}}}


def test_read_netlist_flip_flop_kinds():
    enabled_sync_reset = {"type": "SB_DFFESR", "parameters": {},
                          "connections": {"C": [9], "D": [2], "E": [3], "R": [2], "Q": [4]}}
    netlist = leakage.read_netlist(_yosys_json({"ff": enabled_sync_reset}))
    a, b, q = (netlist.ports["a"][0], netlist.ports["b"][0], 4)
    # q d ce r rval gated init inv: the reset acts only with E high; init from the attribute.
    assert netlist.ffs == [(q, a, b, a, 0, 1, 1, 0)]
    trellis = {"type": "TRELLIS_FF",
               "parameters": {"CEMUX": "INV", "LSRMUX": "LSR", "REGSET": "SET ",
                              "SRMODE": "LSR_OVER_CE", "CLKMUX": "CLK"},
               "connections": {"CLK": [9], "DI": [3], "CE": [2], "LSR": [3], "Q": [4]}}
    assert leakage.read_netlist(_yosys_json({"ff": trellis})).ffs == [(q, b, a, b, 1, 0, 1, 1)]


def test_read_netlist_refuses_what_it_cannot_model():
    with pytest.raises(leakage.LeakageError, match="cell m of type SB_RAM40_4K is not supported"):
        leakage.read_netlist(_yosys_json({"m": {"type": "SB_RAM40_4K", "parameters": {},
                                                "connections": {}}}))
    with pytest.raises(leakage.LeakageError, match="falling-edge flip-flop SB_DFFN"):
        leakage.read_netlist(_yosys_json({"f": {"type": "SB_DFFN", "parameters": {},
                                                "connections": {"D": [2], "Q": [4]}}}))
    loop = {f"l{i}": {"type": "SB_LUT4", "parameters": {"LUT_INIT": "0000000000000001"},
                      "connections": {"I0": [5 + (i + 1) % 2], "O": [5 + i]}} for i in range(2)}
    with pytest.raises(leakage.LeakageError, match="combinational loop"):
        leakage.read_netlist(_yosys_json(loop))
