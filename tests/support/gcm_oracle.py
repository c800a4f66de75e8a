"""AES-GCM against pycryptodome: random messages with pycryptodome's answers, and the check of a
simulated run (:func:`cipher_cores.cores.gcm.sim.simulate_gcm`) against them."""

from Crypto.Cipher import AES as PyCryptodomeAES

from cipher_cores.cores.gcm.core import MIN_TAG_BYTES
from cipher_cores.cores.gcm.sim import GCMMessage
from cipher_cores.cores.sim import LoadKey


__all__ = ["pycryptodome_gcm", "random_operations", "check_against_pycryptodome"]


def pycryptodome_gcm(key: bytes, iv: bytes, aad: bytes, plaintext: bytes):
    """pycryptodome's ``(ciphertext, 16-byte tag)`` of ``plaintext`` with ``aad`` under ``key``
    and ``iv``."""
    cipher = PyCryptodomeAES.new(key, PyCryptodomeAES.MODE_GCM, nonce=iv)
    cipher.update(aad)
    return cipher.encrypt_and_digest(plaintext)


def random_operations(rng, key_bits, messages):
    """Random keys and messages, each encrypted and its ciphertext decrypted, with tags of every
    length and some forged; returns the operations and what pycryptodome expects of each."""
    operations, expected = [], []
    key = None
    for index in range(messages):
        if key is None or rng.random() < 0.3:
            key = rng.randbytes(key_bits // 8)
            operations.append(LoadKey(int.from_bytes(key, "big")))
        iv = rng.randbytes(rng.choice((12, 12, 12, 1, 7, 16, 17, 33)))
        aad = rng.randbytes(rng.choice((0, 0, 1, 15, 16, 17, rng.randrange(70))))
        text = rng.randbytes(rng.choice((0, 1, 15, 16, 17, 32, rng.randrange(90))))
        ciphertext, tag = pycryptodome_gcm(key, iv, aad, text)
        operations.append(GCMMessage(iv, aad, text))
        expected.append((ciphertext, int.from_bytes(tag, "big"), False))
        length = rng.randrange(MIN_TAG_BYTES, 17)
        forge = rng.random() < 0.4
        given = bytearray(tag[:length])
        if forge:
            given[rng.randrange(length)] ^= 1 << rng.randrange(8)
        operations.append(GCMMessage(iv, aad, ciphertext, decrypt=True, tag=bytes(given)))
        expected.append((text, 0, not forge))
    return operations, expected


def check_against_pycryptodome(run, expected):
    """Each message of ``run`` gave what :func:`random_operations` expects (text, tag and
    authenticity), the streams kept their rules, and every message's tag came after its text."""
    got = [(message.text, message.tag, message.authentic) for message in run.messages]
    assert got == expected
    assert run.violations == {}
    for message in run.messages:
        assert all(edge < message.tag_edge for edge in message.output_edges)
