"""Running firmware on the SoC in a compiled simulator (CXXRTL).

The SoC (:class:`~cipher_cores.cores.soc.CipherSoC` with the peripheral around a core) is converted once per
core, RAM size and instruction set, with PicoRV32's Verilog, by Yosys' CXXRTL back end, and
compiled with :file:`sim_driver.cc` (cached like every compiled model, see
:mod:`cipher_cores.cores.sim.cxxrtl`: the first run of a configuration takes a minute or so, later runs
start at once). The RAM is empty in the model: the driver loads each program's image at run
time, so one model runs any firmware.

What a simulation is and is not: every cycle of the CPU, bus, RAM and peripheral is simulated
as the hardware runs it, so cycle counts read by the firmware are those of the board at any
clock. The UART is the exception: it sends a bit per clock cycle (a board sends one every
``clock / baud`` cycles), so printing is faster than on a board; and ``SYSCTL_CLOCK_HZ`` reads
:data:`SIM_CLOCK_HZ`.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
import os
from pathlib import Path
import subprocess
import tempfile

from .elf import Firmware


__all__ = ["SIM_CLOCK_HZ", "DEFAULT_RAM_BYTES", "DEFAULT_MAX_CYCLES", "SimulationResult",
           "simulation_soc", "compile_soc_model", "run_firmware"]

#: What ``SYSCTL_CLOCK_HZ`` reads in simulation (the iCEBreaker's clock).
SIM_CLOCK_HZ = 12_000_000
#: RAM of the simulated SoC unless told otherwise: room for any program the kit links.
DEFAULT_RAM_BYTES = 128 << 10
#: Cycles a simulation runs before it gives up (about 15 s of simulation on this machine).
DEFAULT_MAX_CYCLES = 20_000_000


@dataclass(frozen=True)
class SimulationResult:
    """How a run ended: ``ending`` is ``"exit"`` (with ``exit_status``), ``"trap"`` (with
    ``pc``, the program counter when the CPU stopped) or ``"timeout"``; ``cycles`` counts clock
    cycles from the end of reset; ``output`` is what the firmware sent to the UART."""
    ending: str
    cycles: int
    output: bytes
    exit_status: int | None = None
    pc: int | None = None

    @property
    def ok(self) -> bool:
        """The firmware exited with status 0."""
        return self.ending == "exit" and self.exit_status == 0

    def reason(self) -> str:
        """One line on how the run ended."""
        if self.ending == "exit":
            return f"firmware exited with status {self.exit_status} after {self.cycles:,} cycles"
        if self.ending == "trap":
            return (f"the CPU trapped at pc {self.pc:#010x} after {self.cycles:,} cycles "
                    f"(illegal instruction, ebreak, or misaligned access)")
        return f"timeout: the firmware did not exit within {self.cycles:,} cycles"


def simulation_soc(target, *, ram_bytes: int = DEFAULT_RAM_BYTES, isa: str = "rv32imc",
                   interrupts: bool = True):
    """The SoC a simulation runs: ``target`` (a :class:`~cipher_cores.scripts.flow.targets.
    PeripheralConfig`) built as the peripheral, an empty RAM, a UART bit per cycle."""
    from .system import CipherSoC
    return CipherSoC(target.build(), ram_bytes=ram_bytes, clock_hz=SIM_CLOCK_HZ,
                     uart_divisor=1, isa=isa, interrupts=interrupts)


def compile_soc_model(target, *, ram_bytes: int = DEFAULT_RAM_BYTES, isa: str = "rv32imc",
                      interrupts: bool = True):
    """The compiled model (a :class:`cipher_cores.cores.sim.cxxrtl.CompiledModel`) of
    :func:`simulation_soc`, from the cache or built now."""
    from ..sim.cxxrtl import compile_model
    from .cpu import picorv32_source
    driver = resources.files(__package__).joinpath("sim_driver.cc").read_text()
    return compile_model(simulation_soc(target, ram_bytes=ram_bytes, isa=isa,
                                        interrupts=interrupts),
                         driver_source=driver, verilog={"picorv32.v": picorv32_source()},
                         debug_level=1)


def run_firmware(model, firmware: Firmware, *, max_cycles: int = DEFAULT_MAX_CYCLES,
                 echo=None) -> SimulationResult:
    """Run ``firmware`` on the compiled ``model``. With ``echo`` (a binary file such as
    ``sys.stdout.buffer``) the UART output is copied there as it is produced."""
    with tempfile.TemporaryDirectory(prefix="socsim-") as folder:
        image = Path(folder) / "image.bin"
        image.write_bytes(firmware.image)
        output = bytearray()
        with subprocess.Popen([str(model.path), str(image), str(max_cycles)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
            while chunk := os.read(process.stdout.fileno(), 4096):
                output += chunk
                if echo is not None:
                    echo.write(chunk)
                    echo.flush()
            errors = process.stderr.read().decode(errors="replace")
    status = [line.split() for line in errors.splitlines() if line.startswith("SOCSIM ")]
    if process.returncode != 0 or not status or status[-1][1] == "error":
        detail = " ".join(status[-1][2:]) if status else errors.strip()[-200:]
        raise RuntimeError(f"SoC model {model.path} failed (exit code {process.returncode}): "
                           f"{detail}")
    fields = status[-1]
    if fields[1] == "exit":
        return SimulationResult("exit", int(fields[3]), bytes(output), exit_status=int(fields[2]))
    if fields[1] == "trap":
        return SimulationResult("trap", int(fields[3]), bytes(output), pc=int(fields[2], 16))
    return SimulationResult("timeout", int(fields[2]), bytes(output))
