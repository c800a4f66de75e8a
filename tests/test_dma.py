# amaranth: UnusedElaboratable=no
"""The Wishbone DMA (:class:`~cipher_cores.cores.bus.dma.WishboneDMA`) against the simulated memory
(:class:`~cipher_cores.cores.bus.sim_memory.WishboneMemory`), with testbenches that consume the
words it reads and produce the words it writes. Transfers read and write the same number of
words (as a block mode does) or different numbers (as AES-GCM, which reads its additional data
and its text but writes only the results of the text).

Edges are counted from 1 at the first edge of the simulation; every test starts its transfer on
edge 1 (``start`` is set before it), so the first access can end on edge 2.
"""

import random
from dataclasses import dataclass

import pytest
from amaranth.hdl import ClockDomain, Module, Signal
from amaranth.lib import fifo, wiring
from amaranth.sim import Simulator

from cipher_cores.cores.bus import WishboneDMA
from cipher_cores.cores.bus.sim_memory import Access, WishboneMemory
from cipher_cores.cores.bus.wishbone import WishboneSignature
from cipher_cores.cores.sim import stream_monitor, watchdog

from .support.helpers import stream_get, stream_put, ticks, wait_for


SOURCE = 0x0000_4000
DESTINATION = 0x8000_0100


def source_words(count: int) -> list:
    return [(0x5a00_0000 + 0x0101_0101 * index) & 0xffff_ffff for index in range(count)]


def result(word: int) -> int:
    """What the tests' stand-in for the cipher makes of a word read."""
    return word ^ 0xffff_ffff


def results(words: list) -> list:
    return [result(word) for word in words]


def extra(index: int) -> int:
    """The ``index``-th word the tests' stand-in for the cipher writes (when it writes more words
    than it reads) that does not come from a word read."""
    return 0xc0de_0000 + index


def skipped(read_count: int, write_count: int) -> int:
    """How many of the first words read the stand-in for the cipher answers with no word written
    (as GCM reads its additional data): the excess of reads over writes."""
    return max(read_count - write_count, 0)


def loopback_word(read: list, read_count: int, write_count: int, index: int) -> int:
    """The ``index``-th word the stand-in for the cipher writes, ``read`` being the words read:
    the results of the last ``write_count`` words read, then (past the words read) words of its
    own."""
    position = skipped(read_count, write_count) + index
    return result(read[position]) if position < read_count else extra(index)


def loopback_results(read_count: int, write_count: int) -> list:
    """The words a transfer of the source words with the stand-in for the cipher writes."""
    read = source_words(read_count)
    return [loopback_word(read, read_count, write_count, index) for index in range(write_count)]


# --- the bench ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Edge:
    """The DMA's ports as sampled at one edge."""
    cyc: int
    stb: int
    we: int
    adr: int
    dat_w: int
    sel: int
    ack: int
    err: int
    start: int
    abort: int
    busy: int
    done: int
    bus_error: int
    misaligned: int
    read_valid: int
    read_ready: int
    write_valid: int
    write_ready: int


def _ports(dma) -> list:
    bus = dma.bus
    return [bus.cyc, bus.stb, bus.we, bus.adr, bus.dat_w, bus.sel, bus.ack, bus.err, dma.start,
            dma.abort, dma.busy, dma.done, dma.bus_error, dma.misaligned, dma.read_words.valid,
            dma.read_words.ready, dma.write_words.valid, dma.write_words.ready]


@dataclass
class Run:
    trace: list         # Edge per edge: trace[edge - 1]
    memory: WishboneMemory
    read_log: object    # the StreamLog of read_words

    def edges(self, port: str) -> list:
        """The edges at which ``port`` (an :class:`Edge` field) was sampled high."""
        return [index + 1 for index, edge in enumerate(self.trace) if getattr(edge, port)]


def simulate(dma, memory, *testbenches, background=(), design=None, max_edges=3000) -> Run:
    """Run ``testbenches`` (until they all return) and ``background`` ones with the DMA and the
    memory, sampling the DMA's ports at every edge. ``design`` is the top-level elaboratable
    when the DMA sits inside one."""
    sim = Simulator(design if design is not None else dma)
    sim.add_clock(1e-8)
    memory.add_to(sim)
    trace = []
    logs = {}

    async def monitor(ctx):
        async for _, _, *values in ctx.tick().sample(*_ports(dma)):
            trace.append(Edge(*(int(value) for value in values)))

    sim.add_testbench(monitor, background=True)
    sim.add_testbench(stream_monitor({"read": dma.read_words}, logs), background=True)
    sim.add_testbench(watchdog(max_edges, "the DMA test"), background=True)
    for testbench in testbenches:
        sim.add_testbench(testbench)
    for testbench in background:
        sim.add_testbench(testbench, background=True)
    run = Run(trace, memory, logs["read"])
    sim.run()
    return run


