"""Where a core is placed: boards and bare devices, and the top-level designs put on them.

* :mod:`platforms.boards`: the boards the self-test runs on (``amaranth_boards`` subclasses).
* :mod:`platforms.devices`: bare FPGAs with a clock and two pins, for measuring a core alone.
* :mod:`platforms.selftest`: the board self-test top (LEDs and UART).
* :mod:`platforms.harness`: the bare-device measurement top and its shift-register harness.
* :mod:`platforms.pins`: requesting single pins through I/O buffers.
"""
