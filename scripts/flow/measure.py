"""Measuring a core: cycles by simulation, cells by hierarchy, Fmax by place-and-route.

Cells are counted **by hierarchy**: Yosys is told to keep the core's module (``keep_hierarchy``)
while it flattens everything else, and ``stat -json`` after synthesis gives the core's cells apart
from the harness or self-test logic around it. The same rule holds for every core and device, so
the harness never enters a core's figures. nextpnr then places the whole design; its Fmax is the
design's, and the harness (register-to-register paths with at most one XOR) is never the critical
path of a cipher round.

Cycle counts are never typed in: each report target measures its own
(:meth:`cipher_cores.scripts.flow.targets.Target.cycles`, which :func:`measure_cycles` asks): a bare
core simulated with :func:`cipher_cores.cores.sim.simulate_cipher`
(:func:`cipher_cores.cores.sim.cycles.core_cycles`), a core in the Wishbone peripheral driven as
firmware drives it (:func:`measure_bus_cycles`), each checked against the reference model.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from dataclasses import asdict, dataclass, field

from cipher_cores.cores.sim.cycles import CycleFigures, steady_interval


__all__ = [
    "CycleFigures", "measure_cycles", "measure_bus_cycles", "CellCounts", "hierarchy_cells",
    "classify_cells",
    "core_and_harness", "Overflow", "overflow", "NextpnrResult", "parse_nextpnr_report",
    "parse_nextpnr_log", "parse_nextpnr_overflow", "slice_equivalent", "keep_hierarchy_script",
    "STAT_FILE", "STAT_SCRIPT",
]


#: Where the Yosys ``stat -json`` output of a build goes (relative to the build directory).
STAT_FILE = "stat.json"


def keep_hierarchy_script(module: str) -> str:
    """Yosys commands (for ``script_after_read``) that keep ``module`` as its own hierarchy level,
    so that its cells can be counted apart from the rest."""
    return f"setattr -mod -set keep_hierarchy 1 {module}"


STAT_SCRIPT = f"tee -q -o {STAT_FILE} stat -json"


# --- cycles -----------------------------------------------------------------------------------

def measure_cycles(target, *, blocks: int | None = None, seed: int = 1) -> CycleFigures:
    """The :class:`CycleFigures` of ``target`` (a report target,
    :class:`~cipher_cores.scripts.flow.targets.Target`): ``target.cycles(blocks=..., seed=...)``,
    ``blocks`` being the target's own default when ``None``."""
    return target.cycles(blocks=blocks, seed=seed)


def measure_bus_cycles(config, *, blocks: int = 16, seed: int = 1) -> CycleFigures:
    """Simulate a fresh peripheral of ``config`` (a
    :class:`~cipher_cores.scripts.flow.targets.PeripheralConfig`) driven as firmware would drive it
    (:func:`cipher_cores.cores.bus.sim.stream_message`: one Wishbone access at a time, ``STATUS``
    polled, the output drained; or, for a DMA build, :func:`cipher_cores.cores.bus.sim.
    dma_message`: the DMA moving the words through a memory that answers on the edge of the
    strobe), on a CTR message of ``blocks`` random blocks and,
    decrypting, an ECB message (CTR again for an encrypt-only core), and return its
    :class:`CycleFigures` (``through`` is ``"wishbone"``, ``"axi4-lite"`` (the same
    firmware, one AXI4-Lite access at a time: :class:`cipher_cores.cores.bus.sim.
    AXI4LiteFirmware`), or ``"dma"``).

    ``blocks`` must leave a steady stretch after the FIFOs and the core fill up (about five
    blocks); ``verified`` says whether both messages and the lone blocks matched the model.
    """
    from cipher_cores.cores.bus.sim import dma_message, stream_message
    from cipher_cores.cores.modes import Mode
    from cipher_cores.cores.modes.reference import process_message

    rng = random.Random(seed)
    key = rng.getrandbits(config.key_bits)
    counter = rng.getrandbits(config.block_bits)
    plain = [rng.getrandbits(config.block_bits) for _ in range(blocks)]

    def model(mode, decrypt, iv, data):
        return process_message(mode.name, decrypt, lambda x: config.encrypt(key, x),
                               lambda x: config.decrypt(key, x), iv, data, config.block_bits)

    def run(mode, decrypt, iv, data):
        message = dma_message if config.dma else stream_message
        result = message(config.build(), key=key, key_bits=config.key_bits, mode=mode,
                         decrypt=decrypt, iv=iv, blocks=data)
        expected = model(mode, decrypt, iv, data)
        ok = result.results == expected and result.latency_result == expected[0]
        return result, ok

    encrypt, encrypt_ok = run(Mode.CTR, False, counter, plain)
    if config.decrypts:
        decrypt, decrypt_ok = run(Mode.ECB, True, 0, model(Mode.ECB, False, 0, plain))
    else:
        decrypt, decrypt_ok = run(Mode.CTR, True, counter, encrypt.results)

    return CycleFigures(
        cycles_per_block=steady_interval(encrypt.steady_intervals()),
        cycles_per_block_decrypt=steady_interval(decrypt.steady_intervals()),
        latency=encrypt.latency,
        latency_decrypt=decrypt.latency,
        key_to_input=encrypt.start_to_input,
        verified=encrypt_ok and decrypt_ok,
        blocks=blocks,
        through="dma" if config.dma else config.protocol,
    )


