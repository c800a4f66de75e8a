"""Building the RISC-V SoC for a board: firmware in its RAM, utilization by component, Fmax."""

from __future__ import annotations

from dataclasses import dataclass, field
import datetime
import json
import pathlib
import time

from cipher_cores.cores import fpga

from .build import BuildError, DoesNotFit, bitstream_file, board_timing, run_flow
from .measure import classify_cells, hierarchy_cells
from .progress import Progress


__all__ = ["SoCPreset", "SOC_BOARDS", "SoCBuild", "ram_bytes_for", "component_paths",
           "build_soc"]


@dataclass(frozen=True)
class SoCPreset:
    """What ``cipher-cores soc build`` puts on a board unless told otherwise: the self-test
    variant (see :func:`cipher_cores.scripts.flow.firmware.build_selftest`), the CPU's instruction set and
    interrupt support, the peripheral's FIFO depth (``None``: two blocks) and whether the
    peripheral has its DMA master (beside the CPU on the bus, through the arbiter)."""
    variant: str
    isa: str
    interrupts: bool = True
    fifo_words: int | None = None
    dma: bool = False


#: The boards ``cipher-cores soc build`` supports, with their presets. iCE40 is short of
#: block RAM (4 kbit each, 30 on the UP5K, 32 on the HX8K; the CPU's register file takes 4): the
#: UP5K holds 8 KiB of RAM beside the block-RAM AES, enough for the small self-test; beside the
#: round AES (20 block RAMs) the HX8K holds 4 KiB once the FIFOs are one block deep, enough for
#: the known-answer test. (Neither device has the logic cells for the SoC yet: see the results
#: page; so neither gets the DMA master either.) The ECP5 boards run the full self-test, with
#: the DMA.
SOC_BOARDS = {
    "icebreaker": SoCPreset("small", "rv32i"),
    "ice40-hx8k": SoCPreset("known-answers", "rv32i", fifo_words=4),
    "ulx3s-85f": SoCPreset("full", "rv32imc", dma=True),
    "orangecrab-25f": SoCPreset("full", "rv32imc", dma=True),
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
    # The sequencer holds the core (with GCM, inside the SharedCore both users take turns on).
    core = "top.soc.peripheral.sequencer.cipher" + (".core" if target.gcm else "")
    paths = {"cpu": "top.soc.cpu", "ram": "top.soc.ram", "sysctl": "top.soc.sysctl",
             "decoder": "top.soc.decoder", "peripheral": "top.soc.peripheral", "core": core}
    if target.dma:
        paths["arbiter"] = "top.soc.arbiter"
    return paths


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
    dma: bool = False
    overflow: str | None = None
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
            "firmware", "isa", "interrupts", "dma", "overflow", "fmax_mhz", "timing_met", "utilization", "bitstream",
            "elapsed_s")}
        result["components"] = {name: vars(cells) for name, cells in self.components.items()}
        result["files"] = [vars(file) for file in self.files]
        return result


def build_soc(target, board, firmware, *, firmware_path: str, ram_bytes: int,
              isa: str = "rv32i", interrupts: bool = True, root="build", seed: int = 1,
              progress: Progress | None = None, check_fit: bool = True) -> SoCBuild:
    """Build the bitstream of the SoC with ``target``'s peripheral running ``firmware`` (a
    :class:`cipher_cores.cores.soc.elf.Firmware`) on ``board``.

    Raises :exc:`DoesNotFit` if the design needs more than the board's device has (with the
    resource and by how much; with ``check_fit=False`` the result says so in ``overflow``
    instead, with the cells synthesis counted), :exc:`BuildError` if a tool fails.
    """
    from cipher_cores.platforms.soc import SoCTop

    progress = progress or Progress(enabled=False)
    platform = board()
    key = f"SoC {target.label} @ {board.name}"
    directory = pathlib.Path(root) / f"soc_{target.slug}_{board.name}"
    started = time.monotonic()
    top = SoCTop(target, board, image=firmware.image, ram_bytes=ram_bytes, isa=isa,
                 interrupts=interrupts)
    paths = component_paths(target)
    result = SoCBuild(label=target.label, board=board.name, device=platform.device,
                      family=fpga.family(platform), build_dir=str(directory),
                      clock_mhz=platform.default_clk_frequency / 1e6, seed=seed,
                      ram_bytes=ram_bytes, firmware=str(firmware_path), isa=isa,
                      interrupts=interrupts, dma=target.dma)
    flow = run_flow(top, platform, directory, key=key, core_path=paths["core"],
                    capacity=board.capacity, seeds=[seed], per_seed_files=False, pack=True,
                    progress=progress, keep=list(paths.values()))
    result.files = flow.files
    stat_path = directory / "stat.json"
    if stat_path.exists():
        stat = json.loads(stat_path.read_text())
        result.components = {name: classify_cells(hierarchy_cells(stat, path), result.family)
                             for name, path in paths.items()}
        result.components["system"] = flow.design_cells
    if not flow.fits:
        message = (f"the SoC with {target.label} does not fit the {board.title} "
                   f"({platform.device}): {flow.overflow}")
        if check_fit:
            raise DoesNotFit(message, flow.overflow)
        result.overflow = str(flow.overflow)
        return result
    result.fmax_mhz, result.utilization, result.timing_met = board_timing(flow, result.clock_mhz)
    result.bitstream = bitstream_file(directory, result.files)
    result.elapsed_s = round(time.monotonic() - started, 1)
    return result


