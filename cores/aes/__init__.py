"""AES (FIPS-197) cores, their building blocks and a reference model."""

from .bram import BlockRamAES
from .compact import CompactAES
from .core import AES
from .masked import MaskedAES
from .pipelined import PipelinedAES, TwoLanePipelinedAES
from .ttable import TTableAES
from .catalog import CATALOG


__all__ = ["AES", "PipelinedAES", "TwoLanePipelinedAES", "TTableAES", "CompactAES", "BlockRamAES", "MaskedAES",
           "CATALOG"]
