# amaranth: UnusedElaboratable=no
"""Hand-placed logic cells (:mod:`cipher_cores.cores.lut`): the same function as an expression
and as ECP5 and iCE40 cells, the cells made through the platform (:mod:`cipher_cores.cores.fpga`)
and simulated by the models of ``tests/support/cell_models.py``."""

import itertools

import pytest
from amaranth.hdl import Const, Fragment, Instance, Module, Signal
from amaranth.sim import Simulator

from cipher_cores.cores.lut import lut4, pfumx

from .support.cell_models import SimulationPlatform


class ECP5:
    family = "ECP5"


def majority_with_xor(a, b, c, d):
    return ((a + b + c) >= 2) ^ d


@pytest.mark.parametrize("family, cell", [("ecp5", "LUT4"), ("ice40", "SB_LUT4"), (None, None)])
def test_lut4_computes_its_function_on_every_input_in_each_form(family, cell):
    platform = SimulationPlatform(family) if family else None
    m = Module()
    inputs = [Signal(name=f"i{k}") for k in range(4)]
    output = lut4(m, platform, majority_with_xor, inputs, name="f")
    if platform is not None:
        assert [made.kind for made in platform.cells] == [cell]

    async def testbench(ctx):
        for values in itertools.product((0, 1), repeat=4):
            for signal, value in zip(inputs, values):
                ctx.set(signal, value)
            assert ctx.get(output) == majority_with_xor(*values), values

    simulator = Simulator(m)
    simulator.add_testbench(testbench)
    simulator.run()


def test_lut4_on_a_platform_without_get_cell_is_an_instance_of_the_cell():
    m = Module()
    lut4(m, ECP5(), majority_with_xor, [Signal() for _ in range(4)], name="f")
    [(cell, name, _)] = Fragment.get(m, None).subfragments
    assert isinstance(cell, Instance) and (cell.type, name) == ("LUT4", "f")


def test_lut4_on_ecp5_is_a_lut4_cell_with_the_function_as_its_table():
    inputs = [Signal(name=f"i{k}") for k in range(3)]
    platform = SimulationPlatform("ECP5")
    m = Module()
    output = lut4(m, platform, lambda a, b, c, d: a and not b or c, inputs, name="f")
    Fragment.get(m, None)
    [cell] = platform.cells
    assert cell.kind == "LUT4"
    table = sum(1 << index for index in range(16)
                if (index & 1 and not index & 2) or index & 4)
    assert cell.kwargs["p_INIT"].value == table and len(cell.kwargs["p_INIT"]) == 16
    assert all(cell.kwargs[f"i_{pin}"] is signal for pin, signal in zip("ABC", inputs))
    assert cell.kwargs["o_Z"] is output
    # The unused input is tied to 0.
    assert isinstance(cell.kwargs["i_D"], Const) and cell.kwargs["i_D"].value == 0


@pytest.mark.parametrize("on_ecp5", [True, False], ids=["ecp5", "elsewhere"])
def test_pfumx_on_ecp5_is_the_slice_multiplexer_and_elsewhere_a_mux(on_ecp5):
    select, high, low = Signal(), Signal(), Signal()
    platform = SimulationPlatform("ecp5" if on_ecp5 else "ice40")
    m = Module()
    output = pfumx(m, platform, select, high, low, name="mux")
    if on_ecp5:
        [cell] = platform.cells
        assert cell.kind == "PFUMX"
        assert all(cell.kwargs[port] is signal for port, signal in (
            ("i_C0", select), ("i_ALUT", high), ("i_BLUT", low), ("o_Z", output)))
    else:
        assert platform.cells == []         # iCE40 has no slice multiplexer

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
