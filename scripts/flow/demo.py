"""The demo: a core simulated on the known answers printed in its standard, with its cycle counts.

:func:`run_demo` simulates one configuration of the catalog **once**, in Amaranth's simulator,
on the vectors printed in its standard (FIPS-197 Appendix B and C for AES, the PRESENT paper's
table): each key is loaded once, then the plaintexts under it are encrypted back to back and
the ciphertexts decrypted back to back. The cycle counts come from the same run, so the demo
needs no other simulation:

* latency: from the first block's input transfer to its output transfer, right after the first
  key load (the first decryption's likewise, after the encryptions of its key);
* cycles per block: the interval between the outputs of two blocks offered back to back (the
  first key that has two vectors; a key with one vector has its block offered twice);
* key load to first block: from the first key transfer to the first input transfer.

An encrypt-only configuration (``decrypt=no``) has no decryption path: it only encrypts, and
:class:`DemoRun` says so (:attr:`DemoRun.decrypts`). An entry without printed vectors is run on
two random blocks, checked against its reference model.

Why one run: building a simulator costs more than the few hundred cycles a round-based core
needs for a block, and a serial core needs thousands of cycles a block, so each block and each
simulator counts (``cipher-cores demo`` used to take 102 s with four simulations per
configuration and six random blocks each way).
"""

from __future__ import annotations

import random
from dataclasses import dataclass


__all__ = ["DemoVector", "DemoRun", "run_demo", "demo_lines"]


@dataclass(frozen=True)
class DemoVector:
    """One known answer as the demo ran it: what it expected and what the core gave.

    ``decrypted`` and ``decrypt_latency`` are ``None`` for an encrypt-only core."""
    key: int
    plaintext: int
    expected: int
    ciphertext: int
    latency: int
    decrypted: int | None
    decrypt_latency: int | None
    source: str = ""

    @property
    def ok(self) -> bool:
        """Whether the ciphertext is the expected one, and the decryption (if any) gives the
        plaintext back."""
        return self.ciphertext == self.expected and self.decrypted in (None, self.plaintext)


@dataclass(frozen=True)
class DemoRun:
    """What :func:`run_demo` saw for one configuration (edges of the ``sync`` clock)."""
    label: str
    block_bits: int
    key_bits: int
    decrypts: bool
    vectors: tuple
    cycles_per_block: int
    cycles_per_block_decrypt: int | None
    latency: int
    latency_decrypt: int | None
    key_to_input: int
    #: Whether the blocks offered again to measure the interval gave the right results too.
    repeats_ok: bool = True

    @property
    def ok(self) -> bool:
        return self.repeats_ok and all(vector.ok for vector in self.vectors)

    @property
    def mismatches(self) -> int:
        return sum(not vector.ok for vector in self.vectors) + (not self.repeats_ok)


def _known_answers(config) -> list:
    """``(key, plaintext, ciphertext, source)`` for each vector printed for ``config``'s key size,
    or two random blocks under one random key (answers from the reference model) if none is."""
    printed = [(v.key, v.plaintext, v.ciphertext, v.source) for v in config.vectors()]
    if printed:
        return printed
    rng = random.Random(f"demo-{config.text}")
    key = rng.getrandbits(config.key_bits)
    blocks = [rng.getrandbits(config.block_bits) for _ in range(2)]
    return [(key, block, config.encrypt(key, block), "random block, reference model")
            for block in blocks]


