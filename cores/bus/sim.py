"""Driving a :class:`~cipher_cores.cores.bus.CipherPeripheral` in simulation as firmware would: a Wishbone
master making one access at a time, with the calls a driver makes (write the key, start a message,
stream blocks in and results out while polling ``STATUS``).

:func:`simulate_firmware` runs an async firmware program against a peripheral;
:func:`stream_message` is the program the report measures the peripheral with (see
:func:`cipher_cores.scripts.flow.measure.measure_cycles`), and the tests drive the peripheral through the same
:class:`WishboneFirmware`.

Edges are clock edges of the ``sync`` domain, counted from 1 at the first edge of the simulation
(as in :mod:`cipher_cores.cores.sim`); :attr:`WishboneFirmware.edge` is the number of edges so far.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable, Sequence

from amaranth.hdl import ClockDomain, Fragment, Module, Signal
from amaranth.sim import Simulator

from ..modes import Mode
from ..sim import stream_monitor
from ..sim import watchdog as _watchdog
from .regmap import register


__all__ = ["WishboneFirmware", "AXI4LiteFirmware", "firmware_class", "simulate_firmware",
           "BusRun", "stream_message", "dma_message"]


def _bit(register_name: str, field_name: str) -> int:
    return register(register_name).field(field_name).mask


class WishboneFirmware:
    """A Wishbone master in a testbench, with the calls a driver would make.

    Each access drives ``cyc``/``stb`` and waits for ``ack`` (two edges with this peripheral,
    one access at a time, as a CPU without a write buffer makes them).

    Attributes
    ----------
    ctx :
        The testbench context.
    dut : :class:`~cipher_cores.cores.bus.CipherPeripheral`
    rst : :class:`Signal`
        The ``sync`` domain's reset (a program may pulse it).
    memories : :class:`dict`
        The design's memories by hierarchical name (``"dout/storage"``), to read their contents
        (``ctx.get(memory[i])``) without going through the bus.
    accesses : :class:`int`
        Bus accesses made so far.
    result_edges, pending_at_result : :class:`list`
        For each block read by :meth:`stream`: the edge its last word was read on, and how many
        blocks were still to be written then.
    """
    def __init__(self, ctx, dut, *, rst=None, edges: Signal | None = None,
                 memories: dict | None = None):
        self.ctx, self.dut, self.bus = ctx, dut, dut.bus
        self.rst = rst
        self.memories = {} if memories is None else memories
        self._edges = edges
        self.accesses = 0
        self.result_edges = []
        self.pending_at_result = []

    @property
    def edge(self) -> int:
        """Edges of the ``sync`` clock so far."""
        if self._edges is None:
            raise RuntimeError("this firmware has no edge counter")
        return self.ctx.get(self._edges)

    async def access(self, address: int, value: int | None = None, sel: int = 0b1111) -> int:
        """Read (``value`` is ``None``) or write the word at byte ``address``; returns the data
        read (0 for a write)."""
        ctx, bus = self.ctx, self.bus
        ctx.set(bus.adr, address // 4)
        ctx.set(bus.we, value is not None)
        ctx.set(bus.dat_w, value or 0)
        ctx.set(bus.sel, sel)
        ctx.set(bus.cyc, 1)
        ctx.set(bus.stb, 1)
        data, = await ctx.tick().sample(bus.dat_r).until(bus.ack)
        ctx.set(bus.cyc, 0)
        ctx.set(bus.stb, 0)
        self.accesses += 1
        return data

    async def write(self, name: str, value: int, index: int = 0, sel: int = 0b1111):
        await self.access(register(name).offsets()[index], value, sel)

    async def read(self, name: str, index: int = 0) -> int:
        return await self.access(register(name).offsets()[index])

    async def set_key(self, key: int, key_bits: int):
        for index in range(-(-key_bits // 32)):
            await self.write("KEY", (key >> (32 * index)) & 0xffffffff, index)

    async def set_iv(self, iv: int, words: int):
        for index in range(words):
            await self.write("IV", (iv >> (32 * index)) & 0xffffffff, index)

    async def start(self, mode: Mode, decrypt: bool = False, keysel: int = 0,
                    length: int | None = None):
        """Write ``LENGTH`` (if given), then ``CTRL`` with ``START``."""
        if length is not None:
            await self.write("LENGTH", length)
        await self.write("CTRL", mode.value | (int(decrypt) << 3) | (keysel << 4) |
                         _bit("CTRL", "START"))

    async def put_block(self, block: int):
        """Write one block to ``DIN``, most significant word first."""
        words = self.dut.block_words
        for index in range(words):
            await self.write("DIN", (block >> (32 * (words - 1 - index))) & 0xffffffff)

    async def get_block(self) -> int:
        """Read one block from ``DOUT``, most significant word first."""
        words, block = self.dut.block_words, 0
        for _ in range(words):
            block = (block << 32) | await self.read("DOUT")
        return block

    async def stream(self, blocks: Sequence[int], expect: int | None = None) -> list:
        """Write ``blocks`` whenever there is space and read results whenever a block is ready,
        polling ``STATUS``, until ``expect`` results (one per block by default) are read."""
        results, pending = [], list(blocks)
        while len(results) < (len(blocks) if expect is None else expect):
            status = await self.read("STATUS")
            if pending and status & _bit("STATUS", "IN_SPACE"):
                await self.put_block(pending.pop(0))
            if status & _bit("STATUS", "OUT_READY"):
                results.append(await self.get_block())
                if self._edges is not None:
                    self.result_edges.append(self.edge)
                    self.pending_at_result.append(len(pending))
        return results

    async def message(self, mode: Mode, blocks: Sequence[int], *, decrypt: bool = False,
                      iv: int = 0, keysel: int = 0) -> list:
        """Write the IV, start a message of ``blocks`` and :meth:`stream` it."""
        await self.set_iv(iv, self.dut.block_words)
        await self.start(mode, decrypt, keysel, length=len(blocks))
        return await self.stream(blocks)

    async def gcm_message(self, *, iv: bytes, aad: bytes, text: bytes, decrypt: bool = False,
                          expected_tag: bytes | None = None, keysel: int = 0,
                          prefill: bool = False) -> tuple:
        """An AES-GCM message, as a driver would run it: the 12-byte IV into ``IV3..IV1``,
        ``AAD_BYTES``, ``TEXT_BYTES`` (and for a decryption ``TAG_EXPECTED`` and
        ``CTRL.TAG_BYTES`` from ``expected_tag``), ``CTRL`` with ``MODE`` GCM and ``START``,
        then the AAD and the text (each padded to whole blocks) streamed in while the results are
        streamed out (:meth:`stream`'s polling), then ``STATUS`` polled until ``TAG_READY``.
        With ``prefill``, the first blocks go into ``DIN`` before ``START``, as many as fit.

        Returns ``(result, tag, status)``: the result blocks as bytes (``len(text)`` of them
        rounded up to whole blocks), the ``TAG`` registers as 16 bytes, and the last ``STATUS``
        read.
        """
        from .peripheral import GCM_MODE
        if len(iv) != 12:
            raise ValueError(f"iv must be 12 bytes, not {len(iv)}")
        await self.set_iv(int.from_bytes(iv, "big") << 32, 4)
        await self.write("AAD_BYTES", len(aad))
        await self.write("TEXT_BYTES", len(text))
        tag_bytes = 0
        if decrypt:
            tag_bytes = len(expected_tag) % 16
            padded = int.from_bytes(expected_tag.ljust(16, b"\0"), "big")
            for index in range(4):
                await self.write("TAG_EXPECTED", (padded >> (32 * index)) & 0xffffffff, index)

        def blocks(data):
            data = data + bytes(-len(data) % 16)
            return [int.from_bytes(data[i:i + 16], "big") for i in range(0, len(data), 16)]
        pending = blocks(aad) + blocks(text)
        expect = -(-len(text) // 16)
        if prefill:
            for _ in range(min(len(pending), self.dut.buffer_words // 4)):
                await self.put_block(pending.pop(0))
        ctrl = register("CTRL")
        await self.write("CTRL", (GCM_MODE << ctrl.field("MODE").offset) |
                         (int(decrypt) << ctrl.field("DECRYPT").offset) |
                         (keysel << ctrl.field("KEYSEL").offset) |
                         (tag_bytes << ctrl.field("TAG_BYTES").offset) | _bit("CTRL", "START"))
        results = []
        while pending or len(results) < expect:
            status = await self.read("STATUS")
            if pending and status & _bit("STATUS", "IN_SPACE"):
                await self.put_block(pending.pop(0))
            if len(results) < expect and status & _bit("STATUS", "OUT_READY"):
                results.append(await self.get_block())
        while not (status := await self.read("STATUS")) & _bit("STATUS", "TAG_READY"):
            pass
        tag = 0
        for index in range(4):
            tag |= await self.read("TAG", index) << (32 * index)
        result = b"".join(block.to_bytes(16, "big") for block in results)
        return result, tag.to_bytes(16, "big"), status

    async def dma_message(self, mode: Mode, blocks: int, *, source: int, destination: int,
                          decrypt: bool = False, keysel: int = 0, little_endian: bool = False,
                          poll: bool = True):
        """Start a message of ``blocks`` blocks moved by the DMA from ``source`` to
        ``destination`` (byte addresses), with the key and IV already written; then, with
        ``poll``, read ``STATUS`` until ``DONE`` and return it."""
        ctrl = register("CTRL")
        await self.write("LENGTH", blocks)
        await self.write("DMA_SOURCE", source)
        await self.write("DMA_DESTINATION", destination)
        await self.write("CTRL", mode.value | (int(decrypt) << ctrl.field("DECRYPT").offset) |
                         (keysel << ctrl.field("KEYSEL").offset) | _bit("CTRL", "DMA") |
                         (_bit("CTRL", "LITTLE_ENDIAN") if little_endian else 0) |
                         _bit("CTRL", "START"))
        if poll:
            while not (status := await self.read("STATUS")) & _bit("STATUS", "DONE"):
                pass
            return status

    async def wait_idle(self):
        """Poll ``STATUS`` until ``BUSY`` is low."""
        while await self.read("STATUS") & _bit("STATUS", "BUSY"):
            pass


class AXI4LiteFirmware(WishboneFirmware):
    """The same driver on the AXI4-Lite form of the peripheral (``protocol="axi4-lite"``): each
    access sends its address (and data) and waits for the response before the next, as a CPU
    without posted writes makes them (two edges with this peripheral, as on Wishbone).

    ``responses`` holds each access's ``BRESP``/``RRESP`` (0 ``OKAY``, 2 ``SLVERR``).
    """
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.responses = []

    async def access(self, address: int, value: int | None = None, sel: int = 0b1111) -> int:
        ctx, bus = self.ctx, self.bus
        if value is None:
            ctx.set(bus.araddr, address)
            ctx.set(bus.arvalid, 1)
            ctx.set(bus.rready, 1)
            await ctx.tick().until(bus.arready)
            ctx.set(bus.arvalid, 0)
            data, response = await ctx.tick().sample(bus.rdata, bus.rresp).until(bus.rvalid)
        else:
            ctx.set(bus.awaddr, address)
            ctx.set(bus.wdata, value)
            ctx.set(bus.wstrb, sel)
            ctx.set(bus.awvalid, 1)
            ctx.set(bus.wvalid, 1)
            ctx.set(bus.bready, 1)
            # Address and data are taken together, on one edge.
            await ctx.tick().until(bus.awready & bus.wready)
            ctx.set(bus.awvalid, 0)
            ctx.set(bus.wvalid, 0)
            data = 0
            response, = await ctx.tick().sample(bus.bresp).until(bus.bvalid)
        self.accesses += 1
        self.responses.append(response)
        return data


def firmware_class(dut) -> type:
    """The driver of peripheral ``dut``'s bus: :class:`WishboneFirmware` or
    :class:`AXI4LiteFirmware`."""
    return AXI4LiteFirmware if getattr(dut, "protocol", "wishbone") == "axi4-lite" \
        else WishboneFirmware


def _memories(fragment) -> dict:
    # Memories by hierarchical name, for programs that inspect their contents.
    from amaranth.hdl._mem import MemoryInstance
    found = {}

    def walk(frag, path):
        for sub, name, *_ in frag.subfragments:
            if isinstance(sub, MemoryInstance):
                found["/".join(path[1:] + (name,))] = sub._data
            walk(sub, path + (name,))
    walk(fragment, ())
    return found


def simulate_firmware(dut, program: Callable[[WishboneFirmware], Awaitable], *,
                      max_edges: int = 40_000, background: Sequence = (), memory=None):
    """Simulate peripheral ``dut`` driven by ``program(fw)``, an async function given a
    :class:`WishboneFirmware` (an :class:`AXI4LiteFirmware` for an AXI4-Lite peripheral); ends when the program returns. :exc:`RuntimeError` if it has not
    within ``max_edges`` edges. ``background`` holds further background testbenches (monitors);
    ``memory`` a :class:`~cipher_cores.cores.bus.sim_memory.WishboneMemory` on the peripheral's
    DMA port (``dut.dma``), for ``dma=True`` builds.
    """
    m = Module()
    m.domains.sync = domain = ClockDomain()
    m.submodules.dut = dut
    edges = Signal(32, reset_less=True)
    m.d.sync += edges.eq(edges + 1)
    fragment = Fragment.get(m, None)
    sim = Simulator(fragment)
    sim.add_clock(1e-8)
    memories = _memories(fragment)

    async def testbench(ctx):
        await program(firmware_class(dut)(ctx, dut, rst=domain.rst, edges=edges,
                                          memories=memories))

    watchdog = _watchdog(max_edges, "the firmware")

    if memory is not None:
        memory.add_to(sim)
    sim.add_testbench(watchdog, background=True)
    for bench in background:
        sim.add_testbench(bench, background=True)
    sim.add_testbench(testbench)
    sim.run()


@dataclass
class BusRun:
    """What :func:`stream_message` saw.

    ``result_edges`` are the edges on which the last word of each result was read, and
    ``pending_at_result`` how many blocks the firmware still had to write at each of those reads;
    ``start_to_input`` counts edges from the ``START`` write (which loads the key) to the first
    block entering the core, that block having been written before ``START``; ``latency`` counts
    edges from the last word of a one-block message written (key loaded, peripheral idle) to the
    last word of its result read, ``STATUS`` polled in between (``latency_result`` is that
    result). ``accesses`` and ``edges`` are the totals of the whole run.
    """
    results: list
    result_edges: list
    pending_at_result: list
    start_to_input: int
    latency: int
    latency_result: int
    accesses: int
    edges: int

    def intervals(self) -> list:
        """Edges between the reads of successive results."""
        return [b - a for a, b in zip(self.result_edges, self.result_edges[1:])]

    def steady_intervals(self) -> list:
        """The :meth:`intervals` ending at a result read while blocks were still to be written:
        the rate of a long message, without the fill before the first result and the drain after
        the last block written (when the firmware only reads)."""
        return [interval for interval, pending in
                zip(self.intervals(), self.pending_at_result[1:]) if pending]


def _timed_run(dut, program, max_edges: int, run: dict, *, memory=None) -> BusRun:
    """Simulate ``program``, which fills ``run`` (``start``, ``results``, ``result_edges``,
    ``pending``, ``latency``, ``latency_result``, ``accesses``, ``edges``), watching the
    blocks entering the core for :attr:`BusRun.start_to_input`."""
    logs = {}
    monitor = stream_monitor({"input": dut.engine.input}, logs)
    simulate_firmware(dut, program, max_edges=max_edges, background=[monitor], memory=memory)
    first_input = next(edge for edge in logs["input"].edges if edge > run["start"])
    return BusRun(results=run["results"], result_edges=run["result_edges"],
                  pending_at_result=run["pending"],
                  start_to_input=first_input - run["start"], latency=run["latency"],
                  latency_result=run["latency_result"], accesses=run["accesses"],
                  edges=run["edges"])


def stream_message(dut, *, key: int, key_bits: int, mode: Mode, decrypt: bool, iv: int,
                   blocks: Sequence[int], max_edges: int | None = None) -> BusRun:
    """Run one message through peripheral ``dut`` as a driver would, and time it.

    The firmware writes the key, the IV and ``LENGTH``, writes as many blocks as the input FIFO
    and the block register hold, writes ``CTRL.START``, then streams the rest (:meth:`WishboneFirmware.stream`:
    poll ``STATUS``; write a block if there is space; read a block if one is ready). Then, the key
    loaded and the peripheral idle, a one-block message of the first block: written, ``STATUS``
    polled until ``OUT_READY``, read (the :attr:`BusRun.latency`).
    """
    blocks = list(blocks)
    words = dut.block_words
    if max_edges is None:
        max_edges = 2_000 + 200 * (len(blocks) + 1) * words
    run = {}

    async def program(fw):
        await fw.set_key(key, key_bits)
        await fw.set_iv(iv, words)
        await fw.write("LENGTH", len(blocks))
        prefill = min(len(blocks), dut.buffer_words // words)
        for block in blocks[:prefill]:
            await fw.put_block(block)
        await fw.start(mode, decrypt)
        run["start"] = fw.edge
        run["results"] = await fw.stream(blocks[prefill:], expect=len(blocks))
        run["result_edges"] = list(fw.result_edges)
        run["pending"] = list(fw.pending_at_result)
        await fw.wait_idle()
        await fw.set_iv(iv, words)      # the IV registers now hold the chaining value
        await fw.start(mode, decrypt, length=1)
        await fw.put_block(blocks[0])
        written = fw.edge
        while not await fw.read("STATUS") & _bit("STATUS", "OUT_READY"):
            pass
        run["latency_result"] = await fw.get_block()
        run["latency"] = fw.edge - written
        run["accesses"] = fw.accesses
        run["edges"] = fw.edge

    return _timed_run(dut, program, max_edges, run)


def dma_message(dut, *, key: int, key_bits: int, mode: Mode, decrypt: bool, iv: int,
                blocks: Sequence[int], source: int = 0x1000, destination: int = 0x8000,
                max_edges: int | None = None) -> BusRun:
    """Run one message through a ``dma=True`` peripheral ``dut`` moved by its DMA, and time it.

    The firmware writes the key, the IV, ``LENGTH``, ``DMA_SOURCE`` and ``DMA_DESTINATION``
    and starts; the DMA reads the blocks from a
    :class:`~cipher_cores.cores.bus.sim_memory.WishboneMemory` that ends each access on the edge
    its strobe is seen, and writes the results back; the firmware polls ``STATUS`` until
    ``DONE``. Then, the key loaded and the peripheral idle, a one-block message of the first
    block (:attr:`BusRun.latency`: from the edge its ``START`` write was acknowledged to the edge
    the last word of its result was written). :attr:`BusRun.result_edges` are the edges the last
    word of each result was written; :attr:`BusRun.pending_at_result` the blocks the DMA had
    still to read then.
    """
    from .sim_memory import WishboneMemory

    blocks = list(blocks)
    words = dut.block_words
    mask = (1 << 32) - 1
    memory = WishboneMemory(dut.dma)
    memory.load(source, [(block >> (32 * (words - 1 - j))) & mask
                         for block in blocks for j in range(words)])
    if max_edges is None:
        max_edges = 2_000 + 200 * (len(blocks) + 1) * words
    run = {}

    def written_blocks(first_access):
        values = memory.dump(destination, len(blocks) * words)
        return [sum(values[i + j] << (32 * (words - 1 - j)) for j in range(words))
                for i in range(0, len(values), words)], memory.writes[first_access:]

    async def program(fw):
        await fw.set_key(key, key_bits)
        await fw.set_iv(iv, words)
        await fw.dma_message(mode, len(blocks), source=source, destination=destination,
                             decrypt=decrypt, poll=False)
        run["start"] = fw.edge
        while not await fw.read("STATUS") & _bit("STATUS", "DONE"):
            pass
        run["results"], writes = written_blocks(0)
        run["result_edges"] = [access.edge for access in writes][words - 1::words]
        reads = [access.edge for access in memory.reads]
        run["pending"] = [len(blocks) - sum(1 for edge in reads if edge <= at) // words
                          for at in run["result_edges"]]
        await fw.set_iv(iv, words)      # the IV registers now hold the chaining value
        first_write = len(memory.writes)
        await fw.dma_message(mode, 1, source=source, destination=destination,
                             decrypt=decrypt, poll=False)
        started = fw.edge
        while not await fw.read("STATUS") & _bit("STATUS", "DONE"):
            pass
        results, writes = written_blocks(first_write)
        run["latency_result"] = results[0]
        run["latency"] = writes[-1].edge - started
        run["accesses"] = fw.accesses
        run["edges"] = fw.edge

    return _timed_run(dut, program, max_edges, run, memory=memory)
