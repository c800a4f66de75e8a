"""What the report measures: a bare core, a core inside a bus peripheral or GCM, or another
project's Verilog core.

A *target* is written as text, so that a job can carry it to any process (see
:mod:`cipher_cores.scripts.flow.jobs`), and :func:`parse_target` reads it:

* ``aes-128``, ``present-80:decrypt=no``: a bare core, as
  :func:`cipher_cores.cores.catalog.parse_config` reads it (a
  :class:`~cipher_cores.cores.catalog.CoreConfig`);
* ``wishbone:aes-128``, ``wishbone:present-80:rounds_per_cycle=4``: the Wishbone peripheral
  (:class:`cipher_cores.cores.bus.CipherPeripheral`) with all five modes of operation around that
  core (a :class:`PeripheralConfig`); ``wishbone-gcm:aes-128`` the same with AES-GCM too;
* ``gcm:aes-128`` (or another preset of :data:`GCM_PRESETS`): AES-GCM around a core (a
  :class:`GCMConfig`);
* ``verilog:peer.toml``: another project's Verilog core, by its description (an
  :class:`~cipher_cores.scripts.flow.external.ExternalConfig`).

Every kind is a :class:`Target`: it builds itself and measures its own cycles, so the flow goes
from the text to the figures in one path, ``parse_target(text).cycles()``, whatever the kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from cipher_cores.cores.catalog import CoreConfig, parse_config

from . import external
from .measure import CycleFigures, measure_bus_cycles


__all__ = ["Target", "WRAPPERS", "PeripheralConfig", "GCM_PRESETS", "GCMConfig", "parse_target"]


@runtime_checkable
class Target(Protocol):
    """What the flow uses of a report target, whatever its kind
    (:class:`~cipher_cores.cores.catalog.CoreConfig`, :class:`PeripheralConfig`,
    :class:`GCMConfig`, :class:`~cipher_cores.scripts.flow.external.ExternalConfig`).

    A protocol rather than a base class: the bare core's configuration lives in
    :mod:`cipher_cores.cores.catalog`, which knows nothing of the flow.
    """

    @property
    def label(self) -> str:
        """How the report names the target: ``AES-128``, ``Wishbone AES-128 (ECB/...)``."""

    @property
    def slug(self) -> str:
        """The label as a file-name-safe identifier (build folders)."""

    @property
    def text(self) -> str:
        """The target as :func:`parse_target` reads it back."""

    @property
    def block_bits(self) -> int:
        """The block size, for throughput (bits per cycle per block)."""

    @property
    def key_bits(self) -> int:
        """The key size."""

    @property
    def decrypts(self) -> bool:
        """Whether the built design decrypts too."""

    def build(self):
        """A new instance of the design, for synthesis and simulation."""

    def cycles(self, *, blocks: int | None = None, seed: int = 1) -> CycleFigures:
        """The target's cycle figures: simulated on ``blocks`` random blocks (the target's own
        default when ``None``) drawn from ``seed``, and checked against the reference model; or
        declared, for a core the flow cannot simulate."""

    def to_dict(self) -> dict:
        """What the report's JSON says of the target."""

    def papers(self) -> list:
        """The seed papers' figures to print beside the target's
        (:class:`~cipher_cores.cores.catalog.PaperFigure`)."""


#: Bus wrappers a target can name before the core, with what each is.
WRAPPERS = {"wishbone": "the Wishbone B4 peripheral with all five modes (ECB/CBC/CFB/OFB/CTR)",
            "wishbone-gcm": "the Wishbone B4 peripheral with the five modes and AES-GCM "
                            "(AES cores)",
            "wishbone-dma": "the Wishbone B4 peripheral with the five modes and its DMA master",
            "axi": "the same peripheral on AXI4-Lite (s_axi_* ports, aclk, aresetn)",
            "axi-gcm": "the AXI4-Lite peripheral with the five modes and AES-GCM (AES cores)"}

_MODE_NAMES = ("ECB", "CBC", "CFB", "OFB", "CTR")


