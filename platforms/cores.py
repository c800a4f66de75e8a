"""The cores the build, report and self-test know, loaded lazily by name.

A :class:`CoreSpec` says where a core's class and reference model live, which key sizes and options
it takes, and which known-answer vectors the standards print for it. Nothing is imported until a
core is built, so a missing or broken core package only affects the commands that use it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable


__all__ = ["CoreOption", "CoreSpec", "CoreConfig", "CORES", "DEFAULT_CORE", "get_core",
           "CoreUnavailable", "parse_config"]


class CoreUnavailable(Exception):
    """The core's package cannot be imported (not written yet, or broken)."""


@dataclass(frozen=True)
class CoreOption:
    """A constructor keyword of a core: its type, allowed values and default."""
    name: str
    kind: type                  # int, str or bool
    default: Any
    choices: tuple | None = None
    help: str = ""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def parse(self, text: str):
        """Convert command-line ``text``; :exc:`ValueError` with a one-line reason if invalid."""
        if self.kind is bool:
            lowered = str(text).lower()
            if lowered in ("1", "yes", "true", "on"):
                value = True
            elif lowered in ("0", "no", "false", "off"):
                value = False
            else:
                raise ValueError(f"{self.flag} must be yes or no, not {text!r}")
        elif self.kind is int:
            try:
                value = int(text)
            except ValueError:
                raise ValueError(f"{self.flag} must be an integer, not {text!r}") from None
        else:
            value = str(text)
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(str(choice) for choice in self.choices)
            raise ValueError(f"{self.flag} must be one of {allowed}, not {text!r}")
        return value


@dataclass(frozen=True)
class CoreSpec:
    """How to make and check one cipher core."""
    name: str
    title: str
    module: str                 # where the component class lives
    cls: str
    reference: str              # module with encrypt_block(key, block, key_bits) / decrypt_block
    block_bits: int
    key_bits: tuple
    default_key_bits: int
    options: tuple = ()
    #: (key_bits, key, plaintext) known-answer inputs printed in the standard or paper.
    vectors: tuple = ()
    hidden: bool = False

    def option(self, name: str) -> CoreOption:
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(name)

    def load(self):
        """The core's component class; :exc:`CoreUnavailable` if it cannot be imported."""
        return getattr(self._import(self.module), self.cls)

    def _import(self, module):
        try:
            return importlib.import_module(module)
        except Exception as error:
            raise CoreUnavailable(f"core {self.name!r} is not available: cannot import "
                                  f"{module} ({type(error).__name__}: {error})") from error

    def reference_functions(self) -> tuple:
        """``(encrypt, decrypt)``, each ``f(key, block, key_bits) -> int``."""
        module = self._import(self.reference)
        return module.encrypt_block, module.decrypt_block

    def available(self) -> bool:
        try:
            self.load()
        except CoreUnavailable:
            return False
        return True


@dataclass(frozen=True)
class CoreConfig:
    """One configuration of a core: key size and constructor options."""
    spec: CoreSpec
    key_bits: int
    options: dict = field(default_factory=dict)

    @property
    def block_bits(self) -> int:
        return self.spec.block_bits

    @property
    def label(self) -> str:
        """A short name, like ``AES-128`` or ``PRESENT-80 (rounds_per_cycle=2)``; options at
        their defaults are left out."""
        extra = [f"{name}={value}" for name, value in self.options.items()
                 if value != self.spec.option(name).default]
        text = f"{self.spec.title}-{self.key_bits}"
        return f"{text} ({', '.join(extra)})" if extra else text

    @property
    def slug(self) -> str:
        """The label as a file-name-safe identifier."""
        text = f"{self.spec.name}{self.key_bits}"
        for name, value in self.options.items():
            if value != self.spec.option(name).default:
                text += f"_{name}_{value}"
        return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in text)

    def all_options(self) -> dict:
        options = {option.name: option.default for option in self.spec.options}
        options.update(self.options)
        return options

    def build(self):
        """A new instance of the core."""
        return self.spec.load()(key_bits=self.key_bits, **self.all_options())

    def encrypt(self, key: int, block: int) -> int:
        return self.spec.reference_functions()[0](key, block, self.key_bits)

    def decrypt(self, key: int, block: int) -> int:
        return self.spec.reference_functions()[1](key, block, self.key_bits)

    def vectors(self) -> list:
        """Known-answer vectors ``(key, plaintext, ciphertext)`` for this key size: the inputs
        printed in the standard, the ciphertext from the reference model."""
        return [(key, block, self.encrypt(key, block))
                for key_bits, key, block in self.spec.vectors if key_bits == self.key_bits]

    def to_dict(self) -> dict:
        return {"core": self.spec.name, "key_bits": self.key_bits, **self.all_options()}