def control(dma, read_count, write_count, *, source=SOURCE, destination=DESTINATION,
            edges_after=2, state: dict | None = None):
    """A testbench that starts a transfer on edge 1 and returns ``edges_after`` edges after the
    first edge at which ``done`` is high; then fills ``state`` with :func:`registers`."""
    async def testbench(ctx):
        await start(ctx, dma, read_count, write_count, source=source, destination=destination)
        await wait_for(ctx, dma.done)
        await ticks(ctx, edges_after)
        if state is not None:
            state.update(registers(ctx, dma))
    return testbench


def registers(ctx, dma) -> dict:
    """The DMA's :meth:`~WishboneDMA.secret_state` and whether its read register is full."""
    state = {name: ctx.get(signal) for name, signal in dma.secret_state().items()}
    state["read valid"] = ctx.get(dma.read_words.valid)
    return state


ZEROED = {"source": 0, "destination": 0, "reads done": 0, "writes done": 0, "read count": 0,
          "write count": 0, "data": 0, "read valid": 0}


async def start(ctx, dma, read_count, write_count, *, source=SOURCE, destination=DESTINATION):
    ctx.set(dma.source, source)
    ctx.set(dma.destination, destination)
    ctx.set(dma.read_count, read_count)
    ctx.set(dma.write_count, write_count)
    ctx.set(dma.start, 1)
    await ctx.tick()
    ctx.set(dma.start, 0)


def consumer(dma, received: list, *, rng=None, max_stall=3):
    """Takes every word of ``read_words`` into ``received``, after a random stall each (none
    without ``rng``: ``ready`` stays high)."""
    async def testbench(ctx):
        while True:
            stall = rng.randrange(max_stall + 1) if rng else 0
            received.append(await stream_get(ctx, dma.read_words, stall=stall))
    return testbench


def producer(dma, count: int, word, *, rng=None, max_gap=3, after: list | None = None,
             needed=lambda index: index + 1):
    """Offers ``count`` words on ``write_words``, ``word(i)`` the ``i``-th, after a random gap
    each (none without ``rng``: ``valid`` stays high); with ``after``, word ``i`` only once
    ``after`` holds ``needed(i)`` words (as a cipher answers the words it was given)."""
    async def testbench(ctx):
        for index in range(count):
            while after is not None and len(after) < needed(index):
                await ctx.tick()
            gap = rng.randrange(max_gap + 1) if rng else 0
            await stream_put(ctx, dma.write_words, word(index), gap=gap)
    return testbench


def loopback(dma, received: list, read_count: int, write_count: int, *, rng=None) -> list:
    """A consumer and a producer standing in for the cipher: the producer writes
    :func:`loopback_word`, each once the word read it answers has been received."""
    def needed(index):
        return min(skipped(read_count, write_count) + index + 1, read_count)

    return [consumer(dma, received, rng=rng),
            producer(dma, write_count,
                     lambda index: loopback_word(received, read_count, write_count, index),
                     rng=rng, after=received, needed=needed)]


def check_bus_protocol(run: Run):
    """Wishbone B4 classic, as a master: ``cyc`` equals ``stb``, ``sel`` is all ones, and an
    access strobed at an edge without ``ack`` or ``err`` (and without ``abort``) is strobed
    again at the next edge with the same address, direction and write data."""
    for index, edge in enumerate(run.trace[:-1]):
        assert edge.cyc == edge.stb, f"edge {index + 1}"
        if not edge.stb:
            continue
        assert edge.sel == 0b1111, f"edge {index + 1}"
        if edge.ack or edge.err or edge.abort:
            continue
        following = run.trace[index + 1]
        assert (following.stb, following.adr, following.we) == (1, edge.adr, edge.we), \
            f"edge {index + 1}: an access changed before it ended"
        if edge.we:
            assert following.dat_w == edge.dat_w, f"edge {index + 1}"


