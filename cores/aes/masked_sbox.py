"""A first-order masked AES S-box: domain-oriented masking (DOM-indep) on a tower field.

Source: H. Gross, S. Mangard, T. Korak, "Domain-Oriented Masking: Compact Masked Hardware
Implementations with Arbitrary Protection Order" (TIS 2016) and "An Efficient Side-Channel
Protected AES Implementation with Arbitrary Protection Order" (CT-RSA 2017). The byte ``x`` is
held as two shares, ``x = x0 ^ x1``, share ``i`` in *domain* ``i``. Linear steps act on each share
alone; a product ``a * b`` of two independently shared values is computed by the DOM-indep
multiplier

    c0 = [a0 b0] ^ [a0 b1 ^ z],    c1 = [a1 b1] ^ [a1 b0 ^ z],

where ``[.]`` is a register and ``z`` is fresh randomness: a cross-domain product is remasked and
registered before it meets its domain's other term, so glitches cannot combine both shares.

The inverse in GF(2^8) is computed in the tower field of :mod:`.boolean_sbox` (GF(2^8) over
GF(2^4) over GF(2^2), the basis change derived there from the field definitions):

    a = a1 t + a0,  d = nu a1^2 + a0^2 + a1 a0,  a^-1 = (a1 d^-1) t + (a1 + a0) d^-1

and d^-1 in GF(2^4) the same way one level down, where the inverse in GF(2^2) is the square
(linear). The input mapped into the tower field, ``a``, is stage 0 of :class:`MaskedSBox`; the
four non-linear steps are its stages 1 to 4:

* stage 0: ``a``, each share mapped into the tower basis (no random bits);
* stage 1: the four terms of ``a1 * a0`` (GF(2^4)), ``nu a1^2 + a0^2``, ``a`` (4 bits);
* stage 2: the terms of ``d1 * d0`` (GF(2^2)), ``nu d1^2 + d0^2``, ``d``, ``a`` (2 bits);
* stage 3: the terms of ``e^-1 * d1`` and ``e^-1 * (d1 + d0)`` (GF(2^2), ``e^-1 = e^2``),
  ``a`` (2 + 2 bits);
* stage 4: the terms of ``d^-1 * a1`` and ``d^-1 * (a1 + a0)`` (GF(2^4)) (4 + 4 bits).

18 fresh bits per S-box, as in the paper's first-order S-box. The outputs of stage 4 are summed
per domain and mapped back through the (linear) inverse basis change and the affine map of
FIPS-197, the constant {63} added to share 0 only, and the consumer registers them (the state
or key register of a core). Stage 0 is there for glitches: without it the combinational cone of
a stage-1 cross-domain product ``a1_0 * a0_1`` would read all bits of both input shares.
The multiplier inputs are independently shared at each stage: the masks of ``a1`` and ``a0`` are
disjoint halves of one uniform mask, and ``d``, ``e^-1`` and ``d^-1`` carry the fresh ``z`` of the
stage that produced them.

:func:`masked_sbox` is the Python model of the same computation, share by share; with all-zero
randomness (or shares ``(x, 0)``) it still computes ``SBOX[x]``, unprotected.
"""

import functools

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .boolean_sbox import _apply, _compose, _rows, tower_constants, tower_isomorphism, tower_mul
from .sbox import affine


__all__ = ["SBOX_RANDOM_BITS", "STAGES", "RANDOM_SLICES", "dom_mul", "masked_sbox", "MaskedSBox"]


#: Fresh random bits per S-box evaluation.
SBOX_RANDOM_BITS = 18
#: Register stages: stage 0 holds the input in the tower basis, stages 1..4 the products.
STAGES = 5
#: Where each stage's bits sit in the 18-bit ``random`` input: ``(start, width)`` for stages 1..4;
#: stage 3 and 4 each take two ``z`` (one per multiplier), low one first.
RANDOM_SLICES = ((0, 4), (4, 2), (6, 4), (10, 8))


# The linear maps, as tuples of images of the input bits (derived, never typed in).

@functools.cache
def _maps() -> dict:
    to_aes, to_tower = tower_isomorphism()
    linear = tuple(affine(1 << i) ^ affine(0) for i in range(8))
    nu = tower_constants()

    def norm(level):
        # x = x1 t + x0 -> nu x1^2 + x0^2, linear over GF(2) (squaring is).
        half = 1 << (level - 1)

        def f(x):
            x1, x0 = x >> half, x & ((1 << half) - 1)
            return (tower_mul(nu[level], tower_mul(x1, x1, level - 1), level - 1)
                    ^ tower_mul(x0, x0, level - 1))
        return tuple(f(1 << i) for i in range(2 * half))

    return {
        "in": to_tower,
        "out": _compose(linear, to_aes),
        "norm8": norm(3),
        "norm4": norm(2),
        "square2": tuple(tower_mul(1 << i, 1 << i, 1) for i in range(2)),
    }


