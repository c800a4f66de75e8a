"""Benches for the Wishbone peripheral's components tested alone
(:class:`~cipher_cores.cores.bus.registers.RegisterFile`,
:class:`~cipher_cores.cores.bus.scrubber.Scrubber`,
:class:`~cipher_cores.cores.bus.sequencer.MessageSequencer`): a simulation that records chosen
signals at every edge, a Wishbone master for the register file, and a driver playing the
peripheral around the sequencer (configuration, key and IV registers, word streams).

Edges are numbered from 1 at the first edge of the simulation; ``trace[edge - 1]`` holds the
values sampled at ``edge`` (as they were just before it).
"""

from types import SimpleNamespace

from amaranth.sim import Simulator

from cipher_cores.cores.bus.regmap import REGISTERS
from cipher_cores.cores.bus.registers import port_name
from cipher_cores.cores.bus.sim import WishboneFirmware
from cipher_cores.cores.modes.reference import process_message
from cipher_cores.cores.sim import watchdog

from .helpers import stream_get, stream_put


__all__ = ["simulate", "high_edges", "register_master", "register_words", "readable_mask",
           "SequencerDriver", "block_words", "words_block", "model"]


def _as_int(value) -> int:
    return value.as_value().value if hasattr(value, "as_value") else int(value)


def simulate(dut, *testbenches, watch: dict | None = None, background=(),
             max_edges: int = 5000) -> list:
    """Run ``testbenches`` (``async def bench(ctx)``) on ``dut`` until they all return, with
    ``background`` ones beside them; returns the trace of ``watch`` (name to signal): one dict
    of integers per edge. :exc:`RuntimeError` after ``max_edges`` edges."""
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    trace = []
    watch = dict(watch or {})
    names = list(watch)

    async def monitor(ctx):
        async for _, _, *values in ctx.tick().sample(*watch.values()):
            trace.append(dict(zip(names, (_as_int(value) for value in values))))

    if watch:
        sim.add_testbench(monitor, background=True)
    sim.add_testbench(watchdog(max_edges, "the component test"), background=True)
    for testbench in background:
        sim.add_testbench(testbench, background=True)
    for testbench in testbenches:
        sim.add_testbench(testbench)
    sim.run()
    return trace


def high_edges(trace: list, name: str) -> list:
    """The edges at which ``name`` was sampled high (non-zero)."""
    return [index + 1 for index, values in enumerate(trace) if values[name]]


# --- the register file ---------------------------------------------------------------------------

def register_master(ctx, registers) -> WishboneFirmware:
    """A Wishbone master on ``registers.bus`` (a :class:`RegisterFile`): the firmware's accesses
    (``access``, ``read``, ``write`` by register name) without a peripheral around it."""
    return WishboneFirmware(ctx, SimpleNamespace(bus=registers.bus, block_words=0))


def register_words(*accesses: str, stored: bool | None = None) -> list:
    """``(register, index, offset, port name)`` of every register word of the map whose access is
    one of ``accesses`` (all when none given), stored or not as ``stored`` says (either when
    ``None``)."""
    return [(reg, index, offset, port_name(reg, index))
            for reg in REGISTERS
            if (not accesses or reg.access in accesses)
            and (stored is None or reg.stored == stored)
            for index, offset in enumerate(reg.offsets())]


def readable_mask(reg) -> int:
    """The bits a read of ``reg`` returns: its ``rw``, ``rw1c`` and ``ro`` fields (all 32 bits of
    a readable register without fields, none of a write-only one)."""
    if not reg.fields:
        return 0 if reg.access == "wo" else 0xffff_ffff
    return sum(item.mask for item in reg.fields if item.access in ("rw", "rw1c", "ro"))


# --- the message sequencer -----------------------------------------------------------------------

def block_words(block: int, words: int) -> list:
    """A block's 32-bit words, the most significant first."""
    return [(block >> (32 * (words - 1 - index))) & 0xffff_ffff for index in range(words)]


def words_block(values) -> int:
    block = 0
    for value in values:
        block = (block << 32) | value
    return block


def model(mode, decrypt: bool, encrypt, decrypt_block, iv: int, blocks, block_bits: int) -> list:
    """The mode model's results (:func:`~cipher_cores.cores.modes.reference.process_message`) with
    the block cipher ``encrypt``/``decrypt_block`` (functions of one block)."""
    return process_message(mode.name, decrypt, encrypt, decrypt_block, iv, list(blocks),
                           block_bits)


class SequencerDriver:
    """What the peripheral does around a :class:`MessageSequencer`, from a testbench: holds the
    configuration, writes the key (with ``key_changed``) and the IV words (through
    ``iv_write``), pulses ``start`` and ``clear``, and moves words on ``word_in``/``word_out``."""
    def __init__(self, ctx, seq):
        self.ctx, self.seq = ctx, seq
        self.words = seq.cores[0].block_bits // 32

    async def pulse(self, signal):
        """``signal`` high for one edge."""
        self.ctx.set(signal, 1)
        await self.ctx.tick()
        self.ctx.set(signal, 0)

    async def set_key(self, key: int):
        self.ctx.set(self.seq.key, key)
        await self.pulse(self.seq.key_changed)

    async def set_iv(self, iv: int):
        """Write the IV words as the bus does: word ``i`` holds bits ``32i+31..32i``."""
        ctx, seq = self.ctx, self.seq
        for index in range(self.words):
            ctx.set(seq.iv_write, 1 << index)
            ctx.set(seq.iv_data, (iv >> (32 * index)) & 0xffff_ffff)
            ctx.set(seq.iv_sel, 0b1111)
            await ctx.tick()
        ctx.set(seq.iv_write, 0)
        await ctx.tick()            # (the chaining register has the last word by now)

    def configure(self, mode, decrypt: bool = False, keysel: int = 0, blocks: int = 1):
        config = self.seq.config
        value = mode if isinstance(mode, int) else mode.value
        self.ctx.set(config.mode, value)
        self.ctx.set(config.decrypt, int(decrypt))
        self.ctx.set(config.keysel, keysel)
        self.ctx.set(config.blocks, blocks)

    async def start(self, mode, decrypt: bool = False, keysel: int = 0, blocks: int = 1):
        self.configure(mode, decrypt, keysel, blocks)
        await self.pulse(self.seq.start)

    async def put_block(self, block: int):
        for word in block_words(block, self.words):
            await stream_put(self.ctx, self.seq.word_in, word)

    async def get_block(self) -> int:
        return words_block([await stream_get(self.ctx, self.seq.word_out)
                            for _ in range(self.words)])

    async def stream(self, blocks) -> list:
        """Put ``blocks`` and get their results, one block ahead (the next block's words go in
        while the previous one is in the core)."""
        blocks, results = list(blocks), []
        if blocks:
            await self.put_block(blocks[0])
        for index in range(len(blocks)):
            if index + 1 < len(blocks):
                await self.put_block(blocks[index + 1])
            results.append(await self.get_block())
        return results

    async def message(self, mode, blocks, *, decrypt: bool = False, iv: int = 0,
                      keysel: int = 0) -> list:
        """Write the IV, start a message of ``blocks`` and stream it; returns the results once
        the sequencer is idle again."""
        await self.set_iv(iv)
        await self.start(mode, decrypt, keysel, len(blocks))
        results = await self.stream(blocks)
        await self.wait_idle()
        return results

    async def wait_idle(self):
        while self.ctx.get(self.seq.busy):
            await self.ctx.tick()

    def secret_state(self) -> dict:
        return {name: self.ctx.get(signal) for name, signal in self.seq.secret_state().items()}
