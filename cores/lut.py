"""Logic cells placed by hand, for the few places where a core's speed depends on how logic is
split into LUTs and which cells share a slice.

Synthesis maps logic to LUTs by itself, and usually well; but its delay-driven mapper may merge a
chosen split into wider functions, and a ``keep`` on a wire does not stop it on ECP5. On ECP5 a
slice has two LUT4s and a multiplexer (``PFUMX``) between their outputs whose result reaches the
slice's flip-flop directly: ``select ? f(4 inputs) : g(4 other inputs)`` in one LUT delay and a
short mux delay. :func:`lut4` and :func:`pfumx` make those cells: on ECP5 as ``LUT4`` and
``PFUMX`` instances, which synthesis keeps; :func:`lut4` on iCE40 as an ``SB_LUT4`` instance
(iCE40 has no slice multiplexer: :func:`pfumx` is an expression there); elsewhere (simulation,
exported Verilog, formal checks) the same function as an ordinary expression.

The cells come from the platform through :mod:`cipher_cores.cores.fpga`: its ``lut`` and
``slice_mux`` say which (a core asks the same to choose a form built of these cells), and
:func:`~cipher_cores.cores.fpga.cell` makes them, so a platform can supply models of them.
"""

from amaranth.hdl import Cat, Const, Mux, Signal

from . import fpga


__all__ = ["LUT_PINS", "MUX_PINS", "lut4", "pfumx"]


#: The pins of each 4-input LUT cell: its table parameter, its inputs (the table's index, least
#: significant first) and its output.
LUT_PINS = {
    "LUT4": ("INIT", ("A", "B", "C", "D"), "Z"),
    "SB_LUT4": ("LUT_INIT", ("I0", "I1", "I2", "I3"), "O"),
}

#: The pins of each slice multiplexer cell: the input taken when the select is high, the one
#: taken when it is low, the select and the output.
MUX_PINS = {"PFUMX": ("ALUT", "BLUT", "C0", "Z")}


def lut4(m, platform, function, inputs, *, name: str) -> Signal:
    """A signal driven by one 4-input LUT computing ``function(a, b, c, d)`` of ``inputs``.

    ``function`` takes four ints (0 or 1) and returns a truthy value; ``inputs`` are one to four
    1-bit values (the missing ones are constant 0). Bit ``8 d + 4 c + 2 b + a`` of the LUT's
    table is ``function(a, b, c, d)``."""
    inputs = list(inputs)
    if not 1 <= len(inputs) <= 4:
        raise ValueError(f"a LUT4 takes 1 to 4 inputs, not {len(inputs)}")
    inputs += [Const(0, 1)] * (4 - len(inputs))
    table = sum(1 << index for index in range(16)
                if function(*((index >> bit) & 1 for bit in range(4))))
    output = Signal(name=name)
    kind = fpga.primitives(platform).lut
    if kind is None:
        m.d.comb += output.eq(Const(table, 16).bit_select(Cat(*inputs), 1))
        return output
    init, pins, out = LUT_PINS[kind]
    m.submodules[name] = fpga.cell(platform, kind, **{f"p_{init}": Const(table, 16)},
                                   **{f"i_{pin}": value for pin, value in zip(pins, inputs)},
                                   **{f"o_{out}": output})
    return output


def pfumx(m, platform, select, when_high, when_low, *, name: str) -> Signal:
    """``select ? when_high : when_low``; on ECP5 the slice multiplexer ``PFUMX``, whose two data
    inputs must then be outputs of :func:`lut4` (nextpnr packs the three into one slice)."""
    output = Signal(name=name)
    kind = fpga.primitives(platform).slice_mux
    if kind is None:
        m.d.comb += output.eq(Mux(select, when_high, when_low))
        return output
    high, low, sel, out = MUX_PINS[kind]
    m.submodules[name] = fpga.cell(platform, kind, **{f"i_{high}": when_high, f"i_{low}": when_low,
                                                      f"i_{sel}": select, f"o_{out}": output})
    return output
