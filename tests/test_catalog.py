"""The catalog: each cipher package declares its entries, and a new package is found on its own."""

import textwrap

import pytest
from amaranth.hdl import Fragment

import cipher_cores.cores
import cipher_cores.cores.catalog
from cipher_cores.cores.catalog import (CipherEntry, CoreConfig, CoreOption, KnownAnswer,
                                        parse_config)


THIRD_CIPHER = '''
    """A third cipher, written the way a new cipher package would be: nothing outside it."""
    from amaranth.hdl import Module

    from cipher_cores.cores.catalog import CipherEntry, CoreOption, KnownAnswer
    from cipher_cores.cores.cipher import BlockCipher


    def encrypt(key, block, key_bits):
        return block ^ (key & 0xffff)


    class Xor16(BlockCipher):
        latency = initiation_interval = key_load_cycles = 1

        def __init__(self, key_bits=16, *, lanes=1):
            self.lanes = lanes
            super().__init__(16, key_bits)

        def elaborate(self, platform):
            return Module()


    CATALOG = (
        CipherEntry(name="xor16", title="XOR16", component=Xor16, encrypt=encrypt,
                    decrypt=encrypt, block_bits=16, key_bits=(16,), default_key_bits=16,
                    options=(CoreOption("lanes", int, 1, (1, 2), "lanes"),),
                    vectors=(KnownAnswer(16, 0x00ff, 0x0f0f, 0x0ff0, "made up"),)),
    )
'''


@pytest.fixture
def third_cipher_package(tmp_path, monkeypatch):
    """A cipher package ``cipher_cores.cores.xor16`` in a temporary folder on the ``cores`` package path."""
    package = tmp_path / "xor16"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(THIRD_CIPHER))
    monkeypatch.setattr(cipher_cores.cores, "__path__", [*cipher_cores.cores.__path__, str(tmp_path)])
    cipher_cores.cores.catalog.catalog.cache_clear()
    yield
    cipher_cores.cores.catalog.catalog.cache_clear()


def test_a_new_cipher_package_is_found_without_touching_anything_else(third_cipher_package):
    entries = cipher_cores.cores.catalog.catalog()
    # Packages in alphabetical order, each package's entries in its own order.
    assert list(entries) == ["aes", "aes-pipelined", "aes-pipelined2x", "aes-ttable",
                             "aes-compact", "aes-bram", "aes-masked", "present", "present-keytable", "present-serial", "present-bram",
                             "present-pipelined", "present-masked",
                             "present-masked-serial", "xor16"]
    config = parse_config("xor16:lanes=2")
    assert (config.label, config.text) == ("XOR16-16 (lanes=2)", "xor16-16:lanes=2")
    core = config.build()
    assert core.lanes == 2
    Fragment.get(core, None)        # elaborated, so Amaranth does not warn that it went unused
    assert config.vectors()[0].ciphertext == config.encrypt(0x00ff, 0x0f0f)


def test_a_new_cipher_gets_its_command_line_flags(third_cipher_package, capsys):
    from cipher_cores.scripts.cli import main
    assert main(["list"]) == 0
    assert "xor16" in capsys.readouterr().out
    assert main(["export", "--core", "xor16", "--lanes", "3"]) == 1
    assert "--lanes must be 1 or 2, not '3'" in capsys.readouterr().err


def test_entries_are_declared_by_their_packages():
    from cipher_cores.cores.aes import CATALOG as AES_CATALOG
    from cipher_cores.cores.present import CATALOG as PRESENT_CATALOG
    assert list(cipher_cores.cores.catalog.catalog().values()) == [*AES_CATALOG, *PRESENT_CATALOG]


def test_the_printed_vectors_match_the_reference_models():
    for config in cipher_cores.cores.catalog.configurations():
        for vector in config.vectors():
            assert config.encrypt(vector.key, vector.plaintext) == vector.ciphertext, vector
            assert config.decrypt(vector.key, vector.ciphertext) == vector.plaintext, vector


