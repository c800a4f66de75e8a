"""The seam between the cores and the FPGA (:mod:`cipher_cores.cores.fpga`): the family and die
read from a platform, the cells of each family, how a cell is made (by the platform's
``get_cell`` or as an ``Instance``), the floorplans; and that no other module of ``cores/`` reads
a platform's ``family`` or ``device`` or instantiates a vendor cell itself."""

import gc
import re
import warnings
from pathlib import Path

import pytest
from amaranth.hdl import Instance, Signal, UnusedElaboratable

from cipher_cores.cores import fpga
from cipher_cores.platforms.boards import BOARDS
from cipher_cores.platforms.devices import DEVICES

from .support.cell_models import DP16KDModel, SimulationPlatform


class Platform:
    """Stands for a platform: a ``family`` and a ``device``, nothing else."""
    def __init__(self, family=None, device=None):
        if family is not None:
            self.family = family
        if device is not None:
            self.device = device


@pytest.mark.parametrize("platform, family", [
    (Platform("ice40"), "ice40"), (Platform("iCE40"), "ice40"), (Platform("ECP5"), "ecp5"),
    (Platform("ecp5"), "ecp5"), (Platform("machxo2"), None), (Platform(), None), (None, None)])
def test_family_is_ice40_ecp5_or_none(platform, family):
    assert fpga.family(platform) == family


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_the_die_of_each_bare_device_is_named_as_the_device(name):
    assert fpga.die(DEVICES[name]()) == name


@pytest.mark.parametrize("device, die", [
    ("LFE5U-85F", "ecp5-85f"), ("LFE5UM-85F", "ecp5-85f"), ("LFE5UM5G-85F", "ecp5-85f"),
    ("LFE5U-25F", "ecp5-25f")])
def test_ecp5_variants_of_one_die_share_it(device, die):
    assert fpga.die(Platform("ecp5", device)) == die


def test_no_die_without_a_family_or_a_device():
    assert fpga.die(None) is None
    assert fpga.die(Platform("ecp5")) is None
    assert fpga.die(Platform(device="LFE5U-85F")) is None


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_a_board_has_the_cells_and_die_of_its_bare_device(name):
    board = BOARDS[name]()
    [bare] = [device() for device in DEVICES.values() if device.device == board.device]
    assert fpga.family(board) == fpga.family(bare)
    assert fpga.primitives(board) == fpga.primitives(bare)
    assert fpga.die(board) == fpga.die(bare)


def test_the_cells_of_each_family():
    assert fpga.primitives(Platform("ecp5")) == fpga.Primitives(
        block_ram="DP16KD", lut="LUT4", slice_mux="PFUMX", kept_flip_flop="TRELLIS_FF")
    assert fpga.primitives(Platform("iCE40")) == fpga.Primitives(
        block_ram="SB_RAM40_4K", lut="SB_LUT4", slice_mux=None, kept_flip_flop=None)
    for platform in (None, Platform(), Platform("machxo2")):
        assert fpga.primitives(platform) == fpga.NO_PRIMITIVES
        assert fpga.NO_PRIMITIVES.block_ram is fpga.NO_PRIMITIVES.lut is None


def test_a_cell_is_an_instance_unless_the_platform_makes_it():
    output = Signal()
    for platform in (None, Platform("ecp5")):
        cell = fpga.cell(platform, "PFUMX", i_ALUT=1, i_BLUT=0, i_C0=1, o_Z=output)
        assert isinstance(cell, Instance) and cell.type == "PFUMX"

    made = []

    class Maker(Platform):
        def get_cell(self, kind, **kwargs):
            made.append((kind, kwargs))
            return "the model"
    assert fpga.cell(Maker("ecp5"), "PFUMX", i_C0=1, o_Z=output) == "the model"
    assert made == [("PFUMX", {"i_C0": 1, "o_Z": output})]


def test_the_simulation_platform_makes_models_and_keeps_them():
    platform = SimulationPlatform("ecp5", "LFE5U-85F")
    kwargs = {f"p_{name}_{port}": value for port in "AB" for name, value in (
        ("DATA_WIDTH", 18), ("REGMODE", "OUTREG"), ("CSDECODE", "0b000"),
        ("WRITEMODE", "NORMAL"))}
    cell = fpga.cell(platform, "DP16KD", a_BEL="X4/Y70/EBR0", **kwargs)
    assert isinstance(cell, DP16KDModel)
    assert platform.cells == [cell] and platform.count("DP16KD") == 1
    assert platform.sites == ["X4/Y70/EBR0"]
    with pytest.raises(NotImplementedError, match=r"^no simulation model of the EHXPLLL cell$"):
        fpga.cell(platform, "EHXPLLL")
    # The model is made, not elaborated: it is collected here, with Amaranth's warning about
    # unused elaboratables ignored (left to the garbage collector, the warning, an error in this
    # suite, would fail whichever test runs next in this process).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        del cell, platform
        gc.collect()


