"""The compact AES core: a 32-bit datapath, one column per clock cycle, S-boxes in four block RAMs.

:class:`CompactAES` computes a round in five clock cycles: one 32-bit column of the state goes
through the S-boxes in each of four cycles, and the fifth looks up the key schedule's SubWord in
the same block RAMs. Everything else is kept small:

* **S-boxes.** Four block RAMs, one per row of the state, each 512x8 holding ``S`` at addresses
  0..255 and ``InvS`` at 256..511 (one ``SB_RAM40_4K`` on iCE40, one ``DP16KD`` on ECP5). The
  direction is an address bit, so no multiplexer follows the tables.
* **State.** Four 32-bit registers in a ring (a shift register of columns) that turns once per
  cycle: the new column enters at the tail, so only the tail has logic besides the block load.
  ShiftRows (or InvShiftRows) is done by where each row is read: row ``r`` reads a fixed position
  of the ring, or one of two registers that keep the bytes the new columns have pushed out
  before their row read them (:func:`diagonal_source`).
* **Round function.** One column of MixColumns, and InvMixColumns as MixColumns plus the
  correction ``{04}·(a_r ^ a_{r+2}) ^ {08}·(a_0 ^ a_1 ^ a_2 ^ a_3)`` (:func:`mix_column`).
* **Key schedule.** On the fly, one word per cycle, forwards for encryption and backwards for
  decryption, in a ring of 32-bit registers (:class:`~cipher_cores.cores.aes.compact_key.KeyRing`). Nothing
  is stored per round key.

Byte and bit order: a block is ``int.from_bytes(fips197_bytes, "big")``, and so is a key; state
column ``c`` is bytes ``4c .. 4c + 3`` of the block, row 0 in the most significant bits of a column
word.
"""

from amaranth.hdl import Cat, Module, Mux, Signal, Value, unsigned
from amaranth.lib import memory

from ..cipher import Handshake
from .base import AESCipher
from .compact_key import KeyRing, ring_plan
from .round import xtime
from .sbox import INV_SBOX, SBOX


__all__ = ["diagonal_source", "mix_column", "CompactAES"]


#: Cycles of a round after round 0: four columns and the SubWord look-up.
ROUND_CYCLES = 5


def diagonal_source(row: int, decrypt: bool, cycle: int) -> str:
    """Where row ``row`` of the state column that (Inv)ShiftRows puts in column ``cycle`` is, in
    cycle ``cycle`` (0..3) of a round: ``"P0"`` .. ``"P3"`` (ring position) or ``"side0"``,
    ``"side1"`` (the bytes pushed out of position 0 one and two edges before).

    The ring turns on every edge of the round; at the start of a round position ``p`` holds
    column ``p``. The column written on edge ``e`` (2..5, one edge after its look-up) replaces the
    register that then holds old column ``e - 1`` (old column 0 on edge 5), which by then may not
    have been read by every row.
    """
    column = (cycle - row) % 4 if decrypt else (cycle + row) % 4
    overwritten = column + 1 if column else 5
    if cycle < overwritten:
        return f"P{(column - cycle) % 4}"
    return f"side{cycle - overwritten}"


def mix_column(m, a, decrypt, last) -> list:
    """MixColumns (``decrypt`` low) or InvMixColumns (``decrypt`` high) of the four bytes ``a``
    (row 0 first), or ``a`` itself if ``last``; the shared terms are signals of ``m``.

    MixColumns(a)_r = a_r ^ t ^ {02}·(a_r ^ a_r+1) with t = a_0 ^ a_1 ^ a_2 ^ a_3; the
    InvMixColumns coefficients {0e, 0b, 0d, 09} are {02, 03, 01, 01} plus {0c, 08, 0c, 08}, so
    InvMixColumns(a)_r = MixColumns(a)_r ^ {04}·(a_r ^ a_r+2) ^ {08}·t.
    """
    data = [Signal(8, name=f"mix_in{r}") for r in range(4)]
    t = Signal(8, name="mix_sum")
    m.d.comb += [byte.eq(value) for byte, value in zip(data, a)]
    m.d.comb += t.eq(data[0] ^ data[1] ^ data[2] ^ data[3])
    t8 = xtime(xtime(xtime(t)))
    result = []
    for r in range(4):
        mixed = t ^ xtime(data[r] ^ data[(r + 1) % 4])
        inverse = xtime(xtime(data[r] ^ data[(r + 2) % 4])) ^ t8
        byte = Signal(8, name=f"mix_out{r}")
        m.d.comb += byte.eq(data[r] ^ Mux(last, 0, mixed ^ Mux(decrypt, inverse, 0)))
        result.append(byte)
    return result


def _bytes(word) -> list:
    """The four bytes of a column word, row 0 (the most significant byte) first."""
    return [word[8 * (3 - r):8 * (4 - r)] for r in range(4)]


def _word(data) -> "Value":
    return Cat(*reversed(list(data)))