def test_every_key_size_has_printed_vectors():
    for entry in cipher_cores.cores.catalog.catalog().values():
        assert {vector.key_bits for vector in entry.vectors} == set(entry.key_bits)


def test_encrypt_only_configurations_say_so():
    assert parse_config("present-80:decrypt=no").decrypts is False
    assert parse_config("present-80").decrypts is True
    assert parse_config("aes-128").decrypts is True


@pytest.mark.parametrize("kwargs, message", [
    ({"key_bits": 64}, "PRESENT takes key sizes 80 or 128, not 64"),
    ({"rounds_per_cycle": 3}, "rounds_per_cycle must be 1, 2, 4, 8, 16 or 31, not 3"),
    ({"decrypt": 1}, "decrypt must be yes or no, not 1"),
    ({"colour": "red"}, "PRESENT has no option 'colour' (options: rounds_per_cycle, decrypt)"),
])
def test_entry_config_checks_its_values(kwargs, message):
    entry = cipher_cores.cores.catalog.get_core("present")
    with pytest.raises(ValueError) as info:
        entry.config(**kwargs)
    assert info.value.args[0] == message


def test_a_configuration_made_directly_is_checked_too():
    entry = cipher_cores.cores.catalog.get_core("present")
    with pytest.raises(ValueError, match=r"^PRESENT takes key sizes 80 or 128, not 64$"):
        CoreConfig(entry, 64)
    with pytest.raises(ValueError, match=r"^decrypt must be yes or no, not 'no'$"):
        CoreConfig(entry, 80, {"decrypt": "no"})


def test_option_text_is_parsed_by_the_entry():
    entry = cipher_cores.cores.catalog.get_core("present")
    assert entry.parse_options({"rounds_per_cycle": "4", "decrypt": "no"}) == \
        {"rounds_per_cycle": 4, "decrypt": False}
    with pytest.raises(ValueError, match=r"^--rounds-per-cycle must be 1, 2, 4, 8, 16 or 31, "
                                         r"not '3'$"):
        entry.parse_options({"rounds_per_cycle": "3"})
    with pytest.raises(ValueError, match=r"^PRESENT has no option 'sbox' \(options: "
                                         r"rounds_per_cycle, decrypt\)$"):
        entry.parse_options({"sbox": "bram"})


@pytest.mark.parametrize("argv, text, kwargs, message", [
    (["--key-bits", "80"], "aes-80", {"key_bits": 80},
     "AES takes key sizes 128, 192 or 256, not 80"),
    (["--sbox", "rom"], "aes-128:sbox=rom", None,
     "--sbox must be logic, bram or boolean, not 'rom'"),
    (["--rounds-per-cycle", "4"], "aes-128:rounds_per_cycle=4", {"rounds_per_cycle": 4},
     "AES has no option 'rounds_per_cycle' (options: sbox, decrypt)"),
])
def test_the_command_line_and_the_text_form_ask_the_catalog(capsys, argv, text, kwargs, message):
    """One rule, one message: the command line's flags, ``parse_config`` and
    :meth:`CipherEntry.config` are all checked by the entry."""
    from cipher_cores.scripts.cli import main
    assert main(["export", "--core", "aes", *argv]) == 1
    assert capsys.readouterr().err.strip() == f"cipher-cores: error: {message}"
    with pytest.raises(ValueError) as info:
        parse_config(text)
    assert info.value.args[0] == message
    if kwargs is not None:
        with pytest.raises(ValueError) as info:
            cipher_cores.cores.catalog.get_core("aes").config(**kwargs)
        assert info.value.args[0] == message


def test_option_default_must_be_a_choice():
    with pytest.raises(ValueError, match=r"^option x: default 3 is not one of \(1, 2\)$"):
        CoreOption("x", int, 3, (1, 2))
    assert CoreOption("b", bool, True, ()).choices == (True, False)


def test_known_answer_and_entry_are_plain_values():
    vector = KnownAnswer(16, 1, 2, 3, "x")
    assert vector == KnownAnswer(16, 1, 2, 3, "x")
    assert CipherEntry.__dataclass_params__.frozen
