"""The one-line text summary of a self-test, sent character by character (to a UART)."""

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out


__all__ = ["summary_text", "SummaryPrinter"]


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
    """Formats the outcome of a :class:`~cipher_cores.cores.selftest.engine.SelfTest` as one line of text (see :func:`summary_text`)
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