def reads(memory) -> list:
    return [(access.address, access.data) for access in memory.reads]


def writes(memory) -> list:
    return [(access.address, access.data) for access in memory.writes]


def expected(byte_address: int, words: list) -> list:
    return [(byte_address // 4 + index, word) for index, word in enumerate(words)]


def memory_for(dma, count: int, **options) -> WishboneMemory:
    memory = WishboneMemory(dma.bus, **options)
    memory.load(SOURCE, source_words(count))
    return memory


# --- construction ------------------------------------------------------------------------------

def test_ports():
    dma = WishboneDMA()
    members = dma.signature.members
    assert members["bus"].signature == WishboneSignature(addr_width=30, data_width=32,
                                                         granularity=8, features={"err"})
    assert members["bus"].flow == wiring.Out
    assert members["read_count"] == members["write_count"] == wiring.In(18)
    assert "words" not in members
    assert members["read_words"].flow == wiring.Out
    assert members["write_words"].flow == wiring.In
    assert {name for name, member in members.items() if member.is_port} >= {
        "source", "destination", "read_count", "write_count", "start", "abort", "busy", "done",
        "bus_error", "misaligned"}
    small = WishboneDMA(count_bits=8)
    assert small.signature.members["read_count"] == wiring.In(8)
    assert small.signature.members["write_count"] == wiring.In(8)
    assert small.count_bits == 8


@pytest.mark.parametrize("count_bits, error, message", [
    ("18", TypeError, "count_bits must be an integer, not '18'"),
    (True, TypeError, "count_bits must be an integer, not True"),
    (0, ValueError, "count_bits must be from 1 to 30, not 0"),
    (31, ValueError, "count_bits must be from 1 to 30, not 31"),
])
def test_bad_count_bits_are_rejected(count_bits, error, message):
    with pytest.raises(error) as info:
        WishboneDMA(count_bits=count_bits)
    assert str(info.value) == message


# --- moving words ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed, read_count, write_count", [
    (0, 13, 13), (1, 1, 1), (2, 31, 31), (3, 24, 8), (4, 20, 0), (5, 5, 17), (6, 0, 12),
    (7, 39, 38), (8, 2, 3), (9, 36, 16)])
def test_copies_with_random_wait_states_and_stalls(seed, read_count, write_count):
    rng = random.Random(seed)
    dma = WishboneDMA()
    memory = memory_for(dma, read_count, wait_states=3, rng=random.Random(seed + 100))
    received = []
    state = {}
    run = simulate(dma, memory, control(dma, read_count, write_count, edges_after=6,
                                        state=state),
                   background=loopback(dma, received, read_count, write_count, rng=rng))
    assert received == source_words(read_count)
    assert reads(memory) == expected(SOURCE, source_words(read_count))
    assert writes(memory) == expected(DESTINATION, loopback_results(read_count, write_count))
    assert len(memory.log) == read_count + write_count and memory.abandoned == 0
    assert memory.wait_edges > 0
    assert run.edges("done") == [memory.log[-1].edge + 1]
    assert run.edges("busy") == list(range(2, memory.log[-1].edge + 1))
    assert run.read_log.violations == []
    # The read register keeps no word once it has been taken.
    assert (state["data"], state["read valid"]) == (0, 0)
    check_bus_protocol(run)


@pytest.mark.parametrize("read_count, write_count", [(24, 24), (24, 10), (10, 24)])
def test_writes_the_words_as_they_come_with_reads_running_ahead(read_count, write_count):
    # The producer is independent of the reads: whatever the order, the n-th word offered goes
    # to destination + 4 n.
    rng = random.Random(7)
    dma = WishboneDMA()
    memory = memory_for(dma, read_count, wait_states=1, rng=rng)
    offered = [rng.getrandbits(32) for _ in range(write_count)]
    received = []
    simulate(dma, memory, control(dma, read_count, write_count),
             background=[consumer(dma, received, rng=rng),
                         producer(dma, write_count, offered.__getitem__, rng=rng, max_gap=6)])
    assert received == source_words(read_count)
    assert writes(memory) == expected(DESTINATION, offered)


@pytest.mark.parametrize("read_count, write_count", [
    (16, 16), (16, 4), (4, 16), (12, 0), (0, 12)])
