# amaranth: UnusedElaboratable=no
"""The documentation's tables that are generated: from the catalog and from the results page.

A page keeps a generated table between two marker comments that name it::

    <!-- BEGIN generated: cycles aes -->
    ...
    <!-- END generated: cycles aes -->

and :func:`update_text` replaces what lies between them with what the generator makes now. The
names (an optional family, ``aes`` or ``present``, restricts a table to the catalog entries of
that package of :mod:`cipher_cores.cores`):

``cycles [FAMILY]``
    Latency, initiation interval and key-load cycles of every catalog configuration, from each
    core's own properties (:attr:`~cipher_cores.cores.cipher.BlockCipher.latency`, ...), which the
    contract tests check by simulation. Options that change none of the three figures are left
    out; an option that only changes the key load is shown in that column.
``catalog [FAMILY]``
    The catalog entries (name, class, what each is, key sizes) and their constructor options.
``advice``
    Which core for which device: for each need of :data:`NEEDS` and each device measured, the
    row of ``docs/results.json`` that meets it best (fewest LUT4, or highest throughput) among
    the rows that fit the device.

Run from the repository's folder::

    python -m cipher_cores.scripts.flow.doctables           # list the pages whose tables are stale
    python -m cipher_cores.scripts.flow.doctables --write   # rewrite them

``tests/test_docs.py`` fails when a committed table differs from what the generator makes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from cipher_cores.cores.catalog import CipherEntry, catalog


__all__ = ["COMMAND", "RESULTS", "DocTableError", "page_paths", "family_of", "cycles_table",
           "catalog_table", "Measured", "measured_rows", "measured_devices", "Need", "NEEDS",
           "BLOCK_RAM_NAMES", "advice_table", "render", "update_text", "stale_pages", "main"]


#: The command that rewrites the generated tables (named by the test when they are stale).
COMMAND = "python -m cipher_cores.scripts.flow.doctables --write"

#: The results page's data, relative to the repository's folder.
RESULTS = "docs/results.json"

_BEGIN, _END, _CLOSE = "<!-- BEGIN generated: ", "<!-- END generated: ", " -->"


class DocTableError(ValueError):
    """A page's markers are malformed or name no known table."""


def page_paths(root: Path) -> list:
    """The pages that may hold generated tables: ``README.md`` and ``docs/*.md``."""
    root = Path(root)
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def family_of(entry: CipherEntry) -> str:
    """The package of :mod:`cipher_cores.cores` that defines ``entry``'s core (``aes``,
    ``present``); for a core defined elsewhere, its module's name."""
    parts = entry.component.__module__.split(".")
    if parts[:2] == ["cipher_cores", "cores"] and len(parts) > 2:
        return parts[2]
    return parts[-1]


def _entries(family: str | None) -> list:
    entries = [entry for entry in catalog().values()
               if family is None or family_of(entry) == family]
    if not entries:
        families = sorted({family_of(entry) for entry in catalog().values()})
        raise DocTableError(f"no catalog entry in family {family!r}; families: "
                            f"{', '.join(families)}")
    return entries


def _number(value: int) -> str:
    return f"{value:,}"


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


# --- Cycles, from the cores' own figures -------------------------------------------------------

@dataclass(frozen=True)
class _Figures:
    latency: int
    interval: int
    key_load: int


def _entry_figures(entry: CipherEntry) -> dict:
    """``(key_bits, option values in entry.options order)`` to the :class:`_Figures` of that
    configuration, from an instance of its core (constructed, not elaborated)."""
    figures = {}
    for config in entry.configurations():
        # Constructed here, not by ``config.build()``: the cores are never elaborated, and
        # Amaranth's unused-elaboratable warning is silenced by this module's first line only
        # for objects constructed in this module.
        core = config.spec.component(key_bits=config.key_bits, **config.all_options())
        values = tuple(config.all_options()[option.name] for option in entry.options)
        figures[config.key_bits, values] = _Figures(
            core.latency, core.initiation_interval, core.key_load_cycles)
    return figures


