# amaranth: UnusedElaboratable=no
"""The board self-test in simulation: known answers and the encrypt-then-decrypt loop pass on a
working core and fail when a fault is injected; the UART prints the summary."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from cipher_cores.cores.catalog import parse_config
from cipher_cores.cores.randomized import RandomizedCore
from cipher_cores.cores.selftest import (FAULTS, SelfTest, SummaryPrinter, UARTTransmitter, lfsr_next,
                            lfsr_taps, selftest_parameters, summary_text, uart_decode)

from .support.toy_cipher import ToyCipher


# These tests use the toy cipher of tests/support/toy_cipher.py as core "toy".
pytestmark = pytest.mark.usefixtures("toy_in_catalog")


FIGURES = ("done", "passed", "failed", "kat_passed", "loop_count", "loop_errors", "checksum_ok")


def run_selftest(selftest, max_edges=200_000):
    outcome = {}

    async def testbench(ctx):
        edges = 0
        while not ctx.get(selftest.done):
            await ctx.tick()
            edges += 1
            assert edges < max_edges, "self-test did not finish"
        outcome.update({name: ctx.get(getattr(selftest, name)) for name in FIGURES})
        outcome["edges"] = edges

    sim = Simulator(selftest)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    return outcome


def test_lfsr_model_is_maximal_for_a_small_run():
    # No repeated state in the first thousands of steps, and never zero.
    for width in (64, 128):
        seen = set()
        state = 1
        for _ in range(5000):
            assert state not in seen and state != 0
            seen.add(state)
            state = lfsr_next(state, width)
        assert lfsr_taps(width)[0] == width


def test_toy_core_passes():
    selftest = SelfTest.for_config(parse_config("toy"), loop_blocks=12, check_blocks=4)
    outcome = run_selftest(selftest)
    assert outcome["passed"] == 1 and outcome["failed"] == 0
    assert outcome["kat_passed"] == len(selftest.vectors)
    assert outcome["loop_count"] == 12
    assert outcome["checksum_ok"] == 1


def test_kat_fault_fails():
    selftest = SelfTest.for_config(parse_config("toy"), loop_blocks=4, fault="kat")
    outcome = run_selftest(selftest)
    assert outcome["passed"] == 0 and outcome["failed"] == 1
    assert outcome["kat_passed"] == len(selftest.vectors) - 1
    assert outcome["loop_errors"] == 0


def test_loop_fault_fails():
    selftest = SelfTest.for_config(parse_config("toy"), loop_blocks=6, fault="loop")
    outcome = run_selftest(selftest)
    assert outcome["passed"] == 0 and outcome["failed"] == 1
    assert outcome["kat_passed"] == len(selftest.vectors)
    assert outcome["loop_errors"] == 1


def test_checksum_catches_a_wrong_expected_value():
    config = parse_config("toy")
    parameters = selftest_parameters(config, loop_blocks=4)
    parameters["check_value"] ^= 1
    outcome = run_selftest(SelfTest(config.build(), **parameters))
    assert outcome["failed"] == 1 and outcome["checksum_ok"] == 0 and outcome["loop_errors"] == 0


def test_selftest_arguments_are_checked():
    config = parse_config("toy")
    with pytest.raises(ValueError, match="fault must be one of None, 'kat', 'loop', not 'x'"):
        SelfTest.for_config(config, fault="x")
    with pytest.raises(ValueError, match="loop_blocks must be a positive integer, not 0"):
        SelfTest.for_config(config, loop_blocks=0)
    assert set(FAULTS) == {None, "kat", "loop"}


def real_core(name):
    return parse_config(name)


@pytest.mark.parametrize("name", ["aes-128", "aes-bram-128", "present-80", "present-128"])
def test_real_core_passes(name):
    config = real_core(name)
    selftest = SelfTest.for_config(config, loop_blocks=8, check_blocks=8)
    outcome = run_selftest(selftest)
    assert outcome["passed"] == 1, outcome
    # Every standard vector, encrypted and decrypted.
    assert outcome["kat_passed"] == 2 * len(config.vectors()) > 0


@pytest.mark.parametrize("fault", ["kat", "loop"])
def test_real_core_fault_fails(fault):
    config = real_core("present-80")
    outcome = run_selftest(SelfTest.for_config(config, loop_blocks=4, fault=fault))
    assert outcome["failed"] == 1 and outcome["passed"] == 0


def test_encrypt_only_core_passes_on_encryption_alone():
    config = parse_config("present-80:decrypt=no")
    selftest = SelfTest.for_config(config, loop_blocks=6, check_blocks=4)
    outcome = run_selftest(selftest)
    assert outcome["passed"] == 1, outcome
    # Each printed vector once, encrypted; nothing asks the core to decrypt.
    assert outcome["kat_passed"] == len(config.vectors()) == 4
    assert all(decrypt == 0 for _, _, decrypt, _ in selftest.vectors)


def test_encrypt_only_loop_fault_fails_by_the_checksum():
    config = parse_config("present-80:decrypt=no")
    outcome = run_selftest(SelfTest.for_config(config, loop_blocks=6, check_blocks=4,
                                               fault="loop"))
    assert outcome["failed"] == 1 and outcome["checksum_ok"] == 0 and outcome["loop_errors"] == 0


# Masked cores run inside a RandomizedCore: the self-test checks results, the PRNG feeds masks.

@pytest.mark.parametrize("name", ["present-masked-80",
                                  pytest.param("aes-masked-128", marks=pytest.mark.slow)])
def test_masked_core_passes_fed_by_a_prng(name):
    config = parse_config(name)
    selftest = SelfTest.for_config(config, loop_blocks=4, check_blocks=4, rng_seed=12345)
    assert isinstance(selftest.core, RandomizedCore) and selftest.core.seed == 12345
    outcome = run_selftest(selftest)
    assert outcome["passed"] == 1, outcome
    # Each printed vector once, encrypted: the masked cores only encrypt.
    assert outcome["kat_passed"] == len(config.vectors()) > 0
    assert outcome["loop_count"] == 4 and outcome["checksum_ok"] == 1


@pytest.mark.parametrize("fault", ["kat", "loop"])
def test_masked_core_fault_fails(fault):
    config = parse_config("present-masked-80")
    outcome = run_selftest(SelfTest.for_config(config, loop_blocks=4, fault=fault))
    assert outcome["failed"] == 1 and outcome["passed"] == 0
    assert outcome["kat_passed"] == len(config.vectors()) - (fault == "kat")
    assert outcome["checksum_ok"] == (fault == "kat")


def test_rng_seed_is_checked():
    with pytest.raises(ValueError, match=r"^rng_seed must be an integer in 0\.\.2\*\*160-1, "
                                         r"not -1$"):
        SelfTest(ToyCipher(), vectors=[(0, 0, 0, 0)], loop_key=0, loop_blocks=1, check_value=0,
                 check_blocks=1, rng_seed=-1)


def test_uart_transmits_bytes():
    uart = UARTTransmitter(divisor=4)
    samples = []

    async def producer(ctx):
        for byte in b"OK\n":
            ctx.set(uart.data.valid, 1)
            ctx.set(uart.data.payload, byte)
            await ctx.tick().until(uart.data.ready)
        ctx.set(uart.data.valid, 0)

    async def sampler(ctx):
        async for _, _, tx in ctx.tick().sample(uart.tx):
            samples.append(tx)

    sim = Simulator(uart)
    sim.add_clock(1e-8)
    sim.add_testbench(producer)
    sim.add_testbench(sampler, background=True)
    sim.run_until(1e-8 * 200)
    assert uart_decode(samples, 4) == b"OK\n"


def test_uart_divisor_is_checked():
    with pytest.raises(ValueError, match="divisor must be a positive integer, not 0"):
        UARTTransmitter(divisor=0)


class _PrinterBench(wiring.Component):
    """A SelfTest's summary, printed through a UART, as one testable unit."""
    def __init__(self, selftest, title):
        self.selftest = selftest
        self.printer = SummaryPrinter(title, len(selftest.vectors))
        self.uart = UARTTransmitter(divisor=2)
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.selftest = self.selftest
        m.submodules.printer = self.printer
        m.submodules.uart = self.uart
        wiring.connect(m, self.printer.data, self.uart.data)
        m.d.comb += [
            self.printer.start.eq(self.selftest.done),
            self.printer.kat_passed.eq(self.selftest.kat_passed),
            self.printer.loop_count.eq(self.selftest.loop_count),
            self.printer.loop_errors.eq(self.selftest.loop_errors),
            self.printer.checksum_ok.eq(self.selftest.checksum_ok),
        ]
        return m


@pytest.mark.parametrize("fault", [None, "loop"])
def test_summary_is_printed_on_the_uart(fault):
    selftest = SelfTest.for_config(parse_config("toy"), loop_blocks=5, check_blocks=2,
                                   fault=fault)
    bench = _PrinterBench(selftest, "TOY-80")
    samples = []

    async def sampler(ctx):
        async for _, _, tx in ctx.tick().sample(bench.uart.tx):
            samples.append(tx)

    sim = Simulator(bench)
    sim.add_clock(1e-8)
    sim.add_testbench(sampler, background=True)
    sim.run_until(1e-8 * 3000)
    text = uart_decode(samples, 2).decode()
    expected = summary_text("TOY-80", kat_passed=1, kat_total=1, loop_count=5,
                            loop_errors=0 if fault is None else 1, checksum_ok=True)
    assert text.startswith(expected)
    assert ("self-test PASS" in text) == (fault is None)
