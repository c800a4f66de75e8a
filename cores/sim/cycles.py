"""Cycle figures of a core, measured by simulation and checked against its reference model.

Cycle counts are never typed in: :func:`core_cycles` runs a fresh core through
:func:`~cipher_cores.cores.sim.simulate_cipher` and reads the figures off the transfer edges.
Every kind of report target gives its figures as a :class:`CycleFigures` (see
:class:`cipher_cores.scripts.flow.targets.Target`): a bare core from here, the Wishbone
peripheral, GCM and another project's Verilog core from the flow.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import asdict, dataclass

from .operations import LoadKey, Process
from .simulate import simulate_cipher


__all__ = ["CycleFigures", "steady_interval", "core_cycles"]


@dataclass
class CycleFigures:
    """Cycle counts of a core, measured by simulation at full stream speed.

    ``cycles_per_block`` is the steady-state interval between output transfers when blocks are
    offered back to back (encryption; ``cycles_per_block_decrypt`` for decryption). ``latency``
    counts edges from the input transfer to the output transfer of the first block after a key
    load. ``key_to_input`` counts edges from the key transfer to the first input transfer, with the
    block offered right after the key.

    For a core behind a bus (``through`` is ``"wishbone"``) the figures are what firmware sees,
    one access at a time: ``cycles_per_block`` is the steady interval between results read while
    streaming a CTR message (ECB decryption for ``cycles_per_block_decrypt``), ``latency`` the
    edges from a lone block's last word written to its result's last word read, ``key_to_input``
    the edges from the ``START`` write (which loads the key) to the first block entering the core.
    For GCM (``"gcm"``) they are those of whole messages: the interval between text results, the
    edges from the last text block in to the tag out, and from the key to the first IV block.
    """
    cycles_per_block: float
    cycles_per_block_decrypt: float
    latency: int
    latency_decrypt: int
    key_to_input: int
    verified: bool
    blocks: int
    #: ``"stream"``: the core's own streams; ``"wishbone"``: through the Wishbone peripheral;
    #: ``"gcm"``: GCM messages; ``"declared"``: not simulated but declared by an external core's
    #: description (:mod:`cipher_cores.scripts.flow.external`), figures it does not declare being
    #: ``None``.
    through: str = "stream"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "CycleFigures":
        return cls(**data)


def steady_interval(intervals) -> float:
    """The steady rate of a run: the median of its intervals (the first can include pipeline
    fill), NaN if there are none."""
    intervals = list(intervals)
    return float(statistics.median(intervals)) if intervals else float("nan")


def core_cycles(config, *, blocks: int = 6, seed: int = 1) -> CycleFigures:
    """Simulate a fresh core of ``config`` (a :class:`~cipher_cores.cores.catalog.CoreConfig`) on
    ``blocks`` random blocks each way, and return its :class:`CycleFigures`.

    ``verified`` says whether every output matched the reference model. An encrypt-only core
    (``config.decrypts`` false) encrypts every block, also those that ask for decryption, so its
    second run is checked against encryptions.
    """
    rng = random.Random(seed)
    key = rng.getrandbits(config.key_bits)
    plain = [rng.getrandbits(config.block_bits) for _ in range(blocks)]
    expected = [config.encrypt(key, block) for block in plain]

    encrypt = simulate_cipher(config.build(), [LoadKey(key)] + [Process(b) for b in plain])
    decrypt = simulate_cipher(config.build(),
                              [LoadKey(key)] + [Process(c, decrypt=True) for c in expected])
    expected_back = plain if config.decrypts else [config.encrypt(key, c) for c in expected]
    verified = encrypt.results == expected and decrypt.results == expected_back

    return CycleFigures(
        cycles_per_block=steady_interval(encrypt.intervals),
        cycles_per_block_decrypt=steady_interval(decrypt.intervals),
        latency=encrypt.latencies[0],
        latency_decrypt=decrypt.latencies[0],
        key_to_input=encrypt.input.edges[0] - encrypt.key.edges[0],
        verified=verified,
        blocks=blocks,
    )
