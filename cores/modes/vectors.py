"""Vectors printed in NIST SP 800-38A (Appendix F) that the vector packages do not ship.

The CAVP files in ``cryptography-vectors`` cover ECB, CBC, CFB and OFB; for CTR they hold RFC
3686's vectors only, so SP 800-38A's are typed in here from the standard (a test checks them
against pycryptodome). Keys, counters and texts are hexadecimal byte strings.
"""

__all__ = ["SP800_38A_PLAINTEXT", "SP800_38A_CTR", "SP800_38A_INITIAL_COUNTER"]

#: The four-block plaintext of every Appendix F example.
SP800_38A_PLAINTEXT = ("6bc1bee22e409f96e93d7e117393172a" "ae2d8a571e03ac9c9eb76fac45af8e51"
                        "30c81c46a35ce411e5fbc1191a0a52ef" "f69f2445df4f9b17ad2b417be66c3710")

#: Appendix F.5 (CTR-AES128/192/256): key, initial counter block, ciphertext.
#: The vector packages ship RFC 3686's CTR vectors only, so these four blocks each are typed in
#: from the standard. The counter crosses a byte boundary (...fcfdfeff to ...fcfdff00).
SP800_38A_CTR = {
    128: ("2b7e151628aed2a6abf7158809cf4f3c",
          "874d6191b620e3261bef6864990db6ce" "9806f66b7970fdff8617187bb9fffdff"
          "5ae4df3edbd5d35e5b4f09020db03eab" "1e031dda2fbe03d1792170a0f3009cee"),
    192: ("8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
          "1abc932417521ca24f2b0459fe7e6e0b" "090339ec0aa6faefd5ccc2c6f4ce8e94"
          "1e36b26bd1ebc670d1bd1d665620abf7" "4f78a7f6d29809585a97daec58c6b050"),
    256: ("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
          "601ec313775789a5b7a7f504bbf3d228" "f443e3ca4d62b59aca84e990cacaf5c5"
          "2b0930daa23de94ce87017ba2d84988d" "dfc9c58db67aada613c2dd08457941a6"),
}


#: The initial counter block of F.5 (the counter crosses a byte boundary: ...fcfdfeff to
#: ...fcfdff00).
SP800_38A_INITIAL_COUNTER = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
