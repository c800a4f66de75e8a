"""Requesting single pins of a platform's resources through :class:`amaranth.lib.io.Buffer`."""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.lib import io


__all__ = ["LEDRef", "output_pin", "input_pin"]


@dataclass(frozen=True)
class LEDRef:
    """A single-bit output: resource ``name`` number ``number``, optionally one ``subsignal``."""
    name: str
    number: int = 0
    subsignal: str | None = None

    def request(self, m, platform, requested: dict | None = None):
        """Request the pin and add an output buffer for it to ``m``; returns the buffer's input.
        ``requested`` (see :func:`output_pin`) lets several LEDs share one resource."""
        return output_pin(m, platform, self.name, self.number, self.subsignal, requested)


def _request(platform, name, number, requested):
    if requested is None:
        return platform.request(name, number, dir="-")
    if (name, number) not in requested:
        requested[name, number] = platform.request(name, number, dir="-")
    return requested[name, number]


def _pin(m, platform, direction, name, number, subsignal, requested):
    port = _request(platform, name, number, requested)
    if subsignal is not None:
        port = getattr(port, subsignal)
    buffer = io.Buffer(direction, port)
    m.submodules[f"pin_{name}_{number}" + (f"_{subsignal}" if subsignal else "")] = buffer
    return buffer


def output_pin(m, platform, name: str, number: int = 0, subsignal: str | None = None,
               requested: dict | None = None):
    """Request resource ``name``/``number`` (its ``subsignal``, if given) as an output, add an
    :class:`amaranth.lib.io.Buffer` for it to ``m``, and return the signal that drives it.

    A resource can be requested only once; pass the same ``requested`` dict to take several
    subsignals of one resource (the three colours of an RGB LED)."""
    return _pin(m, platform, "o", name, number, subsignal, requested).o


def input_pin(m, platform, name: str, number: int = 0, subsignal: str | None = None,
              requested: dict | None = None):
    """Like :func:`output_pin`, for an input; returns the buffer's output."""
    return _pin(m, platform, "i", name, number, subsignal, requested).i
