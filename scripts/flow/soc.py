"""Building the RISC-V SoC for a board: firmware in its RAM, utilization by component, Fmax."""

from __future__ import annotations

from dataclasses import dataclass, field
import pathlib
import time

from .build import BuildError, BuildFile, DoesNotFit, run_flow
from .measure import classify_cells, hierarchy_cells
from .progress import Progress


__all__ = ["SoCPreset", "SOC_BOARDS", "SoCBuild", "ram_bytes_for", "component_paths",
           "build_soc"]


@dataclass(frozen=True)
class SoCPreset:
    """What ``cipher-cores soc build`` puts on a board unless told otherwise: the self-test
    variant (see :func:`scripts.flow.firmware.build_selftest`), the CPU's instruction set and
    interrupt support, and the peripheral's FIFO depth (``None``: two blocks)."""
    variant: str
    isa: str
    interrupts: bool = True
    fifo_words: int | None = None


#: The boards ``cipher-cores soc build`` supports, with their presets. iCE40 is short of
#: everything: the UP5K's 30 block RAMs (4 kbit each; the CPU's register file takes 4) hold
#: 8 KiB of RAM beside the block-RAM AES, enough for the small self-test, and its 5,280 logic
#: cells hold the SoC only without the CPU's interrupt support (with it: 5,368 LUT4, 102 %);
#: beside the round AES (20 block RAMs) the HX8K holds 4 KiB once the FIFOs are one block deep,
#: enough for the known-answer test, but not the logic (108 % of its cells after packing). The
#: ECP5 boards run the full self-test.
SOC_BOARDS = {
    "icebreaker": SoCPreset("small", "rv32i", interrupts=False),
    "ice40-hx8k": SoCPreset("known-answers", "rv32i", fifo_words=4),
    "ulx3s-85f": SoCPreset("full", "rv32im"),
    "orangecrab-25f": SoCPreset("full", "rv32im"),
}
#: Stack the RAM keeps beyond the firmware's last byte when the build sizes it.
STACK_RESERVE = 512


def ram_bytes_for(ram_needed: int) -> int:
    """The smallest power-of-two RAM (at least 1 KiB) holding ``ram_needed`` bytes and a stack
    of :data:`STACK_RESERVE` (enough for the kit's driver and the self-test)."""
    size = 1024
    while size < ram_needed + STACK_RESERVE:
        size *= 2
    return size


def component_paths(target) -> dict:
    """The hierarchical names of the SoC's parts in the board top (``top.soc.*``)."""
    core = "top.soc.peripheral." + ("share.core" if target.gcm else "engine.core")
    return {"cpu": "top.soc.cpu", "ram": "top.soc.ram", "sysctl": "top.soc.sysctl",
            "decoder": "top.soc.decoder", "peripheral": "top.soc.peripheral", "core": core}


@dataclass
class SoCBuild:
    """What :func:`build_soc` measured. ``components`` maps each part of
    :func:`component_paths` (and ``system``, the whole design) to its cell classes; the
    peripheral's figures include its core."""
    label: str
    board: str
    device: str
    family: str
    build_dir: str
    clock_mhz: float
    seed: int
    ram_bytes: int
    firmware: str
    isa: str
    interrupts: bool = True
    components: dict = field(default_factory=dict)
    fmax_mhz: float | None = None
    timing_met: bool = False
    utilization: dict = field(default_factory=dict)
    bitstream: str | None = None
    files: list = field(default_factory=list)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict:
        result = {name: getattr(self, name) for name in (
            "label", "board", "device", "family", "build_dir", "clock_mhz", "seed", "ram_bytes",
            "firmware", "isa", "interrupts", "fmax_mhz", "timing_met", "utilization", "bitstream",
            "elapsed_s")}
        result["components"] = {name: vars(cells) for name, cells in self.components.items()}
        result["files"] = [vars(file) for file in self.files]
        return result


def build_soc(target, board, firmware, *, firmware_path: str, ram_bytes: int,
              isa: str = "rv32i", interrupts: bool = True, root="build", seed: int = 1,
              progress: Progress | None = None) -> SoCBuild:
    """Build the bitstream of the SoC with ``target``'s peripheral running ``firmware`` (a
    :class:`cores.soc.elf.Firmware`) on ``board``.

    Raises :exc:`DoesNotFit` if the design needs more than the board's device has (with the
    resource and by how much), :exc:`BuildError` if a tool fails.
    """
    from platforms.soc import SoCTop

    progress = progress or Progress(enabled=False)
    platform = board()
    key = f"SoC {target.label} @ {board.name}"
    directory = pathlib.Path(root) / f"soc_{target.slug}_{board.name}"
    started = time.monotonic()
    top = SoCTop(target, board, image=firmware.image, ram_bytes=ram_bytes, isa=isa,
                 interrupts=interrupts)
    paths = component_paths(target)
    result = SoCBuild(label=target.label, board=board.name, device=platform.device,
                      family=platform.family.lower(), build_dir=str(directory),
                      clock_mhz=platform.default_clk_frequency / 1e6, seed=seed,
                      ram_bytes=ram_bytes, firmware=str(firmware_path), isa=isa,
                      interrupts=interrupts)
    flow = run_flow(top, platform, directory, key=key, core_path=paths["core"],
                    capacity=board.capacity, seeds=[seed], per_seed_files=False, pack=True,
                    progress=progress, keep=list(paths.values()))
    result.files = flow.files
    stat_path = directory / "stat.json"
    if stat_path.exists():
        import json
        stat = json.loads(stat_path.read_text())
        result.components = {name: classify_cells(hierarchy_cells(stat, path), result.family)
                             for name, path in paths.items()}
        result.components["system"] = flow.design_cells
    if not flow.fits:
        raise DoesNotFit(f"the SoC with {target.label} does not fit the {board.title} "
                         f"({platform.device}): {flow.overflow}", flow.overflow)
    placement = flow.placements[0]
    result.fmax_mhz = placement.fmax_mhz
    result.utilization = placement.utilization
    result.timing_met = placement.fmax_mhz is not None and placement.fmax_mhz >= result.clock_mhz
    for candidate in ("top.bin", "top.bit"):
        if (directory / candidate).exists():
            result.bitstream = str(directory / candidate)
            result.files.insert(0, BuildFile("bitstream", result.bitstream))
    result.elapsed_s = round(time.monotonic() - started, 1)
    return result
