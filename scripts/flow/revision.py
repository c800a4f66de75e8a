"""Which sources a measurement was made from, as the report and the SoC report record it.

Its own module because both :mod:`.report` and :mod:`.soc` stamp their results with it, and the
report also shows the SoC's section: neither can import the other for it without a circle.
"""

from __future__ import annotations

import subprocess


__all__ = ["source_revision"]


def source_revision(directory=".") -> str:
    """``git describe --always --dirty`` of the sources the report measured, or ``"unknown"``."""
    try:
        result = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"],
                                cwd=directory, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return result.stdout.strip() if result.returncode == 0 else "unknown"
