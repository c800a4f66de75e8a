"""Every AES architecture of the catalog against pycryptodome.

The other AES tests mostly compare a core with our own reference model
(:mod:`cipher_cores.cores.aes.reference`); a mistake shared by the model and the hardware (a byte
order, a key-schedule step) would pass them. Here every catalog configuration whose block cipher is
AES (every architecture, key size and option) runs random keys and blocks in simulation, and each
result is compared with ``Crypto.Cipher.AES`` in ECB mode (:func:`~.helpers.aes_oracle`), an
implementation independent of ours.
Cores that decrypt get both directions under every key; encrypt-only cores get encryptions only.

Each configuration runs 2 keys of 3 blocks on the Amaranth simulator (under a second of CPU for
most; the configurations with Boolean S-boxes take about 2 s each, so those at 192 and 256 bits are
in the ``slow`` run, as their other long runs: AES-128 with Boolean S-boxes covers the same
S-box hardware in the default run).
"""

import random

import pytest

from cipher_cores.cores.catalog import catalog
from cipher_cores.cores.sim import LoadKey, Process, simulate_cipher

from .support.helpers import aes_entries, aes_oracle


#: The AES architectures of the catalog today: the test fails if one is no longer found as AES
#: (so a catalog change cannot quietly shrink the differential run). New ones join by themselves.
KNOWN_ARCHITECTURES = {"aes", "aes-pipelined", "aes-ttable", "aes-compact", "aes-bram"}

#: Configurations left to ``-m slow`` (see the module docstring).
SLOW = {"aes-192:sbox=boolean", "aes-192:sbox=boolean,decrypt=no",
        "aes-256:sbox=boolean", "aes-256:sbox=boolean,decrypt=no",
        # The masked AES (about 10 s a key size): tests/test_aes_masked.py checks AES-128
        # against pycryptodome in the default run, every key size with -m slow.
        "aes-masked-128", "aes-masked-192", "aes-masked-256"}

KEYS = 2
BLOCKS_PER_KEY = 3


def _configurations():
    params = []
    for entry in aes_entries(catalog()):
        for config in entry.configurations():
            marks = [pytest.mark.slow] if config.text in SLOW else []
            params.append(pytest.param(config, marks=marks, id=config.text))
    return params


def differential_operations(config, rng: random.Random) -> list:
    """``KEYS`` random keys, each followed by ``BLOCKS_PER_KEY`` random blocks: for a core that
    decrypts, an encryption, a decryption, then a random direction; otherwise encryptions."""
    operations = []
    for _ in range(KEYS):
        operations.append(LoadKey(rng.getrandbits(config.key_bits)))
        for index in range(BLOCKS_PER_KEY):
            decrypt = config.decrypts and (index == 1 or (index > 1 and rng.random() < 0.5))
            operations.append(Process(rng.getrandbits(128), decrypt))
    return operations


def test_every_aes_architecture_is_found():
    assert {entry.name for entry in aes_entries(catalog())} >= KNOWN_ARCHITECTURES


@pytest.mark.parametrize("config", _configurations())
def test_random_blocks_match_pycryptodome(config):
    rng = random.Random(f"pycryptodome {config.text}")   # a string seed: the same in every process
    operations = differential_operations(config, rng)
    expected, key = [], None
    for op in operations:
        if isinstance(op, LoadKey):
            key = op.key
        else:
            expected.append(aes_oracle(key, config.key_bits, op.block, op.decrypt))
    run = simulate_cipher(config.build(), operations)
    assert run.results == expected