def _changes(figures: dict, entry: CipherEntry, index: int, attributes: tuple) -> bool:
    """Whether changing option ``index`` alone ever changes one of ``attributes``."""
    for (key_bits, values), figure in figures.items():
        for choice in entry.options[index].choices:
            other = figures[key_bits, values[:index] + (choice,) + values[index + 1:]]
            if any(getattr(other, name) != getattr(figure, name) for name in attributes):
                return True
    return False


def _option_text(entry: CipherEntry, indices: Iterable[int], values: tuple) -> str:
    option_texts = [f"{entry.options[i].name}={entry.options[i].format(values[i])}"
                    for i in indices]
    return ",".join(option_texts)


def _cycle_rows(entry: CipherEntry) -> list:
    figures = _entry_figures(entry)
    count = len(entry.options)
    row_options = [i for i in range(count)
                   if _changes(figures, entry, i, ("latency", "interval"))]
    load_options = [i for i in range(count) if i not in row_options
                    and _changes(figures, entry, i, ("key_load",))]
    defaults = tuple(option.default for option in entry.options)
    rows = []
    for row_values in itertools.product(*(entry.options[i].choices for i in row_options)):
        base = list(defaults)
        for i, value in zip(row_options, row_values):
            base[i] = value
        cells_by_key = []
        for key_bits in entry.key_bits:
            figure = figures[key_bits, tuple(base)]
            key_load = _number(figure.key_load)
            others = []
            for load_values in itertools.product(
                    *(entry.options[i].choices for i in load_options)):
                variant = list(base)
                for i, value in zip(load_options, load_values):
                    variant[i] = value
                load = figures[key_bits, tuple(variant)].key_load
                if load != figure.key_load:
                    others.append(f"`{_option_text(entry, load_options, tuple(variant))}`: "
                                  f"{_number(load)}")
            if others:
                key_load += f" ({'; '.join(others)})"
            options = _option_text(entry, row_options, tuple(base))
            cells_by_key.append((key_bits, (f"`{options}`" if options else "",
                                            _number(figure.latency), _number(figure.interval),
                                            key_load)))
        # Key sizes with the same figures share a row.
        for cells, group in itertools.groupby(cells_by_key, key=lambda item: item[1]):
            key_sizes = ", ".join(str(key_bits) for key_bits, _ in group)
            rows.append((f"`{entry.name}`", key_sizes, *cells))
    return rows


def cycles_table(family: str | None = None, entries: Iterable[CipherEntry] | None = None) -> str:
    """The cycles table of the catalog entries of ``family`` (all when ``None``), or of
    ``entries``."""
    entries = _entries(family) if entries is None else list(entries)
    rows = [row for entry in entries for row in _cycle_rows(entry)]
    lines = _table(["core", "key bits", "options", "latency (block in to result out)",
                    "blocks every", "key load (key in to first block)"], rows)
    lines += ["", "Clock edges with `output.ready` held high, the same for every key, block and "
              "direction. Options not shown change none of these figures; in brackets, the key "
              "load of another option value. From each core's `latency`, "
              "`initiation_interval` and `key_load_cycles`, which the contract tests check by "
              f"simulation; generated by `{COMMAND}`."]
    return "\n".join(lines)


def catalog_table(family: str | None = None,
                  entries: Iterable[CipherEntry] | None = None) -> str:
    """The catalog entries of ``family`` (all when ``None``), or ``entries``, and their
    options."""
    entries = _entries(family) if entries is None else list(entries)
    lines = _table(["core", "class", "what it is", "key bits", "default key"], [
        (f"`{entry.name}`", f"`{entry.component.__name__}`", entry.description,
         ", ".join(str(bits) for bits in entry.key_bits), str(entry.default_key_bits))
        for entry in entries])
    lines.append("")
    lines += _table(["core", "option", "values", "default", "what it does"], [
        (f"`{entry.name}`", f"`{option.name}`",
         ", ".join(option.format(choice) for choice in option.choices),
         option.format(option.default), option.help)
        for entry in entries for option in entry.options])
    lines += ["", "A configuration is written `CORE-KEYBITS:OPTION=VALUE,...` "
              "(`present-80:decrypt=no`), as `--core` and `report --cores` take it; in Python "
              "each option is a keyword argument of the class. Generated from the catalog by "
              f"`{COMMAND}`."]
    return "\n".join(lines)