# --- the SoC section of the results page ---------------------------------------------------------

#: The core each board's SoC carries on the results page (the issue's targets: the block-RAM AES
#: on the UP5K, the round AES elsewhere).
REPORT_CORES = {"icebreaker": "aes-bram-128", "ice40-hx8k": "aes-128",
                "ulx3s-85f": "aes-128", "orangecrab-25f": "aes-128"}


def parse_selftest_output(text: str) -> dict:
    """The self-test's measurements: ``{"cycles_per_block": {mode: cycles},
    "dma_cycles_per_block": {mode: cycles}, "software": cycles or None, "speedup": x or None,
    "passed": bool, "summary": line}``; the DMA's figures (``BENCH DMA-<mode>`` lines, printed
    when the peripheral has a DMA master) are kept apart, under the mode's name."""
    cycles, dma, software, speedup, summary = {}, {}, None, None, ""
    for line in text.splitlines():
        fields = line.split()
        if line.startswith("BENCH ") and fields[-1] == "cycles/block":
            value = float(fields[-2])
            if fields[1].startswith("software"):
                software = value
            elif fields[1].startswith("DMA-"):
                dma[fields[1].removeprefix("DMA-")] = value
            else:
                cycles[fields[1]] = value
        elif line.startswith("SUMMARY "):
            summary = line
            for part in line.split("; "):
                if part.startswith("speed-up "):
                    speedup = float(part.removeprefix("speed-up ").rstrip("x"))
    return {"cycles_per_block": cycles, "dma_cycles_per_block": dma, "software": software,
            "speedup": speedup, "passed": summary.endswith("; PASS"), "summary": summary}


def measure_soc_cycles(target, *, isa: str, folder) -> dict:
    """Run the full self-test of ``target`` in the compiled simulator and return
    :func:`parse_selftest_output` of what it printed."""
    from cipher_cores.cores.soc.elf import load_elf
    from cipher_cores.cores.soc.simulate import DEFAULT_RAM_BYTES, compile_soc_model, run_firmware
    from .firmware import build_selftest
    elf = build_selftest(target, folder, isa=isa)
    model = compile_soc_model(target, isa=isa)
    result = run_firmware(model, load_elf(elf, ram_bytes=DEFAULT_RAM_BYTES))
    if not result.ok:
        raise BuildError(f"the self-test of {target.label} failed in simulation: "
                         f"{result.reason()}")
    return parse_selftest_output(result.output.decode(errors="replace"))


def soc_report(boards, *, root="build/soc", seed: int = 1,
               progress: Progress | None = None, dma: bool | None = None) -> dict:
    """Build the SoC on each of ``boards`` (names of :data:`SOC_BOARDS`) with its preset and
    the core of :data:`REPORT_CORES`, and measure its cycles per block in simulation (through
    the DMA too where the peripheral has it: the preset's ``dma``, unless ``dma`` says for
    every board); a board the SoC does not fit gets its overflow instead of figures."""
    from cipher_cores.cores.catalog import parse_config
    from cipher_cores.platforms.boards import get_board
    from cipher_cores.cores.soc.elf import parse_elf
    from .firmware import build_selftest
    from .targets import PeripheralConfig
    entries, cycles = [], {}
    for name in boards:
        preset, board = SOC_BOARDS[name], get_board(name)
        with_dma = preset.dma if dma is None else dma
        bus = "wishbone-dma" if with_dma else "wishbone"
        target = PeripheralConfig(parse_config(REPORT_CORES[name]), bus=bus,
                                  fifo_words=preset.fifo_words)
        folder = pathlib.Path(root) / f"soc_{target.slug}_{name}" / "firmware"
        elf = build_selftest(target, folder, isa=preset.isa, variant=preset.variant,
                             interrupts=preset.interrupts)
        firmware = parse_elf(elf.read_bytes(), str(elf))
        ram_bytes = ram_bytes_for(firmware.ram_needed)
        entry = {"board": name, "title": board.title, "device": board.device,
                 "core": REPORT_CORES[name], "label": target.label, "isa": preset.isa,
                 "interrupts": preset.interrupts, "fifo_words": preset.fifo_words,
                 "dma": with_dma,
                 "variant": preset.variant, "ram_bytes": ram_bytes,
                 "clock_mhz": board().default_clk_frequency / 1e6, "fit": True}
        result = build_soc(target, board, firmware, firmware_path=str(elf),
                           ram_bytes=ram_bytes, isa=preset.isa, interrupts=preset.interrupts,
                           root=root, seed=seed, progress=progress, check_fit=False)
        entry.update(fmax_mhz=result.fmax_mhz, timing_met=result.timing_met,
                     components={key: vars(value) for key, value in result.components.items()})
        if result.overflow is not None:
            entry.update(fit=False, reason=result.overflow)
        key = (REPORT_CORES[name], preset.isa, with_dma)
        if key not in cycles:
            cycles[key] = measure_soc_cycles(
                PeripheralConfig(parse_config(REPORT_CORES[name]), bus=bus), isa=preset.isa,
                folder=pathlib.Path(root) / f"cycles_{REPORT_CORES[name]}_{preset.isa}"
                                            f"{'_dma' if with_dma else ''}")
        entry["cycles"] = cycles[key]
        entries.append(entry)
    from .revision import source_revision
    return {"seed": seed, "boards": entries, "source": source_revision(),
            "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds")}