def _wrapped_label(wrapper: str, core: str, detail: str) -> str:
    """``{wrapper} {core} ({detail})``, the core's own parenthesis (its options) merged in."""
    if core.endswith(")"):
        return f"{wrapper} {core[:-1]}; {detail})"
    return f"{wrapper} {core} ({detail})"


@dataclass(frozen=True)
class PeripheralConfig:
    """The Wishbone peripheral (:class:`cipher_cores.cores.bus.CipherPeripheral`, every mode, default FIFOs)
    around one core configuration; with ``bus="wishbone-gcm"`` AES-GCM too (``gcm=True``), with
    ``"wishbone-dma"`` its DMA master; ``"axi"`` and ``"axi-gcm"`` the same peripheral on
    AXI4-Lite (``protocol="axi4-lite"``).

    Raises :exc:`ValueError` (one line) for a core, a FIFO depth or GCM the peripheral cannot
    take: the peripheral's own limits, asked of
    :meth:`cipher_cores.cores.bus.CipherPeripheral.check_limits` before anything is built.
    """
    core: CoreConfig
    bus: str = "wishbone"
    #: The depth of each data FIFO in words (``None``: the peripheral's default, two blocks).
    fifo_words: int | None = None

    def __post_init__(self):
        if self.bus not in WRAPPERS:
            raise ValueError(f"unknown bus wrapper {self.bus!r}; choose from "
                             f"{', '.join(WRAPPERS)}")
        from cipher_cores.cores.bus import CipherPeripheral
        CipherPeripheral.check_limits(self.core.block_bits, self.core.key_bits,
                                      fifo_words=self.fifo_words, gcm=self.gcm, dma=self.dma,
                                      protocol=self.protocol, core=self.core.label)

    @property
    def gcm(self) -> bool:
        """Whether AES-GCM is built."""
        return self.bus in ("wishbone-gcm", "axi-gcm")

    @property
    def dma(self) -> bool:
        """Whether the DMA master is built."""
        return self.bus == "wishbone-dma"

    @property
    def protocol(self) -> str:
        """The register interface's bus (:data:`cipher_cores.cores.bus.PROTOCOLS`)."""
        return "axi4-lite" if self.bus.startswith("axi") else "wishbone"

    @property
    def modes(self) -> tuple:
        """The modes built, by name."""
        return _MODE_NAMES + (("GCM",) if self.gcm else ())

    @property
    def block_bits(self) -> int:
        return self.core.block_bits

    @property
    def key_bits(self) -> int:
        return self.core.key_bits

    @property
    def decrypts(self) -> bool:
        return self.core.decrypts

    @property
    def label(self) -> str:
        """``Wishbone AES-128 (ECB/CBC/CFB/OFB/CTR)``; the core's options, if any, come first
        in the parentheses."""
        bus = ("AXI4-Lite" if self.protocol == "axi4-lite" else
               "Wishbone+DMA" if self.dma else "Wishbone")
        return _wrapped_label(bus, self.core.label, "/".join(self.modes))

    @property
    def slug(self) -> str:
        return f"{self.bus.replace('-', '_')}_{self.core.slug}"

    @property
    def text(self) -> str:
        """The target as :func:`parse_target` reads it: ``wishbone:aes-128``."""
        return f"{self.bus}:{self.core.text}"

    def build(self):
        """A new peripheral, with a new core inside."""
        from cipher_cores.cores.bus import CipherPeripheral
        return CipherPeripheral(self.core.build(), gcm=self.gcm, dma=self.dma,
                                fifo_words=self.fifo_words, protocol=self.protocol)

    def export_top(self):
        """What ``cipher-cores export`` writes: the peripheral itself (ports ``clk``, ``rst``,
        ``bus__cyc`` ...) on Wishbone; on AXI4-Lite inside
        :func:`cipher_cores.cores.bus.axi_top` (ports ``aclk``, ``aresetn``, ``s_axi_awaddr``
        ..., ``irq``)."""
        if self.protocol == "axi4-lite":
            from cipher_cores.cores.bus import axi_top
            return axi_top(self.build())
        return self.build()

    def encrypt(self, key: int, block: int) -> int:
        return self.core.encrypt(key, block)

    def decrypt(self, key: int, block: int) -> int:
        return self.core.decrypt(key, block)

    def vectors(self) -> list:
        return self.core.vectors()

    def papers(self) -> list:
        """None: the papers measured bare cores (the bare core's row brings them)."""
        return []

    def cycles(self, *, blocks: int | None = None, seed: int = 1) -> CycleFigures:
        """The figures firmware sees, one Wishbone access at a time
        (:func:`~cipher_cores.scripts.flow.measure.measure_bus_cycles`, on 16 blocks by
        default)."""
        return measure_bus_cycles(self, blocks=16 if blocks is None else blocks, seed=seed)

    def to_dict(self) -> dict:
        return {"wrapper": self.bus, "modes": list(self.modes), **self.core.to_dict()}


