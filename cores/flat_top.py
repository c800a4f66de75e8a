"""A top module with flat, vendor-style port names and its own clock and reset pins.

Amaranth names an exported component's ports after its signature (``bus__awaddr``,
``input__valid``) and adds ``clk`` and ``rst`` (active high) for the ``sync`` domain. Tools and
users of other flows expect other names: Xilinx's AXI conventions are ``s_axi_awaddr``,
``m_axis_tdata``, ``aclk`` and the active-low ``aresetn``. :class:`FlatTop` wraps a component
whose ``sync`` domain it drives from its own clock and reset ports, and whose ports it presents
one by one under the names a function gives them; no logic is added.
"""

from typing import Callable

from amaranth.hdl import ClockDomain, ClockSignal, Module, ResetSignal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


__all__ = ["FlatTop"]


def _default_name(path: tuple) -> str:
    return "_".join(str(part) for part in path)


class FlatTop(wiring.Component):
    """``inner``, with each port of its signature as a port of its own and a clock and reset.

    Parameters
    ----------
    inner : :class:`~amaranth.lib.wiring.Component`
        The design; it uses the ``sync`` domain, which :class:`FlatTop` creates.
    name : callable
        ``name(path)``: the port name of the member at ``path`` of ``inner.signature``
        (a tuple such as ``("bus", "awaddr")``); by default the parts joined with ``_``.
    clock : :class:`str`
        Name of the clock port (``"aclk"`` by default).
    reset : :class:`str`
        Name of the reset port (``"aresetn"`` by default): synchronous, active low unless
        ``reset_active_low`` is false.
    reset_active_low : :class:`bool`

    Members
    -------
    The clock and reset (``In(1)`` each) and every port of ``inner``, flattened, in the
    direction ``inner`` sees it, under ``name(path)``.
    """
    def __init__(self, inner: wiring.Component, *, name: Callable[[tuple], str] = _default_name,
                 clock: str = "aclk", reset: str = "aresetn", reset_active_low: bool = True):
        if not isinstance(inner, wiring.Component):
            raise TypeError(f"inner must be an Amaranth wiring.Component, not {inner!r}")
        self._inner = inner
        self._clock, self._reset, self._active_low = clock, reset, bool(reset_active_low)
        members = {clock: In(1), reset: In(1)}
        self._ports = []            # (port name, path in inner, flow)
        for path, member, _ in inner.signature.flatten(inner):
            port = name(path)
            if port in members:
                raise ValueError(f"two ports of {type(inner).__name__} would both be named "
                                 f"{port!r}")
            members[port] = In(member.shape) if member.flow == In else Out(member.shape)
            self._ports.append((port, path, member.flow))
        super().__init__(members)

    @property
    def inner(self) -> wiring.Component:
        return self._inner

    def _inner_port(self, path):
        value = self._inner
        for part in path:
            value = value[part] if isinstance(part, int) else getattr(value, part)
        return value

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = ClockDomain()
        reset = getattr(self, self._reset)
        m.d.comb += [ClockSignal().eq(getattr(self, self._clock)),
                     ResetSignal().eq(~reset if self._active_low else reset)]
        m.submodules.inner = self._inner
        for port, path, flow in self._ports:
            outer, inner = getattr(self, port), self._inner_port(path)
            m.d.comb += (inner.eq(outer) if flow == In else outer.eq(inner))
        return m
