"""Simulating stream components: Amaranth's simulator and a compiled CXXRTL model, cycle for cycle.

These drive the ``key``, ``input`` and ``output`` streams of a core with a
:class:`~cipher_cores.cores.interface.BlockCipherSignature` (and the streams of any component).
The test suite, the demo and the report all use them, so that the cycle counts quoted by the
report are the ones the tests check.

* :mod:`.operations`: what a run is asked to do (:class:`LoadKey`, :class:`Process`) and what it
  saw (:class:`Transfer`, :class:`StreamLog`, :class:`CipherRun`);
* :mod:`.testbench`: the Amaranth simulator back end (:func:`stream_put`, :func:`stream_get`,
  :func:`stream_monitor`, :func:`simulator_with_reset`);
* :mod:`.cxxrtl`: the compiled back end (converting, compiling, caching and running a design
  with a C++ driver; the block cipher's driver is ``cipher_driver.cpp``);
* :mod:`.stream_driver`: the compiled driver for any set of streams (``stream_driver.cpp``);
* :mod:`.simulate`: :func:`simulate_cipher`, one entry point to both back ends;
* :mod:`.cycles`: a core's cycle figures, measured with it and checked against its model.

All counts are clock edges of the ``sync`` domain, numbered from 1 at the first edge of the
simulation. A *transfer edge* is an edge at which a stream's ``valid`` and ``ready`` were both high.
"""

from .operations import CipherRun, LoadKey, Process, StreamLog, Transfer
from .simulate import BACKENDS, draw_schedules, simulate_cipher
from .testbench import (put_operations, random_source, simulator_with_reset, stream_get,
                        stream_monitor, stream_put, watchdog)


__all__ = [
    "LoadKey", "Process", "Transfer", "StreamLog", "CipherRun",
    "stream_put", "stream_get", "stream_monitor", "put_operations", "watchdog", "simulate_cipher", "simulator_with_reset",
    "draw_schedules", "BACKENDS", "random_source",
]
