"""AES (FIPS-197) cores, their building blocks and a reference model."""

from .compact import CompactAES
from .core import AES
from .pipelined import PipelinedAES
from .catalog import CATALOG


__all__ = ["AES", "PipelinedAES", "CompactAES", "CATALOG"]
