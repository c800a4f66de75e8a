# amaranth: UnusedElaboratable=no
"""Another project's Verilog core in the report (``--cores verilog:FILE.toml``): its description,
its ports, its place in the harness, and a real measurement of a small core written here
(``tests/data/external/toy_feistel.v``)."""

import pathlib

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Shape

from cipher_cores.platforms.devices import get_device
from cipher_cores.platforms.harness import BareDeviceTop, MeasurementHarness
from cipher_cores.scripts.cli import main
from cipher_cores.scripts.flow.external import ExternalConfig, load_description, verilog_ports
from cipher_cores.scripts.flow.measure import measure_cycles
from cipher_cores.scripts.flow.report import derive_row, markdown_report
from cipher_cores.scripts.flow.targets import parse_target

from .support.helpers import assert_one_line_error


DESCRIPTION = pathlib.Path(__file__).parent / "data" / "external" / "toy_feistel.toml"
#: The toy's registers: left and right halves, round key, round counter, busy and done.
TOY_FLIP_FLOPS = 16 + 16 + 32 + 5 + 1 + 1


def write_description(tmp_path, text, *, source=True):
    """A description in ``tmp_path`` (beside a copy of the toy's Verilog if ``source``)."""
    if source:
        (tmp_path / "toy_feistel.v").write_text(
            (DESCRIPTION.parent / "toy_feistel.v").read_text())
    path = tmp_path / "core.toml"
    path.write_text(text)
    return path


GOOD = """label = "toy"
top = "toy_feistel"
sources = ["toy_feistel.v"]
block_bits = 32
key_bits = 32
cycles_per_block = 17
[ports]
clock = "clk"
"""