def test_one_access_per_edge_with_a_one_edge_memory(read_count, write_count):
    # The throughput claim. Writes waiting from the start go first, then the reads: the
    # N = read_count + write_count accesses end on edges 2 to N + 1, the N edges right after
    # the start edge (edge 1), with cyc and stb high throughout; done is high in the cycle
    # after the last (sampled at edge N + 2: N + 1 edges after the start edge), when busy has
    # fallen.
    total = read_count + write_count
    dma = WishboneDMA()
    memory = memory_for(dma, read_count)
    received = []
    offered = [extra(index) for index in range(write_count)]
    run = simulate(dma, memory, control(dma, read_count, write_count),
                   background=[consumer(dma, received),
                               producer(dma, write_count, offered.__getitem__)])
    assert [access.edge for access in memory.log] == list(range(2, total + 2))
    assert [access.write for access in memory.log] == [True] * write_count + [False] * read_count
    assert run.edges("stb") == run.edges("cyc") == list(range(2, total + 2))
    assert run.edges("done") == [total + 2]
    assert run.edges("busy") == list(range(2, total + 2))
    assert memory.wait_edges == 0
    assert received == source_words(read_count)
    assert writes(memory) == expected(DESTINATION, offered)
    check_bus_protocol(run)


@pytest.mark.parametrize("aad", [0, 5])
def test_one_access_per_edge_when_reads_and_writes_alternate(aad):
    # Through a FIFO standing in for the cipher, every word read after the first `aad` (which
    # the stand-in takes and drops, as GCM does its additional data) comes back to be written
    # while later words are read: 16 + aad reads, 16 writes. The aad words are read on edges
    # 2 to aad + 1. A text word read on edge e is in the FIFO from edge e + 1 and offered from
    # the cycle after edge e + 2, so it can be written on edge e + 3: three reads, then the
    # three writes that are waiting go first, then three reads, ... one access on every edge,
    # switching between reading and writing without an idle edge, until the last read (edge
    # aad + 32); the last write waits for its word (edge aad + 35), and done follows it.
    text = 16
    dma = WishboneDMA()
    m = Module()
    m.domains.sync = ClockDomain()
    m.submodules.dma = dma
    m.submodules.cipher = cipher = fifo.SyncFIFOBuffered(width=32, depth=4)
    dropped = Signal(range(aad + 1))
    dropping = dropped != aad
    with m.If(dropping & dma.read_words.valid):
        m.d.sync += dropped.eq(dropped + 1)
    m.d.comb += [
        cipher.w_data.eq(dma.read_words.payload ^ 0xffff_ffff),
        cipher.w_en.eq(dma.read_words.valid & ~dropping),
        dma.read_words.ready.eq(dropping | cipher.w_rdy),
    ]
    wiring.connect(m, cipher.r_stream, dma.write_words)
    memory = memory_for(dma, aad + text)
    run = simulate(dma, memory, control(dma, aad + text, text), design=m)
    assert reads(memory) == expected(SOURCE, source_words(aad + text))
    assert writes(memory) == expected(DESTINATION, loopback_results(aad + text, text))
    directions = "".join("w" if access.write else "r" for access in memory.log)
    assert directions == "r" * aad + "rrr" + "wwwrrr" * 4 + "wwwrw"
    assert [access.edge for access in memory.log] == list(range(2, aad + 33)) + [aad + 35]
    assert run.edges("stb") == list(range(2, aad + 33)) + [aad + 35]
    assert run.edges("done") == [aad + 36]
    check_bus_protocol(run)


@pytest.mark.parametrize("read_count, write_count", [(6, 6), (6, 2), (0, 5)])
@pytest.mark.parametrize("wait_states", [1, 3])
def test_a_slow_memory_makes_each_access_longer(wait_states, read_count, write_count):
    total = read_count + write_count
    dma = WishboneDMA()
    memory = memory_for(dma, read_count, wait_states=wait_states)
    received = []
    run = simulate(dma, memory, control(dma, read_count, write_count),
                   background=[consumer(dma, received),
                               producer(dma, write_count, extra)])
    per_access = wait_states + 1
    assert [access.edge for access in memory.log] == \
        [1 + per_access * (index + 1) for index in range(total)]
    assert memory.wait_edges == total * wait_states
    assert run.edges("stb") == list(range(2, 2 + total * per_access))
    assert run.edges("done") == [2 + total * per_access]
    check_bus_protocol(run)


