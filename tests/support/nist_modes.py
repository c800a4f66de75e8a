"""Readers for the NIST mode-of-operation vectors shipped by ``cryptography-vectors``: the CAVP
(AESAVS) CBC, CFB128 and OFB response files and the AES-CTR files (RFC 3686 vectors)."""

from dataclasses import dataclass
from pathlib import Path

from cipher_cores.cores.modes.vectors import SP800_38A_CTR
from cipher_cores.cores.modes.vectors import SP800_38A_PLAINTEXT as _SP800_38A_PLAINTEXT

from .nist import Directed, aes_vector_dir, counted_records


__all__ = ["ModeVector", "MODE_FILE_KINDS", "mode_vector_path", "mode_vectors", "ctr_vectors",
           "SP800_38A_CTR", "sp800_38a_ctr_vectors"]


#: The CAVP file kinds of each mode; the first four are known-answer tests, MMT the multi-block.
MODE_FILE_KINDS = ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")

_PREFIX = {"CBC": "CBC", "CFB": "CFB128", "OFB": "OFB"}


@dataclass(frozen=True)
class ModeVector(Directed):
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


def _blocks(hex_text: str) -> tuple:
    data = bytes.fromhex(hex_text)
    data += bytes(-len(data) % 16)
    return tuple(int.from_bytes(data[i:i + 16], "big") for i in range(0, len(data), 16))


def mode_vector_path(mode: str, kind: str, key_bits: int) -> Path:
    """The CAVP file of ``mode`` (``CBC``, ``CFB`` for CFB128, ``OFB``), ``kind`` (one of
    :data:`MODE_FILE_KINDS`) and key size."""
    if mode not in _PREFIX:
        raise ValueError(f"mode must be CBC, CFB or OFB, not {mode!r}")
    if kind not in MODE_FILE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(MODE_FILE_KINDS)}, not {kind!r}")
    path = aes_vector_dir() / mode / f"{_PREFIX[mode]}{kind}{key_bits}.rsp"
    if not path.exists():
        raise FileNotFoundError(f"CAVP file {path.name} is not in cryptography-vectors")
    return path


def _read(path: Path) -> list:
    vectors = []
    for section, record in counted_records(path):
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
    path = aes_vector_dir() / "CTR" / f"aes-{key_bits}-ctr.txt"
    if not path.exists():
        raise FileNotFoundError(f"{path.name} is not in cryptography-vectors")
    vectors = []
    for vector in _read(path):
        vectors += [vector, ModeVector(vector.source.replace("ENCRYPT", "DECRYPT"), True,
                                       vector.key, vector.iv, vector.plaintext,
                                       vector.ciphertext, vector.length)]
    return vectors


def sp800_38a_ctr_vectors(key_bits: int) -> list:
    """SP 800-38A F.5 for ``key_bits``: the encryption (F.5.1/3/5) and decryption (F.5.2/4/6)."""
    key, ciphertext = SP800_38A_CTR[key_bits]
    counter = int("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", 16)
    return [ModeVector(f"SP 800-38A F.5 CTR-AES{key_bits}.{direction}", decrypt, int(key, 16),
                       counter, _blocks(_SP800_38A_PLAINTEXT), _blocks(ciphertext), 64)
            for decrypt, direction in ((False, "Encrypt"), (True, "Decrypt"))]
