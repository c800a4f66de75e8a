"""The results page shows the sources it ships with: every row of ``docs/results.json`` records
the digest of the design it measured (:mod:`cipher_cores.scripts.flow.digest`), and each digest is
computed again here from the sources at HEAD. A row whose core, harness or device top changed since
it was measured fails, naming the command that measures it again."""

import functools
import json
import pathlib

import pytest

from cipher_cores.scripts.flow.digest import current_digest, stale_rows


PAGE = pathlib.Path(__file__).parent.parent / "docs" / "results.json"
ROWS = json.loads(PAGE.read_text())["rows"]
UPDATE = ("cipher-cores report --update docs/results.json (measures the stale rows again and "
          "rewrites docs/results.json, .md and .png)")


@functools.cache
def digest_now(target: str, device: str, reset: str = "none") -> str:
    return current_digest(target, device, reset)


def test_every_row_records_what_measured_it():
    for row in ROWS:
        assert row.get("target") and row.get("digest", "").startswith("sha256:"), row["label"]
        assert row.get("measured_at") and row.get("tool_versions"), row["label"]


@pytest.mark.parametrize("row", ROWS, ids=[f"{row['label']}@{row['device']}" for row in ROWS])
def test_row_measured_the_design_the_sources_make_now(row):
    stale = stale_rows({"rows": [row]}, digest=digest_now)
    assert not stale, f"{row['label']} on {row['device']}: {stale[0][1]}; run {UPDATE}"


def test_a_changed_core_makes_its_rows_stale():
    """The check bites: a row whose recorded digest is not the current design's is reported,
    and so is a row with no digest."""
    row = next(row for row in ROWS if row["target"] == "present-80")
    changed = dict(row, digest="sha256:" + "0" * 20)
    unrecorded = {key: value for key, value in row.items() if key != "digest"}
    reasons = [reason for _, reason in stale_rows({"rows": [changed, unrecorded, row]},
                                                  digest=digest_now)]
    assert len(reasons) == 2
    assert reasons[0].startswith("design changed") and reasons[1] == "no digest recorded"


def test_digest_follows_the_netlist_not_the_source_lines():
    from cipher_cores.scripts.flow.digest import rtlil_digest
    netlist = 'module \\top\n  attribute \\src "{}:12"\n  wire width 1 \\a\nend\n'
    assert rtlil_digest(netlist.format("/one/x.py")) == rtlil_digest(netlist.format("/two/y.py"))
    assert rtlil_digest(netlist.format("x.py")) != rtlil_digest(netlist.format("x.py")
                                                                .replace("width 1", "width 2"))


def test_digest_is_reproducible_and_tells_configurations_apart():
    assert digest_now("present-80", "ice40-up5k") == current_digest("present-80", "ice40-up5k")
    assert digest_now("present-80", "ice40-up5k") != digest_now("present-80:decrypt=no",
                                                                "ice40-up5k")
    assert digest_now("present-80", "ice40-up5k") != digest_now("present-80", "ecp5-25f")


def test_the_page_names_no_machines_paths():
    """Reproduce commands are the project's own: no absolute path of the machine that ran them."""
    import re
    text = (PAGE.parent / "results.md").read_text()
    assert not re.findall(r"(?<![\w.])/(?:tmp|work|home|root|Users|workspace)/\S*", text)
