"""Simulating a :class:`~cipher_cores.cores.gcm.core.GCM` on whole messages.

:func:`simulate_gcm` runs a sequence of :class:`~cipher_cores.cores.sim.LoadKey` and :class:`GCMMessage`
operations through the core's streams, with optional random gaps (the producer idles before a
transfer) and stalls (the consumers hold ``ready`` low), and returns each message's text, tag and
verdict with the edges of every transfer. The tests, the cycle measurements and the report use
it, on Amaranth's simulator or (``backend="cxxrtl"``) on a compiled model
(:mod:`cipher_cores.cores.gcm.sim_cxxrtl`, with the driver of
:mod:`cipher_cores.cores.sim.stream_driver`), which sees the same transfers at the same edges.
"""

from __future__ import annotations

import random as _random
from dataclasses import dataclass, field
from typing import Sequence

from amaranth.lib import data
from amaranth.sim import Simulator

from ..sim import LoadKey, stream_get, stream_monitor, stream_put
from ..sim import watchdog as _watchdog
from .core import GCMBlock, GCMTag, keep_bits


__all__ = ["GCMMessage", "MessageOutcome", "GCMRun", "Put", "message_items", "plan",
           "unpack", "simulate_gcm", "BACKENDS", "STREAMS"]


#: The simulation back ends: Amaranth's simulator, or the compiled CXXRTL model.
BACKENDS = ("python", "cxxrtl")
#: The core's streams, producer's first.
STREAMS = ("key", "start", "input", "output", "tag")


@dataclass(frozen=True)
class GCMMessage:
    """One message for :func:`simulate_gcm`.

    ``iv``, ``aad`` and ``text`` are bytes; ``text`` is the plaintext (``decrypt`` false) or the
    ciphertext. ``tag`` is the expected tag of a decryption (its length is passed with it).
    """
    iv: bytes
    aad: bytes = b""
    text: bytes = b""
    decrypt: bool = False
    tag: bytes | None = None

    def __post_init__(self):
        if self.decrypt and self.tag is None:
            raise ValueError("a decryption needs the expected tag")
        if not self.decrypt and self.tag is not None:
            raise ValueError("an encryption takes no tag")


def _part_items(part: bytes) -> list:
    if not part:
        return [(0, 0, 1)]
    items = []
    for offset in range(0, len(part), 16):
        chunk = part[offset:offset + 16]
        last = offset + 16 >= len(part)
        items.append((int.from_bytes(chunk.ljust(16, b"\0"), "big"),
                      keep_bits(len(chunk)) if last else keep_bits(16), int(last)))
    return items


def message_items(message: GCMMessage) -> tuple:
    """``(start payload, input items, text item count)`` of ``message``, items as
    ``(data, keep, last)`` tuples in the order the core takes them: IV, AAD, text, and the
    expected tag of a decryption."""
    items = _part_items(message.iv) + _part_items(message.aad)
    text_items = _part_items(message.text)
    items += text_items
    if message.decrypt:
        items.append((int.from_bytes(message.tag.ljust(16, b"\0")[:16], "big"),
                      keep_bits(min(len(message.tag), 16)), 1))
    return {"decrypt": int(message.decrypt)}, items, len(text_items)


def unpack(layout, raw: int) -> dict:
    """The fields of a packed ``layout`` value, as integers."""
    layout = data.Layout.cast(layout)
    return {name: (raw >> field.offset) & ((1 << field.width) - 1)
            for name, field in layout}


@dataclass(frozen=True)
class Put:
    """One transfer the producer makes: on ``stream`` (``"key"``, ``"start"`` or ``"input"``),
    after ``gap`` idle edges, with ``payload`` (an integer, or a dict of fields)."""
    stream: str
    payload: object
    gap: int = 0


@dataclass(frozen=True)
class MessageOutcome:
    """What the core returned for one message, with the edges of its transfers."""
    text: bytes
    tag: int
    authentic: bool
    start_edge: int
    output_edges: tuple
    tag_edge: int


@dataclass
class GCMRun:
    """The outcome of :func:`simulate_gcm`: a :class:`~cipher_cores.cores.sim.StreamLog` per stream and a
    :class:`MessageOutcome` per message."""
    logs: dict
    messages: list = field(default_factory=list)

    @property
    def violations(self) -> dict:
        """Streams on which the stream rules were broken, with the edges."""
        return {name: log.violations for name, log in self.logs.items() if log.violations}


