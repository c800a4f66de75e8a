"""A progress display for builds that run for minutes, several at a time.

On a terminal, :class:`Progress` keeps one line per job (what it is doing and for how long) and
redraws them in place every second. Elsewhere (a log file, a pipe, CI) it prints a line each time
a job changes step, and every 30 seconds or so a line for each job still running, so that a
three-minute place-and-route is not silent.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


__all__ = ["Progress", "format_duration"]


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class Progress:
    """Thread-safe job status lines.

    Parameters
    ----------
    stream : text file
        Where to write (default: standard error).
    live : bool or None
        Redraw lines in place; by default when ``stream`` is a terminal.
    enabled : bool
        ``False`` makes every method a no-op.
    heartbeat : float
        Without ``live``: seconds after a job's last line before a line says it is still
        running (and again every ``heartbeat`` seconds).
    """
    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None,
                 enabled: bool = True, heartbeat: float = 30.0):
        self._stream = sys.stderr if stream is None else stream
        if live is None:
            live = hasattr(self._stream, "isatty") and self._stream.isatty()
        self._live = live
        self._enabled = enabled
        self._lock = threading.Lock()
        self._jobs = {}         # key -> [text, step start, job start, finished]
        self._drawn = 0
        self._start = time.monotonic()
        self._ticker = None
        self._stop = threading.Event()
        self._heartbeat = heartbeat
        self._last_line = {}    # key -> when its last line was printed (not live)

    def __enter__(self):
        if self._enabled:
            target = self._tick if self._live else self._beat
            self._ticker = threading.Thread(target=target, daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            self._draw()

    def _tick(self):
        while not self._stop.wait(1.0):
            with self._lock:
                self._draw()

    def _beat(self):
        # Not a terminal: a line for each running job that has been quiet for a heartbeat.
        while not self._stop.wait(min(1.0, self._heartbeat / 4)):
            with self._lock:
                now = time.monotonic()
                for key, (text, step_start, job_start, finished) in self._jobs.items():
                    if finished is None and now - self._last_line[key] >= self._heartbeat:
                        self._print_line(key, f"{text} (still running, "
                                              f"{format_duration(now - step_start)} in this "
                                              f"step)", now)

    def _print_line(self, key: str, text: str, now: float):
        elapsed = format_duration(now - self._start)
        self._stream.write(f"[{elapsed:>6}] {key}: {text}\n")
        self._stream.flush()
        self._last_line[key] = now

    def _line(self, key, job, now) -> str:
        text, step_start, job_start, finished = job
        clock = format_duration((finished or now) - job_start)
        return f"  {key:<34} {clock:>7}  {text}"

    def _draw(self):
        if not (self._enabled and self._live):
            return
        now = time.monotonic()
        out = []
        if self._drawn:
            out.append(f"\x1b[{self._drawn}F")
        for key, job in self._jobs.items():
            out.append(self._line(key, job, now) + "\x1b[K\n")
        self._drawn = len(self._jobs)
        self._stream.write("".join(out))
        self._stream.flush()

    def update(self, key: str, text: str, *, done: bool = False):
        """Set job ``key``'s status to ``text`` (``done`` stops its clock)."""
        if not self._enabled:
            return
        with self._lock:
            now = time.monotonic()
            job = self._jobs.get(key)
            if job is None:
                job = self._jobs[key] = [text, now, now, None]
            job[0], job[1] = text, now
            if done:
                job[3] = now
            if self._live:
                self._draw()
            else:
                self._print_line(key, text, now)

    def message(self, text: str):
        """A line that is not a job's status (a warning, a note)."""
        if not self._enabled:
            return
        with self._lock:
            if self._live and self._drawn:
                # Print above the job lines, then redraw them.
                self._stream.write(f"\x1b[{self._drawn}F\x1b[J")
                self._drawn = 0
            self._stream.write(text + "\n")
            self._draw()
            self._stream.flush()
