"""What the PRESENT cores share: their checked parameters."""

from ..cipher import BlockCipher
from .reference import check_key_bits
from .tables import BLOCK_BITS


__all__ = ["PRESENTCipher"]


class PRESENTCipher(BlockCipher):
    """Base class of the PRESENT cores (:class:`~cipher_cores.cores.present.PRESENT`,
    :class:`~cipher_cores.cores.present.SerialPRESENT`, :class:`~cipher_cores.cores.present.PipelinedPRESENT`): a
    :class:`~cipher_cores.cores.cipher.BlockCipher` with 64-bit blocks, checking the two parameters every
    PRESENT core takes (a subclass with more checks its own before calling this constructor).

    Parameters
    ----------
    key_bits : :class:`int`
        80 (PRESENT-80) or 128 (PRESENT-128).
    decrypt : :class:`bool`
        Whether the core has the decryption path; without it every block is encrypted.
    """
    def __init__(self, key_bits: int = 80, *, decrypt: bool = True):
        check_key_bits(key_bits)
        if not isinstance(decrypt, bool):
            raise TypeError(f"decrypt must be a bool, not {decrypt!r}")
        self._key_bits = key_bits
        self._decrypt = decrypt
        super().__init__(BLOCK_BITS, key_bits)

    @property
    def decrypt(self) -> bool:
        """Whether the core has the decryption path."""
        return self._decrypt
