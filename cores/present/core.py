"""The PRESENT-80/128 encryption/decryption core."""

from amaranth.hdl import C, Module, Mux, Signal

from ..cipher import BlockCipher
from .key_schedule import round_key
from .reference import check_key_bits
from .round import Round
from .tables import BLOCK_BITS, ROUNDS


__all__ = ["ROUNDS_PER_CYCLE", "PRESENT"]


#: The values :class:`PRESENT` accepts for ``rounds_per_cycle``; 31 unrolls every round.
ROUNDS_PER_CYCLE = (1, 2, 4, 8, 16, 31)


class PRESENT(BlockCipher):
    """PRESENT-80/128 block cipher (Bogdanov et al., CHES 2007): one core that encrypts and
    decrypts, each block choosing its direction.

    The architecture is the integrated one of Pattalu Naidu and Kamala Kumari ("A High-Performance
    VLSI Architecture for the PRESENT Lightweight Cryptography"): a 64-bit datapath computing
    ``rounds_per_cycle`` rounds per clock, with the key schedule running in parallel with the
    rounds. There is no round-key table. For decryption the key schedule runs backwards, on the
    fly, from the key register after its 31 updates (whose 64 leftmost bits are K32); that register
    is derived once, when the key is loaded, by running the schedule forward.

    Key registers: the core keeps the running key register K and a second register holding the
    other end of the schedule (the loaded key or the final key register). A block starts from the
    end its direction needs and leaves K at the opposite end, so the two registers swap roles
    instead of a third register being reloaded; the final key register is never recomputed from
    scratch after the key load.

    Parameters
    ----------
    key_bits : :class:`int`
        80 (PRESENT-80) or 128 (PRESENT-128).
    rounds_per_cycle : :class:`int`
        Rounds computed per clock: 1, 2, 4, 8, 16 or 31 (31 unrolls every round). The last cycle of
        a block does the remainder of 31 rounds.
    decrypt : :class:`bool`
        With ``False`` the decryption path is left out (an encrypt-only core, e.g. for CTR mode):
        the ``decrypt`` field of ``input.payload`` is then ignored and every block is encrypted,
        and a key load costs a single cycle since no final key register is needed.

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        Loads a key: the integer k79..k0 (k127..k0) of the paper, k0 the least significant bit.
        ``key.ready`` is high only when the core is idle: no block in the core, no result waiting,
        no key load running.
    input : ``In(stream.Signature(BlockRequest(64)))``
        One block: ``block`` is the integer b63..b0 of the paper (b0 the least significant bit),
        ``decrypt`` selects the direction (0: encrypt, 1: decrypt). ``input.ready`` stays low until
        the first key has been loaded, and while ``key.valid`` is high: a key waiting to be loaded
        goes before any block, so a stream of blocks cannot hold a key back.
    output : ``Out(stream.Signature(unsigned(64)))``
        The result of each block, b63..b0, in order. Its payload is the state register.

    Cycle counts
    ------------
    With ``R = rounds_per_cycle`` and ``N = ceil(31 / R)`` round cycles, counted in clock edges:

    * latency (:attr:`latency`): ``N + 1`` from the edge where a block transfers in to the edge
      where its result transfers out, when ``output.ready`` is high. The transfer-in edge
      adds the first round key, each of the ``N`` round cycles computes R rounds (the last one
      the remainder), and the result is then valid.
    * initiation interval (:attr:`initiation_interval`): ``N + 1``; the next block transfers in on
      the edge where the previous result transfers out.
    * key load (:attr:`key_load_cycles`): ``N + 1`` from the key transfer edge to the first edge a
      block can transfer (the key schedule runs forward N cycles), or 1 when ``decrypt`` is
      ``False``. The key transfers at the earliest one edge after the previous result left, when
      the core is idle again.

    ================  =======  ===================  =========================
    rounds_per_cycle  latency  initiation interval  key load (decrypt=False)
    ================  =======  ===================  =========================
    1                 32       32                   32 (1)
    2                 17       17                   17 (1)
    4                 9        9                    9 (1)
    8                 5        5                    5 (1)
    16                3        3                    3 (1)
    31                2        2                    2 (1)
    ================  =======  ===================  =========================

    The figures are the same for both key sizes, both directions and all data and keys.

    Reset
    -----
    A reset at any time (also in the middle of a block or of a key load) leaves an idle core with
    no key loaded and no output pending.
    """
    def __init__(self, key_bits: int = 80, *, rounds_per_cycle: int = 1, decrypt: bool = True):
        check_key_bits(key_bits)
        if not isinstance(rounds_per_cycle, int) or isinstance(rounds_per_cycle, bool):
            raise TypeError(f"rounds_per_cycle must be an integer (1, 2, 4, 8, 16 or 31), "
                            f"not {rounds_per_cycle!r}")
        if rounds_per_cycle not in ROUNDS_PER_CYCLE:
            raise ValueError(f"rounds_per_cycle must be 1, 2, 4, 8, 16 or 31, "
                             f"not {rounds_per_cycle!r}")
        if not isinstance(decrypt, bool):
            raise TypeError(f"decrypt must be a bool, not {decrypt!r}")
        self._key_bits = key_bits
        self._rounds_per_cycle = rounds_per_cycle
        self._decrypt = decrypt
        super().__init__(BLOCK_BITS, key_bits)

    @property
    def key_bits(self) -> int:
        return self._key_bits

    @property
    def rounds_per_cycle(self) -> int:
        return self._rounds_per_cycle

    @property
    def decrypt(self) -> bool:
        """Whether the core has the decryption path."""
        return self._decrypt

    @property
    def round_cycles(self) -> int:
        """Clock cycles spent on the 31 rounds of a block: ceil(31 / rounds_per_cycle)."""
        return -(-ROUNDS // self._rounds_per_cycle)

    @property
    def latency(self) -> int:
        return 1 + self.round_cycles

    @property
    def initiation_interval(self) -> int:
        return 1 + self.round_cycles

    @property
    def key_load_cycles(self) -> int:
        return 1 + self.round_cycles if self._decrypt else 1

    def elaborate(self, platform):
        m = Module()

        key_bits = self._key_bits
        per_cycle = self._rounds_per_cycle
        cycles = self.round_cycles
        remainder = ROUNDS - (cycles - 1) * per_cycle

        state = Signal(BLOCK_BITS)          # b63..b0, after the latest AddRoundKey
        key_reg = Signal(key_bits)          # the running key register K
        key_other = Signal(key_bits)        # the other end of the schedule
        key_reg_at_end = Signal()           # key_reg holds the final key register (K32 on top)
        key_loaded = Signal()
        decrypting = Signal()               # direction of the block in flight; 0 in "Expand key"
        cycle = Signal(range(cycles))       # round cycle of the block (or of the key expansion)

        # The rounds of one cycle, chained; sub-round `j` is round `cycle * R + j + 1` in the
        # encryption order. Each updates the key register first and adds the new round key after
        # the layers, so `state` always holds the state right after an AddRoundKey. The last
        # round of the cycle leaves its AddRoundKey to the register input below.
        states, layers, keys = [state], [None], [key_reg]
        for j in range(per_cycle):
            m.submodules[f"round_{j}"] = round_ = Round(key_bits, decrypt=self._decrypt)
            index = (cycle * per_cycle + j)[:5]
            m.d.comb += [
                round_.state_in.eq(states[-1]),
                round_.key_in.eq(keys[-1]),
            ]
            if self._decrypt:
                # Decrypting, round `index + 1` undoes the update with counter 31 - index.
                m.d.comb += [
                    round_.inverse.eq(decrypting),
                    round_.counter.eq(Mux(decrypting, ~index, index + 1)),
                ]
            else:
                m.d.comb += round_.counter.eq(index + 1)
            states.append(round_.state_out)
            layers.append(round_.layers_out)
            keys.append(round_.key_out)

        last_cycle = Signal()
        m.d.comb += last_cycle.eq(cycle == cycles - 1)
        # `keep`: without it the (delay-driven) LUT mapper merges the direction mux of the layers
        # into the register-input logic and duplicates it; as a net, each state bit costs the
        # S-box and inverse S-box LUTs, this mux and one LUT for block load and AddRoundKey.
        round_layers = Signal(BLOCK_BITS, attrs={"keep": 1})
        round_key_reg = Signal(key_bits)
        if remainder == per_cycle:
            m.d.comb += [
                round_layers.eq(layers[per_cycle]),
                round_key_reg.eq(keys[per_cycle]),
            ]
        else:
            m.d.comb += [
                round_layers.eq(Mux(last_cycle, layers[remainder], layers[per_cycle])),
                round_key_reg.eq(Mux(last_cycle, keys[remainder], keys[per_cycle])),
            ]

        # What happens on this edge; at most one of the first three is high.
        load_key = Signal()                 # a key transfers
        load_block = Signal()               # a block transfers
        step = Signal()                     # the rounds (or the key expansion) advance
        expanding = Signal()                # in "Expand key" (`step` is high too)

        # The key register's next value without a key load (`key_next`), and the state's. The
        # key register a block starts from is the loaded key to encrypt, the final key register
        # to decrypt: `key_reg` if it is already at that end, else `key_other`. The state takes
        # the block or the round layers, then the round key of `key_next`: one AddRoundKey for
        # the block load and both directions.
        key_next = Signal(key_bits)
        state_next = Signal(BLOCK_BITS)
        if self._decrypt:
            direction = self.input.payload.decrypt
            start_key = Signal(key_bits)
            m.d.comb += [
                start_key.eq(Mux(key_reg_at_end == direction, key_reg, key_other)),
                key_next.eq(Mux(step, round_key_reg, start_key)),
            ]
        else:
            # Encrypt-only: `key_other` holds the loaded key and every block starts from it.
            direction = C(0, 1)
            m.d.comb += key_next.eq(Mux(step, round_key_reg, key_other))
        m.d.comb += state_next.eq(Mux(load_block, self.input.payload.block, round_layers) ^
                                  round_key(key_next, key_bits))

        if self._decrypt:
            # The key is loaded into `key_reg` and copied into `key_other` on the first edge of
            # the expansion; when a block starts from `key_reg`, `key_other` keeps that end.
            with m.If(load_key):
                m.d.sync += key_reg.eq(self.key.payload)
            with m.Elif(step | load_block):
                m.d.sync += key_reg.eq(key_next)
            with m.If((expanding & (cycle == 0)) |
                      (load_block & (key_reg_at_end == direction))):
                m.d.sync += key_other.eq(key_reg)
        else:
            with m.If(step | load_block):
                m.d.sync += key_reg.eq(key_next)
            with m.If(load_key):
                m.d.sync += key_other.eq(self.key.payload)
        with m.If(load_block | (step & ~expanding)):
            m.d.sync += state.eq(state_next)

        with m.If(load_key):
            m.d.sync += [
                key_reg_at_end.eq(0),
                key_loaded.eq(1),
                decrypting.eq(0),
            ]
        with m.If(load_block):
            m.d.sync += [
                key_reg_at_end.eq(~direction),
                decrypting.eq(direction),
            ]
        with m.If(step):
            m.d.sync += cycle.eq(Mux(last_cycle, 0, cycle + 1))

        # The state machine of :class:`~cores.cipher.Handshake` (the same states, transitions and
        # ready/valid), written inline: as a submodule it maps to 1 (PRESENT-80) or 4
        # (PRESENT-128) more LUT4 on iCE40, because the "final key register" flag is set here.
        with m.FSM():
            with m.State("Idle"):
                m.d.comb += [
                    self.key.ready.eq(1),
                    self.input.ready.eq(key_loaded & ~self.key.valid),
                    load_key.eq(self.key.valid),
                ]
                if self._decrypt:
                    with m.If(self.key.valid):
                        m.next = "Expand key"
                with m.If(load_block):
                    m.next = "Round"

            with m.State("Expand key"):
                # Run the key schedule forward to the final key register, for decryption.
                m.d.comb += [
                    step.eq(1),
                    expanding.eq(1),
                ]
                with m.If(last_cycle):
                    m.d.sync += key_reg_at_end.eq(1)
                    m.next = "Idle"

            with m.State("Round"):
                m.d.comb += step.eq(1)
                with m.If(last_cycle):
                    m.next = "Output"

            with m.State("Output"):
                # The result leaves on an edge where output.ready is high, and the state register
                # can take the next block on that same edge. A key waits for the idle state.
                m.d.comb += [
                    self.output.valid.eq(1),
                    self.input.ready.eq(self.output.ready & ~self.key.valid),
                ]
                with m.If(self.output.ready):
                    m.next = "Idle"
                with m.If(load_block):
                    m.next = "Round"

        m.d.comb += load_block.eq(self.input.valid & self.input.ready)
        m.d.comb += self.output.payload.eq(state)

        return m
