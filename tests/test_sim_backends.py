# amaranth: UnusedElaboratable=no
"""The two back ends of :func:`cipher_cores.cores.sim.simulate_cipher` agree cycle for cycle.

For every catalog configuration, a short random run with key changes, random gaps and stalls
gives the same :class:`~cipher_cores.cores.sim.CipherRun` (results, every transfer edge and payload, and
stream-rule violations) on Amaranth's simulator and on the compiled CXXRTL model (one of each
architecture in the default run, all of them with ``-m slow``). A core that breaks the stream
rules on purpose checks that violations are found alike. The first run compiles each model (5 to
15 s of CPU for most, 25 s for AES with Boolean S-boxes, 1 to 2 minutes for PRESENT with 16 or 31
rounds per cycle); later runs take it from the cache.
"""

import random
import threading

from amaranth.hdl import Module, Signal
import pytest

from cipher_cores.cores.aes import AES
from cipher_cores.cores.cipher import BlockCipher
from cipher_cores.cores.catalog import configurations
from cipher_cores.cores.present import PRESENT
from cipher_cores.cores.sim import BACKENDS, LoadKey, Process, draw_schedules, simulate_cipher
from cipher_cores.cores.sim import cxxrtl as sim_cxxrtl


def random_operations(rng, key_bits, block_bits, keys=2, blocks=3):
    operations = []
    for _ in range(keys):
        operations.append(LoadKey(rng.getrandbits(key_bits)))
        operations += [Process(rng.getrandbits(block_bits), rng.random() < 0.5)
                       for _ in range(blocks)]
    return operations


def runs_on_both_backends(core, operations, **kwargs):
    return [simulate_cipher(core, operations, rng=random.Random(7), backend=backend, **kwargs)
            for backend in BACKENDS]


#: Compiling a model takes 4 to 25 s of CPU (1 to 2 minutes for PRESENT with 16 or 31 rounds
#: unrolled, or pipelined), and CI starts with an empty cache. The default run checks these, one
#: of each architecture, S-box kind and direction set; ``-m slow`` checks every catalog
#: configuration.
DEFAULT_RUN = {"aes-128", "aes-192:sbox=boolean", "present-80", "present-80:decrypt=no",
               "present-80:rounds_per_cycle=4", "present-serial-80", "aes-pipelined-128",
               "aes-ttable-128", "aes-compact-128"}
CONFIGS = [pytest.param(config, id=config.slug,
                        marks=() if config.text in DEFAULT_RUN else pytest.mark.slow)
           for config in configurations()]


def test_the_default_run_covers_each_architecture():
    texts = {param.values[0].text for param in CONFIGS}
    assert DEFAULT_RUN <= texts


@pytest.mark.parametrize("config", CONFIGS)
def test_backends_agree_on_every_configuration(config):
    core = config.build()
    rng = random.Random(f"agree-{config.text}")
    operations = random_operations(rng, config.key_bits, config.block_bits)
    python, cxxrtl = runs_on_both_backends(core, operations, max_gap=4,
                                           max_stall=2 * core.latency)
    assert cxxrtl == python
    assert len(python.results) == 6 and python.output.violations == []


@pytest.mark.parametrize("make_core, key_bits, block_bits", [
    (lambda: AES(128), 128, 128),
    (lambda: PRESENT(80), 80, 64),
], ids=["aes128", "present80"])
def test_backends_agree_at_full_speed(make_core, key_bits, block_bits):
    """Without gaps or stalls: ``output.ready`` held high, blocks back to back."""
    operations = random_operations(random.Random("full-speed"), key_bits, block_bits, blocks=4)
    python, cxxrtl = runs_on_both_backends(make_core(), operations)
    assert cxxrtl == python


class ShakyCore(BlockCipher):
    """A toy cipher (block XOR key, 8 bits) whose output breaks the stream rules on purpose:
    while a result waits for ``ready``, ``valid`` drops on every fourth edge and the payload
    is incremented on others."""
    # Its figures if its output kept the rules (they only bound the simulation's length).
    latency = 1
    initiation_interval = 2
    key_load_cycles = 1

    def __init__(self):
        super().__init__(8, 8)

    def elaborate(self, platform):
        m = Module()
        key, result, full, wait = Signal(8), Signal(8), Signal(), Signal(2)
        m.d.comb += [
            self.key.ready.eq(~full),
            self.input.ready.eq(~full & ~self.key.valid),
            self.output.valid.eq(full & (wait != 3)),
            self.output.payload.eq(result),
        ]
        with m.If(self.key.valid & self.key.ready):
            m.d.sync += key.eq(self.key.payload)
        with m.If(full):
            m.d.sync += wait.eq(wait + 1)
            with m.If(wait == 1):
                m.d.sync += result.eq(result + 1)
        with m.If(self.input.valid & self.input.ready):
            m.d.sync += [result.eq(self.input.payload.block ^ key), full.eq(1), wait.eq(0)]
        with m.If(self.output.valid & self.output.ready):
            m.d.sync += full.eq(0)
        return m


