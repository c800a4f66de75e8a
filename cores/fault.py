"""Fault detection for any block-cipher core: :class:`FaultDetecting`, a checked form of a core
with an ``alert`` output, and :func:`fault_detecting_config`, the same as a catalog configuration.

The fault model, the design and its costs are in ``docs/fault.md``; the campaign that measures
it is :mod:`cipher_cores.scripts.flow.faults`.
"""

from __future__ import annotations

import dataclasses
import functools
import enum

from amaranth.hdl import Cat, Module, Mux, ResetInserter, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from .catalog import CoreConfig
from .cipher import BlockCipher, check_block_cipher
from .interface import BlockCipherSignature


__all__ = ["Check", "FaultDetecting", "fault_detecting_config"]


class Check(enum.Enum):
    """How :class:`FaultDetecting` checks a result.

    ``INVERSE``: process the result in the other direction and compare with the block (cores
    that decrypt). ``TWICE``: process the block a second time and compare the two results
    (any core; the only choice for an encrypt-only core).
    """
    INVERSE = "inverse"
    TWICE = "twice"


class _WithAlert(wiring.Signature):
    """Adds ``alert: Out(1)`` to the members a subclass's ``__init__`` passes on."""
    def __init__(self, members):
        super().__init__({**members, "alert": Out(1)})


class _AlertingSignature(BlockCipherSignature, _WithAlert):
    """A :class:`~cipher_cores.cores.interface.BlockCipherSignature` with ``alert: Out(1)``
    (:class:`FaultDetecting`'s): ``BlockCipherSignature.__init__`` builds the three streams (and
    ``random``) and its ``super().__init__`` is :class:`_WithAlert`'s, which adds the alert."""


def _parity(value):
    return value.xor()


