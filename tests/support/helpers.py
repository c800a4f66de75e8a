"""Test helpers shared by the suite: stream helpers, operations, the reference answers, and the
contract monitor that checks every rule of :class:`~cipher_cores.cores.interface.BlockCipherSignature`.

The reference for every AES architecture is pycryptodome (an implementation independent of ours);
for every other cipher it is the catalog entry's model (``config.encrypt`` / ``config.decrypt``).
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from typing import NamedTuple

import pytest
from amaranth.lib import wiring
from Crypto.Cipher import AES as PyCryptodomeAES

from cipher_cores.cores.aes import reference as aes_reference
from cipher_cores.cores.present.tables import KEY_SIZES as PRESENT_KEY_SIZES
from cipher_cores.cores.sim import (CipherRun, LoadKey, Process, simulate_cipher, simulator_with_reset,
                       stream_monitor)
from cipher_cores.cores.sim import put_operations
from cipher_cores.cores.sim import watchdog as _watchdog


__all__ = [
    "run_cli", "assert_one_line_error",
    "LoadKey", "Process", "CipherRun", "simulate_cipher", "simulator_with_reset", "stream_get",
    "stream_monitor", "stream_put", "pass_through",
    "aes_oracle", "ecb_encryptions", "encrypt_only_operations", "aes_entries", "reference", "expected_results", "random_operations",
    "vector_operations", "ticks", "wait_for", "pulse_reset", "run_testbench", "contract_monitor",
    "ContractRun", "run_with_contract", "key_groups", "check_idle_without_key", "check_one_block",
    "check_output_holds", "check_key_load_cycles", "present_configurations", "direction_changes",
    "RandomRun", "random_run", "is_masked",
]


#: Parametrizes a test of a PRESENT architecture over ``key_bits, decrypt``: both key sizes, each
#: integrated (encrypt and decrypt) and encrypt-only.
_PRESENT_CONFIGURATIONS = [(key_bits, decrypt) for key_bits in PRESENT_KEY_SIZES
                           for decrypt in (True, False)]
present_configurations = pytest.mark.parametrize(
    "key_bits, decrypt", _PRESENT_CONFIGURATIONS,
    ids=[f"{key_bits}-{'integrated' if decrypt else 'encrypt-only'}"
         for key_bits, decrypt in _PRESENT_CONFIGURATIONS])


async def ticks(ctx, count: int):
    """Wait ``count`` edges (0 is allowed)."""
    for _ in range(count):
        await ctx.tick()


async def wait_for(ctx, signal):
    """Wait for the first edge at which ``signal`` is high."""
    while True:
        _, _, value = await ctx.tick().sample(signal)
        if value:
            return


async def stream_put(ctx, stream, payload, *, gap: int = 0):
    """Transfer one ``payload`` on ``stream`` (driven by the testbench), after ``gap`` idle edges;
    returns once the transfer edge has passed, with ``valid`` low again.

    The same as :func:`cipher_cores.cores.sim.stream_put`, written with plain edge loops rather than
    ``tick().until()``: when a check fails mid-simulation, the testbenches left waiting are then
    closed without Amaranth's "asynchronous generator is already running" complaint, so the
    failure is reported as the assertion it is."""
    await ticks(ctx, gap)
    ctx.set(stream.valid, 1)
    ctx.set(stream.payload, payload)
    await wait_for(ctx, stream.ready)
    ctx.set(stream.valid, 0)


async def stream_get(ctx, stream, *, stall: int = 0) -> int:
    """Accept one payload from ``stream`` (driven by the design) after holding ``ready`` low for
    ``stall`` edges; returns it as an integer. (:func:`cipher_cores.cores.sim.stream_get`, as
    :func:`stream_put`.)"""
    if stall:
        ctx.set(stream.ready, 0)
        await ticks(ctx, stall)
    ctx.set(stream.ready, 1)
    while True:
        _, _, valid, payload = await ctx.tick().sample(stream.valid, stream.payload)
        if valid:
            break
    ctx.set(stream.ready, 0)
    return _as_int(payload)


def aes_oracle(key: int, key_bits: int, block: int, decrypt: bool) -> int:
    """pycryptodome's AES answer, on our integer byte order."""
    cipher = PyCryptodomeAES.new(key.to_bytes(key_bits // 8, "big"), PyCryptodomeAES.MODE_ECB)
    operate = cipher.decrypt if decrypt else cipher.encrypt
    return int.from_bytes(operate(block.to_bytes(16, "big")), "big")


def ecb_encryptions(operations, key_bits: int, *, lanes: int = 1) -> list:
    """pycryptodome's encryption of every transfer of ``operations`` under the key loaded last,
    whatever its ``decrypt`` bit says (for the encrypt-only pipelines): each of its ``lanes``
    128-bit blocks on its own (ECB), block 0 in the most significant bits."""
    results, key = [], None
    for op in operations:
        if isinstance(op, LoadKey):
            key = op.key
            continue
        blocks = [op.block >> (128 * (lanes - 1 - lane)) & ((1 << 128) - 1)
                  for lane in range(lanes)]
        result = 0
        for block in blocks:
            result = result << 128 | aes_oracle(key, key_bits, block, False)
        results.append(result)
    return results


def encrypt_only_operations(rng: random.Random, key_bits: int, *, keys: int,
                            transfers_per_key: int, lanes: int = 1) -> list:
    """Keys all zeros, all ones, then random; under each, ``transfers_per_key`` transfers of
    ``lanes`` random blocks with random ``decrypt`` bits (which an encrypt-only core ignores)."""
    operations = []
    for index in range(keys):
        key = [0, (1 << key_bits) - 1][index] if index < 2 else rng.getrandbits(key_bits)
        operations.append(LoadKey(key))
        operations += [Process(rng.getrandbits(128 * lanes), rng.random() < 0.5)
                       for _ in range(transfers_per_key)]
    return operations


def aes_entries(entries: dict) -> list:
    """The catalog entries (of ``entries``, name to ``CipherEntry``) whose block cipher is AES:
    those whose reference model is :mod:`cipher_cores.cores.aes.reference`."""
    return [entry for entry in entries.values() if entry.encrypt is aes_reference.encrypt_block]


def reference(config, key: int, block: int, decrypt: bool) -> int:
    """The expected result of one block on the core of ``config`` (a ``CoreConfig``): for every
    AES architecture pycryptodome's, otherwise the catalog entry's model's.

    An encrypt-only core (option ``decrypt=False``) encrypts every block."""
    decrypt = decrypt and config.all_options().get("decrypt", True)
    if config.spec.encrypt is aes_reference.encrypt_block:
        return aes_oracle(key, config.key_bits, block, decrypt)
    return (config.decrypt if decrypt else config.encrypt)(key, block)


def expected_results(config, operations) -> list:
    """:func:`reference` for each :class:`Process` of ``operations``, under the key before it."""
    results, key = [], None
    for op in operations:
        if isinstance(op, LoadKey):
            key = op.key
        else:
            results.append(reference(config, key, op.block, op.decrypt))
    return results


def random_operations(config, rng: random.Random, *, keys: int = 2, blocks_per_key: int = 3,
                      extreme_keys: bool = False) -> list:
    """``keys`` random keys, each followed by ``blocks_per_key`` random blocks in random
    directions. With ``extreme_keys`` the first key is all zeros and the second all ones."""
    operations = []
    for index in range(keys):
        key = rng.getrandbits(config.key_bits)
        if extreme_keys and index < 2:
            key = [0, (1 << config.key_bits) - 1][index]
        operations.append(LoadKey(key))
        for _ in range(blocks_per_key):
            operations.append(Process(rng.getrandbits(config.block_bits), rng.random() < 0.5))
    return operations


class RandomRun(NamedTuple):
    """A cached run of random keys and blocks on one configuration (:func:`random_run`)."""
    config: object
    core: object
    operations: list
    run: CipherRun


@functools.cache
def random_run(name: str, key_bits: int, *, seed, keys: int, blocks_per_key: int,
               gaps: tuple | None = None, simulate=simulate_cipher, **options) -> RandomRun:
    """Catalog entry ``name`` at ``key_bits`` with ``options``, on :func:`random_operations`
    (``keys`` keys of ``blocks_per_key`` blocks, the first two keys all zeros and all ones, from
    ``random.Random(seed)``), simulated once per session and shared by the tests that read it.
    ``gaps`` = ``(seed, max_gap, max_stall)`` adds random gaps and back-pressure; ``simulate``
    replaces :func:`simulate_cipher` (same arguments)."""
    from cipher_cores.cores.catalog import get_core
    config = get_core(name).config(key_bits, **options)
    core = config.build()
    operations = random_operations(config, random.Random(seed), keys=keys,
                                   blocks_per_key=blocks_per_key, extreme_keys=True)
    kwargs = {} if gaps is None else {"rng": random.Random(gaps[0]), "max_gap": gaps[1],
                                      "max_stall": gaps[2]}
    return RandomRun(config, core, operations, simulate(core, operations, **kwargs))


def vector_operations(config) -> list:
    """Each key of the printed vectors (FIPS-197, the PRESENT paper), then each of its vectors
    encrypted and decrypted."""
    operations = []
    vectors = config.vectors()
    for key in dict.fromkeys(vector.key for vector in vectors):
        operations.append(LoadKey(key))
        for vector in vectors:
            if vector.key == key:
                operations += [Process(vector.plaintext, False), Process(vector.ciphertext, True)]
    return operations


def key_groups(run: CipherRun, operations) -> list:
    """Per key load: (key transfer edge, [(input edge, output edge), ...] of its blocks)."""
    groups, blocks = [], iter(zip(run.input.edges, run.output.edges))
    key_edges = iter(run.key.edges)
    for op in operations:
        if isinstance(op, LoadKey):
            groups.append((next(key_edges), []))
        else:
            groups[-1][1].append(next(blocks))
    return groups


def check_key_load_cycles(core, run: CipherRun, operations):
    """Check that under each key of ``operations`` the first block transferred
    ``core.key_load_cycles`` edges after the key, and that each key after the first transferred
    one edge after the previous key's last result left (it waited for the core to be idle, no
    longer)."""
    groups = key_groups(run, operations)
    assert [blocks[0][0] - key_edge for key_edge, blocks in groups] == \
        [core.key_load_cycles] * len(groups)
    assert [key_edge for key_edge, _ in groups[1:]] == \
        [blocks[-1][1] + 1 for _, blocks in groups[:-1]]


async def pulse_reset(ctx, rst):
    """Hold the ``sync`` reset high for one edge."""
    ctx.set(rst, 1)
    await ctx.tick()
    ctx.set(rst, 0)


def run_testbench(core, testbench, *, monitor: list | None = None, max_edges: int | None = None):
    """Simulate ``core`` with ``testbench(ctx, rst)``, where ``rst`` resets the core. With a
    ``monitor`` list, :func:`contract_monitor` runs beside it and appends to that list.

    The simulation fails (:exc:`RuntimeError`) after ``max_edges`` edges, by default 100 times
    a key load and a block plus 64 for a cipher core (a testbench waiting for a handshake that
    never comes fails instead of hanging the test run)."""
    sim, rst = simulator_with_reset(core)
    if monitor is not None:
        sim.add_testbench(contract_monitor(core, monitor), background=True)
    if max_edges is None and hasattr(core, "latency") and hasattr(core, "key_load_cycles"):
        max_edges = 100 * (core.latency + core.key_load_cycles + 64)
    if max_edges is not None:
        watchdog = _watchdog(max_edges)

        sim.add_testbench(watchdog, background=True)

    async def wrapped(ctx):
        await testbench(ctx, rst)

    sim.add_testbench(wrapped)
    sim.run()


async def check_idle_without_key(ctx, core, edges: int, when: str = ""):
    """With a block offered and no key loaded, check for ``edges`` edges that the core takes no
    block, shows no output and is ready for a key; ``when`` goes into the failure messages."""
    when = f" ({when})" if when else ""
    ctx.set(core.input.valid, 1)
    ctx.set(core.input.payload, {"block": 0x0123456789abcdef, "decrypt": 0})
    for _ in range(edges):
        assert not ctx.get(core.input.ready), f"input.ready before a key{when}"
        assert not ctx.get(core.output.valid), f"output.valid with no block{when}"
        assert ctx.get(core.key.ready), f"key.ready low in an idle core{when}"
        await ctx.tick()
    ctx.set(core.input.valid, 0)


async def check_one_block(ctx, config, core, key: int, block: int, decrypt: bool = False):
    """Load ``key``, process ``block`` and check the result against :func:`reference`."""
    await stream_put(ctx, core.key, key)
    await stream_put(ctx, core.input, {"block": block, "decrypt": int(decrypt)})
    assert await stream_get(ctx, core.output) == reference(config, key, block, decrypt), \
        "result differs from the reference"


async def check_output_holds(ctx, config, core, key: int, block: int, decrypt: bool = False, *,
                             edges: int = 20):
    """Process ``block`` under ``key`` with a second block (0, encrypted) offered behind it and
    ``output.ready`` low: for ``edges`` edges the result holds and the second block waits; then
    the second block enters on the edge where the result leaves, and its result follows."""
    await stream_put(ctx, core.key, key)
    await stream_put(ctx, core.input, {"block": block, "decrypt": int(decrypt)})
    ctx.set(core.input.valid, 1)
    ctx.set(core.input.payload, {"block": 0, "decrypt": 0})
    await wait_for(ctx, core.output.valid)
    for _ in range(edges):
        assert ctx.get(core.output.valid), "output.valid dropped before the transfer"
        assert ctx.get(core.output.payload) == reference(config, key, block, decrypt), \
            "output.payload is not the reference's result"
        assert not ctx.get(core.input.ready), "input.ready while the result waits"
        await ctx.tick()
    ctx.set(core.output.ready, 1)
    assert ctx.get(core.input.ready), "input.ready low on the edge where the result leaves"
    await ctx.tick()
    ctx.set(core.input.valid, 0)
    assert not ctx.get(core.output.valid), "output.valid after the transfer"
    assert await stream_get(ctx, core.output) == reference(config, key, 0, False), \
        "second result differs from the reference"


def _as_int(value) -> int:
    if hasattr(value, "as_value"):
        return value.as_value().value
    return int(value)


def contract_monitor(core, violations: list):
    """A background testbench checking, at every edge, the rules of the contract that can be
    seen on the core's ports; each break is appended to ``violations`` as
    ``"edge N: <rule>"``:

    * ``output.valid dropped before the transfer`` / ``output.payload changed while valid``;
    * ``output.valid with no block in flight``;
    * ``key.ready while a block is in flight``;
    * ``input.ready before the first key``;
    * ``input.ready while key.valid``.

    A reset (the ``sync`` domain's) empties the core: no block in flight, no key.
    """
    async def monitor(ctx):
        watched = [core.key.valid, core.key.ready, core.input.valid, core.input.ready,
                   core.output.valid, core.output.ready, core.output.payload]
        in_flight, key_loaded, pending, edge = 0, False, None, 0
        async for clk, rst, *values in ctx.tick().sample(*watched):
            edge += 1
            key_valid, key_ready, input_valid, input_ready, out_valid, out_ready, payload = values
            payload = _as_int(payload)
            if rst:
                in_flight, key_loaded, pending = 0, False, None
                continue

            def fail(rule):
                violations.append(f"edge {edge}: {rule}")

            if pending is not None:
                if not out_valid:
                    fail("output.valid dropped before the transfer")
                elif payload != pending:
                    fail("output.payload changed while valid")
            if out_valid and in_flight == 0:
                fail("output.valid with no block in flight")
            if key_ready and in_flight > 0:
                fail("key.ready while a block is in flight")
            if input_ready and not key_loaded:
                fail("input.ready before the first key")
            if input_ready and key_valid:
                fail("input.ready while key.valid")

            pending = payload if out_valid and not out_ready else None
            if out_valid and out_ready:
                in_flight -= 1
            if input_valid and input_ready:
                in_flight += 1
            if key_valid and key_ready:
                key_loaded = True
    return monitor


@dataclass
class ContractRun:
    """The outcome of :func:`run_with_contract`: the :class:`CipherRun` and the rules broken."""
    run: CipherRun
    violations: list = field(default_factory=list)


def run_with_contract(core, operations, *, rng: random.Random | None = None, max_gap: int = 0,
                      max_stall: int = 0, max_edges: int | None = None) -> ContractRun:
    """Like :func:`~cipher_cores.cores.sim.simulate_cipher` (same producer and consumer, gaps and stalls from
    ``rng``), with :func:`contract_monitor` running beside it. With ``max_stall``, the consumer
    always holds the second result back for ``max_stall`` edges, so every run has back-pressure."""
    operations = list(operations)
    blocks = sum(isinstance(op, Process) for op in operations)
    rng = random.Random(0) if rng is None else rng
    gaps = [rng.randint(0, max_gap) for _ in operations]
    stalls = [rng.randint(0, max_stall) for _ in range(blocks)]
    if max_stall and blocks > 1:
        stalls[1] = max_stall           # so that every run exercises back-pressure
    if max_edges is None:
        per_operation = core.latency + core.key_load_cycles + max_gap + max_stall + 8
        max_edges = 4 * (len(operations) + 4) * per_operation
    logs, violations = {}, []

    async def producer(ctx, rst):
        await put_operations(ctx, core, operations, gaps)

    async def consumer(ctx):
        for stall in stalls:
            await stream_get(ctx, core.output, stall=stall)
        await ctx.tick()

    watchdog = _watchdog(max_edges)

    sim, rst = simulator_with_reset(core)
    sim.add_testbench(stream_monitor({"key": core.key, "input": core.input,
                                      "output": core.output}, logs), background=True)
    sim.add_testbench(contract_monitor(core, violations), background=True)
    sim.add_testbench(watchdog, background=True)

    async def run_producer(ctx):
        await producer(ctx, rst)

    sim.add_testbench(run_producer)
    sim.add_testbench(consumer)
    sim.run()
    run = CipherRun(key=logs["key"], input=logs["input"], output=logs["output"])
    return ContractRun(run, violations)


def pass_through(m, outer, core):
    """Connect ``outer``'s key, input and output streams (a wrapper with the core's signature)
    straight to ``core``'s."""
    wiring.connect(m, wiring.flipped(outer.key), core.key)
    wiring.connect(m, wiring.flipped(outer.input), core.input)
    wiring.connect(m, core.output, wiring.flipped(outer.output))


def direction_changes(vector) -> tuple:
    """Operations and expected results for a known-answer ``vector`` (``key``, ``plaintext``,
    ``ciphertext``): after the key, a decryption, two encryptions and two decryptions, so every
    change of direction and every repeat of one is taken."""
    plaintext, ciphertext = vector.plaintext, vector.ciphertext
    operations = [LoadKey(vector.key), Process(ciphertext, decrypt=True),
                  Process(plaintext, decrypt=False), Process(plaintext, decrypt=False),
                  Process(ciphertext, decrypt=True), Process(ciphertext, decrypt=True)]
    return operations, [plaintext, ciphertext, ciphertext, plaintext, plaintext]


# --- the command line ---------------------------------------------------------------------------

def run_cli(capsys, *argv):
    """Run ``cipher-cores argv...`` in this process: ``(exit code, stdout, stderr)``."""
    from cipher_cores.scripts.cli import main
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code, err, message):
    """The command failed with exit 1 and one line on stderr that contains ``message``."""
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("cipher-cores")
    assert message in lines[0], lines[0]
    assert "Traceback" not in err


def is_masked(config) -> bool:
    """Whether cores of ``config`` are masked (take a ``random`` stream)."""
    core = config.build()
    core._MustUse__silence = True       # built only to read its signature
    return core.random_bits > 0

