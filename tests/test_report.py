"""Reading Yosys and nextpnr output, counting a core's cells apart from its harness, and the
derived figures of the utilization report. The fixtures under tests/data/ were captured from real
runs of ``measure_device`` (the toy core inside the measurement harness, YoWASP Yosys 0.70 and
nextpnr 0.11.1)."""

import json
import math
import pathlib

import pytest

from cipher_cores.cores.catalog import parse_config
from cipher_cores.scripts.flow.measure import (
    CellCounts, CycleFigures, Overflow, classify_cells, core_and_harness, hierarchy_cells,
    measure_cycles, overflow, parse_nextpnr_log, parse_nextpnr_overflow, parse_nextpnr_report,
    slice_equivalent)
from cipher_cores.scripts.flow.report import (assemble, papers_for, derive_row, markdown_report, plot_report,
                                 text_table)
from cipher_cores.scripts.flow.build import MEASURE_CORE_PATH, DeviceMeasurement, seed_command
from cipher_cores.scripts.flow.targets import parse_target


# These tests use the toy cipher of tests/support/toy_cipher.py as core "toy".
pytestmark = pytest.mark.usefixtures("toy_in_catalog")


DATA = pathlib.Path(__file__).parent / "data"
ICE40 = DATA / "toy80_ice40_up5k"
ECP5 = DATA / "toy80_ecp5_25f"


def load(path):
    with open(path) as file:
        return json.load(file)


def test_nextpnr_report_fmax_and_utilization_ice40():
    result = parse_nextpnr_report(str(ICE40 / "report.seed1.json"))
    assert result.fmax_mhz == pytest.approx(53.07, abs=0.01)
    assert result.constraint_mhz == pytest.approx(48.0, abs=0.01)
    assert result.utilization["ICESTORM_LC"]["available"] == 5280
    assert result.utilization["ICESTORM_LC"]["used"] > 0


def test_nextpnr_report_matches_its_log():
    # The report's Fmax is the log's last (post-route) "Max frequency" line.
    for directory in (ICE40, ECP5):
        report = parse_nextpnr_report(str(directory / "report.seed1.json"))
        log = parse_nextpnr_log((directory / "top.seed1.tim").read_text())
        assert len(log) == 1
        assert list(log.values())[0] == pytest.approx(report.fmax_mhz, abs=0.01)


def test_nextpnr_report_clock_name_of_ecp5_flow():
    report = load(ECP5 / "report.seed1.json")
    assert list(report["fmax"]) == ["$glbnet$cd_sync.clk"]
    assert parse_nextpnr_report(report).fmax_mhz == pytest.approx(211.55, abs=0.01)


def test_nextpnr_report_from_json_text():
    text = json.dumps({"fmax": {"clk": {"achieved": 12.5, "constraint": 10.0}},
                       "utilization": {}})
    assert parse_nextpnr_report(text).fmax_mhz == 12.5


def test_nextpnr_report_without_clock():
    assert parse_nextpnr_report({"utilization": {}}).fmax_mhz is None


def test_hierarchy_cells_adds_submodules():
    stat = {"modules": {
        "\\top": {"num_cells_by_type": {"SB_LUT4": 2, "sub": 2, "$scopeinfo": 3}},
        "\\sub": {"num_cells_by_type": {"SB_LUT4": 5, "SB_DFF": 1}},
    }}
    assert hierarchy_cells(stat, "top") == {"SB_LUT4": 12, "SB_DFF": 2}
    assert hierarchy_cells(stat, "sub") == {"SB_LUT4": 5, "SB_DFF": 1}


def test_hierarchy_cells_unknown_module():
    with pytest.raises(KeyError, match="module 'nope' not in the Yosys statistics"):
        hierarchy_cells({"modules": {"\\top": {}}}, "nope")