# --- cells ------------------------------------------------------------------------------------

def _module_key(stat: dict, module: str) -> str:
    modules = stat["modules"]
    for key in (module, "\\" + module):
        if key in modules:
            return key
    raise KeyError(f"module {module!r} not in the Yosys statistics "
                   f"(modules: {', '.join(sorted(modules))})")


def hierarchy_cells(stat: dict, module: str) -> Counter:
    """Cells by type in ``module`` and everything below it, from Yosys ``stat -json`` output.

    Instances of other modules are replaced by those modules' cells; ``$scopeinfo`` (a marker
    that is not a cell of the netlist) is left out.
    """
    modules = stat["modules"]
    key = _module_key(stat, module)
    total = Counter()
    for cell_type, count in modules[key].get("num_cells_by_type", {}).items():
        submodule = None
        for candidate in (cell_type, "\\" + cell_type):
            if candidate in modules:
                submodule = candidate
        if submodule is not None:
            for sub_type, sub_count in hierarchy_cells(stat, submodule.lstrip("\\")).items():
                total[sub_type] += count * sub_count
        elif cell_type != "$scopeinfo":
            total[cell_type] += count
    return total


@dataclass(frozen=True)
class CellCounts:
    """Cells of a design or of a part of it, by class (see :func:`classify_cells`)."""
    lut4: int = 0
    ff: int = 0
    carry: int = 0
    bram: int = 0
    io: int = 0
    other: int = 0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> "CellCounts | None":
        return None if data is None else cls(**data)


_CLASSES = {
    "ice40": [
        ("lut4",  re.compile(r"^SB_LUT4$")),
        ("ff",    re.compile(r"^SB_DFF")),
        ("carry", re.compile(r"^SB_CARRY$")),
        ("bram",  re.compile(r"^SB_RAM40_4K")),
        ("io",    re.compile(r"^SB_(GB_)?IO|^SB_GB$")),
    ],
    "ecp5": [
        ("lut4",  re.compile(r"^LUT4$")),
        ("ff",    re.compile(r"^TRELLIS_FF$")),
        ("carry", re.compile(r"^CCU2C$")),
        ("bram",  re.compile(r"^(DP16KD|PDPW16KD)$")),
        ("lutram", re.compile(r"^TRELLIS_DPR16X4$")),
        ("widemux", re.compile(r"^(PFUMX|L6MUX21)$")),
        ("io",    re.compile(r"^(TRELLIS_IO|\$_TBUF_|IB|OB|BB)$")),
    ],
}


def classify_cells(cells: dict, family: str) -> "CellCounts":
    """Sum cells by class for ``family`` (``"ice40"`` or ``"ecp5"``).

    Classes: ``lut4`` (4-input LUTs, counting the two LUT4s in each ECP5 ``CCU2C`` carry cell and
    six for each ECP5 ``TRELLIS_DPR16X4`` distributed RAM, so that the figure is the number of
    LUT4 sites used: its 16 x 4 bits take the four LUT4s of two slices, and its write port the
    two of a third slice, which nextpnr counts as ``TRELLIS_COMB`` too), ``ff``, ``carry`` (``SB_CARRY`` / ``CCU2C`` cells), ``bram``
    (``SB_RAM40_4K`` / ``DP16KD``), ``io``, and ``other`` for anything else (DSPs, PLLs, ...).
    """
    result = dict.fromkeys(("lut4", "ff", "carry", "bram", "io", "other"), 0)
    for cell_type, count in cells.items():
        for name, pattern in _CLASSES[family]:
            if pattern.search(cell_type):
                break
        else:
            name = "other"
        if name == "carry" and family == "ecp5":
            result["lut4"] += 2 * count
        if name == "lutram":
            result["lut4"] += 6 * count
            continue
        if name == "widemux":
            continue
        result[name] += count
    return CellCounts(**result)


def core_and_harness(stat: dict, top: str, core: str, family: str) -> tuple:
    """``(core, harness)`` cell classes: the core's own, and everything else in ``top``."""
    total = hierarchy_cells(stat, top)
    inside = hierarchy_cells(stat, core)
    outside = Counter(total)
    outside.subtract(inside)
    return classify_cells(inside, family), classify_cells(+outside, family)