# --- AES-GCM around a core (cipher_cores.cores.gcm) ---------------------------------------------

#: GCM configurations a target can name before its core (``gcm:aes-128``): the GHASH of each.
GCM_PRESETS = {
    # Tables in block RAM; on iCE40 one of them in logic (``"auto"``), so it fits an UP5K.
    "gcm": {"multiplier": "auto", "digit_bits": 16},
    "gcm-d8": {"multiplier": "bram", "digit_bits": 8},
    "gcm-logic": {"multiplier": "logic", "digit_bits": 16},
    # A whole product a cycle: keeps pace with the pipelined AES (a block every edge).
    "gcm-d128": {"multiplier": "logic", "digit_bits": 128},
}


@dataclass(frozen=True)
class GCMConfig:
    """:class:`cipher_cores.cores.gcm.GCM` around one core configuration, with the GHASH of a
    preset of :data:`GCM_PRESETS`.

    GCM is not a block cipher: :meth:`cycles` simulates whole GCM messages
    (:func:`cipher_cores.cores.gcm.sim.simulate_gcm`) and checks them against the Python model.
    Raises :exc:`ValueError` for an unknown preset or a core whose blocks are not 128 bits.
    """
    core: CoreConfig
    preset: str = "gcm"

    def __post_init__(self):
        if self.preset not in GCM_PRESETS:
            raise ValueError(f"unknown GCM preset {self.preset!r}; choose from "
                             f"{', '.join(GCM_PRESETS)}")
        if self.core.block_bits != 128:
            raise ValueError(f"GCM takes a cipher with 128-bit blocks; {self.core.label} has "
                             f"{self.core.block_bits}")

    @property
    def options(self) -> dict:
        return dict(GCM_PRESETS[self.preset])

    @property
    def label(self) -> str:
        """``GCM AES-128 (GHASH bram, 16-bit digits)``; the core's options, if any, first."""
        return _wrapped_label("GCM", self.core.label, f"GHASH {self.options['multiplier']}, "
                                                      f"{self.options['digit_bits']}-bit digits")

    @property
    def slug(self) -> str:
        return f"{self.preset.replace('-', '_')}_{self.core.slug}"

    @property
    def text(self) -> str:
        return f"{self.preset}:{self.core.text}"

    @property
    def block_bits(self) -> int:
        return 128

    @property
    def key_bits(self) -> int:
        return self.core.key_bits

    @property
    def decrypts(self) -> bool:
        return True

    def build(self):
        """A new GCM, with a new core inside."""
        from cipher_cores.cores.gcm import GCM
        return GCM(self.core.build(), **self.options)

    def papers(self) -> list:
        """None: no seed paper measured GCM."""
        return []

    def cycles(self, *, blocks: int | None = None, seed: int = 1) -> CycleFigures:
        """:class:`~cipher_cores.scripts.flow.measure.CycleFigures` by simulation (``through``
        is ``"gcm"``): a key, then a message of two AAD blocks and ``blocks`` text blocks (8 by
        default) encrypted, and its ciphertext decrypted, at full speed. ``cycles_per_block`` is
        the median interval between text results, ``latency`` the edges from the last text block
        in to the tag out (a text block's own result leaves on the edge it comes in, its
        keystream computed ahead), ``key_to_input`` the edges from the key to the first IV block
        absorbed (the key expansion, ``H`` and, in block RAM, the table fill); ``verified``
        whether both match the model of :mod:`cipher_cores.cores.gcm.reference`."""
        import random
        from cipher_cores.cores.gcm import reference
        from cipher_cores.cores.gcm.sim import GCMMessage, simulate_gcm
        from cipher_cores.cores.sim import LoadKey
        from cipher_cores.cores.sim.cycles import steady_interval

        blocks = 8 if blocks is None else blocks
        rng = random.Random(seed)
        key = rng.getrandbits(self.key_bits)
        iv, aad, text = rng.randbytes(12), rng.randbytes(32), rng.randbytes(16 * blocks)
        model = reference.encrypt(lambda x: self.core.encrypt(key, x), iv, aad, text)
        run = simulate_gcm(self.build(), [
            LoadKey(key), GCMMessage(iv, aad, text),
            GCMMessage(iv, aad, model.text, decrypt=True, tag=model.tag)])
        encrypted, decrypted = run.messages
        verified = (encrypted.text == model.text and
                    encrypted.tag == int.from_bytes(model.tag, "big") and
                    decrypted.text == text and decrypted.authentic)
        inputs = run.logs["input"].edges
        # Input items: the IV, 2 AAD blocks and the text of each message (and the tag).
        last_text = [2 + blocks, 2 + blocks + 3 + blocks]

        def steady(message):
            edges = message.output_edges
            return steady_interval(b - a for a, b in zip(edges, edges[1:]))
        return CycleFigures(
            cycles_per_block=steady(encrypted), cycles_per_block_decrypt=steady(decrypted),
            latency=encrypted.tag_edge - inputs[last_text[0]],
            latency_decrypt=decrypted.tag_edge - inputs[last_text[1]],
            key_to_input=inputs[0] - run.logs["key"].edges[0], verified=verified,
            blocks=blocks, through="gcm")

    def to_dict(self) -> dict:
        return {"wrapper": self.preset, **self.options, **self.core.to_dict()}