@pytest.mark.parametrize("directory, family", [(ICE40, "ice40"), (ECP5, "ecp5")])
def test_core_and_harness_partition_the_design(directory, family):
    stat = load(directory / "stat.json")
    core, harness = core_and_harness(stat, "top", MEASURE_CORE_PATH, family)
    total = classify_cells(hierarchy_cells(stat, "top"), family)
    for name, count in total.to_dict().items():
        assert getattr(core, name) + getattr(harness, name) == count
    # The core has no I/O; the harness has the clock and two data pins.
    assert core.io == 0
    assert harness.io == 3


def test_harness_cells_are_the_shift_registers():
    # The toy core has 80 + 64 + 1 + 2 input bits and 64 + 2 output bits: the harness has one
    # flip-flop per bit plus the power-on-reset counter iCE40 platforms add.
    stat = load(ICE40 / "stat.json")
    _, harness = core_and_harness(stat, "top", MEASURE_CORE_PATH, "ice40")
    assert 147 + 66 <= harness.ff <= 147 + 66 + 16


def test_core_cells_ice40_fixture():
    stat = load(ICE40 / "stat.json")
    core, _ = core_and_harness(stat, "top", MEASURE_CORE_PATH, "ice40")
    assert core == CellCounts(lut4=208, ff=134, carry=0, bram=0, io=0, other=0)


def test_classify_cells_ecp5_counts_carry_luts():
    cells = {"LUT4": 10, "CCU2C": 3, "TRELLIS_FF": 7, "DP16KD": 2, "PFUMX": 4,
             "TRELLIS_DPR16X4": 1, "MULT18X18D": 1}
    assert classify_cells(cells, "ecp5") == CellCounts(
        lut4=10 + 2 * 3 + 6, ff=7, carry=3, bram=2, io=0, other=1)


def test_classify_cells_ice40():
    cells = {"SB_LUT4": 10, "SB_CARRY": 4, "SB_DFFER": 3, "SB_DFF": 2, "SB_RAM40_4K": 5,
             "SB_IO": 2, "SB_GB_IO": 1}
    assert classify_cells(cells, "ice40") == CellCounts(
        lut4=10, ff=5, carry=4, bram=5, io=3, other=0)


def test_overflow_ice40_counts_logic_cells():
    capacity = {"lc": 5280, "bram": 30}
    assert overflow(CellCounts(lut4=5000, ff=6000), capacity, "ice40") == \
        Overflow("ICESTORM_LC", 6000, 5280)
    assert overflow(CellCounts(lut4=5000, ff=10, bram=30), capacity, "ice40") is None


def test_overflow_bram():
    found = overflow(CellCounts(lut4=1, ff=1, bram=57), {"lut4": 24288, "ff": 24288, "bram": 56},
                     "ecp5")
    assert str(found) == "DP16KD 57/56, 101 %"


def test_overflow_ecp5_luts():
    found = overflow(CellCounts(lut4=30000, ff=1), {"lut4": 24288, "ff": 24288, "bram": 56},
                     "ecp5")
    assert str(found) == "TRELLIS_COMB 30000/24288, 123 %"


def test_overflow_reads_as_the_issue_asks():
    assert str(Overflow("ICESTORM_LC", 14517, 5280)) == "ICESTORM_LC 14517/5280, 274 %"


def test_nextpnr_overflow_from_its_log():
    log = ("Info: Device utilisation:\n"
           "Info: \t         ICESTORM_LC:  14517/  5280   274%\n"
           "Info: \t        ICESTORM_RAM:     31/    30   103%\n"
           "Info: \t               SB_IO:      3/    39     7%\n"
           "ERROR: Unable to place cell 'x', no BELs remaining to implement cell type "
           "'ICESTORM_LC'\n")
    assert parse_nextpnr_overflow(log) == Overflow("ICESTORM_LC", 14517, 5280)


def test_nextpnr_overflow_of_a_design_that_fits():
    for directory in (ICE40, ECP5):
        assert parse_nextpnr_overflow((directory / "top.seed1.tim").read_text()) is None


