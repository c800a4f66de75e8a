"""A pseudo-random number generator for masked cores: the Trivium keystream as a stream of words.

:class:`PRNG` is the gateware; :func:`keystream_bits` and :func:`keystream_words` are its Python
reference model, written from the specification (De Canniere and Preneel, "Trivium
Specifications", eSTREAM, 2005).
"""

from amaranth.hdl import C, Cat, Module, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out


__all__ = ["STATE_BITS", "WARMUP_STEPS", "SEED_BITS", "initial_state", "step",
           "keystream_bits", "keystream_words", "PRNG"]


#: Bits of Trivium's state s1..s288.
STATE_BITS = 288
#: Steps run after seeding before the first output bit (4 x 288).
WARMUP_STEPS = 4 * 288
#: Width of a seed: the 80-bit key (low bits) and the 80-bit IV (high bits).
SEED_BITS = 160


def _check_80(name, value):
    if not isinstance(value, int) or not 0 <= value < 1 << 80:
        raise ValueError(f"{name} must be an integer in 0..2**80-1, not {value!r}")


def initial_state(key: int, iv: int) -> int:
    """Trivium's state after loading ``key`` and ``iv`` (80-bit integers; bit ``i - 1`` is K_i,
    IV_i), as an integer whose bit ``i - 1`` is s_i: (s1..s93) = (K1..K80, 0..0),
    (s94..s177) = (IV1..IV80, 0..0), (s178..s288) = (0..0, 1, 1, 1).

    With the eSTREAM byte convention (bit ``j`` of byte ``n`` is bit ``8n + j``), ``key`` is
    ``int.from_bytes(key_bytes, "little")``."""
    _check_80("key", key)
    _check_80("iv", iv)
    return key | iv << 93 | 0b111 << 285


def _bit(state: int, i: int) -> int:
    return state >> (i - 1) & 1


def step(state: int) -> tuple[int, int]:
    """One Trivium step: returns ``(z, next_state)``."""
    t1 = _bit(state, 66) ^ _bit(state, 93)
    t2 = _bit(state, 162) ^ _bit(state, 177)
    t3 = _bit(state, 243) ^ _bit(state, 288)
    z = t1 ^ t2 ^ t3
    t1 ^= (_bit(state, 91) & _bit(state, 92)) ^ _bit(state, 171)
    t2 ^= (_bit(state, 175) & _bit(state, 176)) ^ _bit(state, 264)
    t3 ^= (_bit(state, 286) & _bit(state, 287)) ^ _bit(state, 69)
    a = (state & ((1 << 92) - 1)) << 1 | t3
    b = ((state >> 93) & ((1 << 83) - 1)) << 1 | t1
    c = ((state >> 177) & ((1 << 110) - 1)) << 1 | t2
    return z, a | b << 93 | c << 177


def keystream_bits(key: int, iv: int, count: int, *, warmup: int = WARMUP_STEPS) -> list:
    """The first ``count`` keystream bits z1, z2, ... after ``warmup`` discarded steps."""
    state = initial_state(key, iv)
    for _ in range(warmup):
        _, state = step(state)
    bits = []
    for _ in range(count):
        z, state = step(state)
        bits.append(z)
    return bits


def warmup_cycles(width: int) -> int:
    """Clock cycles :class:`PRNG` of ``width`` spends warming up: ceil(1152 / width)."""
    return -(-WARMUP_STEPS // width)


def keystream_words(seed: int, width: int, count: int) -> list:
    """The first ``count`` words :class:`PRNG` of ``width`` gives after ``seed`` (key in bits
    0..79, IV in bits 80..159): ``width`` keystream bits each, the earliest in the least
    significant bit, after ``warmup_cycles(width) * width`` warm-up steps."""
    key, iv = seed & ((1 << 80) - 1), seed >> 80
    bits = keystream_bits(key, iv, count * width, warmup=warmup_cycles(width) * width)
    return [sum(bit << j for j, bit in enumerate(bits[n * width:(n + 1) * width]))
            for n in range(count)]


class PRNG(wiring.Component):
    """A pseudo-random number generator: the keystream of the Trivium stream cipher (De Canniere
    and Preneel, eSTREAM portfolio, ISO/IEC 29192-3), ``width`` bits per word.

    It is a PRNG, not a true random number generator: its output is only as unpredictable as its
    seed. Seed it from a true random source (and reseed it) where the masking it feeds matters;
    seeded with a constant, every run repeats the same "random" bits. Each word is ``width``
    consecutive keystream bits, computed by ``width`` Trivium steps unrolled in one clock cycle
    (up to 64 steps are independent, so up to 64 the logic depth is that of one step; wider
    words chain steps).

    Parameters
    ----------
    width : :class:`int`
        Bits per word, 1..288.

    Members
    -------
    seed : ``In(stream.Signature(unsigned(160)))``
        A seed: the 80-bit Trivium key in bits 0..79 and the 80-bit IV in bits 80..159 (bit
        ``i - 1`` of each is K_i / IV_i of the specification). ``seed.ready`` is always high: a
        seed transfer restarts the generator at any time.
    random : ``Out(stream.Signature(unsigned(width)))``
        The words: ``valid`` is low after reset (until the first seed) and for
        ``ceil(1152 / width)`` cycles after each seed transfer (the warm-up), then high; the
        payload holds until its transfer. Bit 0 is the earliest keystream bit of the word.
    """
    def __init__(self, width: int = 64):
        if not isinstance(width, int) or isinstance(width, bool):
            raise TypeError(f"width must be an integer in 1..288, not {width!r}")
        if not 1 <= width <= STATE_BITS:
            raise ValueError(f"width must be an integer in 1..288, not {width!r}")
        self._width = width
        super().__init__({
            "seed": In(stream.Signature(unsigned(SEED_BITS))),
            "random": Out(stream.Signature(unsigned(width))),
        })

    @property
    def width(self) -> int:
        return self._width

    @property
    def warmup_cycles(self) -> int:
        return warmup_cycles(self._width)

    def elaborate(self, platform):
        m = Module()
        width = self._width
        state = Signal(STATE_BITS, reset_less=True)
        seeded = Signal()
        warming = Signal(range(self.warmup_cycles + 1))

        # `width` steps unrolled on a list of bits: s[i - 1] is s_i.
        s = [state[i] for i in range(STATE_BITS)]
        out = []
        for _ in range(width):
            t1 = s[65] ^ s[92]
            t2 = s[161] ^ s[176]
            t3 = s[242] ^ s[287]
            out.append(t1 ^ t2 ^ t3)
            t1 = t1 ^ (s[90] & s[91]) ^ s[170]
            t2 = t2 ^ (s[174] & s[175]) ^ s[263]
            t3 = t3 ^ (s[285] & s[286]) ^ s[68]
            s = [t3] + s[0:92] + [t1] + s[93:176] + [t2] + s[177:287]
        stepped = Cat(*s)

        m.d.comb += [
            self.seed.ready.eq(1),
            self.random.payload.eq(Cat(*out)),
            self.random.valid.eq(seeded & (warming == 0)),
        ]
        key, iv = self.seed.payload[:80], self.seed.payload[80:]
        with m.If(self.seed.valid):
            m.d.sync += [
                state.eq(Cat(key, C(0, 13), iv, C(0, 112), C(0b111, 3))),
                seeded.eq(1),
                warming.eq(self.warmup_cycles),
            ]
        with m.Elif(warming != 0):
            m.d.sync += [state.eq(stepped), warming.eq(warming - 1)]
        with m.Elif(self.random.valid & self.random.ready):
            m.d.sync += state.eq(stepped)
        return m
