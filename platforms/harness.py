"""A pin-light wrapper that makes every port of a cipher core observable, for measuring it.

A core has hundreds of I/O bits, more than a device has pins, and nextpnr-ice40 has no
out-of-context mode; a core whose ports reach no pin is optimized away. :class:`MeasurementHarness`
feeds every core input from a serial-in shift register on one pin, and folds every core output into
a multiple-input signature register (a shift register that XORs the outputs into each stage) whose
last stage drives one pin. Every input bit can then change every output bit seen at the pin, so
synthesis keeps all of the core, and the harness costs one flip-flop per input bit and one
flip-flop and one 2-input XOR per output bit, all of them short register-to-register paths.

The core is the submodule named ``core``; the report counts its cells by hierarchy (see
:mod:`cipher_cores.scripts.flow.measure`), so the harness never enters a core's figures. :class:`BareDeviceTop`
puts the harness on the ``serial`` pins of a bare device (:mod:`cipher_cores.platforms.devices`).
"""

from amaranth.hdl import Cat, Elaboratable, Module, ResetInserter, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .pins import input_pin, output_pin


__all__ = ["MeasurementHarness", "harness_widths", "BareDeviceTop"]


def _flat_ports(core):
    """The core's ports as (inputs, outputs): lists of (name, value) in signature order."""
    inputs, outputs = [], []
    for path, member, value in core.signature.flatten(core):
        name = ".".join(str(part) for part in path)
        if member.flow == In:
            inputs.append((name, value))
        else:
            outputs.append((name, value))
    return inputs, outputs


def harness_widths(core) -> tuple:
    """``(input_bits, output_bits)``: how many core port bits the harness drives and captures."""
    inputs, outputs = _flat_ports(core)
    return (sum(len(Cat(value)) for _, value in inputs),
            sum(len(Cat(value)) for _, value in outputs))


class MeasurementHarness(wiring.Component):
    """Wraps ``core`` so that it can be placed on a device with three pins and a clock.

    Parameters
    ----------
    core : :class:`~amaranth.lib.wiring.Component`
        The core to measure. Every port of its signature is driven or captured.
    reset : :class:`bool`
        Keep the core's synchronous reset: a harness flip-flop (fed by the input shift
        register) resets the core's ``sync`` flip-flops, as a design that resets the core while
        it runs does, so synthesis keeps the core's reset logic. By default no reset reaches the
        core (the bare devices' ``sync`` domain has none).

    Members
    -------
    serial_in : ``In(1)``
        Shifted into the input register on every clock.
    serial_out : ``Out(1)``
        The last stage of the output signature register.
    """
    serial_in:  In(1)
    serial_out: Out(1)

    def __init__(self, core, *, reset: bool = False):
        if not isinstance(core, wiring.Component):
            raise TypeError(f"core must be a wiring.Component, not {core!r}")
        if not isinstance(reset, bool):
            raise TypeError(f"reset must be True or False, not {reset!r}")
        self._core = core
        self._reset = reset
        super().__init__()

    @property
    def core(self):
        return self._core

    def elaborate(self, platform):
        m = Module()
        core = self._core
        inputs, outputs = _flat_ports(core)

        input_bits = Cat(*(value for _, value in inputs))
        shift_in = Signal(len(input_bits) + self._reset)
        m.d.sync += shift_in.eq(Cat(self.serial_in, shift_in[:-1]))
        m.d.comb += input_bits.eq(shift_in[:len(input_bits)])
        if self._reset:
            m.submodules.core = ResetInserter(shift_in[-1])(core)
        else:
            m.submodules.core = core

        output_bits = Cat(*(value for _, value in outputs))
        signature = Signal(len(output_bits))
        m.d.sync += signature.eq(Cat(0, signature[:-1]) ^ output_bits)
        m.d.comb += self.serial_out.eq(signature[-1])
        return m


class BareDeviceTop(Elaboratable):
    """Connects a :class:`MeasurementHarness` (submodule ``harness``) to the ``serial`` pins of a
    bare device. The core's hierarchical name is ``top.harness.core``."""
    def __init__(self, harness):
        self.harness = harness

    def elaborate(self, platform):
        m = Module()
        m.submodules.harness = self.harness
        requested = {}
        m.d.comb += [
            self.harness.serial_in.eq(input_pin(m, platform, "serial", 0, "i", requested)),
            output_pin(m, platform, "serial", 0, "o", requested).eq(self.harness.serial_out),
        ]
        return m
