"""What the AES cores share: their checked parameters and the round count."""

from ..cipher import BlockCipher
from .reference import check_key_bits
from .transforms import ROUNDS


__all__ = ["AESCipher"]


class AESCipher(BlockCipher):
    """Base class of the AES cores (:class:`~cipher_cores.cores.aes.AES`, :class:`~cipher_cores.cores.aes.TTableAES`,
    :class:`~cipher_cores.cores.aes.CompactAES`, :class:`~cipher_cores.cores.aes.PipelinedAES`): a
    :class:`~cipher_cores.cores.cipher.BlockCipher` with 128-bit blocks, checking the two parameters every AES
    core takes (a subclass checks its own others before calling this constructor).

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    decrypt : :class:`bool`
        Whether the core has the decryption path; without it every block is encrypted.
    """
    def __init__(self, key_bits: int = 128, *, decrypt: bool = True):
        key_bits = check_key_bits(key_bits)
        if not isinstance(decrypt, bool):
            raise TypeError(f"decrypt must be a bool (True or False), not {decrypt!r}")
        self._key_bits = key_bits
        self._decrypt = decrypt
        super().__init__(128, key_bits)

    @property
    def decrypt(self) -> bool:
        """Whether the core decrypts; without it every block is encrypted."""
        return self._decrypt

    @property
    def rounds(self) -> int:
        """Nr, the number of rounds."""
        return ROUNDS[self._key_bits]
