"""What firmware does with the cipher peripheral's registers, over any bus: cocotb coroutines
shared by the Wishbone and AXI4-Lite benches.

A :class:`Firmware` is given a bus master as two coroutines, ``read(address)`` and
``write(address, value)`` on byte addresses; it makes the calls of
:class:`cipher_cores.cores.bus.sim.WishboneFirmware` (key, IV, ``LENGTH``, ``CTRL.START``,
blocks through ``DIN`` and ``DOUT`` most significant word first while polling ``STATUS``), with
the offsets and fields of :mod:`cipher_cores.cores.bus.regmap`.
"""

from __future__ import annotations

import os
import random
from typing import Awaitable, Callable, Sequence

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles

from cipher_cores.cores.bus.regmap import register

from ..support.cocotb_run import SEED_VARIABLE


__all__ = ["seeded", "MODES", "bit", "offset", "Firmware", "start_clock",
           "reference", "reset"]


#: ``CTRL.MODE`` values by name.
MODES = {name: value for name, value, _ in register("CTRL").field("MODE").values}


def seeded(name: str) -> random.Random:
    """A random generator for the test ``name``, from the seed the runner passed in
    :data:`~tests.support.cocotb_run.SEED_VARIABLE`."""
    return random.Random(f"{os.environ.get(SEED_VARIABLE, '0')}-{name}")


def bit(register_name: str, field_name: str) -> int:
    """The mask of a field."""
    return register(register_name).field(field_name).mask


def offset(register_name: str, index: int = 0) -> int:
    """The byte offset of a register (word ``index`` of a register array)."""
    return register(register_name).offsets()[index]


def start_clock(clock, period_ns: int = 10):
    """Start a clock on ``clock`` (a ``Clock`` task running for the rest of the test)."""
    cocotb.start_soon(Clock(clock, period_ns, unit="ns").start())


def reference(mode: str, key: int, iv: int, blocks: Sequence[int], decrypt: bool = False) -> list:
    """The AES result blocks of a message, from pycryptodome (blocks and key big-endian
    integers, as the peripheral's registers hold them)."""
    from Crypto.Cipher import AES
    key_bytes = key.to_bytes(16, "big")
    iv_bytes = iv.to_bytes(16, "big")
    if mode == "ECB":
        cipher = AES.new(key_bytes, AES.MODE_ECB)
    elif mode == "CBC":
        cipher = AES.new(key_bytes, AES.MODE_CBC, iv=iv_bytes)
    elif mode == "CTR":
        cipher = AES.new(key_bytes, AES.MODE_CTR, nonce=b"", initial_value=iv_bytes)
    else:
        raise ValueError(f"mode must be 'ECB', 'CBC' or 'CTR', not {mode!r}")
    data = b"".join(block.to_bytes(16, "big") for block in blocks)
    out = cipher.decrypt(data) if decrypt else cipher.encrypt(data)
    return [int.from_bytes(out[i:i + 16], "big") for i in range(0, len(out), 16)]


class Firmware:
    """The driver calls on the peripheral's registers, over the bus master given as
    ``read(address) -> int`` and ``write(address, value)`` coroutines (byte addresses).

    ``block_words`` is 4 for AES. ``poll_limit`` bounds every wait on ``STATUS`` (a
    peripheral that never gets there fails the test instead of hanging it).
    """
    def __init__(self, read: Callable[[int], Awaitable[int]],
                 write: Callable[[int, int], Awaitable[None]], *, block_words: int = 4,
                 poll_limit: int = 2_000):
        self.read_word, self.write_word = read, write
        self.block_words = block_words
        self.poll_limit = poll_limit

    async def write(self, name: str, value: int, index: int = 0):
        await self.write_word(offset(name, index), value)

    async def read(self, name: str, index: int = 0) -> int:
        return await self.read_word(offset(name, index))

    async def set_key(self, key: int, key_bits: int = 128):
        for index in range(key_bits // 32):
            await self.write("KEY", (key >> (32 * index)) & 0xffffffff, index)

    async def set_iv(self, iv: int):
        for index in range(self.block_words):
            await self.write("IV", (iv >> (32 * index)) & 0xffffffff, index)

    async def start(self, mode: str, length: int, decrypt: bool = False):
        await self.write("LENGTH", length)
        await self.write("CTRL", MODES[mode] | (bit("CTRL", "DECRYPT") if decrypt else 0) |
                         bit("CTRL", "START"))

    async def put_block(self, block: int):
        for index in range(self.block_words):
            await self.write("DIN", (block >> (32 * (self.block_words - 1 - index))) & 0xffffffff)

    async def get_block(self) -> int:
        block = 0
        for _ in range(self.block_words):
            block = (block << 32) | await self.read("DOUT")
        return block

    async def stream(self, blocks: Sequence[int]) -> list:
        """Write ``blocks`` whenever ``STATUS.IN_SPACE`` and read a result whenever
        ``STATUS.OUT_READY``, until one result per block is read."""
        results, pending, polls = [], list(blocks), 0
        while len(results) < len(blocks):
            polls += 1
            assert polls <= self.poll_limit * (len(blocks) + 1), \
                f"{len(results)} of {len(blocks)} results after {polls} STATUS reads"
            status = await self.read("STATUS")
            if pending and status & bit("STATUS", "IN_SPACE"):
                await self.put_block(pending.pop(0))
            if status & bit("STATUS", "OUT_READY"):
                results.append(await self.get_block())
        return results

    async def message(self, mode: str, key: int, iv: int, blocks: Sequence[int],
                      decrypt: bool = False) -> list:
        """Key, IV, ``LENGTH`` and ``START``, then :meth:`stream` the blocks; the results."""
        await self.set_key(key)
        await self.set_iv(iv)
        await self.start(mode, len(blocks), decrypt)
        return await self.stream(blocks)

    async def wait_done(self):
        """Poll ``STATUS`` until ``DONE`` (the message finished) and ``BUSY`` is low."""
        for _ in range(self.poll_limit):
            status = await self.read("STATUS")
            if status & bit("STATUS", "DONE") and not status & bit("STATUS", "BUSY"):
                return status
        raise AssertionError(f"STATUS {status:#010x}: not DONE after {self.poll_limit} reads")


async def reset(clock, rst, *, active: int = 1, cycles: int = 2):
    """Hold ``rst`` at ``active`` for ``cycles`` rising edges of ``clock``, then release it."""
    rst.value = active
    await ClockCycles(clock, cycles)
    rst.value = 1 - active
    await ClockCycles(clock, 1)