def test_floorplans_are_for_the_85f_die_only():
    for device in ("LFE5U-85F", "LFE5UM5G-85F"):
        for design in fpga.FLOORPLAN_DESIGNS:
            plan = fpga.floorplan(Platform("ecp5", device), design)
            assert (plan.die, plan.design) == ("ecp5-85f", design)
    for platform in (None, Platform("ecp5", "LFE5U-25F"), Platform("ice40", "iCE40HX8K"),
                     Platform("ecp5")):
        assert fpga.floorplan(platform, "aes.ttable") is None


def test_the_t_table_floorplan_groups_are_apart_in_the_middle_of_row_70():
    plan = fpga.floorplan(Platform("ecp5", "LFE5U-85F"), "aes.ttable")
    sites = [site for group in ("lookup", "keys", "sub_word") for site in plan.sites(group)]
    assert [len(plan.sites(group)) for group in ("lookup", "keys", "sub_word")] == [16, 8, 2]
    assert len(set(sites)) == 26 and all(site.split("/")[1] == "Y70" for site in sites)


def test_floorplan_names_its_designs():
    with pytest.raises(ValueError, match=r"^design must be one of 'aes.ttable', "
                                         r"'aes.pipelined', not 'aes.round'$"):
        fpga.floorplan(Platform("ecp5", "LFE5U-85F"), "aes.round")


def test_ecp5_85f_sites():
    assert fpga.ecp5_85f_site(82, 0, 0) == "X4/Y82/EBR0"
    assert fpga.ecp5_85f_site(22, 12, 3) == "X120/Y22/EBR3"     # past the middle: 2 more
    for row, group, index in ((23, 0, 0), (22, 13, 0), (22, 0, 4)):
        with pytest.raises(ValueError, match=rf"^no DP16KD site at row {row}, group {group}, "
                                             rf"index {index}$"):
            fpga.ecp5_85f_site(row, group, index)


# --- One place: the sources of cores/ ---------------------------------------------------------

CORES = Path(fpga.__file__).parent

#: What reads a platform's family or device: a getattr on a platform, a getattr of "family" or
#: "device", any ``.family`` but a call (``fpga.family(platform)``), a ``platform.device``, or a
#: ``.device`` compared or tested.
PLATFORM_READS = re.compile(
    r"getattr\(\s*platform\b"
    r"|getattr\([^()]*[\"'](?:family|device)[\"']"
    r"|\.family\b(?!\()"
    r"|\bplatform\.device\b"
    r"|\.device\)?\s*(?:==|!=|\.(?:endswith|startswith|lower|upper)\(|(?:not\s+)?in\b)")

#: A vendor cell instantiated directly rather than through :func:`fpga.cell`.
VENDOR_INSTANCES = re.compile(r"\bInstance\(\s*[\"'](?:SB_|DP16KD|LUT4|PFUMX|TRELLIS_)")


def sources():
    """Every Python source of ``cores/`` but the seam, with its text."""
    return {path.relative_to(CORES).as_posix(): path.read_text()
            for path in sorted(CORES.rglob("*.py")) if path != Path(fpga.__file__)}


def test_the_patterns_catch_the_checks_the_seam_replaced():
    # The forms the cores used before the seam, and some others.
    for line in ['str(getattr(platform, "family", "")).lower() == "ice40"',
                 'getattr(platform, "family", None) == "ecp5"',
                 'str(getattr(platform, "device", "")).endswith("-85F")',
                 'getattr(p, "device", "")', 'platform.family.lower()', 'if platform.device:',
                 'board.device == "LFE5U-85F"', 'str(platform.device).endswith("-85F")',
                 'Instance("DP16KD", **kwargs)', 'Instance(\n    "SB_RAM40_4K", p_READ_MODE=0)',
                 'Instance("TRELLIS_FF", a_keep=1)', 'kind = platform.family']:
        assert PLATFORM_READS.search(line) or VENDOR_INSTANCES.search(line), line
    # And not what is no check: a record's device field.
    assert not PLATFORM_READS.search('{"device": self.device, "slices": self.slices}')
    assert not PLATFORM_READS.search('fpga.family(platform) == "ice40"')


def test_only_the_seam_reads_family_and_device():
    found = [f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
             for name, text in sources().items() for match in PLATFORM_READS.finditer(text)]
    assert len(sources()) > 50
    assert found == []


def test_only_the_seam_instantiates_vendor_cells():
    found = [f"{name}:{text.count(chr(10), 0, match.start()) + 1}"
             for name, text in sources().items() for match in VENDOR_INSTANCES.finditer(text)]
    assert found == []
