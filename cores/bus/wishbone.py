"""A Wishbone B4 bus signature, written for this library (Amaranth SoC is not used)."""

from collections.abc import Iterable

from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


__all__ = ["WishboneSignature"]


#: The optional signals :class:`WishboneSignature` can add, by their ``features`` name.
_FEATURES = ("err",)


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
    features : set of :class:`str`
        Optional signals to add; empty by default. ``"err"`` adds ``err`` (B4 ``ERR_I``).

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
    err : ``In(1)``, with the feature ``"err"``
        Terminates the cycle like ``ack``, but the access failed (the target wrote nothing, or
        ``dat_r`` is not data). A target raises at most one of ``ack`` and ``err`` at a time.
    """
    def __init__(self, *, addr_width: int, data_width: int = 32, granularity: int = 8,
                 features: Iterable[str] = ()):
        if not isinstance(addr_width, int) or isinstance(addr_width, bool):
            raise TypeError(f"addr_width must be an integer, not {addr_width!r}")
        if addr_width < 0:
            raise ValueError(f"addr_width must be at least 0, not {addr_width!r}")
        if data_width not in (8, 16, 32, 64):
            raise ValueError(f"data_width must be 8, 16, 32 or 64, not {data_width!r}")
        if granularity not in (8, data_width):
            raise ValueError(f"granularity must be 8 or the data width, not {granularity!r}")
        if isinstance(features, str) or not hasattr(features, "__iter__"):
            raise TypeError(f"features must be a set of feature names, not {features!r}")
        features = frozenset(features)
        unknown = sorted(repr(feature) for feature in features if feature not in _FEATURES)
        if unknown:
            raise ValueError(f"features may only contain "
                             f"{', '.join(repr(name) for name in _FEATURES)}, not "
                             f"{', '.join(unknown)}")
        self._addr_width = addr_width
        self._data_width = data_width
        self._granularity = granularity
        self._features = features
        super().__init__({
            "cyc": Out(1), "stb": Out(1), "we": Out(1),
            "adr": Out(addr_width), "dat_w": Out(data_width),
            "sel": Out(data_width // granularity),
            "dat_r": In(data_width), "ack": In(1),
            **({"err": In(1)} if "err" in features else {}),
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

    @property
    def features(self) -> frozenset:
        """The optional signals present (``frozenset()`` or ``frozenset({"err"})``)."""
        return self._features

    def __eq__(self, other):
        return (type(other) is type(self) and other.addr_width == self.addr_width and
                other.data_width == self.data_width and other.granularity == self.granularity
                and other.features == self.features)

    def __hash__(self):
        return hash((type(self), self._addr_width, self._data_width, self._granularity,
                     self._features))

    def __repr__(self):
        features = ""
        if self._features:
            features = f", features={{{', '.join(repr(f) for f in sorted(self._features))}}}"
        return (f"WishboneSignature(addr_width={self.addr_width}, data_width={self.data_width}, "
                f"granularity={self.granularity}{features})")
