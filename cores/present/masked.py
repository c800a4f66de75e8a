"""A first-order threshold implementation of PRESENT-80/128 (three shares), encrypt-only.

The S-box decomposition and its shared component functions are defined here once, as tables and
the algebraic normal forms computed from them; the hardware, the Python share model
(:func:`shared_apply`) and the tests all read them.
"""

from amaranth.hdl import Cat, Const, Module, Signal

from ..cipher import BlockCipher
from .reference import check_key_bits
from .tables import (BLOCK_BITS, COUNTER_BITS, KEY_COUNTER_LSB, KEY_ROTATION, KEY_SBOX_NIBBLES,
                     PERMUTATION, ROUNDS, SBOX)


__all__ = ["G_TABLE", "F_TABLE", "SHARES", "anf", "shared_terms", "shared_apply",
           "MaskedPRESENT"]


#: The quadratic permutation G of the decomposition S = F o G (S the PRESENT S-box), as a table.
#: Found by a search: G = T o A with T(x) = (x0, x1, x2 ^ x0x1, x3 ^ x0x2) and A affine, keeping
#: those for which F = S o G^-1 is quadratic too and whose direct sharings (:func:`shared_terms`)
#: are uniform; of those, one with the fewest quadratic terms (5 in G, 4 in F).
G_TABLE = tuple(int(digit, 16) for digit in "D7A4E01B93682C5F")
#: The quadratic permutation F = S o G^-1.
F_TABLE = tuple(int(digit, 16) for digit in "0A4EB1F5836D7C92")
assert all(F_TABLE[G_TABLE[x]] == SBOX[x] for x in range(16))

#: Number of shares of every masked value.
SHARES = 3


def anf(table, bit: int) -> list:
    """The algebraic normal form of output bit ``bit`` of a 4-bit function ``table``: the list of
    its monomials, each a tuple of input bit indices (``()`` is the constant 1)."""
    coefficients = [(table[x] >> bit) & 1 for x in range(16)]
    for i in range(4):
        for x in range(16):
            if x >> i & 1:
                coefficients[x] ^= coefficients[x ^ (1 << i)]
    return [tuple(i for i in range(4) if x >> i & 1) for x in range(16) if coefficients[x]]


def shared_terms(table) -> list:
    """The direct three-share sharing of a function of degree at most 2 (Nikova, Rechberger and
    Rijmen's threshold implementations): ``terms[i][bit]`` is the list of monomials of output share
    ``i``, bit ``bit``, each a tuple of ``(share, input bit)`` pairs (``()`` the constant 1).

    Output share ``i`` reads only input shares ``i + 1`` and ``i + 2`` (mod 3): a linear term
    ``a`` goes to share ``i`` as ``a[i + 1]``, a quadratic ``ab`` as
    ``a[j]b[j] ^ a[j]b[k] ^ a[k]b[j]`` with ``j, k = i + 1, i + 2``; the constant to share 0.
    """
    terms = []
    for i in range(SHARES):
        j, k = (i + 1) % SHARES, (i + 2) % SHARES
        per_bit = []
        for bit in range(4):
            monomials = []
            for monomial in anf(table, bit):
                if len(monomial) == 0:
                    if i == 0:
                        monomials.append(())
                elif len(monomial) == 1:
                    monomials.append(((j, monomial[0]),))
                elif len(monomial) == 2:
                    a, b = monomial
                    monomials += [((j, a), (j, b)), ((j, a), (k, b)), ((k, a), (j, b))]
                else:
                    raise ValueError(f"table must have degree at most 2, not {table!r}")
            per_bit.append(monomials)
        terms.append(per_bit)
    return terms


def shared_apply(table, shares) -> list:
    """The shared function of :func:`shared_terms` on three 4-bit input shares (integers):
    returns the three 4-bit output shares. Their XOR is ``table`` of the XOR of the inputs."""
    out = []
    for per_bit in shared_terms(table):
        value = 0
        for bit, monomials in enumerate(per_bit):
            for monomial in monomials:
                product = 1
                for share, index in monomial:
                    product &= shares[share] >> index
                value ^= (product & 1) << bit
        out.append(value)
    return out


