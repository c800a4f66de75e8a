"""Support code of the test suite, shared by the test modules (which import it as
``from .support.helpers import ...``): stream and contract helpers, readers of the NIST vector
files, simulation models of FPGA cells, the toy cipher and its broken variants, the formal-proof
harness (``python -m tests.support.formal``) and the Icarus Verilog bench."""