def parse_target(text: str) -> Target:
    """Parse ``[WRAPPER:]NAME[-KEYBITS][:OPTION=VALUE,...]`` into a :class:`Target`: a bare
    core (``aes-128``) or a core in a bus wrapper of :data:`WRAPPERS` (``wishbone:aes-128``).

    ``verilog:FILE.toml`` names another project's Verilog core by its description
    (:class:`cipher_cores.scripts.flow.external.ExternalConfig`); ``gcm:aes-128`` (or another
    preset of :data:`GCM_PRESETS`) AES-GCM around a core (:class:`GCMConfig`).

    Raises :exc:`KeyError` for an unknown core and :exc:`ValueError` for anything else, each
    with a one-line message."""
    head, sep, rest = text.strip().partition(":")
    wrapper = head.strip().lower()
    if sep and wrapper in GCM_PRESETS:
        if not rest.strip():
            raise ValueError(f"{wrapper}: needs a core after it, e.g. {wrapper}:aes-128")
        return GCMConfig(core=parse_config(rest), preset=wrapper)
    if sep and wrapper == external.PREFIX:
        if not rest.strip():
            raise ValueError(f"{external.PREFIX}: needs a description file, e.g. "
                             f"{external.PREFIX}:peer.toml")
        return external.ExternalConfig.load(rest.strip())
    if sep and wrapper in WRAPPERS:
        if not rest.strip():
            raise ValueError(f"a wrapper needs a core after it, e.g. {wrapper}:aes-128")
        if rest.strip().partition(":")[0].strip().lower() in WRAPPERS:
            raise ValueError("one wrapper around a core, not two")
        return PeripheralConfig(parse_config(rest), wrapper)
    try:
        return parse_config(text)
    except KeyError as error:
        if not sep:
            raise
        wrappers = ", ".join(f"{name}:CORE" for name in WRAPPERS)
        raise KeyError(f"{error.args[0]} (or a bus wrapper: {wrappers})") from None