# --- Advice, from the results page ------------------------------------------------------------

@dataclass(frozen=True)
class Measured:
    """What the advice table uses of one row of the results page."""
    target: str                 # as the report takes it: "aes-bram-128:decrypt=no"
    kind: str                   # "core", "gcm", "wishbone" or "axi"
    family: str                 # the cipher's package: "aes", "present"
    decrypts: bool
    device: str
    device_family: str          # "ice40", "ecp5"
    fits: bool
    lut4: int
    bram: int
    mbps: float | None
    why_not: str                # the report's reason when it does not fit


def _target(config: dict) -> tuple | None:
    """``(target text, kind, family, decrypts)`` of a row's ``config``; ``None`` for a row the
    catalog does not describe (another project's Verilog core, a removed option)."""
    from .targets import GCM_PRESETS, WRAPPERS, parse_target

    entry = catalog().get(config.get("core"))
    if entry is None or "key_bits" not in config:
        return None
    options = {option.name: config[option.name] for option in entry.options
               if option.name in config}
    try:
        core = entry.config(config["key_bits"], **options)
    except ValueError:
        return None
    wrapper = config.get("wrapper")
    if wrapper is None:
        kind, text = "core", core.text
    elif wrapper in GCM_PRESETS:
        kind, text = "gcm", f"{wrapper}:{core.text}"
    elif wrapper in WRAPPERS:
        kind = "axi" if wrapper.startswith("axi") else "wishbone"
        text = f"{wrapper}:{core.text}"
    else:
        return None
    return text, kind, family_of(entry), parse_target(text).decrypts


def measured_rows(results: dict) -> list:
    """The rows of the results page (``docs/results.json``, as loaded) as :class:`Measured`;
    fields the advice does not use are ignored."""
    measured = []
    for row in results.get("rows", []):
        target = _target(row.get("config", {}))
        if target is None or row.get("reset", "none") != "none":
            # A row measured with the core's reset kept sits beside its plain row on the
            # results page; the advice compares the plain rows.
            continue
        fits = bool(row.get("fit")) and row.get("throughput_median_mbps") is not None
        measured.append(Measured(*target, device=row["device"],
                                 device_family=row.get("family", ""), fits=fits,
                                 lut4=row.get("lut4") or 0, bram=row.get("bram") or 0,
                                 mbps=row.get("throughput_median_mbps"),
                                 why_not=row.get("fit_reason", "")))
    return measured


@dataclass(frozen=True)
class Need:
    """A row of the advice table: which rows may serve it, and what makes one the best.

    ``both_directions`` admits only cores that decrypt (a core that decrypts also serves a need
    for encryption only); ``block_ram`` false admits only cores that use none; ``fastest`` picks
    the highest throughput (else the fewest LUT4, then the fewest block RAMs)."""
    text: str
    family: str
    kind: str = "core"
    both_directions: bool = False
    block_ram: bool = True
    fastest: bool = False

    def admits(self, row: Measured) -> bool:
        return (row.kind == self.kind and row.family == self.family and
                (row.decrypts or not self.both_directions) and
                (self.block_ram or row.bram == 0))

    def best(self, rows: Iterable[Measured]) -> Measured | None:
        """The best of ``rows`` that fit, or ``None``."""
        fitting = [row for row in rows if row.fits and self.admits(row)]
        if self.fastest:
            return min(fitting, key=lambda r: (-r.mbps, r.lut4, r.bram, r.target), default=None)
        return min(fitting, key=lambda r: (r.lut4, r.bram, -r.mbps, r.target), default=None)


