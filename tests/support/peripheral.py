"""Helpers of the Wishbone peripheral's tests: register fields, reference models, GCM messages
and the register writes that start a GCM decryption."""

import random

from Crypto.Cipher import AES as PyAES

from cipher_cores.cores.bus.peripheral import GCM_MODE
from cipher_cores.cores.bus.regmap import register
from cipher_cores.cores.modes.reference import process_message
from cipher_cores.cores.present.reference import decrypt_block, encrypt_block


def field(register_name, field_name, value):
    item = register(register_name).field(field_name)
    return (value & item.mask) >> item.offset


def bit(register_name, field_name):
    return register(register_name).field(field_name).mask


def present_model(mode, decrypt, key, key_bits, iv, blocks):
    return process_message(mode.name, decrypt, lambda x: encrypt_block(key, x, key_bits),
                           lambda x: decrypt_block(key, x, key_bits), iv, blocks, 64)


def gcm_reference(key, iv, aad, text):
    cipher = PyAES.new(key, PyAES.MODE_GCM, nonce=iv)
    cipher.update(aad)
    return cipher.encrypt_and_digest(text)


def random_message(seed, aad_bytes, text_bytes):
    """A random AES-128 key, 12-byte IV, AAD and text of the given lengths, and pycryptodome's
    ciphertext and tag for them."""
    rng = random.Random(seed)
    key, iv = rng.randbytes(16), rng.randbytes(12)
    aad, text = rng.randbytes(aad_bytes), rng.randbytes(text_bytes)
    return (key, iv, aad, text, *gcm_reference(key, iv, aad, text))


def as_int(key: bytes) -> int:
    return int.from_bytes(key, "big")


def padded(data: bytes) -> bytes:
    """``data`` in whole blocks, as DOUT gives it: zeros after the last byte."""
    return data + bytes(-len(data) % 16)


async def set_key(fw, key: bytes):
    await fw.set_key(int.from_bytes(key, "big"), 8 * len(key))


async def start_decryption(fw, iv, aad, text, tag):
    """The registers of a GCM decryption of ``text`` with a 16-byte ``tag``, then START (the
    data is left to the caller)."""
    await fw.set_iv(as_int(iv) << 32, 4)
    await fw.write("AAD_BYTES", len(aad))
    await fw.write("TEXT_BYTES", len(text))
    for index in range(4):
        await fw.write("TAG_EXPECTED", as_int(tag) >> (32 * index) & 0xffffffff, index)
    await fw.write("CTRL", GCM_MODE | bit("CTRL", "DECRYPT") | bit("CTRL", "START"))
