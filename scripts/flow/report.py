"""The utilization report: cells, Fmax, cycles and throughput of each core on each device, beside
the figures of the two seed papers.

:func:`run_report` measures (cycles by simulation, cells and Fmax by synthesis and
place-and-route) on any :class:`concurrent.futures.Executor`, :func:`assemble` turns the
:class:`~cipher_cores.scripts.flow.build.DeviceMeasurement` and :class:`~cipher_cores.scripts.flow.measure.CycleFigures`
results into rows with the derived figures, and :func:`markdown_report`, :func:`text_table` and
:func:`plot_report` present them. The JSON written by ``cipher-cores report --json`` is the dict
:func:`assemble` returns.

Derived figures, for each core configuration and device:

* throughput (Mb/s) = block_bits * Fmax (MHz) / cycles per block, for the median and the best
  Fmax over the placement seeds;
* Mb/s per kLUT = throughput / (LUT4 / 1000);
* slice equivalents = ceil(max(LUT4, FF) / 2): the Spartan-3 / Virtex-II slices (two LUT4s and two
  flip-flops each) the core would need if its LUTs and flip-flops packed perfectly; a lower bound,
  since real packing leaves halves of slices empty, and block RAM is not counted (as in the
  papers, whose slice counts leave out block RAM too).
"""

from __future__ import annotations

import datetime
import json
import math
import re
import statistics
import sys
import time
from concurrent.futures import Executor

from .revision import source_revision


__all__ = ["papers_for", "default_configs", "derive_row", "assemble", "run_report",
           "update_plan", "merge_reports", "pareto_front", "fronts", "markdown_report",
           "text_table", "plot_report"]


#: What ``cipher-cores report`` measures by default.
def default_configs() -> list:
    """What ``cipher-cores report`` measures by default: each catalog entry's choice."""
    from cipher_cores.cores.catalog import catalog
    return [text for entry in catalog().values() for text in entry.report_defaults]


def _round(value, digits=1):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else round(value, digits)


def derive_row(measurement, cycles) -> dict:
    """One report row (as the JSON records it) from a
    :class:`~cipher_cores.scripts.flow.build.DeviceMeasurement` and the configuration's
    :class:`~cipher_cores.scripts.flow.measure.CycleFigures` (or ``None``)."""
    from .measure import slice_equivalent

    def cells(value):
        return None if value is None else value.to_dict()

    m = measurement
    row = {"label": m.label, "target": m.target, "digest": m.digest, "reset": m.reset,
           "config": m.config,
           "device": m.device, "family": m.family,
           "block_bits": m.block_bits, "fit": m.fit, "fit_reason": m.fit_reason,
           "seeds": list(m.seeds), "core_cells": cells(m.core_cells),
           "harness_cells": cells(m.harness_cells), "design_cells": cells(m.design_cells),
           "design_utilization": m.design_utilization, "build_dir": m.build_dir,
           "elapsed_s": m.elapsed_s}
    row["fmax_mhz_seeds"] = [_round(f, 2) for f in m.fmax_mhz]
    core = m.core_cells
    lut4, ff = (core.lut4, core.ff) if core is not None else (None, None)
    row.update(lut4=lut4, ff=ff, carry=core.carry if core else None,
               bram=core.bram if core else None)
    row["slices"] = slice_equivalent(lut4, ff) if lut4 is not None else None
    frequencies = [f for f in m.fmax_mhz if f is not None]
    row["fmax_median_mhz"] = _round(statistics.median(frequencies), 2) if frequencies else None
    row["fmax_best_mhz"] = _round(max(frequencies), 2) if frequencies else None
    row["cycles"] = cycles.to_dict() if cycles is not None else None
    cpb = cycles.cycles_per_block if cycles is not None else None
    row["cycles_per_block"] = cpb
    row["latency"] = cycles.latency if cycles is not None else None
    for which in ("median", "best"):
        fmax = row[f"fmax_{which}_mhz"]
        if fmax is None or not cpb:
            row[f"throughput_{which}_mbps"] = None
            continue
        row[f"throughput_{which}_mbps"] = _round(m.block_bits * fmax / cpb, 1)
    throughput = row["throughput_median_mbps"]
    row["mbps_per_klut"] = _round(throughput / (lut4 / 1000), 1) if throughput and lut4 else None
    row["kbps_per_slice"] = (_round(1000 * throughput / row["slices"], 0)
                             if throughput and row["slices"] else None)
    return row