# The Python model

def dom_mul(a: tuple, b: tuple, z: int, level: int) -> tuple:
    """DOM-indep product of the sharings ``a = (a0, a1)`` and ``b`` in tower level ``level``, with
    fresh ``z``: the shares ``(c0, c1)`` of ``a * b``."""
    def mul(x, y):
        return tower_mul(x, y, level)
    return (mul(a[0], b[0]) ^ (mul(a[0], b[1]) ^ z), mul(a[1], b[1]) ^ (mul(a[1], b[0]) ^ z))


def _halves(shares, half):
    mask = (1 << half) - 1
    return tuple(s >> half for s in shares), tuple(s & mask for s in shares)


def _random_fields(randomness: int) -> list:
    return [(randomness >> start) & ((1 << width) - 1) for start, width in RANDOM_SLICES]


def masked_sbox(x0: int, x1: int, randomness: int = 0) -> tuple:
    """The shares ``(y0, y1)`` of ``SBOX[x0 ^ x1]``, computed as :class:`MaskedSBox` computes them,
    with the 18 bits ``randomness`` laid out as in :data:`RANDOM_SLICES`."""
    maps = _maps()
    z1, z2, z3, z4 = _random_fields(randomness)
    # Stage 1: into the tower field, the GF(2^4) product a1 * a0.
    a = tuple(_apply(maps["in"], s) for s in (x0, x1))
    a1, a0 = _halves(a, 4)
    p = dom_mul(a1, a0, z1, 2)
    d = tuple(p[i] ^ _apply(maps["norm8"], a[i]) for i in range(2))
    # Stage 2: the GF(2^4) inverse's norm, d1 * d0 in GF(2^2).
    d1, d0 = _halves(d, 2)
    q = dom_mul(d1, d0, z2, 1)
    e = tuple(q[i] ^ _apply(maps["norm4"], d[i]) for i in range(2))
    # Stage 3: e^-1 = e^2, then d^-1 = (e^-1 d1) y + e^-1 (d1 + d0).
    e_inverse = tuple(_apply(maps["square2"], s) for s in e)
    high = dom_mul(e_inverse, d1, z3 & 3, 1)
    low = dom_mul(e_inverse, (d1[0] ^ d0[0], d1[1] ^ d0[1]), z3 >> 2, 1)
    d_inverse = tuple((high[i] << 2) | low[i] for i in range(2))
    # Stage 4: a^-1 = (d^-1 a1) t + d^-1 (a1 + a0), then back to the AES field and affine.
    high = dom_mul(d_inverse, a1, z4 & 15, 2)
    low = dom_mul(d_inverse, (a1[0] ^ a0[0], a1[1] ^ a0[1]), z4 >> 4, 2)
    inverse = tuple((high[i] << 4) | low[i] for i in range(2))
    y = [_apply(maps["out"], s) for s in inverse]
    return y[0] ^ affine(0), y[1]


# The hardware

def linear_map(columns, value, width: int):
    """The GF(2)-linear map ``columns`` (images of the input bits) of ``value``, ``width`` bits,
    as XORs."""
    bits = []
    for row in _rows(columns, width):
        terms = [value[i] for i in range(len(columns)) if (row >> i) & 1]
        if not terms:
            bits.append(Const(0, 1))
            continue
        expression = terms[0]
        for term in terms[1:]:
            expression = expression ^ term
        bits.append(expression)
    return Cat(*bits)


def _product_terms(level):
    """For each output bit of a tower-level ``level`` product, the pairs ``(i, k)`` of input bits
    whose ANDs it is the XOR of (the bilinear form, from the field definition)."""
    width = 1 << level
    return [[(i, k) for i in range(width) for k in range(width)
             if (tower_mul(1 << i, 1 << k, level) >> j) & 1] for j in range(width)]


def field_mul(a, b, level):
    """The product of two tower-level ``level`` values as an AND-XOR network."""
    bits = []
    for terms in _product_terms(level):
        expression = a[terms[0][0]] & b[terms[0][1]]
        for i, k in terms[1:]:
            expression = expression ^ (a[i] & b[k])
        bits.append(expression)
    return Cat(*bits)


