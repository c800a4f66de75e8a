"""The build flow behind the command line: running Yosys and nextpnr, measuring and reporting.

* :mod:`.toolchain` finds Yosys and nextpnr (YoWASP unless the user chooses native tools).
* :mod:`.targets` reads what to measure: a core (``aes-128``), a core in the Wishbone
  peripheral (``wishbone:aes-128``) or another project's Verilog core (``verilog:peer.toml``,
  :mod:`.external`).
* :mod:`.build` runs the tools on a board self-test or a bare-device measurement.
* :mod:`.measure` turns tool output and simulations into figures.
* :mod:`.report` assembles and presents the utilization report; :mod:`.digest` ties each of its
  rows to the design it measured, and :mod:`.backfill` gives that digest to rows measured before.
* :mod:`.doctables` writes the generated tables of the README and docs pages.
* :mod:`.demo` runs the official vectors through every core (``cipher-cores demo``).
* :mod:`.progress` shows what long builds are doing.
* :mod:`.revision` names the commit the sources are at.
* :mod:`.export` writes a core's standalone Verilog.
"""
