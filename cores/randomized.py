"""A masked core with its random bits drawn from a PRNG of its own: :class:`RandomizedCore`, and
:func:`randomized_config`, the same as a catalog configuration.

A masked core (``random_bits`` > 0: :class:`~cipher_cores.cores.present.MaskedPRESENT`,
:class:`~cipher_cores.cores.aes.MaskedAES`) waits for fresh random bits on its ``random`` stream.
:class:`RandomizedCore` feeds that stream from a :class:`~cipher_cores.cores.prng.PRNG` and is
itself a plain :class:`~cipher_cores.cores.cipher.BlockCipher` (``random_bits`` = 0), so every
consumer of a core (modes, GCM, the bus peripheral, the self-test, the simulators) takes it as it
takes an unmasked core. The bus peripheral and the self-test wrap a masked core in it themselves.
``docs/masking.md`` ("Feeding the random stream") says what the seed means for the masking.
"""

from __future__ import annotations

import dataclasses
import functools

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In

from .catalog import CoreConfig
from .cipher import BlockCipher, CoreFigures, check_block_cipher
from .interface import BlockCipherSignature
from .prng import PRNG, SEED_BITS, warmup_cycles


__all__ = ["DEFAULT_SEED", "check_seed", "RandomizedCore", "randomized_config"]


#: The seed the PRNG takes at reset when none is given: 0 (the all-zero Trivium key and IV). A
#: published constant like any other: it makes the masks repeatable, not secret.
DEFAULT_SEED = 0


