# amaranth: UnusedElaboratable=no
"""The documentation: its generated tables are what the generator makes now, its links lead
somewhere, and the README's quick start is what CI runs.

The generator is :mod:`cipher_cores.scripts.flow.doctables`; its own behaviour (grouping, picking
the best core per device, markers, command line) is tested here too, on the real catalog and
results and on made-up results where the real ones cannot show a case.
"""

import json
import re
from pathlib import Path

import pytest

from cipher_cores.cores.catalog import configurations
from cipher_cores.scripts.flow import doctables
from cipher_cores.scripts.flow.doctables import DocTableError, Need


ROOT = Path(__file__).parent.parent
PAGES = doctables.page_paths(ROOT)
#: Pages written by a command from data that names its own machine's paths (the report's sweep
#: commands); every other page is written by hand or from the catalog.
GENERATED_ELSEWHERE = {ROOT / "docs" / "results.md"}


def results() -> dict:
    return json.loads((ROOT / doctables.RESULTS).read_text())


def without_code(text: str) -> str:
    """``text`` with fenced code blocks and inline code spans blanked (their brackets are not
    links, their hashes not headings)."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path: Path) -> set:
    """The anchors GitHub gives the headings of ``path``: lower case, punctuation dropped, spaces
    as hyphens, a repeated one numbered."""
    seen, found = {}, set()
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", path.read_text(), flags=re.M | re.S)
    for match in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, flags=re.M):
        heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1))
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(path: Path) -> list:
    """The targets of the Markdown links and images of ``path``, outside code."""
    return re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", without_code(path.read_text()))


def table_rows(text: str) -> list:
    """The body rows of the first Markdown table of ``text``, as lists of cells."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[2:]]


# --- The committed pages -------------------------------------------------------------------

def test_generated_tables_are_what_the_generator_makes_now():
    stale = doctables.stale_pages(ROOT)
    names = ", ".join(str(path.relative_to(ROOT)) for path in stale)
    assert not stale, f"generated tables differ from the catalog or results in {names}: run " \
                      f"{doctables.COMMAND}"


