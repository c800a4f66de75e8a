"""AES (FIPS-197) cores, their building blocks and a reference model."""

from .core import AES
from .catalog import CATALOG


__all__ = ["AES", "CATALOG"]
