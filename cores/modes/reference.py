"""Python model of the modes of operation (NIST SP 800-38A), for any block cipher.

The model works on block integers (the library's byte order: the first byte of a message block is
the most significant byte of its integer) and takes the cipher as two functions of one block, so
the same model checks the gateware with AES and with PRESENT.
"""

from typing import Callable, Sequence


__all__ = ["MODE_NAMES", "encrypt_message", "decrypt_message", "process_message"]


#: The modes the model knows, by name, as :class:`cipher_cores.cores.modes.Mode` names them.
MODE_NAMES = ("ECB", "CBC", "CFB", "OFB", "CTR")


def _check(mode: str, block_bits: int):
    if mode not in MODE_NAMES:
        raise ValueError(f"mode must be one of {', '.join(MODE_NAMES)}, not {mode!r}")
    if not isinstance(block_bits, int) or block_bits <= 0:
        raise ValueError(f"block_bits must be a positive integer, not {block_bits!r}")


def encrypt_message(mode: str, encrypt: Callable[[int], int], iv: int, blocks: Sequence[int],
                    block_bits: int) -> list:
    """Encrypt ``blocks`` (plaintext block integers) in ``mode`` with the block cipher
    ``encrypt``; ``iv`` is the IV (CBC, CFB, OFB) or the initial counter block (CTR; the counter
    is the whole block, incremented modulo 2**block_bits), ignored by ECB."""
    _check(mode, block_bits)
    mask = (1 << block_bits) - 1
    out, chain = [], iv
    for block in blocks:
        if mode == "ECB":
            result = encrypt(block)
        elif mode == "CBC":
            result = chain = encrypt(block ^ chain)
        elif mode == "CFB":
            result = chain = encrypt(chain) ^ block
        elif mode == "OFB":
            chain = encrypt(chain)
            result = chain ^ block
        else:
            result = encrypt(chain) ^ block
            chain = (chain + 1) & mask
        out.append(result)
    return out


def decrypt_message(mode: str, encrypt: Callable[[int], int], decrypt: Callable[[int], int] | None,
                    iv: int, blocks: Sequence[int], block_bits: int) -> list:
    """Decrypt ``blocks`` (ciphertext block integers) in ``mode``. ``decrypt`` (the block
    cipher's inverse) is used by ECB and CBC only, and may be ``None`` for the other modes."""
    _check(mode, block_bits)
    if mode in ("OFB", "CTR"):
        return encrypt_message(mode, encrypt, iv, blocks, block_bits)
    out, chain = [], iv
    for block in blocks:
        if mode == "ECB":
            out.append(decrypt(block))
        elif mode == "CBC":
            out.append(decrypt(block) ^ chain)
            chain = block
        else:
            out.append(encrypt(chain) ^ block)
            chain = block
    return out


def process_message(mode: str, decrypting: bool, encrypt, decrypt, iv: int, blocks,
                    block_bits: int) -> list:
    """:func:`decrypt_message` if ``decrypting``, else :func:`encrypt_message`."""
    if decrypting:
        return decrypt_message(mode, encrypt, decrypt, iv, blocks, block_bits)
    return encrypt_message(mode, encrypt, iv, blocks, block_bits)
