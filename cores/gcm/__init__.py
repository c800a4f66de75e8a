"""AES-GCM (NIST SP 800-38D) around any 128-bit block-cipher core, and GHASH.

:class:`~cipher_cores.cores.gcm.core.GCM` is the authenticated-encryption component;
:class:`~cipher_cores.cores.gcm.ghash.GHASH` its digit-serial GF(2^128) multiplier; :mod:`cipher_cores.cores.gcm.field` the field in the library's bit
order; :mod:`cipher_cores.cores.gcm.reference` a Python model of GHASH and GCM; :mod:`cipher_cores.cores.gcm.sim` runs
whole messages through the component in simulation. This package is a mode around ciphers, not a
cipher: it has no ``CATALOG``.
"""

from .core import GCM, GCMBlock, GCMStart, GCMTag
from .ghash import GHASH, GHASHRequest


__all__ = ["GCM", "GCMStart", "GCMBlock", "GCMTag", "GHASH", "GHASHRequest"]
