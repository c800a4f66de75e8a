"""Running the report's measurements on any :class:`concurrent.futures.Executor`.

A job is described by picklable values only (the configuration's text, the device's name, the
seeds, the build directory), so that it can run in this process (:class:`InlineExecutor`), in local
worker processes (:func:`local_executor`, ``cipher-cores report -j N``) or on the workers of a Dask
cluster (:func:`dask_executor`, ``cipher-cores report --scheduler tcp://HOST:PORT``). Each worker
finds its own tools (:func:`~cipher_cores.scripts.flow.toolchain.configure_toolchain`) and reads the catalog
itself.

Progress from a job reaches the display through a :class:`ProgressRelay`: directly when the job
runs in this process, through a queue when it runs in a local worker process, and not at all on a
Dask cluster, where the display shows when each job is handed over and when it finishes.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable


__all__ = ["InlineExecutor", "MeasureJob", "run_measure_job", "run_cycles_job",
           "local_executor", "dask_executor", "DaskUnavailable", "ProgressRelay",
           "progress_for"]


class InlineExecutor(Executor):
    """Runs each call when it is submitted, in the calling thread (``-j 1``)."""
    def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
        future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:      # reported by the caller, per job
            future.set_exception(error)
        return future


@dataclass(frozen=True)
class MeasureJob:
    """One configuration on one bare device, as picklable values."""
    config: str             # as :func:`cipher_cores.scripts.flow.targets.parse_target` reads it
    device: str             # a name of :data:`cipher_cores.platforms.devices.DEVICES`
    seeds: tuple
    root: str
    reset: str = "none"     # as :func:`cipher_cores.scripts.flow.build.measure_device` takes it

    @property
    def key(self) -> str:
        from .targets import parse_target
        return f"{parse_target(self.config).label} @ {self.device}"


def run_measure_job(job: MeasureJob, progress=None):
    """Run :func:`~cipher_cores.scripts.flow.build.measure_device` for ``job`` (in any process) and return its
    :class:`~cipher_cores.scripts.flow.build.DeviceMeasurement`."""
    from cipher_cores.platforms.devices import get_device
    from .build import measure_device
    from .targets import parse_target
    from .toolchain import configure_toolchain

    configure_toolchain()
    return measure_device(parse_target(job.config), get_device(job.device), seeds=job.seeds,
                          root=job.root, progress=progress, reset=job.reset)


def run_cycles_job(config: str):
    """Simulate target ``config`` (its text: a core or a core in a bus peripheral) and return
    its :class:`~cipher_cores.scripts.flow.measure.CycleFigures`."""
    from .measure import measure_cycles
    from .targets import parse_target
    return measure_cycles(parse_target(config))


def local_executor(jobs: int) -> Executor:
    """This process for ``jobs == 1``, else ``jobs`` worker processes (started afresh, not
    forked, so that no lock of this process's threads is copied into them)."""
    if jobs <= 1:
        return InlineExecutor()
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))


class DaskUnavailable(Exception):
    """Dask's ``distributed`` is not installed, or the scheduler cannot be reached."""


def dask_executor(address: str, *, timeout: float = 10) -> Executor:
    """An executor whose jobs run on the Dask cluster of the scheduler at ``address``
    (``tcp://HOST:PORT``). The client stays open while the executor is in use; shutting the
    executor down closes it."""
    try:
        import distributed
    except ImportError:
        raise DaskUnavailable("--scheduler needs Dask's distributed package: pip install "
                              "distributed (or pip install -e '.[dask]' in a checkout)") from None
    try:
        client = distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: {reason}") \
            from None
    executor = client.get_executor()
    shutdown = executor.shutdown

    def shutdown_and_close(wait=True, **kwargs):
        shutdown(wait=wait, **kwargs)
        client.close()
    executor.shutdown = shutdown_and_close
    return executor


class ProgressRelay:
    """Forwards progress updates from worker processes to a :class:`~.progress.Progress`.

    :attr:`sink` is what a job is given as its ``progress``: a picklable object with the
    ``update`` method of :class:`~.progress.Progress`, which puts each update on a queue that a
    thread of this process drains into the display.
    """
    def __init__(self, progress):
        self._progress = progress
        self._manager = multiprocessing.get_context("spawn").Manager()
        self._queue = self._manager.Queue()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()
        self.sink = _QueueSink(self._queue)

    def _drain(self):
        while True:
            try:
                item = self._queue.get()
            except (EOFError, OSError, queue.Empty):
                return
            if item is None:
                return
            key, text, done = item
            self._progress.update(key, text, done=done)

    def close(self):
        self._queue.put(None)
        self._thread.join()
        self._manager.shutdown()


class _QueueSink:
    def __init__(self, queue):
        self._queue = queue

    def update(self, key: str, text: str, *, done: bool = False):
        self._queue.put((key, text, done))


def progress_for(executor: Executor, progress):
    """``(sink, relay)``: what to give the jobs run on ``executor`` as their ``progress``, and a
    :class:`ProgressRelay` to close afterwards (or ``None``)."""
    if isinstance(executor, (InlineExecutor, ThreadPoolExecutor)):
        return progress, None
    if isinstance(executor, ProcessPoolExecutor):
        relay = ProgressRelay(progress)
        return relay.sink, relay
    return None, None