def test_a_target_names_a_description():
    config = parse_target(f"verilog:{DESCRIPTION}")
    assert isinstance(config, ExternalConfig)
    assert (config.label, config.block_bits, config.key_bits, config.decrypts) == \
        ("toy Feistel-32 (Verilog)", 32, 32, False)
    assert config.slug == "verilog_toy_feistel"
    assert parse_target(config.text) == config
    description = config.description
    assert (description.clock, description.reset, description.reset_active_low) == \
        ("clk", "rst_n", True)
    assert description.sources == ((DESCRIPTION.parent / "toy_feistel.v").resolve(),)


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('top = "toy_feistel"\n', ""), "missing key 'top'"),
    (lambda t: t.replace("block_bits = 32", 'block_bits = "32"'),
     "block_bits must be an integer"),
    (lambda t: t.replace("key_bits = 32", "key_bits = 0"), "key_bits must be positive"),
    (lambda t: t.replace("block_bits = 32", "block_bits = true"),
     "block_bits must be an integer"),
    (lambda t: t + 'reset_active = "rising"\n', "ports.reset_active must be 'high' or 'low'"),
    (lambda t: t + 'reset_active = "low"\n', "ports.reset_active without ports.reset"),
    (lambda t: t.replace('clock = "clk"', 'reset = "rst_n"'), "ports.clock"),
    (lambda t: t.replace("[ports]\n", "").replace('clock = "clk"\n', ""), "[ports] table"),
    (lambda t: "speed = 3\n" + t, "unknown key 'speed'"),
    (lambda t: t + 'clk = "clk"\n', "unknown key ports.clk"),
    (lambda t: t.replace('["toy_feistel.v"]', '["missing.v"]'), "source 'missing.v' not found"),
    (lambda t: t.replace("[ports]", "[ports"), "not a TOML file"),
])
def test_a_bad_description_says_what_is_wrong(tmp_path, change, message):
    path = write_description(tmp_path, change(GOOD))
    with pytest.raises(ValueError, match=None) as info:
        load_description(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_ports_come_from_yosys():
    assert verilog_ports([DESCRIPTION.parent / "toy_feistel.v"], "toy_feistel") == {
        "clk": ("input", 1), "rst_n": ("input", 1), "start": ("input", 1),
        "key": ("input", 32), "block_in": ("input", 32), "done": ("output", 1),
        "block_out": ("output", 32)}


def test_a_missing_module_is_named(tmp_path):
    with pytest.raises(ValueError, match="could not read module 'nope'"):
        verilog_ports([DESCRIPTION.parent / "toy_feistel.v"], "nope")


def test_the_core_has_one_member_per_data_port():
    core = parse_target(f"verilog:{DESCRIPTION}").build()
    members = {name: (member.flow.name, Shape.cast(member.shape).width)
               for name, member in core.signature.members.items()}
    assert members == {"start": ("In", 1), "key": ("In", 32), "block_in": ("In", 32),
                       "done": ("Out", 1), "block_out": ("Out", 32)}
    # Elaborated, so that Amaranth does not warn (in whichever test runs next) that it never was.
    rtlil.convert(core)


@pytest.mark.parametrize("ports, message", [
    ('clock = "clock"', "ports.clock 'clock' is not a port of module 'toy_feistel'"),
    ('clock = "key"', "ports.clock 'key' must be a 1-bit input, not input of 32 bits"),
    ('clock = "clk"\nreset = "done"', "ports.reset 'done' must be a 1-bit input"),
])
def test_clock_and_reset_must_be_one_bit_inputs(tmp_path, ports, message):
    path = write_description(tmp_path, GOOD.replace('clock = "clk"', ports))
    with pytest.raises(ValueError) as info:
        ExternalConfig.load(path).check()
    assert message in str(info.value)


def test_the_harness_drives_the_instance_with_its_clock_and_inverted_reset():
    core = parse_target(f"verilog:{DESCRIPTION}").build()
    text = rtlil.convert(MeasurementHarness(core), name="top")
    assert "cell \\toy_feistel \\external" in text
    for port in ("clk", "rst_n", "start", "key", "block_in", "done", "block_out"):
        assert f"connect \\{port} " in text
    # rst_n is driven by the domain's reset through a NOT cell.
    assert "$not" in text


def test_the_verilog_goes_into_the_build_plan():
    config = parse_target(f"verilog:{DESCRIPTION}")
    device = get_device("ice40-up5k")
    plan = device().prepare(BareDeviceTop(MeasurementHarness(config.build())), name="top")
    assert plan.files["external/0_toy_feistel.v"] == \
        (DESCRIPTION.parent / "toy_feistel.v").read_text()
    assert "external/0_toy_feistel.v" in plan.files["top.ys"]


def test_cycles_are_declared_not_simulated():
    figures = measure_cycles(parse_target(f"verilog:{DESCRIPTION}"))
    assert (figures.cycles_per_block, figures.latency, figures.through, figures.verified) == \
        (17, 17, "declared", False)
    assert figures.cycles_per_block_decrypt is None


def test_the_page_says_the_cycles_were_declared():
    from cipher_cores.scripts.flow.build import DeviceMeasurement
    config = parse_target(f"verilog:{DESCRIPTION}")
    figures = measure_cycles(config)
    measurement = DeviceMeasurement(
        label=config.label, config=config.to_dict(), device="ice40-up5k", family="iCE40",
        block_bits=32, seeds=[1], build_dir="build", constraint_mhz=12, fit=True,
        fmax_mhz=[68.0])
    row = derive_row(measurement, figures)
    assert row["throughput_median_mbps"] == 128.0          # 32 bits × 68 MHz / 17 cycles
    page = markdown_report({"rows": [row], "papers": [], "cycles": {config.label:
                                                                       figures.to_dict()}})
    assert "| toy Feistel-32 (Verilog) | 17 | – | 17 | – | – | declared, not simulated |" in page
    assert "did NOT match" not in page


def test_report_errors_are_one_line(capsys, tmp_path):
    code = main(["report", "--cores", f"verilog:{tmp_path / 'none.toml'}", "-q"])
    assert_one_line_error(code, capsys.readouterr().err, "cannot read the core description")
    path = write_description(tmp_path, GOOD.replace('"toy_feistel"', '"nope"'))
    code = main(["report", "--cores", f"verilog:{path}", "-q"])
    assert_one_line_error(code, capsys.readouterr().err, "could not read module 'nope'")


@pytest.mark.build
def test_a_verilog_core_is_measured_like_ours(tmp_path):
    """Yosys and nextpnr on the iCE40 UP5K: the core's cells are the toy's, counted by
    hierarchy apart from the harness, and the throughput uses the declared cycles."""
    from cipher_cores.scripts.flow.report import run_report
    config = parse_target(f"verilog:{DESCRIPTION}")
    report = run_report([config], [get_device("ice40-up5k")], seeds=[1], root=tmp_path)
    assert report["errors"] == []
    (row,) = report["rows"]
    assert row["fit"] and row["ff"] == TOY_FLIP_FLOPS
    assert 0 < row["lut4"] < 300
    assert row["harness_cells"]["ff"] >= 2 * 32 + 1 + 33
    assert row["throughput_median_mbps"] == round(32 * row["fmax_median_mhz"] / 17, 1)
