# amaranth: UnusedElaboratable=no
"""Hand-placed logic cells (:mod:`cipher_cores.cores.lut`): the same function as an expression and as ECP5
cells."""

import itertools

import pytest
from amaranth.hdl import Const, Module, Signal
from amaranth.sim import Simulator

from cipher_cores.cores import lut
from cipher_cores.cores.lut import lut4, pfumx, uses_ecp5_cells


class ECP5:
    family = "ECP5"


def majority_with_xor(a, b, c, d):
    return ((a + b + c) >= 2) ^ d


def test_uses_ecp5_cells_only_on_ecp5():
    assert uses_ecp5_cells(ECP5())
    assert not uses_ecp5_cells(None)
    assert not uses_ecp5_cells(type("ICE40", (), {"family": "ice40"})())


def test_lut4_expression_computes_its_function_on_every_input():
    m = Module()
    inputs = [Signal(name=f"i{k}") for k in range(4)]
    output = lut4(m, None, majority_with_xor, inputs, name="f")

    async def testbench(ctx):
        for values in itertools.product((0, 1), repeat=4):
            for signal, value in zip(inputs, values):
                ctx.set(signal, value)
            assert ctx.get(output) == majority_with_xor(*values), values

    simulator = Simulator(m)
    simulator.add_testbench(testbench)
    simulator.run()


class RecordedCell:
    """Stands for ``Instance``: keeps the cell type and its parameters and ports."""
    cells = []

    def __init__(self, kind, **kwargs):
        self.kind, self.kwargs = kind, kwargs
        RecordedCell.cells.append(self)

    def elaborate(self, platform):
        return Module()


@pytest.fixture
def recorded(monkeypatch):
    monkeypatch.setattr(lut, "Instance", RecordedCell)
    RecordedCell.cells = []
    return RecordedCell.cells


def test_lut4_on_ecp5_is_a_lut4_cell_with_the_function_as_its_table(recorded):
    inputs = [Signal(name=f"i{k}") for k in range(3)]
    output = lut4(Module(), ECP5(), lambda a, b, c, d: a and not b or c, inputs, name="f")
    [cell] = recorded
    assert cell.kind == "LUT4"
    table = sum(1 << index for index in range(16)
                if (index & 1 and not index & 2) or index & 4)
    assert cell.kwargs["p_INIT"].value == table and len(cell.kwargs["p_INIT"]) == 16
    assert all(cell.kwargs[f"i_{pin}"] is signal for pin, signal in zip("ABC", inputs))
    assert cell.kwargs["o_Z"] is output
    # The unused input is tied to 0.
    assert isinstance(cell.kwargs["i_D"], Const) and cell.kwargs["i_D"].value == 0


def test_pfumx_on_ecp5_is_the_slice_multiplexer_and_elsewhere_a_mux(recorded):
    select, high, low = Signal(), Signal(), Signal()
    output = pfumx(Module(), ECP5(), select, high, low, name="mux")
    [cell] = recorded
    assert cell.kind == "PFUMX"
    assert all(cell.kwargs[port] is signal for port, signal in (
        ("i_C0", select), ("i_ALUT", high), ("i_BLUT", low), ("o_Z", output)))

    m = Module()
    output = pfumx(m, None, select, high, low, name="mux")

    async def testbench(ctx):
        for s, h, l in itertools.product((0, 1), repeat=3):
            ctx.set(select, s)
            ctx.set(high, h)
            ctx.set(low, l)
            assert ctx.get(output) == (h if s else l)

    simulator = Simulator(m)
    simulator.add_testbench(testbench)
    simulator.run()


@pytest.mark.parametrize("count", [0, 5])
def test_lut4_takes_one_to_four_inputs(count):
    with pytest.raises(ValueError, match=f"^a LUT4 takes 1 to 4 inputs, not {count}$"):
        lut4(Module(), None, lambda *_: 0, [Signal() for _ in range(count)], name="f")
