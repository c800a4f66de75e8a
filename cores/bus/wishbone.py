"""A Wishbone B4 bus signature, written for this library (Amaranth SoC is not used)."""

from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


__all__ = ["WishboneSignature"]


class WishboneSignature(wiring.Signature):
    """Wishbone B4 classic bus, seen from the initiator (master); a target uses
    ``In(WishboneSignature(...))``.

    Parameters
    ----------
    addr_width : :class:`int`
        Width of ``adr``, a word address (``adr`` = byte address // (data_width // 8)).
    data_width : :class:`int`
        8, 16, 32 or 64.
    granularity : :class:`int`
        Bits selected by each bit of ``sel``: 8 (byte select) or ``data_width``.

    Members
    -------
    cyc, stb, we : ``Out(1)``
        Cycle, strobe and write enable (B4 ``CYC_O``, ``STB_O``, ``WE_O``).
    adr : ``Out(addr_width)``
    dat_w : ``Out(data_width)``
        Write data (``DAT_O`` of the master).
    sel : ``Out(data_width // granularity)``
    dat_r : ``In(data_width)``
        Read data, valid with ``ack``.
    ack : ``In(1)``
        Terminates the cycle: a classic cycle ends on the edge where ``stb`` and ``ack`` are both
        high.
    """
    def __init__(self, *, addr_width: int, data_width: int = 32, granularity: int = 8):
        if not isinstance(addr_width, int) or isinstance(addr_width, bool):
            raise TypeError(f"addr_width must be an integer, not {addr_width!r}")
        if addr_width < 0:
            raise ValueError(f"addr_width must be at least 0, not {addr_width!r}")
        if data_width not in (8, 16, 32, 64):
            raise ValueError(f"data_width must be 8, 16, 32 or 64, not {data_width!r}")
        if granularity not in (8, data_width):
            raise ValueError(f"granularity must be 8 or the data width, not {granularity!r}")
        self._addr_width = addr_width
        self._data_width = data_width
        self._granularity = granularity
        super().__init__({
            "cyc": Out(1), "stb": Out(1), "we": Out(1),
            "adr": Out(addr_width), "dat_w": Out(data_width),
            "sel": Out(data_width // granularity),
            "dat_r": In(data_width), "ack": In(1),
        })

    @property
    def addr_width(self) -> int:
        return self._addr_width

    @property
    def data_width(self) -> int:
        return self._data_width

    @property
    def granularity(self) -> int:
        return self._granularity

    def __eq__(self, other):
        return (type(other) is type(self) and other.addr_width == self.addr_width and
                other.data_width == self.data_width and other.granularity == self.granularity)

    def __hash__(self):
        return hash((type(self), self._addr_width, self._data_width, self._granularity))

    def __repr__(self):
        return (f"WishboneSignature(addr_width={self.addr_width}, data_width={self.data_width}, "
                f"granularity={self.granularity})")