def papers_for(configs) -> list:
    """The papers' figures (as dicts) for the ciphers and key sizes of ``configs``, each once."""
    papers = {}
    for config in configs:
        for paper in config.papers():
            papers.setdefault(paper.label, paper.to_dict())
    return list(papers.values())


def assemble(measurements: list, cycles: dict, *, papers=(), command: str = "",
             tool_versions=None, seeds=(), elapsed_s: float | None = None, errors=(),
             source: str = "") -> dict:
    """The report, as ``cipher-cores report --json`` writes it: rows (see :func:`derive_row`) of
    the :class:`~cipher_cores.scripts.flow.build.DeviceMeasurement` list ``measurements``, the papers' figures
    (dicts, see :func:`papers_for`), and how it was made.

    ``cycles`` maps a configuration label to its :class:`~cipher_cores.scripts.flow.measure.CycleFigures`."""
    rows = [derive_row(m, cycles.get(m.label)) for m in measurements]
    for row in rows:
        # Each row says what measured it, so that it can be checked on its own.
        row["measured_at"] = source
        row["tool_versions"] = dict(tool_versions or {})
    return {
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "source": source,
        "seeds": list(seeds),
        "tool_versions": tool_versions or {},
        "elapsed_s": _round(elapsed_s, 0),
        "method": {
            "cells": "core cells counted by hierarchy (Yosys keep_hierarchy on the core, stat "
                     "after synthesis); the measurement harness is excluded",
            "fmax": "nextpnr post-route Fmax of the whole harnessed design; median and best "
                    "over the seeds",
            "cycles": "measured by simulating the core with cipher_cores.cores.sim.simulate_cipher, "
                      "blocks offered back to back (encryption); for a core in the Wishbone "
                      "peripheral, through the bus as firmware sees it (cipher_cores.cores.bus.sim."
                      "stream_message: one access per word, STATUS polled, a CTR message "
                      "streamed)",
            "throughput": "block_bits * Fmax / cycles_per_block",
            "slices": "ceil(max(LUT4, FF) / 2), a perfect-packing lower bound; block RAM "
                      "not counted",
        },
        "cycles": {label: figures.to_dict() for label, figures in cycles.items()},
        "rows": rows,
        "papers": list(papers),
        "errors": list(errors),
    }


