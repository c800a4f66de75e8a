"""The AES entries of the core catalog (see :mod:`cipher_cores.cores.catalog`)."""

from ..catalog import CipherEntry, CoreOption, KnownAnswer, PaperFigure
from . import reference
from .bram import BlockRamAES
from .compact import CompactAES
from .core import AES
from .masked import MaskedAES
from .pipelined import PipelinedAES, TwoLanePipelinedAES
from .substitution import SBOX_IMPLEMENTATIONS
from .transforms import ROUNDS
from .ttable import TTableAES
from .vectors import FIPS197_VECTORS


__all__ = ["CATALOG"]


#: Seed paper 000, as it states its result.
PAPER = PaperFigure(
    "AES-128 (paper)", "AES-128",
    "Efficient VLSI implementation of the block cipher Rijndael algorithm",
    "Virtex-II", slices=548, fmax_mhz=None, throughput_mbps=2180, latency=None,
    cycles_per_block=None,
    note="as claimed (2.18 Gb/s, 3,978 kb/s per slice); the paper's own formula with its "
         "71 cycles per block and 769.23 ns clock period gives 2.34 Mb/s")

def _aes_entry(**fields) -> CipherEntry:
    """A catalog entry with what every AES architecture shares: the reference model, 128-bit
    blocks, the three key sizes (128 by default) and the FIPS-197 vectors."""
    return CipherEntry(encrypt=reference.encrypt_block, decrypt=reference.decrypt_block,
                       block_bits=128, key_bits=tuple(ROUNDS), default_key_bits=128,
                       vectors=FIPS197_VECTORS, **fields)


def _two_blocks(function):
    """``function`` (a block's reference model) applied to both 128-bit halves of a 256-bit
    transfer under one key (ECB): block 0 is the most significant half."""
    def both(key, blocks, key_bits):
        return function(key, blocks >> 128, key_bits) << 128 | \
            function(key, blocks & (1 << 128) - 1, key_bits)
    return both


def _two_block_vector(vector: KnownAnswer) -> KnownAnswer:
    """A FIPS-197 vector for a two-lane core: the printed plaintext in block 0, the printed
    ciphertext in block 1 (a different block, whose result is the reference model's)."""
    again = reference.encrypt_block(vector.key, vector.ciphertext, vector.key_bits)
    return KnownAnswer(vector.key_bits, vector.key, vector.plaintext << 128 | vector.ciphertext,
                       vector.ciphertext << 128 | again,
                       f"{vector.source}; block 1 is its ciphertext, encrypted again")


#: The ``decrypt`` option of the pipelined cores, which have no decryption pipe.
_PIPE_ENCRYPT_ONLY = CoreOption("decrypt", bool, False, (False,),
                                "encryption only (the core has no decryption pipe)")


def _decrypt_option(parts: str, note: str = "") -> CoreOption:
    """The ``decrypt`` option of an architecture that can leave decryption (``parts``) out."""
    return CoreOption("decrypt", bool, True, (True, False),
                      f"include decryption ({parts}){note}")


CATALOG = (
    _aes_entry(
        name="aes", title="AES", component=AES,
        description="FIPS-197, one round per clock, encrypts and decrypts",
        options=(CoreOption("sbox", str, "bram", SBOX_IMPLEMENTATIONS,
                            "S-boxes in block RAM (bram), as look-up logic (logic), or as "
                            "tower-field Boolean logic (boolean)"),
                 _decrypt_option("InvSubBytes, InvMixColumns, the backward key schedule",
                                 "; without it every block is encrypted (CTR, GCM)")),
        papers=(PAPER,),
        report_defaults=("aes-128",)),
    _aes_entry(
        name="aes-pipelined", title="AES-pipelined", component=PipelinedAES,
        description="every round unrolled, S and 2S tables in block RAM: one block per clock, "
                    "encryption only",
        options=(_PIPE_ENCRYPT_ONLY,),
        # Not in the default sweep: 82 to 114 block RAMs, only the ECP5-85F has them.
        report_defaults=()),
    CipherEntry(
        name="aes-pipelined2x", title="AES-pipelined2x", component=TwoLanePipelinedAES,
        encrypt=_two_blocks(reference.encrypt_block),
        decrypt=_two_blocks(reference.decrypt_block), block_bits=256, key_bits=tuple(ROUNDS),
        default_key_bits=128, vectors=tuple(map(_two_block_vector, FIPS197_VECTORS)),
        description="two pipelines of aes-pipelined sharing the round keys: two blocks per "
                    "clock (256-bit transfers, block 0 in the high half), encryption only",
        options=(_PIPE_ENCRYPT_ONLY,),
        # Not in the default sweep: 162 block RAMs for AES-128, only the ECP5-85F has them.
        report_defaults=()),
    _aes_entry(
        name="aes-ttable", title="AES-ttable", component=TTableAES,
        description="round-based, T-table look-ups in block RAM, three blocks interleaved, "
                    "round keys expanded into block RAM; encrypts and decrypts",
        options=(CoreOption("tables", str, "auto", ("auto", "sbox"),
                            "T-tables (auto: on every device but iCE40, whose block RAM is too "
                            "small for them) or S-box tables with MixColumns in logic (sbox)"),),
        report_defaults=("aes-ttable-128",)),
    _aes_entry(
        name="aes-compact", title="AES-compact", component=CompactAES,
        description="32-bit datapath, one column per clock, S-boxes in 4 block RAMs, round keys "
                    "on the fly: for the smallest devices",
        options=(_decrypt_option("inverse S-box, InvMixColumns, the backward key schedule"),),
        report_defaults=("aes-compact-128", "aes-compact-128:decrypt=no")),
    _aes_entry(
        name="aes-bram", title="AES-bram", component=BlockRamAES,
        description="16-bit datapath, the state and every round key in block RAM beside two "
                    "S-box tables (4 block RAMs): the smallest AES",
        options=(_decrypt_option("inverse S-box, InvMixColumns, the decryption region of round "
                                 "keys"),),
        report_defaults=("aes-bram-128", "aes-bram-128:decrypt=no")),
    _aes_entry(
        name="aes-masked", title="AES-masked", component=MaskedAES,
        description="first-order domain-oriented masking (two shares, 16 + 4 DOM S-boxes, six "
                    "cycles a round), encrypt-only; 160/192/256 random bits a cycle",
        options=(CoreOption("decrypt", bool, False, (False,),
                            "encrypt-only: there is no masked inverse S-box"),),
        # Not in the default sweep yet: its rows are measured and merged by hand.
        report_defaults=()),
)
