"""Readers for the NIST mode-of-operation vectors shipped by ``cryptography-vectors``: the CAVP
(AESAVS) CBC, CFB128 and OFB response files and the AES-CTR files (RFC 3686 vectors)."""

from dataclasses import dataclass
from pathlib import Path

from .nist import parse_rsp


__all__ = ["ModeVector", "MODE_FILE_KINDS", "mode_vector_path", "mode_vectors", "ctr_vectors",
           "SP800_38A_CTR", "sp800_38a_ctr_vectors"]


#: The CAVP file kinds of each mode; the first four are known-answer tests, MMT the multi-block.
MODE_FILE_KINDS = ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")

_PREFIX = {"CBC": "CBC", "CFB": "CFB128", "OFB": "OFB"}


@dataclass(frozen=True)
class ModeVector:
    """One message. ``key`` and ``iv`` are big-endian integers; ``plaintext`` and ``ciphertext``
    tuples of 128-bit block integers, the last block padded with zero bytes when the message is
    not whole blocks (``length`` is its length in bytes)."""
    source: str
    decrypt: bool
    key: int
    iv: int
    plaintext: tuple
    ciphertext: tuple
    length: int

    @property
    def given(self) -> tuple:
        return self.ciphertext if self.decrypt else self.plaintext

    @property
    def expected(self) -> tuple:
        return self.plaintext if self.decrypt else self.ciphertext


def _blocks(hex_text: str) -> tuple:
    data = bytes.fromhex(hex_text)
    data += bytes(-len(data) % 16)
    return tuple(int.from_bytes(data[i:i + 16], "big") for i in range(0, len(data), 16))


def _aes_dir() -> Path:
    import cryptography_vectors
    return Path(cryptography_vectors.__file__).parent / "ciphers" / "AES"


def mode_vector_path(mode: str, kind: str, key_bits: int) -> Path:
    """The CAVP file of ``mode`` (``CBC``, ``CFB`` for CFB128, ``OFB``), ``kind`` (one of
    :data:`MODE_FILE_KINDS`) and key size."""
    if mode not in _PREFIX:
        raise ValueError(f"mode must be CBC, CFB or OFB, not {mode!r}")
    if kind not in MODE_FILE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(MODE_FILE_KINDS)}, not {kind!r}")
    path = _aes_dir() / mode / f"{_PREFIX[mode]}{kind}{key_bits}.rsp"
    if not path.exists():
        raise FileNotFoundError(f"CAVP file {path.name} is not in cryptography-vectors")
    return path


def _read(path: Path) -> list:
    vectors = []
    for section, record in parse_rsp(path):
        if "COUNT" not in record:
            continue
        if section not in ("ENCRYPT", "DECRYPT"):
            raise ValueError(f"{path.name}: unexpected section [{section}]")
        plaintext, ciphertext = record["PLAINTEXT"], record["CIPHERTEXT"]
        if len(plaintext) != len(ciphertext):
            raise ValueError(f"{path.name} COUNT={record['COUNT']}: plaintext and ciphertext "
                             f"lengths differ")
        vectors.append(ModeVector(
            source=f"{path.name} {section} COUNT={record['COUNT']}",
            decrypt=section == "DECRYPT",
            key=int(record["KEY"], 16),
            iv=int(record["IV"], 16),
            plaintext=_blocks(plaintext),
            ciphertext=_blocks(ciphertext),
            length=len(plaintext) // 2,
        ))
    return vectors


def mode_vectors(mode: str, kind: str, key_bits: int) -> list:
    """Every encrypt and decrypt vector of one CAVP file (:func:`mode_vector_path`)."""
    return _read(mode_vector_path(mode, kind, key_bits))


def ctr_vectors(key_bits: int) -> list:
    """The AES-CTR vectors of ``aes-{key_bits}-ctr.txt`` (RFC 3686's, in CAVP format: the IV
    is the initial counter block, incremented as a whole), as encryptions, each followed by the
    same message decrypted (CTR decryption is the same operation)."""
    path = _aes_dir() / "CTR" / f"aes-{key_bits}-ctr.txt"
    if not path.exists():
        raise FileNotFoundError(f"{path.name} is not in cryptography-vectors")
    vectors = []
    for vector in _read(path):
        vectors += [vector, ModeVector(vector.source.replace("ENCRYPT", "DECRYPT"), True,
                                       vector.key, vector.iv, vector.plaintext,
                                       vector.ciphertext, vector.length)]
    return vectors


_SP800_38A_PLAINTEXT = ("6bc1bee22e409f96e93d7e117393172a" "ae2d8a571e03ac9c9eb76fac45af8e51"
                        "30c81c46a35ce411e5fbc1191a0a52ef" "f69f2445df4f9b17ad2b417be66c3710")

#: NIST SP 800-38A, Appendix F.5 (CTR-AES128/192/256): key, initial counter block, ciphertext.
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


def sp800_38a_ctr_vectors(key_bits: int) -> list:
    """SP 800-38A F.5 for ``key_bits``: the encryption (F.5.1/3/5) and decryption (F.5.2/4/6)."""
    key, ciphertext = SP800_38A_CTR[key_bits]
    counter = int("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", 16)
    return [ModeVector(f"SP 800-38A F.5 CTR-AES{key_bits}.{direction}", decrypt, int(key, 16),
                       counter, _blocks(_SP800_38A_PLAINTEXT), _blocks(ciphertext), 64)
            for decrypt, direction in ((False, "Encrypt"), (True, "Decrypt"))]
