"""The register map of the Wishbone cipher peripheral, described once.

:data:`REGISTERS` is the only description of the map: :class:`~cipher_cores.cores.bus.CipherPeripheral` decodes
its addresses and fields from it, :func:`markdown` writes the register table of
``docs/wishbone.md`` and :func:`c_header` the ``#define``\\ s of ``cores/soc/firmware/cipher_wishbone.h``. Run
``python -m cipher_cores.cores.bus.regmap --markdown docs/wishbone.md --header cores/soc/firmware/cipher_wishbone.h`` to
regenerate both (the test suite checks that the committed files are what this writes).
"""

import argparse
from dataclasses import dataclass


__all__ = ["Field", "Register", "REGISTERS", "BUS_DATA_WIDTH", "ADDRESS_BYTES", "register",
           "markdown", "c_header", "main"]


BUS_DATA_WIDTH = 32
#: Bytes of address space the peripheral decodes (the Wishbone ``adr`` is the word address).
ADDRESS_BYTES = 0x100
#: Access types: ``rw`` read/write, ``ro`` read-only, ``wo`` write-only (reads 0), ``w1`` write 1
#: to act (reads 0), ``rw1c`` read, write 1 to clear.
ACCESS = {"rw": "read/write", "ro": "read-only", "wo": "write-only, reads 0",
          "w1": "write 1 to act, reads 0", "rw1c": "read, write 1 to clear"}


@dataclass(frozen=True)
class Field:
    """A field of a register: ``width`` bits from bit ``offset``; ``values`` names its values."""
    name: str
    offset: int
    width: int
    access: str
    doc: str
    values: tuple = ()          # (NAME, value, doc)

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.offset


@dataclass(frozen=True)
class Register:
    """A register (or ``count`` consecutive registers ``NAME0``, ``NAME1``, ...) at byte
    ``offset``."""
    name: str
    offset: int
    access: str
    doc: str
    fields: tuple = ()
    count: int = 1
    busy_refused: bool = False  # writes while busy are refused and flag ERROR.BUSY_WRITE
    #: The register file holds the value (``rw``, ``wo``, ``rw1c``); ``False``: the rest of the
    #: peripheral holds it (``IV`` is the chaining register) or a write is only an event (``DIN``).
    stored: bool = True
    #: ``CTRL.CLEAR`` zeroes the value (everything but the interrupt enables).
    cleared: bool = True

    def field(self, name: str) -> Field:
        for item in self.fields:
            if item.name == name:
                return item
        raise KeyError(f"{self.name} has no field {name!r}")

    def offsets(self) -> list:
        return [self.offset + 4 * index for index in range(self.count)]


_ERROR_FIELDS = (
    Field("BUSY_WRITE", 0, 1, "rw1c", "a key, IV, LENGTH, CTRL (other than CLEAR), AAD_BYTES, "
          "TEXT_BYTES or TAG_EXPECTED write came while busy: it was refused, nothing changed"),
    Field("BAD_ADDRESS", 1, 1, "rw1c", "an access to an unmapped address (also a KEY or IV word "
          "beyond this core's sizes, and the GCM registers without GCM): ignored, reads 0"),
    Field("READ_ONLY", 2, 1, "rw1c", "a write to a read-only register: ignored"),
    Field("NO_KEY", 3, 1, "rw1c", "START with no key written since reset or CLEAR: refused"),
    Field("UNSUPPORTED", 4, 1, "rw1c", "START with a mode, direction or KEYSEL this peripheral "
          "does not have (see INFO, KEYSIZES): refused"),
    Field("OVERFLOW", 5, 1, "rw1c", "a DIN write with the input FIFO full: the word was dropped"),
    Field("UNDERFLOW", 6, 1, "rw1c", "a DOUT read with the output FIFO empty: read 0"),
    Field("BYTE_SELECT", 7, 1, "rw1c", "a DIN write without all four byte selects: dropped"),
    Field("AUTH_FAIL", 8, 1, "rw1c", "GCM builds: a GCM decryption's tag did not match (its "
          "plaintext, already in DOUT, must be discarded; with INFO.VERIFIED it never left and "
          "was zeroized)"),
    Field("DMA_BUS", 9, 1, "rw1c", "DMA builds: a DMA access ended with a bus error: the message "
          "stopped there (CLEAR before the next)"),
    Field("DMA_ALIGN", 10, 1, "rw1c", "DMA builds: START with CTRL.DMA and a DMA_SOURCE or "
          "DMA_DESTINATION that is not a multiple of 4: refused, nothing moved"),
)

