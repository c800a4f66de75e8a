"""Bus peripherals: a Wishbone B4 (or AXI4-Lite: :mod:`cipher_cores.cores.bus.axi`) target around a cipher core, its modes of operation and
(optionally) AES-GCM, which share the core (:class:`~cipher_cores.cores.bus.peripheral.SharedCore`).

:class:`~cipher_cores.cores.bus.peripheral.CipherPeripheral` is the peripheral, :mod:`cipher_cores.cores.bus.regmap` its
register map (the single description from which ``docs/wishbone.md`` and
``cores/soc/firmware/cipher_wishbone.h`` are generated), :class:`~cipher_cores.cores.bus.wishbone.WishboneSignature` the bus,
and :mod:`cipher_cores.cores.bus.sim` drives it in simulation as firmware would (the tests and the report's
cycle counts use it). :class:`~cipher_cores.cores.bus.dma.WishboneDMA` is a bus master that moves
words between memory and the peripheral's word streams; :mod:`cipher_cores.cores.bus.sim_memory`
is a memory for it in simulation.
The names are imported on first use, so that ``python -m cipher_cores.cores.bus.regmap`` runs cleanly.
"""

import importlib


__all__ = ["CipherPeripheral", "CoreSelect", "SharedCore", "CorePort", "WishboneSignature",
           "WishboneDMA", "AXI4LiteSignature", "AXI4LiteToWishbone", "axi_top", "PROTOCOLS"]

_HOMES = {"CipherPeripheral": ".peripheral", "CoreSelect": ".peripheral",
          "SharedCore": ".peripheral", "CorePort": ".peripheral",
          "WishboneSignature": ".wishbone", "WishboneDMA": ".dma",
          "AXI4LiteSignature": ".axi", "AXI4LiteToWishbone": ".axi", "axi_top": ".axi",
          "PROTOCOLS": ".peripheral"}


def __getattr__(name):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
