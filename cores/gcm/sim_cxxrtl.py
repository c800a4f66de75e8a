"""GCM on the compiled simulator: :func:`~cipher_cores.cores.gcm.sim.simulate_gcm` with
``backend="cxxrtl"`` calls :func:`run_gcm_cxxrtl`.

The core runs under the driver for any set of streams
(:mod:`cipher_cores.cores.sim.stream_driver`), given the streams of
:class:`~cipher_cores.cores.gcm.core.GCM` (:data:`GCM_STREAMS`): the driver makes the puts
:func:`~cipher_cores.cores.gcm.sim.plan` drew, in order, and consumes the results and the tags,
so that it sees the same transfers at the same edges as the testbenches of
:func:`~cipher_cores.cores.gcm.sim.simulate_gcm` on Amaranth's simulator.
"""

from __future__ import annotations

from typing import Sequence

from ..sim.stream_driver import StreamPort, compile_stream_model, run_stream_model


__all__ = ["GCM_STREAMS", "run_gcm_cxxrtl"]


#: The streams of :class:`~cipher_cores.cores.gcm.core.GCM`.
GCM_STREAMS = (StreamPort("key", True), StreamPort("start", True), StreamPort("input", True),
               StreamPort("output", False), StreamPort("tag", False))


def run_gcm_cxxrtl(core, puts: Sequence, outputs: int, tags: int, output_stalls, tag_stalls,
                   max_edges: int) -> dict:
    """:func:`~cipher_cores.cores.gcm.sim.simulate_gcm` on the compiled back end, with
    ``puts`` and the stalls already drawn (:func:`~cipher_cores.cores.gcm.sim.plan`); a
    :class:`~cipher_cores.cores.sim.StreamLog` per stream of :data:`GCM_STREAMS`."""
    model = compile_stream_model(core, GCM_STREAMS)
    return run_stream_model(model, core, GCM_STREAMS, puts,
                            {"output": (outputs, output_stalls), "tag": (tags, tag_stalls)},
                            max_edges)
