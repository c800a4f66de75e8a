"""``cipher-cores``: build, measure, export and demonstrate the block-cipher cores.

Thin on purpose: each subcommand parses its arguments and calls the build flow
(:mod:`cipher_cores.scripts.flow`), the catalog (:mod:`cipher_cores.cores.catalog`) and the platforms, which the tests call
too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import re
import shlex
import sys
import tempfile
import time


__all__ = ["main", "make_parser"]


class _Exit(Exception):
    """A one-line error for the user (the message) and an exit code."""
    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    # argparse prints the whole usage before an error and exits 2; one line and the exit status
    # of every other input error (1) are enough.
    def error(self, message):
        raise _Exit(f"{self.prog}: error: {message} (see --help)")


def _integer(minimum: int, what: str):
    """An argparse ``type`` accepting integers from ``minimum`` up, with a message that says so
    (argparse adds the option's name)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"must be {what}, not {text!r}")
        return value
    return parse


_POSITIVE = _integer(1, "a positive integer")
_NON_NEGATIVE = _integer(0, "a non-negative integer")


def _key_sizes_text(entries) -> str:
    return "; ".join(f"{spec.title}: {spec.key_sizes}" for spec in entries.values())


# --- output paths: checked before any work starts ---------------------------------------------

def _check_writable_folder(folder: pathlib.Path, option: str, path: str):
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        reason = (error.strerror or type(error).__name__).lower()
        raise _Exit(f"{option} {path}: cannot write in {folder} ({reason})") from None


def _check_output_file(path: str | None, option: str):
    """Exit with one line unless a file can be written at ``path`` (``option`` names it)."""
    if not path:
        return
    target = pathlib.Path(path)
    if target.is_dir():
        raise _Exit(f"{option} {path}: is a folder; give a file name")
    folder = target.parent
    if not folder.exists():
        raise _Exit(f"{option} {path}: folder {folder} does not exist")
    if not folder.is_dir():
        raise _Exit(f"{option} {path}: {folder} is a file, not a folder")
    _check_writable_folder(folder, option, path)
    if target.exists():
        try:
            with open(target, "a"):
                pass
        except OSError as error:
            reason = (error.strerror or type(error).__name__).lower()
            raise _Exit(f"{option} {path}: cannot write ({reason})") from None


def _check_output_folder(path: str, option: str):
    """Exit with one line unless folder ``path`` exists and can be written, or can be made."""
    folder = pathlib.Path(path)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "is a file" if existing == folder else f"is inside {existing}, a file"
        raise _Exit(f"{option} {path}: {what}, not a folder")
    _check_writable_folder(existing, option, path)


_DESCRIPTION = """\
Build, measure and export the AES and PRESENT block-cipher cores.

The FPGA tools are the YoWASP (WebAssembly) builds of Yosys and nextpnr that pip installs with
this package; nothing else is needed. To use native tools instead, set YOSYS, NEXTPNR_ICE40,
ICEPACK, NEXTPNR_ECP5 or ECPPACK to their commands. The first YoWASP run on a machine
compiles the tools to machine code, once: {first_use}.
For your own design on an Amaranth platform, cipher_cores.platforms.toolchain.use_yowasp()
sets those variables the same way.

Examples (folders given to options must exist: mkdir -p build):
  cipher-cores demo                        simulate the FIPS-197 and PRESENT vectors
  cipher-cores build                       AES-128 self-test bitstream for the iCEBreaker
  cipher-cores build --core present --key-bits 128 --board ulx3s-85f
  cipher-cores report --cores aes-128 present-80 --devices ice40-up5k --markdown build/results.md
  cipher-cores report --cores wishbone:aes-128 aes-128 --devices ice40-up5k
  cipher-cores export --core aes --verilog aes128.v
  cipher-cores regmap --markdown build/wishbone.md --header build/cipher_wishbone.h
  cipher-cores list                        cores, their options, boards and devices
"""


class _KeepLinesFormatter(argparse.HelpFormatter):
    """Wraps a paragraph given as one line, and keeps text with line breaks (examples) as it is
    written."""
    def _fill_text(self, text, width, indent):
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


_REPORT_EXAMPLES = """\
examples (the folders of output files must exist: mkdir -p build):
  cipher-cores report --cores aes-128 present-80 --devices ice40-up5k --seeds 1
      two cores on the UP5K, one placement seed each: print the table
  cipher-cores report --cores aes-128 --devices ecp5-25f --json build/aes.json \\
      --markdown build/aes.md
      save the measurement (JSON) and a Markdown page
  cipher-cores report --merge build/aes.json --markdown build/aes.md --plot build/aes.png
      the page again from saved measurements, with the area/throughput plot (--plot needs
      matplotlib: pip install matplotlib)
"""


def _add_core_arguments(parser):
    from cipher_cores.cores.catalog import DEFAULT_CORE, catalog
    entries = catalog()
    names = list(entries)
    sizes = _key_sizes_text(entries)

    def key_bits(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a key size ({sizes}), not {text!r}") \
                from None

    parser.add_argument("--core", default=DEFAULT_CORE, metavar="NAME",
                        help=f"the core: {', '.join(names)} (default: {DEFAULT_CORE})")
    parser.add_argument("--key-bits", type=key_bits, metavar="N",
                        help=f"key size ({sizes}; default: the core's smallest)")
    # One flag per option name; several cores may take it, not always with the same values.
    by_name = {}
    for spec in entries.values():
        for option in spec.options:
            by_name.setdefault(option.name, []).append((spec, option))
    for name, takers in by_name.items():
        # The values of the core with the most choices (the shortest, most general help among
        # those), and the others' values where they differ.
        spec, option = max(takers, key=lambda taker: (len(taker[1].choices),
                                                       -len(taker[1].help)))
        titles = ", ".join(taker_spec.title for taker_spec, _ in takers)
        text = (f"{titles} only: {option.help}. Allowed: {option.allowed}; default "
                f"{option.format(option.default)}")
        others = [f"{other_spec.title}: {other.allowed}, default {other.format(other.default)}"
                  for other_spec, other in takers
                  if (other.choices, other.default) != (option.choices, option.default)]
        if others:
            text += f" ({'; '.join(others)})"
        parser.add_argument(option.flag, dest=f"opt_{name}", metavar="VALUE", help=text)


def _wrapper_of(text: str) -> str | None:
    """The bus wrapper ``--core`` names (``wishbone`` in ``wishbone:aes-128``), or ``None``."""
    from cipher_cores.scripts.flow.targets import WRAPPERS
    head, sep, _ = text.partition(":")
    return head.strip().lower() if sep and head.strip().lower() in WRAPPERS else None


def _config_from_args(args):
    """The configuration of ``--core``, ``--key-bits`` and the option flags; the catalog checks
    them (:meth:`~cipher_cores.cores.catalog.CipherEntry.parse_options`,
    :meth:`~cipher_cores.cores.catalog.CipherEntry.check`)."""
    from cipher_cores.cores.catalog import get_core, parse_config
    texts = {name.removeprefix("opt_"): value for name, value in vars(args).items()
             if name.startswith("opt_") and value is not None}
    try:
        spec = get_core(args.core.lower())
    except KeyError as error:
        # The report's form, NAME-KEYBITS[:OPTION=VALUE,...] (aes-128), names a core too.
        if (getattr(args, "key_bits", None) is None and not texts and
                (":" in args.core or args.core[-1:].isdigit())):
            try:
                return parse_config(args.core)
            except KeyError as error:
                raise _Exit(str(error.args[0])) from None
            except ValueError as error:
                raise _Exit(str(error)) from None
        raise _Exit(str(error.args[0])) from None
    try:
        return spec.config(args.key_bits, **spec.parse_options(texts))
    except ValueError as error:
        raise _Exit(str(error)) from None


def _progress(args):
    from cipher_cores.scripts.flow.progress import Progress
    return Progress(enabled=not getattr(args, "quiet", False))


def _prepare_tools(names, quiet=False, *, configure=True):
    from cipher_cores.platforms.toolchain import use_yowasp
    from cipher_cores.scripts.flow.toolchain import ToolchainError, prepare_tools
    if configure:
        use_yowasp()
    try:
        prepare_tools(names, say=None if not quiet else (lambda message: None))
    except ToolchainError as error:
        raise _Exit(str(error)) from None


# --- build ------------------------------------------------------------------------------------

def _cmd_build(args):
    from cipher_cores.cores import fpga
    from cipher_cores.platforms.boards import get_board
    from cipher_cores.cores.selftest import FAULTS
    from cipher_cores.scripts.flow.build import BuildError, BuildFile, DeviceMeasurement, build_board
    from cipher_cores.scripts.flow.measure import measure_cycles, slice_equivalent
    from cipher_cores.scripts.flow.report import derive_row, papers_for, text_table

    if _wrapper_of(args.core):
        raise _Exit(f"--core {args.core}: build makes a board self-test of a bare core; the "
                    f"Wishbone peripheral needs a CPU on the board: measure it with "
                    f"cipher-cores report --cores {args.core}")
    config = _config_from_args(args)
    try:
        board = get_board(args.board)
    except KeyError as error:
        raise _Exit(str(error.args[0])) from None
    if args.fault not in FAULTS:
        raise _Exit(f"--fault must be kat or loop, not {args.fault!r}")
    _check_output_folder(args.build_dir, "--build-dir")
    if not args.no_build:
        family_tools = {"ice40": ["yosys", "nextpnr-ice40", "icepack"],
                        "ecp5": ["yosys", "nextpnr-ecp5", "ecppack"]}
        _prepare_tools(family_tools[fpga.family(board())], args.quiet)
    with _progress(args) as progress:
        try:
            result = build_board(config, board, root=args.build_dir, seed=args.seed,
                                 loop_blocks=args.loop_blocks, progress=progress,
                                 do_build=not args.no_build, fault=args.fault)
        except BuildError as error:
            raise _Exit(str(error)) from None
    if args.no_build:
        print(f"build files for {config.label} on {board.title}: {result.build_dir}")
        return 0
    core, design = result.core_cells, result.design_cells
    print()
    print(f"{config.label} self-test on {board.title} ({result.device})")
    print(f"  bitstream     {result.bitstream or '(none)'}")
    print(f"  core alone    {core.lut4:,} LUT4, {core.ff:,} FF, {core.carry} carry, "
          f"{core.bram} BRAM  (≈{slice_equivalent(core.lut4, core.ff):,} Spartan-3 slices)")
    print(f"  whole design  {design.lut4:,} LUT4, {design.ff:,} FF, {design.bram} BRAM  (core, "
          f"self-test engine, UART and LEDs)")
    for cell, figures in sorted((result.design_utilization or {}).items()):
        if figures.get("used"):
            print(f"    {cell:<14} {figures['used']:>6} / {figures['available']}")
    fmax = "?" if result.fmax_mhz is None else f"{result.fmax_mhz:.1f}"
    print(f"  Fmax          {fmax} MHz, whole design (board clock {result.clock_mhz:g} MHz, seed "
          f"{result.seed})")
    figures = measure_cycles(config)
    measurement = DeviceMeasurement(
        label=config.label, config=config.to_dict(), device=board.name, family=result.family,
        block_bits=config.block_bits, seeds=[result.seed], build_dir=result.build_dir,
        constraint_mhz=result.clock_mhz, fit=True, core_cells=core, design_cells=design,
        design_utilization=result.design_utilization,
        fmax_mhz=[result.fmax_mhz] if result.fmax_mhz is not None else [])
    row = derive_row(measurement, figures)
    at_clock = config.block_bits * result.clock_mhz / figures.cycles_per_block
    at_fmax = row["throughput_median_mbps"]
    print(f"  throughput    {at_clock:,.1f} Mb/s at the board clock, "
          + ("" if at_fmax is None else f"{at_fmax:,.1f} Mb/s at Fmax ")
          + f"({figures.cycles_per_block:g} cycles per block, simulated)")
    summary = pathlib.Path(result.build_dir) / "build.json"
    print("  files")
    for file in [*result.files, BuildFile("build summary (JSON)", str(summary))]:
        print(f"    {file.what:<30} {file.path}")
    if board.programmer:
        print(f"  program with  {board.programmer} (in {result.build_dir})")
    print()
    print(text_table({"rows": [row], "papers": papers_for([config])}))
    # The row mixes the two scopes, as the report's rows do: say which figure is which.
    print(f"({config.label}: LUT4, FF, carry, BRAM and slices count the core alone; Fmax and Mb/s "
          f"are the whole self-test design's on the {board.title})")
    with open(summary, "w") as file:
        json.dump({**result.to_dict(), "cycles": figures.to_dict()}, file, indent=2)
    if not result.timing_met:
        raise _Exit(f"timing not met: Fmax {fmax} MHz is below the "
                    f"{result.clock_mhz:g} MHz board clock (bitstream written anyway)")
    return 0


# --- report -----------------------------------------------------------------------------------

def _cmd_report(args):
    from cipher_cores.platforms.devices import get_device
    from cipher_cores.scripts.flow.external import ExternalConfig
    from cipher_cores.scripts.flow.report import merge_reports, run_report
    from cipher_cores.scripts.flow.targets import parse_target

    if args.check or args.update:
        return _update_report(args)
    earlier = [_read_report(path) for path in args.merge or ()]
    if args.cores is None:
        # With --merge alone, nothing is measured: the earlier reports make the page.
        args.cores = [] if earlier else list(_default_cores())
    configs = []
    for text in args.cores:
        try:
            config = parse_target(text)
            if isinstance(config, ExternalConfig):
                config.check()      # reads the Verilog now: its errors before any build starts
        except (KeyError, ValueError) as error:
            raise _Exit(f"--cores {text}: {error.args[0]}") from None
        configs.append(config)
    try:
        devices = [get_device(name) for name in args.devices]
    except KeyError as error:
        raise _Exit(str(error.args[0])) from None
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise _Exit("--plot needs matplotlib: pip install matplotlib (or, in a checkout, "
                        "pip install -e '.[plot]')") from None
    for path, option in ((args.json, "--json"), (args.markdown, "--markdown"),
                         (args.plot, "--plot")):
        _check_output_file(path, option)
    _check_output_folder(args.build_dir, "--build-dir")
    command = "cipher-cores " + " ".join(shlex.quote(arg) for arg in args.argv)
    if not configs:
        report = merge_reports(earlier, command=command)
        return _write_report(report, args)
    executor = _report_executor(args, devices)
    try:
        with _progress(args) as progress:
            report = run_report(configs, devices, seeds=list(range(1, args.seeds + 1)),
                                jobs=args.jobs, executor=executor, root=args.build_dir,
                                progress=progress, command=command, reset=args.reset)
    finally:
        if executor is not None:
            executor.shutdown()
    if earlier:
        report = merge_reports(earlier + [report], command=command)
    return _write_report(report, args)


def _read_report(path, option="--merge"):
    """A report written by ``report --json``, for ``option``; a one-line error otherwise."""
    try:
        with open(path) as file:
            report = json.load(file)
    except OSError as error:
        raise _Exit(f"{option} {path}: {error.strerror}") from None
    except ValueError as error:
        raise _Exit(f"{option} {path}: not JSON ({error})") from None
    if not isinstance(report, dict) or not isinstance(report.get("rows"), list):
        raise _Exit(f"{option} {path}: not a report written by 'cipher-cores report --json'")
    return report


def _report_executor(args, devices):
    """Where ``report`` runs its builds: the Dask cluster of ``--scheduler`` (``None`` for
    here), after the tools the ``devices`` need are made ready when they run here."""
    if args.scheduler:
        from cipher_cores.scripts.flow.jobs import DaskUnavailable, dask_executor
        try:
            return dask_executor(args.scheduler)
        except DaskUnavailable as error:
            raise _Exit(str(error)) from None
    families = {device.family for device in devices}
    _prepare_tools(["yosys"] + [f"nextpnr-{family}" for family in sorted(families)], args.quiet)
    return None


def _update_report(args):
    """``report --check PAGE`` and ``report --update PAGE``: find the rows of the page whose
    design the sources no longer make (by digest); with ``--update`` measure those again (on the
    page's seeds, here or on ``--scheduler``) and rewrite the page: its JSON, and the Markdown and
    plot beside it (``PAGE`` with ``.md`` and ``.png``) unless ``--markdown``/``--plot`` say
    otherwise."""
    from cipher_cores.platforms.devices import get_device
    from cipher_cores.scripts.flow.report import merge_reports, run_report, update_plan
    from cipher_cores.scripts.flow.targets import parse_target

    option, path = ("--check", args.check) if args.check else ("--update", args.update)
    if args.cores or args.merge:
        raise _Exit(f"{option} takes no --cores or --merge: the page says what to measure")
    page = _read_report(path, option)
    stale = update_plan(page)
    for target, device, reset, reason in stale:
        kept = " (reset kept)" if reset == "kept" else ""
        print(f"stale: {target} on {device}{kept}: {reason}")
    print(f"{len(page['rows']) - len(stale)} of {len(page['rows'])} rows show the sources as they "
          f"are now")
    if args.check:
        return 1 if stale else 0
    seeds = sorted({seed for row in page["rows"] for seed in row.get("seeds", [])}) or [1, 2, 3]
    command = "cipher-cores " + " ".join(shlex.quote(arg) for arg in args.argv)
    args.json = args.json or path
    stem = pathlib.Path(path).with_suffix("")
    args.markdown = args.markdown or str(stem.with_suffix(".md"))
    if args.plot is None and stem.with_suffix(".png").exists():
        args.plot = str(stem.with_suffix(".png"))
    for file, name in ((args.json, "--json"), (args.markdown, "--markdown"),
                       (args.plot, "--plot")):
        _check_output_file(file, name)
    reports = [page]
    if stale:
        configs, pairs = {}, {}
        for target, device, reset, _ in stale:
            try:
                config = configs.setdefault(target, parse_target(target))
                pairs.setdefault(reset, []).append((config, get_device(device)))
            except (KeyError, ValueError) as error:
                raise _Exit(f"{option} {path}: row {target} on {device}: {error.args[0]}") \
                    from None
        executor = _report_executor(
            args, [device for group in pairs.values() for _, device in group])
        try:
            with _progress(args) as progress:
                for reset, group in pairs.items():
                    reports.append(run_report(
                        list({config.text: config for config, _ in group}.values()), [],
                        seeds=seeds,
                        jobs=args.jobs, executor=executor, root=args.build_dir,
                        progress=progress, command=command, pairs=group, reset=reset))
        finally:
            if executor is not None:
                executor.shutdown()
    report = merge_reports(reports, command=command)
    if page.get("soc") and not args.soc:
        report["soc"] = page["soc"]
    return _write_report(report, args)


def _default_cores() -> list:
    from cipher_cores.scripts.flow.report import default_configs
    return list(default_configs())


def _write_report(report, args) -> int:
    """Print ``report`` and write the files ``--json``, ``--plot`` and ``--markdown`` ask for."""
    from cipher_cores.scripts.flow.report import markdown_report, plot_report, text_table
    if getattr(args, "soc", None):
        try:
            report["soc"] = json.loads(pathlib.Path(args.soc).read_text())["soc"]
        except (OSError, ValueError, KeyError, TypeError):
            raise _Exit(f"--soc {args.soc}: not a file written by 'cipher-cores soc report "
                        f"--json'") from None
    print()
    print(text_table(report))
    for error in report["errors"]:
        print(f"error: {error}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as file:
            json.dump(report, file, indent=2)
    if args.plot:
        plot_report(report, args.plot)
    if args.markdown:
        plot_link = None
        if args.plot:
            plot_link = os.path.relpath(args.plot, os.path.dirname(os.path.abspath(args.markdown)))
        with open(args.markdown, "w") as file:
            file.write(markdown_report(report, plot=plot_link))
    return 1 if report["errors"] else 0


# --- soc --------------------------------------------------------------------------------------

def _soc_target(args, fifo_words: int | None = None):
    """The peripheral the SoC carries: ``--core`` (a catalog configuration) with ``--gcm`` or
    ``--dma``."""
    from cipher_cores.cores.catalog import parse_config
    from cipher_cores.scripts.flow.targets import PeripheralConfig
    dma = getattr(args, "dma", False)
    if args.gcm and dma:
        raise _Exit("--dma and --gcm: the SoC's peripheral is built with one or the other, "
                    "not both")
    try:
        config = parse_config(args.core)
    except (KeyError, ValueError) as error:
        raise _Exit(f"--core {args.core}: {error.args[0]}") from None
    bus = "wishbone-gcm" if args.gcm else "wishbone-dma" if dma else "wishbone"
    try:
        target = PeripheralConfig(config, bus=bus)
    except ValueError as error:
        raise _Exit(f"--core {args.core}: {error}") from None
    try:
        # The same limits (the peripheral's, which PeripheralConfig asks), with the FIFO depth.
        return dataclasses.replace(target, fifo_words=fifo_words)
    except ValueError as error:
        raise _Exit(f"--fifo-words: {error}") from None


def _soc_firmware(args, target, isa: str, folder: pathlib.Path, ram_bytes: int | None,
                  variant: str = "full", interrupts: bool = True):
    """The firmware to run: ``--firmware FILE`` loaded, or the self-test (``variant``) built
    into ``folder``; returns ``(path, Firmware)``."""
    from cipher_cores.cores.soc.elf import FirmwareError, load_elf, parse_elf
    from cipher_cores.scripts.flow.firmware import FirmwareBuildError, build_selftest
    if args.firmware:
        path = pathlib.Path(args.firmware)
        if not path.is_file():
            raise _Exit(f"--firmware {path}: no such file")
    else:
        try:
            path = build_selftest(target, folder, isa=isa, variant=variant,
                                  interrupts=interrupts)
        except (FirmwareBuildError, FileNotFoundError) as error:
            raise _Exit(str(error).splitlines()[0]) from None
    try:
        if ram_bytes is None:
            return path, parse_elf(path.read_bytes(), str(path))
        return path, load_elf(path, ram_bytes=ram_bytes)
    except FirmwareError as error:
        raise _Exit(str(error)) from None


def _cmd_soc_firmware(args):
    from cipher_cores.scripts.flow.firmware import FirmwareBuildError, build_selftest
    target = _soc_target(args)
    _check_output_folder(args.out, "--out")
    try:
        elf = build_selftest(target, pathlib.Path(args.out), isa=args.isa, variant=args.variant,
                             interrupts=args.irq)
    except (FirmwareBuildError, FileNotFoundError) as error:
        raise _Exit(str(error).splitlines()[0]) from None
    print(f"wrote {elf} and {elf.with_suffix('.bin')} ({args.variant} self-test of "
          f"{target.label}, {args.isa})")
    return 0


def _cmd_soc_simulate(args):
    from cipher_cores.cores.soc.simulate import compile_soc_model, run_firmware
    target = _soc_target(args)
    ram_bytes = args.ram_kib * 1024
    if ram_bytes & (ram_bytes - 1) or not 1 <= args.ram_kib <= 256:
        raise _Exit(f"--ram-kib must be a power of two from 1 to 256, not {args.ram_kib}")
    with tempfile.TemporaryDirectory(prefix="soc-firmware-") as folder:
        _, firmware = _soc_firmware(args, target, args.isa, pathlib.Path(folder), ram_bytes,
                                    variant=args.variant, interrupts=args.irq)
        if not args.quiet:
            print(f"cipher-cores: simulating the SoC with {target.label} ({args.isa}, "
                  f"{args.ram_kib} KiB RAM); the first run of a configuration compiles it",
                  file=sys.stderr)
        try:
            model = compile_soc_model(target, ram_bytes=ram_bytes, isa=args.isa,
                                      interrupts=args.irq)
            result = run_firmware(model, firmware, max_cycles=args.max_cycles,
                                  echo=sys.stdout.buffer)
        except RuntimeError as error:
            raise _Exit(str(error).splitlines()[0]) from None
    if result.output and not result.output.endswith(b"\n"):
        print()
    if not result.ok:
        raise _Exit(result.reason())
    if not args.quiet:
        print(f"cipher-cores: {result.reason()}", file=sys.stderr)
    return 0


def _cmd_soc_report(args):
    from cipher_cores.scripts.flow.build import BuildError
    from cipher_cores.scripts.flow.soc import SOC_BOARDS, soc_markdown, soc_report
    for board in args.boards:
        if board not in SOC_BOARDS:
            raise _Exit(f"--boards: {board!r} is not one of {', '.join(SOC_BOARDS)}")
    for path, option in ((args.json, "--json"), (args.markdown, "--markdown")):
        _check_output_file(path, option)
    _check_output_folder(args.build_dir, "--build-dir")
    _prepare_tools(["yosys", "nextpnr-ice40", "icepack", "nextpnr-ecp5", "ecppack"], args.quiet)
    with _progress(args) as progress:
        try:
            report = soc_report(args.boards, root=args.build_dir, seed=args.seed,
                                progress=progress, dma=args.dma)
        except BuildError as error:
            raise _Exit(str(error)) from None
    report["command"] = "cipher-cores " + " ".join(shlex.quote(arg) for arg in args.argv)
    text = soc_markdown(report)
    print(text)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"soc": report}, indent=2))
    if args.markdown:
        pathlib.Path(args.markdown).write_text(text)
    return 0


