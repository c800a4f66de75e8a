"""Bus peripherals: a Wishbone B4 target around a cipher core and its modes of operation.

:class:`~cores.bus.peripheral.CipherPeripheral` is the peripheral, :mod:`cores.bus.regmap` its
register map (the single description from which ``docs/wishbone.md`` and
``docs/cipher_wishbone.h`` are generated), :class:`~cores.bus.wishbone.WishboneSignature` the bus.
"""

from .peripheral import CipherPeripheral, CoreSelect
from .wishbone import WishboneSignature


__all__ = ["CipherPeripheral", "CoreSelect", "WishboneSignature"]