def _shared_gates(table, shares) -> list:
    """:func:`shared_terms` as gateware on three 4-bit values: three 4-bit values."""
    out = []
    for per_bit in shared_terms(table):
        bits = []
        for monomials in per_bit:
            products = []
            for monomial in monomials:
                factors = [shares[share][index] for share, index in monomial]
                product = factors[0] if factors else Const(1, 1)
                for factor in factors[1:]:
                    product = product & factor
                products.append(product)
            value = products[0] if products else Const(0, 1)
            for product in products[1:]:
                value = value ^ product
            bits.append(value)
        out.append(Cat(*bits))
    return out


def _named(m, value, name):
    """A named net driven by ``value`` in ``m``: one copy of a shared value for the simulators
    (which would otherwise recompute it for every use) and for reading waveforms."""
    signal = Signal(len(value), name=name)
    m.d.comb += signal.eq(value)
    return signal


def _rotate_left(value, amount: int):
    width = len(value)
    amount %= width
    return Cat(value[width - amount:], value[:width - amount])


class MaskedPRESENT(BlockCipher):
    """PRESENT-80/128 encryption (Bogdanov et al., CHES 2007) as a three-share threshold
    implementation, first-order secure in the glitch-extended probing model: the construction of
    Poschmann, Moradi, Khoo, Lim, Wang and Ling ("Side-Channel Resistant Crypto for less than
    2,300 GE", J. Cryptology 2011), derived and written here from the paper's description.

    Construction
    ------------
    The S-box is S = F o G with G and F quadratic permutations (:data:`G_TABLE`,
    :data:`F_TABLE`); each is shared directly in three shares (:func:`shared_terms`). The sharings
    are correct, non-complete (output share ``i`` never reads input share ``i``) and uniform (the
    shared 12-bit maps are permutations), which ``tests/test_present_masked.py`` checks, so no
    fresh randomness is needed after the initial masking. A register (``mid``, 16 x 12 bits for
    the state, 12 or 24 for the key schedule's S-boxes) separates G from F so that a glitch
    cannot combine the shares of one S-box input across both stages. Linear steps (AddRoundKey,
    pLayer, the key register's rotation and counter addition) work share by share.

    State and key are both shared: the block enters as ``(r1, r2, block ^ r1 ^ r2)``, the key as
    ``(r1', r2', key ^ r1' ^ r2')`` with fresh bits from ``random``; the key schedule's S-box is
    masked like the state's. The shares are recombined only into the output, through a gate
    that holds the XOR at 0 except while the result is offered.

    What is claimed, and what is not
    --------------------------------
    Claimed: first-order security (no single probe, even extended by glitches up to the nearest
    register, depends on the key or the data) given uniform fresh random bits. Not claimed:
    higher-order security, protection against transition leakage of registers that FPGA routing
    may combine, faults, or anything with a weak random source (with all-zero randomness the core
    is unprotected but correct). The key's sharing is drawn once per key load and reused for
    every block under that key (the loaded shares are kept, the running key register reloads
    from them); the state is remasked with fresh bits for every block. Only simulation and
    statistical leakage tests back the claim, not silicon measurements.

    Randomness
    ----------
    ``random_bits`` is ``2 * key_bits`` (160 or 256): a key transfers only on an edge where a
    random word transfers with it (``key.ready`` follows ``random.valid``), and its three shares
    are ``(r[0:k], r[k:2k], key ^ r[0:k] ^ r[k:2k])``; a block likewise takes one word, of
    which it uses 128 bits (``r[0:64]``, ``r[k:k + 64]``). So 128 fresh random bits per block
    (160 or 256 drawn) and ``2 * key_bits`` per key load; no other randomness.

    Parameters
    ----------
    key_bits : :class:`int`
        80 (PRESENT-80) or 128 (PRESENT-128).
    decrypt : :class:`bool`
        Must be ``False``: this core only encrypts (a shared inverse S-box is not implemented);
        the ``decrypt`` field of ``input.payload`` is ignored.

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        The integer k79..k0 (k127..k0) of the paper. ``key.ready`` is high only when the core is
        idle and ``random.valid`` is high.
    input : ``In(stream.Signature(BlockRequest(64)))``
        ``block`` is the integer b63..b0 of the paper. No block is accepted before the first key,
        while ``key.valid`` is high, or while ``random.valid`` is low.
    output : ``Out(stream.Signature(unsigned(64)))``
        The ciphertext b63..b0.
    random : ``In(stream.Signature(unsigned(2 * key_bits)))``
        Fresh random bits (for example from :class:`~cipher_cores.cores.prng.PRNG`); a word
        transfers with each key and each block.

    Cycle counts
    ------------
    Two clock cycles per round (G, then F), 31 rounds, with ``random.valid`` held high:

    * latency: 64 edges from the input transfer to the output transfer (62 round edges, one
      edge adding the last round key, the output transfer);
    * initiation interval: 65 (the next block transfers on the edge after the result);
    * key load: 1 (a block can transfer on the edge after the key).

    Reset
    -----
    A reset leaves an idle core with no key loaded.
    """
    def __init__(self, key_bits: int = 80, *, decrypt: bool = False):
        if not isinstance(decrypt, bool):
            raise TypeError(f"decrypt must be a bool (True or False), not {decrypt!r}")
        if decrypt:
            raise ValueError("decrypt must be False: MaskedPRESENT only encrypts, not True")
        key_bits = check_key_bits(key_bits)
        super().__init__(BLOCK_BITS, key_bits, decrypt=False, random_bits=2 * key_bits)

    @property
    def random_bits_per_block(self) -> int:
        """Random bits a block uses (of the ``random_bits`` of the word it takes): 128."""
        return (SHARES - 1) * BLOCK_BITS

    @property
    def latency(self) -> int:
        return 2 * ROUNDS + 2

    @property
    def initiation_interval(self) -> int:
        return self.latency + 1

    @property
    def key_load_cycles(self) -> int:
        return 1

    def elaborate(self, platform):
        m = Module()
        key_bits = self._key_bits
        nibbles = KEY_SBOX_NIBBLES[key_bits]
        counter_lsb = KEY_COUNTER_LSB[key_bits]

        state = [Signal(BLOCK_BITS, name=f"state_{i}", reset_less=True) for i in range(SHARES)]
        mid = [Signal(16 * 4, name=f"mid_{i}", reset_less=True) for i in range(SHARES)]
        key_loaded_shares = [Signal(key_bits, name=f"key_loaded_{i}", reset_less=True)
                             for i in range(SHARES)]
        key = [Signal(key_bits, name=f"key_{i}", reset_less=True) for i in range(SHARES)]
        key_mid = [Signal(4 * len(nibbles), name=f"key_mid_{i}", reset_less=True)
                   for i in range(SHARES)]
        counter = Signal(COUNTER_BITS, init=1)    # the round counter, 1..31
        key_loaded = Signal()
        output_valid = Signal()

        # Round, first half: G on each share triple of (state ^ round key); the key schedule's
        # S-box input is the top nibble(s) of the key register turned left by 61.
        def named(value, name):
            return _named(m, value, name)

        round_key = [k[key_bits - BLOCK_BITS:] for k in key]
        added = [named(s ^ k, f"added_{i}") for i, (s, k) in enumerate(zip(state, round_key))]
        g_state = [[], [], []]
        for n in range(16):
            outs = _shared_gates(G_TABLE, [a[4 * n:4 * n + 4] for a in added])
            for i in range(SHARES):
                g_state[i].append(named(outs[i], f"g_{n}_{i}"))
        rotated = [_rotate_left(k, KEY_ROTATION) for k in key]
        g_key = [[], [], []]
        rotated = [named(r, f"rotated_{i}") for i, r in enumerate(rotated)]
        for lsb in nibbles:
            outs = _shared_gates(G_TABLE, [r[lsb:lsb + 4] for r in rotated])
            for i in range(SHARES):
                g_key[i].append(outs[i])

        # Round, second half: F, then pLayer; the key register's next value.
        f_state = [[], [], []]
        for n in range(16):
            outs = _shared_gates(F_TABLE, [md[4 * n:4 * n + 4] for md in mid])
            for i in range(SHARES):
                f_state[i].append(outs[i])
        next_state = []
        for i in range(SHARES):
            substituted = named(Cat(*f_state[i]), f"substituted_{i}")
            bits = [None] * BLOCK_BITS
            for source, target in enumerate(PERMUTATION):
                bits[target] = substituted[source]
            next_state.append(named(Cat(*bits), f"next_state_{i}"))
        next_key = []
        for i in range(SHARES):
            bits = list(rotated[i])
            for index, lsb in enumerate(nibbles):
                f_bits = _shared_gates(F_TABLE, [km[4 * index:4 * index + 4]
                                                 for km in key_mid])[i]
                bits[lsb:lsb + 4] = list(f_bits)
            if i == 0:
                for b in range(COUNTER_BITS):
                    bits[counter_lsb + b] = bits[counter_lsb + b] ^ counter[b]
            next_key.append(named(Cat(*bits), f"next_key_{i}"))

        # The output: the shares' XOR, gated so that it is 0 except while the result is offered.
        m.d.comb += self.output.payload.eq(
            (state[0] & output_valid.replicate(BLOCK_BITS)) ^
            (state[1] & output_valid.replicate(BLOCK_BITS)) ^
            (state[2] & output_valid.replicate(BLOCK_BITS)))
        m.d.comb += self.output.valid.eq(output_valid)

        # A key or a block enters on an edge where a random word is offered too (the word
        # transfers with it): its first two shares are random bits, the third the key or block
        # XORed with them.
        words = [self.random.payload[i * key_bits:(i + 1) * key_bits] for i in range(2)]
        take_key = Signal()
        take_block = Signal()

        with m.FSM(name="control"):
            with m.State("Idle"):
                m.d.comb += [
                    self.key.ready.eq(self.random.valid),
                    self.input.ready.eq(self.random.valid & key_loaded & ~self.key.valid),
                    take_key.eq(self.key.valid & self.random.valid),
                    take_block.eq(self.input.valid & self.input.ready),
                    self.random.ready.eq(take_key | take_block),
                ]
                with m.If(take_key):
                    m.d.sync += [
                        key_loaded_shares[0].eq(words[0]),
                        key_loaded_shares[1].eq(words[1]),
                        key_loaded_shares[2].eq(self.key.payload ^ words[0] ^ words[1]),
                        key_loaded.eq(1),
                    ]
                with m.Elif(take_block):
                    block_words = [words[0][:BLOCK_BITS], words[1][:BLOCK_BITS]]
                    m.d.sync += [
                        state[0].eq(block_words[0]),
                        state[1].eq(block_words[1]),
                        state[2].eq(self.input.payload.block ^ block_words[0] ^ block_words[1]),
                        counter.eq(1),
                    ]
                    m.d.sync += [k.eq(kl) for k, kl in zip(key, key_loaded_shares)]
                    m.next = "Round G"
            with m.State("Round G"):
                m.d.sync += [md.eq(Cat(*g)) for md, g in zip(mid, g_state)]
                m.d.sync += [km.eq(Cat(*g)) for km, g in zip(key_mid, g_key)]
                m.next = "Round F"
            with m.State("Round F"):
                m.d.sync += [s.eq(n) for s, n in zip(state, next_state)]
                m.d.sync += [k.eq(n) for k, n in zip(key, next_key)]
                m.d.sync += counter.eq(counter + 1)
                with m.If(counter == ROUNDS):
                    m.next = "Last key"
                with m.Else():
                    m.next = "Round G"
            with m.State("Last key"):
                m.d.sync += [s.eq(s ^ k) for s, k in zip(state, round_key)]
                m.d.sync += output_valid.eq(1)
                m.next = "Output"
            with m.State("Output"):
                with m.If(self.output.ready):
                    m.d.sync += output_valid.eq(0)
                    m.next = "Idle"
        return m
