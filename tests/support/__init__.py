"""Support code of the test suite, shared by the test modules: stream and contract helpers
(``helpers``), the checks of the stream contract on one configuration (``contract``), readers
of the NIST vector files (``nist``, ``nist_modes``, ``gcm_vectors``), the modes' simulator
(``mode_sim``), AES-GCM against pycryptodome (``gcm_oracle``), simulation models of FPGA cells
(``cell_models``), the toy cipher and its broken variants (``toy_cipher``, ``broken_cores``), the
formal-proof harness (``formal``) and the Icarus Verilog bench (``verilog_bench``).

``tests`` is a package, so pytest imports each test module as ``tests.test_<name>`` with the
repository's root on ``sys.path``; the test modules import this package relatively
(``from .support.helpers import ...``), and the command-line entry point runs from the root the
same way: ``python -m tests.support.formal CORE DEPTH``. Fixtures shared by several test modules
live in ``tests/conftest.py``, not here.
"""