def _cmd_soc_build(args):
    from cipher_cores.cores import fpga
    from cipher_cores.platforms.boards import get_board
    from cipher_cores.scripts.flow.build import BuildError
    from cipher_cores.scripts.flow.soc import SOC_BOARDS, build_soc, ram_bytes_for

    if args.board not in SOC_BOARDS:
        raise _Exit(f"--board must be one of {', '.join(SOC_BOARDS)}, not {args.board!r}")
    preset = SOC_BOARDS[args.board]
    if args.dma is None:
        args.dma = preset.dma and not args.gcm
    target = _soc_target(args, args.fifo_words or preset.fifo_words)
    board = get_board(args.board)
    family = fpga.family(board())
    isa = args.isa or preset.isa
    variant = args.variant or preset.variant
    if args.irq is None:
        args.irq = preset.interrupts
    _check_output_folder(args.build_dir, "--build-dir")
    folder = pathlib.Path(args.build_dir) / f"soc_{target.slug}_{board.name}" / "firmware"
    folder.mkdir(parents=True, exist_ok=True)
    path, firmware = _soc_firmware(args, target, isa, folder, None, variant=variant,
                                   interrupts=args.irq)
    ram_bytes = args.ram_kib * 1024 if args.ram_kib else ram_bytes_for(firmware.ram_needed)
    if firmware.ram_needed > ram_bytes:
        raise _Exit(f"{path}: needs {firmware.ram_needed:,} bytes of RAM, --ram-kib "
                    f"{args.ram_kib} gives {ram_bytes:,}")
    _prepare_tools({"ice40": ["yosys", "nextpnr-ice40", "icepack"],
                    "ecp5": ["yosys", "nextpnr-ecp5", "ecppack"]}[family], args.quiet)
    with _progress(args) as progress:
        try:
            result = build_soc(target, board, firmware, firmware_path=str(path),
                               ram_bytes=ram_bytes, isa=isa, interrupts=args.irq,
                               root=args.build_dir, seed=args.seed, progress=progress)
        except BuildError as error:
            raise _Exit(str(error)) from None
    print()
    print(f"SoC: PicoRV32 ({isa}{'' if args.irq else ', no interrupts'}) + "
          f"{target.label} on {board.title} ({result.device})"
          + (", the DMA beside the CPU on the bus" if target.dma else ""))
    print(f"  firmware      {path} ({firmware.ram_needed:,} bytes; RAM {ram_bytes:,} bytes)")
    print(f"  bitstream     {result.bitstream or '(none)'}")
    for name in ("cpu", "peripheral", "core", "ram", "sysctl", "decoder", "arbiter", "system"):
        cells = result.components.get(name)
        if cells is not None:
            what = {"peripheral": "peripheral (with core)", "system": "whole system"}.get(name,
                                                                                         name)
            print(f"  {what:<23} {cells.lut4:>6,} LUT4 {cells.ff:>6,} FF {cells.bram:>4} BRAM")
    for cell, figures in sorted(result.utilization.items()):
        if figures.get("used"):
            print(f"    {cell:<14} {figures['used']:>6} / {figures['available']}")
    fmax = "?" if result.fmax_mhz is None else f"{result.fmax_mhz:.1f}"
    print(f"  Fmax          {fmax} MHz (board clock {result.clock_mhz:g} MHz, seed {result.seed})")
    if board.uart:
        print("  UART          115200 baud 8N1 on the board's serial port: the firmware's output")
    if board.programmer:
        print(f"  program with  {board.programmer} (in {result.build_dir})")
    summary = pathlib.Path(result.build_dir) / "soc.json"
    summary.write_text(json.dumps(result.to_dict(), indent=2))
    print(f"  summary       {summary}")
    if not result.timing_met:
        raise _Exit(f"timing not met: Fmax {fmax} MHz is below the {result.clock_mhz:g} MHz "
                    f"board clock (bitstream written anyway)")
    return 0