@pytest.mark.parametrize("read_count, write_count", [(6, 0), (0, 6)])
def test_a_direction_with_no_words_makes_no_access(read_count, write_count):
    # Only reads (only writes): a word offered to be written is never taken (the read register
    # is never filled), although the producer (consumer) is there all along.
    dma = WishboneDMA()
    memory = memory_for(dma, read_count)
    received = []
    run = simulate(dma, memory, control(dma, read_count, write_count, edges_after=6),
                   background=[consumer(dma, received),
                               producer(dma, max(write_count, 1), extra)])
    total = read_count + write_count
    assert [access.edge for access in memory.log] == list(range(2, total + 2))
    assert reads(memory) == expected(SOURCE, source_words(read_count))
    assert writes(memory) == expected(DESTINATION, [extra(index) for index in range(write_count)])
    assert run.edges("done") == [total + 2]
    if write_count == 0:
        assert run.edges("write_valid") == list(range(1, len(run.trace) + 1))
        assert run.edges("write_ready") == []
    else:
        assert run.edges("read_valid") == [] and received == []


def test_a_full_read_register_holds_the_reads_back():
    # With the consumer stalled, one word is read and waits in the register; no other read
    # starts until it is taken, and nothing is lost.
    count = 4
    dma = WishboneDMA()
    memory = memory_for(dma, count)
    received = []

    async def late_consumer(ctx):
        await ticks(ctx, 10)
        for _ in range(count):
            received.append(await stream_get(ctx, dma.read_words))

    run = simulate(dma, memory, control(dma, count, count), late_consumer,
                   background=[producer(dma, count, results(source_words(count)).__getitem__,
                                        after=received)])
    assert [access.edge for access in memory.reads[:2]] == [2, 11]
    assert run.edges("stb")[:2] == [2, 11]
    assert received == source_words(count)
    assert run.read_log.violations == []


def test_back_to_back_transfers():
    # A second transfer starts in the cycle `done` is high (busy has fallen then), and moves
    # its own words, in its own numbers: 5 read and 5 written, then 7 read and 3 written (the
    # results of the last three words read).
    first, second, second_writes = 5, 7, 3
    other_source, other_destination = SOURCE + 0x400, DESTINATION + 0x800
    dma = WishboneDMA()
    memory = memory_for(dma, first)
    memory.load(other_source, [word ^ 0x1234 for word in source_words(second)])
    received = []

    async def two_transfers(ctx):
        await start(ctx, dma, first, first)
        while not ctx.get(dma.done):
            await ctx.tick()
        await start(ctx, dma, second, second_writes, source=other_source,
                    destination=other_destination)
        await wait_for(ctx, dma.done)
        await ticks(ctx, 2)

    def position(index):
        # The word read that the index-th word written answers.
        return index if index < first else index + second - second_writes

    run = simulate(dma, memory, two_transfers,
                   background=[consumer(dma, received),
                               producer(dma, first + second_writes,
                                        lambda index: result(received[position(index)]),
                                        after=received,
                                        needed=lambda index: position(index) + 1)])
    assert received == source_words(first) + [word ^ 0x1234 for word in source_words(second)]
    assert writes(memory) == expected(DESTINATION, results(source_words(first))) + \
        expected(other_destination, results(received[-second_writes:]))
    assert len(memory.reads) == first + second
    first_done, second_done = run.edges("done")
    assert run.edges("start") == [1, first_done]
    assert first_done + 1 in run.edges("busy")
    check_bus_protocol(run)


def test_start_is_ignored_while_busy():
    count = 8
    dma = WishboneDMA()
    memory = memory_for(dma, count, wait_states=1)
    received = []

    async def interrupting(ctx):
        await start(ctx, dma, count, count)
        await ticks(ctx, 5)
        await start(ctx, dma, 3, 11, source=SOURCE + 0x100, destination=DESTINATION + 0x100)
        await wait_for(ctx, dma.done)
        await ticks(ctx, 4)

    run = simulate(dma, memory, interrupting,
                   background=loopback(dma, received, count, count))
    assert run.edges("start") == [1, 7]
    assert received == source_words(count)
    assert writes(memory) == expected(DESTINATION, results(source_words(count)))
    assert len(run.edges("done")) == 1 and run.edges("misaligned") == []


