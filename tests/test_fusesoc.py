"""FuseSoC packages of the exported cores (:mod:`cipher_cores.scripts.flow.fusesoc`): the files
written, FuseSoC finding the core (``fusesoc --cores-root DIR core list``), the ``sim`` target
passing in Icarus Verilog through FuseSoC (and failing on a corrupted known answer), the
``lint`` target, the refusals, ``cipher-cores export --fusesoc`` and the page docs/fusesoc.md.

FuseSoC runs with its own HOME, XDG folders and an empty ``--config`` file in a temporary folder:
the user's FuseSoC configuration and libraries are never read or written. FuseSoC (PyPI
``fusesoc``, in the ``test`` extra) and Icarus Verilog are requirements: without them these
tests fail, saying so.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cipher_cores.scripts.flow.fusesoc import KINDS, kind_of, package_version, write_package
from cipher_cores.scripts.flow.targets import parse_target

from .support.helpers import assert_one_line_error, run_cli


#: The packages the default run builds once: a bare AES core, a bare PRESENT core, the
#: Wishbone peripheral around AES-128, the AXI4-Lite one around PRESENT-80 and PRESENT-80 with
#: AXI4-Stream channels (``--axis``: the ``axis`` form).
PACKAGES = ("aes-128", "present-80", "wishbone:aes-128", "axi:present-80", "present-80 --axis")


def _target(text: str):
    """The target of a :data:`PACKAGES` entry and its form."""
    core, _, flag = text.partition(" ")
    return parse_target(core), ("axis" if flag == "--axis" else None)


def _fusesoc_command() -> str:
    command = shutil.which("fusesoc")
    if command is None:
        pytest.fail("fusesoc not found on PATH: pip install fusesoc (in the test extra)",
                    pytrace=False)
    return command


@pytest.fixture(scope="module")
def fusesoc(tmp_path_factory, icarus):
    """``fusesoc(*arguments, cwd=...)``: FuseSoC run with a temporary HOME and XDG folders and an
    empty configuration file, returning the finished process (stdout and stderr together)."""
    command = _fusesoc_command()
    home = tmp_path_factory.mktemp("fusesoc_home")
    config = home / "fusesoc.conf"
    config.write_text("")
    environment = {key: value for key, value in os.environ.items()
                   if key != "FUSESOC_CONFIG" and not key.startswith("XDG_")}
    # YoWASP's compiled Yosys stays where it was (the export in docs/fusesoc.md's block would
    # otherwise compile it again under the new HOME: a minute).
    import platformdirs
    environment.setdefault("YOWASP_CACHE_DIR",
                           platformdirs.user_cache_dir("YoWASP", appauthor=False))
    environment.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
                       XDG_CACHE_HOME=str(home / "cache"), XDG_DATA_HOME=str(home / "data"))

    def run(*arguments, cwd):
        return subprocess.run([command, "--config", str(config), *map(str, arguments)],
                              cwd=cwd, env=environment, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=120)
    run.environment = environment
    return run


@pytest.fixture(scope="module")
def exported():
    """The export's Yosys variables set (as ``cipher-cores export`` sets them) for the module's
    tests; undone after them."""
    from cipher_cores.scripts.flow.toolchain import configure_export
    with pytest.MonkeyPatch.context() as patch:
        for name in ("AMARANTH_USE_YOSYS", "YOSYS", "CIPHER_CORES_TOOL_VARS"):
            patch.setenv(name, "")
            patch.delenv(name)
        configure_export()
        yield


@pytest.fixture(scope="module")
def packages(tmp_path_factory, exported):
    """Each package of :data:`PACKAGES`, written once, in a folder of its own under one cores
    root."""
    root = tmp_path_factory.mktemp("cores")
    written = {}
    for text in PACKAGES:
        target, form = _target(text)
        folder = target.slug + (f"_{form}" if form else "")
        written[text] = write_package(target, root / folder, form=form)
    return written, root


def _results(text: str) -> int:
    target, _ = _target(text)
    return len(target.vectors()) * (2 if target.decrypts else 1)


def _sim(fusesoc, root, system, workdir):
    return fusesoc("--cores-root", root, "run", "--build-root", workdir / "build",
                   "--target", "sim", system, cwd=workdir)


# --- the files ---------------------------------------------------------------------------------

def test_package_holds_verilog_bench_and_core_file(packages):
    written, root = packages
    package = written["aes-128"]
    version = package_version()
    assert package.vlnv == f"cipher-cores:core:aes128:{version}"
    assert package.system == "cipher-cores:core:aes128"
    assert [path.name for path in package.files] == ["aes128.v", "aes128_tb.v", "aes128.core"]
    assert all(path.parent == root / "aes128" for path in package.files)
    assert re.search(r"^module aes128\(", package.verilog.read_text(), re.M)
    bench = package.testbench.read_text()
    assert re.search(r"^module aes128_tb;", bench, re.M)
    assert "`timescale" not in bench and "always @*" not in bench
    core = package.core_file.read_text()
    assert core.startswith("CAPI=2:\n")
    assert f"name: cipher-cores:core:aes128:{version}\n" in core
    for target in ("default", "sim", "lint"):
        assert f"\n  {target}:\n" in core
    assert "toplevel: aes128_tb" in core and "iverilog_options: [-g2005]" in core
    assert written["wishbone:aes-128"].vlnv == f"cipher-cores:wishbone:wishbone_aes128:{version}"


def test_bench_checks_each_known_answer_both_ways(packages):
    written, _ = packages
    target = parse_target("aes-128")
    bench = written["aes-128"].testbench.read_text()
    for vector in target.vectors():
        plaintext, ciphertext = f"128'h{vector.plaintext:032x}", f"128'h{vector.ciphertext:032x}"
        assert f"load_key(128'h{vector.key:032x});" in bench
        assert f", 1'b0, {plaintext}, {ciphertext});" in bench
        assert f", 1'b1, {ciphertext}, {plaintext});" in bench


def test_bench_of_a_peripheral_takes_its_offsets_from_the_register_map(packages):
    from cipher_cores.cores.bus.regmap import register
    written, _ = packages
    bench = written["wishbone:aes-128"].testbench.read_text()
    for name in ("CTRL", "STATUS", "LENGTH", "KEY", "DIN", "DOUT", "ERROR"):
        assert f"localparam [31:0] {name} = 32'h{register(name).offset:x};" in bench
    assert "check_no_error;" in bench


# --- refusals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["gcm:aes-128"])
def test_refuses_a_kind_with_no_package(text, tmp_path):
    target = parse_target(text)
    with pytest.raises(ValueError, match=rf"^no FuseSoC package for {re.escape(text)}: packages "
                                         r"are made of bare cores .* and peripherals "
                                         r"\(wishbone:aes-128, axi:aes-128\)$"):
        write_package(target, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["1core", "my-core", "", "a b"])
def test_refuses_a_module_name_that_is_not_an_identifier(name, tmp_path):
    with pytest.raises(ValueError, match=r"^name must be a Verilog identifier .*, not "):
        write_package(parse_target("present-80"), tmp_path, name=name)
    assert list(tmp_path.iterdir()) == []


def test_refuses_a_form_it_does_not_know_or_a_target_without_that_form(tmp_path):
    with pytest.raises(ValueError, match=r"^form must be None or 'axis', not 'axi'$"):
        write_package(parse_target("aes-128"), tmp_path, form="axi")
    with pytest.raises(ValueError, match=r"^no FuseSoC package for wishbone:aes-128 in form "
                                         r"'axis': it takes a bare core \(aes-128\)$"):
        write_package(parse_target("wishbone:aes-128"), tmp_path, form="axis")
    assert list(tmp_path.iterdir()) == []


def test_each_kind_names_its_library():
    assert kind_of(parse_target("present-80:decrypt=no")).library_for(
        parse_target("present-80:decrypt=no")) == "core"
    for bus in ("wishbone", "wishbone-gcm", "wishbone-dma", "axi", "axi-gcm"):
        target = parse_target(f"{bus}:aes-128")
        assert kind_of(target).library_for(target) == bus
    assert kind_of(parse_target("aes-128"), "axis").library_for(parse_target("aes-128")) == \
        "axis"
    assert len(KINDS) == 4
    axi = kind_of(parse_target("axi:aes-128"))
    assert (axi.clock, axi.reset, axi.reset_low) == ("aclk", "aresetn", True)


# --- FuseSoC -----------------------------------------------------------------------------------

def test_fusesoc_lists_each_core(fusesoc, packages, tmp_path):
    written, root = packages
    run = fusesoc("--cores-root", root, "core", "list", cwd=tmp_path)
    assert run.returncode == 0, run.stdout
    for package in written.values():
        assert re.search(rf"^{re.escape(package.vlnv)}\s*:\s*local\s*:", run.stdout, re.M), \
            run.stdout


@pytest.mark.parametrize("text", PACKAGES)
def test_sim_target_passes_in_icarus(text, fusesoc, packages, tmp_path):
    written, root = packages
    run = _sim(fusesoc, root, written[text].system, tmp_path)
    assert run.returncode == 0, run.stdout[-3000:]
    assert "iverilog" in run.stdout and "-g2005" in run.stdout
    assert re.search(rf"^PASS: {_results(text)} results of ", run.stdout, re.M), run.stdout
    assert "FAIL" not in run.stdout


@pytest.mark.parametrize("text", ["present-80", "wishbone:aes-128", "axi:present-80",
                                  "present-80 --axis"])
def test_sim_target_fails_on_a_corrupted_known_answer(text, fusesoc, packages, tmp_path):
    written, _ = packages
    root = tmp_path / "cores"
    shutil.copytree(written[text].verilog.parent, root)
    bench = root / written[text].testbench.name
    target, form = _target(text)
    bits = target.block_bits
    ciphertext = target.vectors()[0].ciphertext
    if form == "axis":      # AXI4-Stream byte order: the first byte in byte lane 0
        ciphertext = int.from_bytes(ciphertext.to_bytes(bits // 8, "big"), "little")
    right, wrong = f"{ciphertext:0{bits // 4}x}", f"{ciphertext ^ 1:0{bits // 4}x}"
    assert bench.read_text().count(f"'h{right});") == 1
    bench.write_text(bench.read_text().replace(f"'h{right});", f"'h{wrong});"))
    run = _sim(fusesoc, root, written[text].system, tmp_path)
    assert run.returncode != 0, run.stdout[-3000:]
    assert re.search(rf"^FAIL: vector 0, encrypting: (result|DOUT gave) {right}( \(tlast 0\))?, "
                     rf"expected {wrong}( \(tlast 0\))?$", run.stdout, re.M), run.stdout
    assert "PASS" not in run.stdout


def test_bench_fails_on_a_time_out(packages, icarus, tmp_path):
    # A module with the core's ports that never takes a key: the bench must stop, saying so.
    written, _ = packages
    stub = tmp_path / "stub.v"
    stub.write_text(
        "module aes128(input clk, input rst, input key__valid, output key__ready,\n"
        "  input [127:0] key__payload, input input__valid, output input__ready,\n"
        "  input [128:0] input__payload, output output__valid, input output__ready,\n"
        "  output [127:0] output__payload);\n"
        "  assign key__ready = 1'b0;\n  assign input__ready = 1'b0;\n"
        "  assign output__valid = 1'b0;\n  assign output__payload = 128'd0;\n"
        "endmodule\n")
    iverilog, vvp = icarus
    binary = tmp_path / "bench.vvp"
    compiled = subprocess.run([iverilog, "-g2005", "-s", "aes128_tb", "-o", str(binary),
                               str(written["aes-128"].testbench), str(stub)],
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    ran = subprocess.run([vvp, "-n", str(binary)], capture_output=True, text=True, timeout=60)
    assert ran.returncode != 0
    assert re.search(r"^FAIL: key__ready not high within \d+ cycles", ran.stdout, re.M), ran.stdout
    assert "PASS" not in ran.stdout


def test_axi_bench_fails_on_an_error_response(fusesoc, packages, tmp_path):
    # A write to INFO (read-only) is answered SLVERR: the bench must stop on it.
    from cipher_cores.cores.bus.regmap import register
    written, _ = packages
    package = written["axi:present-80"]
    root = tmp_path / "cores"
    shutil.copytree(package.verilog.parent, root)
    bench = root / package.testbench.name
    info = register("INFO").offset
    text = bench.read_text()
    assert text.count("    check_no_error;\n") == 1
    bench.write_text(text.replace("    check_no_error;\n", f"    access(1'b1, 8'h{info:x}, "
                                  f"32'd0);\n    check_no_error;\n"))
    run = _sim(fusesoc, root, package.system, tmp_path)
    assert run.returncode != 0, run.stdout[-3000:]
    assert re.search(rf"^FAIL: the write of {info:x} answered 10, not OKAY$", run.stdout, re.M), \
        run.stdout
    assert "PASS" not in run.stdout


@pytest.mark.parametrize("text", PACKAGES)
def test_lint_target_passes_without_a_warning(text, fusesoc, packages, tmp_path):
    written, _ = packages
    package = written[text]
    run = fusesoc("--cores-root", package.verilog.parent, "run", "--build-root",
                  tmp_path / "build", "--target", "lint", package.system, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-3000:]
    assert f"iverilog -s{package.module} " in run.stdout and "-Wall -tnull" in run.stdout
    assert "warning" not in run.stdout.lower(), run.stdout


def test_lint_target_fails_on_broken_verilog(fusesoc, packages, tmp_path):
    written, _ = packages
    package = written["present-80"]
    root = tmp_path / "broken"
    shutil.copytree(package.verilog.parent, root)
    verilog = root / package.verilog.name
    verilog.write_text(verilog.read_text() + "module broken; wire w = ; endmodule\n")
    run = fusesoc("--cores-root", root, "run", "--build-root", tmp_path / "build2",
                  "--target", "lint", package.system, cwd=tmp_path)
    assert run.returncode != 0
    assert "syntax error" in run.stdout


#: More configurations: an encrypt-only core (a bench that only encrypts) and the DMA
#: peripheral (its master's inputs tied to 0) in the default run, the rest with ``-m slow``.
MORE = [pytest.param(text, marks=() if text in {"present-80:decrypt=no", "wishbone-dma:present-80"}
                     else pytest.mark.slow)
        for text in ("present-80:decrypt=no", "wishbone-dma:present-80", "wishbone:present-80",
                     "wishbone:present-80:decrypt=no", "axi-gcm:aes-256", "aes-192",
                     "aes-256:sbox=boolean", "present-serial-128")]


@pytest.mark.parametrize("text", MORE)
def test_sim_target_passes_for_more_configurations(text, fusesoc, exported, tmp_path):
    package = write_package(parse_target(text), tmp_path / "cores")
    run = _sim(fusesoc, tmp_path / "cores", package.system, tmp_path)
    assert run.returncode == 0, run.stdout[-3000:]
    assert re.search(rf"^PASS: {_results(text)} results of ", run.stdout, re.M), run.stdout


# --- cipher-cores export --fusesoc -------------------------------------------------------------

def test_export_writes_the_package_and_says_so(tmp_path, capsys, exported):
    folder = tmp_path / "made" / "wb"
    code, out, err = run_cli(capsys, "export", "--core", "wishbone:present-80",
                             "--fusesoc", str(folder))
    assert code == 0, err
    version = package_version()
    assert out.splitlines() == [
        f"wrote {folder / 'wishbone_present80.v'} (Verilog, top module wishbone_present80)",
        f"wrote {folder / 'wishbone_present80_tb.v'} (testbench, top module "
        f"wishbone_present80_tb)",
        f"wrote {folder / 'wishbone_present80.core'} (FuseSoC core "
        f"cipher-cores:wishbone:wishbone_present80:{version})"]
    assert "module wishbone_present80_tb;" in (folder / "wishbone_present80_tb.v").read_text()


def test_export_fusesoc_takes_the_name_and_the_core_options(tmp_path, capsys, exported):
    code, out, err = run_cli(capsys, "export", "--core", "present", "--decrypt", "no",
                             "--name", "enc_only", "--fusesoc", str(tmp_path))
    assert code == 0, err
    assert len(out.splitlines()) == 3
    core = (tmp_path / "enc_only.core").read_text()
    assert f"name: cipher-cores:core:enc_only:{package_version()}\n" in core
    assert "toplevel: enc_only_tb" in core and "files: [enc_only.v]" in core
    assert re.search(r"^module enc_only\(", (tmp_path / "enc_only.v").read_text(), re.M)
    bench = (tmp_path / "enc_only_tb.v").read_text()
    assert "enc_only dut (" in bench
    assert "check(0, 1'b0, " in bench and "check(0, 1'b1, " not in bench


def test_export_fusesoc_with_axis_packages_the_axi4_stream_form(tmp_path, capsys, exported):
    code, out, err = run_cli(capsys, "export", "--core", "present-80", "--axis",
                             "--fusesoc", str(tmp_path))
    assert code == 0, err
    assert out.splitlines()[-1] == (f"wrote {tmp_path / 'present80_axis.core'} (FuseSoC core "
                                    f"cipher-cores:axis:present80_axis:{package_version()})")
    assert "present80_axis dut (" in (tmp_path / "present80_axis_tb.v").read_text()


@pytest.mark.parametrize("argv, message", [
    (["--core", "des"], "unknown core 'des'"),
    (["--core", "present", "--name", "2x"], "--name '2x': a module name is a Verilog identifier"),
])
def test_export_fusesoc_refuses_in_one_line(argv, message, tmp_path, capsys):
    folder = tmp_path / "out"
    code, _, err = run_cli(capsys, "export", *argv, "--fusesoc", str(folder))
    assert_one_line_error(code, err, message)
    assert not folder.exists()


def test_export_fusesoc_refuses_a_file_where_the_folder_goes(tmp_path, capsys):
    (tmp_path / "taken").write_text("")
    code, _, err = run_cli(capsys, "export", "--core", "present", "--fusesoc",
                           str(tmp_path / "taken"))
    assert_one_line_error(code, err, f"--fusesoc {tmp_path / 'taken'}: is a file, not a folder")
    code, _, err = run_cli(capsys, "export", "--core", "present", "--fusesoc",
                           str(tmp_path / "taken" / "below"))
    assert_one_line_error(code, err, f"is inside {tmp_path / 'taken'}, a file, not a folder")


def test_export_fusesoc_refuses_a_folder_in_the_way_of_a_file(tmp_path, capsys):
    (tmp_path / "present80.core").mkdir()
    code, _, err = run_cli(capsys, "export", "--core", "present", "--fusesoc", str(tmp_path))
    assert_one_line_error(code, err, f"--fusesoc {tmp_path}: a folder "
                                     f"{tmp_path / 'present80.core'} is in the way")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["present80.core"]


def test_export_fusesoc_refuses_a_folder_it_cannot_write(capsys):
    # /proc takes no new files, even from root.
    code, _, err = run_cli(capsys, "export", "--core", "present", "--fusesoc",
                           "/proc/cipher-cores-package")
    assert_one_line_error(code, err, "--fusesoc /proc/cipher-cores-package: cannot write in /proc")


# --- docs/fusesoc.md ---------------------------------------------------------------------------

PAGE = Path(__file__).parent.parent / "docs" / "fusesoc.md"


def _blocks(language: str) -> list:
    return re.findall(rf"^```{language}\n(.*?)^```", PAGE.read_text(), flags=re.M | re.S)


def test_the_page_shell_block_runs_as_written(fusesoc, exported, tmp_path):
    block, = _blocks("sh")
    environment = dict(fusesoc.environment)
    environment.update({name: os.environ[name] for name in ("AMARANTH_USE_YOSYS", "YOSYS")
                        if name in os.environ})
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path,
                         env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    version = package_version()
    for vlnv in (f"cipher-cores:core:aes128:{version}",
                 f"cipher-cores:wishbone:wishbone_present80:{version}"):
        assert re.search(rf"^{re.escape(vlnv)}\s*:\s*local\s*:", run.stdout, re.M), run.stdout
    passes = re.findall(r"^PASS: (\d+) results of (.*) match the known answers$", run.stdout,
                        re.M)
    assert passes == [("4", "AES-128"), ("8", "Wishbone PRESENT-80 (ECB/CBC/CFB/OFB/CTR)"),
                      ("4", "AES-128")], run.stdout
    assert "iverilog -saes128 " in run.stdout and "-Wall -tnull" in run.stdout
    assert (tmp_path / "fusesoc.conf").is_file()
    assert (tmp_path / "build" / "fusesoc" / "aes128" / "aes128.core").is_file()


def test_the_page_python_example_writes_the_package(exported, tmp_path, monkeypatch, capsys):
    block, = _blocks("python")
    monkeypatch.chdir(tmp_path)
    exec(compile(block, str(PAGE), "exec"), {})
    vlnv = capsys.readouterr().out.strip()
    assert vlnv == f"cipher-cores:core:present80_decrypt_no:{package_version()}"
    assert f"# {vlnv}" in block
    assert (tmp_path / "build" / "fusesoc" / "present80" / "present80_decrypt_no.core").is_file()