NEEDS = (
    Need("AES, both directions, fewest LUT4", "aes", both_directions=True),
    Need("AES, both directions, fastest", "aes", both_directions=True, fastest=True),
    Need("AES, encryption only (CTR, CFB, OFB, GCM), fewest LUT4", "aes"),
    Need("AES, fastest", "aes", fastest=True),
    Need("AES without block RAM, fewest LUT4", "aes", block_ram=False),
    Need("PRESENT, both directions, fewest LUT4", "present", both_directions=True),
    Need("PRESENT, both directions, without block RAM, fewest LUT4", "present",
         both_directions=True, block_ram=False),
    Need("PRESENT, both directions, fastest", "present", both_directions=True, fastest=True),
    Need("PRESENT, encryption only (CTR, CFB, OFB), fewest LUT4", "present"),
    Need("PRESENT, fastest", "present", fastest=True),
    Need("AES-GCM, fewest LUT4", "aes", kind="gcm"),
    Need("AES-GCM, fastest", "aes", kind="gcm", fastest=True),
    Need("Wishbone peripheral with AES, fewest LUT4", "aes", kind="wishbone"),
    Need("Wishbone peripheral with AES, fastest", "aes", kind="wishbone", fastest=True),
    Need("Wishbone peripheral with PRESENT, fewest LUT4", "present", kind="wishbone"),
)

#: What the advice table calls a block RAM, by device family.
BLOCK_RAM_NAMES = {"ice40": "BRAM", "ecp5": "DP16KD"}


def _speed(mbps: float) -> str:
    if mbps >= 10_000:
        return f"{mbps / 1000:.1f} Gb/s"
    if mbps >= 100:
        return f"{mbps:,.0f} Mb/s"
    return f"{mbps:.1f} Mb/s"


def _cells(row: Measured) -> str:
    text = f"{_number(row.lut4)} LUT4"
    if row.bram:
        text += f" + {row.bram} {BLOCK_RAM_NAMES.get(row.device_family, 'block RAM')}"
    return text


def _advice_cell(need: Need, rows: list) -> str:
    best = need.best(rows)
    if best is not None:
        return f"`{best.target}`: {_cells(best)}, {_speed(best.mbps)}"
    tried = [row for row in rows if need.admits(row)]
    if not tried:
        return "–"
    smallest = min(tried, key=lambda r: (r.lut4, r.target))
    return f"none fits (`{smallest.target}`: {_cells(smallest)}; {smallest.why_not})"


def measured_devices(rows: list) -> list:
    """The devices of ``rows`` (:class:`Measured`): the bare devices in their usual order, then any
    other."""
    from cipher_cores.platforms.devices import DEVICES
    seen = list(dict.fromkeys(row.device for row in rows))
    return [name for name in DEVICES if name in seen] + [n for n in seen if n not in DEVICES]


def _device_title(name: str) -> str:
    from cipher_cores.platforms.devices import DEVICES
    device = DEVICES.get(name)
    return device.title.partition(" (")[0] if device is not None else name


def advice_table(results: dict, needs: Iterable[Need] = NEEDS) -> str:
    """Which core for which device, from ``results`` (``docs/results.json`` as loaded)."""
    rows = measured_rows(results)
    devices = measured_devices(rows)
    lines = _table(["need", *map(_device_title, devices)], [
        (need.text, *(_advice_cell(need, [row for row in rows if row.device == device])
                      for device in devices))
        for need in needs])
    lines += ["", "Each cell: the measured configuration that best meets the need on that "
              "device among those that fit it, with the core's own LUT4 and block RAMs (BRAM: "
              "iCE40 `SB_RAM40_4K`; DP16KD: ECP5) and its throughput at the median Fmax of its "
              "placement seeds. A core that decrypts also serves encryption only. \"–\": none "
              "measured on that device. From `docs/results.json` (the results page names the "
              f"sweep behind each row); generated by `{COMMAND}`."]
    return "\n".join(lines)


# --- Pages ------------------------------------------------------------------------------------