# --- export -----------------------------------------------------------------------------------

def _peripheral_from_args(args):
    from cipher_cores.scripts.flow.targets import parse_target
    given = [name for name, value in vars(args).items()
             if (name.startswith("opt_") or name == "key_bits") and value is not None]
    if given:
        flag = "--" + given[0].removeprefix("opt_").replace("_", "-")
        raise _Exit(f"{flag} does not apply to --core {args.core}: write the core's key size "
                    f"and options in it, e.g. wishbone:present-128:rounds_per_cycle=4")
    try:
        return parse_target(args.core)
    except (KeyError, ValueError) as error:
        raise _Exit(f"--core {args.core}: {error.args[0]}") from None


_EXPORT_DESCRIPTION = """\
Convert a core to Verilog (or RTLIL) for use outside Amaranth: a top module
(named by --name) with the ports below, and submodules whose names start with
the top module's name. --core wishbone:CORE (e.g. wishbone:aes-128) exports the
Wishbone peripheral with all five modes around that core instead (ports
bus__cyc, bus__adr, ..., irq; registers in docs/wishbone.md); --core axi:CORE
the same peripheral on AXI4-Lite (ports aclk, aresetn, s_axi_awaddr, ...,
s_axi_rready, irq; SLVERR for the accesses the map flags). --axis exports a
bare core with AXI4-Stream channels (ports aclk, aresetn, s_axis_key_*,
s_axis_*, m_axis_*; docs/verilog.md).

--fusesoc DIR writes a FuseSoC package of what would be exported (a bare core,
with --axis too, or a peripheral) into DIR: the Verilog, a self-checking
testbench of the known-answer vectors and a CAPI2 .core file with targets
default, sim and lint (Icarus Verilog); see docs/fusesoc.md.

The Verilog has no always @* block: combinational logic is continuous
assignments, clocked logic always @(posedge clk). It simulates alike from time 0
under Verilog-2005 and SystemVerilog semantics (tested with Icarus Verilog
-g2005 and -g2012).
"""