def test_slice_equivalent():
    assert slice_equivalent(0, 0) == 0
    assert slice_equivalent(3, 1) == 2
    assert slice_equivalent(100, 251) == 126


def test_seed_command_renames_outputs():
    argv = ["nextpnr-ice40", "--quiet", "--log", "top.tim", "--up5k", "--json", "top.json",
            "--asc", "top.asc", "--seed", "9"]
    assert seed_command(argv, 2, "r.json") == [
        "nextpnr-ice40", "--quiet", "--log", "top.seed2.tim", "--up5k", "--json", "top.json",
        "--asc", "top.seed2.asc", "--seed", "2", "--report", "r.json"]


def fake_measurement(**changes):
    measurement = DeviceMeasurement(
        label="TOY-80", config={"core": "toy", "key_bits": 80}, device="ice40-up5k",
        family="ice40", block_bits=64, fit=True, fit_reason="", seeds=[1, 2, 3],
        core_cells=CellCounts(lut4=1000, ff=300, bram=2), harness_cells=CellCounts(),
        design_cells=CellCounts(), design_utilization={}, build_dir="x", elapsed_s=1.0,
        fmax_mhz=[40.0, 50.0, 45.0], constraint_mhz=48)
    for name, value in changes.items():
        setattr(measurement, name, value)
    return measurement


CYCLES = CycleFigures(cycles_per_block=32, cycles_per_block_decrypt=32, latency=32,
                      latency_decrypt=32, key_to_input=32, verified=True, blocks=6)


def test_derived_figures():
    row = derive_row(fake_measurement(), CYCLES)
    assert row["fmax_median_mhz"] == 45.0
    assert row["fmax_best_mhz"] == 50.0
    assert row["throughput_median_mbps"] == pytest.approx(64 * 45 / 32, abs=0.05)
    assert row["throughput_best_mbps"] == pytest.approx(100.0)
    assert row["slices"] == 500
    assert row["mbps_per_klut"] == pytest.approx(90.0, abs=0.05)
    assert row["kbps_per_slice"] == pytest.approx(180, abs=1)


def test_derived_figures_of_a_design_that_does_not_fit():
    row = derive_row(fake_measurement(fit=False, fmax_mhz=[]), CYCLES)
    assert row["fmax_median_mhz"] is None
    assert row["throughput_median_mbps"] is None
    assert row["mbps_per_klut"] is None


def test_papers_figures():
    aes, = parse_config("aes-128").papers()
    present80, = parse_config("present-80").papers()
    present128, = parse_config("present-128:decrypt=no").papers()
    assert parse_config("aes-256").papers() == []
    assert (aes.slices, aes.throughput_mbps) == (548, 2180)
    assert round(aes.kbps_per_slice) == 3978
    assert (present80.slices, present80.fmax_mhz, present80.throughput_mbps) == \
        (126, 215.42, 417.79)
    assert (present128.slices, present128.fmax_mhz, present128.throughput_mbps) == \
        (150, 212.13, 411.41)
    # The PRESENT paper's throughput is 64 bits per 33 cycles.
    for paper in (present80, present128):
        assert 64 * paper.fmax_mhz / paper.latency == pytest.approx(paper.throughput_mbps, abs=0.02)


def test_aes_paper_formula_inconsistency_is_noted():
    # 128 bits / (71 cycles * 769.23 ns) is 2.34 Mb/s, not the 2.18 Gb/s the paper claims.
    assert 128 / (71 * 769.23e-9) / 1e6 == pytest.approx(2.34, abs=0.01)
    assert "2.34 Mb/s" in parse_config("aes-128").papers()[0].note


