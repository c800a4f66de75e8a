"""Boards, bare-device targets and the build, measurement and report machinery.

* :mod:`platforms.toolchain` finds Yosys and nextpnr (YoWASP unless the user chooses native tools).
* :mod:`platforms.boards` and :mod:`platforms.devices`: where a core can be built.
* :mod:`platforms.cores`: the cores by name, loaded lazily.
* :mod:`platforms.harness`, :mod:`platforms.selftest`: the tops that wrap a core.
* :mod:`platforms.measure`, :mod:`platforms.build`, :mod:`platforms.report`: running the tools and
  turning their output into the utilization report.
"""
