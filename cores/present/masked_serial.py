"""A serial first-order threshold implementation of PRESENT-80/128 (three shares), encrypt-only:
one to four shared S-boxes, the state refreshed with fresh random bits as it is substituted.

The S-box sharing (S = F o G, each shared directly in three shares) is
:mod:`cipher_cores.cores.present.masked`'s; this module only serializes it.
"""

from amaranth.hdl import Array, Cat, Module, Mux, Signal

from ..cipher import BlockCipher
from .masked import F_TABLE, G_TABLE, SHARES, _named, _rotate_left, _shared_gates
from .reference import check_key_bits
from .tables import (BLOCK_BITS, COUNTER_BITS, KEY_COUNTER_LSB, KEY_ROTATION, KEY_SBOX_NIBBLES,
                     PERMUTATION, ROUNDS)


__all__ = ["SBOXES_PER_CYCLE", "SerialMaskedPRESENT"]


#: The values ``sboxes_per_cycle`` allows: a state group of 4, 8 or 16 bits per clock (both key
#: sizes are a whole number of groups, so the key loads a group per clock too).
SBOXES_PER_CYCLE = (1, 2, 4)


class SerialMaskedPRESENT(BlockCipher):
    """PRESENT-80/128 encryption (Bogdanov et al., CHES 2007) as a serial three-share threshold
    implementation, first-order secure in the glitch-extended probing model and, because every
    share written back to the state carries fresh random bits, against the transition leakage
    of its registers too.

    Construction
    ------------
    The S-box sharing is :class:`~cipher_cores.cores.present.masked.MaskedPRESENT`'s (S = F o G,
    G and F quadratic, each shared directly in three shares: correct, non-complete, uniform;
    after Poschmann, Moradi, Khoo, Lim, Wang and Ling, J. Cryptology 2011), here in
    ``sboxes_per_cycle`` copies. Each share of the state is a shift register of 64 bits moving
    a group of ``4 * sboxes_per_cycle`` bits per clock: the group at the bottom goes through G
    into the ``mid`` register (the glitch barrier between G and F), F of ``mid`` enters at the
    top one clock later. After ``16 / sboxes_per_cycle`` groups a permutation clock applies
    pLayer to the whole substituted state and adds the next round key, share by share, in one
    step. The key register (three shares of ``key_bits``) goes through the key schedule once a
    round, its S-box shared like the state's.

    Why fresh randomness every clock: a register that holds share ``i`` of one value and then
    share ``i`` of a value computed from all three shares of the first (as a threshold
    implementation's output share is, after two stages) toggles with a function of all three
    shares: the Hamming distance of the two leaks at first order, which the leakage test showed
    on :class:`~cipher_cores.cores.present.masked.MaskedPRESENT`. Here every share that F writes
    back (state and key) is refreshed first: shares ``(y0 ^ a, y1 ^ b, y2 ^ a ^ b)`` with ``a``,
    ``b`` fresh, so any register's consecutive values and any two shares of the next round are
    independent of the data. Other transitions move a share within its own index (shifts,
    pLayer with the round key's share), which one share alone cannot reveal.

    The block enters as ``(r1, r2, Q ^ r1 ^ r2)`` one group per clock, where ``Q`` is pLayer's
    inverse of the block, so that the permutation clock that ends the load gives the shared
    block with the first round key added. The key enters the same way, one group per clock,
    into a register that keeps its three shares for every block under that key (the running key
    register reloads from it). The shares are recombined only into ``output.payload``, through
    a gate that holds it at 0 except while the result is offered.

    What is claimed, and what is not
    --------------------------------
    Claimed: first-order security in the glitch-extended probing model with transitions of the
    registers, given uniform fresh random bits. Not claimed: higher order, the unshared block
    and key on the input ports and in the logic that first masks them (the load clocks), the
    combination of register values by routing, faults, or anything with a weak random source
    (with all-zero randomness the core is unprotected but correct). Only simulation and
    statistical leakage tests back the claim (``docs/masking.md``).

    Parameters
    ----------
    key_bits : :class:`int`
        80 (PRESENT-80) or 128 (PRESENT-128).
    sboxes_per_cycle : :class:`int`
        1, 2 or 4 shared S-boxes: fewer is smaller and slower (``16 / sboxes_per_cycle + 1``
        clocks a round).
    decrypt : :class:`bool`
        Must be ``False``: this core only encrypts; the ``decrypt`` field of ``input.payload``
        is ignored.

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        The integer k79..k0 (k127..k0) of the paper, read a group per clock over
        ``key_bits / group`` clocks (``group`` = ``4 * sboxes_per_cycle`` bits); it transfers on
        the last. A key waiting takes precedence over a block.
    input : ``In(stream.Signature(BlockRequest(64)))``
        ``block`` is the integer b63..b0 of the paper, read a group per clock over
        ``16 / sboxes_per_cycle`` clocks; it transfers on the last. No block is accepted before
        the first key.
    output : ``Out(stream.Signature(unsigned(64)))``
        The ciphertext b63..b0.
    random : ``In(stream.Signature(unsigned(random_bits)))``
        Fresh random bits, one word per clock while the core loads or encrypts (it waits, all
        registers held, while ``valid`` is low): ``random_bits`` is ``2 * group`` for the
        state plus ``8`` (PRESENT-80) or ``16`` (PRESENT-128) for the key schedule's S-boxes.

    Cycle counts
    ------------
    With ``random.valid`` held high and ``G = 16 / sboxes_per_cycle`` groups:

    * latency: ``31 * (G + 1) + 1`` edges from the input transfer to the output transfer (156
      for four S-boxes);
    * initiation interval: latency + ``G`` (the next block's load starts in the clock after the
      result leaves);
    * key load: ``G`` (a block's load starts in the clock after the key's transfer and takes
      ``G`` clocks).

    Reset
    -----
    A reset leaves an idle core with no key loaded.
    """
    def __init__(self, key_bits: int = 80, *, sboxes_per_cycle: int = 4, decrypt: bool = False):
        if not isinstance(decrypt, bool):
            raise TypeError(f"decrypt must be a bool (True or False), not {decrypt!r}")
        if decrypt:
            raise ValueError("decrypt must be False: SerialMaskedPRESENT only encrypts, not True")
        if not isinstance(sboxes_per_cycle, int) or isinstance(sboxes_per_cycle, bool):
            raise TypeError(f"sboxes_per_cycle must be one of 1, 2, 4, not {sboxes_per_cycle!r}")
        if sboxes_per_cycle not in SBOXES_PER_CYCLE:
            raise ValueError(f"sboxes_per_cycle must be one of 1, 2, 4, not {sboxes_per_cycle!r}")
        key_bits = check_key_bits(key_bits)
        self._sboxes = sboxes_per_cycle
        # A word covers the key's sharing (key_bits) and a round clock's masks (2 * group_bits
        # for the state, 8 for each key S-box), at most 2 * 16 + 16 bits.
        super().__init__(BLOCK_BITS, key_bits, decrypt=False, random_bits=key_bits)

    @property
    def sboxes_per_cycle(self) -> int:
        return self._sboxes

    @property
    def group_bits(self) -> int:
        """Bits of one share of the state that go through the S-boxes in one clock."""
        return 4 * self._sboxes

    @property
    def groups(self) -> int:
        """Clocks of substitution in a round (the round has one more, the permutation)."""
        return BLOCK_BITS // self.group_bits

    @property
    def random_bits_per_block(self) -> int:
        """Random bits a block uses: the running key's fresh share, then the masks of each load
        and round clock (the rest of those clocks' words is drawn and not used)."""
        masks = 2 * self.group_bits
        key_masks = 8 * len(KEY_SBOX_NIBBLES[self._key_bits])
        return self._key_bits + masks * self.groups + ROUNDS * (masks * (self.groups + 1) +
                                                                key_masks)

    @property
    def latency(self) -> int:
        return ROUNDS * (self.groups + 1) + 1

    @property
    def initiation_interval(self) -> int:
        return self.latency + self.groups + 1

    @property
    def key_load_cycles(self) -> int:
        return self.groups + 1

    def elaborate(self, platform):
        m = Module()
        key_bits = self._key_bits
        group = self.group_bits
        groups = self.groups
        nibbles = KEY_SBOX_NIBBLES[key_bits]
        counter_lsb = KEY_COUNTER_LSB[key_bits]

        state = [Signal(BLOCK_BITS, name=f"state_{i}", reset_less=True) for i in range(SHARES)]
        mid = [Signal(group, name=f"mid_{i}", reset_less=True) for i in range(SHARES)]
        key_loaded_shares = [Signal(key_bits, name=f"key_loaded_{i}", reset_less=True)
                             for i in range(2)]
        key = [Signal(key_bits, name=f"key_{i}", reset_less=True) for i in range(SHARES)]
        key_mid = [Signal(4 * len(nibbles), name=f"key_mid_{i}", reset_less=True)
                   for i in range(SHARES)]
        step = Signal(range(groups + 1))
        counter = Signal(COUNTER_BITS, init=1)    # the round, 1..31
        key_loaded = Signal()
        output_valid = Signal()

        def named(value, name):
            return _named(m, value, name)

        # The random word: two masks for a state (or key) group, two per key S-box nibble.
        mask = [self.random.payload[:group], self.random.payload[group:2 * group]]
        key_mask = [self.random.payload[2 * group + i * 4 * len(nibbles):
                                        2 * group + (i + 1) * 4 * len(nibbles)] for i in range(2)]

        def refresh(shares, masks):
            # A fresh sharing of the same value: (y0 ^ a, y1 ^ b, y2 ^ a ^ b).
            a, b = masks
            return [shares[0] ^ a, shares[1] ^ b, shares[2] ^ a ^ b]

        # G on the bottom group of each share; F on `mid`.
        g_outs, f_outs = [[], [], []], [[], [], []]
        for n in range(self._sboxes):
            for outs, table, source in ((g_outs, G_TABLE, state), (f_outs, F_TABLE, mid)):
                shared = _shared_gates(table, [s[4 * n:4 * n + 4] for s in source])
                for i in range(SHARES):
                    outs[i].append(shared[i])
        g_group = [Cat(*g) for g in g_outs]
        f_group = [named(Cat(*f), f"f_{i}") for i, f in enumerate(f_outs)]

        # What enters the top of the state: F's output refreshed, or while a block loads, its
        # group of Q = pLayer^-1(block), shared with the masks.
        loading = Signal()
        inverse = Cat(*(self.input.payload.block[PERMUTATION[j]] for j in range(BLOCK_BITS)))
        # The group's select is a counter of its own that moves only while a block loads, so
        # that this multiplexer of the unshared block stays still while the rounds run (with
        # the round counter as its select, its output would toggle with the block every clock).
        load_group = Signal(range(groups))
        loaded_group = Array(inverse[g * group:(g + 1) * group]
                             for g in range(groups))[load_group]
        substituted = [f & ~loading.replicate(group) for f in f_group[:2]]
        substituted.append(named(Mux(loading, loaded_group, f_group[2]), "entry_source"))
        entry = [named(e, f"entry_{i}") for i, e in enumerate(refresh(substituted, mask))]

        shifted = [Cat(s[group:], e) for s, e in zip(state, entry)]
        round_key = [k[key_bits - BLOCK_BITS:] for k in key]
        permuted = []
        for i in range(SHARES):
            bits = [None] * BLOCK_BITS
            for source, target in enumerate(PERMUTATION):
                bits[target] = shifted[i][source]
            permuted.append(Cat(*bits) ^ round_key[i])

        def shift_state():
            m.d.sync += [s.eq(v) for s, v in zip(state, shifted)]

        def permute_state():
            m.d.sync += [s.eq(v) for s, v in zip(state, permuted)]

        # The key schedule: G on the rotated key's S-box nibble(s), then F refreshed.
        rotated = [named(_rotate_left(k, KEY_ROTATION), f"rotated_{i}") for i, k in enumerate(key)]
        g_key = [[], [], []]
        for lsb in nibbles:
            outs = _shared_gates(G_TABLE, [r[lsb:lsb + 4] for r in rotated])
            for i in range(SHARES):
                g_key[i].append(outs[i])
        f_key = [[], [], []]
        for index in range(len(nibbles)):
            outs = _shared_gates(F_TABLE, [km[4 * index:4 * index + 4] for km in key_mid])
            for i in range(SHARES):
                f_key[i].append(outs[i])
        f_key = refresh([Cat(*f) for f in f_key], key_mask)
        next_key = []
        for i in range(SHARES):
            bits = list(rotated[i])
            for index, lsb in enumerate(nibbles):
                bits[lsb:lsb + 4] = list(f_key[i][4 * index:4 * index + 4])
            if i == 0:
                for b in range(COUNTER_BITS):
                    bits[counter_lsb + b] = bits[counter_lsb + b] ^ counter[b]
            next_key.append(Cat(*bits))

        # The output: the shares' XOR, gated so that it is 0 except while the result is offered.
        gate = output_valid.replicate(BLOCK_BITS)
        m.d.comb += self.output.payload.eq((state[0] & gate) ^ (state[1] & gate) ^
                                           (state[2] & gate))
        m.d.comb += self.output.valid.eq(output_valid)

        go = self.random.valid
        word = self.random.payload[:key_bits]

        def block_step():
            m.d.comb += [self.random.ready.eq(1), loading.eq(1)]
            with m.If(go):
                with m.If(load_group == groups - 1):
                    m.d.comb += self.input.ready.eq(1)
                    permute_state()
                    # load_group stays: the multiplexer holds still until the next load.
                    m.d.sync += [step.eq(0), counter.eq(1)]
                    m.next = "Round"
                with m.Else():
                    shift_state()
                    m.d.sync += load_group.eq(load_group + 1)

        with m.FSM(name="control"):
            with m.State("Idle"):
                m.d.comb += self.key.ready.eq(go)
                with m.If(self.key.valid):
                    # Two shares of the key, (r, key ^ r); the third is drawn for each block.
                    m.d.comb += self.random.ready.eq(1)
                    with m.If(go):
                        m.d.sync += [key_loaded_shares[0].eq(word),
                                     key_loaded_shares[1].eq(self.key.payload ^ word),
                                     key_loaded.eq(1)]
                with m.Elif(self.input.valid & key_loaded):
                    # The running key register gets a fresh three-share sharing of the key:
                    # (k0 ^ r, r, k1) for the stored (k0, k1) and a fresh r.
                    m.d.comb += self.random.ready.eq(1)
                    with m.If(go):
                        m.d.sync += [key[0].eq(key_loaded_shares[0] ^ word), key[1].eq(word),
                                     key[2].eq(key_loaded_shares[1]), load_group.eq(0)]
                        m.next = "Load"
            with m.State("Load"):
                # A key offered meanwhile goes first: the block's load starts again after it.
                with m.If(self.key.valid):
                    m.d.sync += load_group.eq(0)
                    m.next = "Idle"
                with m.Else():
                    block_step()
            with m.State("Round"):
                m.d.comb += self.random.ready.eq(1)
                with m.If(go):
                    with m.If(step == 0):
                        m.d.sync += [km.eq(Cat(*g)) for km, g in zip(key_mid, g_key)]
                    with m.If(step == 1):
                        m.d.sync += [k.eq(n) for k, n in zip(key, next_key)]
                    with m.If(step == groups):
                        permute_state()
                        m.d.sync += [step.eq(0), counter.eq(counter + 1)]
                        with m.If(counter == ROUNDS):
                            m.d.sync += output_valid.eq(1)
                            m.next = "Output"
                    with m.Else():
                        m.d.sync += [md.eq(g) for md, g in zip(mid, g_group)]
                        shift_state()
                        m.d.sync += step.eq(step + 1)
            with m.State("Output"):
                with m.If(self.output.ready):
                    m.d.sync += output_valid.eq(0)
                    m.next = "Idle"
        return m
