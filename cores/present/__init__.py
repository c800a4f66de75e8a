"""PRESENT-80/128 (Bogdanov et al., CHES 2007): tables, reference model and the hardware cores."""

from .core import ROUNDS_PER_CYCLE, PRESENT
from .keytable import KeyTablePRESENT
from .serial import SerialPRESENT
from .pipelined import PipelinedPRESENT
from .bram import BlockRamPRESENT
from .masked import MaskedPRESENT
from .catalog import CATALOG


__all__ = ["ROUNDS_PER_CYCLE", "PRESENT", "KeyTablePRESENT", "SerialPRESENT", "PipelinedPRESENT",
           "BlockRamPRESENT", "MaskedPRESENT", "CATALOG"]
