"""The AES S-box as Boolean logic: the inverse in a tower field, shared by both directions.

FIPS-197 5.1.1 defines ``S(x) = affine(x^-1)`` in GF(2^8) modulo {11b}, so ``S^-1(y) =
(affine^-1(y))^-1``: both directions need the same inverter, with linear maps around it. The
inverter is cheap in a *tower field*, where GF(2^8) is built by degree-2 extensions of GF(2):

    GF(2^2) = GF(2)[w] / (w^2 + w + 1)
    GF(2^4) = GF(2^2)[y] / (y^2 + y + nu_2)
    GF(2^8) = GF(2^4)[z] / (z^2 + z + nu_3)

each ``nu_k`` being the smallest element of the level below that makes the polynomial irreducible.
An element of level ``k`` is ``a1 * t + a0`` (``a1`` in the high half of its bits), and

    (a1 t + a0)^-1 = (a1 d^-1) t + (a0 + a1) d^-1,   d = nu a1^2 + a1 a0 + a0^2,

reduces an inverse at level ``k`` to one at level ``k - 1`` and three multiplications; in GF(2^2)
the inverse is the square, a bit permutation plus an XOR.

The change of basis between the AES field and the tower field is derived here, not typed in: for
each level a root of ``t^2 + t + nu_k`` (``nu_k`` mapped into the AES field) is searched for in
GF(2^8) modulo {11b}; the products of these roots are the images of the tower basis, and the map
is checked to be bijective and to preserve products (:func:`tower_isomorphism`).
"""

import functools

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .gf import gf_mul
from .sbox import affine


__all__ = ["TOWER_LEVELS", "tower_constants", "tower_mul", "tower_inverse", "tower_isomorphism",
           "tower_sbox", "BooleanSBox"]


#: GF(2^8) is GF(2) extended three times by degree 2.
TOWER_LEVELS = 3


def _mul(constants, level, a, b):
    if level == 0:
        return a & b
    half = 1 << (level - 1)
    mask = (1 << half) - 1
    a1, a0, b1, b0 = a >> half, a & mask, b >> half, b & mask
    high = _mul(constants, level - 1, a1, b1)
    low = _mul(constants, level - 1, a0, b0)
    cross = _mul(constants, level - 1, a1 ^ a0, b1 ^ b0)
    return ((cross ^ low) << half) | (_mul(constants, level - 1, constants[level], high) ^ low)


def _has_root(constants, level, nu):
    """Whether t^2 + t + nu has a root in tower level ``level``."""
    return any(_mul(constants, level, t, t) ^ t == nu for t in range(1 << (1 << level)))


@functools.cache
def tower_constants() -> tuple:
    """``(None, nu_1, nu_2, nu_3)``: the smallest constants making each extension a field."""
    constants = [None]
    for level in range(1, TOWER_LEVELS + 1):
        nu = next(nu for nu in range(1, 1 << (1 << (level - 1)))
                  if not _has_root(constants, level - 1, nu))
        constants.append(nu)
    return tuple(constants)


def tower_mul(a: int, b: int, level: int = TOWER_LEVELS) -> int:
    """The product of two elements of tower level ``level`` (GF(2^(2^level)))."""
    return _mul(tower_constants(), level, a, b)


def tower_inverse(a: int, level: int = TOWER_LEVELS) -> int:
    """The inverse in tower level ``level`` by the recursive formula the hardware uses; 0 to 0."""
    if level == 1:
        return tower_mul(a, a, 1)
    half = 1 << (level - 1)
    a1, a0 = a >> half, a & ((1 << half) - 1)
    nu = tower_constants()[level]
    d = (tower_mul(nu, tower_mul(a1, a1, level - 1), level - 1) ^ tower_mul(a1, a0, level - 1)
         ^ tower_mul(a0, a0, level - 1))
    d_inverse = tower_inverse(d, level - 1)
    return (tower_mul(a1, d_inverse, level - 1) << half) | tower_mul(a1 ^ a0, d_inverse, level - 1)


# Linear maps over GF(2) on bytes, as the tuple of the images of bits 0, 1, ...

def _apply(columns, x):
    result = 0
    for i, column in enumerate(columns):
        if (x >> i) & 1:
            result ^= column
    return result