def test_counts_and_addresses_are_taken_at_the_start():
    # The inputs change on the edge after the start: the transfer goes on with what it took.
    read_count, write_count = 9, 4
    dma = WishboneDMA()
    memory = memory_for(dma, read_count, wait_states=1)
    received = []

    async def changing(ctx):
        await start(ctx, dma, read_count, write_count)
        ctx.set(dma.read_count, 2)
        ctx.set(dma.write_count, 30)
        ctx.set(dma.source, SOURCE + 0x200)
        ctx.set(dma.destination, DESTINATION + 0x200)
        await wait_for(ctx, dma.done)
        await ticks(ctx, 4)

    run = simulate(dma, memory, changing,
                   background=loopback(dma, received, read_count, write_count))
    assert reads(memory) == expected(SOURCE, source_words(read_count))
    assert writes(memory) == expected(DESTINATION, loopback_results(read_count, write_count))
    assert len(run.edges("done")) == 1


@pytest.mark.parametrize("read_count, write_count", [(7, 7), (7, 2), (2, 7)])
def test_moves_the_most_words_its_counters_hold(read_count, write_count):
    # With count_bits=3, 7 is the largest count: the counters reach 7 without overflowing.
    dma = WishboneDMA(count_bits=3)
    memory = memory_for(dma, 8)
    received = []
    run = simulate(dma, memory, control(dma, read_count, write_count),
                   background=loopback(dma, received, read_count, write_count))
    assert received == source_words(read_count)
    assert writes(memory) == expected(DESTINATION, loopback_results(read_count, write_count))
    assert len(memory.log) == read_count + write_count
    assert len(run.edges("done")) == 1


def test_no_words_is_done_at_once():
    # Neither direction has a word to move: done pulses on the edge after the start, busy never
    # rises, and no access is made although a word is offered and the consumer is ready.
    dma = WishboneDMA()
    memory = memory_for(dma, 0)
    received = []
    run = simulate(dma, memory, control(dma, 0, 0, edges_after=4),
                   background=[consumer(dma, received), producer(dma, 1, extra)])
    assert run.edges("done") == [2]
    assert run.edges("busy") == [] and run.edges("stb") == []
    assert run.edges("write_ready") == [] and received == []
    assert memory.log == []


# --- refusals, errors and abort ----------------------------------------------------------------

@pytest.mark.parametrize("source, destination, read_count, write_count", [
    (SOURCE + 1, DESTINATION, 4, 4), (SOURCE, DESTINATION + 2, 4, 4),
    (SOURCE + 3, DESTINATION + 3, 4, 4),
    # Both addresses are checked, even the one of a direction with no words.
    (SOURCE, DESTINATION + 2, 4, 0), (SOURCE + 1, DESTINATION, 0, 4)])
def test_misaligned_addresses_are_refused(source, destination, read_count, write_count):
    dma = WishboneDMA()
    memory = memory_for(dma, 4)

    async def refused(ctx):
        await start(ctx, dma, read_count, write_count, source=source, destination=destination)
        await ticks(ctx, 6)

    received = []
    run = simulate(dma, memory, refused, background=[consumer(dma, received),
                                                     producer(dma, 4, extra)])
    assert run.edges("misaligned") == [2]
    assert run.edges("busy") == [] and run.edges("stb") == [] and run.edges("done") == []
    assert memory.log == [] and received == []


@pytest.mark.parametrize("direction, read_count, write_count", [
    ("read", 12, 12), ("write", 12, 12), ("read", 12, 4), ("write", 6, 12)])
