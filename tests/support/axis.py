"""Driving :class:`~cipher_cores.cores.axis.AXIStreamCipher` in simulation: AXI byte order, a
producer of keys and blocks, a consumer with random ``tready``, and a monitor that logs every
transfer and checks the AXI4-Stream rules on the result channel.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

from cipher_cores.cores.sim import simulator_with_reset
from cipher_cores.cores.sim import watchdog as _watchdog

from .helpers import reference


__all__ = ["to_axis", "from_axis", "Key", "Block", "AxisLog", "run_axis", "expected_axis",
           "random_items"]


def to_axis(value: int, bits: int) -> int:
    """``value`` (our big-endian integer) as AXI4-Stream ``tdata``: its most significant byte in
    byte lane 0."""
    return int.from_bytes(value.to_bytes(bits // 8, "big"), "little")


def from_axis(tdata: int, bits: int) -> int:
    """The inverse of :func:`to_axis`."""
    return int.from_bytes(tdata.to_bytes(bits // 8, "little"), "big")


class Key(NamedTuple):
    """A key transfer (the key as our integer; the producer puts it in AXI byte order)."""
    key: int


class Block(NamedTuple):
    """A block transfer: the block as our integer, the direction (``tuser``) and ``tlast``."""
    block: int
    decrypt: bool = False
    last: bool = False


@dataclass
class AxisLog:
    """Every transfer of a run, as ``(edge, ...)`` tuples with ``tdata`` as the wire has it, and
    the AXI4-Stream rules the result channel broke (``"edge N: rule"``)."""
    keys: list = field(default_factory=list)            # (edge, tdata)
    blocks: list = field(default_factory=list)          # (edge, tdata, tuser, tlast)
    results: list = field(default_factory=list)         # (edge, tdata, tlast)
    violations: list = field(default_factory=list)
    max_in_flight: int = 0

    def result_values(self, block_bits: int) -> list:
        """``(result as our integer, tlast)`` of each result, in order."""
        return [(from_axis(tdata, block_bits), last) for _, tdata, last in self.results]

    @property
    def latencies(self) -> list:
        return [out[0] - inp[0] for inp, out in zip(self.blocks, self.results)]

    @property
    def input_intervals(self) -> list:
        return [b[0] - a[0] for a, b in zip(self.blocks, self.blocks[1:])]

    @property
    def output_intervals(self) -> list:
        return [b[0] - a[0] for a, b in zip(self.results, self.results[1:])]


def expected_axis(config, items: Sequence) -> list:
    """``(result, tlast)`` of each :class:`Block` of ``items``, from
    :func:`~tests.support.helpers.reference` under the key before it (an encrypt-only
    configuration encrypts every block)."""
    expected, key = [], None
    for item in items:
        if isinstance(item, Key):
            key = item.key
        else:
            expected.append((reference(config, key, item.block, item.decrypt), item.last))
    return expected


def random_items(config, rng: random.Random, *, keys: int, blocks_per_key: int) -> list:
    """``keys`` random keys, each followed by ``blocks_per_key`` random blocks in random
    directions with random ``tlast``."""
    items = []
    for _ in range(keys):
        items.append(Key(rng.getrandbits(config.key_bits)))
        items += [Block(rng.getrandbits(config.block_bits), rng.random() < 0.5,
                        rng.random() < 0.3) for _ in range(blocks_per_key)]
    return items


def run_axis(dut, items: Sequence, *, rng: random.Random | None = None, max_gap: int = 0,
             ready_probability: float = 1.0, max_edges: int | None = None,
             stall_edges: int = 0) -> AxisLog:
    """Simulate ``dut`` (an :class:`~cipher_cores.cores.axis.AXIStreamCipher`) on ``items``
    (:class:`Key` and :class:`Block`, put in order on their channels, keys and blocks in AXI
    byte order), and return the :class:`AxisLog`.

    The producer waits a random 0 to ``max_gap`` edges before raising ``tvalid`` for each item
    (``tvalid`` then holds until the transfer). The consumer holds ``m_axis_tready`` low for the
    first ``stall_edges`` edges, then drives it high at each edge with ``ready_probability``.
    Everything random is drawn from ``rng``."""
    rng = random.Random(0) if rng is None else rng
    items = list(items)
    block_count = sum(isinstance(item, Block) for item in items)
    gaps = [rng.randint(0, max_gap) for _ in items]
    if max_edges is None:
        per_item = dut.latency + dut.key_load_cycles + max_gap + 16
        max_edges = 4 * (len(items) + 4) * per_item + stall_edges
        if ready_probability < 1:
            max_edges = int(max_edges / ready_probability)
    log = AxisLog()

    async def producer(ctx):
        for item, gap in zip(items, gaps):
            for _ in range(gap):
                await ctx.tick()
            if isinstance(item, Key):
                valid, ready = dut.s_axis_key_tvalid, dut.s_axis_key_tready
                ctx.set(dut.s_axis_key_tdata, to_axis(item.key, dut.key_bits))
            else:
                valid, ready = dut.s_axis_tvalid, dut.s_axis_tready
                ctx.set(dut.s_axis_tdata, to_axis(item.block, dut.block_bits))
                ctx.set(dut.s_axis_tuser, int(item.decrypt))
                ctx.set(dut.s_axis_tlast, int(item.last))
            ctx.set(valid, 1)
            while True:
                _, _, transferred = await ctx.tick().sample(ready)
                if transferred:
                    break
            ctx.set(valid, 0)

    async def consumer(ctx):
        ctx.set(dut.m_axis_tready, 0)
        for _ in range(stall_edges):
            await ctx.tick()
        while len(log.results) < block_count:
            ctx.set(dut.m_axis_tready, int(rng.random() < ready_probability))
            await ctx.tick()
        await ctx.tick()

    async def monitor(ctx):
        watched = [dut.s_axis_key_tvalid, dut.s_axis_key_tready, dut.s_axis_key_tdata,
                   dut.s_axis_tvalid, dut.s_axis_tready, dut.s_axis_tdata, dut.s_axis_tuser,
                   dut.s_axis_tlast, dut.m_axis_tvalid, dut.m_axis_tready, dut.m_axis_tdata,
                   dut.m_axis_tlast]
        edge, pending, in_flight = 0, None, 0
        async for _, rst, *values in ctx.tick().sample(*watched):
            edge += 1
            (kvalid, kready, kdata, svalid, sready, sdata, suser, slast,
             mvalid, mready, mdata, mlast) = values
            if pending is not None and (not mvalid or (mdata, mlast) != pending):
                log.violations.append(f"edge {edge}: m_axis changed before the transfer")
            pending = (mdata, mlast) if mvalid and not mready else None
            if kvalid and kready:
                log.keys.append((edge, kdata))
            if svalid and sready:
                log.blocks.append((edge, sdata, suser, slast))
                in_flight += 1
            if mvalid and mready:
                log.results.append((edge, mdata, mlast))
                in_flight -= 1
            log.max_in_flight = max(log.max_in_flight, in_flight)

    sim, _ = simulator_with_reset(dut)
    sim.add_testbench(monitor, background=True)
    sim.add_testbench(_watchdog(max_edges, "the AXI4-Stream run"), background=True)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.run()
    return log
