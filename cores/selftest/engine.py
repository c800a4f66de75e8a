"""A power-on self-test for a cipher core on a board: known answers, then a long random loop.

:class:`SelfTest` drives the core through its streams:

1. **Known answers.** For each vector (key, block, direction, expected result), load the key,
   send the block, and compare the core's output with the expected value. The vectors are the
   known answers printed in the standards (FIPS-197 Appendix B and C, the PRESENT paper's table),
   from the catalog; each is run in both directions.
2. **Encrypt-then-decrypt loop.** A linear-feedback shift register makes ``loop_blocks``
   pseudo-random blocks under a fixed key; each is encrypted, the ciphertext decrypted, and the
   result compared with the block. The XOR of the first ``check_blocks`` ciphertexts is compared
   with the same checksum from the reference model, so a core that decrypts its own wrong
   encryption correctly still fails. An encrypt-only core (``core.decrypts`` false) runs the known
   answers in the encryption direction only, and its loop encrypts each block without
   decrypting it, checked by the checksum.

A masked core (``random_bits`` > 0) runs inside a
:class:`~cipher_cores.cores.randomized.RandomizedCore`, its random bits from a PRNG seeded with a
constant: the self-test checks the results, not the masking.

The summary line is made by :class:`~cipher_cores.cores.selftest.summary.SummaryPrinter`; the board top that
shows the outcome on LEDs and a UART is :class:`cipher_cores.platforms.selftest.SelfTestTop`.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ..cipher import check_block_cipher
from ..randomized import DEFAULT_SEED, RandomizedCore, check_seed


__all__ = ["lfsr_taps", "lfsr_next", "selftest_parameters", "SelfTest", "FAULTS"]


# Maximal-length Fibonacci LFSR taps (bit positions, 1 = least significant) for the block sizes
# of this library, from the well-known tables of primitive polynomials.
_TAPS = {
    64:  (64, 63, 61, 60),
    128: (128, 126, 101, 99),
}

#: Faults :class:`SelfTest` can inject, to show that the test fails when it should.
FAULTS = {
    None: "no fault",
    "kat": "flip bit 0 of the first known-answer result expected",
    "loop": "flip bit 0 of the second ciphertext of the loop before decrypting it",
}


def lfsr_taps(width: int) -> tuple:
    """Feedback taps for a ``width``-bit LFSR (maximal length for 64 and 128 bits)."""
    return _TAPS.get(width, (width, width - 1))


def lfsr_next(state: int, width: int) -> int:
    """The LFSR state after ``state``: shift left, feeding in the XOR of the tap bits."""
    feedback = 0
    for tap in lfsr_taps(width):
        feedback ^= (state >> (tap - 1)) & 1
    return ((state << 1) | feedback) & ((1 << width) - 1)


def selftest_parameters(config, *, loop_blocks: int = 1 << 20, check_blocks: int = 16,
                        seed: int = 1, fault: str | None = None) -> dict:
    """Keyword arguments of :class:`SelfTest` for a :class:`~cipher_cores.cores.catalog.CoreConfig`: its
    printed known answers (FIPS-197, the PRESENT paper) in both directions, and a loop key and checksum computed with its reference
    model. A ``"kat"`` fault is applied here, to the first expected value."""
    if fault not in FAULTS:
        raise ValueError(f"fault must be one of {', '.join(map(repr, FAULTS))}, not {fault!r}")
    if not isinstance(loop_blocks, int) or loop_blocks < 1:
        raise ValueError(f"loop_blocks must be a positive integer, not {loop_blocks!r}")
    vectors = []
    for vector in config.vectors():
        vectors.append((vector.key, vector.plaintext, 0, vector.ciphertext))
        if config.decrypts:
            vectors.append((vector.key, vector.ciphertext, 1, vector.plaintext))
    if not vectors:
        key = (1 << config.key_bits) - 1
        vectors = [(key, 0, 0, config.encrypt(key, 0))]
    if fault == "kat":
        key, block, decrypt, expected = vectors[0]
        vectors[0] = (key, block, decrypt, expected ^ 1)
    loop_key = int.from_bytes(bytes((0x5a + 37 * i) & 0xff for i in range(config.key_bits // 8)),
                              "big")
    check_blocks = min(check_blocks, loop_blocks)
    check_value, block = 0, seed
    for _ in range(check_blocks):
        check_value ^= config.encrypt(loop_key, block)
        block = lfsr_next(block, config.block_bits)
    return {"vectors": vectors, "loop_key": loop_key, "loop_blocks": loop_blocks,
            "check_value": check_value, "check_blocks": check_blocks, "seed": seed,
            "fault": None if fault == "kat" else fault}


class SelfTest(wiring.Component):
    """Runs known-answer vectors and an encrypt-then-decrypt loop on ``core``.

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        The core under test; it becomes the submodule ``core``. If it does not decrypt
        (:attr:`~cipher_cores.cores.cipher.BlockCipher.decrypts` false), the loop only encrypts
        (a ``"loop"`` fault then flips a bit of the checksum's second ciphertext). A masked core
        (``random_bits`` > 0, encrypt-only) is wrapped in a
        :class:`~cipher_cores.cores.randomized.RandomizedCore` seeded with ``rng_seed``, which
        is then the submodule ``core`` (and :attr:`core`); it stalls for the PRNG's warm-up
        after reset (ceil(1152 / random_bits) edges).
    vectors : list of ``(key, block, decrypt, expected)``
        Known-answer checks, run in order.
    loop_key : :class:`int`
        The key of the loop.
    loop_blocks : :class:`int`
        How many pseudo-random blocks the loop encrypts and decrypts.
    check_value : :class:`int`
        XOR of the first ``check_blocks`` ciphertexts of the loop, from the reference model.
    check_blocks : :class:`int`
        How many ciphertexts the checksum covers (at most ``loop_blocks``).
    seed : :class:`int`
        First block of the loop (nonzero).
    fault : ``None``, ``"kat"`` or ``"loop"``
        A deliberate fault (see :data:`FAULTS`).
    rng_seed : :class:`int`
        The PRNG seed of a masked core, 0..2**160-1
        (:data:`~cipher_cores.cores.randomized.DEFAULT_SEED` by default); not used otherwise.

    Members
    -------
    done : ``Out(1)``
        High once the loop has finished.
    passed : ``Out(1)``
        High once done with every check passed.
    failed : ``Out(1)``
        High as soon as any check has failed.
    kat_passed : ``Out(range(len(vectors) + 1))``
        Known-answer vectors that matched.
    loop_count : ``Out(32)``
        Loop blocks processed so far.
    loop_errors : ``Out(16)``
        Loop blocks whose decryption did not give the block back (saturating).
    checksum_ok : ``Out(1)``
        The loop checksum matched (valid once ``done``).
    """
    def __init__(self, core, *, vectors, loop_key: int, loop_blocks: int, check_value: int,
                 check_blocks: int, seed: int = 1, fault: str | None = None,
                 rng_seed: int = DEFAULT_SEED):
        check_block_cipher(core, "core")
        check_seed(rng_seed, "rng_seed")
        if core.random_bits:
            core = RandomizedCore(core, seed=rng_seed)
        if fault not in FAULTS:
            raise ValueError(f"fault must be one of {', '.join(map(repr, FAULTS))}, "
                             f"not {fault!r}")
        if not isinstance(loop_blocks, int) or loop_blocks < 1:
            raise ValueError(f"loop_blocks must be a positive integer, not {loop_blocks!r}")
        if not vectors:
            raise ValueError("vectors must not be empty")
        if not 1 <= check_blocks <= loop_blocks:
            raise ValueError(f"check_blocks must be 1..loop_blocks, not {check_blocks!r}")
        if seed == 0:
            raise ValueError("seed must be nonzero")
        self._core = core
        self._vectors = list(vectors)
        self._loop_key = loop_key
        self._loop_blocks = loop_blocks
        self._check_value = check_value
        self._check_blocks = check_blocks
        self._seed = seed
        self._fault = fault
        self._decrypts = core.decrypts
        super().__init__({
            "done":        Out(1),
            "passed":      Out(1),
            "failed":      Out(1),
            "kat_passed":  Out(range(len(self._vectors) + 1)),
            "loop_count":  Out(32),
            "loop_errors": Out(16),
            "checksum_ok": Out(1),
        })

    @classmethod
    def for_config(cls, config, *, core=None, loop_blocks: int = 1 << 20, check_blocks: int = 16,
                   seed: int = 1, fault: str | None = None,
                   rng_seed: int = DEFAULT_SEED) -> "SelfTest":
        """The self-test of a :class:`~cipher_cores.cores.catalog.CoreConfig` (see
        :func:`selftest_parameters`), on ``core`` or a new core of ``config``."""
        parameters = selftest_parameters(config, loop_blocks=loop_blocks,
                                         check_blocks=check_blocks, seed=seed, fault=fault)
        return cls(config.build() if core is None else core, rng_seed=rng_seed, **parameters)

    @property
    def core(self):
        """The core under test (a masked one inside its
        :class:`~cipher_cores.cores.randomized.RandomizedCore`)."""
        return self._core

    @property
    def vectors(self) -> list:
        return list(self._vectors)

    @property
    def loop_blocks(self) -> int:
        return self._loop_blocks

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self._core
        width = core.signature.block_bits
        key_bits = core.signature.key_bits
        count = len(self._vectors)

        keys = Array(Const(key, key_bits) for key, _, _, _ in self._vectors)
        blocks = Array(Const(block, width) for _, block, _, _ in self._vectors)
        directions = Array(Const(decrypt, 1) for _, _, decrypt, _ in self._vectors)
        expected = Array(Const(result, width) for _, _, _, result in self._vectors)

        index = Signal(range(count))
        kat_errors = Signal(range(count + 1))
        lfsr = Signal(width, init=self._seed)
        ciphertext = Signal(width)
        checksum = Signal(width)
        loop_index = Signal(32)

        feedback = 0
        for tap in lfsr_taps(width):
            feedback ^= lfsr[tap - 1]
        lfsr_stepped = Cat(feedback, lfsr[:-1])

        m.d.comb += [
            self.loop_count.eq(loop_index),
            self.checksum_ok.eq(checksum == self._check_value),
            self.failed.eq((kat_errors != 0) | (self.loop_errors != 0) |
                           (self.done & ~self.checksum_ok)),
            self.passed.eq(self.done & ~self.failed),
        ]

        def load_key(key, then):
            m.d.comb += [core.key.valid.eq(1), core.key.payload.eq(key)]
            with m.If(core.key.ready):
                m.next = then

        def send(block, decrypt, then):
            m.d.comb += [
                core.input.valid.eq(1),
                core.input.payload.block.eq(block),
                core.input.payload.decrypt.eq(decrypt),
            ]
            with m.If(core.input.ready):
                m.next = then

        def next_loop_block():
            m.d.sync += [
                lfsr.eq(lfsr_stepped),
                loop_index.eq(loop_index + 1),
            ]
            with m.If(loop_index == self._loop_blocks - 1):
                m.next = "Done"
            with m.Else():
                m.next = "Encrypt"

        with m.FSM():
            with m.State("Load key"):
                load_key(keys[index], "Send block")
            with m.State("Send block"):
                send(blocks[index], directions[index], "Check block")
            with m.State("Check block"):
                m.d.comb += core.output.ready.eq(1)
                with m.If(core.output.valid):
                    with m.If(core.output.payload == expected[index]):
                        m.d.sync += self.kat_passed.eq(self.kat_passed + 1)
                    with m.Else():
                        m.d.sync += kat_errors.eq(kat_errors + 1)
                    with m.If(index == count - 1):
                        m.next = "Load loop key"
                    with m.Else():
                        m.d.sync += index.eq(index + 1)
                        m.next = "Load key"
            with m.State("Load loop key"):
                load_key(self._loop_key, "Encrypt")
            with m.State("Encrypt"):
                send(lfsr, 0, "Take ciphertext")
            with m.State("Take ciphertext"):
                m.d.comb += core.output.ready.eq(1)
                with m.If(core.output.valid):
                    received = core.output.payload
                    if self._fault == "loop":
                        received = received ^ (loop_index == 1)
                    m.d.sync += ciphertext.eq(received)
                    # An encrypt-only core has no decryption to check the block against; the
                    # checksum then covers what was received, so a loop fault shows there.
                    checked = core.output.payload if self._decrypts else received
                    with m.If(loop_index < self._check_blocks):
                        m.d.sync += checksum.eq(checksum ^ checked)
                    if self._decrypts:
                        m.next = "Decrypt"
                    else:
                        next_loop_block()
            with m.State("Decrypt"):
                send(ciphertext, 1, "Compare")
            with m.State("Compare"):
                m.d.comb += core.output.ready.eq(1)
                with m.If(core.output.valid):
                    with m.If((core.output.payload != lfsr) & ~self.loop_errors.all()):
                        m.d.sync += self.loop_errors.eq(self.loop_errors + 1)
                    next_loop_block()
            with m.State("Done"):
                m.d.comb += self.done.eq(1)
        return m
