"""Fixtures shared by the whole suite."""

import shutil

import pytest

import cipher_cores.cores.catalog


@pytest.fixture
def toy_in_catalog(monkeypatch):
    """The catalog with the toy cipher (``tests/support/toy_cipher.py``) added as core ``toy``."""
    from .support.toy_cipher import TOY_ENTRY
    entries = {**cipher_cores.cores.catalog.catalog(), TOY_ENTRY.name: TOY_ENTRY}
    monkeypatch.setattr(cipher_cores.cores.catalog, "catalog", lambda: entries)
    return entries


@pytest.fixture(scope="session")
def icarus():
    """The ``iverilog`` and ``vvp`` commands; the test fails if Icarus is not installed."""
    commands = {name: shutil.which(name) for name in ("iverilog", "vvp")}
    missing = [name for name, path in commands.items() if path is None]
    if missing:
        pytest.fail(f"{' and '.join(missing)} not found on PATH: these tests need Icarus "
                    f"Verilog (Debian/Ubuntu: apt-get install iverilog; .ci/run installs it)",
                    pytrace=False)
    return commands["iverilog"], commands["vvp"]