def run_report(configs: list, devices: list, *, seeds=(1, 2, 3), jobs: int = 1,
               executor: Executor | None = None, root="build/report", progress=None,
               command: str = "", pairs: list | None = None, reset: str = "none") -> dict:
    """Measure every configuration (:class:`~cipher_cores.cores.catalog.CoreConfig`) on every device
    (a class of :mod:`cipher_cores.platforms.devices`) and :func:`assemble` the report; or, given
    ``pairs`` (``(configuration, device)`` tuples), just those. ``reset`` says how the core's
    reset is treated (:data:`~cipher_cores.scripts.flow.digest.RESETS`).

    The simulations (one per configuration) and the builds (one per configuration and device,
    each placed with every seed) run on ``executor``: any :class:`concurrent.futures.Executor`,
    such as a Dask cluster's; by default this process for ``jobs == 1`` and ``jobs`` local worker
    processes otherwise (:func:`~cipher_cores.scripts.flow.jobs.local_executor`). A build that fails is listed
    under ``errors`` and left out of the rows."""
    from . import jobs as flow_jobs
    from .progress import Progress
    from .toolchain import tool_versions

    progress = progress or Progress(enabled=False)
    started = time.monotonic()
    # The sources as the builds read them: the tree can change while a long sweep runs.
    source = source_revision()
    own_executor = executor is None
    if own_executor:
        executor = flow_jobs.local_executor(jobs)
    sink, relay = flow_jobs.progress_for(executor, progress)
    finished = False
    try:
        cycle_futures = {}
        for config in configs:
            progress.update(config.label, "simulating cycles")
            cycle_futures[config.label] = executor.submit(flow_jobs.run_cycles_job, config.text)
        if pairs is None:
            pairs = [(config, device) for config in configs for device in devices]
        futures = []
        for config, device in pairs:
            job = flow_jobs.MeasureJob(config.text, device.name, tuple(seeds), str(root), reset)
            key = f"{config.label} @ {device.name}"
            if sink is None:
                progress.update(key, "submitted")
            futures.append(executor.submit(flow_jobs.run_measure_job, job, sink))
        cycles = {}
        errors = []
        for config in configs:
            try:
                figures = cycle_futures[config.label].result()
            except Exception as error:
                errors.append(f"{config.label}: simulation failed: {error}")
                progress.update(config.label, "simulation FAILED", done=True)
                continue
            cycles[config.label] = figures
            state = ("declared by its description, not simulated"
                     if figures.through == "declared" else
                     "verified" if figures.verified else "WRONG RESULTS vs reference")
            progress.update(config.label, f"{figures.cycles_per_block:g} cycles/block, latency "
                                          f"{figures.latency}, {state}", done=True)
        measurements = []
        for (config, device), future in zip(pairs, futures):
            key = f"{config.label} @ {device.name}"
            try:
                measurement = future.result()
            except Exception as error:
                errors.append(f"{key}: {error}")
                if sink is None:
                    progress.update(key, "FAILED", done=True)
                continue
            measurements.append(measurement)
            if sink is None:
                state = ("done" if measurement.fit else
                         f"does not fit: {measurement.fit_reason}")
                progress.update(key, state, done=True)
        finished = True
    finally:
        if own_executor:
            # Interrupted (Ctrl-C): drop the queued jobs rather than wait for them.
            executor.shutdown(wait=finished, cancel_futures=not finished)
        if relay is not None:
            relay.close()
    return assemble(measurements, cycles, papers=papers_for(configs), command=command,
                    tool_versions=tool_versions(),
                    seeds=seeds, elapsed_s=time.monotonic() - started, errors=errors,
                    source=source)


#: What a sweep contributes to a merged report (see :func:`merge_reports`).
_SWEEP_KEYS = ("generated", "command", "source", "seeds", "tool_versions", "elapsed_s")


def update_plan(page: dict, *, digest=None) -> list:
    """What ``cipher-cores report --update`` measures again: the ``(target text, device name,
    reset, reason)`` of each row of ``page`` that
    :func:`~cipher_cores.scripts.flow.digest.stale_rows` finds stale."""
    from .digest import stale_rows
    return [(row.get("target") or row["label"], row["device"], row.get("reset", "none"), reason)
            for row, reason in stale_rows(page, digest=digest)]


def _sweeps_of(report: dict) -> list:
    """The sweeps a report was made from: its own ``sweeps`` if it was merged, else itself."""
    if report.get("sweeps"):
        return [dict(sweep) for sweep in report["sweeps"]]
    return [{key: report.get(key) for key in _SWEEP_KEYS}]


def merge_reports(reports: list, *, command: str = "") -> dict:
    """One report from several (as :func:`assemble` makes them, e.g. read back from their
    ``--json`` files), so that one page can show sweeps run at different times: a core that
    changed is measured again without measuring the rest again.

    A later report's row replaces an earlier one for the same core label and device (in place),
    and its cycle figures replace the earlier ones of that label; every row says which sweep
    measured it (``sweep``: an index into ``sweeps``, each with its command, sources, seeds,
    tools and time). ``command`` is how the merge itself was made."""
    rows, cycles, papers, errors, sweeps = {}, {}, {}, [], []
    for report in reports:
        first = len(sweeps)
        sweeps += _sweeps_of(report)
        for row in report["rows"]:
            row = dict(row)
            row["sweep"] = first + row.get("sweep", 0)
            sweep = sweeps[row["sweep"]]
            row.setdefault("measured_at", sweep.get("source") or "")
            row.setdefault("tool_versions", dict(sweep.get("tool_versions") or {}))
            rows[(row["label"], row["device"], row.get("reset", "none"))] = row
        for label, figures in report.get("cycles", {}).items():
            cycles[label] = dict(figures, sweep=first + figures.get("sweep", 0))
        for paper in report.get("papers", []):
            papers.setdefault(paper["label"], paper)
        errors += report.get("errors", [])
    merged = {
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "sweeps": sweeps,
        "method": reports[-1].get("method", {}) if reports else {},
        "cycles": cycles,
        "rows": list(rows.values()),
        "papers": list(papers.values()),
        "errors": errors,
    }
    versions = {json.dumps(sweep.get("tool_versions"), sort_keys=True) for sweep in sweeps}
    if len(versions) == 1:
        merged["tool_versions"] = sweeps[0].get("tool_versions") or {}
    return merged


