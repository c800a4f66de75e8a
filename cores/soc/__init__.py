"""A RISC-V system on chip that runs firmware through the cipher peripheral.

:class:`CipherSoC` puts a PicoRV32 CPU (:mod:`.cpu`), block RAM (:mod:`.ram`), a system
controller with a UART and a cycle counter (:mod:`.sysctl`) and the Wishbone cipher peripheral
(:class:`cipher_cores.cores.bus.CipherPeripheral`) on one bus (:mod:`.bus`), at the addresses of
:mod:`.memory_map`; a peripheral with a DMA master shares that bus with the CPU
(:mod:`.arbiter`). The firmware kit (linker script, start-up code, headers, driver) is in
``cores/soc/firmware``; :mod:`.elf` loads a program, :mod:`.simulate` runs one in a compiled
simulator.
"""

import importlib


__all__ = ["CipherSoC", "PicoRV32", "WishboneArbiter", "WishboneDecoder", "WishboneRAM",
           "SystemController"]

_HOMES = {"CipherSoC": ".system", "PicoRV32": ".cpu", "WishboneArbiter": ".arbiter",
          "WishboneDecoder": ".bus",
          "WishboneRAM": ".ram", "SystemController": ".sysctl"}


def __getattr__(name):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