def run_demo(config) -> DemoRun:
    """Simulate ``config`` (a :class:`~cipher_cores.cores.catalog.CoreConfig`) on its known
    answers in one run of Amaranth's simulator (see the module's description) and return what
    it saw."""
    from cipher_cores.cores.sim import LoadKey, Process, simulate_cipher

    answers = _known_answers(config)
    decrypts = config.decrypts
    by_key = {}
    for index, (key, *_) in enumerate(answers):
        by_key.setdefault(key, []).append(index)
    # Blocks offered twice to time two in a row, when no key has two vectors.
    repeat_key = next((key for key, indices in by_key.items() if len(indices) > 1), None)
    if repeat_key is None:
        repeat_key = answers[-1][0]
    directions = (False, True) if decrypts else (False,)
    operations = []
    # For each output, in order: (vector index, decrypt, expected result, offered again).
    outputs = []
    pairs = {}          # direction -> the positions of the two outputs timed back to back
    for key, indices in by_key.items():
        operations.append(LoadKey(key))
        offered = indices * 2 if key == repeat_key and len(indices) == 1 else indices
        for decrypt in directions:
            if key == repeat_key:
                pairs[decrypt] = (len(outputs), len(outputs) + 1)
            for count, index in enumerate(offered):
                _, plain, cipher, _ = answers[index]
                block, expected = (cipher, plain) if decrypt else (plain, cipher)
                operations.append(Process(block, decrypt=decrypt))
                outputs.append((index, decrypt, expected, count >= len(indices)))
    run = simulate_cipher(config.build(), operations)
    results, latencies, edges = run.results, run.latencies, run.output.edges

    def figures(decrypt):
        """The first latency in this direction, and the interval of the back-to-back pair."""
        first = next(n for n, output in enumerate(outputs) if output[1] == decrypt)
        one, two = pairs[decrypt]
        return latencies[first], edges[two] - edges[one]

    vectors = []
    for index, (key, plain, cipher, source) in enumerate(answers):
        encrypted = outputs.index((index, False, cipher, False))
        decrypted = outputs.index((index, True, plain, False)) if decrypts else None
        vectors.append(DemoVector(
            key=key, plaintext=plain, expected=cipher, ciphertext=results[encrypted],
            latency=latencies[encrypted],
            decrypted=None if decrypted is None else results[decrypted],
            decrypt_latency=None if decrypted is None else latencies[decrypted], source=source))
    repeats_ok = all(result == expected
                     for (_, _, expected, again), result in zip(outputs, results) if again)
    latency, interval = figures(False)
    latency_decrypt, interval_decrypt = figures(True) if decrypts else (None, None)
    return DemoRun(
        label=config.label, block_bits=config.block_bits, key_bits=config.key_bits,
        decrypts=decrypts, vectors=tuple(vectors), cycles_per_block=interval,
        cycles_per_block_decrypt=interval_decrypt, latency=latency,
        latency_decrypt=latency_decrypt, key_to_input=run.input.edges[0] - run.key.edges[0],
        repeats_ok=repeats_ok)


def demo_lines(run: DemoRun) -> list:
    """The lines ``cipher-cores demo`` prints for ``run``: each vector with its result and
    latency, then the cycle counts."""
    hex_block, hex_key = (run.block_bits + 3) // 4, (run.key_bits + 3) // 4
    lines = []
    if not run.decrypts:
        lines.append(f"{run.label}: encrypt-only (built without a decryption path), so the "
                     f"vectors are only encrypted")
    for vector in run.vectors:
        verdict = "OK" if vector.ok else "MISMATCH"
        source = f"  [{vector.source}]" if vector.source else ""
        lines.append(f"{run.label}  key {vector.key:0{hex_key}x}{source}")
        lines.append(f"    plaintext  {vector.plaintext:0{hex_block}x}")
        lines.append(f"    ciphertext {vector.ciphertext:0{hex_block}x}  (expected "
                     f"{vector.expected:0{hex_block}x}, {vector.latency} cycles)"
                     + ("" if run.decrypts else f"  {verdict}"))
        if run.decrypts:
            lines.append(f"    decrypted  {vector.decrypted:0{hex_block}x}  "
                         f"({vector.decrypt_latency} cycles)  {verdict}")
    per_block = f"{run.cycles_per_block} cycle{'s' if run.cycles_per_block != 1 else ''}"
    if run.decrypts:
        cycles = (f"{per_block} per block back to back (decrypt "
                  f"{run.cycles_per_block_decrypt}), latency {run.latency} (decrypt "
                  f"{run.latency_decrypt})")
    else:
        cycles = f"{per_block} per block back to back, latency {run.latency} (encrypt-only)"
    lines.append(f"  {run.label}: {cycles}, key load to first block {run.key_to_input}")
    if not run.repeats_ok:
        lines.append(f"  {run.label}: MISMATCH on a block offered again to time two in a row")
    return lines
