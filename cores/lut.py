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
"""

from amaranth.hdl import Cat, Const, Instance, Mux, Signal


__all__ = ["uses_ecp5_cells", "uses_lut_cells", "lut4", "pfumx"]


def _family(platform) -> str:
    return str(getattr(platform, "family", "")).lower()


def uses_ecp5_cells(platform) -> bool:
    """Whether :func:`lut4` and :func:`pfumx` instantiate ECP5 cells for ``platform``."""
    return _family(platform) == "ecp5"


def uses_lut_cells(platform) -> bool:
    """Whether :func:`lut4` instantiates a LUT cell for ``platform`` (an ECP5 or iCE40 one)."""
    return _family(platform) in ("ecp5", "ice40")


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
    if uses_ecp5_cells(platform):
        m.submodules[name] = Instance("LUT4", p_INIT=Const(table, 16), i_A=inputs[0],
                                      i_B=inputs[1], i_C=inputs[2], i_D=inputs[3], o_Z=output)
    elif uses_lut_cells(platform):
        m.submodules[name] = Instance("SB_LUT4", p_LUT_INIT=Const(table, 16), i_I0=inputs[0],
                                      i_I1=inputs[1], i_I2=inputs[2], i_I3=inputs[3], o_O=output)
    else:
        m.d.comb += output.eq(Const(table, 16).bit_select(Cat(*inputs), 1))
    return output


def pfumx(m, platform, select, when_high, when_low, *, name: str) -> Signal:
    """``select ? when_high : when_low``; on ECP5 the slice multiplexer ``PFUMX``, whose two data
    inputs must then be outputs of :func:`lut4` (nextpnr packs the three into one slice)."""
    output = Signal(name=name)
    if uses_ecp5_cells(platform):
        m.submodules[name] = Instance("PFUMX", i_ALUT=when_high, i_BLUT=when_low, i_C0=select,
                                      o_Z=output)
    else:
        m.d.comb += output.eq(Mux(select, when_high, when_low))
    return output