def report_fixture():
    return assemble([fake_measurement(), fake_measurement(device="ecp5-25f", fit=False,
                                                          fit_reason="too big", fmax_mhz=[])],
                    {"TOY-80": CYCLES}, command="cipher-cores report --cores toy",
                    papers=papers_for(parse_config(text)
                                      for text in ("aes-128", "present-80", "present-128")),
                    tool_versions={"yosys": "Yosys 0.70"}, seeds=[1, 2, 3], elapsed_s=75,
                    source="0123456789ab")


def test_report_json_records_how_it_was_made():
    report = report_fixture()
    json.dumps(report)
    assert report["cycles"]["TOY-80"]["cycles_per_block"] == 32
    assert report["rows"][0]["core_cells"] == {"lut4": 1000, "ff": 300, "carry": 0, "bram": 2,
                                               "io": 0, "other": 0}
    assert report["command"] == "cipher-cores report --cores toy"
    assert report["seeds"] == [1, 2, 3]
    assert report["tool_versions"] == {"yosys": "Yosys 0.70"}
    assert len(report["papers"]) == 3


def test_text_table_has_papers_beside_measurements():
    table = text_table(report_fixture())
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["core", "device", "LUT4"]
    assert any(line.startswith("TOY-80") and "45.0 (50.0)" in line for line in lines)
    assert any(line.startswith("PRESENT-80 (paper)") and "417.79" in line for line in lines)
    assert any(line.startswith("AES-128 (paper)") and "3,978" in line for line in lines)


def test_markdown_report():
    page = markdown_report(report_fixture(), plot="results.png")
    assert "cipher-cores report --cores toy" in page
    assert "![Area against throughput](results.png)" in page
    assert "| TOY-80 | ice40-up5k | 1,000 | 300 |" in page
    assert "TOY-80 does not fit ecp5-25f: too big." in page
    assert "the sweep took 1m15s" in page
    assert "sources at commit `0123456789ab`" in page
    assert "* yosys: Yosys 0.70" in page
    # Cycles table, from the simulated figures.
    assert "| TOY-80 | 32 | 32 | 32 | 32 | 32 | yes |" in page


def test_markdown_sets_rows_beside_their_paper():
    measurement = fake_measurement(label="PRESENT-80", config={"core": "present", "key_bits": 80})
    report = assemble([measurement], {"PRESENT-80": CYCLES},
                      papers=papers_for([parse_config("present-80")]))
    page = markdown_report(report)
    assert "| ice40-up5k | PRESENT-80 | 500 | 3.97× | 90.0 | 22 % | 180 | no |" in page


def test_pareto_front_keeps_only_the_cores_nothing_beats_on_area_and_speed():
    from cipher_cores.scripts.flow.report import pareto_front

    def row(name, slices, mbps):
        return {"label": name, "slices": slices, "throughput_median_mbps": mbps}
    rows = [row("small", 100, 10.0), row("fast", 900, 500.0), row("middle", 300, 200.0),
            row("beaten", 400, 150.0), row("tie-bigger", 300, 150.0), row("unmeasured", 50, None)]
    assert [r["label"] for r in pareto_front(rows)] == ["small", "middle", "fast"]


def test_summary_names_the_front_of_each_paper_per_device():
    """The summary beside the papers takes every plain core of the paper's cipher and key size,
    not only the one whose label is the paper's: a second PRESENT-80 architecture that is smaller
    and faster replaces the first on the front, and a wrapper never enters it."""
    from cipher_cores.scripts.flow.report import fronts
    slow = fake_measurement(label="PRESENT-80", config={"core": "present", "key_bits": 80})
    report = assemble([slow], {"PRESENT-80": CYCLES},
                      papers=papers_for([parse_config("present-80")]))
    better = dict(report["rows"][0], label="PRESENT-keytable-80", lut4=100, slices=60,
                  throughput_median_mbps=95.0,
                  config={"core": "present-keytable", "key_bits": 80})
    wrapped = dict(better, label="Wishbone PRESENT-80", slices=10, throughput_median_mbps=900.0,
                   config={"wrapper": "wishbone", "core": "present", "key_bits": 80})
    report["rows"] += [better, wrapped]
    front = fronts(report)["PRESENT-80 (paper)"]["ice40-up5k"]
    assert [row["label"] for row in front] == ["PRESENT-keytable-80"]
    assert "| ice40-up5k | PRESENT-keytable-80 | 60 |" in markdown_report(report)