class FaultDetecting(BlockCipher):
    """A core whose every result is checked before it is released, with a sticky ``alert``.

    What it computes: the same as ``core`` (same signature, same results), each block processed
    twice by ``core``:

    1. the block, in its direction, giving the result R;
    2. with ``check="inverse"`` (the default for a core that decrypts) R in the *other*
       direction, which must give back the block; with ``check="twice"`` (the default, and the
       only choice, for an encrypt-only core) the block again, which must give R again.

    Before pass 2 the key is loaded into ``core`` again from the wrapper's own copy. That is
    what defeats a *persistent* fault: a bit flipped in ``core``'s key register stays there,
    and an inverse check run twice under the same wrong key K' agrees with itself
    (D_K'(E_K'(P)) = P), releasing a wrong result on the next block. With the reload, pass 1
    (under whatever key ``core`` holds) and pass 2 (under the copy) disagree whenever ``core``'s
    key was wrong, whether the flip came during the block or any time before it.

    The wrapper's own registers are protected too: the key copy, the block (with its direction)
    and the result each carry a parity bit written with them, checked when the result is compared
    (all three) and while the result is offered (the result's); a single flipped bit in any of
    them makes its parity wrong. The control keeps the block's progress in three flags apart
    from its state (*busy*, *pass 1 done*, *checked*, the last set only by a passing
    comparison) and every state checks that it finds the flags it expects, so one flipped state
    bit that skips or repeats a step (back to "Idle" before the result left, taking the next
    block and releasing its result as this one's) raises the alert; the release needs both the
    state "Output" and the flags. A watchdog raises the alert if ``core`` does not answer in time
    (a fault that hangs it, or a flip into an unused state encoding), and the *key loaded* flag
    is kept twice, so no fault ends in a silent stall.

    Inverse check or computing twice: the inverse check is the default where the core decrypts,
    because it runs the other datapath direction (the inverse S-boxes and key order), so a
    *permanent* fault that repeats identically in a recomputation (a stuck bit in a shared
    S-box, say) still breaks the round trip, and it costs nothing more. Both detect every single
    flip in a register, given the key reload (measured by the campaign, ``docs/fault.md``).

    When a check fails
    ------------------
    No result is released: ``output.valid`` stays low and ``output.payload`` reads 0 (it carries
    R only while it is valid). ``alert`` goes high on the edge after the failure and stays high
    (sticky) until reset or a new key; meanwhile ``core`` is held in reset, ``input.ready`` stays
    low (the wrapper refuses blocks) and ``key.ready`` is high. A key transfer clears ``alert``
    and is loaded as usual (:attr:`key_load_cycles` + 1 edges before a block can transfer).

    A fault that strikes while a checked result is offered (its parity goes wrong) withdraws
    ``output.valid`` before the transfer: the one exception to the stream rule that a valid
    payload holds, taken because releasing it would release a wrong block.

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        The core to check; owned by the wrapper (it becomes its submodule).
    check : :class:`str` or :class:`Check` or ``None``
        ``"inverse"`` or ``"twice"``; ``None`` (the default) picks ``"inverse"`` if
        ``core.decrypts`` and ``"twice"`` otherwise.

    Members
    -------
    key, input, output : as in :class:`~cipher_cores.cores.interface.BlockCipherSignature`
        With the contract, and the core's ``block_bits``, ``key_bits`` and ``decrypts``.
    random : ``In(stream.Signature(unsigned(random_bits)))``, if ``core`` has one
        Passed through to ``core``.
    alert : ``Out(1)``
        A check failed (sticky; cleared by reset or a key transfer).

    Cycle figures, with L, I and K the core's ``latency``, ``initiation_interval`` and
    ``key_load_cycles``: latency 2L + K + 3 (for the round PRESENT-80 2*32 + 34 + 3 = 101, for the
    round AES-128 2*11 + 11 + 3 = 36), initiation interval 2L + K + 4 (a block at a time),
    key load K + 3. The figures are exact, like the core's.

    Bit and byte order: the core's (for AES ``int.from_bytes(fips197_bytes, "big")``; for PRESENT
    the integers b63..b0 and k79..k0 or k127..k0).
    """
    def __init__(self, core: BlockCipher, *, check: str | Check | None = None):
        check_block_cipher(core, "core")
        if check is None:
            check = Check.INVERSE if core.decrypts else Check.TWICE
        try:
            check = Check(check)
        except ValueError:
            raise ValueError(f"check must be 'inverse', 'twice' or None, not {check!r}") \
                from None
        if check is Check.INVERSE and not core.decrypts:
            raise ValueError(f"check must be 'twice' for an encrypt-only core (core.decrypts is "
                             f"False), not {check.value!r}")
        self._core = core
        self._check = check
        # BlockCipher.__init__ with one more member: what it does, with the alerting signature.
        wiring.Component.__init__(self, _AlertingSignature(
            core.block_bits, core.key_bits, random_bits=core.random_bits))
        self._key_bits = core.key_bits
        self._decrypt = core.decrypts

    @property
    def core(self) -> BlockCipher:
        """The core being checked."""
        return self._core

    @property
    def check(self) -> Check:
        return self._check

    @property
    def latency(self) -> int:
        core = self._core
        return 2 * core.latency + core.key_load_cycles + 3

    @property
    def initiation_interval(self) -> int:
        return self.latency + 1

    @property
    def key_load_cycles(self) -> int:
        return self._core.key_load_cycles + 3

    @property
    def watchdog_limit(self) -> int:
        """Edges a state that waits for the core may last before the watchdog raises ``alert``:
        one more than the longest legitimate wait."""
        return max(self._core.latency, self._core.key_load_cycles) + 1

    def elaborate(self, platform):
        m = Module()
        core = self._core
        alert = Signal()
        # While alerted, the checking engine and the core are held in reset (the core's
        # reset-less registers keep their values but are overwritten by the next key and block).
        engine = Module()
        m.submodules.engine = ResetInserter(alert)(engine)
        m.submodules.core = ResetInserter(alert)(core)
        m.d.comb += self.alert.eq(alert)
        if self.random_bits:
            m.d.comb += [core.random.valid.eq(self.random.valid),
                         core.random.payload.eq(self.random.payload),
                         self.random.ready.eq(core.random.ready)]

        # The key copy and its parity, and a key waiting to be loaded into the core: outside the
        # engine, so that a key transfer while alerted survives the engine's reset.
        key_copy = Signal(self.key_bits)
        key_parity = Signal()
        key_pending = Signal()
        key_taken = Signal()            # the engine loaded the pending key into the core
        engine_idle = Signal()
        fail = Signal()                 # a check failed in this cycle
        m.d.comb += self.key.ready.eq(alert | (engine_idle & ~key_pending))
        with m.If(key_taken):
            m.d.sync += key_pending.eq(0)
        with m.If(self.key.valid & self.key.ready):
            m.d.sync += [key_copy.eq(self.key.payload), key_parity.eq(_parity(self.key.payload)),
                         key_pending.eq(1), alert.eq(0)]
        with m.Elif(fail):
            m.d.sync += alert.eq(1)

        key_ok = _parity(key_copy) == key_parity
        self._elaborate_engine(engine, core, key_copy, key_ok, key_pending, key_taken,
                               engine_idle, fail, alert)
        return m

    def _elaborate_engine(self, m, core, key_copy, key_ok, key_pending, key_taken, engine_idle,
                          fail, alert):
        block_bits = self.block_bits
        block = Signal(block_bits)              # the block as it came in
        decrypt = Signal()                      # and its direction
        block_parity = Signal()                 # parity of Cat(block, decrypt)
        result = Signal(block_bits)             # pass 1's result, released if the check passes
        result_parity = Signal()
        # The progress of a block, kept apart from the state so that a flipped state bit that
        # skips or repeats a step is seen (each state checks the flags it must find):
        busy = Signal()                         # a block is in (accepted, not yet released)
        have_result = Signal()                  # pass 1 is done
        checked = Signal()                      # pass 2 agreed: set only by a passing comparison
        key_loaded = Signal(2)                  # two copies: a flip of one is seen, not a stall
        timer = Signal(range(self.watchdog_limit + 1))

        block_ok = _parity(Cat(block, decrypt)) == block_parity
        result_ok = _parity(result) == result_parity
        if self._check is Check.INVERSE:
            second_input = Cat(result, ~decrypt)
            expected, answer_ok = block, block_ok
        else:
            second_input = Cat(block, decrypt)
            expected, answer_ok = result, result_ok

        # The watchdog: every state that waits for the core restarts the timer when it is
        # entered; "Idle" and "Output" (which wait for the user) hold it at 0. A flip into an
        # unused state encoding runs no state's code, so the timer runs out there too.
        m.d.sync += timer.eq(timer + 1)
        with m.If(timer == self.watchdog_limit):
            m.d.comb += fail.eq(1)
        with m.If(key_loaded[0] != key_loaded[1]):
            m.d.comb += fail.eq(1)

        def goto(state):
            m.next = state
            m.d.sync += timer.eq(0)

        def expect(*flags):
            """This state finds busy, have_result and checked as given (1 or 0)."""
            found = Cat(busy, have_result, checked)
            with m.If(found != Cat(*flags)):
                m.d.comb += fail.eq(1)

        def offer(stream, payload, then, *, comb=(), sync=()):
            """Offer ``payload`` to one of the core's input streams; on the transfer, go to
            state ``then`` with the strobes ``comb`` and the updates ``sync``."""
            m.d.comb += [stream.valid.eq(1), stream.payload.eq(payload)]
            with m.If(stream.ready):
                m.d.comb += comb
                m.d.sync += sync
                goto(then)

        load_block = self.input.valid & self.input.ready
        release = Signal()
        m.d.comb += [self.output.valid.eq(release),
                     self.output.payload.eq(Mux(release, result, 0))]

        with m.FSM():
            with m.State("Idle"):
                expect(0, 0, 0)
                m.d.comb += [engine_idle.eq(1),
                             self.input.ready.eq(key_loaded.all() & ~key_pending &
                                                 ~self.key.valid & ~alert)]
                m.d.sync += timer.eq(0)
                with m.If(key_pending):
                    goto("Load key")
                with m.Elif(load_block):
                    m.d.sync += [block.eq(self.input.payload.block),
                                 decrypt.eq(self.input.payload.decrypt),
                                 block_parity.eq(_parity(self.input.payload.as_value())),
                                 busy.eq(1)]
                    goto("Put 1")

            with m.State("Load key"):
                expect(0, 0, 0)
                offer(core.key, key_copy, "Wait key", comb=[key_taken.eq(1)],
                      sync=[key_loaded.eq(0b11)])

            with m.State("Wait key"):
                # The core takes a block K edges after its key; the wrapper's "Idle" then
                # accepts one, which reaches the core no sooner than that.
                expect(0, 0, 0)
                with m.If(timer == core.key_load_cycles - 1):
                    goto("Idle")

            with m.State("Put 1"):
                expect(1, 0, 0)
                offer(core.input, Cat(block, decrypt), "Wait 1")

            with m.State("Wait 1"):
                expect(1, 0, 0)
                m.d.comb += core.output.ready.eq(1)
                with m.If(core.output.valid):
                    m.d.sync += [result.eq(core.output.payload),
                                 result_parity.eq(_parity(core.output.payload)),
                                 have_result.eq(1)]
                    goto("Reload key")

            with m.State("Reload key"):
                expect(1, 1, 0)
                offer(core.key, key_copy, "Put 2")

            with m.State("Put 2"):
                expect(1, 1, 0)
                offer(core.input, second_input, "Wait 2")

            with m.State("Wait 2"):
                expect(1, 1, 0)
                m.d.comb += core.output.ready.eq(1)
                with m.If(core.output.valid):
                    with m.If((core.output.payload == expected) & answer_ok & block_ok &
                              result_ok & key_ok):
                        m.d.sync += checked.eq(1)
                        goto("Output")
                    with m.Else():
                        m.d.comb += fail.eq(1)

            with m.State("Output"):
                expect(1, 1, 1)
                m.d.sync += timer.eq(0)
                m.d.comb += release.eq(busy & have_result & checked & result_ok & ~alert)
                with m.If(~result_ok):
                    m.d.comb += fail.eq(1)
                with m.If(self.output.ready & release):
                    m.d.sync += [busy.eq(0), have_result.eq(0), checked.eq(0)]
                    goto("Idle")


def _checked_core(component, **options) -> FaultDetecting:
    return FaultDetecting(component(**options))


def fault_detecting_config(config: CoreConfig) -> CoreConfig:
    """``config`` with its core wrapped in :class:`FaultDetecting` (default check): a
    :class:`~cipher_cores.cores.catalog.CoreConfig` of an entry named ``NAME+fault`` (not in the
    catalog), with the same key size, options and reference model, whose :meth:`build` makes the
    checked core. What the contract checks and the campaign take."""
    spec = dataclasses.replace(
        config.spec, name=f"{config.spec.name}+fault", title=f"{config.spec.title}+fault",
        component=functools.partial(_checked_core, config.spec.component), papers=(),
        report_defaults=())
    return spec.config(config.key_bits, **config.options)
