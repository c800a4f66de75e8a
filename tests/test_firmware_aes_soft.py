"""The software AES-128 of the firmware (``cores/soc/firmware/aes_soft.c``), the baseline the
hardware peripheral is timed against: compiled for the host with ``gcc`` and checked against the
FIPS-197 examples and pycryptodome; and compiled for the PicoRV32 (RV32IM, freestanding) to check
that it calls no library function."""

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from Crypto.Cipher import AES

from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_B, FIPS197_APPENDIX_C


FIRMWARE = Path(__file__).parent.parent / "cores" / "soc" / "firmware"
SOURCE = FIRMWARE / "aes_soft.c"

# A host driver: one request per line, one hex answer per line. `in_place` runs the function with
# out == in, the aliasing the API allows.
#   E <in_place> <key> <block>              -> aes128_soft_encrypt
#   C <in_place> <key> <iv> <blocks> <data> -> aes128_soft_cbc_encrypt
DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "aes_soft.h"

static void read_hex(uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (scanf("%2hhx", &buf[i]) != 1)
            exit(2);
}

static void print_hex(const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        printf("%02x", buf[i]);
    printf("\n");
}

int main(void)
{
    static uint8_t in[16 * 64], out[16 * 64];
    uint8_t key[16], iv[16];
    aes128_soft_key ks;
    char op;
    int in_place;
    size_t blocks;

    aes128_soft_init();
    while (scanf(" %c %d", &op, &in_place) == 2) {
        read_hex(key, 16);
        aes128_soft_expand_key(&ks, key);
        uint8_t *dst = in_place ? in : out;
        if (op == 'E') {
            read_hex(in, 16);
            aes128_soft_encrypt(&ks, in, dst);
            print_hex(dst, 16);
        } else if (op == 'C') {
            read_hex(iv, 16);
            if (scanf("%zu", &blocks) != 1 || blocks > 64)
                return 2;
            read_hex(in, 16 * blocks);
            aes128_soft_cbc_encrypt(&ks, iv, in, dst, blocks);
            print_hex(dst, 16 * blocks);
        } else {
            return 2;
        }
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    """The path of the compiled host driver."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    build = tmp_path_factory.mktemp("aes_soft")
    (build / "driver.c").write_text(DRIVER)
    binary = build / "driver"
    result = subprocess.run(
        ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(FIRMWARE),
         str(SOURCE), str(build / "driver.c"), "-o", str(binary)],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return binary


def run(driver, requests):
    result = subprocess.run([str(driver)], input="".join(line + "\n" for line in requests),
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return [bytes.fromhex(line) for line in result.stdout.splitlines()]


def encrypt(driver, pairs, *, in_place=False):
    """``aes128_soft_encrypt`` of each ``(key, block)``, all in one run of the driver."""
    return run(driver, [f"E {int(in_place)} {key.hex()} {block.hex()}" for key, block in pairs])


def cbc_encrypt(driver, key, iv, message, *, in_place=False):
    (ciphertext,) = run(driver, [f"C {int(in_place)} {key.hex()} {iv.hex()} "
                                 f"{len(message) // 16} {message.hex()}"])
    return ciphertext


def as_bytes(value):
    return value.to_bytes(16, "big")


@pytest.mark.parametrize("vector", [FIPS197_APPENDIX_B, FIPS197_APPENDIX_C[0]],
                         ids=lambda vector: vector.source)
def test_fips197_example(driver, vector):
    assert vector.key_bits == 128
    assert encrypt(driver, [(as_bytes(vector.key), as_bytes(vector.plaintext))]) \
        == [as_bytes(vector.ciphertext)]


def test_random_keys_and_blocks_match_pycryptodome(driver):
    rng = random.Random(197)
    pairs = [(rng.randbytes(16), rng.randbytes(16)) for _ in range(200)]
    expected = [AES.new(key, AES.MODE_ECB).encrypt(block) for key, block in pairs]
    assert encrypt(driver, pairs) == expected


def test_encrypt_in_place(driver):
    key, block = as_bytes(FIPS197_APPENDIX_B.key), as_bytes(FIPS197_APPENDIX_B.plaintext)
    assert encrypt(driver, [(key, block)], in_place=True) \
        == [as_bytes(FIPS197_APPENDIX_B.ciphertext)]


def test_cbc_matches_pycryptodome(driver):
    rng = random.Random(3880)
    key, iv, message = rng.randbytes(16), rng.randbytes(16), rng.randbytes(10 * 16)
    assert cbc_encrypt(driver, key, iv, message) \
        == AES.new(key, AES.MODE_CBC, iv=iv).encrypt(message)


def test_cbc_in_place(driver):
    rng = random.Random(38)
    key, iv, message = rng.randbytes(16), rng.randbytes(16), rng.randbytes(10 * 16)
    assert cbc_encrypt(driver, key, iv, message, in_place=True) \
        == AES.new(key, AES.MODE_CBC, iv=iv).encrypt(message)


def test_cbc_of_no_blocks_writes_nothing(driver):
    assert cbc_encrypt(driver, bytes(16), bytes(16), b"") == b""


def test_compiles_for_picorv32_without_library_calls(tmp_path):
    # Bare metal has no libc: an undefined symbol (a memcpy or memset the compiler made out of a
    # loop) would not link in the firmware.
    pytest.importorskip("ziglang")
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed")
    obj = tmp_path / "aes_soft.o"
    result = subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "-target", "riscv32-freestanding-none",
         "-mcpu=generic_rv32+m", "-Os", "-ffreestanding", "-nostdlib", "-std=c99",
         "-Wall", "-Wextra", "-Werror", "-c", str(SOURCE), "-o", str(obj)],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    undefined = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True)
    assert undefined.stdout.split() == []