def soc_markdown(report: dict) -> str:
    """The SoC section of the results page."""
    out = ["## RISC-V SoC: PicoRV32 + the Wishbone peripheral, firmware on the CPU", "",
           f"Made by `{report.get('command') or 'cipher-cores soc report'}`"
           + (f" at commit `{report['source']}`" if report.get("source") else "")
           + (f", {report['generated']}" if report.get("generated") else "")
           + f" (one nextpnr seed, {report.get('seed', 1)}); the self-test firmware of `cores/soc/firmware` measures "
           "cycles per block with the SoC's cycle counter, CPU-driven (polling, word copies "
           "with `CTRL.LITTLE_ENDIAN`, 32 blocks a message, key loaded), in the compiled "
           "simulator, which runs every cycle of CPU, bus and peripheral as the board does. "
           "The software AES-128 is `aes_soft.c` (four 1 KiB T-tables, FIPS-197) on the same "
           "CPU. LUT4 / FF / BRAM per part are counted by hierarchy after synthesis "
           "(peripheral includes core).", "",
           "| board (device) | core | CPU | CPU LUT4/FF/BRAM | peripheral LUT4/FF/BRAM | "
           "core LUT4/FF/BRAM | system LUT4/FF/BRAM | RAM | Fmax / clock (MHz) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]

    def cells(entry, part):
        value = entry.get("components", {}).get(part)
        return "—" if value is None else f"{value['lut4']:,} / {value['ff']:,} / {value['bram']}"

    for entry in report["boards"]:
        cpu = f"PicoRV32 {entry['isa']}" + ("" if entry["interrupts"] else ", no IRQ")
        if entry["fit"]:
            fmax = f"{entry['fmax_mhz']:.1f} / {entry['clock_mhz']:g}" + \
                ("" if entry["timing_met"] else " (missed)")
        else:
            fmax = "does not fit: " + entry["reason"]
        core = entry["core"] + (" + DMA" if entry.get("dma") else "")
        out.append(f"| {entry['title']} ({entry['device']}) | {core} | {cpu} | "
                   f"{cells(entry, 'cpu')} | {cells(entry, 'peripheral')} | "
                   f"{cells(entry, 'core')} | {cells(entry, 'system')} | "
                   f"{entry['ram_bytes'] // 1024} KiB ({entry['variant']} self-test) | {fmax} |")
    out += ["", "Cycles per block through the bus (CPU-driven), through the peripheral's DMA "
                "master where the SoC has it (from the write of `CTRL` to `STATUS.DONE`, the "
                "CPU polling; \"-\": no DMA), and the speed-up of CPU-driven CBC encryption "
                "over the software AES-128 on the same CPU:", ""]
    seen, rows = set(), []
    modes, dma_modes = None, []
    for entry in report["boards"]:
        key = (entry["core"], entry["isa"], entry.get("dma", False))
        if key in seen:
            continue
        seen.add(key)
        figures = entry["cycles"]
        modes = modes or list(figures["cycles_per_block"])
        dma_modes += [mode for mode in figures.get("dma_cycles_per_block", {})
                      if mode not in dma_modes]
        rows.append((entry["core"], entry["isa"], figures))
    dma_modes = dma_modes or ["CBC-encrypt", "CTR-encrypt"]
    out += ["| core | CPU | " + " | ".join(modes) + " | "
            + " | ".join(f"DMA {mode}" for mode in dma_modes)
            + " | software AES-128 CBC | speed-up |",
            "| --- | --- | " + " | ".join("---" for _ in modes + dma_modes) + " | --- | --- |"]
    for core, isa, figures in rows:
        values = " | ".join(f"{figures['cycles_per_block'].get(mode, float('nan')):,.1f}"
                            for mode in modes)
        through_dma = figures.get("dma_cycles_per_block", {})
        dma_values = " | ".join("-" if mode not in through_dma else f"{through_dma[mode]:,.1f}"
                                for mode in dma_modes)
        software = "—" if figures["software"] is None else f"{figures['software']:,.1f}"
        speedup = "—" if figures["speedup"] is None else f"{figures['speedup']:.1f}x"
        out.append(f"| {core} | {isa} | {values} | {dma_values} | {software} | {speedup} |")
    out.append("")
    return "\n".join(out)
