"""A RISC-V SoC around the cipher peripheral: CPU, RAM, system controller, one Wishbone bus."""


from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ..bus import CipherPeripheral
from .arbiter import WishboneArbiter
from .bus import WishboneDecoder
from .cpu import ISAS, PicoRV32
from .memory_map import PERIPHERAL_BASE, PERIPHERAL_IRQ, RAM_BASE, SYSCTL_BASE
from .ram import WishboneRAM
from .sysctl import SystemController


__all__ = ["CipherSoC"]


class CipherSoC(wiring.Component):
    """A PicoRV32 that runs firmware from block RAM and drives a cipher peripheral.

    The memory map is :mod:`cipher_cores.cores.soc.memory_map`: RAM at ``0x0000_0000`` (the CPU starts
    there), the peripheral at ``0x8000_0000`` with its interrupt on CPU IRQ 3, the system
    controller (UART, cycle counter, exit) at ``0x9000_0000``. The firmware kit in
    ``cores/soc/firmware`` builds programs for it.

    Parameters
    ----------
    peripheral : :class:`~cipher_cores.cores.bus.CipherPeripheral`
        The cipher peripheral (any core, with or without GCM). Built with ``dma=True`` (it
        then has a ``dma`` port, a Wishbone initiator), its DMA master shares the bus with the
        CPU through a :class:`~cipher_cores.cores.soc.arbiter.WishboneArbiter` (submodule
        ``arbiter``) and reaches RAM and everything else at the CPU's addresses.
    ram_bytes : :class:`int`
        RAM size, a power of two from 512 bytes to 256 KiB.
    image : :class:`bytes`
        The firmware: RAM contents from address 0 (see :func:`cipher_cores.cores.soc.elf.load_elf`).
    clock_hz : :class:`int`
        The clock frequency (read by firmware at ``SYSCTL_CLOCK_HZ``).
    uart_divisor : :class:`int`
        Clock cycles per UART bit.
    isa : ``"rv32i"``, ``"rv32im"`` or ``"rv32imc"``
        The CPU's instruction set (:class:`~cipher_cores.cores.soc.cpu.PicoRV32`).
    interrupts : :class:`bool`
        Whether the CPU takes interrupts (the peripheral's is wired to IRQ 3 either way).

    Members
    -------
    uart_tx : ``Out(1)``
    console_valid, console_byte : ``Out(1)``, ``Out(8)``
        A byte entering the UART (for simulators: see
        :class:`~cipher_cores.cores.soc.sysctl.SystemController`).
    exited, exit_status : ``Out(1)``, ``Out(32)``
        The firmware has written ``SYSCTL_EXIT``, and what.
    trap : ``Out(1)``
        The CPU has stopped on a trap.

    The submodules are ``cpu``, ``decoder``, ``ram``, ``sysctl`` and ``peripheral`` (and
    ``arbiter`` with a DMA); the report counts each by hierarchy. Without a DMA the CPU is
    the decoder's only initiator, with no arbiter between them.
    """
    uart_tx: Out(1, init=1)
    console_valid: Out(1)
    console_byte: Out(8)
    exited: Out(1)
    exit_status: Out(32)
    trap: Out(1)

    def __init__(self, peripheral, *, ram_bytes: int, image: bytes = b"", clock_hz: int,
                 uart_divisor: int, isa: str = "rv32i", interrupts: bool = True):
        if not isinstance(peripheral, CipherPeripheral):
            raise TypeError(f"peripheral must be a CipherPeripheral, not {peripheral!r}")
        if isa not in ISAS:
            raise ValueError(f"isa must be one of {', '.join(ISAS)}, not {isa!r}")
        self.peripheral = peripheral
        self.arbiter = WishboneArbiter() if self.has_dma(peripheral) else None
        self.cpu = PicoRV32(isa=isa, interrupts=interrupts)
        self.ram = WishboneRAM(size_bytes=ram_bytes, image=image)
        self.sysctl = SystemController(clock_hz=clock_hz, ram_bytes=ram_bytes,
                                       uart_divisor=uart_divisor)
        self.decoder = WishboneDecoder({
            "ram": (RAM_BASE, self.ram.bus.adr.shape().width),
            "peripheral": (PERIPHERAL_BASE, peripheral.bus.adr.shape().width),
            "sysctl": (SYSCTL_BASE, self.sysctl.bus.adr.shape().width),
        })
        super().__init__()

    @staticmethod
    def has_dma(peripheral) -> bool:
        """Whether ``peripheral`` was built with its DMA master (a ``dma`` port)."""
        return "dma" in peripheral.signature.members

    def elaborate(self, platform):
        m = Module()
        m.submodules.cpu = cpu = self.cpu
        m.submodules.decoder = decoder = self.decoder
        m.submodules.ram = ram = self.ram
        m.submodules.sysctl = sysctl = self.sysctl
        m.submodules.peripheral = peripheral = self.peripheral
        if self.arbiter is None:
            wiring.connect(m, cpu.bus, decoder.bus)
        else:
            m.submodules.arbiter = arbiter = self.arbiter
            wiring.connect(m, cpu.bus, arbiter.cpu)
            wiring.connect(m, peripheral.dma, arbiter.dma)
            wiring.connect(m, arbiter.bus, decoder.bus)
        wiring.connect(m, decoder.ram, ram.bus)
        wiring.connect(m, decoder.peripheral, peripheral.bus)
        wiring.connect(m, decoder.sysctl, sysctl.bus)
        m.d.comb += [
            cpu.irq[PERIPHERAL_IRQ].eq(peripheral.irq),
            self.uart_tx.eq(sysctl.uart_tx),
            self.console_valid.eq(sysctl.console_valid),
            self.console_byte.eq(sysctl.console_byte),
            self.exited.eq(sysctl.exited),
            self.exit_status.eq(sysctl.exit_status),
            self.trap.eq(cpu.trap),
        ]
        return m