def test_backends_find_the_same_violations():
    operations = random_operations(random.Random("shaky"), 8, 8, keys=3, blocks=5)
    python, cxxrtl = runs_on_both_backends(ShakyCore(), operations, max_gap=3, max_stall=9)
    assert python.output.violations != []
    assert cxxrtl == python


def test_schedules_are_drawn_up_front_in_a_fixed_order():
    operations = [LoadKey(1), Process(2), Process(3), LoadKey(4), Process(5)]
    rng = random.Random(3)
    expected_gaps = [rng.randint(0, 5) for _ in operations]
    expected_stalls = [rng.randint(0, 9) for _ in range(3)]
    assert draw_schedules(operations, random.Random(3), 5, 9) == (expected_gaps, expected_stalls)
    assert draw_schedules(operations, random.Random(3), 0, 0) == ([0] * 5, None)


def test_unknown_backend_is_rejected():
    with pytest.raises(ValueError, match=r"^Simulation backend must be one of 'python', "
                                         r"'cxxrtl', not 'verilator'$"):
        simulate_cipher(PRESENT(80), [LoadKey(0)], backend="verilator")


def test_vcd_needs_the_python_backend(tmp_path):
    with pytest.raises(ValueError, match=r"^A VCD file can only be written by the 'python' "
                                         r"backend, not 'cxxrtl'$"):
        simulate_cipher(PRESENT(80), [LoadKey(0)], backend="cxxrtl", vcd=str(tmp_path / "a.vcd"))


def test_cache_is_reused(tmp_path, monkeypatch):
    """The second run takes the model from the cache: nothing is converted or compiled."""
    monkeypatch.setenv(sim_cxxrtl.CACHE_ENV, str(tmp_path))
    operations = [LoadKey(0x5a), Process(0x33), Process(0x0f, decrypt=True)]
    first = simulate_cipher(ShakyCore(), operations, backend="cxxrtl")
    assert len(list(tmp_path.glob("*.model"))) == 1

    def no_build(*args):
        raise AssertionError("the model was built again")
    monkeypatch.setattr(sim_cxxrtl, "_build", no_build)
    assert simulate_cipher(ShakyCore(), operations, backend="cxxrtl") == first
    model = sim_cxxrtl.compile_model(ShakyCore())
    assert not model.compiled and model.path.parent == tmp_path


def test_concurrent_builds_of_one_model_compile_it_once(tmp_path):
    """Two builders of the same model at once (as two pytest-xdist workers would be): one
    compiles, the other waits for it and takes the result."""
    models = []

    def build():
        models.append(sim_cxxrtl.compile_model(ShakyCore(), cache_dir=tmp_path))
    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(model.compiled for model in models) == [False, True]
    assert models[0].path == models[1].path and models[0].path.exists()
    assert [path.name for path in tmp_path.iterdir() if path.is_dir()] == []


def test_compiler_failure_names_the_step(tmp_path, monkeypatch):
    monkeypatch.setenv(sim_cxxrtl.CXX_ENV, "false")
    with pytest.raises(RuntimeError, match=r"^CXXRTL model: compile \(false\) failed with exit "
                                           r"code 1; log:"):
        sim_cxxrtl.compile_model(ShakyCore(), cache_dir=tmp_path)
    assert [path.name for path in tmp_path.iterdir() if path.suffix != ".lock"] == []


def test_yosys_failure_names_the_step_and_shows_its_log(tmp_path, monkeypatch):
    monkeypatch.setattr(sim_cxxrtl, "_YOSYS_SCRIPT", "read_rtlil missing.il\n")
    with pytest.raises(RuntimeError, match=r"(?s)^CXXRTL model: yosys \(write_cxxrtl\) failed "
                                           r".*missing\.il"):
        sim_cxxrtl.compile_model(ShakyCore(), cache_dir=tmp_path)


def test_timeout_is_reported_with_the_python_backend_message():
    with pytest.raises(RuntimeError, match=r"^simulation did not finish within 20 edges$"):
        simulate_cipher(PRESENT(80), [LoadKey(0), Process(0)], max_edges=20, backend="cxxrtl")


@pytest.mark.parametrize("backend", BACKENDS)
def test_unknown_operation_is_rejected_before_simulating(backend):
    with pytest.raises(TypeError, match=r"^Operation must be a LoadKey or a Process, not "
                                        r"ProcessPrevious\(decrypt=False\)$"):
        simulate_cipher(PRESENT(80), [LoadKey(0), sim_cxxrtl.ProcessPrevious()], backend=backend)
