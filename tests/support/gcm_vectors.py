"""The NIST CAVP GCM response files (``gcmEncryptExtIV*.rsp``, ``gcmDecrypt*.rsp``) shipped by
``cryptography-vectors``, read into :class:`GcmVector` records, and the representative subset
the default test run uses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .nist import parse_rsp


__all__ = ["GcmVector", "gcm_path", "gcm_vectors", "representative", "KINDS"]


#: The two kinds of file: ``gcmEncryptExtIV{bits}.rsp`` and ``gcmDecrypt{bits}.rsp``.
KINDS = ("EncryptExtIV", "Decrypt")


@dataclass(frozen=True)
class GcmVector:
    """One case. ``decrypt`` cases give the ciphertext and tag and expect the plaintext, or
    ``fail`` (the tag does not match); encryption cases give the plaintext and expect the
    ciphertext and tag. ``tag`` is as long as the file's ``Taglen``. ``group`` is the file's
    section: ``(Keylen, IVlen, PTlen, AADlen, Taglen)`` in bits, read off the lengths of the
    fields (each section holds cases of one shape)."""
    source: str
    decrypt: bool
    key: bytes
    iv: bytes
    aad: bytes
    plaintext: bytes | None
    ciphertext: bytes
    tag: bytes
    fail: bool

    @property
    def group(self) -> tuple:
        return (8 * len(self.key), 8 * len(self.iv), 8 * len(self.ciphertext),
                8 * len(self.aad), 8 * len(self.tag))


def gcm_path(kind: str, key_bits: int) -> Path:
    """``gcm{kind}{key_bits}.rsp`` from ``cryptography-vectors`` (``ciphers/AES/GCM``)."""
    import cryptography_vectors
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    path = (Path(cryptography_vectors.__file__).parent / "ciphers" / "AES" / "GCM" /
            f"gcm{kind}{key_bits}.rsp")
    if not path.exists():
        raise FileNotFoundError(f"NIST GCM file {path.name} is not in cryptography-vectors")
    return path


def gcm_vectors(kind: str, key_bits: int) -> list:
    """Every case of one file, in file order."""
    path = gcm_path(kind, key_bits)
    vectors = []
    for section, record in parse_rsp(path):
        if "Count" not in record:
            continue
        fail = "FAIL" in record
        lengths = "/".join(str(4 * len(record[name])) for name in ("IV", "CT", "AAD", "Tag"))
        vectors.append(GcmVector(
            source=f"{path.name} IV/text/AAD/tag bits {lengths} Count={record['Count']}",
            decrypt=kind == "Decrypt",
            key=bytes.fromhex(record["Key"]),
            iv=bytes.fromhex(record["IV"]),
            aad=bytes.fromhex(record["AAD"]),
            plaintext=None if fail else bytes.fromhex(record["PT"]),
            ciphertext=bytes.fromhex(record["CT"]),
            tag=bytes.fromhex(record["Tag"]),
            fail=fail,
        ))
    return vectors


def representative(vectors) -> list:
    """Each group's first case, and its first failing case if that is another one."""
    chosen, seen, failed = [], set(), set()
    for vector in vectors:
        group = vector.group
        if group not in seen or (vector.fail and group not in failed):
            chosen.append(vector)
        seen.add(group)
        if vector.fail:
            failed.add(group)
    return chosen
