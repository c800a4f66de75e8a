"""Loading a RV32 ELF program into the SoC's RAM image, with one-line errors for what cannot
run (:exc:`FirmwareError`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import struct

from .memory_map import RAM_BASE, RESET_ADDRESS


__all__ = ["FirmwareError", "Firmware", "load_elf", "parse_elf"]

_EM_RISCV = 243
_PT_LOAD = 1
# e_machine values worth naming in an error (from the ELF specification's list).
_MACHINES = {3: "x86", 8: "MIPS", 20: "PowerPC", 21: "64-bit PowerPC", 40: "ARM",
             62: "x86-64", 183: "AArch64", 243: "RISC-V", 258: "LoongArch"}


class FirmwareError(ValueError):
    """A firmware file the SoC cannot run; the message is one line."""


@dataclass(frozen=True)
class Firmware:
    """A loaded program: ``image`` holds the RAM from ``RAM_BASE`` up to the end of the last
    initialised byte; ``ram_needed`` counts the bytes up to the end of the last segment
    (``.bss`` included), ``entry`` is the ELF entry point."""
    image: bytes
    ram_needed: int
    entry: int


def parse_elf(data: bytes, name: str = "firmware") -> Firmware:
    """Read a 32-bit little-endian RISC-V executable linked for the SoC's RAM."""
    if len(data) < 52 or data[:4] != b"\x7fELF":
        raise FirmwareError(f"{name}: not an ELF file")
    if data[4] != 1 or data[5] != 1:
        kind = {1: "32-bit", 2: "64-bit"}.get(data[4], "unknown-class")
        order = {1: "little-endian", 2: "big-endian"}.get(data[5], "unknown-order")
        machine = struct.unpack_from("<H" if data[5] == 1 else ">H", data, 18)[0]
        raise FirmwareError(f"{name}: a {kind} {order} ELF for "
                            f"{_MACHINES.get(machine, f'machine {machine}')}; the SoC runs "
                            f"32-bit little-endian RISC-V (RV32)")
    (e_type, e_machine, _, e_entry, e_phoff, _, _, _, e_phentsize, e_phnum) = \
        struct.unpack_from("<HHIIIIIHHH", data, 16)
    if e_machine != _EM_RISCV:
        raise FirmwareError(f"{name}: an ELF for {_MACHINES.get(e_machine, f'machine {e_machine}')}"
                            f", not RISC-V: build it with -target riscv32-freestanding-none")
    if e_type != 2:
        raise FirmwareError(f"{name}: not an executable (ELF type {e_type}); link it with the "
                            f"kit's link.ld")
    if e_entry != RESET_ADDRESS:
        raise FirmwareError(f"{name}: entry point {e_entry:#010x}, but the CPU starts at "
                            f"{RESET_ADDRESS:#010x}; link it with the kit's link.ld and start.S")
    segments = []
    for index in range(e_phnum):
        offset = e_phoff + index * e_phentsize
        if offset + 32 > len(data):
            raise FirmwareError(f"{name}: truncated ELF (program header {index})")
        p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz = \
            struct.unpack_from("<IIIIII", data, offset)
        if p_type != _PT_LOAD or p_memsz == 0:
            continue
        if p_offset + p_filesz > len(data):
            raise FirmwareError(f"{name}: truncated ELF (segment {index})")
        if p_paddr < RAM_BASE:
            raise FirmwareError(f"{name}: a segment at {p_paddr:#010x} is below the RAM at "
                                f"{RAM_BASE:#010x}")
        segments.append((p_paddr - RAM_BASE, data[p_offset:p_offset + p_filesz], p_memsz))
    if not segments:
        raise FirmwareError(f"{name}: no loadable segment")
    image_end = max(start + len(contents) for start, contents, _ in segments)
    ram_needed = max(start + size for start, _, size in segments)
    image = bytearray(image_end)
    for start, contents, _ in segments:
        image[start:start + len(contents)] = contents
    return Firmware(bytes(image), ram_needed, e_entry)


def load_elf(path, *, ram_bytes: int) -> Firmware:
    """:func:`parse_elf` of the file at ``path``, checked to fit ``ram_bytes`` of RAM."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise FirmwareError(f"{path}: {(error.strerror or type(error).__name__).lower()}") \
            from None
    firmware = parse_elf(data, str(path))
    if firmware.ram_needed > ram_bytes:
        raise FirmwareError(f"{path}: needs {firmware.ram_needed:,} bytes of RAM, the SoC has "
                            f"{ram_bytes:,} ({firmware.ram_needed - ram_bytes:,} bytes too many)")
    return firmware
