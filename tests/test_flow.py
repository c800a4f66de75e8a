# amaranth: UnusedElaboratable=no
"""The build flow with the tools replaced at the lowest level (:func:`cipher_cores.scripts.flow.build.run_step`):
the shared synthesis path, fit checks, logs, the report's executors (this process, a Dask
cluster) and the results they give."""

import json
import pathlib
import shutil

import pytest
from amaranth.hdl import Fragment

from cipher_cores.cores.catalog import CoreConfig, parse_config
from cipher_cores.platforms.boards import get_board
from cipher_cores.platforms.devices import get_device
from cipher_cores.platforms.harness import MeasurementHarness, harness_widths
import cipher_cores.scripts.flow.build
from cipher_cores.scripts.flow.build import (BoardBuild, DeviceMeasurement, DoesNotFit, build_board,
                                measure_device, run_step)
from cipher_cores.scripts.flow.jobs import InlineExecutor, MeasureJob
from cipher_cores.scripts.flow.measure import CellCounts, Overflow
from cipher_cores.scripts.flow.report import run_report
from cipher_cores.scripts.flow.targets import PeripheralConfig, parse_target


# These tests use the toy cipher of tests/support/toy_cipher.py as core "toy".
pytestmark = pytest.mark.usefixtures("toy_in_catalog")


DATA = pathlib.Path(__file__).parent / "data"

LONG_CELL = "top.selftest.core." + "very_long_hierarchical_name_" * 22


def option(argv, name):
    return argv[argv.index(name) + 1] if name in argv else None


class FakeTools:
    """Stands in for Yosys and nextpnr: writes the files a real run wrote (tests/data), or a
    design that does not fit."""
    def __init__(self, *, stat_luts=None, nextpnr_overflow=False):
        self.stat_luts = stat_luts
        self.nextpnr_overflow = nextpnr_overflow
        self.calls = []

    def __call__(self, argv, cwd, log_name, environ=None):
        cwd = pathlib.Path(cwd)
        self.calls.append(argv)
        family = "ecp5" if "--25k" in argv or "--textcfg" in argv or "--lpf" in argv else "ice40"
        data = DATA / ("toy80_ecp5_25f" if family == "ecp5" else "toy80_ice40_up5k")
        if argv[0] == "yosys":
            assert "-q" not in argv     # prepared verbose: the log holds Yosys' output
            # The fixture was measured with the harness; any design is "top" with a core.
            stat = json.loads((data / "stat.json").read_text())
            if (cwd / "top.il").read_text().find("top.selftest.core") >= 0:
                stat = _rename_core(stat, "top.harness.core", "top.selftest.core")
            if self.stat_luts is not None:
                module = "\\top.selftest.core" if "\\top.selftest.core" in stat["modules"] \
                    else "\\top.harness.core"
                stat["modules"][module]["num_cells_by_type"]["SB_LUT4"] = self.stat_luts
            (cwd / "stat.json").write_text(json.dumps(stat))
            (cwd / log_name).write_text("yosys output\n")
            return 0
        if argv[0].startswith("nextpnr"):
            assert "--quiet" not in argv
            if self.nextpnr_overflow:
                (cwd / log_name).write_text(
                    "Info: Device utilisation:\n"
                    "Info: \t         ICESTORM_LC:  14517/  5280   274%\n"
                    "Info: \t        ICESTORM_RAM:      0/    30     0%\n"
                    f"ERROR: Unable to place cell '{LONG_CELL}', no BELs remaining to "
                    "implement cell type 'ICESTORM_LC'\n")
                return 1
            shutil.copy(data / "report.seed1.json", cwd / option(argv, "--report"))
            shutil.copy(data / "top.seed1.tim", cwd / option(argv, "--log"))
            (cwd / log_name).write_text("nextpnr output\n")
            for flag in ("--asc", "--textcfg"):
                if option(argv, flag):
                    (cwd / option(argv, flag)).write_text("placed\n")
            return 0
        (cwd / argv[-1 if argv[0] == "icepack" else argv.index("--bit") + 1]).write_bytes(
            b"\0" * 100)
        (cwd / log_name).write_text("")
        return 0


def _rename_core(stat, old, new):
    text = json.dumps(stat).replace(old, new)
    return json.loads(text)


