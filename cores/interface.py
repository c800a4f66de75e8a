"""The stream interface shared by every block-cipher core in this library.

Every cipher core (:class:`cipher_cores.cores.aes.AES`, :class:`cipher_cores.cores.present.PRESENT`, ...) is a
:class:`~cipher_cores.cores.cipher.BlockCipher`: a :class:`~amaranth.lib.wiring.Component` whose
signature is a :class:`BlockCipherSignature`, so that modes of operation, bus wrappers, test
benches and build tops work with any of them. This module is the ports and their rules; the
figures a core states beside them (``decrypts``, ``latency``, ``initiation_interval``,
``key_load_cycles``) are :class:`~cipher_cores.cores.cipher.BlockCipher`'s, and the consumers take
a :class:`~cipher_cores.cores.cipher.BlockCipher`, not any component with this signature.
"""

from amaranth.hdl import unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out


__all__ = ["BlockRequest", "BlockCipherSignature"]


class BlockRequest(data.StructLayout):
    """Payload layout of the ``input`` stream: one block and the direction to process it in.

    Parameters
    ----------
    block_bits : :class:`int`
        Width of a block.

    Fields
    ------
    block : ``unsigned(block_bits)``
        The plaintext (to encrypt) or ciphertext (to decrypt).
    decrypt : ``unsigned(1)``
        0 to encrypt ``block``, 1 to decrypt it.
    """
    def __init__(self, block_bits: int):
        super().__init__({"block": unsigned(block_bits), "decrypt": unsigned(1)})


def _check_width(name, value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be a positive integer, not {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")


class BlockCipherSignature(wiring.Signature):
    """Signature of a block-cipher core with streams for keys, input blocks and output blocks.

    Parameters
    ----------
    block_bits : :class:`int`
        Width of a block (128 for AES, 64 for PRESENT).
    key_bits : :class:`int`
        Width of a key (128, 192 or 256 for AES; 80 or 128 for PRESENT).
    random_bits : :class:`int`
        0 (the default) for a core that needs no randomness; otherwise the width of the
        ``random`` stream through which a masked core takes fresh random bits.

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        Each transfer loads a new key, used by every block accepted after it.
    input : ``In(stream.Signature(BlockRequest(block_bits)))``
        Each transfer is one block, encrypted when ``decrypt`` is 0 and decrypted when it is 1.
    output : ``Out(stream.Signature(unsigned(block_bits)))``
        One result per input block, in the order the blocks were accepted.
    random : ``In(stream.Signature(unsigned(random_bits)))``, only if ``random_bits`` > 0
        Fresh random bits for a masked core (shares, remasking): the core takes a transfer on
        each edge it needs one and waits (no key or block advances) while ``valid`` is low, so
        it never computes unmasked. Its results do not depend on the bits: with all-zero
        randomness it still computes the right result (unprotected). Its cycle figures are
        measured with ``valid`` held high. A source is
        :class:`~cipher_cores.cores.prng.PRNG` (or a true random number generator).

    Contract
    --------
    Every core with this signature keeps these rules, and the test suite checks them on each core:

    * All three streams follow the rules of :mod:`amaranth.lib.stream`: a transfer happens on a clock
      edge where ``valid`` and ``ready`` are both high; the core never waits for ``ready`` before
      raising ``output.valid``; once ``output.valid`` is high, ``output.valid`` and
      ``output.payload`` hold until the transfer. By the same rules a source holds ``valid`` and
      ``payload`` until the transfer, so a core may read ``input.payload`` in the cycles before it
      raises ``input.ready`` (:class:`~cipher_cores.cores.aes.BlockRamAES` reads its block that way).
    * No block is accepted (``input.ready`` stays low) until the first key has been loaded.
    * A key transfer waits until every block in flight has left the core: ``key.ready`` is high only
      when the core is idle, so each block is processed under exactly one key.
    * A reset in the middle of a block (or of a key load) leaves an idle core with no key loaded.
    * The core's :class:`~cipher_cores.cores.cipher.BlockCipher` figures are exact: ``latency``,
      ``initiation_interval`` and ``key_load_cycles`` as measured, the same for every key, block
      and direction; with ``decrypts`` false, every block is encrypted.

    Bit and byte order
    ------------------
    Blocks and keys are plain integers. For AES, a block or key is
    ``int.from_bytes(fips197_bytes, "big")``: the first byte of the FIPS-197 byte sequence is the
    most significant byte. For PRESENT, the block is the integer b63..b0 and the key the integer
    k79..k0 (or k127..k0) of the PRESENT paper.
    """
    def __init__(self, block_bits: int, key_bits: int, *, random_bits: int = 0):
        _check_width("block_bits", block_bits)
        _check_width("key_bits", key_bits)
        if not isinstance(random_bits, int) or isinstance(random_bits, bool) or random_bits < 0:
            raise TypeError(f"random_bits must be a non-negative integer, not {random_bits!r}")
        self._block_bits = block_bits
        self._key_bits = key_bits
        self._random_bits = random_bits
        members = {
            "key":    In(stream.Signature(unsigned(key_bits))),
            "input":  In(stream.Signature(BlockRequest(block_bits))),
            "output": Out(stream.Signature(unsigned(block_bits))),
        }
        if random_bits:
            members["random"] = In(stream.Signature(unsigned(random_bits)))
        super().__init__(members)

    @property
    def block_bits(self) -> int:
        return self._block_bits

    @property
    def key_bits(self) -> int:
        return self._key_bits

    @property
    def random_bits(self) -> int:
        """Width of the ``random`` stream (0: the core has none)."""
        return self._random_bits

    def __eq__(self, other):
        return (type(other) is type(self) and
                other.block_bits == self.block_bits and
                other.key_bits == self.key_bits and
                other.random_bits == self.random_bits)

    def __hash__(self):
        return hash((type(self), self._block_bits, self._key_bits, self._random_bits))

    def __repr__(self):
        random = f", random_bits={self.random_bits}" if self.random_bits else ""
        return (f"BlockCipherSignature(block_bits={self.block_bits}, key_bits={self.key_bits}"
                f"{random})")
