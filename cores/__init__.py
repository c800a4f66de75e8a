"""Block-cipher IP cores in Amaranth HDL: AES and PRESENT on one shared stream interface."""

from .interface import BlockRequest, BlockCipherSignature


__all__ = ["BlockRequest", "BlockCipherSignature"]
