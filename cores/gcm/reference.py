"""A plain-Python model of GHASH and GCM, written from NIST SP 800-38D (sections 6.4 to 7.2).

The block cipher is a parameter (``encrypt_block``, a function from a 128-bit integer to a
128-bit integer under a fixed key), so the model serves any 128-bit cipher; the tests run it with
pycryptodome's AES and compare it with pycryptodome's own GCM. Blocks are integers in the
library's byte order (``int.from_bytes(block, "big")``); messages, IVs and tags are ``bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .field import MASK, multiply


__all__ = ["blocks_of", "ghash", "inc32", "lengths_block", "pre_counter_block", "gctr",
           "GCMResult", "encrypt", "decrypt"]


def blocks_of(message: bytes) -> list:
    """``message`` as 128-bit block integers, the last one padded with zero bytes on the right
    (as GHASH pads A, C and the IV)."""
    return [int.from_bytes(message[i:i + 16].ljust(16, b"\0"), "big")
            for i in range(0, len(message), 16)]


def ghash(h: int, blocks) -> int:
    """GHASH_H(X_1 || ... || X_m) (Algorithm 2): ``Y_i = (Y_{i-1} ^ X_i) * H``, ``Y_0 = 0``."""
    y = 0
    for block in blocks:
        y = multiply(y ^ block, h)
    return y


def inc32(block: int) -> int:
    """Increment the last 32 bits of ``block`` modulo 2^32 (the rest unchanged)."""
    return (block & ~0xFFFFFFFF & MASK) | ((block + 1) & 0xFFFFFFFF)


def lengths_block(first_bytes: int, second_bytes: int) -> int:
    """``[len(A)]_64 || [len(C)]_64``: two lengths given in bytes, written in bits."""
    return ((8 * first_bytes) << 64) | (8 * second_bytes)


def pre_counter_block(h: int, iv: bytes) -> int:
    """J0: ``IV || 0^31 || 1`` for a 96-bit IV, else GHASH over the padded IV and its length."""
    if len(iv) == 12:
        return (int.from_bytes(iv, "big") << 32) | 1
    return ghash(h, blocks_of(iv) + [lengths_block(0, len(iv))])


def gctr(encrypt_block: Callable[[int], int], initial_counter: int, message: bytes) -> bytes:
    """GCTR (Algorithm 3): ``message`` XORed with E(ICB), E(inc32(ICB)), ...; the last partial
    block uses the leading bytes of its keystream block."""
    out = bytearray()
    counter = initial_counter
    for i in range(0, len(message), 16):
        chunk = message[i:i + 16]
        keystream = encrypt_block(counter).to_bytes(16, "big")
        out += bytes(a ^ b for a, b in zip(chunk, keystream))
        counter = inc32(counter)
    return bytes(out)


@dataclass(frozen=True)
class GCMResult:
    """What GCM returns: the output text, the full 128-bit tag computed over the ciphertext, and
    (decryption only) whether the given tag matched."""
    text: bytes
    tag: bytes
    authentic: bool | None = None


def _tag(encrypt_block, h, j0, aad: bytes, ciphertext: bytes) -> bytes:
    s = ghash(h, blocks_of(aad) + blocks_of(ciphertext) + [lengths_block(len(aad),
                                                                          len(ciphertext))])
    return (encrypt_block(j0) ^ s).to_bytes(16, "big")


def encrypt(encrypt_block: Callable[[int], int], iv: bytes, aad: bytes,
            plaintext: bytes) -> GCMResult:
    """GCM-AE (Algorithm 4) with the full 128-bit tag (truncate it as needed)."""
    if not iv:
        raise ValueError("the IV must not be empty")
    h = encrypt_block(0)
    j0 = pre_counter_block(h, iv)
    ciphertext = gctr(encrypt_block, inc32(j0), plaintext)
    return GCMResult(ciphertext, _tag(encrypt_block, h, j0, aad, ciphertext))


def decrypt(encrypt_block: Callable[[int], int], iv: bytes, aad: bytes, ciphertext: bytes,
            tag: bytes) -> GCMResult:
    """GCM-AD (Algorithm 5): the plaintext, the computed tag and whether ``tag`` (1 to 16
    bytes, compared with the leading bytes of the computed tag) matches."""
    if not iv:
        raise ValueError("the IV must not be empty")
    if not 1 <= len(tag) <= 16:
        raise ValueError(f"the tag must be 1 to 16 bytes, not {len(tag)}")
    h = encrypt_block(0)
    j0 = pre_counter_block(h, iv)
    plaintext = gctr(encrypt_block, inc32(j0), ciphertext)
    computed = _tag(encrypt_block, h, j0, aad, ciphertext)
    return GCMResult(plaintext, computed, computed[:len(tag)] == tag)