_EXPORT_PORTS = """\
ports of a core (B: block bits, 128 for AES, 64 for PRESENT; K: key bits):
  clk             in   1    clock; everything happens at its rising edge
  rst             in   1    reset, synchronous and active high: rst high at a
                            rising edge leaves the core idle with no key loaded
  key__valid      in   1    a key is offered
  key__ready      out  1    the core takes a key (only when no block is in it)
  key__payload    in   K    the key
  input__valid    in   1    a block is offered
  input__ready    out  1    the core takes a block (low until a key has been
                            loaded, and while key__valid is high)
  input__payload  in   B+1  {decrypt, block}: block in bits [B-1:0], decrypt in
                            bit B (1: decrypt; a --decrypt no core always
                            encrypts)
  output__valid   out  1    a result is offered; it and output__payload hold
                            until taken
  output__ready   in   1    the result is taken
  output__payload out  B    the result, one per block, in the order the blocks
                            went in

A transfer happens at a rising edge of clk where valid and ready are both high.
A key transfer sets the key of every later block. Registers have Verilog
initial values: in simulation and on FPGAs a core starts idle with no key
loaded, as after a reset.

Bit order: an AES block or key is its FIPS-197 byte string as a big-endian
number (first byte in the top 8 bits: plaintext 00112233...ff is
128'h00112233...ff); a PRESENT block is b63..b0 and a key k79..k0 (or
k127..k0), as in the PRESENT paper.
"""