def test_plot_is_written(tmp_path):
    path = tmp_path / "plot.png"
    plot_report(report_fixture(), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cycles_are_measured_by_simulation():
    figures = measure_cycles(parse_config("toy"))
    # The toy core takes 4 rounds, plus a cycle to load and one to hand over the result.
    assert figures.verified
    assert figures.latency == 5
    assert figures.cycles_per_block == 6
    assert figures.key_to_input == 1


@pytest.mark.parametrize("rounds_per_cycle", [1, 4])
def test_cycles_of_present_match_its_documented_counts(rounds_per_cycle):
    pytest.importorskip("cipher_cores.cores.present")
    config = parse_config(f"present-80:rounds_per_cycle={rounds_per_cycle}")
    figures = measure_cycles(config, blocks=3)
    # The PRESENT core documents latency = initiation interval = ceil(31 / R) + 1.
    assert figures.verified
    assert figures.latency == math.ceil(31 / rounds_per_cycle) + 1
    assert figures.cycles_per_block == math.ceil(31 / rounds_per_cycle) + 1


def test_cycles_of_aes_are_verified():
    spec_config = parse_config("aes-128")
    figures = measure_cycles(spec_config, blocks=3)
    assert figures.verified
    assert math.isfinite(figures.cycles_per_block)


def test_cycles_of_an_encrypt_only_core_are_verified_against_encryption():
    figures = measure_cycles(parse_config("present-80:decrypt=no"), blocks=3)
    assert figures.verified
    assert figures.key_to_input == 1


def test_cycles_through_the_wishbone_peripheral_are_what_firmware_sees():
    figures = measure_cycles(parse_target("wishbone:toy"), blocks=10)
    assert figures.verified and figures.through == "wishbone"
    # The toy core (6 cycles per block) keeps up with the bus: each 64-bit block costs one STATUS
    # read, two DIN writes and two DOUT reads, 2 edges each, both ways (CTR; ECB decryption).
    assert figures.cycles_per_block == figures.cycles_per_block_decrypt == 10
    # A lone block: STATUS read, two DOUT reads and the core's 5 edges; no FIFO by default
    # (with FIFOs each block-RAM FIFO's read register adds an edge).
    assert figures.latency == figures.latency_decrypt == 12
    # START acts three edges after its write is taken (see test_wishbone.py) and loads the key
    # (1 edge for the toy); the block waits in the block register and is offered to the core
    # from a flip-flop set on the edge the message runs.
    assert figures.key_to_input == 5
    assert CycleFigures.from_dict(figures.to_dict()) == figures


def test_cycles_through_the_peripheral_of_an_encrypt_only_core_decrypt_in_ctr():
    pytest.importorskip("cipher_cores.cores.present")
    figures = measure_cycles(parse_target("wishbone:present-80:decrypt=no,rounds_per_cycle=8"),
                             blocks=8)
    assert figures.verified
    assert figures.cycles_per_block == figures.cycles_per_block_decrypt == 10


def test_markdown_explains_cycles_through_the_bus():
    report = report_fixture()
    label = "Wishbone TOY-80 (ECB/CBC/CFB/OFB/CTR)"
    report["cycles"][label] = {**report["cycles"]["TOY-80"], "through": "wishbone"}
    page = markdown_report(report)
    assert "Wishbone and AXI4-Lite rows are measured through the bus, as firmware sees them" \
        in page
    report["cycles"][label]["through"] = "axi4-lite"
    assert "AXI4-Lite rows are measured through the bus" in markdown_report(report)
    assert "through the bus" not in markdown_report(report_fixture())
