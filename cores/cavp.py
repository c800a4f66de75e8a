"""Reading NIST CAVP response files (``.rsp``), as shipped by ``cryptography-vectors``."""

from __future__ import annotations

from pathlib import Path


__all__ = ["parse_rsp", "cryptography_vectors_path"]


def parse_rsp(path) -> list:
    """The records of a ``.rsp`` file as ``(section, {FIELD: value})`` pairs, in file order."""
    records, section, record = [], None, {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            if record:
                records.append((section, record))
                record = {}
            continue
        if line.startswith("[") and line.endswith("]"):
            if record:
                records.append((section, record))
                record = {}
            section = line[1:-1]
            continue
        name, _, value = line.partition("=")
        record[name.strip()] = value.strip()
    if record:
        records.append((section, record))
    return records


def cryptography_vectors_path(*parts: str) -> Path:
    """A file of the installed ``cryptography-vectors`` package, e.g.
    ``cryptography_vectors_path("ciphers", "AES", "CBC", "CBCMMT128.rsp")``; a one-line
    :exc:`FileNotFoundError` if the package or the file is missing."""
    try:
        import cryptography_vectors
    except ImportError:
        raise FileNotFoundError("the NIST vectors come from the cryptography-vectors package: "
                                "pip install cryptography-vectors") from None
    path = Path(cryptography_vectors.__file__).parent.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"{path.name} is not in cryptography-vectors")
    return path
