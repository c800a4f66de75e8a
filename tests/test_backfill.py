"""Giving rows measured before digests existed the digest of the design they measured, from the
sources at the commit that measured them (:mod:`cipher_cores.scripts.flow.backfill`)."""

import json
import pathlib
import subprocess

import pytest

from cipher_cores.scripts.flow.backfill import backfill, row_target
from cipher_cores.scripts.flow.targets import parse_target


ROOT = pathlib.Path(__file__).parent.parent
PAGE = json.loads((ROOT / "docs" / "results.json").read_text())


def test_a_rows_target_reads_back_as_its_configuration():
    for row in PAGE["rows"]:
        config = parse_target(row_target(row["config"]))
        assert config.label == row["label"]
        assert all(config.to_dict()[name] == value for name, value in row["config"].items())


def sweep_file(tmp_path, source, target="present-80", device="ice40-up5k"):
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps({"source": source, "rows": [
        {"label": "PRESENT-80", "device": device,
         "config": parse_target(target).to_dict()}]}))
    return path


def test_backfill_digests_each_row_at_its_sweeps_commit(tmp_path):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    path = sweep_file(tmp_path, head)
    assert backfill(path, repository=ROOT) == (1, 0)
    row = json.loads(path.read_text())["rows"][0]
    assert row["target"] == "present-80"
    assert row["digest"].startswith("sha256:") and len(row["digest"]) == 27
    assert row["digest_source"] == f"backfilled at {head}"


@pytest.mark.parametrize("source", ["", "unknown", "1234abcd-dirty"])
def test_backfill_refuses_sources_that_are_not_one_commit(tmp_path, source):
    with pytest.raises(ValueError, match="not one commit"):
        backfill(sweep_file(tmp_path, source), repository=ROOT)
