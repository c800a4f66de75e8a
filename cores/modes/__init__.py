"""Modes of operation for any core with the library's block-cipher interface.

See :class:`~cipher_cores.cores.modes.engine.ModeOfOperation`; :mod:`cipher_cores.cores.modes.reference` is their Python
model.
"""

from .engine import CBC, CFB, CTR, ECB, OFB, Mode, ModeOfOperation, ModeRequest, ModeResult


__all__ = ["Mode", "ModeRequest", "ModeResult", "ModeOfOperation",
           "ECB", "CBC", "CFB", "OFB", "CTR"]
