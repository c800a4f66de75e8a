"""What the PRESENT cores share beyond :class:`~cipher_cores.cores.cipher.BlockCipher`: the block
size and the allowed key sizes."""

from ..cipher import BlockCipher
from .reference import check_key_bits
from .tables import BLOCK_BITS


__all__ = ["PRESENTCipher"]


class PRESENTCipher(BlockCipher):
    """Base class of the PRESENT cores (:class:`~cipher_cores.cores.present.PRESENT`,
    :class:`~cipher_cores.cores.present.KeyTablePRESENT`,
    :class:`~cipher_cores.cores.present.SerialPRESENT`,
    :class:`~cipher_cores.cores.present.BlockRamPRESENT`,
    :class:`~cipher_cores.cores.present.PipelinedPRESENT`): a
    :class:`~cipher_cores.cores.cipher.BlockCipher` with 64-bit blocks and a PRESENT key size.
    Everything else (``decrypt`` and the figures) is the shared base's.

    Parameters
    ----------
    key_bits : :class:`int`
        80 (PRESENT-80) or 128 (PRESENT-128).
    decrypt : :class:`bool`
        As in :class:`~cipher_cores.cores.cipher.BlockCipher`.
    """
    def __init__(self, key_bits: int = 80, *, decrypt: bool = True):
        super().__init__(BLOCK_BITS, check_key_bits(key_bits), decrypt=decrypt)
