"""The catalog of cipher cores: every configuration the build, report, demo and tests know.

Each cipher package declares its own entries: it exports ``CATALOG``, a tuple of
:class:`CipherEntry` (one per architecture), built from the package's own constants (key sizes,
``ROUNDS_PER_CYCLE``, the S-box names), its printed known-answer vectors and its paper's figures.
This module finds every subpackage of :mod:`cores` that exports a ``CATALOG`` and imports it, so
that adding a cipher, or another architecture of one, touches that package alone.

The command line's choices and help, the report's defaults and papers' rows, the demo and the board
self-test are all generated from here.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable

from .cipher import BlockCipher


__all__ = ["CoreOption", "KnownAnswer", "PaperFigure", "CipherEntry", "CoreConfig", "catalog",
           "get_core", "parse_config", "configurations", "DEFAULT_CORE"]


#: The entry ``cipher-cores build`` uses when no ``--core`` is given.
DEFAULT_CORE = "aes"


@dataclass(frozen=True)
class CoreOption:
    """A keyword argument of a core's constructor: its type, allowed values and default.

    ``choices`` is the closed set of values the core accepts (for a ``bool``, both).
    """
    name: str
    kind: type                  # int, str or bool
    default: Any
    choices: tuple
    help: str = ""

    def __post_init__(self):
        if self.kind is bool and not self.choices:
            object.__setattr__(self, "choices", (True, False))
        if self.default not in self.choices:
            raise ValueError(f"option {self.name}: default {self.default!r} is not one of "
                             f"{self.choices!r}")

    @property
    def flag(self) -> str:
        """The command-line flag: ``rounds_per_cycle`` is ``--rounds-per-cycle``."""
        return "--" + self.name.replace("_", "-")

    def format(self, value) -> str:
        """``value`` as the command line writes it (``yes``/``no`` for a ``bool``)."""
        if self.kind is bool:
            return "yes" if value else "no"
        return str(value)

    @property
    def allowed(self) -> str:
        """The choices as the command line writes them: ``1, 2, 4, 8, 16 or 31``."""
        texts = [self.format(choice) for choice in self.choices]
        return ", ".join(texts[:-1]) + " or " + texts[-1] if len(texts) > 1 else texts[0]

    def parse(self, text: str):
        """Convert command-line ``text``; :exc:`ValueError` with a one-line reason if it is not
        one of the choices."""
        lowered = str(text).strip().lower()
        value = None
        if self.kind is bool:
            value = {"1": True, "yes": True, "true": True, "on": True,
                     "0": False, "no": False, "false": False, "off": False}.get(lowered)
        elif self.kind is int:
            try:
                value = int(lowered)
            except ValueError:
                pass
        else:
            value = str(text).strip()
        if value is None or value not in self.choices:
            raise ValueError(f"{self.flag} must be {self.allowed}, not {text!r}")
        return value


@dataclass(frozen=True)
class KnownAnswer:
    """A known-answer vector as a standard or paper prints it."""
    key_bits: int
    key: int
    plaintext: int
    ciphertext: int
    source: str = ""


@dataclass(frozen=True)
class PaperFigure:
    """A result as a seed paper states it (``None`` where the paper gives no figure).

    ``compares_with`` is the label of our configuration that does the same job (``AES-128``)."""
    label: str
    compares_with: str
    source: str
    device: str
    slices: int
    fmax_mhz: float | None
    throughput_mbps: float
    latency: int | None
    cycles_per_block: int | None
    note: str = ""

    @property
    def kbps_per_slice(self) -> float:
        return 1000 * self.throughput_mbps / self.slices

    def to_dict(self) -> dict:
        return {"label": self.label, "compares_with": self.compares_with, "source": self.source,
                "device": self.device, "slices": self.slices, "fmax_mhz": self.fmax_mhz,
                "throughput_mbps": self.throughput_mbps, "latency": self.latency,
                "cycles_per_block": self.cycles_per_block,
                "kbps_per_slice": round(self.kbps_per_slice, 1), "note": self.note}


@dataclass(frozen=True)
class CipherEntry:
    """One architecture of one cipher, as the catalog knows it.

    ``component`` is the core's class, a :class:`~cipher_cores.cores.cipher.BlockCipher`, called
    as ``component(key_bits=..., **options)``; ``encrypt`` and ``decrypt`` are its reference
    model, ``f(key, block, key_bits) -> int``.

    The entry is where a configuration's key size and options are checked, once:
    :meth:`check` (which every :class:`CoreConfig` asks when it is made) and
    :meth:`parse_options` (for option values written as text, as the command line and
    :func:`parse_config` have them). Each raises :exc:`ValueError` with a one-line message.
    """
    name: str                   # command-line name: "aes", "present"
    title: str                  # label prefix: "AES", "PRESENT"
    component: type
    encrypt: Callable
    decrypt: Callable
    block_bits: int
    key_bits: tuple
    default_key_bits: int
    description: str = ""
    options: tuple = ()
    vectors: tuple = ()         # KnownAnswer, as printed in the standard or paper
    papers: tuple = ()          # PaperFigure
    #: Configurations the report measures by default (``cipher-cores report`` with no --cores).
    report_defaults: tuple = ()

    def option(self, name: str) -> CoreOption:
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(name)

    @property
    def key_sizes(self) -> str:
        texts = [str(bits) for bits in self.key_bits]
        return ", ".join(texts[:-1]) + " or " + texts[-1] if len(texts) > 1 else texts[0]

    def _known_option(self, name: str) -> CoreOption:
        try:
            return self.option(name)
        except KeyError:
            known = ", ".join(option.name for option in self.options) or "none"
            raise ValueError(f"{self.title} has no option {name!r} (options: {known})") \
                from None

    def check(self, key_bits, options: dict):
        """Check a key size and constructor options (values, not text) for this entry;
        :exc:`ValueError` with a one-line message for one it does not take."""
        if key_bits not in self.key_bits:
            raise ValueError(f"{self.title} takes key sizes {self.key_sizes}, not {key_bits!r}")
        for name, value in options.items():
            option = self._known_option(name)
            if value not in option.choices or type(value) is not option.kind:
                raise ValueError(f"{option.name} must be {option.allowed}, not {value!r}")

    def parse_options(self, texts: dict) -> dict:
        """Option values from their text (``{"rounds_per_cycle": "4"}`` gives
        ``{"rounds_per_cycle": 4}``), as :meth:`CoreOption.parse` reads each; :exc:`ValueError`
        with a one-line message for an option this entry does not have or a value it does not
        take."""
        return {name: self._known_option(name).parse(text) for name, text in texts.items()}

    def config(self, key_bits: int | None = None, **options) -> "CoreConfig":
        """A :class:`CoreConfig` of this entry (``key_bits`` by default the entry's default);
        :exc:`ValueError` for a value it does not take (see :meth:`check`)."""
        key_bits = self.default_key_bits if key_bits is None else key_bits
        return CoreConfig(self, key_bits, dict(options))

    def configurations(self) -> list:
        """Every configuration: each key size with each combination of option values."""
        configs = []
        for key_bits in self.key_bits:
            for values in itertools.product(*(option.choices for option in self.options)):
                configs.append(self.config(
                    key_bits, **{o.name: v for o, v in zip(self.options, values)}))
        return configs


@dataclass(frozen=True)
class CoreConfig:
    """One configuration of a core: a catalog entry, a key size and constructor options.

    Made only with values its entry takes: :exc:`ValueError` otherwise (asked of
    :meth:`CipherEntry.check`)."""
    spec: CipherEntry
    key_bits: int
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        self.spec.check(self.key_bits, self.options)

    @property
    def block_bits(self) -> int:
        return self.spec.block_bits

    def all_options(self) -> dict:
        options = {option.name: option.default for option in self.spec.options}
        options.update(self.options)
        return options

    def _non_default(self) -> list:
        return [(name, value) for name, value in self.all_options().items()
                if value != self.spec.option(name).default]

    @property
    def label(self) -> str:
        """A short name, like ``AES-128`` or ``PRESENT-80 (rounds_per_cycle=2)``; options at
        their defaults are left out."""
        extra = [f"{name}={value}" for name, value in self._non_default()]
        text = f"{self.spec.title}-{self.key_bits}"
        return f"{text} ({', '.join(extra)})" if extra else text

    @property
    def slug(self) -> str:
        """The label as a file-name-safe identifier, options written as the command line writes
        them: ``present80_decrypt_no``, ``aes128_sbox_logic``."""
        text = f"{self.spec.name}{self.key_bits}"
        for name, value in self._non_default():
            text += f"_{name}_{self.spec.option(name).format(value)}"
        return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in text)

    @property
    def text(self) -> str:
        """The configuration as :func:`parse_config` reads it: ``present-80:decrypt=no``."""
        extra = [f"{name}={self.spec.option(name).format(value)}"
                 for name, value in self._non_default()]
        return f"{self.spec.name}-{self.key_bits}" + (":" + ",".join(extra) if extra else "")

    @property
    def decrypts(self) -> bool:
        """Whether cores of this configuration decrypt. By convention a core that can leave its
        decryption path out takes a ``decrypt`` option; with ``decrypt=False`` it encrypts every
        block, whatever the block's ``decrypt`` bit says."""
        return bool(self.all_options().get("decrypt", True))

    def build(self) -> BlockCipher:
        """A new instance of the core; :exc:`TypeError` if the entry's component does not make a
        :class:`~cipher_cores.cores.cipher.BlockCipher`."""
        core = self.spec.component(key_bits=self.key_bits, **self.all_options())
        if not isinstance(core, BlockCipher):
            raise TypeError(f"the component of catalog entry {self.spec.name!r} must be a "
                            f"BlockCipher (a cipher core of this library), not {core!r}")
        return core

    def encrypt(self, key: int, block: int) -> int:
        return self.spec.encrypt(key, block, self.key_bits)

    def decrypt(self, key: int, block: int) -> int:
        return self.spec.decrypt(key, block, self.key_bits)

    def vectors(self) -> list:
        """The printed known-answer vectors (:class:`KnownAnswer`) for this key size."""
        return [vector for vector in self.spec.vectors if vector.key_bits == self.key_bits]

    def papers(self) -> list:
        """The papers' figures for the same cipher and key size as this configuration."""
        base = f"{self.spec.title}-{self.key_bits}"
        return [paper for paper in self.spec.papers if paper.compares_with == base]

    def cycles(self, *, blocks: int | None = None, seed: int = 1):
        """The core's :class:`~cipher_cores.cores.sim.cycles.CycleFigures`, simulated on
        ``blocks`` random blocks each way (6 by default) and checked against the reference model
        (:func:`~cipher_cores.cores.sim.cycles.core_cycles`)."""
        # Imported here: the catalog is read by every cipher package, and most of its users
        # never simulate.
        from .sim.cycles import core_cycles
        return core_cycles(self, blocks=6 if blocks is None else blocks, seed=seed)

    def to_dict(self) -> dict:
        return {"core": self.spec.name, "key_bits": self.key_bits, **self.all_options()}


@functools.cache
def catalog() -> dict:
    """Every :class:`CipherEntry`, by name, from the subpackages of :mod:`cores` that export a
    ``CATALOG``, in the order the packages are found (alphabetical)."""
    import cipher_cores.cores
    entries = {}
    for module in sorted(pkgutil.iter_modules(cipher_cores.cores.__path__), key=lambda m: m.name):
        if not module.ispkg:
            continue
        package = importlib.import_module(f"cipher_cores.cores.{module.name}")
        for entry in getattr(package, "CATALOG", ()):
            if entry.name in entries:
                raise ValueError(f"two catalog entries are called {entry.name!r}")
            entries[entry.name] = entry
    return entries


def get_core(name: str) -> CipherEntry:
    """The :class:`CipherEntry` called ``name``; :exc:`KeyError` with the known names if none
    is."""
    entries = catalog()
    try:
        return entries[name]
    except KeyError:
        raise KeyError(f"unknown core {name!r}; choose from {', '.join(entries)}") from None


def parse_config(text: str) -> CoreConfig:
    """Parse ``NAME[-KEYBITS][:OPTION=VALUE,...]`` (``aes-128``, ``present-80:decrypt=no``).

    Raises :exc:`KeyError` for an unknown core and :exc:`ValueError` for anything else, each
    with a one-line message."""
    text = text.strip()
    head, _, rest = text.partition(":")
    name, key_text = head.strip().lower(), ""
    if name not in catalog() and "-" in name:
        name, _, key_text = name.rpartition("-")
        if not key_text.isdigit():
            raise ValueError(f"key size in {text!r} must be an integer")
    spec = get_core(name)
    key_bits = int(key_text) if key_text else spec.default_key_bits
    texts = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        option_name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"option {item!r} in {text!r} must be NAME=VALUE")
        texts[option_name.strip().replace("-", "_")] = value
    spec.check(key_bits, {})         # the key size first, as it comes first in the text
    return spec.config(key_bits, **spec.parse_options(texts))


def configurations() -> list:
    """Every configuration of every catalog entry (see :meth:`CipherEntry.configurations`)."""
    return [config for entry in catalog().values() for config in entry.configurations()]