def test_an_error_stops_the_transfer(direction, read_count, write_count):
    # Word 5 of the source (or of the destination) answers err: bus_error and done pulse in
    # the cycle after, busy falls, no access follows, and the DMA forgets the transfer as on
    # abort. The words before it were read (written).
    failing = 5
    base = SOURCE if direction == "read" else DESTINATION
    dma = WishboneDMA()
    memory = memory_for(dma, read_count, wait_states=1, rng=random.Random(3),
                        error={base // 4 + failing})
    received = []
    state = {}
    run = simulate(dma, memory, control(dma, read_count, write_count, edges_after=8,
                                        state=state),
                   background=loopback(dma, received, read_count, write_count,
                                       rng=random.Random(4)))
    error, = memory.errors
    assert (error.address, error.write) == (base // 4 + failing, direction == "write")
    assert memory.log[-1] == error
    assert run.edges("bus_error") == run.edges("done") == [error.edge + 1]
    assert max(run.edges("stb")) == error.edge and max(run.edges("busy")) == error.edge
    if direction == "read":
        assert reads(memory) == expected(SOURCE, source_words(failing))
        # A word read and not yet taken when the transfer stopped is dropped.
        assert received == source_words(len(received)) and len(received) >= failing - 1
    else:
        assert writes(memory) == \
            expected(DESTINATION, loopback_results(read_count, write_count)[:failing])
        # The word whose write failed is not taken: it is still offered.
        assert run.trace[-1].write_valid
        assert all(edge < error.edge for edge in run.edges("write_ready"))
    assert state == ZEROED
    check_bus_protocol(run)


def test_abort_drops_the_cycle_and_forgets_the_transfer():
    read_count, write_count = 10, 6
    dma = WishboneDMA()
    memory = memory_for(dma, read_count, wait_states=3)
    received = []
    state = {}

    async def aborting(ctx):
        await start(ctx, dma, read_count, write_count)
        # Into the third access: its strobe is seen at edges 10 to 13; abort at edge 11.
        await ticks(ctx, 9)
        assert ctx.get(dma.bus.stb) and not ctx.get(dma.bus.ack)
        ctx.set(dma.abort, 1)
        await ctx.tick()
        ctx.set(dma.abort, 0)
        state.update(registers(ctx, dma))
        await ticks(ctx, 6)

    run = simulate(dma, memory, aborting,
                   background=loopback(dma, received, read_count, write_count))
    assert run.edges("abort") == [11]
    assert 11 in run.edges("stb") and 12 not in run.edges("stb")
    assert run.edges("busy") == list(range(2, 12))
    assert run.edges("done") == [] and run.edges("bus_error") == []
    assert len(memory.log) == 2 and memory.abandoned == 1
    assert state == ZEROED
    check_bus_protocol(run)


# --- the memory model ------------------------------------------------------------------------

def test_memory_model_answers_byte_writes_wait_states_and_errors():
    m = Module()
    m.domains.sync = ClockDomain()
    bus = WishboneSignature(addr_width=30, features={"err"}).create()
    memory = WishboneMemory(bus, contents={0x10: 0x1122_3344}, wait_states=2, error={0x20})
    sim = Simulator(m)
    sim.add_clock(1e-8)
    memory.add_to(sim)
    seen = []

    async def master(ctx):
        for address, write, data, sel in [(0x10, 1, 0xaabb_ccdd, 0b0101), (0x10, 0, 0, 0b1111),
                                          (0x20, 0, 0, 0b1111)]:
            ctx.set(bus.cyc, 1)
            ctx.set(bus.stb, 1)
            ctx.set(bus.adr, address)
            ctx.set(bus.we, write)
            ctx.set(bus.dat_w, data)
            ctx.set(bus.sel, sel)
            edges = 0
            while True:
                edges += 1
                _, _, ack, err, dat_r = await ctx.tick().sample(bus.ack, bus.err, bus.dat_r)
                if ack or err:
                    seen.append((edges, ack, err, dat_r))
                    break
        ctx.set(bus.stb, 0)
        ctx.set(bus.cyc, 0)
        await ctx.tick()

    sim.add_testbench(master)
    sim.run()
    assert seen == [(3, 1, 0, 0), (3, 1, 0, 0x11bb_33dd), (3, 0, 1, 0)]
    assert memory.words[0x10] == 0x11bb_33dd
    assert memory.log == [Access(3, 0x10, True, 0xaabb_ccdd, 0b0101, 2, False),
                          Access(6, 0x10, False, 0x11bb_33dd, 0b1111, 2, False),
                          Access(9, 0x20, False, 0, 0b1111, 2, True)]
    assert memory.accesses == 3 and memory.wait_edges == 6 and memory.edges == 10


@pytest.mark.parametrize("options, error, message", [
    ({"wait_states": -1}, ValueError, "wait_states must be a non-negative integer, not -1"),
    ({"rng": 3}, TypeError, "rng must be a random.Random, not 3"),
])
def test_memory_model_checks_its_arguments(options, error, message):
    with pytest.raises(error) as info:
        WishboneMemory(WishboneSignature(addr_width=30).create(), **options)
    assert str(info.value) == message