def test_the_pages_hold_the_generated_tables():
    texts = {path.name: path.read_text() for path in PAGES}
    for page, name in [("README.md", "advice"), ("aes.md", "cycles aes"),
                       ("aes.md", "catalog aes"), ("present.md", "cycles present"),
                       ("present.md", "catalog present")]:
        assert f"<!-- BEGIN generated: {name} -->" in texts[page], (page, name)
        assert f"<!-- END generated: {name} -->" in texts[page], (page, name)


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):      # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        resolved = (page.parent / file).resolve() if file else page
        if not resolved.exists():
            broken.append(f"{target} (no file {resolved.relative_to(ROOT.resolve())})")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target} (no heading #{anchor})")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


@pytest.mark.parametrize("page", [path for path in PAGES if path not in GENERATED_ELSEWHERE],
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_no_page_names_a_path_of_one_machine(page):
    found = re.findall(r"(?<![\w~.])(?:/work|/tmp|/home|/root|/Users|/mnt)/[^\s`)]*|"
                       r"\b[A-Z]:\\[^\s`)]*", page.read_text())
    assert not found, f"{page.relative_to(ROOT)} names {found}"


def quick_start() -> str:
    """The README's shell block that runs the tests."""
    blocks = re.findall(r"^```sh\n(.*?)^```", (ROOT / "README.md").read_text(), flags=re.M | re.S)
    found = [block for block in blocks if "pytest" in block]
    assert len(found) == 1, "the README needs one shell block that runs the tests"
    return found[0]


def test_the_quick_start_runs_the_tests_as_ci_does():
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"python -m pip install -e \S+|python -m pytest\b[^\n&]*", ci)
    assert any("pip install" in command for command in commands)
    assert any("pytest" in command for command in commands)
    block = quick_start()
    for command in commands:
        assert command.strip() in block, f"the README's quick start lacks {command!r} (.ci/run)"


def test_the_quick_start_installs_icarus_verilog_in_the_block_a_user_copies():
    assert re.search(r"^[^#\n]*apt-get install[^\n]*\biverilog\b", quick_start(), flags=re.M)


def test_the_quick_start_virtual_environment_is_ignored_by_git():
    match = re.search(r"python3? -m venv (\S+)", quick_start())
    assert match, "the quick start makes a virtual environment"
    folder = match.group(1).strip("/")
    ignored = {line.strip().strip("/") for line in (ROOT / ".gitignore").read_text().splitlines()}
    assert folder in ignored, f".gitignore does not ignore the README's {folder}/"


# --- The cycles table ----------------------------------------------------------------------

def test_the_cycles_table_holds_every_configuration_with_its_cores_figures():
    rows = table_rows(doctables.cycles_table())
    for config in configurations():
        core = config.spec.component(key_bits=config.key_bits, **config.all_options())
        values = {name: config.spec.option(name).format(value)
                  for name, value in config.all_options().items()}
        matches = [row for row in rows if row[0] == f"`{config.spec.name}`"
                   and str(config.key_bits) in row[1].split(", ")
                   and all(values[name] == value for name, value in
                           (item.split("=") for item in row[2].strip("`").split(",") if item))]
        assert len(matches) == 1, (config.text, matches)
        _, _, _, latency, interval, key_load = matches[0]
        assert (latency, interval) == (f"{core.latency:,}", f"{core.initiation_interval:,}"), \
            config.text
        assert f"{core.key_load_cycles:,}" in re.findall(r"[\d,]*\d", key_load), config.text


def test_an_option_that_only_changes_the_key_load_is_shown_in_that_column():
    rows = table_rows(doctables.cycles_table("present"))
    serial = [row for row in rows if row[0] == "`present-serial`" and row[1] == "80"]
    assert serial == [["`present-serial`", "80", "", "3,211", "3,211",
                       "3,230 (`decrypt=no`: 1)"]]


def test_key_sizes_with_the_same_figures_share_a_row():
    rows = table_rows(doctables.cycles_table("present"))
    assert [row[1] for row in rows if row[0] == "`present-keytable`"] == ["80, 128"]
    assert [row[1] for row in rows if row[0] == "`present-bram`"] == ["80", "128"]


def test_an_unknown_family_is_refused_with_the_known_ones():
    with pytest.raises(DocTableError, match=r"^no catalog entry in family 'des'; families: "
                                            r"aes, present$"):
        doctables.cycles_table("des")


# --- The advice table ----------------------------------------------------------------------

def row(target_config: dict, device: str, lut4: int, bram: int, mbps: float, fit: bool = True):
    """A results row as the report writes it, with only the fields the advice reads (and one
    more that it must ignore)."""
    return {"config": target_config, "device": device,
            "family": "ecp5" if device.startswith("ecp5") else "ice40", "fit": fit,
            "fit_reason": "" if fit else "ICESTORM_LC 5876/5280, 111 %", "lut4": lut4,
            "bram": bram, "throughput_median_mbps": mbps if fit else None,
            "digest": "not read"}


AES_BRAM = {"core": "aes-bram", "key_bits": 128, "decrypt": True}
AES_COMPACT = {"core": "aes-compact", "key_bits": 128, "decrypt": True}
AES_ROUND = {"core": "aes", "key_bits": 128, "sbox": "bram"}
SMALLEST_BOTH = Need("AES, both directions, fewest LUT4", "aes", both_directions=True)


def test_the_smallest_core_is_chosen_per_device_with_its_block_ram():
    made_up = {"rows": [row(AES_BRAM, "ice40-up5k", 561, 4, 70.9),
                        row(AES_COMPACT, "ice40-up5k", 761, 4, 91.4),
                        row(AES_BRAM, "ecp5-85f", 700, 4, 128.9),
                        row(AES_COMPACT, "ecp5-85f", 650, 4, 185.2)]}
    rows = table_rows(doctables.advice_table(made_up, [SMALLEST_BOTH]))
    assert rows == [["AES, both directions, fewest LUT4",
                     "`aes-bram-128`: 561 LUT4 + 4 BRAM, 70.9 Mb/s",
                     "`aes-compact-128`: 650 LUT4 + 4 DP16KD, 185 Mb/s"]]


def test_a_core_that_does_not_fit_is_never_advised():
    made_up = {"rows": [row(AES_ROUND, "ice40-up5k", 100, 0, 0, fit=False),
                        row(AES_BRAM, "ice40-up5k", 561, 4, 70.9),
                        row(AES_ROUND, "ice40-hx8k", 100, 0, 0, fit=False)]}
    rows = table_rows(doctables.advice_table(made_up, [SMALLEST_BOTH]))
    assert rows[0][1].startswith("`aes-bram-128`")
    assert rows[0][2] == ("none fits (`aes-128`: 100 LUT4; ICESTORM_LC 5876/5280, 111 %)")


def test_an_encrypt_only_core_does_not_serve_both_directions():
    encrypt_only = dict(AES_BRAM, decrypt=False)
    made_up = {"rows": [row(encrypt_only, "ice40-up5k", 516, 4, 82.9),
                        row(AES_BRAM, "ice40-up5k", 561, 4, 70.9)]}
    both, either = table_rows(doctables.advice_table(made_up, [
        SMALLEST_BOTH, Need("AES, fewest LUT4", "aes")]))
    assert both[1].startswith("`aes-bram-128`:")
    assert either[1].startswith("`aes-bram-128:decrypt=no`:")


def test_the_fastest_core_is_chosen_by_throughput():
    made_up = {"rows": [row(AES_BRAM, "ice40-hx8k", 561, 4, 161.8),
                        row(AES_COMPACT, "ice40-hx8k", 761, 4, 220.6)]}
    rows = table_rows(doctables.advice_table(made_up, [
        Need("AES, fastest", "aes", fastest=True)]))
    assert rows[0][1] == "`aes-compact-128`: 761 LUT4 + 4 BRAM, 221 Mb/s"


def test_rows_the_catalog_does_not_describe_are_left_out():
    made_up = {"rows": [row({"core": "verilog", "label": "peer"}, "ice40-up5k", 10, 0, 1.0),
                        row(dict(AES_BRAM, decrypt="maybe"), "ice40-up5k", 20, 0, 1.0),
                        row(AES_BRAM, "ice40-up5k", 561, 4, 70.9)]}
    assert [m.target for m in doctables.measured_rows(made_up)] == ["aes-bram-128"]


def test_fields_the_advice_does_not_know_are_ignored():
    made_up = {"measured_at": "now", "rows": [
        row(dict(AES_BRAM, measured_with="a later report"), "ice40-up5k", 561, 4, 70.9)]}
    assert [m.target for m in doctables.measured_rows(made_up)] == ["aes-bram-128"]


def test_every_advised_cell_states_the_rows_cells_and_no_fitting_row_is_smaller():
    measured = doctables.measured_rows(results())
    by_key = {(m.target, m.device): m for m in measured}
    devices = doctables.measured_devices(measured)
    rows = table_rows(doctables.advice_table(results()))
    assert [r[0] for r in rows] == [need.text for need in doctables.NEEDS]
    for need, cells in zip(doctables.NEEDS, rows):
        for device, cell in zip(devices, cells[1:]):
            match = re.match(r"^`([^`]+)`: ([\d,]+) LUT4(?: \+ (\d+) (BRAM|DP16KD))?, ", cell)
            if match is None:
                continue
            chosen = by_key[match.group(1), device]
            assert int(match.group(2).replace(",", "")) == chosen.lut4, (need.text, device)
            assert int(match.group(3) or 0) == chosen.bram, (need.text, device, cell)
            if chosen.bram:
                assert match.group(4) == ("DP16KD" if device.startswith("ecp5") else "BRAM")
            rivals = [m for m in measured
                      if m.device == device and m.fits and need.admits(m)]
            if need.fastest:
                assert all(m.mbps <= chosen.mbps for m in rivals), (need.text, device)
            else:
                assert all(m.lut4 >= chosen.lut4 for m in rivals), (need.text, device)


# --- Markers and the command line ----------------------------------------------------------

def test_an_unknown_table_is_refused_naming_the_page_and_line():
    text = "# Page\n\n<!-- BEGIN generated: colours -->\n<!-- END generated: colours -->\n"
    with pytest.raises(DocTableError, match=r"^x\.md, line 3: unknown generated table "
                                            r"'colours'; known: "):
        doctables.update_text(text, {}, where="x.md")


def test_a_begin_marker_without_its_end_marker_is_refused():
    text = "<!-- BEGIN generated: cycles aes -->\n| old |\n<!-- END generated: cycles -->\n"
    with pytest.raises(DocTableError, match=r"^x\.md, line 1: no '<!-- END generated: "
                                            r"cycles aes -->' after BEGIN marker 'cycles aes'$"):
        doctables.update_text(text, {}, where="x.md")


def test_markers_in_a_code_block_are_left_alone():
    text = "```\n<!-- BEGIN generated: colours -->\n<!-- END generated: colours -->\n```\n"
    assert doctables.update_text(text, {}) == text


def test_the_text_between_markers_is_replaced_and_the_rest_kept():
    text = ("# Page\n\nbefore\n<!-- BEGIN generated: cycles present -->\nold table\n"
            "<!-- END generated: cycles present -->\nafter\n")
    new = doctables.update_text(text, {})
    assert new.startswith("# Page\n\nbefore\n<!-- BEGIN generated: cycles present -->\n\n| core |")
    assert new.endswith(".\n\n<!-- END generated: cycles present -->\nafter\n")
    assert "old table" not in new
    assert doctables.update_text(new, {}) == new


@pytest.fixture
def repository(tmp_path):
    """A folder with a README holding a stale table and the real results."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "results.json").write_text((ROOT / doctables.RESULTS).read_text())
    (tmp_path / "README.md").write_text(
        "<!-- BEGIN generated: cycles aes -->\nstale\n<!-- END generated: cycles aes -->\n")
    return tmp_path


def test_the_command_names_stale_pages_then_rewrites_them(repository, capsys):
    assert doctables.main(["--root", str(repository)]) == 1
    assert capsys.readouterr().err == (f"stale generated tables in README.md: run "
                                       f"{doctables.COMMAND}\n")
    assert doctables.main(["--root", str(repository), "--write"]) == 0
    assert "| `aes` | 128 |" in (repository / "README.md").read_text()
    assert doctables.main(["--root", str(repository)]) == 0


def test_the_command_says_in_one_line_when_it_finds_no_results(tmp_path, capsys):
    assert doctables.main(["--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no docs/results.json under ") and err.count("\n") == 1