# --- presentation -----------------------------------------------------------------------------

def _fmt(value, spec="") -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and spec == "":
        return f"{value:g}"
    return format(value, spec)


_COLUMNS = [
    ("core", lambda r: r["label"]),
    ("device", lambda r: r["device"]),
    ("LUT4", lambda r: _fmt(r["lut4"], ",")),
    ("FF", lambda r: _fmt(r["ff"], ",")),
    ("carry", lambda r: _fmt(r["carry"])),
    ("BRAM", lambda r: _fmt(r["bram"])),
    ("≈slices", lambda r: _fmt(r["slices"], ",")),
    ("fit", lambda r: "yes" if r["fit"] else ("no" if r["fit"] is False else "–")),
    ("Fmax MHz median (best)", lambda r: (f"{r['fmax_median_mhz']:.1f} ({r['fmax_best_mhz']:.1f})"
                                         if r["fmax_median_mhz"] is not None else "–")),
    ("cycles/block", lambda r: _fmt(r["cycles_per_block"])),
    ("latency", lambda r: _fmt(r["latency"])),
    ("Mb/s median (best)", lambda r: (f"{r['throughput_median_mbps']:,.1f} "
                                      f"({r['throughput_best_mbps']:,.1f})"
                                      if r["throughput_median_mbps"] is not None else "–")),
    ("Mb/s per kLUT", lambda r: _fmt(r["mbps_per_klut"], ",.1f")),
    ("kb/s per slice", lambda r: _fmt(r["kbps_per_slice"], ",.0f")),
]


def _paper_cells(paper: dict) -> list:
    return [paper["label"], paper["device"], "–", "–", "–", "–", f"{paper['slices']:,}", "–",
            _fmt(paper["fmax_mhz"]), _fmt(paper["cycles_per_block"]), _fmt(paper["latency"]),
            f"{paper['throughput_mbps']:,.2f}", "–", f"{paper['kbps_per_slice']:,.0f}"]


def _reset_kept(row: dict) -> bool:
    return row.get("reset", "none") == "kept"


def _table_rows(report: dict, papers: bool = True) -> tuple:
    header = [name for name, _ in _COLUMNS]
    body = [[get(row) for _, get in _COLUMNS] for row in report["rows"] if not _reset_kept(row)]
    if papers:
        body += [_paper_cells(paper) for paper in report["papers"]]
    return header, body