def _fips197_vectors():
    block = 0x00112233445566778899aabbccddeeff
    vectors = [(128, 0x2b7e151628aed2a6abf7158809cf4f3c, 0x3243f6a8885a308d313198a2e0370734)]
    for key_bits in (128, 192, 256):
        key = int.from_bytes(bytes(range(key_bits // 8)), "big")
        vectors.append((key_bits, key, block))
    return tuple(vectors)


def _present_vectors():
    vectors = []
    for key_bits in (80, 128):
        ones = (1 << key_bits) - 1
        for key in (0, ones):
            for block in (0, (1 << 64) - 1):
                vectors.append((key_bits, key, block))
    return tuple(vectors)


#: The known cores, by name.
CORES = {spec.name: spec for spec in [
    CoreSpec(
        name="aes", title="AES", module="cores.aes", cls="AES", reference="cores.aes.reference",
        block_bits=128, key_bits=(128, 192, 256), default_key_bits=128,
        options=(CoreOption("sbox", str, "bram", ("bram", "logic", "boolean"),
                            "S-boxes in block RAM, as look-up logic, or as tower-field "
                            "Boolean logic"),),
        vectors=_fips197_vectors()),
    CoreSpec(
        name="present", title="PRESENT", module="cores.present", cls="PRESENT",
        reference="cores.present.reference",
        block_bits=64, key_bits=(80, 128), default_key_bits=80,
        options=(CoreOption("rounds_per_cycle", int, 1, None, "PRESENT rounds per clock"),
                 CoreOption("decrypt", bool, True, None,
                            "include the decryption datapath (yes/no)")),
        vectors=_present_vectors()),
    CoreSpec(
        name="toy", title="TOY", module="platforms.testing", cls="ToyCipher",
        reference="platforms.testing", block_bits=64, key_bits=(80,), default_key_bits=80,
        hidden=True),
]}

DEFAULT_CORE = "aes"


def get_core(name: str) -> CoreSpec:
    """The :class:`CoreSpec` called ``name``; :exc:`KeyError` with the known names if none is."""
    try:
        return CORES[name]
    except KeyError:
        known = ", ".join(n for n, spec in CORES.items() if not spec.hidden)
        raise KeyError(f"unknown core {name!r}; choose from {known}") from None


def parse_config(text: str) -> CoreConfig:
    """Parse ``NAME[-KEYBITS][:OPTION=VALUE,...]`` (``aes-128``, ``present-80:decrypt=no``)."""
    text = text.strip()
    head, _, rest = text.partition(":")
    name, _, key_text = head.partition("-")
    spec = get_core(name.lower())
    if key_text:
        try:
            key_bits = int(key_text)
        except ValueError:
            raise ValueError(f"key size in {text!r} must be an integer") from None
    else:
        key_bits = spec.default_key_bits
    if key_bits not in spec.key_bits:
        allowed = ", ".join(str(bits) for bits in spec.key_bits)
        raise ValueError(f"{spec.title} takes key sizes {allowed}, not {key_bits}")
    options = {}
    for item in filter(None, rest.split(",")):
        option_name, sep, value = item.partition("=")
        option_name = option_name.strip().replace("-", "_")
        if not sep:
            raise ValueError(f"option {item!r} in {text!r} must be NAME=VALUE")
        try:
            option = spec.option(option_name)
        except KeyError:
            known = ", ".join(option.name for option in spec.options) or "none"
            raise ValueError(f"{spec.title} has no option {option_name!r} "
                             f"(options: {known})") from None
        options[option_name] = option.parse(value.strip())
    return CoreConfig(spec, key_bits, options)
