"""The example vectors printed in FIPS-197 Appendix C, for demos and self-tests.

The full NIST AESAVS vector files are not shipped here: the tests read them from the installed
``cryptography-vectors`` package.
"""

from typing import NamedTuple


__all__ = ["KnownAnswer", "FIPS197_APPENDIX_C"]


class KnownAnswer(NamedTuple):
    key_bits: int
    key: int
    plaintext: int
    ciphertext: int


def _counting_key(key_bits):
    # The Appendix C keys are the bytes 00, 01, 02, ... in order.
    return int.from_bytes(bytes(range(key_bits // 8)), "big")


#: FIPS-197 Appendix C.1, C.2 and C.3 (AES-128, AES-192, AES-256).
FIPS197_APPENDIX_C = (
    KnownAnswer(128, _counting_key(128), 0x00112233445566778899aabbccddeeff,
                0x69c4e0d86a7b0430d8cdb78070b4c55a),
    KnownAnswer(192, _counting_key(192), 0x00112233445566778899aabbccddeeff,
                0xdda97ca4864cdfe06eaf70a0ec0d7191),
    KnownAnswer(256, _counting_key(256), 0x00112233445566778899aabbccddeeff,
                0x8ea2b7ca516745bfeafc49904b496089),
)