class MaskedSBox(wiring.Component):
    """The DOM-indep first-order masked AES S-box: two shares in, two shares out, five register
    stages, 18 fresh random bits per evaluation.

    Each stage's registers load on an edge where its bit of ``advance`` is high and hold
    otherwise, so a core can run the stages one per cycle (taking each stage's random bits on its
    own edge) and stall them. An input held for the edge with ``advance`` = 1 (stage 0 takes it),
    then edges with ``advance`` = 2, 4, 8, 16 gives its S-box value on ``o0 ^ o1`` after the fifth
    edge, combinationally from the stage-4 registers.

    Members
    -------
    i0, i1 : ``In(8)``
        The shares of the input byte (bit 0 the coefficient of x^0, as in FIPS-197).
    random : ``In(18)``
        Fresh bits, each stage reading its slice of :data:`RANDOM_SLICES` on the edge it loads.
    advance : ``In(5)``
        Bit ``k`` high: stage ``k`` loads on this edge.
    o0, o1 : ``Out(8)``
        The shares of ``SBOX[i0 ^ i1]``, from the stage-4 registers through linear maps only.
    """
    i0: In(8)
    i1: In(8)
    random: In(SBOX_RANDOM_BITS)
    advance: In(STAGES)
    o0: Out(8)
    o1: Out(8)

    def elaborate(self, platform):
        m = Module()
        maps = _maps()
        z = [self.random[start:start + width] for start, width in RANDOM_SLICES]

        def register(stage, name, width, value):
            reg = Signal(width, name=f"s{stage}_{name}")
            with m.If(self.advance[stage]):
                m.d.sync += reg.eq(value)
            return reg

        def dom(stage, name, a, b, z, level):
            """The registered DOM-indep terms of a * b, summed per domain after the register."""
            width = 1 << level
            terms = [register(stage, f"{name}{i}{k}", width, field_mul(a[i], b[k], level)
                              ^ (z if i != k else 0)) for i, k in ((0, 0), (0, 1), (1, 1), (1, 0))]
            return terms[0] ^ terms[1], terms[2] ^ terms[3]

        def shares_of(stage, name, width, values):
            return [register(stage, f"{name}{i}", width, values[i]) for i in range(2)]

        def wire(name, width, value):
            # A named signal for each intermediate (also keeps the simulator's expressions small).
            signal = Signal(width, name=name)
            m.d.comb += signal.eq(value)
            return signal

        def wires(name, width, values):
            return [wire(f"{name}{i}", width, values[i]) for i in range(2)]

        # Stage 0: each share mapped into the tower field and registered, so that no
        # combinational path of a stage-1 cross-domain product reaches both input shares.
        a = shares_of(0, "a", 8, [linear_map(maps["in"], s, 8) for s in (self.i0, self.i1)])
        # Stage 1.
        p = dom(1, "p", [s[4:] for s in a], [s[:4] for s in a], z[0], 2)
        n8 = shares_of(1, "n", 4, [linear_map(maps["norm8"], s, 4) for s in a])
        a_1 = shares_of(1, "a", 8, a)
        d = wires("d", 4, [p[i] ^ n8[i] for i in range(2)])
        # Stage 2.
        q = dom(2, "q", [s[2:] for s in d], [s[:2] for s in d], z[1], 1)
        n4 = shares_of(2, "n", 2, [linear_map(maps["norm4"], s, 2) for s in d])
        d_2 = shares_of(2, "d", 4, d)
        a_2 = shares_of(2, "a", 8, a_1)
        e = wires("e", 2, [q[i] ^ n4[i] for i in range(2)])
        e_inverse = wires("e_inverse", 2, [linear_map(maps["square2"], s, 2) for s in e])
        # Stage 3.
        d_sum = wires("d_sum", 2, [s[2:] ^ s[:2] for s in d_2])
        high = dom(3, "h", e_inverse, [s[2:] for s in d_2], z[2][:2], 1)
        low = dom(3, "l", e_inverse, d_sum, z[2][2:], 1)
        a_3 = shares_of(3, "a", 8, a_2)
        d_inverse = wires("d_inverse", 4, [Cat(low[i], high[i]) for i in range(2)])
        # Stage 4.
        a_sum = wires("a_sum", 4, [s[4:] ^ s[:4] for s in a_3])
        high = dom(4, "h", d_inverse, [s[4:] for s in a_3], z[3][:4], 2)
        low = dom(4, "l", d_inverse, a_sum, z[3][4:], 2)
        inverse = wires("inverse", 8, [Cat(low[i], high[i]) for i in range(2)])
        m.d.comb += [
            self.o0.eq(linear_map(maps["out"], inverse[0], 8) ^ affine(0)),
            self.o1.eq(linear_map(maps["out"], inverse[1], 8)),
        ]
        return m
