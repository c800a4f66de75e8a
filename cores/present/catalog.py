"""The PRESENT entries of the core catalog (see :mod:`cipher_cores.cores.catalog`)."""

from ..catalog import CipherEntry, CoreOption, PaperFigure
from . import reference
from .bram import BlockRamPRESENT
from .core import PRESENT, ROUNDS_PER_CYCLE
from .keytable import KeyTablePRESENT
from .masked import MaskedPRESENT
from .masked_serial import SBOXES_PER_CYCLE, SerialMaskedPRESENT
from .pipelined import PipelinedPRESENT
from .serial import SerialPRESENT
from .tables import BLOCK_BITS, KEY_SIZES
from .vectors import PAPER_VECTORS


__all__ = ["CATALOG"]


_SOURCE = "A High-Performance VLSI Architecture for the PRESENT Lightweight Cryptography"

#: Seed paper 001, as it states its results.
PAPERS = (
    PaperFigure("PRESENT-80 (paper)", "PRESENT-80", _SOURCE, "Spartan-3 XC3S400", slices=126,
                fmax_mhz=215.42, throughput_mbps=417.79, latency=33, cycles_per_block=33),
    PaperFigure("PRESENT-128 (paper)", "PRESENT-128", _SOURCE, "Spartan-3 XC3S400", slices=150,
                fmax_mhz=212.13, throughput_mbps=411.41, latency=33, cycles_per_block=33),
)

def _entry(**fields) -> CipherEntry:
    """A PRESENT architecture: what every one shares (reference model, block and key sizes,
    the paper's vectors) and ``fields``."""
    return CipherEntry(encrypt=reference.encrypt_block, decrypt=reference.decrypt_block,
                       block_bits=BLOCK_BITS, key_bits=KEY_SIZES, default_key_bits=80,
                       vectors=PAPER_VECTORS, **fields)


CATALOG = (
    _entry(
        name="present", title="PRESENT", component=PRESENT,
        description="CHES 2007, integrated encrypt/decrypt round core",
        options=(CoreOption("rounds_per_cycle", int, 1, ROUNDS_PER_CYCLE,
                            "PRESENT rounds per clock"),
                 CoreOption("decrypt", bool, True, (True, False),
                            "include the decryption datapath")),
        papers=PAPERS,
        report_defaults=("present-80", "present-128")),
    _entry(
        name="present-keytable", title="PRESENT-keytable", component=KeyTablePRESENT,
        description="round core, the 32 round keys in block RAM (expanded once per key)",
        options=(CoreOption("decrypt", bool, True, (True, False),
                            "include the decryption datapath"),),
        report_defaults=("present-keytable-80",)),
    _entry(
        name="present-serial", title="PRESENT-serial", component=SerialPRESENT,
        description="one S-box, the key schedule a bit per clock: for the smallest devices",
        options=(CoreOption("decrypt", bool, True, (True, False),
                            "include the decryption datapath and the final-key ring"),),
        report_defaults=("present-serial-80", "present-serial-80:decrypt=no")),
    _entry(
        name="present-bram", title="PRESENT-bram", component=BlockRamPRESENT,
        description="a nibble per clock, state, round keys and S-box in block RAM: "
                    "the least logic",
        options=(CoreOption("decrypt", bool, True, (True, False),
                            "include the decryption rounds (each block picks its direction)"),),
        report_defaults=("present-bram-80", "present-bram-80:decrypt=no")),
    _entry(
        name="present-pipelined", title="PRESENT-pipelined", component=PipelinedPRESENT,
        description="31 rounds unrolled, a register after each: one block per clock",
        options=(CoreOption("decrypt", bool, True, (True, False),
                            "include the decryption rounds (each block picks its direction)"),),
        # Not in the default sweep: it does not fit the UP5K or the ECP5-25F.
        report_defaults=()),
    _entry(
        name="present-masked", title="PRESENT-masked", component=MaskedPRESENT,
        description="three-share threshold implementation (first order, glitch-robust), "
                    "encrypt-only; takes 2 x key_bits random bits with each key and block",
        options=(CoreOption("decrypt", bool, False, (False,),
                            "encrypt-only: there is no shared inverse S-box"),),
        # Not in the default sweep yet: its rows are measured and merged by hand.
        report_defaults=()),
    _entry(
        name="present-masked-serial", title="PRESENT-masked-serial", component=SerialMaskedPRESENT,
        description="three-share threshold implementation, 1 to 4 S-boxes a clock, every "
                    "share refreshed as it is written (first order, transitions too), "
                    "encrypt-only; a random word each clock",
        options=(CoreOption("sboxes_per_cycle", int, 4, SBOXES_PER_CYCLE,
                            "shared S-boxes: 16 / sboxes_per_cycle + 1 clocks a round"),
                 CoreOption("decrypt", bool, False, (False,),
                            "encrypt-only: there is no shared inverse S-box")),
        # Not in the default sweep yet: its rows are measured and merged by hand.
        report_defaults=()),
)