@pytest.fixture
def fake_tools(monkeypatch):
    def install(**kwargs):
        tools = FakeTools(**kwargs)
        monkeypatch.setattr(cipher_cores.scripts.flow.build, "run_step", tools)
        return tools
    return install


# --- the shared path --------------------------------------------------------------------------

def test_measure_device_is_typed(fake_tools, tmp_path):
    tools = fake_tools()
    result = measure_device(parse_config("toy"), get_device("ice40-up5k"), seeds=[1, 2],
                            root=tmp_path)
    assert isinstance(result, DeviceMeasurement)
    assert result.fit is True
    assert result.core_cells == CellCounts(lut4=208, ff=134)
    assert result.fmax_mhz == [pytest.approx(53.07, abs=0.01)] * 2
    assert [argv[0] for argv in tools.calls] == ["yosys", "nextpnr-ice40", "nextpnr-ice40"]
    assert option(tools.calls[2], "--seed") == "2"
    json.dumps(result.to_dict())


# The fixture's design has 81 LUT4 outside the core: 14436 in the core make 14517 in all.
CORE_LUTS_TOO_MANY = 14436


def test_measurement_that_does_not_fit_stops_before_placement(fake_tools, tmp_path):
    tools = fake_tools(stat_luts=CORE_LUTS_TOO_MANY)
    result = measure_device(parse_config("toy"), get_device("ice40-up5k"), root=tmp_path)
    assert result.fit is False
    assert result.fit_reason == "ICESTORM_LC 14517/5280, 274 %"
    assert result.fmax_mhz == []
    assert [argv[0] for argv in tools.calls] == ["yosys"]


def test_board_build_uses_the_same_path(fake_tools, tmp_path):
    tools = fake_tools()
    result = build_board(parse_config("toy"), get_board("icebreaker"), root=tmp_path)
    assert isinstance(result, BoardBuild)
    assert [argv[0] for argv in tools.calls] == ["yosys", "nextpnr-ice40", "icepack"]
    assert result.bitstream == str(tmp_path / "toy80_icebreaker" / "top.bin")
    assert result.timing_met and result.fmax_mhz == pytest.approx(53.07, abs=0.01)
    files = {file.what: pathlib.Path(file.path).name for file in result.files}
    assert files["bitstream"] == "top.bin"
    assert files["Yosys log"] == "yosys.log"
    assert files["nextpnr log, seed 1"] == "nextpnr.log"
    assert files["nextpnr timing log, seed 1"] == "top.tim"
    assert files["nextpnr report, seed 1"] == "report.json"
    assert files["icepack log"] == "icepack.log"


def test_board_build_that_does_not_fit_after_synthesis(fake_tools, tmp_path):
    fake_tools(stat_luts=CORE_LUTS_TOO_MANY)
    with pytest.raises(DoesNotFit) as info:
        build_board(parse_config("toy"), get_board("icebreaker"), root=tmp_path)
    message = str(info.value)
    assert message.startswith("TOY-80 does not fit the iCEBreaker (iCE40UP5K): "
                              "ICESTORM_LC 14517/5280, 274 % (counted after synthesis: ")
    assert info.value.overflow == Overflow("ICESTORM_LC", 14517, 5280)


def test_board_build_that_nextpnr_cannot_place(fake_tools, tmp_path):
    fake_tools(nextpnr_overflow=True)
    with pytest.raises(DoesNotFit) as info:
        build_board(parse_config("toy"), get_board("icebreaker"), root=tmp_path)
    message = str(info.value)
    assert "ICESTORM_LC 14517/5280, 274 % (nextpnr: " in message
    assert LONG_CELL not in message and len(message) < 200


# --- logs -------------------------------------------------------------------------------------

def test_run_step_log_holds_the_command_and_its_output(tmp_path):
    import os
    environ = {"PATH": os.environ["PATH"], "YOSYS": "echo"}
    assert run_step(["yosys", "hello", "world"], tmp_path, "yosys.log", environ) == 0
    log = (tmp_path / "yosys.log").read_text()
    assert log.startswith("$ echo hello world\n")
    assert "hello world\n" in log.splitlines(keepends=True)[1]
    assert "$ exit status 0" in log


def test_run_step_log_of_a_silent_tool_is_not_empty(tmp_path):
    import os
    environ = {"PATH": os.environ["PATH"], "ICEPACK": "true"}
    assert run_step(["icepack", "top.asc", "top.bin"], tmp_path, "icepack.log", environ) == 0
    assert "$ exit status 0" in (tmp_path / "icepack.log").read_text()


