"""A toy block cipher with the library's interface, for testing build tops and the report.

:class:`ToyCipher` is not a cipher: it XORs the block with the key (and a round count's worth of
rotations), which is enough to exercise harnesses, self-test tops and cycle measurement without
waiting for a real core. Its reference is :func:`toy_encrypt` / :func:`toy_decrypt`, and
:data:`TOY_ENTRY` its catalog entry, which the ``toy_in_catalog`` fixture (``conftest.py``) adds to
the catalog for a test.
"""

from amaranth.hdl import Cat, Module, Signal

from cipher_cores.cores.catalog import CipherEntry
from cipher_cores.cores.cipher import BlockCipher, Handshake


__all__ = ["ToyCipher", "toy_encrypt", "toy_decrypt", "encrypt_block", "decrypt_block",
           "TOY_ENTRY"]


def _rotl(value: int, amount: int, width: int) -> int:
    amount %= width
    mask = (1 << width) - 1
    return ((value << amount) | (value >> (width - amount))) & mask


def toy_encrypt(key: int, block: int, *, block_bits: int = 64, key_bits: int = 80,
                rounds: int = 4) -> int:
    """Reference of :class:`ToyCipher` encryption: ``rounds`` times rotate left by 1, then XOR
    with the low ``block_bits`` of the key."""
    subkey = key & ((1 << block_bits) - 1)
    for _ in range(rounds):
        block = _rotl(block, 1, block_bits) ^ subkey
    return block


def toy_decrypt(key: int, block: int, *, block_bits: int = 64, key_bits: int = 80,
                rounds: int = 4) -> int:
    subkey = key & ((1 << block_bits) - 1)
    for _ in range(rounds):
        block = _rotl(block ^ subkey, block_bits - 1, block_bits)
    return block


def encrypt_block(key: int, block: int, key_bits: int = 80) -> int:
    """:func:`toy_encrypt` with the defaults of :class:`ToyCipher`, in the reference-model form."""
    return toy_encrypt(key, block, key_bits=key_bits)


def decrypt_block(key: int, block: int, key_bits: int = 80) -> int:
    return toy_decrypt(key, block, key_bits=key_bits)


class ToyCipher(BlockCipher):
    """A stand-in core: ``rounds`` clock cycles per block, one round per cycle.

    It uses the shared :class:`~cipher_cores.cores.cipher.Handshake` without a key expansion and without
    overlap: a block is accepted only once the previous result has left.

    Parameters
    ----------
    block_bits, key_bits : :class:`int`
        Widths, as in :class:`~cipher_cores.cores.interface.BlockCipherSignature`.
    rounds : :class:`int`
        Rounds per block (one per clock).

    Members
    -------
    key, input, output
        As in :class:`~cipher_cores.cores.interface.BlockCipherSignature`.

    Latency ``rounds + 1`` edges from input transfer to output transfer; initiation interval
    ``rounds + 2`` (one block at a time); key load 1 edge.
    """
    def __init__(self, *, block_bits: int = 64, key_bits: int = 80, rounds: int = 4):
        if not isinstance(rounds, int) or rounds < 1:
            raise ValueError(f"rounds must be a positive integer, not {rounds!r}")
        self._rounds = rounds
        super().__init__(block_bits, key_bits)

    @property
    def rounds(self) -> int:
        return self._rounds

    @property
    def latency(self) -> int:
        return self._rounds + 1

    @property
    def initiation_interval(self) -> int:
        return self._rounds + 2

    @property
    def key_load_cycles(self) -> int:
        return 1

    def elaborate(self, platform):
        m = Module()
        width = self.signature.block_bits
        key = Signal(self.signature.key_bits)
        state = Signal(width)
        decrypt = Signal()
        count = Signal(range(self._rounds))
        subkey = key[:width]

        m.submodules.control = control = Handshake(expands_key=False, overlap=False)
        control.connect_streams(m, self)
        m.d.comb += control.block_done.eq(count == self._rounds - 1)

        def rotl1(value):
            return Cat(value[-1], value[:-1])

        def rotr1(value):
            return Cat(value[1:], value[0])

        m.d.comb += self.output.payload.eq(state)
        with m.If(control.load_key):
            m.d.sync += key.eq(self.key.payload)
        with m.If(control.load_block):
            m.d.sync += [
                state.eq(self.input.payload.block),
                decrypt.eq(self.input.payload.decrypt),
                count.eq(0),
            ]
        with m.If(control.running):
            with m.If(decrypt):
                m.d.sync += state.eq(rotr1(state ^ subkey))
            with m.Else():
                m.d.sync += state.eq(rotl1(state) ^ subkey)
            m.d.sync += count.eq(count + 1)
        return m


#: The toy cipher as a catalog entry (name ``toy``, 80-bit keys, no options, no printed vectors).
TOY_ENTRY = CipherEntry(
    name="toy", title="TOY", component=ToyCipher, encrypt=encrypt_block, decrypt=decrypt_block,
    block_bits=64, key_bits=(80,), default_key_bits=80, description="a stand-in for tests")