def text_table(report: dict, *, papers: bool = True) -> str:
    """The report as an aligned plain-text table (for the terminal)."""
    header, body = _table_rows(report, papers)
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *body)]
    lines = ["  ".join(str(cell).rjust(width) if index > 1 else str(cell).ljust(width)
                       for index, (cell, width) in enumerate(zip(line, widths)))
             for line in [header, *body]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def _markdown_table(header, body) -> str:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(" --- " if i < 2 else " ---: " for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in body]
    return "\n".join(lines)


def _cipher_of(config: dict) -> tuple | None:
    """``("aes", 128)`` for a plain core's configuration; ``None`` for a core in a wrapper."""
    if config.get("wrapper"):
        return None
    return config["core"].partition("-")[0], config["key_bits"]


def _paper_cipher(paper: dict) -> tuple:
    name, _, bits = paper["compares_with"].partition("-")
    return name.lower(), int(bits)


def pareto_front(rows: list) -> list:
    """The rows no other row beats on both area and speed: none has as few slice equivalents
    and as much throughput (median Fmax), with one of the two strictly better. Sorted by area."""
    points = [row for row in rows if row.get("throughput_median_mbps") and row.get("slices")]
    front = [row for row in points
             if not any(other["slices"] <= row["slices"] and
                        other["throughput_median_mbps"] >= row["throughput_median_mbps"] and
                        (other["slices"] < row["slices"] or
                         other["throughput_median_mbps"] > row["throughput_median_mbps"])
                        for other in points)]
    return sorted(front, key=lambda row: (row["slices"], row["throughput_median_mbps"]))


def fronts(report: dict) -> dict:
    """For each paper (by label) and device, :func:`pareto_front` of the plain cores of the
    paper's cipher and key size measured on that device."""
    devices = list(dict.fromkeys(row["device"] for row in report["rows"]))
    result = {}
    for paper in report["papers"]:
        cipher = _paper_cipher(paper)
        for device in devices:
            rows = [row for row in report["rows"]
                    if row["device"] == device and _cipher_of(row["config"]) == cipher and
                    not _reset_kept(row)]
            front = pareto_front(rows)
            if front:
                result.setdefault(paper["label"], {})[device] = front
    return result


def _comparison_lines(report: dict) -> list:
    """Each paper beside the best cores of its cipher and key size on each device: the Pareto
    front of area against throughput, each core of it named."""
    papers = {paper["label"]: paper for paper in report["papers"]}
    found = fronts(report)
    if not found:
        return []
    out = ["## Beside the papers", "",
           "For each paper and device, the cores of the paper's cipher and key size that no "
           "other core beats on both area and speed (the Pareto front: none is smaller and "
           "faster), smallest first. A core **in the paper's own area** has no more slice "
           "equivalents than the paper's slices and at least its throughput.", ""]
    for label, by_device in found.items():
        paper = papers[label]
        out += [f"### {paper['compares_with']}: {paper['slices']:,} slices, "
                f"{paper['throughput_mbps']:,.2f} Mb/s on {paper['device']} "
                f"({paper['kbps_per_slice']:,.0f} kb/s per slice)", ""]
        body = []
        for device, front in by_device.items():
            for row in front:
                beats = (row["slices"] <= paper["slices"] and
                         row["throughput_median_mbps"] >= paper["throughput_mbps"])
                body.append([
                    device, row["label"], f"{row['slices']:,}",
                    f"{row['slices'] / paper['slices']:.2f}×",
                    f"{row['throughput_median_mbps']:,.1f}",
                    f"{100 * row['throughput_median_mbps'] / paper['throughput_mbps']:.0f} %",
                    _fmt(row["kbps_per_slice"], ",.0f"),
                    "**yes**" if beats else "no"])
        out += [_markdown_table(["device", "core", "≈slices", "× paper's slices", "Mb/s",
                                 "% of paper's Mb/s", "kb/s per slice",
                                 "in the paper's own area"], body), ""]
    return out


#: How the cycles of a core in the Wishbone peripheral are measured (for the page).
_BUS_CYCLES = ("Wishbone and AXI4-Lite rows are measured through the bus, as firmware sees them "
               "(`cipher_cores.cores.bus.sim.stream_message`): one access at a time (2 edges per 32-bit "
               "word), `STATUS` polled before each block; cycles/block is the steady interval "
               "between results of a long CTR message (decrypt: ECB), latency from a lone "
               "block's last word written to its result's last word read, and the key load is "
               "counted from the `START` write to the first block entering the core.")


#: How the cycles of a peripheral with its DMA master are measured (for the page).
_DMA_CYCLES = ("Wishbone+DMA rows are measured with the DMA moving the message "
               "(`cipher_cores.cores.bus.sim.dma_message`) through a simulated memory that ends "
               "each access on the edge its strobe is seen: cycles/block is the steady interval "
               "between results written (CTR; decrypt: ECB), latency from a lone block's "
               "`START` write to its result's last word written.")


#: How AES-GCM's cycles are measured (for the page).
_GCM_CYCLES = ("GCM rows are measured on whole messages (`cipher_cores.cores.gcm.sim.simulate_gcm`: a key, "
               "then a 12-byte IV, two AAD blocks and eight text blocks, encrypted and then "
               "decrypted, checked against `cipher_cores.cores.gcm.reference`): cycles/block is the steady "
               "interval between text results, latency from the last text block in to the tag "
               "out, and the key load counts the key expansion, H = E_K(0) and the GHASH table "
               "fill.")


#: How the cycles of another project's core come to the page.
_DECLARED_CYCLES = ("Rows of another project's Verilog core (`--cores verilog:FILE.toml`) are "
                    "measured on the same harness, devices and seeds, but their cycle counts are "
                    "those their description declares: the report cannot drive a protocol it "
                    "does not know.")


def _verified_cell(cycles: dict) -> str:
    if cycles.get("through") == "declared":
        return "declared, not simulated"
    return "yes" if cycles["verified"] else "NO"


def _cycle_lines(report: dict) -> list:
    cycles = report.get("cycles") or {}
    if not cycles:
        return []
    header = ["core", "cycles/block encrypt", "cycles/block decrypt", "latency encrypt",
              "latency decrypt", "key load to first block", "matches reference"]
    body = [[label, _fmt(c["cycles_per_block"]), _fmt(c["cycles_per_block_decrypt"]),
             _fmt(c["latency"]), _fmt(c["latency_decrypt"]), _fmt(c["key_to_input"]),
             _verified_cell(c)] for label, c in cycles.items()]
    return ["## Cycles, measured in simulation", "",
            "Clock edges, blocks offered back to back with the output always ready "
            "(`cipher_cores.cores.sim.simulate_cipher`); results checked against the reference model."
            + (" " + _BUS_CYCLES if any(c.get("through") in ("wishbone", "axi4-lite")
                                        for c in cycles.values()) else "")
            + (" " + _DMA_CYCLES if any(c.get("through") == "dma" for c in cycles.values())
               else "")
            + (" " + _GCM_CYCLES if any(c.get("through") == "gcm" for c in cycles.values())
               else "")
            + (" " + _DECLARED_CYCLES
               if any(c.get("through") == "declared" for c in cycles.values()) else ""), "",
            _markdown_table(header, body), ""]


def _tool_version(version: str) -> str:
    """A tool's version line without the path of the compiler that built it (the build
    machine's, not ours: Yosys prints it)."""
    return re.sub(r", Clang [^)]*", "", str(version))


def _reproduce_command(rows: list, sweep: dict) -> str:
    """The project's own command that measures ``rows`` again (no machine's paths)."""
    targets = list(dict.fromkeys(row.get("target") or row["label"] for row in rows))
    devices = list(dict.fromkeys(row["device"] for row in rows))
    seeds = len(sweep.get("seeds") or rows[0].get("seeds") or [1])
    return (f"cipher-cores report --cores {' '.join(targets)} --devices {' '.join(devices)} "
            f"--seeds {seeds}" + (" --reset kept" if all(map(_reset_kept, rows)) else ""))


def _reset_lines(report: dict) -> list:
    """The rows measured with the core's reset kept, each beside its row without."""
    plain = {(row["label"], row["device"]): row for row in report["rows"]
             if not _reset_kept(row)}
    body = []
    for kept in report["rows"]:
        row = plain.get((kept["label"], kept["device"]))
        if not _reset_kept(kept) or row is None:
            continue

        def change(name):
            if row[name] is None or kept[name] is None:
                return "–"
            return (f"{_fmt(row[name], ',')} → {_fmt(kept[name], ',')}"
                    + (f" ({100 * (kept[name] - row[name]) / row[name]:+.0f} %)"
                       if row[name] else ""))
        body.append([kept["label"], kept["device"], change("lut4"), change("ff"),
                     change("fmax_median_mhz")])
    if not body:
        return []
    return ["## With the core's reset kept", "",
            "The table above measures every core with no reset reaching it (see *Reset* under "
            "[How to read the table](#how-to-read-the-table)). These rows measure the same cores "
            "again with a harness flip-flop driving the core's synchronous reset "
            "(`cipher-cores report --reset kept`), as a design that resets the core while it runs "
            "does: the cost of the reset logic, core cells and Fmax median, without → with.", "",
            _markdown_table(["core", "device", "LUT4", "FF", "Fmax MHz median"], body), ""]


def _provenance_lines(report: dict) -> list:
    if not any(row.get("digest") for row in report["rows"]):
        return []
    body = [[row["label"] + (" (reset kept)" if _reset_kept(row) else ""), row["device"],
             f"`{row.get('measured_at') or '–'}`",
             f"`{row.get('digest') or '–'}`"
             + (" (computed afterwards at that commit)" if row.get("digest_source") else "")]
            for row in report["rows"]]
    return ["## Provenance", "",
            "The commit each row was measured at and the digest of the design it measured "
            "(`cipher_cores.scripts.flow.digest`: the harnessed core as handed to Yosys for that "
            "device, Amaranth's RTLIL without source-line attributes). A row is current when "
            "the sources at HEAD make the same digest; the default test run checks every row.",
            "", _markdown_table(["core", "device", "measured at", "digest"], body), ""]


def markdown_report(report: dict, *, plot: str | None = None) -> str:
    """The report as a Markdown page (``docs/results.md``)."""
    from .progress import format_duration

    header, body = _table_rows(report)
    versions = report.get("tool_versions")

    def made(sweep) -> str:
        return (f"Generated {sweep.get('generated') or ''}"
                + (f"; the sweep took {format_duration(sweep['elapsed_s'])} on a 2-core machine"
                   if sweep.get("elapsed_s") else "")
                + f"; placement seeds {', '.join(map(str, sweep.get('seeds') or []))}"
                + (f"; sources at commit `{sweep['source']}`" if sweep.get("source") else "")
                + ".")
    out = ["# Results: area, Fmax and throughput beside the papers", ""]
    if report.get("sweeps"):
        used = [index for index in range(len(report["sweeps"]))
                if any(row.get("sweep") == index for row in report["rows"])]
        out += ["Generated by `cipher-cores report`; do not edit by hand. Every row records the "
                "digest of the design it measured and the commit and tools that measured it "
                "(see [Provenance](#provenance)); `tests/test_results_current.py`, in the "
                "default test run, computes each digest again from the sources and fails on any "
                "row whose design changed. To measure those rows again and rewrite this page:",
                "", "```sh", "cipher-cores report --update docs/results.json", "```", "",
                f"The rows come from {len(used)} sweep{'s' if len(used) != 1 else ''}; each "
                f"can be measured again on its own with:", ""]
        for number, index in enumerate(used, 1):
            sweep = report["sweeps"][index]
            rows = [row for row in report["rows"] if row.get("sweep") == index]
            labels = list(dict.fromkeys(row["label"] for row in rows))
            out += [f"{number}. Rows of {', '.join(labels)}:", "", "   ```sh",
                    f"   {_reproduce_command(rows, sweep)}", "   ```", "", f"   {made(sweep)}", ""]
    else:
        out += ["Generated by `cipher-cores report`; do not edit by hand. Regenerate with:", "",
                "```sh", report.get("command") or "cipher-cores report", "```", "",
                made(report), ""]
    out += [_markdown_table(header, body), ""]
    if plot:
        out += [f"![Area against throughput]({plot})", ""]
    out += _comparison_lines(report)
    out += _reset_lines(report)
    out += _cycle_lines(report)
    if report.get("soc"):
        from .soc import soc_markdown
        out += [soc_markdown(report["soc"])]
    out += [
        "## How to read the table",
        "",
        "* **LUT4, FF, carry, BRAM**: the core's own cells after synthesis, counted by hierarchy "
        "(Yosys keeps the core as its own module; the measurement harness around it is left out). "
        "On ECP5, LUT4 includes the two LUT4s inside each `CCU2C` carry cell. iCE40 BRAM is "
        "`SB_RAM40_4K` (4 kbit), ECP5 BRAM is `DP16KD` (18 kbit).",
        "* **Reset**: both families are measured alike, with no reset reaching the core: the bare "
        "device's clock domain has none, so every flip-flop starts from its reset value at "
        "configuration (through GSR on ECP5, as initial values on iCE40) and the core's "
        "synchronous reset logic is not in its figures. A design that resets the core while it "
        "runs pays for that logic on top: the rows measured with the reset kept, where the page "
        "has them, show how much.",
        "* **fit**: whether the whole harnessed design fits the device (checked before "
        "place-and-route and by nextpnr).",
        "* **Fmax**: nextpnr's post-route maximum frequency of the design, median and best over "
        "the placement seeds.",
        "* **cycles/block, latency**: measured by simulating the core (`cipher_cores.cores.sim`), with blocks "
        "offered back to back; latency is from the input transfer to the output transfer.",
        "* **Mb/s** = block bits × Fmax / cycles per block (encryption).",
        "* **≈slices** = ⌈max(LUT4, FF) / 2⌉: the Spartan-3 / Virtex-II slices (2 LUT4 + 2 FF "
        "each) the core would need with perfect packing. It is a lower bound, comparable with the "
        "papers' slice counts only roughly: Xilinx packing leaves slices half used, the papers' "
        "synthesis tools and devices differ, and block RAM is counted by neither.",
        "* The paper rows give the figures the papers state.",
        "",
        "## Notes",
        "",
    ]
    for paper in report["papers"]:
        if paper.get("note"):
            out.append(f"* {paper['label']}: {paper['note']}.")
    for row in report["rows"]:
        if row["fit"] is False:
            out.append(f"* {row['label']} does not fit {row['device']}: {row['fit_reason']}.")
    for label, figures in report.get("cycles", {}).items():
        if figures.get("through") == "declared":
            continue
        if not figures.get("verified", True):
            out.append(f"* {label}: the simulated results did NOT match the reference model.")
        elif figures.get("cycles_per_block_decrypt") != figures.get("cycles_per_block"):
            out.append(f"* {label}: decryption takes {figures['cycles_per_block_decrypt']:g} "
                       f"cycles per block (latency {figures['latency_decrypt']}).")
    for error in report.get("errors", []):
        out.append(f"* Build error: {error}")
    out += [""] + _provenance_lines(report)
    out += [
        "## Tools",
        "",
    ]
    if versions is not None or not report.get("sweeps"):
        out += [f"* {name}: {_tool_version(version)}" for name, version in (versions or {}).items()]
    else:
        for index, sweep in enumerate(report["sweeps"]):
            out += [f"* sweep {index + 1}, {name}: {_tool_version(version)}"
                    for name, version in (sweep.get("tool_versions") or {}).items()]
    out.append("")
    return "\n".join(out)


def plot_report(report: dict, path) -> None:
    """Plot area (slice equivalents) against throughput, one panel a device: every row as a
    point, each paper's Pareto front (:func:`fronts`) as a line through its named cores, and the
    papers' own figures as stars."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    devices = list(dict.fromkeys(row["device"] for row in report["rows"])) or ["no rows"]
    columns = 2 if len(devices) > 1 else 1
    lines = (len(devices) + columns - 1) // columns
    figure, panels = plt.subplots(lines, columns, figsize=(7 * columns, 5.2 * lines), dpi=100,
                                  squeeze=False)
    found = fronts(report)
    palette = plt.get_cmap("tab10")
    colours = {label: palette(index % 10) for index, label in enumerate(found)}
    for index, device in enumerate(devices):
        axes = panels[index // columns][index % columns]
        rows = [row for row in report["rows"] if row["device"] == device and
                row["throughput_median_mbps"] and row["slices"] and not _reset_kept(row)]
        axes.scatter([row["slices"] for row in rows],
                     [row["throughput_median_mbps"] for row in rows],
                     color="lightgrey", s=18, zorder=1, label="every core and wrapper")
        for label, by_device in found.items():
            front = by_device.get(device)
            if not front:
                continue
            xs = [row["slices"] for row in front]
            ys = [row["throughput_median_mbps"] for row in front]
            axes.plot(xs, ys, marker="o", markersize=5, color=colours[label], zorder=2,
                      label=f"{label.replace(' (paper)', '')} front")
            for row in front:
                axes.annotate(row["label"], (row["slices"], row["throughput_median_mbps"]),
                              textcoords="offset points", xytext=(4, 4), fontsize=6,
                              color=colours[label])
        for paper in report["papers"]:
            axes.scatter(paper["slices"], paper["throughput_mbps"], marker="*", s=140,
                         color=colours.get(paper["label"], "black"), edgecolor="black",
                         zorder=3)
            axes.annotate(paper["label"], (paper["slices"], paper["throughput_mbps"]),
                          textcoords="offset points", xytext=(5, -10), fontsize=7)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_title(device, fontsize=10)
        axes.set_xlabel("≈slices, ⌈max(LUT4, FF)/2⌉", fontsize=8)
        axes.set_ylabel("Mb/s (median Fmax)", fontsize=8)
        axes.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize=7, loc="lower right")
    for index in range(len(devices), lines * columns):
        panels[index // columns][index % columns].set_visible(False)
    figure.suptitle("Area against throughput: each paper's Pareto front per device "
                    "(★ = the papers' figures)", fontsize=11)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def print_summary(report: dict, stream=None) -> None:
    stream = stream or sys.stdout
    print(text_table(report), file=stream)