def _compose(outer, inner):
    return tuple(_apply(outer, column) for column in inner)


def _invert(columns):
    images = {_apply(columns, x): x for x in range(1 << len(columns))}
    if len(images) != 1 << len(columns):
        raise ArithmeticError("linear map is not invertible")
    return tuple(images[1 << i] for i in range(len(columns)))


def _rows(columns, width):
    """For each output bit, the mask of input bits it is the XOR of."""
    return [sum(((column >> j) & 1) << i for i, column in enumerate(columns))
            for j in range(width)]


@functools.cache
def tower_isomorphism() -> tuple:
    """``(to_aes, to_tower)``: the change of basis between the tower field and GF(2^8) mod {11b}.

    ``to_aes`` is the linear map (images of tower bits 0..7) that is a field isomorphism from the
    tower field onto the AES field; ``to_tower`` is its inverse. Raises :exc:`ArithmeticError` if
    the derived map is not an isomorphism.
    """
    constants = tower_constants()
    basis = [1]                          # the AES images of the tower basis of level 0
    for level in range(1, TOWER_LEVELS + 1):
        nu = _apply(basis, constants[level])
        root = next(r for r in range(256) if gf_mul(r, r) ^ r == nu)
        basis = basis + [gf_mul(element, root) for element in basis]
    to_aes = tuple(basis)
    to_tower = _invert(to_aes)
    # The map is additive by construction; it preserves products if it does on the basis.
    for i in range(8):
        for j in range(8):
            if _apply(to_aes, tower_mul(1 << i, 1 << j)) != gf_mul(to_aes[i], to_aes[j]):
                raise ArithmeticError("tower basis change does not preserve products")
    return to_aes, to_tower


@functools.cache
def _sbox_maps() -> dict:
    """The affine maps around the inverter, each as ``(columns, constant)``."""
    to_aes, to_tower = tower_isomorphism()
    linear = tuple(affine(1 << i) ^ affine(0) for i in range(8))
    assert all(_apply(linear, x) ^ affine(0) == affine(x) for x in range(256))
    linear_inverse = _invert(linear)
    into_inverse = _compose(to_tower, linear_inverse)
    return {
        # forward: S(x) = A M inv(T x) + c; inverse: S^-1(x) = M inv(T A^-1 (x + c)).
        "forward_in": (to_tower, 0),
        "inverse_in": (into_inverse, _apply(into_inverse, affine(0))),
        "forward_out": (_compose(linear, to_aes), affine(0)),
        "inverse_out": (to_aes, 0),
    }


def tower_sbox(x: int, inverse: bool = False) -> int:
    """SubBytes (or InvSubBytes) of ``x`` computed the way :class:`BooleanSBox` computes it."""
    maps = _sbox_maps()
    into, out = ("inverse_in", "inverse_out") if inverse else ("forward_in", "forward_out")
    columns, constant = maps[into]
    t = tower_inverse(_apply(columns, x) ^ constant)
    columns, constant = maps[out]
    return _apply(columns, t) ^ constant


