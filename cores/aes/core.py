"""The round-based AES core: one full round per clock cycle, both directions in one datapath."""

from amaranth.hdl import C, Module, Mux, Signal

from ..cipher import Handshake
from .base import AESCipher
from .key_schedule import KeySchedule
from .round import RoundFunction
from .substitution import SubstitutedRegister, check_sbox
from .transforms import KEY_WORDS


__all__ = ["AES"]


class AES(AESCipher):
    """AES-128/192/256 encryption and decryption (FIPS-197), one round per clock cycle.

    Each block on ``input`` is encrypted or decrypted, as its ``decrypt`` bit asks, under the last
    key loaded on ``key``. The datapath has 16 S-boxes for the state, each serving SubBytes and
    InvSubBytes, and 4 for the key schedule. Round keys are computed on the fly, in parallel with
    the round, one round ahead, so each round reads its key from a register: forwards for
    encryption, and backwards for decryption from the end of the schedule, which the core derives
    once when a key is loaded. No round-key table is stored.

    Parameters
    ----------
    key_bits : :class:`int`
        128, 192 or 256.
    sbox : :class:`str`
        Where the S-boxes live: ``"bram"`` (the default; 16 block RAMs of 512x8 for the state and 4
        of 256x8 for the key schedule, each addressed by the next value of the register it reads,
        so no cycle is added), ``"logic"`` (look-up tables in LUTs) or ``"boolean"`` (each S-box
        computed in XOR/AND logic by inversion in a tower field, one inverter serving both
        directions; see :class:`~cipher_cores.cores.aes.boolean_sbox.BooleanSBox`).
    decrypt : :class:`bool`
        Whether the core decrypts (the default). Without it (``decrypt=False``: for CTR, GCM
        and the other modes that only encrypt) every block is encrypted whatever its
        ``decrypt`` bit says: InvSubBytes, InvMixColumns and the backward key schedule are left
        out, with the same cycle counts.

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
    Nr is 10, 12 or 14 for 128-, 192- and 256-bit keys. All counts are clock edges, the same for
    every key, block and direction:

    * *latency*: Nr + 1 edges (11, 13, 15) from the edge where a block transfers in to the edge
      where its result transfers out, if ``output.ready`` is high;
    * *initiation interval*: Nr + 1 edges: a new block is accepted on the edge where the previous
      result transfers out, so back-to-back blocks leave every Nr + 1 cycles;
    * *key load*: Nr + 1 edges from the key transfer to the first edge a block can transfer (Nr
      forward key-schedule steps to find the last round key, then the core is idle).

    ``key.ready`` is high only when no block is in the core. A key waiting on ``key`` goes before
    any further block: while ``key.valid`` is high, ``input.ready`` stays low. After reset no key
    is loaded and ``input.ready`` stays low until one is.
    """
    def __init__(self, key_bits: int = 128, *, sbox: str = "bram", decrypt: bool = True):
        self._sbox = check_sbox(sbox)
        super().__init__(key_bits, decrypt=decrypt)

    @property
    def sbox(self) -> str:
        return self._sbox

    @property
    def latency(self) -> int:
        return self.rounds + 1

    @property
    def initiation_interval(self) -> int:
        return self.rounds + 1

    @property
    def key_load_cycles(self) -> int:
        return self.rounds + 1

    def elaborate(self, platform):
        m = Module()
        nr, key_width = self.rounds, 32 * KEY_WORDS[self._key_bits]

        m.submodules.state = state = SubstitutedRegister(sbox=self._sbox)
        m.submodules.key_schedule = key_schedule = KeySchedule(self._key_bits, sbox=self._sbox)
        m.submodules.round = round_function = RoundFunction()

        # During round r the key-schedule register holds window r (encryption) or r - 1
        # (decryption) and so round key r comes straight from a register, while the schedule
        # computes the window of the next round beside the round, not in front of it. A block
        # starts from these, captured once when the key is loaded:
        first_round_key = Signal(128)        # round key 0 (the key's first 16 bytes)
        last_round_key = Signal(128)         # round key Nr
        second_window = Signal(key_width)    # window 1, where encryption rounds start
        penultimate_window = Signal(key_width)   # window Nr - 1, where decryption rounds start

        # Encryption only: a constant direction, from which synthesis removes the inverse paths.
        decrypting = state.q_inverse if self._decrypt else C(0, 1)
        block_decrypt = self.input.payload.decrypt if self._decrypt else C(0, 1)
        step = key_schedule.q_step           # the step that turns this window into the next

        last_round = Signal()
        m.d.comb += [
            last_round.eq(Mux(decrypting, step == 0, step == nr + 1)),
            round_function.substituted.eq(state.substituted),
            round_function.round_key.eq(key_schedule.q[-128:]),
            round_function.decrypt.eq(decrypting),
            round_function.last.eq(last_round),
        ]

        # The shared handshake decides what happens on each edge; the datapath follows its strobes.
        m.submodules.control = control = Handshake()
        control.connect_streams(m, self)
        m.d.comb += [
            control.key_done.eq(step == nr),
            control.block_done.eq(last_round),
        ]
        request = self.input.payload

        with m.If(control.load_key):
            m.d.comb += [
                key_schedule.d.eq(self.key.payload),
                key_schedule.d_step.eq(1),
                key_schedule.d_backward.eq(0),
                key_schedule.en.eq(1),
            ]
            m.d.sync += first_round_key.eq(self.key.payload[-128:])

        with m.If(control.expanding):
            # Forward through the whole schedule once, keeping what blocks start from.
            m.d.comb += [
                key_schedule.d.eq(key_schedule.next_window),
                key_schedule.d_step.eq(step + 1),
                key_schedule.d_backward.eq(0),
                key_schedule.en.eq(1),
            ]
            with m.If(step == 1):
                m.d.sync += second_window.eq(key_schedule.next_window)
            with m.If(step == nr - 1):
                m.d.sync += penultimate_window.eq(key_schedule.next_window)
            with m.If(step == nr):
                m.d.sync += last_round_key.eq(key_schedule.next_window[-128:])

        with m.If(control.running):
            m.d.comb += [
                state.d.eq(round_function.result),
                state.d_inverse.eq(decrypting),
                state.en.eq(1),
                key_schedule.d.eq(key_schedule.next_window),
                key_schedule.d_step.eq(Mux(decrypting, step - 1, step + 1)),
                key_schedule.d_backward.eq(decrypting),
                key_schedule.en.eq(1),
            ]

        with m.If(control.load_block):
            # In "Idle", or in "Output" on the edge where the result leaves: the state register
            # is free for the next block on that same edge.
            m.d.comb += [
                state.d.eq(request.block ^ Mux(block_decrypt, last_round_key,
                                               first_round_key)),
                state.d_inverse.eq(block_decrypt),
                state.en.eq(1),
                key_schedule.d.eq(Mux(block_decrypt, penultimate_window, second_window)),
                key_schedule.d_step.eq(Mux(block_decrypt, nr - 1, 2)),
                key_schedule.d_backward.eq(block_decrypt),
                key_schedule.en.eq(1),
            ]

        m.d.comb += self.output.payload.eq(state.q)

        return m