_IRQ_FIELDS = (
    Field("OUT_READY", 0, 1, "rw", "the output FIFO holds at least one whole block"),
    Field("IN_SPACE", 1, 1, "rw", "the input FIFO has room for at least one whole block"),
    Field("ERROR", 2, 1, "rw", "an ERROR flag is set"),
    Field("TAG_READY", 3, 1, "rw", "GCM builds: STATUS.TAG_READY (the last GCM message's tag, or "
          "its check, is ready)"),
    Field("DONE", 4, 1, "rw", "STATUS.DONE: the last message (or CLEAR) is finished"),
)

def _byte_count(name: str, offset: int, doc: str) -> Register:
    """A GCM length register: a 32-bit count of bytes, refused while busy."""
    return Register(name, offset, "rw", f"GCM builds: {doc}",
                    (Field("BYTES", 0, 32, "rw", "number of bytes"),), busy_refused=True)


#: The register map. Byte offsets; every register is 32 bits wide.
REGISTERS = (
    Register("CTRL", 0x00, "rw", "Configuration and commands. Configuration writes (and START) "
             "while busy are refused (ERROR.BUSY_WRITE); CLEAR is always obeyed.", (
        Field("MODE", 0, 3, "rw", "mode of operation of the next message", (
            ("ECB", 0, "electronic codebook"), ("CBC", 1, "cipher block chaining"),
            ("CFB", 2, "full-block cipher feedback"), ("OFB", 3, "output feedback"),
            ("CTR", 4, "counter (the whole block is the counter)"),
            ("GCM", 5, "AES-GCM, in GCM builds (INFO.MODES bit 5): AAD_BYTES of AAD then "
                       "TEXT_BYTES of text through DIN, the tag in TAG or checked against "
                       "TAG_EXPECTED"))),
        Field("DECRYPT", 3, 1, "rw", "1: decrypt the next message; 0: encrypt"),
        Field("KEYSEL", 4, 2, "rw", "which key size (core) to use; see KEYSIZES"),
        Field("START", 8, 1, "w1", "start a message of LENGTH blocks with this write's MODE, "
              "DECRYPT and KEYSEL (loads the key first if it changed)"),
        Field("CLEAR", 9, 1, "w1", "abort and zeroize: key, IV, FIFOs, core and mode state, "
              "configuration and errors; busy until done"),
        Field("LITTLE_ENDIAN", 10, 1, "rw", "1: DIN and DOUT words hold a block's bytes "
              "little-endian (bytes 4j..4j+3 in bits 7:0..31:24 of word j), as a little-endian "
              "CPU loads them from memory, so firmware copies words without reordering bytes; "
              "0: big-endian (bytes 4j..4j+3 in bits 31:24..7:0). Applies to words as they "
              "enter the input FIFO (DIN writes) and as results enter the output FIFO"),
        Field("DMA", 11, 1, "rw", "DMA builds (INFO.DMA): 1: the message's words move through "
              "the DMA master, read from DMA_SOURCE and written to DMA_DESTINATION (DIN and DOUT "
              "are not used); 0: through DIN and DOUT. Reads 0 without DMA"),
        Field("TAG_BYTES", 16, 5, "rw", "GCM decryption: leading bytes of TAG_EXPECTED compared, "
              "4 to 16 (0: 16); other values are refused (ERROR.UNSUPPORTED). Reads 0 without "
              "GCM"),
    ), busy_refused=True),
    Register("STATUS", 0x04, "ro", "State of the peripheral.", (
        Field("BUSY", 0, 1, "ro", "a message (or a CLEAR) is in progress: key, IV, LENGTH and "
              "configuration writes are refused"),
        Field("IN_SPACE", 1, 1, "ro", "the input FIFO has room for a whole block"),
        Field("OUT_READY", 2, 1, "ro", "the output FIFO holds a whole block"),
        Field("KEY_SET", 3, 1, "ro", "a key has been written since reset or CLEAR"),
        Field("ERROR", 4, 1, "ro", "an ERROR flag is set"),
        Field("TAG_READY", 5, 1, "ro", "the last GCM message is done: its tag is in TAG "
              "(encryption) or AUTHENTIC holds its check (decryption); cleared by START and "
              "CLEAR"),
        Field("AUTHENTIC", 6, 1, "ro", "with TAG_READY after a GCM decryption: 1 if "
              "TAG_EXPECTED matched, 0 if not (then ERROR.AUTH_FAIL is set too)"),
        Field("DONE", 7, 1, "ro", "the last message (or CLEAR) is finished: every result is in "
              "the output buffer (or, through the DMA, written to memory); cleared by START"),
        Field("IN_FREE", 8, 8, "ro", "words DIN can take now (input FIFO and block register)"),
        Field("OUT_WORDS", 16, 8, "ro", "words DOUT can give now (output FIFO and block "
              "register)"),
    )),
    Register("ERROR", 0x08, "rw1c", "Sticky error flags; write 1 to a bit to clear it.",
             _ERROR_FIELDS),
    Register("IRQ_ENABLE", 0x0C, "rw", "Interrupt enables: the interrupt line is high while a "
             "condition is true and enabled. CLEAR leaves them.", _IRQ_FIELDS, cleared=False),
    Register("IRQ_PENDING", 0x10, "ro", "Conditions that are true and enabled (levels: they "
             "clear when the condition goes away).", tuple(
                 Field(f.name, f.offset, f.width, "ro", f.doc) for f in _IRQ_FIELDS)),
    Register("LENGTH", 0x14, "rw", "Blocks in the next message (0: START does nothing).", (
        Field("BLOCKS", 0, 16, "rw", "number of blocks"),
    ), busy_refused=True),
    Register("INFO", 0x18, "ro", "What this peripheral was built with.", (
        Field("BLOCK_WORDS", 0, 4, "ro", "32-bit words in a block (4 for AES, 2 for PRESENT)"),
        Field("MODES", 8, 6, "ro", "bit i set: MODE value i is available"),
        Field("DECRYPTS", 16, 4, "ro", "bit i set: KEYSEL i can decrypt in ECB and CBC"),
        Field("DMA", 20, 1, "ro", "built with the DMA master (CTRL.DMA, DMA_SOURCE, "
              "DMA_DESTINATION)"),
        Field("VERIFIED", 21, 1, "ro", "GCM builds with verified plaintext: a GCM decryption's "
              "plaintext is held until its tag is checked, and zeroized if it does not match"),
        Field("RNG", 22, 1, "ro", "RNG builds: a core is masked and fed by a PRNG, reseeded "
              "through RNG_SEED0..RNG_SEED4"),
        Field("FIFO_WORDS", 24, 8, "ro", "depth of each data FIFO, in words (0: none: DIN "
              "words go straight into the block register, DOUT words come straight from the "
              "result register)"),
    )),
    Register("KEYSIZES", 0x1C, "ro", "Key size of each KEYSEL value, in bytes (0: none).", (
        Field("KEYSEL0", 0, 8, "ro", "bytes of key for KEYSEL 0"),
        Field("KEYSEL1", 8, 8, "ro", "bytes of key for KEYSEL 1"),
        Field("KEYSEL2", 16, 8, "ro", "bytes of key for KEYSEL 2"),
        Field("KEYSEL3", 24, 8, "ro", "bytes of key for KEYSEL 3"),
    )),
    Register("DIN", 0x20, "wo", "Data in: each write queues one word of the message, the most "
             "significant word of a block first (AES: bytes 4j..4j+3 of the block, big-endian, "
             "in word j). Words may be written before START.", stored=False),
    Register("DOUT", 0x24, "ro", "Data out: each read takes one word of a result, in the same "
             "order as DIN. Only results ever appear here.", stored=False),
    _byte_count("AAD_BYTES", 0x28, "bytes of AAD in the next GCM message, any number (0: "
                "none). The AAD goes into DIN before the text, in whole blocks (the last padded "
                "with any bytes)."),
    _byte_count("TEXT_BYTES", 0x2C, "bytes of plaintext (encrypting) or ciphertext "
                "(decrypting) in the next GCM message, any number (0: none). Written to DIN "
                "after the AAD in whole blocks, read from DOUT in whole blocks (the bytes beyond "
                "the text are 0)."),
    Register("TAG", 0x30, "ro", "GCM builds: the tag of the last GCM encryption, valid with "
             "STATUS.TAG_READY (0 after a decryption, START and CLEAR). Word i holds bits "
             "32i+31..32i, as KEY: TAG3 holds tag bytes 0..3.", count=4),
    Register("KEY", 0x40, "wo", "Key word i holds key bits 32i+31..32i (KEY0 is the least "
             "significant word: for AES-128, KEY3 holds key bytes 0..3). Writes set KEY_SET; "
             "the key is loaded into the core at the next START.", count=8,
             busy_refused=True),
    Register("IV", 0x60, "wo", "IV (or initial counter block) word i holds bits 32i+31..32i, "
             "as KEY. The IV registers are the chaining register: a message starts from what "
             "they hold and leaves in them the value that continues it (CBC and CFB: the last "
             "ciphertext block; OFB: the last output block; CTR: the next counter), so a long "
             "message may be split over several STARTs without writing the IV again. Write-only "
             "(reads 0): the chaining value is never visible. GCM: the 96-bit IV in IV3..IV1 "
             "(IV bytes 0..3 in IV3), IV0 unused; GCM leaves them as written.", count=4,
             busy_refused=True, stored=False),
    Register("TAG_EXPECTED", 0x70, "wo", "GCM builds: the tag a GCM decryption checks, written "
             "before START, word order as TAG; CTRL.TAG_BYTES of its leading bytes are compared "
             "(in constant time).", count=4, busy_refused=True),
    Register("DMA_SOURCE", 0x80, "rw", "DMA builds: byte address of the message's first input "
             "word (a multiple of 4); LENGTH blocks are read from there (GCM: the AAD's blocks, "
             "then the text's).", (Field("ADDRESS", 0, 32, "rw", "byte address"),),
             busy_refused=True),
    Register("DMA_DESTINATION", 0x84, "rw", "DMA builds: byte address where the first result "
             "word goes (a multiple of 4); one result block per input block (GCM: per text "
             "block).", (Field("ADDRESS", 0, 32, "rw", "byte address"),), busy_refused=True),
    Register("RNG_SEED", 0x88, "wo", "RNG builds (INFO.RNG): a seed for the PRNG that feeds the "
             "masked cores their random bits. Word i holds bits 32i+31..32i of the 160-bit seed "
             "(the Trivium key in bits 79..0, the IV in bits 159..80); a write to RNG_SEED4 "
             "reseeds every masked core's PRNG with the five words, on the edge after it lands. "
             "A PRNG is only as unpredictable as its seed: write one from a true random source "
             "after reset and after CLEAR, which restart the PRNG from its build-time seed "
             "(repeatable masks). The PRNG then warms up for ceil(1152 / width) edges, in which "
             "the core stalls. Accepted at any time, also while busy.", count=5),
)