class BooleanSBox(wiring.Component):
    """The AES S-box (and optionally its inverse) as XOR/AND logic, combinational.

    The input is mapped into the tower field (through the inverse affine map when ``inverse`` is
    high), inverted there, and mapped back (through the affine map when ``inverse`` is low): one
    inverter serves both directions, with multiplexers only on its input and output.

    Parameters
    ----------
    invertible : :class:`bool`
        ``True`` (the default) for both SubBytes and InvSubBytes chosen by ``inverse``; ``False``
        for SubBytes only, with no ``inverse`` port.

    Members
    -------
    i : ``In(8)``
        The input byte (bit 0 is the coefficient of x^0, as in FIPS-197).
    inverse : ``In(1)``
        0 for SubBytes, 1 for InvSubBytes (only if ``invertible``).
    o : ``Out(8)``
        ``SBOX[i]`` or ``INV_SBOX[i]``, combinationally.
    """
    def __init__(self, *, invertible: bool = True):
        if not isinstance(invertible, bool):
            raise TypeError(f"invertible must be a bool, not {invertible!r}")
        self._invertible = invertible
        members = {"i": In(8), "o": Out(8)}
        if invertible:
            members["inverse"] = In(1)
        super().__init__(members)

    @property
    def invertible(self) -> bool:
        return self._invertible

    def elaborate(self, platform):
        m = Module()
        constants = tower_constants()
        maps = _sbox_maps()

        def linear(name, columns, value, constant=0, width=None):
            """A Signal holding the GF(2)-linear map ``columns`` of ``value``, plus ``constant``."""
            width = len(columns) if width is None else width
            result = Signal(width, name=name)
            for j, row in enumerate(_rows(columns, width)):
                bit = (constant >> j) & 1
                terms = [value[i] for i in range(len(columns)) if (row >> i) & 1]
                if not terms:
                    m.d.comb += result[j].eq(bit)
                    continue
                expression = terms[0]
                for term in terms[1:]:
                    expression = expression ^ term
                m.d.comb += result[j].eq(~expression if bit else expression)
            return result

        def xor(name, a, b):
            result = Signal(len(a), name=name)
            m.d.comb += result.eq(a ^ b)
            return result

        def multiply(name, level, a, b):
            """The product of two tower elements of level ``level``, as a Signal."""
            result = Signal(1 << level, name=name)
            if level == 0:
                m.d.comb += result.eq(a & b)
                return result
            half = 1 << (level - 1)
            a1, a0, b1, b0 = a[half:], a[:half], b[half:], b[:half]
            high = multiply(f"{name}_hh", level - 1, a1, b1)
            low = multiply(f"{name}_ll", level - 1, a0, b0)
            cross = multiply(f"{name}_ss", level - 1, xor(f"{name}_as", a1, a0),
                             xor(f"{name}_bs", b1, b0))
            scale = tuple(tower_mul(constants[level], 1 << i, level - 1) for i in range(half))
            scaled = linear(f"{name}_nu", scale, high)
            m.d.comb += result.eq(Cat(scaled ^ low, cross ^ low))
            return result

        def invert(name, level, a):
            """The inverse of a tower element of level ``level`` (0 to 0), as a Signal."""
            if level == 1:
                square = tuple(tower_mul(1 << i, 1 << i, 1) for i in range(2))
                return linear(name, square, a)
            half = 1 << (level - 1)
            a1, a0 = a[half:], a[:half]
            # nu a1^2 + a0^2 is linear in a: one XOR network on all of a's bits.
            squares = tuple(
                tower_mul(1 << i, 1 << i, level - 1) if i < half else
                tower_mul(constants[level],
                          tower_mul(1 << (i - half), 1 << (i - half), level - 1), level - 1)
                for i in range(2 * half))
            norm_linear = linear(f"{name}_dl", squares, a, width=half)
            d = xor(f"{name}_d", norm_linear, multiply(f"{name}_dm", level - 1, a1, a0))
            d_inverse = invert(f"{name}_di", level - 1, d)
            result = Signal(1 << level, name=name)
            m.d.comb += result.eq(Cat(
                multiply(f"{name}_lo", level - 1, xor(f"{name}_s", a1, a0), d_inverse),
                multiply(f"{name}_hi", level - 1, a1, d_inverse)))
            return result

        if self._invertible:
            forward_in = linear("forward_in", maps["forward_in"][0], self.i,
                                maps["forward_in"][1])
            inverse_in = linear("inverse_in", maps["inverse_in"][0], self.i,
                                maps["inverse_in"][1])
            tower_in = Signal(8)
            m.d.comb += tower_in.eq(Mux(self.inverse, inverse_in, forward_in))
        else:
            tower_in = linear("tower_in", maps["forward_in"][0], self.i, maps["forward_in"][1])

        tower_out = invert("inv", TOWER_LEVELS, tower_in)

        forward_out = linear("forward_out", maps["forward_out"][0], tower_out,
                             maps["forward_out"][1])
        if self._invertible:
            inverse_out = linear("inverse_out", maps["inverse_out"][0], tower_out,
                                 maps["inverse_out"][1])
            m.d.comb += self.o.eq(Mux(self.inverse, inverse_out, forward_out))
        else:
            m.d.comb += self.o.eq(forward_out)
        return m