class CompactAES(AESCipher):
    """AES-128/192/256 encryption and decryption (FIPS-197) on a 32-bit datapath.

    Each block on ``input`` is encrypted or decrypted, as its ``decrypt`` bit asks, under the last
    key loaded on ``key``. The core holds one block at a time. Four block RAMs hold the S-box and
    its inverse and serve both the state and the key schedule; the round keys are computed on the
    fly, one 32-bit word per cycle, so a key costs no storage beyond a few registers (see
    :mod:`cipher_cores.cores.aes.compact` and :mod:`cipher_cores.cores.aes.compact_key`).

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    decrypt : :class:`bool`
        Whether the core decrypts (the inverse S-box, InvMixColumns and the backward key
        schedule, about a quarter of the logic); without it every block is encrypted, whatever
        its ``decrypt`` bit says, with the same cycle counts.

    Members
    -------
    key : ``In(stream.Signature(unsigned(key_bits)))``
        A key, ``int.from_bytes(fips197_key_bytes, "big")``.
    input : ``In(stream.Signature(BlockRequest(128)))``
        A block, ``int.from_bytes(fips197_block_bytes, "big")``, and its direction.
    output : ``Out(stream.Signature(unsigned(128)))``
        The result, in the same byte order.

    Timing
    ------
    With Nr = 10, 12, 14 rounds and a key-schedule ring of L = 4, 8, 8 words for 128-, 192- and
    256-bit keys, a block takes a first round of L + 1 cycles (AddRoundKey, one column per cycle,
    while the key schedule's ring is brought to the block's first round key) and Nr rounds of 5
    cycles (four columns and a SubWord look-up for the key schedule). All counts are clock edges,
    the same for every key, block and direction, with ``output.ready`` held high:

    * *latency*: L + 2 + 5·Nr edges (56, 70, 80) from the edge where a block transfers in to the
      edge where its result transfers out;
    * *initiation interval*: the same: a new block is accepted on the edge where the previous
      result transfers out;
    * *key load*: L + 2 + 5·Nr edges (56, 70, 80; AES-192 three more: 73) from the key transfer
      to the first edge a block can transfer: the key schedule runs forward once to its last
      round key, which decryption starts from.

    ``key.ready`` is high only when no block is in the core. A key waiting on ``key`` goes before
    any further block: while ``key.valid`` is high, ``input.ready`` stays low. After reset no key
    is loaded and ``input.ready`` stays low until one is.
    """
    def __init__(self, key_bits: int = 128, *, decrypt: bool = True):
        super().__init__(key_bits, decrypt=decrypt)
        plan = ring_plan(key_bits)
        self._ring_length, self._half_step = plan.length, plan.half_step

    @property
    def block_cycles(self) -> int:
        """Cycles from a block's transfer to its result: L + 1 + 5·Nr."""
        return self._ring_length + 1 + ROUND_CYCLES * self.rounds

    @property
    def latency(self) -> int:
        return self.block_cycles + 1

    @property
    def initiation_interval(self) -> int:
        return self.block_cycles + 1

    @property
    def key_load_cycles(self) -> int:
        return self.block_cycles + 1 + (3 if self._half_step else 0)

    def elaborate(self, platform):
        m = Module()
        nr, length = self.rounds, self._ring_length
        request = self.input.payload

        m.submodules.control = control = Handshake()
        control.connect_streams(m, self)
        m.submodules.key_ring = key_ring = KeyRing(self._key_bits)

        # Control: rnd counts rounds (0..Nr), q the cycles of a round (0..L in round 0, 0..4 in
        # the others); ``half`` marks the three cycles that complete an AES-192 key's position
        # 0 after a key load.
        q = Signal(range(max(length, ROUND_CYCLES - 1) + 1))
        rnd = Signal(range(nr + 1))
        half = Signal()
        decrypting = Signal()       # the direction of the block in the core (or of the last one)
        same = Signal()             # that block goes the same way as the one before it
        first = Signal()
        last_cycle = Signal()
        m.d.comb += [
            first.eq(rnd == 0),
            last_cycle.eq(Mux(first, q == length, q == ROUND_CYCLES - 1)),
            control.key_done.eq(~half & (rnd == nr) & last_cycle),
            control.block_done.eq((rnd == nr) & last_cycle),
        ]
        with m.If(control.load_key):
            # The expansion leaves the ring at position Nr, where an encryption would have.
            m.d.sync += [q.eq(1 if self._half_step else 0), rnd.eq(0),
                         half.eq(self._half_step), decrypting.eq(0)]
        with m.Elif(control.load_block):
            block_decrypt = request.decrypt if self._decrypt else 0
            m.d.sync += [q.eq(0), rnd.eq(0), same.eq(block_decrypt == decrypting),
                         decrypting.eq(block_decrypt)]
        with m.Elif(control.advancing):
            with m.If(half):
                m.d.sync += q.eq(q + 1)
                with m.If(q == 3):
                    m.d.sync += [half.eq(0), q.eq(0)]
            with m.Elif(last_cycle):
                m.d.sync += [q.eq(0), rnd.eq(rnd + 1)]
            with m.Else():
                m.d.sync += q.eq(q + 1)

        # Key schedule. In round 0 the ring turns L times, XORed with delta if the block goes
        # the same way as the one before it, unchanged otherwise; then one step per round.
        rotating = Signal()
        m.d.comb += rotating.eq(control.advancing & Mux(half, q != 1,
                                                         Mux(first, q != length, q < 4)))
        m.d.comb += [
            key_ring.key.eq(self.key.payload),
            key_ring.load.eq(control.load_key),
            key_ring.rotate.eq(rotating),
            key_ring.restore.eq(first & ~half),
            key_ring.xor_delta.eq(control.running & same),
            key_ring.delta_rotate.eq(rotating & ~half & (
                first | (control.expanding & (rnd > nr - length // 4)))),
            key_ring.delta_accumulate.eq(control.expanding),
            key_ring.backward.eq(control.running & decrypting),
            key_ring.round.eq(rnd),
            key_ring.column.eq(q[:2]),
            key_ring.half.eq(half),
        ]
        round_key = key_ring.round_key

        # State: a ring of four column words P0..P3, turning towards P0; the tail is P3. In
        # round 0 it turns in the last four cycles, taking AddRoundKey at the tail; in the other
        # rounds it turns on every cycle and from the second on the tail takes the new column.
        ring = [Signal(32, name=f"P{p}", reset_less=True) for p in range(4)]
        side = [Signal(32, name=f"side{k}", reset_less=True) for k in range(2)]
        sources = {**{f"P{p}": word for p, word in enumerate(ring)},
                   **{f"side{k}": word for k, word in enumerate(side)}}
        turning = Signal()
        writing = Signal()
        m.d.comb += [
            turning.eq(control.running & (~first | (q >= length - 3))),
            writing.eq(control.running & ~first & (q != 0)),
        ]

        # The S-box block RAMs: row r's byte of the state column, or byte r of the key
        # schedule's SubWord input.
        reading = Signal()
        m.d.comb += reading.eq(control.running & ~first & (q < 4))
        tables = list(SBOX) + list(INV_SBOX) if self._decrypt else list(SBOX)
        looked_up = []
        for row in range(4):
            source = self._diagonal_mux(m, row, sources, decrypting, q[:2])
            table = memory.Memory(shape=unsigned(8), depth=len(tables), init=tables,
                                  attrs={"ram_style": "block"})
            m.submodules[f"sbox{row}"] = table
            port = table.read_port(domain="sync", transparent_for=())
            m.d.comb += [
                port.addr.eq(Mux(reading, Cat(source, decrypting),
                                 Cat(_bytes(key_ring.sub_address)[row], 0))[:len(port.addr)]),
                port.en.eq(1),
            ]
            looked_up.append(port.data)
        m.d.comb += key_ring.sub.eq(_word(looked_up))

        # The round function on one column: in decryption AddRoundKey comes before
        # InvMixColumns, in encryption after MixColumns (at the ring's tail).
        keyed = [byte ^ Mux(decrypting, key, 0)
                 for byte, key in zip(looked_up, _bytes(round_key))]
        column = Signal(32)
        m.d.comb += column.eq(_word(mix_column(m, keyed, decrypting, rnd == nr)))
        tail_key = Signal(32)
        m.d.comb += tail_key.eq(Mux(Mux(first, turning, writing & ~decrypting), round_key, 0))

        blocks = [request.block.word_select(3 - p, 32) for p in range(4)]
        with m.If(control.load_block):
            m.d.sync += [word.eq(block) for word, block in zip(ring, blocks)]
        with m.Elif(turning):
            m.d.sync += [a.eq(b) for a, b in zip(ring, ring[1:])]
            m.d.sync += ring[3].eq(Mux(writing, column, ring[0]) ^ tail_key)
            m.d.sync += [side[0].eq(ring[0]), side[1].eq(side[0])]

        m.d.comb += self.output.payload.eq(Cat(*reversed(ring)))
        return m

    @staticmethod
    def _diagonal_mux(m, row, sources, decrypting, cycle):
        """Row ``row``'s byte of the column being read, selected as :func:`diagonal_source`
        says for each direction and cycle."""
        cells = {(decrypt, c): diagonal_source(row, bool(decrypt), c)
                 for decrypt in (0, 1) for c in range(4)}
        names = list(cells.values())
        common = max(sorted(set(names)), key=names.count)
        value = Signal(8, name=f"read{row}")
        m.d.comb += value.eq(_bytes(sources[common])[row])
        if len(set(names)) > 1:
            with m.Switch(Cat(cycle, decrypting)):
                for name in sorted(set(names) - {common}):
                    cases = [c | decrypt << 2 for (decrypt, c), n in cells.items() if n == name]
                    with m.Case(*cases):
                        m.d.comb += value.eq(_bytes(sources[name])[row])
        return value