def register(name: str) -> Register:
    """The :class:`Register` called ``name``."""
    for item in REGISTERS:
        if item.name == name:
            return item
    raise KeyError(f"no register {name!r}")


def _check_map():
    seen = {}
    for reg in REGISTERS:
        for offset in reg.offsets():
            if offset in seen or offset % 4 or offset >= ADDRESS_BYTES:
                raise ValueError(f"register {reg.name} at {offset:#x} overlaps {seen.get(offset)}"
                                 f" or is misplaced")
            seen[offset] = reg.name
        used = 0
        for item in reg.fields:
            if item.mask & used or item.offset + item.width > BUS_DATA_WIDTH:
                raise ValueError(f"field {reg.name}.{item.name} overlaps or overflows")
            used |= item.mask


_check_map()


def markdown() -> str:
    """The register table and field descriptions, as Markdown."""
    lines = [
        "# Wishbone cipher peripheral: register map",
        "",
        "<!-- Generated by `python -m cipher_cores.cores.bus.regmap --markdown docs/wishbone.md` from "
        "cores/bus/regmap.py; do not edit. -->",
        "",
        f"Wishbone B4 classic slave, {BUS_DATA_WIDTH}-bit data, byte select (granularity 8), "
        f"word address `adr` = byte offset / 4, {ADDRESS_BYTES:#x} bytes decoded. Every access "
        "is acknowledged (2 clock edges); bad accesses are acknowledged, ignored and flagged in "
        "ERROR.",
        "",
        "| offset | register | access | description |",
        "| --- | --- | --- | --- |",
    ]
    for reg in REGISTERS:
        name = reg.name if reg.count == 1 else f"{reg.name}0..{reg.name}{reg.count - 1}"
        where = f"`{reg.offset:#04x}`" if reg.count == 1 else \
            f"`{reg.offset:#04x}`..`{reg.offsets()[-1]:#04x}`"
        lines.append(f"| {where} | {name} | {reg.access} | {reg.doc} |")
    lines += ["", "Access: " + "; ".join(f"`{k}` {v}" for k, v in ACCESS.items()) + "."]
    for reg in REGISTERS:
        if not reg.fields:
            continue
        lines += ["", f"## {reg.name} (`{reg.offset:#04x}`)", "",
                  "| bits | field | access | description |", "| --- | --- | --- | --- |"]
        for item in reg.fields:
            hi = item.offset + item.width - 1
            bits = str(item.offset) if item.width == 1 else f"{hi}:{item.offset}"
            doc = item.doc
            if item.values:
                doc += ": " + ", ".join(f"{value} `{name}` ({text})"
                                        for name, value, text in item.values)
            lines.append(f"| {bits} | {item.name} | {item.access} | {doc} |")
    return "\n".join(lines) + "\n"


