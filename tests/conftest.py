"""Fixtures shared by the whole suite."""

import pytest

import cores.catalog


@pytest.fixture
def toy_in_catalog(monkeypatch):
    """The catalog with the toy cipher (``tests/toy_cipher.py``) added as core ``toy``."""
    from .toy_cipher import TOY_ENTRY
    entries = {**cores.catalog.catalog(), TOY_ENTRY.name: TOY_ENTRY}
    monkeypatch.setattr(cores.catalog, "catalog", lambda: entries)
    return entries
