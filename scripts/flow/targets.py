"""What the report measures: a bare core configuration, or a core inside a bus peripheral.

A *target* is written as text, so that a job can carry it to any process (see
:mod:`scripts.flow.jobs`):

* ``aes-128``, ``present-80:decrypt=no``: a bare core, as :func:`cores.catalog.parse_config`
  reads it (a :class:`~cores.catalog.CoreConfig`);
* ``wishbone:aes-128``, ``wishbone:present-80:rounds_per_cycle=4``: the Wishbone peripheral
  (:class:`cores.bus.CipherPeripheral`) with all five modes of operation around that core (a
  :class:`PeripheralConfig`).

Both kinds have what the flow uses of a configuration: ``label``, ``slug``, ``text``,
``block_bits``, ``key_bits``, ``decrypts``, ``build()``, ``encrypt``/``decrypt``, ``papers()``
and ``to_dict()``.
"""

from __future__ import annotations

from dataclasses import dataclass

from cores.catalog import CoreConfig, parse_config

from . import external


__all__ = ["WRAPPERS", "PeripheralConfig", "parse_target"]


#: Bus wrappers a target can name before the core, with what each is.
WRAPPERS = {"wishbone": "the Wishbone B4 peripheral with all five modes (ECB/CBC/CFB/OFB/CTR)"}

_MODE_NAMES = ("ECB", "CBC", "CFB", "OFB", "CTR")


@dataclass(frozen=True)
class PeripheralConfig:
    """The Wishbone peripheral (:class:`cores.bus.CipherPeripheral`, every mode, default FIFOs)
    around one core configuration.

    Raises :exc:`ValueError` (one line) for a core the peripheral cannot take: a block size that
    is not a multiple of 32 bits up to 128, or a key longer than 256 bits.
    """
    core: CoreConfig
    bus: str = "wishbone"

    def __post_init__(self):
        if self.bus not in WRAPPERS:
            raise ValueError(f"unknown bus wrapper {self.bus!r}; choose from "
                             f"{', '.join(WRAPPERS)}")
        bits = self.core.block_bits
        if bits % 32 or bits > 128:
            raise ValueError(f"the Wishbone peripheral takes blocks of 32, 64, 96 or 128 bits; "
                             f"{self.core.label} has {bits}")
        if self.core.key_bits > 256:
            raise ValueError(f"the Wishbone peripheral takes keys of at most 256 bits; "
                             f"{self.core.label} has {self.core.key_bits}")

    @property
    def modes(self) -> tuple:
        """The modes built, by name."""
        return _MODE_NAMES

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
        modes = "/".join(self.modes)
        core = self.core.label
        if core.endswith(")"):
            return f"Wishbone {core[:-1]}; {modes})"
        return f"Wishbone {core} ({modes})"

    @property
    def slug(self) -> str:
        return f"{self.bus}_{self.core.slug}"

    @property
    def text(self) -> str:
        """The target as :func:`parse_target` reads it: ``wishbone:aes-128``."""
        return f"{self.bus}:{self.core.text}"

    def build(self):
        """A new peripheral, with a new core inside."""
        from cores.bus import CipherPeripheral
        return CipherPeripheral(self.core.build())

    def encrypt(self, key: int, block: int) -> int:
        return self.core.encrypt(key, block)

    def decrypt(self, key: int, block: int) -> int:
        return self.core.decrypt(key, block)

    def vectors(self) -> list:
        return self.core.vectors()

    def papers(self) -> list:
        """None: the papers measured bare cores (the bare core's row brings them)."""
        return []

    def to_dict(self) -> dict:
        return {"wrapper": self.bus, "modes": list(self.modes), **self.core.to_dict()}


def parse_target(text: str) -> CoreConfig | PeripheralConfig:
    """Parse ``[WRAPPER:]NAME[-KEYBITS][:OPTION=VALUE,...]``: a bare core (``aes-128``) or a
    core in a bus wrapper of :data:`WRAPPERS` (``wishbone:aes-128``).

    ``verilog:FILE.toml`` names another project's Verilog core by its description
    (:class:`scripts.flow.external.ExternalConfig`).

    Raises :exc:`KeyError` for an unknown core and :exc:`ValueError` for anything else, each
    with a one-line message."""
    head, sep, rest = text.strip().partition(":")
    wrapper = head.strip().lower()
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