def test_plans_are_prepared_verbose(tmp_path):
    # Amaranth's build scripts pass -q/--quiet and keep logs in top.rpt/top.tim; prepared verbose,
    # the tools print their output too, and run_step keeps it in yosys.log/nextpnr.log.
    build_board(parse_config("toy"), get_board("icebreaker"), root=tmp_path, do_build=False)
    commands = json.loads((tmp_path / "toy80_icebreaker" / "build_top.json").read_text())
    for argv in commands["commands"]:
        assert "-q" not in argv and "--quiet" not in argv


# --- the report on any executor ---------------------------------------------------------------

def rows_without_timings(report):
    return [{key: value for key, value in row.items() if key != "elapsed_s"}
            for row in report["rows"]]


def test_report_on_a_dask_cluster_equals_a_local_run(fake_tools, tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    fake_tools()
    monkeypatch.setattr("cipher_cores.scripts.flow.toolchain.tool_versions", lambda *a, **k: {})
    configs = [parse_config("toy")]
    devices = [get_device("ice40-up5k"), get_device("ecp5-25f")]
    local = run_report(configs, devices, seeds=[1, 2], executor=InlineExecutor(),
                       root=str(tmp_path / "r"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        executor = client.get_executor()
        remote = run_report(configs, devices, seeds=[1, 2], executor=executor,
                            root=str(tmp_path / "r"))
    assert remote["errors"] == local["errors"] == []
    assert rows_without_timings(remote) == rows_without_timings(local)
    assert remote["cycles"] == local["cycles"]
    assert [row["device"] for row in local["rows"]] == ["ice40-up5k", "ecp5-25f"]
    assert local["rows"][0]["cycles_per_block"] == 6


def test_report_lists_a_failed_build_and_goes_on(fake_tools, tmp_path, monkeypatch):
    tools = fake_tools()
    original = tools.__call__

    def failing(argv, cwd, log_name, environ=None):
        if argv[0] == "nextpnr-ecp5":
            (pathlib.Path(cwd) / log_name).write_text("ERROR: something else\n")
            return 3
        return original(argv, cwd, log_name, environ)
    monkeypatch.setattr(cipher_cores.scripts.flow.build, "run_step", failing)
    monkeypatch.setattr("cipher_cores.scripts.flow.toolchain.tool_versions", lambda *a, **k: {})
    report = run_report([parse_config("toy")], [get_device("ice40-up5k"), get_device("ecp5-25f")],
                        seeds=[1], root=str(tmp_path))
    assert [row["device"] for row in report["rows"]] == ["ice40-up5k"]
    error, = report["errors"]
    assert error.startswith("TOY-80 @ ecp5-25f: TOY-80 @ ecp5-25f: nextpnr exited with 3: "
                            "ERROR: something else")


# --- targets: a core, or a core in the Wishbone peripheral ------------------------------------

def test_target_is_a_core_or_a_core_in_the_peripheral():
    from cipher_cores.cores.bus import CipherPeripheral
    assert parse_target("toy") == parse_config("toy")
    config = parse_target(" Wishbone:present-80:rounds_per_cycle=4 ")
    assert isinstance(config, PeripheralConfig)
    assert config.core == parse_config("present-80:rounds_per_cycle=4")
    assert config.label == "Wishbone PRESENT-80 (rounds_per_cycle=4; ECB/CBC/CFB/OFB/CTR)"
    assert config.slug == "wishbone_present80_rounds_per_cycle_4"
    assert config.text == "wishbone:present-80:rounds_per_cycle=4"
    assert parse_target(config.text) == config
    assert (config.block_bits, config.key_bits, config.decrypts) == (64, 80, True)
    assert config.to_dict() == {"wrapper": "wishbone",
                                "modes": ["ECB", "CBC", "CFB", "OFB", "CTR"],
                                **config.core.to_dict()}
    assert config.papers() == [] and parse_config("present-80").papers()
    toy = parse_target("wishbone:toy")
    assert toy.label == "Wishbone TOY-80 (ECB/CBC/CFB/OFB/CTR)"
    peripheral = toy.build()
    assert isinstance(peripheral, CipherPeripheral) and peripheral.block_words == 2
    # About 75 I/O bits in the measurement harness: the bus (a 6-bit word address: 0x100
    # bytes) and the interrupt.
    assert harness_widths(peripheral) == (1 + 1 + 1 + 6 + 32 + 4, 32 + 1 + 1)
    Fragment.get(MeasurementHarness(peripheral), None)     # it elaborates inside the harness


@pytest.mark.parametrize("text, error, message", [
    ("wishbone:", ValueError, "a wrapper needs a core after it, e.g. wishbone:aes-128"),
    ("wishbone:des-64", KeyError, "unknown core 'des'; choose from "),
    ("wishbone:wishbone:toy", ValueError, "one wrapper around a core, not two"),
    ("uart:toy", KeyError, "unknown core 'uart'; choose from aes, "),
    ("wishbone:toy:flavour=x", ValueError, "TOY has no option 'flavour'"),
])
def test_target_errors_are_one_line(text, error, message):
    with pytest.raises(error) as info:
        parse_target(text)
    assert message in info.value.args[0] and "\n" not in info.value.args[0]
    if text.startswith("uart"):
        assert info.value.args[0].endswith("(or a bus wrapper: wishbone:CORE, "
                                           "wishbone-gcm:CORE, wishbone-dma:CORE, axi:CORE, "
                                           "axi-gcm:CORE)")


def test_peripheral_refuses_a_block_size_it_cannot_take():
    import dataclasses
    from .support.toy_cipher import TOY_ENTRY
    odd = CoreConfig(dataclasses.replace(TOY_ENTRY, block_bits=48), 80)
    with pytest.raises(ValueError, match=r"^the Wishbone peripheral takes blocks of 32, 64, 96 or "
                                         r"128 bits; TOY-80 has 48$"):
        PeripheralConfig(odd)


def test_peripheral_job_is_picklable_as_text(tmp_path):
    import pickle
    job = MeasureJob("wishbone:toy", "ice40-up5k", (1,), str(tmp_path))
    assert pickle.loads(pickle.dumps(job)).key == \
        "Wishbone TOY-80 (ECB/CBC/CFB/OFB/CTR) @ ice40-up5k"


def test_report_row_of_the_peripheral(fake_tools, tmp_path, monkeypatch):
    tools = fake_tools()
    monkeypatch.setattr("cipher_cores.scripts.flow.toolchain.tool_versions", lambda *a, **k: {})
    config = parse_target("wishbone:toy")
    report = run_report([config], [get_device("ice40-up5k")], seeds=[1], root=str(tmp_path),
                        executor=InlineExecutor())
    assert report["errors"] == []
    row, = report["rows"]
    assert row["label"] == "Wishbone TOY-80 (ECB/CBC/CFB/OFB/CTR)"
    assert row["config"]["wrapper"] == "wishbone"
    assert row["build_dir"] == str(tmp_path / "wishbone_toy80" / "ice40-up5k")
    # The peripheral is the harness's core: its cells are counted by hierarchy like a core's.
    assert (row["lut4"], row["ff"]) == (208, 134)
    design = (tmp_path / "wishbone_toy80" / "ice40-up5k" / "top.il").read_text()
    assert "top.harness.core" in design and "bus__cyc" in design
    assert [argv[0] for argv in tools.calls] == ["yosys", "nextpnr-ice40"]
    # Cycles through the bus (toy: bus-bound, 10 edges per 64-bit block).
    assert row["cycles_per_block"] == 10 and row["cycles"]["through"] == "wishbone"
    assert row["throughput_median_mbps"] == pytest.approx(64 * 53.07 / 10, abs=0.1)
    assert report["papers"] == []


def test_breakdown_refuses_an_unknown_target_in_one_line(capsys):
    from cipher_cores.scripts.flow.breakdown import main
    assert main(["wishbone:nope-128"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.slow
def test_breakdown_counts_the_peripheral_module_by_module():
    """Synthesis only: the register file, the sequencer, the scrubber and the core each have
    their own row, and the total is their sum."""
    from cipher_cores.scripts.flow.breakdown import module_cells
    rows = dict(module_cells("wishbone:present-80", "ice40-up5k"))
    assert {"core", "core.registers", "core.sequencer", "core.sequencer.scrubber",
            "core.sequencer.cipher"} <= set(rows)
    assert all(cells.lut4 > 0 for name, cells in rows.items()
               if name in ("core.registers", "core.sequencer", "core.sequencer.cipher"))
