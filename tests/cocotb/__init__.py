"""cocotb test modules: imported by cocotb inside Icarus Verilog (through
:func:`tests.support.cocotb_run.run_cocotb`), never collected by pytest (no ``test_`` prefix).
``tests/test_cocotb.py`` runs them."""
