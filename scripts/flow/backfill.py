"""``python -m cipher_cores.scripts.flow.backfill SWEEP.json ...``: record, in sweeps measured before
rows carried digests, each row's target and the digest of the design it measured.

A sweep's JSON names the commit its sources were at (``source``). For each file this checks that
commit out in a temporary ``git worktree`` (so a dirty or unknown source is refused, not guessed),
computes each row's digest there with :mod:`cipher_cores.scripts.flow.digest_at_commit` (the
design as that commit built it, which is what the sweep measured), and writes ``target``,
``digest`` and ``digest_source`` (``"backfilled at <commit>"``) into the rows that lack them. A row
whose target that commit cannot build keeps no digest (the page then calls it stale). Nothing is
measured; :func:`cipher_cores.scripts.flow.digest.stale_rows` then tells which rows still show HEAD.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile


__all__ = ["row_target", "backfill"]


def row_target(config: dict) -> str:
    """The target text of a row's ``config`` (as :func:`~cipher_cores.scripts.flow.report.derive_row`
    records it), the options left at their defaults omitted."""
    from .targets import parse_target
    config = dict(config)
    wrapper = config.pop("wrapper", None)
    for derived in ("modes", "multiplier", "digit_bits"):       # implied by the wrapper
        config.pop(derived, None)
    text = f"{config.pop('core')}-{config.pop('key_bits')}"
    defaults = parse_target(text).to_dict()
    options = [f"{name}={'yes' if value is True else 'no' if value is False else value}"
               for name, value in config.items() if defaults.get(name) != value]
    text += ":" + ",".join(options) if options else ""
    return f"{wrapper}:{text}" if wrapper else text


def _digests_at(commit: str, arguments: list, repository: pathlib.Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="backfill-") as folder:
        # A copy, so that the folder Python puts first on the script's path holds nothing else.
        script = pathlib.Path(folder) / "digest_at_commit.py"
        shutil.copy(pathlib.Path(__file__).with_name("digest_at_commit.py"), script)
        tree = pathlib.Path(folder) / "tree"
        subprocess.run(["git", "-C", str(repository), "worktree", "add", "--detach", str(tree),
                        commit], check=True, capture_output=True)
        try:
            # The checkout's packages: in the cipher_cores namespace (through a folder of
            # links, as an install maps them) or, before it, top-level.
            namespace = "cipher_cores.cores" in (tree / "pyproject.toml").read_text()
            if namespace:
                folder_of_links = pathlib.Path(folder) / "ns" / "cipher_cores"
                folder_of_links.mkdir(parents=True)
                for package in ("cores", "platforms", "scripts"):
                    (folder_of_links / package).symlink_to(tree / package)
                path = str(folder_of_links.parent)
            else:
                path = str(tree)
            result = subprocess.run(
                [sys.executable, "-B", str(script), *(["--namespace"] if namespace else []),
                 *arguments], cwd=tree, env={**os.environ, "PYTHONPATH": path},
                capture_output=True, text=True)
        finally:
            subprocess.run(["git", "-C", str(repository), "worktree", "remove", "--force",
                            str(tree)], capture_output=True)
    if result.returncode != 0:
        raise RuntimeError(f"digests at {commit} failed: {result.stderr.strip()[-300:]}")
    digests = {}
    for line in result.stdout.splitlines():
        argument, _, value = line.partition(" ")
        digests[argument] = value
    return digests


def backfill(path, repository=".") -> tuple:
    """Fill ``target``/``digest`` into the rows of the sweep file ``path`` that lack them;
    returns ``(filled, failed)`` counts."""
    path = pathlib.Path(path)
    report = json.loads(path.read_text())
    commit = report.get("source") or ""
    if not commit or commit == "unknown" or commit.endswith("-dirty"):
        raise ValueError(f"{path}: its sources are {commit or 'not recorded'!r}, not one commit")
    rows = [row for row in report["rows"] if not row.get("digest")]
    for row in rows:
        row["target"] = row.get("target") or row_target(row["config"])
    digests = _digests_at(commit, sorted({f"{row['target']}@{row['device']}" for row in rows}),
                          pathlib.Path(repository))
    filled = failed = 0
    for row in rows:
        value = digests.get(f"{row['target']}@{row['device']}", "")
        if value.startswith("sha256:"):
            row["digest"], row["digest_source"] = value, f"backfilled at {commit}"
            filled += 1
        else:
            failed += 1
    path.write_text(json.dumps(report, indent=2) + "\n")
    return filled, failed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cipher_cores.scripts.flow.backfill",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("sweeps", nargs="+", metavar="SWEEP.json")
    args = parser.parse_args(argv)
    for path in args.sweeps:
        try:
            filled, failed = backfill(path)
        except (OSError, ValueError, RuntimeError, subprocess.CalledProcessError) as error:
            print(f"{path}: {error}", file=sys.stderr)
            return 1
        print(f"{path}: {filled} rows given their digest" +
              (f", {failed} could not be built at that commit" if failed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
