"""``cipher-cores demo``: every catalog entry on its printed vectors, with the cycle counts of the
same simulation.

Each entry runs at its default key size, as ``cipher-cores demo`` does; all of them together take
about 10 s of CPU (the serial and block-RAM PRESENT cores, thousands of cycles a block, most of
it).
"""

import pytest

from cipher_cores.cores.catalog import CoreConfig, catalog
from cipher_cores.scripts.flow.demo import run_demo

from .support.helpers import assert_one_line_error, run_cli


ENTRIES = list(catalog())


@pytest.mark.parametrize("name", ENTRIES)
def test_demo_of_every_entry(capsys, name):
    spec = catalog()[name]
    config = CoreConfig(spec, spec.default_key_bits)
    code, out, err = run_cli(capsys, "demo", "--core", name)
    assert code == 0, err
    assert "MISMATCH" not in out
    hex_digits = (config.block_bits + 3) // 4
    assert config.vectors()
    for vector in config.vectors():
        expected = f"{vector.ciphertext:0{hex_digits}x}"
        assert f"ciphertext {expected}  (expected {expected}, " in out
        if config.decrypts:
            assert f"decrypted  {vector.plaintext:0{hex_digits}x}  (" in out
    # An encrypt-only core only encrypts, and says so.
    assert ("encrypt-only" in out) == (not config.decrypts)
    assert ("decrypted" in out) == config.decrypts
    assert out.rstrip().splitlines()[-1].startswith("1 configuration simulated in ")


def test_demo_figures_are_those_the_report_measures():
    # One run of the vectors gives the figures measure_cycles gets from random blocks, each way
    # in a fresh core.
    from cipher_cores.scripts.flow.measure import measure_cycles
    config = catalog()["aes"].config(128)
    run, figures = run_demo(config), measure_cycles(config, blocks=3)
    assert run.ok and figures.verified
    assert (run.cycles_per_block, run.cycles_per_block_decrypt, run.latency,
            run.latency_decrypt, run.key_to_input) == (
        figures.cycles_per_block, figures.cycles_per_block_decrypt, figures.latency,
        figures.latency_decrypt, figures.key_to_input)


def test_demo_catches_a_wrong_answer(capsys, monkeypatch):
    # A vector the core does not meet is a MISMATCH and a non-zero exit.
    from dataclasses import replace
    spec = catalog()["present"]
    wrong = replace(spec.vectors[0], ciphertext=spec.vectors[0].ciphertext ^ 1)
    entries = {**catalog(), "present": replace(spec, vectors=(wrong, *spec.vectors[1:]))}
    monkeypatch.setattr("cipher_cores.cores.catalog.catalog", lambda: entries)
    code, out, err = run_cli(capsys, "demo", "--core", "present")
    assert "MISMATCH" in out
    assert_one_line_error(code, err, "1 mismatches against the known answers")


def test_demo_of_a_core_without_printed_vectors(capsys, toy_in_catalog):
    code, out, err = run_cli(capsys, "demo", "--core", "toy")
    assert code == 0, err
    assert out.count("[random block, reference model]") == 2 and "MISMATCH" not in out
    assert "TOY-80: 6 cycles per block back to back" in out


def test_demo_other_key_sizes(capsys):
    code, out, err = run_cli(capsys, "demo", "--core", "aes-ttable", "--key-bits", "all")
    assert code == 0, err
    for label in ("AES-ttable-128", "AES-ttable-192", "AES-ttable-256"):
        assert f"  {label}: " in out
    # FIPS-197 Appendix C.3.
    assert "ciphertext 8ea2b7ca516745bfeafc49904b496089" in out


@pytest.mark.parametrize("argv, message", [
    (["--core", "des"], "unknown core 'des'; choose from aes, "),
    (["--core", "aes", "--key-bits", "80"], "--key-bits must be 128, 192, 256 or all for AES, "
                                            "not '80'"),
    (["--key-bits", "100"], "--key-bits 100: no core takes that key size"),
])
def test_demo_errors_are_one_line(capsys, argv, message):
    code, _, err = run_cli(capsys, "demo", *argv)
    assert_one_line_error(code, err, message)
