"""The seam between the cores and the FPGA they are built for: the one place that reads a
platform's ``family`` and ``device``, which cells the cores instantiate by hand there, how those
cells are made, and where block RAMs are placed on a die.

A core says what it needs and the platform says how it is built, as in Amaranth's own
:class:`~amaranth.lib.memory.Memory` (whose ``elaborate`` returns ``platform.get_memory(self)``
when the platform has that method). Three questions, each asked of the ``platform`` an
``elaborate`` receives:

* :func:`primitives`: which cells the cores instantiate by hand on this family (a
  :class:`Primitives`: the block RAM, the LUT, the slice multiplexer, the kept flip-flop), or
  none (no platform: simulation, exported Verilog, formal checks; or a family not listed in
  :data:`PRIMITIVES`). :mod:`cipher_cores.cores.block_ram` and :mod:`cipher_cores.cores.lut`
  choose the form of a RAM or a LUT from it, and build the cell's ports.
* :func:`cell`: the cell itself. A platform with a ``get_cell(kind, **kwargs)`` method makes it
  (the test suite's simulation platform answers with a model of the cell, so the form built for
  a device can be simulated); any other platform gets ``Instance(kind, **kwargs)``, which the
  vendor toolchain maps to the cell.
* :func:`floorplan`: the ``BEL`` sites a design's block RAMs take on this die (keyed by
  :func:`die`), or ``None`` where nextpnr places them.

:func:`family` and :func:`die` answer for the few choices a core makes by family that are not a
cell (tables that fit iCE40's small block RAMs, a control path that routes better there). No
other module of ``cores/`` reads a platform's ``family`` or ``device``; ``tests/test_seam.py``
checks that.

``family`` is compared without case (the ``amaranth_boards`` iCE40 boards say ``"iCE40"``, the
bare devices ``"ice40"``); the ECP5 variants that share a die (``LFE5U-85F``, ``LFE5UM-85F``,
``LFE5UM5G-85F``) share its floorplans.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from amaranth.hdl import Instance


__all__ = ["FAMILIES", "family", "die", "Primitives", "PRIMITIVES", "NO_PRIMITIVES", "primitives",
           "cell", "ecp5_85f_site", "Floorplan", "FLOORPLAN_DESIGNS", "floorplan"]


#: The families the cores know cells of.
FAMILIES = ("ice40", "ecp5")


def family(platform) -> str | None:
    """``"ice40"`` or ``"ecp5"``: the family of ``platform`` (its ``family`` attribute, any
    case), or ``None`` for no platform, a platform without ``family`` or another family."""
    name = str(getattr(platform, "family", "")).lower()
    return name if name in FAMILIES else None


def die(platform) -> str | None:
    """The die of ``platform``'s device, named as the bare devices of
    :mod:`cipher_cores.platforms.devices` are: ``"ecp5-85f"`` for ``LFE5U-85F``, ``LFE5UM-85F``
    and ``LFE5UM5G-85F`` alike (one die, one floorplan), ``"ice40-up5k"`` for ``iCE40UP5K``;
    ``None`` without a family of :data:`FAMILIES` or a ``device``."""
    kind = family(platform)
    device = str(getattr(platform, "device", "") or "")
    if kind is None or not device:
        return None
    if kind == "ecp5":
        # LFE5U-85F, LFE5UM5G-85F: the size after the last hyphen names the die.
        return f"ecp5-{device.rsplit('-', 1)[-1].lower()}"
    return f"ice40-{device.lower().removeprefix('ice40')}"


@dataclass(frozen=True)
class Primitives:
    """The cells the cores instantiate by hand on one family; ``None`` where they do not (and
    let synthesis infer the logic or memory, or build it another way).

    Attributes
    ----------
    block_ram : :class:`str` or ``None``
        ``"DP16KD"`` (ECP5: true dual port, output register) or ``"SB_RAM40_4K"`` (iCE40).
    lut : :class:`str` or ``None``
        The 4-input LUT: ``"LUT4"`` (ECP5) or ``"SB_LUT4"`` (iCE40).
    slice_mux : :class:`str` or ``None``
        The multiplexer between a slice's two LUT outputs: ``"PFUMX"`` (ECP5; iCE40 has none).
    kept_flip_flop : :class:`str` or ``None``
        The flip-flop made where copies of a register must stay apart (synthesis merges
        registers with the same inputs): ``"TRELLIS_FF"`` (ECP5).
    """
    block_ram: str | None = None
    lut: str | None = None
    slice_mux: str | None = None
    kept_flip_flop: str | None = None


#: The cells of each family of :data:`FAMILIES`.
PRIMITIVES = MappingProxyType({
    "ecp5": Primitives(block_ram="DP16KD", lut="LUT4", slice_mux="PFUMX",
                       kept_flip_flop="TRELLIS_FF"),
    "ice40": Primitives(block_ram="SB_RAM40_4K", lut="SB_LUT4"),
})

#: No cell by hand: no platform (simulation, exported Verilog, formal checks) or another family.
NO_PRIMITIVES = Primitives()


def primitives(platform) -> Primitives:
    """The cells the cores instantiate by hand for ``platform`` (see :data:`PRIMITIVES`)."""
    return PRIMITIVES.get(family(platform), NO_PRIMITIVES)


def cell(platform, kind: str, **kwargs):
    """The cell ``kind`` with ``kwargs`` as :class:`~amaranth.hdl.Instance` takes them
    (``p_`` parameters, ``a_`` attributes, ``i_``/``o_`` ports): ``platform.get_cell(kind,
    **kwargs)`` if ``platform`` has that method (a simulation model, say), else
    ``Instance(kind, **kwargs)``."""
    get_cell = getattr(platform, "get_cell", None)
    if get_cell is not None:
        return get_cell(kind, **kwargs)
    return Instance(kind, **kwargs)


# --- Floorplans ---------------------------------------------------------------------------------

def ecp5_85f_site(row: int, group: int, index: int) -> str:
    """The nextpnr ``BEL`` name of a ``DP16KD`` site of the ECP5 85F die: block RAM rows
    ``y = 22, 46, 70, 82`` hold 13 groups of 4 sites each, 9 columns apart, with 2 more columns
    in the middle of the die."""
    if row not in (22, 46, 70, 82) or not 0 <= group < 13 or not 0 <= index < 4:
        raise ValueError(f"no DP16KD site at row {row}, group {group}, index {index}")
    return f"X{4 + 9 * group + 2 * index + (2 if group >= 7 else 0)}/Y{row}/EBR{index}"


@dataclass(frozen=True)
class Floorplan:
    """The block RAM sites of one design on one die: named groups of nextpnr ``BEL`` names,
    each in the order the design makes its RAMs."""
    die: str
    design: str
    groups: Mapping[str, tuple[str, ...]] = field(hash=False)

    def sites(self, group: str, count: int | None = None) -> list[str]:
        """The sites of ``group``; its first ``count`` if given (a :exc:`ValueError` if the group
        has fewer)."""
        sites = self.groups[group]
        if count is None:
            return list(sites)
        if count > len(sites):
            raise ValueError(f"the floorplan has {len(sites)} block RAM sites, not {count}")
        return list(sites[:count])


def _ecp5_85f_groups(row: int, *numbers: int) -> tuple[str, ...]:
    return tuple(ecp5_85f_site(row, group, index) for group in numbers for index in range(4))


def _ecp5_85f_ttable() -> dict:
    # The 16 T-table RAMs in four neighbouring groups in the middle of row 70, the round-key
    # RAMs in the groups either side and the SubWord S-boxes next to those, so that the loop's
    # paths from and to the RAMs stay short (left to nextpnr, the RAMs spread over the die and
    # the loop's wires took 4 ns).
    return {"lookup": _ecp5_85f_groups(70, 5, 6, 7, 8), "keys": _ecp5_85f_groups(70, 4, 9),
            "sub_word": _ecp5_85f_groups(70, 10)[:2]}


def _ecp5_85f_pipelined() -> dict:
    # One snake along the rows, row 82 left to right, row 70 right to left, and so on, so that
    # consecutive sites are neighbours: round after round, each round's RAMs side by side (left
    # to itself, nextpnr scattered each round's RAMs over the die: 91 MHz, every critical path a
    # route of 4 to 6 ns between a round's RAMs). Each row gives its first 12 groups of 4 sites
    # (six rounds of 8 RAMs): a round split between two rows had the critical path.
    sites = []
    for index, row in enumerate((82, 70, 46, 22)):
        order = (lambda values: values) if index % 2 == 0 else reversed
        for group in order(range(12)):
            for k in order(range(4)):
                sites.append(ecp5_85f_site(row, group, k))
    return {"rams": tuple(sites)}


#: The designs that have floorplans, and the groups of each:
#: ``"aes.ttable"`` (:class:`~cipher_cores.cores.aes.ttable.TTableAES`: ``"lookup"``, 16 sites;
#: ``"keys"``, 8; ``"sub_word"``, 2) and ``"aes.pipelined"``
#: (:class:`~cipher_cores.cores.aes.pipelined.PipelinedAES`: ``"rams"``, 192 sites, of which
#: the core takes the first ``8 Nr + 2``, the rounds' RAMs first).
FLOORPLAN_DESIGNS = ("aes.ttable", "aes.pipelined")

_FLOORPLANS = {
    ("ecp5-85f", "aes.ttable"): _ecp5_85f_ttable,
    ("ecp5-85f", "aes.pipelined"): _ecp5_85f_pipelined,
}


def floorplan(platform, design: str) -> Floorplan | None:
    """The :class:`Floorplan` of ``design`` (one of :data:`FLOORPLAN_DESIGNS`) on the die of
    ``platform`` (see :func:`die`), or ``None`` where nextpnr places its RAMs."""
    if design not in FLOORPLAN_DESIGNS:
        raise ValueError(f"design must be one of {', '.join(map(repr, FLOORPLAN_DESIGNS))}, "
                         f"not {design!r}")
    where = die(platform)
    plan = _FLOORPLANS.get((where, design))
    if plan is None:
        return None
    return Floorplan(where, design, MappingProxyType(plan()))
