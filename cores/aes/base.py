"""What the AES cores share beyond :class:`~cipher_cores.cores.cipher.BlockCipher`: the block
size, the allowed key sizes and the round count."""

from ..cipher import BlockCipher
from .reference import check_key_bits
from .transforms import ROUNDS


__all__ = ["AESCipher"]


class AESCipher(BlockCipher):
    """Base class of the AES cores (:class:`~cipher_cores.cores.aes.AES`,
    :class:`~cipher_cores.cores.aes.TTableAES`, :class:`~cipher_cores.cores.aes.CompactAES`,
    :class:`~cipher_cores.cores.aes.BlockRamAES`, :class:`~cipher_cores.cores.aes.PipelinedAES`): a
    :class:`~cipher_cores.cores.cipher.BlockCipher` with 128-bit blocks and an AES key size, and
    the round count that follows from it. Everything else (``decrypt`` and the figures) is the
    shared base's.

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    decrypt : :class:`bool`
        As in :class:`~cipher_cores.cores.cipher.BlockCipher`.
    """
    def __init__(self, key_bits: int = 128, *, decrypt: bool = True):
        super().__init__(128, check_key_bits(key_bits), decrypt=decrypt)

    @property
    def rounds(self) -> int:
        """Nr, the number of rounds."""
        return ROUNDS[self._key_bits]
