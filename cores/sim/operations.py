"""What a simulation of a stream component is asked to do, and what it saw.

Both back ends (Amaranth's simulator, :mod:`.testbench`, and the compiled CXXRTL model,
:mod:`.cxxrtl`) take the same operations and give the same records, so that a run on one can be
compared with a run on the other field by field.

All counts are clock edges of the ``sync`` domain, numbered from 1 at the first edge of the
simulation. A *transfer edge* is an edge at which a stream's ``valid`` and ``ready`` were both high.
"""

from dataclasses import dataclass, field


__all__ = ["LoadKey", "Process", "Transfer", "StreamLog", "CipherRun"]


@dataclass(frozen=True)
class LoadKey:
    """An operation for :func:`~cipher_cores.cores.sim.simulate_cipher`: transfer ``key`` on the
    ``key`` stream."""
    key: int


@dataclass(frozen=True)
class Process:
    """An operation for :func:`~cipher_cores.cores.sim.simulate_cipher`: transfer one block on the
    ``input`` stream."""
    block: int
    decrypt: bool = False


@dataclass(frozen=True)
class Transfer:
    """One transfer seen on a stream: the edge it happened at and its payload (an integer)."""
    edge: int
    payload: int


@dataclass
class StreamLog:
    """What a stream monitor (:func:`~cipher_cores.cores.sim.stream_monitor`, or the compiled
    model's) saw on one stream.

    ``transfers`` lists every transfer in order. ``violations`` lists every edge at which the
    producer broke the stream rules: ``valid`` dropped, or ``payload`` changed, while the previous
    payload had not been accepted.
    """
    transfers: list = field(default_factory=list)
    violations: list = field(default_factory=list)

    @property
    def edges(self) -> list:
        return [t.edge for t in self.transfers]

    @property
    def payloads(self) -> list:
        return [t.payload for t in self.transfers]


@dataclass
class CipherRun:
    """The outcome of :func:`~cipher_cores.cores.sim.simulate_cipher`: the log of each stream of
    a :class:`~cipher_cores.cores.interface.BlockCipherSignature`."""
    key: StreamLog
    input: StreamLog
    output: StreamLog

    @property
    def results(self) -> list:
        """The output blocks, in order, as integers."""
        return self.output.payloads

    @property
    def latencies(self) -> list:
        """For each block: edges from its input transfer to its output transfer."""
        return [o - i for i, o in zip(self.input.edges, self.output.edges)]

    @property
    def intervals(self) -> list:
        """Edges between consecutive output transfers."""
        edges = self.output.edges
        return [b - a for a, b in zip(edges, edges[1:])]
