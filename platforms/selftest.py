"""A power-on self-test for a cipher core on a board: known answers, then a long random loop.

:class:`SelfTest` drives the core through its streams:

1. **Known answers.** For each vector (key, block, direction, expected result), load the key,
   send the block, and compare the core's output with the expected value. The vectors are the
   standards' inputs (FIPS-197 Appendix B and C, the PRESENT paper's table) with the results
   computed by the reference model at elaboration time; each is run in both directions.
2. **Encrypt-then-decrypt loop.** A linear-feedback shift register makes ``loop_blocks``
   pseudo-random blocks under a fixed key; each is encrypted, the ciphertext decrypted, and the
   result compared with the block. The XOR of the first ``check_blocks`` ciphertexts is compared
   with the same checksum from the reference model, so a core that decrypts its own wrong
   encryption correctly still fails.

:class:`SummaryPrinter` formats the outcome as a line of text for a UART, and
:class:`SelfTestTop` puts it all on a board: a "pass" LED, a "fail" LED, a blinking "busy" LED
while the test runs, and the summary line on the UART (repeated about once a second).
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .boards import output_pin
from .uart import UARTTransmitter


__all__ = ["lfsr_taps", "lfsr_next", "selftest_parameters", "SelfTest", "SummaryPrinter", "SelfTestTop",
           "summary_text", "FAULTS"]


# Maximal-length Fibonacci LFSR taps (bit positions, 1 = least significant) for the block sizes
# of this library, from the well-known tables of primitive polynomials.
_TAPS = {
    64:  (64, 63, 61, 60),
    128: (128, 126, 101, 99),
}

#: Faults :class:`SelfTest` can inject, to show that the test fails when it should.
FAULTS = {
    None: "no fault",
    "kat": "flip bit 0 of the first known-answer result expected",
    "loop": "flip bit 0 of the second ciphertext of the loop before decrypting it",
}


def lfsr_taps(width: int) -> tuple:
    """Feedback taps for a ``width``-bit LFSR (maximal length for 64 and 128 bits)."""
    return _TAPS.get(width, (width, width - 1))


def lfsr_next(state: int, width: int) -> int:
    """The LFSR state after ``state``: shift left, feeding in the XOR of the tap bits."""
    feedback = 0
    for tap in lfsr_taps(width):
        feedback ^= (state >> (tap - 1)) & 1
    return ((state << 1) | feedback) & ((1 << width) - 1)


def selftest_parameters(config, *, loop_blocks: int = 1 << 20, check_blocks: int = 16,
                        seed: int = 1, fault: str | None = None) -> dict:
    """Keyword arguments of :class:`SelfTest` for a :class:`~platforms.cores.CoreConfig`: its
    standard vectors in both directions, and a loop key and checksum computed with its reference
    model. A ``"kat"`` fault is applied here, to the first expected value."""
    if fault not in FAULTS:
        raise ValueError(f"fault must be one of {', '.join(map(repr, FAULTS))}, not {fault!r}")
    if not isinstance(loop_blocks, int) or loop_blocks < 1:
        raise ValueError(f"loop_blocks must be a positive integer, not {loop_blocks!r}")
    vectors = []
    for key, plain, cipher in config.vectors():
        vectors.append((key, plain, 0, cipher))
        vectors.append((key, cipher, 1, plain))
    if not vectors:
        key = (1 << config.key_bits) - 1
        vectors = [(key, 0, 0, config.encrypt(key, 0))]
    if fault == "kat":
        key, block, decrypt, expected = vectors[0]
        vectors[0] = (key, block, decrypt, expected ^ 1)
    loop_key = int.from_bytes(bytes((0x5a + 37 * i) & 0xff for i in range(config.key_bits // 8)),
                              "big")
    check_blocks = min(check_blocks, loop_blocks)
    check_value, block = 0, seed
    for _ in range(check_blocks):
        check_value ^= config.encrypt(loop_key, block)
        block = lfsr_next(block, config.block_bits)
    return {"vectors": vectors, "loop_key": loop_key, "loop_blocks": loop_blocks,
            "check_value": check_value, "check_blocks": check_blocks, "seed": seed,
            "fault": None if fault == "kat" else fault}


class SelfTest(wiring.Component):
    """Runs known-answer vectors and an encrypt-then-decrypt loop on ``core``.

    Parameters
    ----------
    core : :class:`~amaranth.lib.wiring.Component` with a
        :class:`~cores.interface.BlockCipherSignature`
        The core under test; it becomes the submodule ``core``.
    vectors : list of ``(key, block, decrypt, expected)``
        Known-answer checks, run in order.
    loop_key : :class:`int`
        The key of the loop.
    loop_blocks : :class:`int`
        How many pseudo-random blocks the loop encrypts and decrypts.
    check_value : :class:`int`
        XOR of the first ``check_blocks`` ciphertexts of the loop, from the reference model.
    check_blocks : :class:`int`
        How many ciphertexts the checksum covers (at most ``loop_blocks``).
    seed : :class:`int`
        First block of the loop (nonzero).
    fault : ``None``, ``"kat"`` or ``"loop"``
        A deliberate fault (see :data:`FAULTS`).

    Members
    -------
    done : ``Out(1)``
        High once the loop has finished.
    passed : ``Out(1)``
        High once done with every check passed.
    failed : ``Out(1)``
        High as soon as any check has failed.
    kat_passed : ``Out(range(len(vectors) + 1))``
        Known-answer vectors that matched.
    loop_count : ``Out(32)``
        Loop blocks processed so far.
    loop_errors : ``Out(16)``
        Loop blocks whose decryption did not give the block back (saturating).
    checksum_ok : ``Out(1)``
        The loop checksum matched (valid once ``done``).
    """
    def __init__(self, core, *, vectors, loop_key: int, loop_blocks: int, check_value: int,
                 check_blocks: int, seed: int = 1, fault: str | None = None):
        if fault not in FAULTS:
            raise ValueError(f"fault must be one of {', '.join(map(repr, FAULTS))}, "
                             f"not {fault!r}")
        if not isinstance(loop_blocks, int) or loop_blocks < 1:
            raise ValueError(f"loop_blocks must be a positive integer, not {loop_blocks!r}")
        if not vectors:
            raise ValueError("vectors must not be empty")
        if not 1 <= check_blocks <= loop_blocks:
            raise ValueError(f"check_blocks must be 1..loop_blocks, not {check_blocks!r}")
        if seed == 0:
            raise ValueError("seed must be nonzero")
        self._core = core
        self._vectors = list(vectors)
        self._loop_key = loop_key
        self._loop_blocks = loop_blocks
        self._check_value = check_value
        self._check_blocks = check_blocks
        self._seed = seed
        self._fault = fault
        super().__init__({
            "done":        Out(1),
            "passed":      Out(1),
            "failed":      Out(1),
            "kat_passed":  Out(range(len(self._vectors) + 1)),
            "loop_count":  Out(32),
            "loop_errors": Out(16),
            "checksum_ok": Out(1),
        })

    @classmethod
    def for_config(cls, config, *, core=None, loop_blocks: int = 1 << 20, check_blocks: int = 16,
                   seed: int = 1, fault: str | None = None) -> "SelfTest":
        """The self-test of a :class:`~platforms.cores.CoreConfig` (see
        :func:`selftest_parameters`), on ``core`` or a new core of ``config``."""
        parameters = selftest_parameters(config, loop_blocks=loop_blocks,
                                         check_blocks=check_blocks, seed=seed, fault=fault)
        return cls(config.build() if core is None else core, **parameters)

    @property
    def core(self):
        return self._core

    @property
    def vectors(self) -> list:
        return list(self._vectors)

    @property
    def loop_blocks(self) -> int:
        return self._loop_blocks

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self._core
        width = core.signature.block_bits
        key_bits = core.signature.key_bits
        count = len(self._vectors)

        keys = Array(Const(key, key_bits) for key, _, _, _ in self._vectors)
        blocks = Array(Const(block, width) for _, block, _, _ in self._vectors)
        directions = Array(Const(decrypt, 1) for _, _, decrypt, _ in self._vectors)
        expected = Array(Const(result, width) for _, _, _, result in self._vectors)

        index = Signal(range(count))
        kat_errors = Signal(range(count + 1))
        lfsr = Signal(width, init=self._seed)
        ciphertext = Signal(width)
        checksum = Signal(width)
        loop_index = Signal(32)

        feedback = 0
        for tap in lfsr_taps(width):
            feedback ^= lfsr[tap - 1]
        lfsr_stepped = Cat(feedback, lfsr[:-1])

        m.d.comb += [
            self.loop_count.eq(loop_index),
            self.checksum_ok.eq(checksum == self._check_value),
            self.failed.eq((kat_errors != 0) | (self.loop_errors != 0) |
                           (self.done & ~self.checksum_ok)),
            self.passed.eq(self.done & ~self.failed),
        ]

        def load_key(key, then):
            m.d.comb += [core.key.valid.eq(1), core.key.payload.eq(key)]
            with m.If(core.key.ready):
                m.next = then

        def send(block, decrypt, then):
            m.d.comb += [
                core.input.valid.eq(1),
                core.input.payload.block.eq(block),
                core.input.payload.decrypt.eq(decrypt),
            ]
            with m.If(core.input.ready):
                m.next = then

        with m.FSM():
            with m.State("Load key"):
                load_key(keys[index], "Send block")
            with m.State("Send block"):
                send(blocks[index], directions[index], "Check block")
            with m.State("Check block"):
                m.d.comb += core.output.ready.eq(1)
                with m.If(core.output.valid):
                    with m.If(core.output.payload == expected[index]):
                        m.d.sync += self.kat_passed.eq(self.kat_passed + 1)
                    with m.Else():
                        m.d.sync += kat_errors.eq(kat_errors + 1)
                    with m.If(index == count - 1):
                        m.next = "Load loop key"
                    with m.Else():
                        m.d.sync += index.eq(index + 1)
                        m.next = "Load key"
            with m.State("Load loop key"):
                load_key(self._loop_key, "Encrypt")
            with m.State("Encrypt"):
                send(lfsr, 0, "Take ciphertext")
            with m.State("Take ciphertext"):
                m.d.comb += core.output.ready.eq(1)
                with m.If(core.output.valid):
                    received = core.output.payload
                    if self._fault == "loop":
                        received = received ^ (loop_index == 1)
                    m.d.sync += ciphertext.eq(received)
                    with m.If(loop_index < self._check_blocks):
                        m.d.sync += checksum.eq(checksum ^ core.output.payload)
                    m.next = "Decrypt"
            with m.State("Decrypt"):
                send(ciphertext, 1, "Compare")
            with m.State("Compare"):
                m.d.comb += core.output.ready.eq(1)
                with m.If(core.output.valid):
                    with m.If((core.output.payload != lfsr) & ~self.loop_errors.all()):
                        m.d.sync += self.loop_errors.eq(self.loop_errors + 1)
                    m.d.sync += [
                        lfsr.eq(lfsr_stepped),
                        loop_index.eq(loop_index + 1),
                    ]
                    with m.If(loop_index == self._loop_blocks - 1):
                        m.next = "Done"
                    with m.Else():
                        m.next = "Encrypt"
            with m.State("Done"):
                m.d.comb += self.done.eq(1)
        return m


def _hex_digit(nibble):
    return Mux(nibble < 10, nibble + ord("0"), nibble + (ord("a") - 10))[:8]


def summary_text(title: str, *, kat_passed: int, kat_total: int, loop_count: int,
                 loop_errors: int, checksum_ok: bool) -> str:
    """The line :class:`SummaryPrinter` sends, for given figures (a model for tests)."""
    kat = "PASS" if kat_passed == kat_total else "FAIL"
    loop = "PASS" if loop_errors == 0 else "FAIL"
    check = "PASS" if checksum_ok else "FAIL"
    verdict = "PASS" if kat == loop == check == "PASS" else "FAIL"
    return (f"{title} self-test {verdict}: known answers {kat_passed:02x}/{kat_total:02x} {kat}, "
            f"loop {loop_count:08x} blocks {loop}, checksum {check}\r\n")


class SummaryPrinter(wiring.Component):
    """Formats the outcome of a :class:`SelfTest` as one line of text (see :func:`summary_text`)
    and sends it byte by byte on ``data``, each time ``start`` is high while idle.

    Members
    -------
    start : ``In(1)``
        Begin a line.
    kat_passed, kat_total, loop_count, loop_errors, checksum_ok : ``In(...)``
        The figures to print.
    data : ``Out(stream.Signature(8))``
        The characters.
    """
    def __init__(self, title: str, kat_total: int):
        self._title = title
        self._kat_total = kat_total
        super().__init__({
            "start":       In(1),
            "kat_passed":  In(8),
            "loop_count":  In(32),
            "loop_errors": In(16),
            "checksum_ok": In(1),
            "data":        Out(stream.Signature(8)),
        })

    def _characters(self):
        kat_ok = self.kat_passed == self._kat_total
        loop_ok = self.loop_errors == 0
        verdict = kat_ok & loop_ok & self.checksum_ok
        chars = []

        def text(string):
            chars.extend(Const(ord(ch), 8) for ch in string)

        def choice(condition, yes, no):
            chars.extend(Mux(condition, ord(a), ord(b)) for a, b in zip(yes, no))

        def hex_value(value, digits):
            for digit in reversed(range(digits)):
                chars.append(_hex_digit(value[4 * digit:4 * digit + 4]))

        text(f"{self._title} self-test ")
        choice(verdict, "PASS", "FAIL")
        text(": known answers ")
        hex_value(self.kat_passed, 2)
        text(f"/{self._kat_total:02x} ")
        choice(kat_ok, "PASS", "FAIL")
        text(", loop ")
        hex_value(self.loop_count, 8)
        text(" blocks ")
        choice(loop_ok, "PASS", "FAIL")
        text(", checksum ")
        choice(self.checksum_ok, "PASS", "FAIL")
        text("\r\n")
        return chars

    def elaborate(self, platform):
        m = Module()
        chars = self._characters()
        position = Signal(range(len(chars)))
        sending = Signal()
        m.d.comb += [
            self.data.valid.eq(sending),
            self.data.payload.eq(Array(chars)[position]),
        ]
        with m.If(~sending):
            with m.If(self.start):
                m.d.sync += [sending.eq(1), position.eq(0)]
        with m.Elif(self.data.ready):
            with m.If(position == len(chars) - 1):
                m.d.sync += sending.eq(0)
            with m.Else():
                m.d.sync += position.eq(position + 1)
        return m


class SelfTestTop(wiring.Component):
    """The self-test of a core configuration on a board.

    Parameters
    ----------
    config : :class:`~platforms.cores.CoreConfig`
    board : :class:`~platforms.boards.Board`
        Which LEDs and UART to use.
    loop_blocks : :class:`int`
        Length of the encrypt-then-decrypt loop (default 2**20 blocks, a few seconds).
    fault : see :data:`FAULTS`
    baud : :class:`int`
        UART speed.

    The self-test is the submodule ``selftest`` and its core ``selftest.core``. The pass LED lights
    when every check has passed, the fail LED as soon as one fails; the busy LED blinks while the
    test runs. Boards with a UART print the summary line when the test ends and about once a
    second afterwards.
    """
    def __init__(self, config, board, *, loop_blocks: int = 1 << 20, fault: str | None = None,
                 baud: int = 115200):
        self._config = config
        self._board = board
        self._baud = baud
        self.selftest = SelfTest.for_config(config, loop_blocks=loop_blocks, fault=fault)
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.selftest = selftest = self.selftest
        frequency = int(platform.default_clk_frequency)

        period = max(frequency // 4, 2)
        heartbeat = Signal(range(period))
        blink = Signal()
        with m.If(heartbeat == 0):
            m.d.sync += [heartbeat.eq(period - 1), blink.eq(~blink)]
        with m.Else():
            m.d.sync += heartbeat.eq(heartbeat - 1)

        requested = {}
        m.d.comb += [
            self._board.pass_led.request(m, platform, requested).eq(selftest.passed),
            self._board.fail_led.request(m, platform, requested).eq(selftest.failed),
        ]
        if self._board.busy_led is not None:
            m.d.comb += self._board.busy_led.request(m, platform, requested).eq(
                ~selftest.done & blink)

        if self._board.uart:
            uart_tx = output_pin(m, platform, "uart", 0, "tx", requested)
            m.submodules.printer = printer = SummaryPrinter(self._config.label,
                                                            len(selftest.vectors))
            m.submodules.transmitter = transmitter = UARTTransmitter(
                divisor=max(1, round(frequency / self._baud)))
            wiring.connect(m, printer.data, transmitter.data)
            repeat = Signal(range(frequency + 1))
            was_done = Signal()
            m.d.sync += was_done.eq(selftest.done)
            with m.If(selftest.done):
                m.d.sync += repeat.eq(Mux(repeat == 0, frequency, repeat - 1))
            m.d.comb += [
                printer.start.eq((selftest.done & ~was_done) | (selftest.done & (repeat == 1))),
                printer.kat_passed.eq(selftest.kat_passed),
                printer.loop_count.eq(selftest.loop_count),
                printer.loop_errors.eq(selftest.loop_errors),
                printer.checksum_ok.eq(selftest.checksum_ok),
                uart_tx.eq(transmitter.tx),
            ]
        return m