def check_seed(seed, name: str = "seed") -> int:
    """Return ``seed`` if it is a 160-bit seed of :class:`~cipher_cores.cores.prng.PRNG` (an
    integer in 0..2**160-1); raise :exc:`TypeError` or :exc:`ValueError` naming ``name`` if not."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"{name} must be an integer in 0..2**{SEED_BITS}-1, not {seed!r}")
    if not 0 <= seed < 1 << SEED_BITS:
        raise ValueError(f"{name} must be an integer in 0..2**{SEED_BITS}-1, not {seed!r}")
    return seed


class _WithReseed(wiring.Signature):
    """Adds ``reseed: In(stream.Signature(unsigned(160)))`` to the members a subclass's
    ``__init__`` passes on."""
    def __init__(self, members):
        super().__init__({**members, "reseed": In(stream.Signature(unsigned(SEED_BITS)))})


class _ReseedableSignature(BlockCipherSignature, _WithReseed):
    """A :class:`~cipher_cores.cores.interface.BlockCipherSignature` without ``random`` and with
    ``reseed`` (:class:`RandomizedCore`'s)."""


class RandomizedCore(CoreFigures, BlockCipher):
    """A masked core whose ``random`` stream is fed by a PRNG of its own, as a plain core.

    What it computes: what ``core`` computes (same keys, blocks, results and byte order); its
    masks are drawn from a :class:`~cipher_cores.cores.prng.PRNG` (Trivium) of ``core``'s
    ``random_bits`` width, seeded with ``seed`` after every reset and reseeded through
    ``reseed`` whenever its user likes.

    The PRNG is a PRNG: the masks are exactly as unpredictable as its seed. The constant
    ``seed`` makes the core work with nobody reseeding it, with masks that repeat after every
    reset and that anyone who knows the seed can compute (for such an attacker the core is
    unmasked). For protection, reseed from a true random source after reset, and again from
    time to time; see ``docs/masking.md``.

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        A masked core (``random_bits`` > 0); it becomes the submodule ``core``, the PRNG the
        submodule ``prng``.
    seed : :class:`int`
        The PRNG's seed after reset, 0..2**160-1 (:data:`DEFAULT_SEED` by default): the
        Trivium key in bits 0..79, the IV in bits 80..159, as
        :class:`~cipher_cores.cores.prng.PRNG`'s ``seed`` stream takes them.

    Members
    -------
    key, input, output : as in :class:`~cipher_cores.cores.interface.BlockCipherSignature`
        ``core``'s streams, passed through (no register on the way): the contract, the
        ``block_bits``, ``key_bits`` and ``decrypts`` are ``core``'s. There is no ``random``
        stream: :attr:`random_bits` is 0.
    reseed : ``In(stream.Signature(unsigned(160)))``
        A new seed (bit order as ``seed``). ``reseed.ready`` is always high: a transfer
        restarts the PRNG on its edge, at any time (also while a block is in the core).

    Cycle behaviour
    ---------------
    With W = :attr:`warmup_cycles` = ceil(1152 / ``core.random_bits``) (8 for the masked
    PRESENT-80 and AES-128, whose words are 160 bits; 5 for 256-bit words; 15 for the serial
    masked PRESENT-80's 80-bit words): the PRNG takes the
    reset seed on the first edge after reset, or a ``reseed`` on the edge it transfers on,
    then warms up for W edges, during which ``core.random.valid`` is low and ``core`` stalls
    wherever it needs random bits (the masked cores take no key and no block; the masked AES
    also holds its rounds). So after reset the first key can transfer on edge W + 2 at the
    earliest, and a reseed while a block is in a core that draws random bits in its rounds
    (the masked AES) lengthens that block's latency by up to W + 1 edges. Otherwise the PRNG
    gives a word on every edge and the figures :attr:`latency`, :attr:`initiation_interval`
    and :attr:`key_load_cycles` are ``core``'s, exact.

    A reset (the domain's, or a :class:`~amaranth.hdl.ResetInserter` around this component, as
    the bus peripheral's ``CTRL.CLEAR`` applies) resets ``core`` and restarts the PRNG from
    ``seed``.
    """
    signature_class = _ReseedableSignature

    def __init__(self, core: BlockCipher, *, seed: int = DEFAULT_SEED):
        check_block_cipher(core, "core")
        if not core.random_bits:
            raise ValueError(f"core must be a masked core (random_bits > 0) for a PRNG to feed, "
                             f"not {core!r} with random_bits=0")
        self._core = core
        self._seed = check_seed(seed)
        super().__init__(core.block_bits, core.key_bits, decrypt=core.decrypts)

    @property
    def core(self) -> BlockCipher:
        """The masked core."""
        return self._core

    @property
    def seed(self) -> int:
        """The PRNG's seed after reset."""
        return self._seed

    @property
    def warmup_cycles(self) -> int:
        """Edges after a seed is taken during which the PRNG gives no word: ceil(1152 / width)."""
        return warmup_cycles(self._core.random_bits)

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self._core
        m.submodules.prng = prng = PRNG(self._core.random_bits)
        wiring.connect(m, prng.random, core.random)
        wiring.connect(m, wiring.flipped(self.key), core.key)
        wiring.connect(m, wiring.flipped(self.input), core.input)
        wiring.connect(m, core.output, wiring.flipped(self.output))

        # The seed after reset goes in on the first edge; a reseed in the same cycle wins.
        reset_seed = Signal(init=1)
        m.d.sync += reset_seed.eq(0)
        m.d.comb += [
            prng.seed.valid.eq(self.reseed.valid | reset_seed),
            prng.seed.payload.eq(Mux(self.reseed.valid, self.reseed.payload, self._seed)),
            self.reseed.ready.eq(prng.seed.ready),
        ]
        return m


def _randomized_core(component, *, seed: int, **kwargs) -> RandomizedCore:
    return RandomizedCore(component(**kwargs), seed=seed)


def randomized_config(config: CoreConfig, *, seed: int = DEFAULT_SEED) -> CoreConfig:
    """``config`` (a masked core's) with its core wrapped in :class:`RandomizedCore` with
    ``seed``: a :class:`~cipher_cores.cores.catalog.CoreConfig` of an entry named ``NAME+prng``
    (not in the catalog), with the same key size, options and reference model, whose
    :meth:`~cipher_cores.cores.catalog.CoreConfig.build` makes the wrapped core. What the
    contract checks take."""
    check_seed(seed)
    spec = dataclasses.replace(
        config.spec, name=f"{config.spec.name}+prng", title=f"{config.spec.title}+prng",
        component=functools.partial(_randomized_core, config.spec.component, seed=seed),
        papers=(), report_defaults=())
    return spec.config(config.key_bits, **config.options)