def c_header(prefix: str = "CIPHER") -> str:
    """A C header with the offsets, field shifts, masks and values of the map."""
    guard = f"{prefix}_WISHBONE_H"
    lines = [
        "/* Register map of the Wishbone cipher peripheral (amaranth-cipher-cores).",
        " * Generated by `python -m cipher_cores.cores.bus.regmap --header cores/soc/firmware/cipher_wishbone.h` from",
        " * cores/bus/regmap.py; do not edit. Offsets are in bytes from the peripheral's base. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
    ]

    def define(name, value):
        lines.append(f"#define {name:<40} {value}")

    for reg in REGISTERS:
        lines.append(f"/* {reg.name}: {reg.access} */")
        define(f"{prefix}_{reg.name}", f"0x{reg.offset:02x}u")
        if reg.count > 1:
            define(f"{prefix}_{reg.name}_COUNT", f"{reg.count}u")
            define(f"{prefix}_{reg.name}_WORD(i)", f"({prefix}_{reg.name} + 4u * (i))")
        for item in reg.fields:
            base = f"{prefix}_{reg.name}_{item.name}"
            define(f"{base}_SHIFT", f"{item.offset}u")
            define(f"{base}_MASK", f"0x{item.mask:08x}u")
            for name, value, _ in item.values:
                define(f"{base}_{name}", f"{value}u")
        lines.append("")
    lines += [f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def main(argv=None):
    """``python -m cipher_cores.cores.bus.regmap [--markdown FILE] [--header FILE]``: write the generated
    files (to standard output when neither is given)."""
    parser = argparse.ArgumentParser(prog="python -m cipher_cores.cores.bus.regmap",
                                     description="Write the Wishbone cipher peripheral's "
                                                 "register table and C header.")
    parser.add_argument("--markdown", metavar="FILE", help="write the Markdown register table")
    parser.add_argument("--header", metavar="FILE", help="write the C header")
    args = parser.parse_args(argv)
    if not args.markdown and not args.header:
        print(markdown())
        print(c_header())
    if args.markdown:
        with open(args.markdown, "w") as file:
            file.write(markdown())
    if args.header:
        with open(args.header, "w") as file:
            file.write(c_header())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
