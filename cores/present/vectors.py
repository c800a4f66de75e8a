"""The PRESENT paper's test vectors, shipped with the package as ``vectors.txt``.

:data:`PAPER_VECTORS` is that table, read once. The format (see ``vectors.txt``): one vector a line, ``plaintext | key | ciphertext``
in hexadecimal, most significant digit first; spaces inside a column are ignored; ``#`` starts a
comment. The key size is the width of the key column in bits (20 digits: 80, 32 digits: 128).
"""

from importlib.resources import files

from ..catalog import KnownAnswer
from .tables import BLOCK_BITS, KEY_SIZES


__all__ = ["parse_vectors", "PAPER_VECTORS"]


def _parse_hex(column: str, line_number: int) -> tuple:
    digits = "".join(column.split())
    try:
        value = int(digits, 16)
    except ValueError:
        raise ValueError(f"Line {line_number}: {column.strip()!r} is not a hexadecimal "
                         f"number") from None
    return value, 4 * len(digits)


def parse_vectors(text: str) -> list:
    """Parse a vector table; returns a list of :class:`~cipher_cores.cores.catalog.KnownAnswer`, in file
    order.

    Raises :exc:`ValueError` naming the line of a malformed row.
    """
    vectors = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0]
        if not line.strip():
            continue
        columns = line.split("|")
        if len(columns) != 3:
            raise ValueError(f"Line {line_number}: expected 3 columns separated by '|', "
                             f"found {len(columns)}")
        (plaintext, plaintext_bits), (key, key_bits), (ciphertext, ciphertext_bits) = (
            _parse_hex(column, line_number) for column in columns)
        if plaintext_bits != BLOCK_BITS or ciphertext_bits != BLOCK_BITS:
            raise ValueError(f"Line {line_number}: blocks must have {BLOCK_BITS // 4} digits")
        if key_bits not in KEY_SIZES:
            raise ValueError(f"Line {line_number}: a key must have 20 or 32 digits, "
                             f"not {key_bits // 4}")
        vectors.append(KnownAnswer(key_bits, key, plaintext, ciphertext, "PRESENT paper"))
    return vectors


#: The paper's table (``vectors.txt``): four vectors for each key size.
PAPER_VECTORS = tuple(parse_vectors(files(__package__).joinpath("vectors.txt").read_text()))
