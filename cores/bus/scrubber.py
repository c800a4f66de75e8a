"""The sequence that ``CTRL.CLEAR`` runs to zeroize the peripheral."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


__all__ = ["Scrubber"]


class Scrubber(wiring.Component):
    """Zeroizes a cipher peripheral's state that a synchronous reset cannot reach: what a core
    keeps inside (its key schedule, its state, block RAM contents) and the data FIFOs' storage.

    The registers the peripheral holds (key, chaining value, block buffers) are zeroed by the
    peripheral on the edge ``start`` is seen; the scrubber then drives the core through the
    peripheral's own data path, which now carries only zeros, so no multiplexer is needed in
    front of the core: every core is reset, loaded with the all-zero key and given ``depth``
    all-zero blocks to encrypt (each result is taken and dropped: the core's state and any
    buffer behind it now hold the encryption of zero under the zero key); with GCM, GCM is
    reset and loaded with the zero key so that H and GHASH's tables no longer derive from the
    key; finally both FIFOs are filled with zero words, then emptied.

    Parameters
    ----------
    cores : :class:`int`
        Number of cores behind ``CTRL.KEYSEL`` (1 to 4): each is scrubbed in turn.
    depth : :class:`int`
        Blocks to push through each core (enough to overwrite every block it can hold).
    gcm : :class:`bool`
        Scrub GCM's key-dependent state too.
    fifos : :class:`bool`
        There are FIFOs to fill with zeros.

    Members
    -------
    start : ``In(1)``
        Begin (one edge; a ``start`` while busy begins again).
    busy : ``Out(1)``
        From the edge after ``start`` until the edge after the last step.
    reset : ``Out(1)``
        Reset the cores, the modes' state and GCM (first step, one edge).
    empty : ``Out(1)``
        Empty the FIFOs (with ``reset``, and again once they are filled with zeros).
    select : ``Out(range(cores))``
        The core being scrubbed.
    key_valid : ``Out(1)``, key_ready : ``In(1)``
        Load the (zero) key into the selected core.
    block_valid : ``Out(1)``, block_ready : ``In(1)``, result_valid : ``In(1)``
        Push a (zero) block; ``result_valid`` counts the results (the peripheral takes and
        drops them while ``busy``).
    gcm_key_valid : ``Out(1)``, gcm_key_ready : ``In(1)``, gcm_idle : ``In(1)``
        Load GCM with the zero key, then wait for it to be ready for a message.
    gcm_phase : ``Out(1)``
        High while GCM is being scrubbed (the core is GCM's then).
    fill : ``Out(1)``, filled : ``In(1)``
        Write zero words into both FIFOs until both are full.
    """
    def __init__(self, *, cores: int = 1, depth: int = 2, gcm: bool = False, fifos: bool = True):
        if not 1 <= cores <= 4:
            raise ValueError(f"cores must be 1 to 4, not {cores!r}")
        if depth < 1:
            raise ValueError(f"depth must be at least 1, not {depth!r}")
        self._cores, self._depth, self._gcm, self._fifos = cores, depth, gcm, fifos
        super().__init__({
            "start": In(1), "busy": Out(1), "reset": Out(1), "empty": Out(1),
            "select": Out(range(max(2, cores))),
            "key_valid": Out(1), "key_ready": In(1),
            "block_valid": Out(1), "block_ready": In(1), "result_valid": In(1),
            "gcm_key_valid": Out(1), "gcm_key_ready": In(1), "gcm_idle": In(1),
            "gcm_phase": Out(1),
            "fill": Out(1), "filled": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        depth = self._depth
        blocks_in = Signal(range(depth + 1))
        blocks_out = Signal(range(depth + 1))
        after_cores = "GCM key" if self._gcm else ("Fill" if self._fifos else "Empty")

        # Busy from a flip-flop: set by start, cleared as the last step ends.
        busy = Signal()
        m.d.comb += self.busy.eq(busy)
        # The blocks are offered from a flip-flop too.
        pushing = Signal()
        m.d.comb += self.block_valid.eq(pushing)

        def restart():
            # A start in any state begins again.
            with m.If(self.start):
                m.d.sync += [self.select.eq(0), busy.eq(1), pushing.eq(0)]
                m.next = "Reset"

        with m.FSM():
            with m.State("Idle"):
                restart()
            with m.State("Reset"):
                m.d.comb += [self.reset.eq(1), self.empty.eq(1)]
                m.next = "Key"
                restart()
            with m.State("Key"):
                m.d.comb += [self.key_valid.eq(1)]
                with m.If(self.key_ready):
                    m.d.sync += [blocks_in.eq(0), blocks_out.eq(0), pushing.eq(1)]
                    m.next = "Blocks"
                restart()
            with m.State("Blocks"):
                with m.If(self.block_valid & self.block_ready):
                    m.d.sync += blocks_in.eq(blocks_in + 1)
                    with m.If(blocks_in == depth - 1):
                        m.d.sync += pushing.eq(0)
                with m.If(self.result_valid):
                    m.d.sync += blocks_out.eq(blocks_out + 1)
                with m.If(blocks_out == depth):
                    if self._cores > 1:
                        with m.If(self.select != self._cores - 1):
                            m.d.sync += self.select.eq(self.select + 1)
                            m.next = "Key"
                        with m.Else():
                            m.next = after_cores
                    else:
                        m.next = after_cores
                restart()
            if self._gcm:
                with m.State("GCM key"):
                    m.d.comb += [self.gcm_phase.eq(1), self.gcm_key_valid.eq(1)]
                    with m.If(self.gcm_key_ready):
                        m.next = "GCM wait"
                    restart()
                with m.State("GCM wait"):
                    m.d.comb += [self.gcm_phase.eq(1)]
                    with m.If(self.gcm_idle):
                        m.next = "Fill" if self._fifos else "Empty"
                    restart()
            if self._fifos:
                with m.State("Fill"):
                    m.d.comb += [self.fill.eq(1)]
                    with m.If(self.filled):
                        m.next = "Empty"
                    restart()
            with m.State("Empty"):
                m.d.comb += [self.empty.eq(1)]
                m.d.sync += [self.select.eq(0), busy.eq(0)]
                m.next = "Idle"
                restart()
        return m