#: The names nextpnr gives the resources of :attr:`cipher_cores.platforms.devices.BareDevice.capacity`.
_RESOURCE_NAMES = {
    "ice40": {"lc": "ICESTORM_LC", "bram": "ICESTORM_RAM"},
    "ecp5": {"lut4": "TRELLIS_COMB", "ff": "TRELLIS_FF", "bram": "DP16KD"},
}


@dataclass(frozen=True)
class Overflow:
    """A resource a design needs more of than its device has: ``ICESTORM_LC 14517/5280, 274 %``.
    """
    resource: str       # as nextpnr names it
    used: int
    available: int

    @property
    def percent(self) -> int:
        return 100 * self.used // self.available if self.available else 0

    def __str__(self) -> str:
        return f"{self.resource} {self.used}/{self.available}, {self.percent} %"


def overflow(cells: CellCounts, capacity: dict, family: str) -> Overflow | None:
    """The first resource a design of ``cells`` (classes of the whole design) cannot fit in
    ``capacity``, judged before place-and-route (nextpnr-ecp5 places over-full designs rather
    than stopping); ``None`` if it may fit.

    On iCE40 a logic cell holds one LUT4 and one FF, so the design needs at least
    ``max(lut4, ff)`` cells.
    """
    needs = {}
    if family == "ice40":
        needs["lc"] = max(cells.lut4, cells.ff)
    else:
        needs["lut4"] = cells.lut4
        needs["ff"] = cells.ff
    needs["bram"] = cells.bram
    for name, need in needs.items():
        if name in capacity and need > capacity[name]:
            return Overflow(_RESOURCE_NAMES[family][name], need, capacity[name])
    return None


# --- nextpnr ----------------------------------------------------------------------------------

@dataclass
class NextpnrResult:
    """What one nextpnr run reports: Fmax of the design clock (MHz) and utilization."""
    fmax_mhz: float | None
    constraint_mhz: float | None
    utilization: dict = field(default_factory=dict)    # cell type -> {"used", "available"}

    def to_dict(self) -> dict:
        return asdict(self)


def _pick_clock(fmax: dict) -> str | None:
    # Clock names differ by flow: "cd_sync.clk", "$glbnet$cd_sync.clk", "clk", ...
    if not fmax:
        return None
    for name in fmax:
        if "sync" in name:
            return name
    for name in fmax:
        if "clk" in name.lower():
            return name
    return min(fmax, key=lambda name: fmax[name].get("achieved", math.inf))


def parse_nextpnr_report(report) -> NextpnrResult:
    """Parse nextpnr's ``--report`` JSON (a path, a JSON string or the decoded object)."""
    if isinstance(report, (str, bytes)) and not str(report).lstrip().startswith("{"):
        with open(report) as file:
            report = json.load(file)
    elif isinstance(report, (str, bytes)):
        report = json.loads(report)
    fmax = report.get("fmax", {})
    clock = _pick_clock(fmax)
    return NextpnrResult(
        fmax_mhz=fmax[clock]["achieved"] if clock else None,
        constraint_mhz=fmax[clock].get("constraint") if clock else None,
        utilization=report.get("utilization", {}),
    )


_MAX_FREQUENCY = re.compile(r"Max frequency for clock\s+'([^']+)':\s*([0-9.]+)\s*MHz"
                            r"(?:\s*\((PASS|FAIL) at ([0-9.]+) MHz\))?")


def parse_nextpnr_log(text: str) -> dict:
    """The post-route "Max frequency" of each clock in a nextpnr log (MHz); the log prints it
    once after placement and once after routing, and the last one wins."""
    result = {}
    for match in _MAX_FREQUENCY.finditer(text):
        result[match.group(1)] = float(match.group(2))
    return result


_UTILISATION = re.compile(r"^(?:Info:)?\s*([A-Za-z][A-Za-z0-9_]*):\s*(\d+)\s*/\s*(\d+)\s+\d+%",
                          re.M)


def parse_nextpnr_overflow(text: str) -> Overflow | None:
    """The most over-used resource in the "Device utilisation" table of a nextpnr log, or
    ``None`` if every resource fits (or the log has no table)."""
    worst = None
    for match in _UTILISATION.finditer(text):
        found = Overflow(match.group(1), int(match.group(2)), int(match.group(3)))
        if found.used > found.available and (worst is None or found.percent > worst.percent):
            worst = found
    return worst


def slice_equivalent(lut4: int, ff: int) -> int:
    """Spartan-3 / Virtex-II slices needed for ``lut4`` LUT4s and ``ff`` flip-flops, if they pack
    perfectly (a slice holds two of each). A lower bound: real packing leaves some halves empty."""
    return math.ceil(max(lut4, ff) / 2)
