"""Where a core is placed: boards and bare devices, and the top-level designs put on them.

* :mod:`cipher_cores.platforms.boards`: the boards the self-test runs on (``amaranth_boards`` subclasses).
* :mod:`cipher_cores.platforms.devices`: bare FPGAs with a clock and two pins, for measuring a core alone.
* :mod:`cipher_cores.platforms.selftest`: the board self-test top (LEDs and UART).
* :mod:`cipher_cores.platforms.harness`: the bare-device measurement top and its shift-register harness.
* :mod:`cipher_cores.platforms.pins`: requesting single pins through I/O buffers.
* :mod:`cipher_cores.platforms.toolchain`: :func:`~cipher_cores.platforms.toolchain.use_yowasp`,
  which lets any Amaranth platform (ours, ``amaranth_boards``', a user's) find the YoWASP tools.
"""