def render(name: str, results: dict) -> str:
    """The table a marker ``name`` (``cycles aes``, ``advice``) stands for."""
    words = name.split()
    kind, arguments = (words[0], words[1:]) if words else ("", [])
    if kind in ("cycles", "catalog") and len(arguments) <= 1:
        family = arguments[0] if arguments else None
        return cycles_table(family) if kind == "cycles" else catalog_table(family)
    if kind == "advice" and not arguments:
        return advice_table(results)
    raise DocTableError(f"unknown generated table {name!r}; known: cycles [FAMILY], "
                        f"catalog [FAMILY], advice")


def update_text(text: str, results: dict, *, where: str = "the page") -> str:
    """``text`` with every generated table replaced by what the generator makes now. Markers in
    fenced code blocks are text, not markers (a page may show how to write one).

    Raises :exc:`DocTableError` (naming ``where`` and the line) for a BEGIN marker with no END
    marker of the same name, an END marker with no BEGIN, or an unknown table."""
    lines = text.splitlines(keepends=True)
    out, index, fence = [], 0, None
    while index < len(lines):
        line = lines[index]
        out.append(line)
        index += 1
        stripped = line.strip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith(_END):
            raise DocTableError(f"{where}, line {index}: END marker without a BEGIN marker")
        if not (stripped.startswith(_BEGIN) and stripped.endswith(_CLOSE)):
            continue
        name = stripped[len(_BEGIN):-len(_CLOSE)].strip()
        end = f"{_END}{name}{_CLOSE}"
        begin_line = index
        while index < len(lines) and lines[index].strip() != end:
            if lines[index].strip().startswith((_BEGIN, _END)):
                break
            index += 1
        if index == len(lines) or lines[index].strip() != end:
            raise DocTableError(f"{where}, line {begin_line}: no {end!r} after "
                                f"BEGIN marker {name!r}")
        try:
            table = render(name, results)
        except DocTableError as error:
            raise DocTableError(f"{where}, line {begin_line}: {error}") from None
        out.append("\n" + table + "\n\n")
        out.append(lines[index])
        index += 1
    return "".join(out)


def _load_results(root: Path) -> dict:
    path = Path(root) / RESULTS
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise DocTableError(f"no {RESULTS} under {str(root)!r}: run from the repository's "
                            f"folder or give --root") from None
    except json.JSONDecodeError as error:
        raise DocTableError(f"{RESULTS} is not JSON: {error}") from None


def stale_pages(root: Path) -> dict:
    """The pages under ``root`` whose generated tables differ from what the generator makes now:
    path to the page's new text."""
    root = Path(root)
    results = _load_results(root)
    stale = {}
    for path in page_paths(root):
        if not path.exists():
            continue
        text = path.read_text()
        new = update_text(text, results, where=str(path.relative_to(root)))
        if new != text:
            stale[path] = new
    return stale


def main(argv=None) -> int:
    """``python -m cipher_cores.scripts.flow.doctables [--write] [--root DIR]``: exit 0 when
    every generated table is current (or was rewritten), 1 when some are stale, 2 on an error."""
    parser = argparse.ArgumentParser(
        prog="python -m cipher_cores.scripts.flow.doctables",
        description="Check (or with --write rewrite) the tables of README.md and docs/*.md "
                    "generated from the catalog and docs/results.json: the text between "
                    "'<!-- BEGIN generated: NAME -->' and '<!-- END generated: NAME -->'.")
    parser.add_argument("--write", action="store_true",
                        help="rewrite the stale tables (default: only name the pages that hold "
                             "them and exit 1)")
    parser.add_argument("--root", metavar="DIR", default=".",
                        help="the repository's folder (default: the current folder)")
    args = parser.parse_args(argv)
    root = Path(args.root)
    try:
        stale = stale_pages(root)
    except (DocTableError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    names = ", ".join(str(path.relative_to(root)) for path in stale)
    if not stale:
        print("generated tables are current")
        return 0
    if args.write:
        for path, text in stale.items():
            path.write_text(text)
        print(f"rewrote the generated tables of {names}")
        return 0
    print(f"stale generated tables in {names}: run {COMMAND}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
