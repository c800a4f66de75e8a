"""A compiled simulator for a component with any set of streams (GCM uses it).

The design is converted and compiled by :func:`.cxxrtl.compile_model` (Yosys' CXXRTL back end,
``g++ -O2``, the same cache directory and locking) with another driver:
:data:`DRIVER_TEMPLATE` (``stream_driver.cpp`` beside this module), a C++ program that knows
nothing of the component it drives. Its streams are listed in a table generated from the Python
side (:func:`driver_source`), each either *produced* (the driver drives ``valid`` and
``payload``) or *consumed* (it drives ``ready``), and it plays the testbenches a simulation on
Amaranth's simulator plays with :func:`~cipher_cores.cores.sim.stream_put`,
:func:`~cipher_cores.cores.sim.stream_get` and :func:`~cipher_cores.cores.sim.stream_monitor`:

* one producer makes the puts in order, each after its gap (idle edges, ``valid`` low), holding
  ``valid`` and ``payload`` until the edge at which it sampled ``ready`` high;
* each consumed stream has a consumer that either holds ``ready`` high until it has seen its
  count of transfers, or for each transfer holds ``ready`` low for its stall and then high until
  it samples ``valid`` (one more edge after the last);
* a monitor samples every stream just before each edge (edges numbered from 1) and logs
  transfers and stream-rule violations as :func:`~cipher_cores.cores.sim.stream_monitor` does.

So both back ends see the same transfers at the same edges. The input text::

    STREAMSIM 1
    <max_edges> <puts>
    <stream index> <gap> <payload in hex>        one line per put, in order
    <count> <0|1> [<stall> ...]                  one line per consumed stream, in table order

The output: ``T <stream> <edge> <payload>`` per transfer, ``V <stream> <edge>`` per violation,
and ``END <ok|timeout> <edges>`` (read by :func:`.cxxrtl.read_transfer_log`).
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from typing import Sequence

from amaranth.lib import data

from .cxxrtl import CompiledModel, compile_model, driver_file, read_transfer_log, run_driver


__all__ = ["DRIVER_TEMPLATE", "StreamPort", "driver_source", "compile_stream_model",
           "run_stream_model"]


#: The C++ driver (``stream_driver.cpp``), with ``@STREAMS@`` where :func:`driver_source` puts
#: the table of the design's streams.
DRIVER_TEMPLATE = driver_file("stream_driver.cpp")


@dataclass(frozen=True)
class StreamPort:
    """A stream of the top module as the driver sees it: its name (the component's member) and
    whether the driver produces it (``In`` members) or consumes it (``Out`` members)."""
    name: str
    produced: bool


def _mangle(port: str) -> str:
    # CXXRTL names a port p_<name> with every underscore doubled.
    return "p_" + port.replace("_", "__")


def driver_source(streams: Sequence[StreamPort]) -> str:
    """The C++ driver for a top module with these streams."""
    rows = []
    for stream in streams:
        own, other = ("in", "out") if stream.produced else ("out", "in")
        rows.append(
            f'        {{"{stream.name}", {str(stream.produced).lower()}, '
            f'{own}(top.{_mangle(stream.name + "__valid")}), '
            f'{other}(top.{_mangle(stream.name + "__ready")}), '
            f'{own}(top.{_mangle(stream.name + "__payload")})}},')
    return DRIVER_TEMPLATE.replace("@STREAMS@", "\n".join(rows))


def compile_stream_model(core, streams: Sequence[StreamPort], *,
                         cache_dir: os.PathLike | None = None) -> CompiledModel:
    """The compiled model of ``core`` with the driver for ``streams``
    (:func:`.cxxrtl.compile_model`: the same cache and locking). Raises :exc:`RuntimeError`
    naming the failed step, with its log."""
    return compile_model(core, cache_dir=cache_dir, driver_source=driver_source(streams))


def _raw(layout, payload) -> int:
    if isinstance(payload, int):
        return payload
    layout = data.Layout.cast(layout)
    raw = 0
    for name, value in payload.items():
        field = layout[name]
        raw |= (value & ((1 << field.width) - 1)) << field.offset
    return raw


def run_stream_model(model: CompiledModel, core, streams: Sequence[StreamPort], puts: Sequence,
                     consumers: dict, max_edges: int) -> dict:
    """Run ``model`` (of ``core``, built for ``streams``) on ``puts`` (objects with ``stream``,
    ``gap`` and ``payload``: an integer or a dict of fields), with ``consumers`` mapping each
    consumed stream's name to ``(count, stalls or None)``. Returns a
    :class:`~cipher_cores.cores.sim.StreamLog` per stream. Raises :exc:`RuntimeError` on a
    timeout or if the model fails."""
    index = {stream.name: i for i, stream in enumerate(streams)}
    lines = ["STREAMSIM 1", f"{max_edges} {len(puts)}"]
    for put in puts:
        layout = getattr(core, put.stream).payload.shape()
        lines.append(f"{index[put.stream]} {put.gap} {_raw(layout, put.payload):x}")
    for stream in streams:
        if not stream.produced:
            count, stalls = consumers[stream.name]
            lines.append(" ".join([str(count), "0" if stalls is None else "1",
                                   *map(str, stalls or ())]))
    output = run_driver(model, "\n".join(lines) + "\n")
    return read_transfer_log(output, [stream.name for stream in streams], model, max_edges)
