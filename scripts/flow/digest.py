"""Digests of measured designs: how the results page proves each row shows the current core.

A row of the page records :func:`design_digest` of the design its figures were measured on: the
core inside the measurement harness, prepared for its bare device exactly as the build hands it to
Yosys (Amaranth's RTLIL, ``top.il``). The digest covers everything that decides the figures that
the sources decide: the core's gateware, the primitives it chose for that device, the harness and
the device's clock and reset. It leaves out the ``src`` attributes (file names and line numbers),
so editing a comment or moving code between files does not make a row stale; any change to the
netlist does. :func:`stale_rows` recomputes the digests at the current sources and names the rows
whose design changed since they were measured; ``cipher-cores report --update`` measures those again.
"""

from __future__ import annotations

import hashlib
import re


__all__ = ["rtlil_digest", "measurement_top", "design_digest", "stale_rows"]


_SRC_ATTRIBUTE = re.compile(r"^\s*attribute \\src .*\n", re.MULTILINE)


def rtlil_digest(rtlil: str) -> str:
    """``sha256:`` and the first 20 hex digits of the SHA-256 of ``rtlil`` without its ``src``
    attribute lines."""
    return "sha256:" + hashlib.sha256(_SRC_ATTRIBUTE.sub("", rtlil).encode()).hexdigest()[:20]


#: How a row treats the core's reset: ``"none"`` (the page's method: no reset reaches the core)
#: or ``"kept"`` (a harness flip-flop resets it, see
#: :class:`~cipher_cores.platforms.harness.MeasurementHarness`).
RESETS = ("none", "kept")


def check_reset(reset: str) -> str:
    if reset not in RESETS:
        raise ValueError(f"reset must be one of {', '.join(RESETS)}, not {reset!r}")
    return reset


def measurement_top(target, reset: str = "none"):
    """The design a bare-device measurement builds: ``target``'s core (a new one, from
    ``target.build()``) inside :class:`~cipher_cores.platforms.harness.MeasurementHarness` (with
    the core's reset kept if ``reset`` is ``"kept"``), in a
    :class:`~cipher_cores.platforms.harness.BareDeviceTop`."""
    from cipher_cores.platforms.harness import BareDeviceTop, MeasurementHarness
    return BareDeviceTop(MeasurementHarness(target.build(),
                                            reset=check_reset(reset) == "kept"))


def design_digest(target, device, reset: str = "none") -> str:
    """The :func:`rtlil_digest` of ``target`` (a configuration with ``build()``, such as
    :func:`~cipher_cores.scripts.flow.targets.parse_target` returns) measured on ``device`` (a class
    of :mod:`cipher_cores.platforms.devices`), as the build prepares it."""
    plan = device().prepare(measurement_top(target, reset), name="top")
    return rtlil_digest(plan.files["top.il"])


def stale_rows(report: dict, *, digest=None) -> list:
    """The rows of ``report`` (the page's JSON) whose design is not the one the current sources
    make, as ``(row, reason)`` pairs: a row with no digest or target, a target the sources no
    longer accept, or a digest that differs from :func:`design_digest` now.

    ``digest(target_text, device_name, reset)`` computes a current digest (default: parse the
    target and call :func:`design_digest`; pass a cached one to share work)."""
    if digest is None:
        digest = current_digest
    stale = []
    for row in report.get("rows", []):
        if not row.get("digest") or not row.get("target"):
            stale.append((row, "no digest recorded"))
            continue
        try:
            now = digest(row["target"], row["device"], row.get("reset", "none"))
        except (KeyError, ValueError) as error:
            stale.append((row, f"the sources no longer build {row['target']!r}: {error}"))
            continue
        if now != row["digest"]:
            stale.append((row, f"design changed: measured {row['digest']}, now {now}"))
    return stale


def current_digest(target_text: str, device_name: str, reset: str = "none") -> str:
    """:func:`design_digest` of a target and device given by name."""
    from cipher_cores.platforms.devices import get_device
    from .targets import parse_target
    return design_digest(parse_target(target_text), get_device(device_name), reset)
