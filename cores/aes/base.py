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
    random_bits : :class:`int`
        As in :class:`~cipher_cores.cores.cipher.BlockCipher` (0 unless the core is masked).
    lanes : :class:`int`
        Blocks per transfer (1 or 2): ``block_bits`` is ``128 * lanes``, block 0 in the most
        significant 128 bits, each in the byte order of a single block.
    """
    def __init__(self, key_bits: int = 128, *, decrypt: bool = True, lanes: int = 1,
                 random_bits: int = 0):
        if not isinstance(lanes, int) or isinstance(lanes, bool):
            raise TypeError(f"lanes must be an integer (1 or 2), not {lanes!r}")
        if lanes not in (1, 2):
            raise ValueError(f"lanes must be 1 or 2, not {lanes!r}")
        super().__init__(128 * lanes, check_key_bits(key_bits), decrypt=decrypt,
                         random_bits=random_bits)

    @property
    def rounds(self) -> int:
        """Nr, the number of rounds."""
        return ROUNDS[self._key_bits]
