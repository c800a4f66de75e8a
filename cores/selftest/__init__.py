"""Cipher-independent gateware for testing a core on a board: the self-test engine, the summary
line it prints and the UART that sends it."""

from .engine import FAULTS, SelfTest, lfsr_next, lfsr_taps, selftest_parameters
from .summary import SummaryPrinter, summary_text
from .uart import UARTTransmitter, uart_decode


__all__ = ["FAULTS", "SelfTest", "lfsr_next", "lfsr_taps", "selftest_parameters",
           "SummaryPrinter", "summary_text", "UARTTransmitter", "uart_decode"]
