# amaranth: UnusedElaboratable=no
"""The exported Verilog, run as Verilog: each catalog configuration through ``cipher-cores
export --verilog``, compiled by Icarus Verilog as Verilog-2005 and as SystemVerilog and run
through the bench of :mod:`tests.support.verilog_bench` (FIPS-197 or PRESENT paper vectors in both
directions, synchronous resets in the middle, no X or Z on any output from time 0); and the port
map that ``export --help`` documents, against the exported module.

Icarus (Debian package ``iverilog``) is a requirement of these tests, installed by ``.ci/run``:
without it they fail, saying so, rather than skip.
"""

import re

import pytest

from cipher_cores.cores.catalog import catalog, configurations, parse_config
from cipher_cores.scripts.cli import main

from .support.helpers import is_masked
from .support.verilog_bench import (ICARUS_MODES, bench_verilog, check_ice40_form, export_arguments,
                                    run_icarus)


#: In the default run: one configuration of each S-box kind, direction set and PRESENT
#: architecture, and the default configuration of any catalog entry not named here; each with
#: ``-g2005`` and ``-g2012``. ``-m slow`` runs every configuration in every mode of
#: :data:`ICARUS_MODES`.
_CHOSEN = {"aes-128", "aes-192:sbox=boolean", "aes-256:sbox=logic", "present-80",
           "present-128:decrypt=no", "present-80:rounds_per_cycle=4",
           "present-serial-80:decrypt=no", "present-pipelined-80"}
DEFAULT_RUN = _CHOSEN | {entry.config().text for entry in catalog().values()
                         if entry.name not in {parse_config(text).spec.name for text in _CHOSEN}}
DEFAULT_MODES = {"2005", "2012"}

# A masked core is left out: the Verilog bench cannot feed its random stream yet, and refuses it
# (tests/support/verilog_bench.py).
RUNS = [pytest.param(config, mode, id=f"{config.slug}-g{mode}",
                     marks=() if config.text in DEFAULT_RUN and mode in DEFAULT_MODES
                     else pytest.mark.slow)
        for config in configurations() if not is_masked(config) for mode in ICARUS_MODES]


def test_the_default_run_covers_each_architecture():
    texts = {config.text for config in configurations()}
    assert _CHOSEN <= texts
    assert {parse_config(text).spec.name for text in DEFAULT_RUN} == set(catalog())
    assert DEFAULT_MODES <= set(ICARUS_MODES)


# The iCE40 forms of the cores that instantiate SB_RAM40_4K themselves, the cells simulated by
# Yosys' own model of them; with the number of instances (the AES core's S-box tables are
# inferred read-only memories, its two state RAMs instances).
ICE40_FORMS = [
    ("present-bram-80", 12, ()), ("present-bram-80:decrypt=no", 12, pytest.mark.slow),
    ("present-bram-128", 15, pytest.mark.slow),
    ("aes-bram-128", 2, ()), ("aes-bram-128:decrypt=no", 2, pytest.mark.slow),
    ("aes-bram-256", 2, pytest.mark.slow),
]


@pytest.mark.parametrize("text, rams", [pytest.param(text, rams, id=text, marks=marks)
                                        for text, rams, marks in ICE40_FORMS])
def test_ice40_form_passes_its_vectors_with_yosys_model_of_the_ram_cell(text, rams, icarus,
                                                                       tmp_path):
    config = parse_config(text)
    check_ice40_form(config.build(), config, icarus, tmp_path, rams=rams)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """``exported(config)``: the folder holding the configuration's exported Verilog
    (``core.v``, module named after ``config.slug``) and its bench (``bench.v``), and the
    number of results the bench expects; made once per module and worker."""
    folders = {}

    def export(config):
        if config.text not in folders:
            folder = tmp_path_factory.mktemp(config.slug)
            with pytest.MonkeyPatch.context() as patch:
                # export may set AMARANTH_USE_YOSYS and YOSYS (to YoWASP's Yosys): undo it after.
                for name in ("AMARANTH_USE_YOSYS", "YOSYS", "CIPHER_CORES_TOOL_VARS"):
                    patch.setenv(name, "")
                    patch.delenv(name)
                code = main(["export", *export_arguments(config), "--name", config.slug,
                             "--verilog", str(folder / "core.v")])
            assert code == 0
            bench, results = bench_verilog(config, config.slug)
            (folder / "bench.v").write_text(bench)
            folders[config.text] = folder, results
        return folders[config.text]
    return export


@pytest.mark.parametrize("config, mode", RUNS)
def test_exported_verilog_passes_its_vectors_in_icarus(config, mode, icarus, exported):
    folder, results = exported(config)
    run = run_icarus(*icarus, folder / "bench.v", folder / "core.v", mode, folder)
    report = "\n".join(run.errors[:20]) or run.output[-2000:]
    assert run.errors == [], f"{config.label}, iverilog -g{mode}:\n{report}"
    assert run.summary is not None, f"{config.label}, iverilog -g{mode}: no summary\n{report}"
    assert run.summary["results"] == run.summary["expected"] == results
    assert run.summary["errors"] == 0
    assert run.summary["checks"] >= run.summary["edges"]


_DECLARATION = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s*)?(\w+)\s*;", re.M)
_DOCUMENTED = re.compile(r"^  (\w+)\s+(in|out)\s+([BK1+]+)\s", re.M)


def _top_module_ports(verilog: str, module: str) -> dict:
    """Port name to (``in``/``out``, width) of ``module`` in ``verilog``."""
    start = verilog.index(f"module {module}(")
    body = verilog[start:verilog.index("endmodule", start)]
    return {name: (direction.removesuffix("put"), int(msb) + 1 if msb else 1)
            for direction, msb, name in _DECLARATION.findall(body)}


@pytest.mark.parametrize("text", ["aes-128", "present-80"])
def test_export_help_documents_every_port_of_the_exported_module(text, exported, capsys):
    config = parse_config(text)
    folder, _ = exported(config)
    ports = _top_module_ports((folder / "core.v").read_text(), config.slug)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    help_text = capsys.readouterr().out
    sizes = {"B": config.block_bits, "K": config.key_bits, "1": 1}
    documented = {name: (direction, sum(sizes[term] for term in width.split("+")))
                  for name, direction, width in _DOCUMENTED.findall(help_text)}
    assert ports and documented == ports
