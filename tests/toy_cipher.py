"""A toy block cipher with the library's interface, for testing build tops and the report.

:class:`ToyCipher` is not a cipher: it XORs the block with the key (and a round count's worth of
rotations), which is enough to exercise harnesses, self-test tops and cycle measurement without
waiting for a real core. Its reference is :func:`toy_encrypt` / :func:`toy_decrypt`, and
:data:`TOY_ENTRY` its catalog entry, which the ``toy_in_catalog`` fixture (``conftest.py``) adds to
the catalog for a test.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring

from cores.catalog import CipherEntry
from cores.interface import BlockCipherSignature


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


class ToyCipher(wiring.Component):
    """A stand-in core: ``rounds`` clock cycles per block, one round per cycle.

    Parameters
    ----------
    block_bits, key_bits : :class:`int`
        Widths, as in :class:`~cores.interface.BlockCipherSignature`.
    rounds : :class:`int`
        Rounds per block (one per clock).

    Members
    -------
    key, input, output
        As in :class:`~cores.interface.BlockCipherSignature`.

    Latency ``rounds + 1`` cycles from input transfer to output valid; one block at a time.
    """
    def __init__(self, *, block_bits: int = 64, key_bits: int = 80, rounds: int = 4):
        if not isinstance(rounds, int) or rounds < 1:
            raise ValueError(f"rounds must be a positive integer, not {rounds!r}")
        self._rounds = rounds
        super().__init__(BlockCipherSignature(block_bits, key_bits))

    @property
    def rounds(self) -> int:
        return self._rounds

    def elaborate(self, platform):
        m = Module()
        width = self.signature.block_bits
        key = Signal(self.signature.key_bits)
        has_key = Signal()
        state = Signal(width)
        decrypt = Signal()
        count = Signal(range(self._rounds))
        subkey = key[:width]

        def rotl1(value):
            return Cat(value[-1], value[:-1])

        def rotr1(value):
            return Cat(value[1:], value[0])

        m.d.comb += self.output.payload.eq(state)
        with m.FSM():
            with m.State("Idle"):
                m.d.comb += [
                    self.key.ready.eq(1),
                    self.input.ready.eq(has_key & ~self.key.valid),
                ]
                with m.If(self.key.valid):
                    m.d.sync += [key.eq(self.key.payload), has_key.eq(1)]
                with m.Elif(self.input.valid & has_key):
                    m.d.sync += [
                        state.eq(self.input.payload.block),
                        decrypt.eq(self.input.payload.decrypt),
                        count.eq(0),
                    ]
                    m.next = "Round"
            with m.State("Round"):
                with m.If(decrypt):
                    m.d.sync += state.eq(rotr1(state ^ subkey))
                with m.Else():
                    m.d.sync += state.eq(rotl1(state) ^ subkey)
                m.d.sync += count.eq(count + 1)
                with m.If(count == self._rounds - 1):
                    m.next = "Output"
            with m.State("Output"):
                m.d.comb += self.output.valid.eq(1)
                with m.If(self.output.ready):
                    m.next = "Idle"
        return m


#: The toy cipher as a catalog entry (name ``toy``, 80-bit keys, no options, no printed vectors).
TOY_ENTRY = CipherEntry(
    name="toy", title="TOY", component=ToyCipher, encrypt=encrypt_block, decrypt=decrypt_block,
    block_bits=64, key_bits=(80,), default_key_bits=80, description="a stand-in for tests")