#: The reserved words of Verilog-2005 (IEEE 1364-2005, Annex B): not a module's name.
_VERILOG_KEYWORDS = frozenset("""
    always and assign automatic begin buf bufif0 bufif1 case casex casez cell cmos config
    deassign default defparam design disable edge else end endcase endconfig endfunction
    endgenerate endmodule endprimitive endspecify endtable endtask event for force forever fork
    function generate genvar highz0 highz1 if ifnone incdir include initial inout input instance
    integer join large liblist library localparam macromodule medium module nand negedge nmos
    nor noshowcancelled not notif0 notif1 or output parameter pmos posedge primitive pull0 pull1
    pulldown pullup pulsestyle_ondetect pulsestyle_onevent rcmos real realtime reg release
    repeat rnmos rpmos rtran rtranif0 rtranif1 scalared showcancelled signed small specify
    specparam strong0 strong1 supply0 supply1 table task time tran tranif0 tranif1 tri tri0 tri1
    triand trior trireg unsigned use uwire vectored wait wand weak0 weak1 while wire wor xnor
    xor""".split())


def _check_module_name(name: str):
    """Exit with one line unless ``name`` can name the top module: a plain Verilog identifier
    (the submodules' names start with it, so it must need no escaping in either language)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise _Exit(f"--name {name!r}: a module name is a Verilog identifier: a letter or _, "
                    f"then letters, digits or _")
    if name in _VERILOG_KEYWORDS:
        raise _Exit(f"--name {name!r}: a Verilog keyword cannot name a module")


def _cmd_export(args):
    from cipher_cores.scripts.flow.toolchain import configure_export

    config = _peripheral_from_args(args) if _wrapper_of(args.core) else _config_from_args(args)
    if args.axis and _wrapper_of(args.core):
        raise _Exit(f"--axis wraps a bare core, not --core {args.core}: write e.g. "
                    f"--core aes-128 --axis")
    if not args.verilog and not args.rtlil and not args.fusesoc:
        raise _Exit("export needs --verilog FILE and/or --rtlil FILE (or --fusesoc DIR)")
    if args.name is not None:
        _check_module_name(args.name)
    _check_output_file(args.verilog, "--verilog")
    _check_output_file(args.rtlil, "--rtlil")
    name = args.name or (f"{config.slug}_axis" if args.axis else config.slug)
    if args.fusesoc:
        from cipher_cores.scripts.flow import fusesoc
        try:
            fusesoc.kind_of(config, "axis" if args.axis else None)
        except ValueError as error:
            raise _Exit(str(error)) from None
        _check_output_folder(args.fusesoc, "--fusesoc")
        for path in fusesoc.package_files(args.fusesoc, name):
            if path.is_dir():
                raise _Exit(f"--fusesoc {args.fusesoc}: a folder {path} is in the way")

    def design():
        # What the top module is: the core, the core with AXI4-Stream channels, or the
        # peripheral (on AXI4-Lite with Xilinx-style port names).
        if args.axis:
            from cipher_cores.cores.axis import axis_top
            return axis_top(config.build())
        return config.export_top() if hasattr(config, "export_top") else config.build()
    if args.rtlil:
        from amaranth.back import rtlil
        pathlib.Path(args.rtlil).write_text(rtlil.convert(design(), name=name))
        print(f"wrote {args.rtlil} (RTLIL, top module {name})")
    if args.verilog:
        configure_export()
        if os.environ.get("AMARANTH_USE_YOSYS") == "system":
            _prepare_tools(["yosys"], configure=False)
        from cipher_cores.cores.verilog import verilog_text
        try:
            text = verilog_text(design(), name=name)
        except Exception as error:
            raise _Exit(f"Verilog conversion failed: {type(error).__name__}: {error}") from None
        pathlib.Path(args.verilog).write_text(text)
        print(f"wrote {args.verilog} (Verilog, top module {name})")
    if args.fusesoc:
        configure_export()
        if os.environ.get("AMARANTH_USE_YOSYS") == "system":
            _prepare_tools(["yosys"], configure=False)
        try:
            package = fusesoc.write_package(config, args.fusesoc, name=name,
                                            form="axis" if args.axis else None)
        except OSError as error:
            raise _Exit(f"--fusesoc {args.fusesoc}: cannot write "
                        f"({(error.strerror or type(error).__name__).lower()})") from None
        except Exception as error:
            raise _Exit(f"Verilog conversion failed: {type(error).__name__}: {error}") from None
        for path, what in zip(package.files, (f"Verilog, top module {name}",
                                              f"testbench, top module {package.bench}",
                                              f"FuseSoC core {package.vlnv}")):
            print(f"wrote {path} ({what})")
    return 0


# --- regmap -----------------------------------------------------------------------------------

def _cmd_regmap(args):
    from cipher_cores.cores.bus import regmap

    if not args.markdown and not args.header:
        raise _Exit("regmap needs --markdown FILE and/or --header FILE")
    _check_output_file(args.markdown, "--markdown")
    _check_output_file(args.header, "--header")
    if args.markdown:
        pathlib.Path(args.markdown).write_text(regmap.markdown())
        print(f"wrote {args.markdown} (Markdown register table)")
    if args.header:
        pathlib.Path(args.header).write_text(regmap.c_header())
        print(f"wrote {args.header} (C header)")
    return 0


# --- demo -------------------------------------------------------------------------------------

def _cmd_demo(args):
    from cipher_cores.cores.catalog import CoreConfig, catalog, get_core
    from cipher_cores.scripts.flow.demo import demo_lines, run_demo

    names = list(catalog()) if args.core == "all" else [args.core]
    configs = []
    for name in names:
        try:
            spec = get_core(name)
        except KeyError as error:
            raise _Exit(str(error.args[0])) from None
        if args.key_bits == "all":
            sizes = spec.key_bits
        elif args.key_bits is None:
            sizes = (spec.default_key_bits,)
        elif args.key_bits.isdigit() and int(args.key_bits) in spec.key_bits:
            sizes = (int(args.key_bits),)
        elif args.core == "all":
            continue        # a key size some cores take: the others are left out
        else:
            sizes = ", ".join(map(str, spec.key_bits))
            raise _Exit(f"--key-bits must be {sizes} or all for {spec.title}, not "
                        f"{args.key_bits!r}")
        configs += [CoreConfig(spec, key_bits) for key_bits in sizes]
    if not configs:
        raise _Exit(f"--key-bits {args.key_bits}: no core takes that key size")
    started = time.monotonic()
    failures = 0
    for config in configs:
        run = run_demo(config)
        failures += run.mismatches
        print("\n".join(demo_lines(run)))
        print()
    print(f"{len(configs)} configuration{'s' if len(configs) > 1 else ''} simulated in "
          f"{time.monotonic() - started:.1f} s"
          + (" (each core's other key sizes: --key-bits all)" if args.key_bits is None else ""))
    if failures:
        raise _Exit(f"{failures} mismatches against the known answers")
    return 0


# --- list -------------------------------------------------------------------------------------

def _cmd_list(args):
    from cipher_cores.cores.catalog import catalog
    from cipher_cores.platforms.boards import BOARDS, DEFAULT_BOARD
    from cipher_cores.platforms.devices import DEVICES
    from cipher_cores.scripts.flow.targets import GCM_PRESETS, WRAPPERS

    cores = [(spec.name, f"{spec.title}, keys {'/'.join(map(str, spec.key_bits))}"
              + "".join(f"; {o.flag} {'|'.join(map(o.format, o.choices))} "
                        f"(default {o.format(o.default)})" for o in spec.options))
             for spec in catalog().values()]
    wrappers = [(f"{name}:CORE", what) for name, what in WRAPPERS.items()]
    gcm = [(f"{name}:CORE", f"AES-GCM around CORE (a 128-bit core: an AES one); GHASH "
                            f"{preset['multiplier']}, {preset['digit_bits']}-bit digits")
           for name, preset in GCM_PRESETS.items()]
    verilog = [("verilog:FILE.toml", "another project's Verilog core, as FILE.toml describes it "
                                     "(see scripts/flow/external.py)")]
    boards = [(board.name, board.title + ("  (default)" if board.name == DEFAULT_BOARD else ""))
              for board in BOARDS.values()]
    devices = [(device.name, device.title) for device in DEVICES.values()]
    sections = [
        ("cores (build/export --core NAME, report --cores NAME-KEYBITS[:OPTION=VALUE,...]):",
         cores),
        ("bus wrappers (report --cores WRAPPER:CORE, export --core WRAPPER:CORE):", wrappers),
        ("AES-GCM (report --cores PRESET:CORE):", gcm),
        ("other projects' cores (report --cores):", verilog),
        ("boards (build --board):", boards),
        ("bare devices (report --devices):", devices),
    ]
    # One column for the names of every section, as wide as the longest.
    width = max(len(name) for _, rows in sections for name, _ in rows)
    for heading, rows in sections:
        print(heading)
        for name, what in rows:
            print(f"  {name:<{width}}  {what}")
    return 0


# --- parser -----------------------------------------------------------------------------------

def make_parser() -> argparse.ArgumentParser:
    from cipher_cores.cores.catalog import catalog
    from cipher_cores.platforms.boards import BOARDS, DEFAULT_BOARD
    from cipher_cores.platforms.devices import DEFAULT_DEVICES, DEVICES
    from cipher_cores.scripts.flow.report import default_configs
    from cipher_cores.scripts.flow.targets import GCM_PRESETS
    from cipher_cores.scripts.flow.toolchain import FIRST_USE_COMPILE

    parser = _Parser(prog="cipher-cores", description=_DESCRIPTION.format(
                         first_use=FIRST_USE_COMPILE),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    build = commands.add_parser(
        "build", help="build a self-test bitstream for a board and print its report",
        description="Build the power-on self-test of a core for a board: the core runs the "
                    "standard known-answer vectors and a long encrypt-then-decrypt loop, and "
                    "shows pass/fail on the LEDs (and prints a summary on the UART). Prints the "
                    "core's cells, the design's utilization and the Fmax against the board "
                    "clock; exits 1 if timing is not met.")
    _add_core_arguments(build)
    build.add_argument("--board", default=DEFAULT_BOARD, metavar="NAME",
                       help=f"{', '.join(BOARDS)} (default: {DEFAULT_BOARD})")
    build.add_argument("--seed", type=_NON_NEGATIVE, default=1, metavar="N",
                       help="nextpnr placement seed, 0 or more (default 1)")
    build.add_argument("--loop-blocks", type=_POSITIVE, default=None, metavar="N",
                       help="blocks in the encrypt-then-decrypt loop (default 2**20)")
    build.add_argument("--fault", choices=["kat", "loop"], default=None,
                       help="build a deliberately failing self-test (to see the fail LED)")
    build.add_argument("--build-dir", default="build", metavar="DIR",
                       help="where build files go (default: build)")
    build.add_argument("--no-build", action="store_true",
                       help="only elaborate and write the build files, run no tools")
    build.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    build.set_defaults(func=_cmd_build)

    report = commands.add_parser(
        "report", help="measure cores on bare devices and print the utilization report",
        description="Synthesize and place each core configuration on each bare device (inside "
                    "a shift-register harness, cells counted for the core alone), simulate it "
                    "for cycles per block and latency, and print LUT4, FF, carry, BRAM, Fmax "
                    "(median and best over the seeds), throughput and slice equivalents beside "
                    "the seed papers' figures.",
        formatter_class=_KeepLinesFormatter, epilog=_REPORT_EXAMPLES)
    report.add_argument("--cores", nargs="+", default=None, metavar="CORE",
                        help="configurations as NAME-KEYBITS[:OPTION=VALUE,...], e.g. aes-128 "
                             "aes-128:sbox=logic present-80:decrypt=no; wishbone:CORE is the "
                             "Wishbone peripheral with all five modes around CORE, e.g. "
                             "wishbone:aes-128; verilog:FILE.toml is another project's "
                             "Verilog core described by FILE.toml (see scripts/flow/external.py); "
                             f"{'/'.join(GCM_PRESETS)}:CORE is AES-GCM around CORE "
                             "(default: "
                             f"{' '.join(default_configs())}; none with --merge alone)")
    report.add_argument("--devices", nargs="+", default=list(DEFAULT_DEVICES), metavar="DEVICE",
                        help=f"bare devices: {', '.join(DEVICES)} (default: all)")
    report.add_argument("--seeds", type=_POSITIVE, default=3, metavar="N",
                        help="nextpnr placement seeds per build (default 3)")
    report.add_argument("-j", "--jobs", type=_POSITIVE, default=1, metavar="N",
                        help="builds to run at once, in worker processes (default 1: in this "
                             "process)")
    report.add_argument("--scheduler", metavar="ADDRESS",
                        help="run the builds on the Dask cluster of this scheduler "
                             "(tcp://HOST:PORT) instead of here; needs pip install distributed, "
                             "and this package and its tools on every worker")
    report.add_argument("--merge", nargs="+", metavar="FILE",
                        help="earlier reports (their --json files) to put on the same page: a row "
                             "this run measures replaces theirs for the same core and device, and "
                             "the page says which sweep measured each row")
    report.add_argument("--reset", choices=["none", "kept"], default="none",
                        help="none (default): no reset reaches the core, on every family (its "
                             "flip-flops start from their reset values at configuration); kept: "
                             "a harness flip-flop resets the core, so its reset logic is "
                             "measured too (the page shows such rows beside the others)")
    report.add_argument("--check", metavar="PAGE",
                        help="list the rows of PAGE (a --json file, such as docs/results.json) "
                             "whose core changed since they were measured (each row records a "
                             "digest of its design); exit 1 if any did")
    report.add_argument("--update", metavar="PAGE",
                        help="measure again the rows of PAGE that --check finds, on the page's "
                             "seeds, and rewrite PAGE (and the .md and .png beside it)")
    report.add_argument("--soc", metavar="FILE",
                        help="add the RISC-V SoC section written by 'cipher-cores soc report "
                             "--json FILE'")
    report.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    report.add_argument("--markdown", metavar="FILE", help="write the report as Markdown")
    report.add_argument("--plot", metavar="FILE", help="plot area against throughput (PNG)")
    report.add_argument("--build-dir", default="build/report", metavar="DIR",
                        help="where build files go (default: build/report)")
    report.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    report.set_defaults(func=_cmd_report)

    export = commands.add_parser(
        "export", help="write a core as standalone Verilog or RTLIL",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_EXPORT_DESCRIPTION, epilog=_EXPORT_PORTS)
    _add_core_arguments(export)
    export.add_argument("--verilog", metavar="FILE", help="write Verilog here")
    export.add_argument("--rtlil", metavar="FILE", help="write RTLIL here")
    export.add_argument("--name", metavar="NAME", help="top module name (default: e.g. aes128)")
    export.add_argument("--axis", action="store_true",
                        help="the core with AXI4-Stream key, input and output channels "
                             "(aclk, aresetn, s_axis_key_*, s_axis_*, m_axis_*)")
    export.add_argument("--fusesoc", metavar="DIR",
                        help="write a FuseSoC package here: the Verilog, a self-checking "
                             "testbench and a CAPI2 .core file (docs/fusesoc.md)")
    export.set_defaults(func=_cmd_export)

    regmap = commands.add_parser(
        "regmap", help="write the Wishbone peripheral's register table and C header",
        description="Write the register map of the Wishbone cipher peripheral, generated from "
                    "its one description (cores/bus/regmap.py): a Markdown table "
                    "(docs/wishbone.md) and a C header of offsets, fields and masks "
                    "(cores/soc/firmware/cipher_wishbone.h).")
    regmap.add_argument("--markdown", metavar="FILE", help="write the Markdown register table")
    regmap.add_argument("--header", metavar="FILE", help="write the C header")
    regmap.set_defaults(func=_cmd_regmap)

    soc = commands.add_parser(
        "soc", help="the RISC-V SoC: build its firmware, simulate it, build it for a board",
        description="A PicoRV32 RISC-V SoC with the Wishbone cipher peripheral around a core "
                    "(memory map in cores/soc/memory_map.py, firmware kit in "
                    "cores/soc/firmware). Without --firmware, the self-test firmware is built "
                    "for the core and used.")
    soc_commands = soc.add_subparsers(dest="soc_command", metavar="SOC_COMMAND",
                                      parser_class=_Parser, required=True)

    def soc_arguments(command, isa_default, program=False):
        command.add_argument("--core", required=True, metavar="CORE",
                             help="the peripheral's core, e.g. aes-bram-128, aes-128, "
                                  "present-80:decrypt=no")
        command.add_argument("--gcm", action="store_true",
                             help="build AES-GCM into the peripheral (AES cores)")
        command.add_argument("--isa", choices=["rv32i", "rv32im", "rv32imc"], default=isa_default,
                             help="the CPU's instruction set" + (
                                 f" (default {isa_default})" if isa_default else
                                 " (default: rv32i on iCE40, rv32imc on ECP5)"))
        command.add_argument("--irq", action=argparse.BooleanOptionalAction,
                             default=True if isa_default else None,
                             help="build the CPU with interrupt support (--no-irq: about 390 "
                                  "iCE40 LUT4 less, and the self-test skips its interrupt "
                                  "check; default: with)")
        if program:
            command.add_argument("--dma", action=argparse.BooleanOptionalAction,
                                 default=False if isa_default else None,
                                 help="build the peripheral with its DMA master, beside the CPU "
                                      "on the bus through an arbiter (cipher_run_dma; the "
                                      "self-test also checks and measures through it); "
                                      "not with --gcm (default: " + (
                                          "without" if isa_default else
                                          "with on the ECP5 boards, without on iCE40") + ")")
            command.add_argument("--firmware", metavar="FILE.elf",
                                 help="the program (default: the self-test for CORE)")
        command.add_argument("--variant", choices=["full", "small", "known-answers"],
                             default="full" if isa_default else None,
                             help="which self-test to build when no --firmware is given "
                                  "(default: " + ("full" if isa_default else
                                                  "small on the iCEBreaker, known-answers on "
                                                  "the HX8K, full on ECP5") + ")")

    firmware = soc_commands.add_parser(
        "firmware", help="build the self-test firmware for a core",
        description="Build the self-test firmware (ELF and raw image) for the SoC with CORE, "
                    "with the ziglang package's C compiler.")
    soc_arguments(firmware, "rv32imc")
    firmware.add_argument("--out", required=True, metavar="DIR", help="output folder")
    firmware.set_defaults(func=_cmd_soc_firmware)

    simulate = soc_commands.add_parser(
        "simulate", help="run RV32 firmware on the SoC in a compiled simulator",
        description="Run an RV32 ELF on the SoC (CXXRTL, every cycle of CPU, bus, RAM and "
                    "peripheral) and print what it writes to the UART. The program is linked "
                    "with the kit's link.ld: it starts at 0x00000000 (start.S), its stack is at "
                    "the end of the RAM, and it ends by returning from main() or writing "
                    "SYSCTL_EXIT. Exit status 0 if it ends with status 0; 1 with one line on "
                    "any other status, a trap or a timeout.")
    soc_arguments(simulate, "rv32imc", program=True)
    simulate.add_argument("--max-cycles", type=_POSITIVE, default=20_000_000, metavar="N",
                          help="give up after N clock cycles (default 20000000)")
    simulate.add_argument("--ram-kib", type=_POSITIVE, default=128, metavar="N",
                          help="RAM size in KiB, a power of two up to 256 (default 128)")
    simulate.add_argument("-q", "--quiet", action="store_true",
                          help="print only the firmware's output (and errors)")
    simulate.set_defaults(func=_cmd_soc_simulate)

    soc_build = soc_commands.add_parser(
        "build", help="build the SoC with its firmware for a board",
        description="Build a bitstream of the SoC with the firmware in its RAM (sized to the "
                    "firmware unless --ram-kib) and print the utilization of CPU, peripheral "
                    "and core, and the Fmax against the board clock. Exits 1 if it does not "
                    "fit or timing is not met. The default firmware is the self-test, in the "
                    "variant the board's block RAM holds (see --variant).")
    soc_arguments(soc_build, None, program=True)
    soc_build.add_argument("--board", required=True, metavar="NAME",
                           help="icebreaker, ice40-hx8k, ulx3s-85f or orangecrab-25f")
    soc_build.add_argument("--fifo-words", type=_POSITIVE, default=None, metavar="N",
                           help="depth of the peripheral's FIFOs in words (default: two blocks; "
                                "one block on the HX8K, where it frees two block RAMs)")
    soc_build.add_argument("--ram-kib", type=_POSITIVE, default=None, metavar="N",
                           help="RAM size in KiB, a power of two (default: the firmware's size "
                                "and a 512-byte stack, rounded up)")
    soc_build.add_argument("--seed", type=_NON_NEGATIVE, default=1, metavar="N",
                           help="nextpnr placement seed (default 1)")
    soc_build.add_argument("--build-dir", default="build", metavar="DIR",
                           help="where build files go (default: build)")
    soc_build.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    soc_build.set_defaults(func=_cmd_soc_build)

    soc_report_parser = soc_commands.add_parser(
        "report", help="build the SoC on each board and measure it: the results page's section",
        description="Build the SoC with each board's preset (self-test variant, CPU, FIFOs) "
                    "and core (aes-bram-128 on the iCEBreaker, aes-128 elsewhere), simulate "
                    "the full self-test for cycles per block and the speed-up over software "
                    "AES-128, and print the SoC section of the results page.")
    soc_report_parser.add_argument("--boards", nargs="+", metavar="BOARD",
                                   default=["icebreaker", "ice40-hx8k", "ulx3s-85f",
                                            "orangecrab-25f"],
                                   help="boards (default: all four)")
    soc_report_parser.add_argument("--seed", type=_NON_NEGATIVE, default=1, metavar="N",
                                   help="nextpnr placement seed (default 1)")
    soc_report_parser.add_argument("--dma", action=argparse.BooleanOptionalAction, default=None,
                                   help="build every board's peripheral with (or without) its "
                                        "DMA master (default: the presets, with on the ECP5 "
                                        "boards, without on iCE40)")
    soc_report_parser.add_argument("--json", metavar="FILE",
                                   help="write the measurements (for report --soc)")
    soc_report_parser.add_argument("--markdown", metavar="FILE", help="write the section")
    soc_report_parser.add_argument("--build-dir", default="build/soc", metavar="DIR",
                                   help="where build files go (default: build/soc)")
    soc_report_parser.add_argument("-q", "--quiet", action="store_true",
                                   help="no progress display")
    soc_report_parser.set_defaults(func=_cmd_soc_report)

    demo = commands.add_parser(
        "demo", help="simulate the standard test vectors and print cycle counts",
        description="Simulate every core of the catalog (or the one --core names) on the "
                    "FIPS-197 (Appendix B and C) or PRESENT paper vectors in Amaranth's "
                    "simulator, encrypting and then decrypting each (an encrypt-only core only "
                    "encrypts, and says so), and print the results with the cycle counts "
                    "measured in the same run. No FPGA tools are run; all the cores at their "
                    "default key sizes take seconds.")
    core_names = list(catalog())
    demo.add_argument("--core", default="all", metavar="NAME",
                      help=f"{', '.join(core_names)} or all (default: all)")
    demo.add_argument("--key-bits", default=None, metavar="N",
                      help="the key size, or all for every key size of each core (default: "
                           "each core's default key size; with --core all, a size only some "
                           "cores take shows those cores)")
    demo.set_defaults(func=_cmd_demo)

    # The side-channel and fault tools keep their options beside their code (each module's
    # add_arguments and run); imported when the parser is made, as every other subcommand is.
    from .flow import faults, leakage
    leakage_parser = commands.add_parser(
        "leakage", help="test a core for first- and second-order leakage (TVLA, in simulation)",
        description="Fixed-versus-random leakage assessment (TVLA) of a core's synthesized "
                    "netlist: per-cycle toggle counts of its flip-flops and LUT outputs in a "
                    "compiled simulation, Welch's t of first and second order, streaming (no "
                    "trace stored). See docs/masking.md.")
    leakage.add_arguments(leakage_parser)
    leakage_parser.set_defaults(func=leakage.run)
    faults_parser = commands.add_parser(
        "faults", help="a fault-injection campaign: single bit flips against the fault check",
        description="Flip one random flip-flop at a random cycle of a block of a core wrapped "
                    "in FaultDetecting, run that block and the next ones, and count the runs "
                    "detected (alert), harmless and silent (a wrong result released without "
                    "alert). See docs/fault.md.")
    faults.add_arguments(faults_parser)
    faults_parser.set_defaults(func=faults.run)

    listing = commands.add_parser("list", help="list cores, boards and bare devices",
                                  description="List cores, boards and bare devices.")
    listing.set_defaults(func=_cmd_list)
    return parser


def main(argv: list | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            return _run(argv)
        finally:
            # Written out here, so that a reader gone away (cipher-cores list | head) is noticed
            # below, not by the interpreter at exit with a traceback.
            sys.stdout.flush()
    except BrokenPipeError:
        # Nobody reads our output any more: stop quietly, with the status of a command that
        # SIGPIPE ended (as ls | head under pipefail). Python flushes stdout again at exit, so
        # point it at /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13


def _run(argv: list) -> int:
    try:
        parser = make_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        args.argv = argv
        return args.func(args)
    except _Exit as error:
        print(error if str(error).startswith("cipher-cores") else f"cipher-cores: error: {error}",
              file=sys.stderr)
        return error.code
    except KeyboardInterrupt:
        print("cipher-cores: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