def plan(operations: Sequence, rng: _random.Random, max_gap: int, max_stall: int) -> tuple:
    """The producer's transfers (a list of :class:`Put`), and the stalls of the ``output`` and
    ``tag`` consumers (lists, or ``None`` to hold ``ready`` high), drawn up front."""
    puts, outputs, tags = [], 0, 0

    def gap():
        return rng.randint(0, max_gap) if max_gap else 0
    for op in operations:
        if isinstance(op, LoadKey):
            puts.append(Put("key", op.key, gap()))
        elif isinstance(op, GCMMessage):
            start, items, text_items = message_items(op)
            puts.append(Put("start", start, gap()))
            puts += [Put("input", {"data": d, "keep": keep, "last": last}, gap())
                     for d, keep, last in items]
            outputs += text_items
            tags += 1
        else:
            raise TypeError(f"Operation must be a LoadKey or a GCMMessage, not {op!r}")
    if not max_stall:
        return puts, None, None
    return (puts, [rng.randint(0, max_stall) for _ in range(outputs)],
            [rng.randint(0, max_stall) for _ in range(tags)])


def _outcomes(operations, logs) -> list:
    outputs = iter(logs["output"].transfers)
    tags = iter(logs["tag"].transfers)
    starts = iter(logs["start"].transfers)
    results = []
    for op in operations:
        if not isinstance(op, GCMMessage):
            continue
        _, _, text_items = message_items(op)
        text, edges = bytearray(), []
        for _ in range(text_items):
            transfer = next(outputs)
            fields = unpack(GCMBlock(), transfer.payload)
            length = bin(fields["keep"]).count("1") if fields["last"] else 16
            text += fields["data"].to_bytes(16, "big")[:length]
            edges.append(transfer.edge)
        tag = next(tags)
        fields = unpack(GCMTag(), tag.payload)
        results.append(MessageOutcome(bytes(text), fields["tag"], bool(fields["authentic"]),
                                      next(starts).edge, tuple(edges), tag.edge))
    return results


def simulate_gcm(core, operations: Sequence, *, rng: _random.Random | None = None,
                 max_gap: int = 0, max_stall: int = 0, max_edges: int | None = None,
                 backend: str = "python", vcd: str | None = None) -> GCMRun:
    """Simulate ``core`` (a :class:`~cipher_cores.cores.gcm.core.GCM`) on :class:`~cipher_cores.cores.sim.LoadKey` and
    :class:`GCMMessage` operations, in order.

    One producer makes every transfer on ``key``, ``start`` and ``input`` in turn (a key after a
    message waits, as the core makes it, until that message's tag has left); one consumer takes
    the ``output`` items and another the tags. With ``max_gap`` / ``max_stall`` (and ``rng``)
    the producer idles 0..max_gap edges before each transfer and the consumers hold ``ready``
    low 0..max_stall edges before each one; with both zero everything runs at full speed.

    Raises :exc:`RuntimeError` if the run does not finish within ``max_edges`` edges.
    """
    if backend not in BACKENDS:
        raise ValueError(f"Simulation backend must be one of "
                         f"{', '.join(repr(name) for name in BACKENDS)}, not {backend!r}")
    operations = list(operations)
    puts, output_stalls, tag_stalls = plan(operations, rng or _random.Random(0), max_gap,
                                           max_stall)
    outputs = sum(message_items(op)[2] for op in operations if isinstance(op, GCMMessage))
    tags = sum(isinstance(op, GCMMessage) for op in operations)
    if max_edges is None:
        max_edges = (400 * len(operations) + 40 * len(puts)) * (1 + max_gap + max_stall)
    if backend == "cxxrtl":
        if vcd:
            raise ValueError("A VCD file can only be written by the 'python' backend")
        from .sim_cxxrtl import run_gcm_cxxrtl
        logs = run_gcm_cxxrtl(core, puts, outputs, tags, output_stalls, tag_stalls, max_edges)
        return GCMRun(logs, _outcomes(operations, logs))

    logs = {}
    streams = {name: getattr(core, name) for name in STREAMS}

    async def producer(ctx):
        for put in puts:
            await stream_put(ctx, streams[put.stream], put.payload, gap=put.gap)

    def consumer(name, count, stalls):
        async def run(ctx):
            if stalls is None:
                ctx.set(streams[name].ready, 1)
                while len(logs[name].transfers) < count:
                    await ctx.tick()
                return
            for stall in stalls:
                await stream_get(ctx, streams[name], stall=stall)
            await ctx.tick()
        return run

    watchdog = _watchdog(max_edges)

    sim = Simulator(core)
    sim.add_clock(1e-8)
    sim.add_testbench(stream_monitor(streams, logs), background=True)
    sim.add_testbench(watchdog, background=True)
    sim.add_testbench(producer)
    sim.add_testbench(consumer("output", outputs, output_stalls))
    sim.add_testbench(consumer("tag", tags, tag_stalls))
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()
    return GCMRun(logs, _outcomes(operations, logs))

