"""A Wishbone B4 classic target in simulation: 32-bit words with byte select, wait states and
``err``, backed by a Python dictionary, for bus masters such as
:class:`~cipher_cores.cores.bus.dma.WishboneDMA` (the tests and the report's cycle counts use it).

Edges are clock edges of the ``sync`` domain, counted from 1 at the first edge of the simulation
(as in :mod:`cipher_cores.cores.sim`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Container

from amaranth.hdl import Signal


__all__ = ["Access", "WishboneMemory"]


@dataclass(frozen=True)
class Access:
    """One access that ended (with ``ack`` or ``err``), as the memory saw it.

    Attributes
    ----------
    edge : :class:`int`
        The edge it ended on.
    address : :class:`int`
        Word address (``adr``).
    write : :class:`bool`
    data : :class:`int`
        The word read, or the word the master wrote (``dat_w``); 0 for an access that failed.
    sel : :class:`int`
    wait_states : :class:`int`
        Edges it waited before the one it ended on.
    error : :class:`bool`
        Ended with ``err``: nothing was written, nothing read.
    """
    edge: int
    address: int
    write: bool
    data: int
    sel: int
    wait_states: int
    error: bool


class WishboneMemory:
    """A memory of 32-bit words on the target side of a Wishbone B4 classic bus, played by two
    simulator processes.

    With no wait states, ``ack`` (or ``err``) rises in the same cycle as ``cyc & stb``, from the
    bus signals without a register: each access ends on the first edge its strobe is seen, and
    a master that keeps ``stb`` high makes one access per edge. With ``N`` wait states an access
    ends on the ``N + 1``-th edge of its strobe. Writes honour ``sel`` byte by byte and take
    effect at the edge the access ends. An access the master abandons (``stb`` falls before the
    end) is counted in :attr:`abandoned` and has no effect.

    The two processes (:meth:`add_to`) are simulator processes, not testbenches: one answers
    the bus combinationally whenever it or the memory changes, the other acts at each edge on
    the values sampled at that edge. A memory serves one simulation.

    Parameters
    ----------
    bus :
        The bus, as the master drives it: an interface with ``cyc``, ``stb``, ``we``, ``adr``,
        ``dat_w``, ``sel`` (driven by the master), ``dat_r``, ``ack`` and ``err`` (driven here;
        without ``err``, an access that should fail raises :exc:`RuntimeError`).
    contents : :class:`dict`
        Initial words by word address; every other word reads as 0.
    wait_states : :class:`int`
        Wait states of every access; with ``rng``, the most an access waits.
    rng : :class:`random.Random`
        Draws the wait states of each access (uniformly from 0 to ``wait_states``).
    error :
        Word addresses that answer ``err``: a container (``{0x40, 0x41}``) or a predicate
        (``lambda address: address >= 0x1000``).

    Attributes
    ----------
    words : :class:`dict`
        The contents, by word address.
    log : :class:`list` of :class:`Access`
        Every access that ended, in order.
    edges : :class:`int`
        Edges so far.
    wait_edges : :class:`int`
        Wait states of all the accesses that ended so far.
    abandoned : :class:`int`
        Accesses the master gave up before they ended.
    """
    def __init__(self, bus, *, contents: dict | None = None, wait_states: int = 0,
                 rng: random.Random | None = None,
                 error: Callable[[int], bool] | Container | None = None):
        if not isinstance(wait_states, int) or isinstance(wait_states, bool) or wait_states < 0:
            raise ValueError(f"wait_states must be a non-negative integer, not {wait_states!r}")
        if rng is not None and not isinstance(rng, random.Random):
            raise TypeError(f"rng must be a random.Random, not {rng!r}")
        if error is None:
            self._fails = lambda address: False
        elif callable(error):
            self._fails = error
        else:
            self._fails = error.__contains__
        self.bus = bus
        self.words = dict(contents or {})
        self.log = []
        self.edges = 0
        self.wait_edges = 0
        self.abandoned = 0
        self._wait_states = wait_states
        self._rng = rng
        # Simulation state that the response depends on, kept in signals so that a change wakes
        # the combinational process: the wait states left to the access under way, and a count
        # of writes (so that a read of a word just written answers the new word).
        self._first_wait = self._draw()
        self._left = Signal(range(wait_states + 1), init=self._first_wait)
        self._writes = Signal(16)

    # --- contents ---------------------------------------------------------------------------

    def load(self, byte_address: int, words) -> None:
        """Store ``words`` from ``byte_address`` (a multiple of 4) on."""
        for index, word in enumerate(words):
            self.words[byte_address // 4 + index] = word

    def dump(self, byte_address: int, count: int) -> list:
        """The ``count`` words from ``byte_address`` on."""
        return [self.words.get(byte_address // 4 + index, 0) for index in range(count)]

    # --- counts -----------------------------------------------------------------------------

    @property
    def accesses(self) -> int:
        """Accesses that ended so far (with ``ack`` or ``err``)."""
        return len(self.log)

    @property
    def reads(self) -> list:
        """The reads that ended with ``ack``, in order."""
        return [access for access in self.log if not access.write and not access.error]

    @property
    def writes(self) -> list:
        """The writes that ended with ``ack``, in order."""
        return [access for access in self.log if access.write and not access.error]

    @property
    def errors(self) -> list:
        """The accesses that ended with ``err``, in order."""
        return [access for access in self.log if access.error]

    # --- the simulation ---------------------------------------------------------------------

    def add_to(self, sim) -> None:
        """Add the memory's two processes to ``sim`` (an :class:`amaranth.sim.Simulator` whose
        design has the bus and a ``sync`` clock)."""
        sim.add_process(self._respond)
        sim.add_process(self._clock)

    def _draw(self) -> int:
        if self._rng is None:
            return self._wait_states
        return self._rng.randint(0, self._wait_states)

    async def _respond(self, ctx):
        # Combinational: ack, err and dat_r from the bus and the memory's state, in the same
        # cycle.
        bus = self.bus
        async for cyc, stb, we, adr, left, _ in ctx.changed(
                bus.cyc, bus.stb, bus.we, bus.adr, self._left, self._writes):
            ending = bool(cyc and stb) and left == 0
            fails = ending and bool(self._fails(adr))
            if fails and not hasattr(bus, "err"):
                raise RuntimeError(f"word address {adr:#x} fails, but the bus has no err")
            ctx.set(bus.ack, ending and not fails)
            if hasattr(bus, "err"):
                ctx.set(bus.err, fails)
            ctx.set(bus.dat_r, self.words.get(adr, 0) if ending and not fails and not we else 0)

    async def _clock(self, ctx):
        # At each edge: the access that ended takes effect and is logged; one still waiting
        # counts a wait state; one abandoned starts over.
        bus = self.bus
        err = bus.err if hasattr(bus, "err") else 0
        waited, left, writes = 0, self._first_wait, 0
        async for _, _, cyc, stb, we, adr, dat_w, sel, ack, failed in ctx.tick().sample(
                bus.cyc, bus.stb, bus.we, bus.adr, bus.dat_w, bus.sel, bus.ack, err):
            self.edges += 1
            if cyc and stb and not (ack or failed):
                waited += 1
                left -= 1
            elif cyc and stb:
                data = 0
                if ack and we:
                    mask = sum(0xff << (8 * byte) for byte in range(4) if sel >> byte & 1)
                    self.words[adr] = (self.words.get(adr, 0) & ~mask) | (dat_w & mask)
                    data = dat_w
                    writes += 1
                    ctx.set(self._writes, writes & 0xffff)
                elif ack:
                    data = self.words.get(adr, 0)
                self.log.append(Access(self.edges, adr, bool(we), data, sel, waited,
                                       bool(failed)))
                self.wait_edges += waited
                waited, left = 0, self._draw()
            elif waited:
                self.abandoned += 1
                waited, left = 0, self._draw()
            ctx.set(self._left, left)
