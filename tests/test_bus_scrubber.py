# amaranth: UnusedElaboratable=no
"""The clear sequence (:class:`~cipher_cores.cores.bus.scrubber.Scrubber`) alone: the testbench
plays the peripheral (the cores taking the zero key and blocks and giving results, GCM, the
FIFOs filling up) and the trace of the scrubber's outputs gives the steps, in order, and their
edges."""

from dataclasses import dataclass

import pytest

from cipher_cores.cores.bus.scrubber import Scrubber

from .support.bus_components import high_edges, simulate


@dataclass(frozen=True)
class Answers:
    """How fast the stand-in peripheral answers, in edges: ``key_ready`` after ``key_valid`` has
    been high ``key`` edges, a result ``latency`` edges after each block transfer (block_ready
    always high), ``gcm_key_ready`` and ``gcm_idle`` likewise, ``filled`` after ``fill`` edges
    of ``fill``."""
    key: int = 2
    latency: int = 3
    gcm_key: int = 2
    gcm_idle: int = 3
    fill: int = 4


def outputs(scrub) -> dict:
    return {name: getattr(scrub, name) for name in (
        "start", "busy", "reset", "empty", "select", "key_valid", "key_ready", "block_valid",
        "block_ready", "result_valid", "gcm_key_valid", "gcm_key_ready", "gcm_idle",
        "gcm_phase", "fill", "filled")}


def peripheral(scrub, answers: Answers = Answers()):
    """A background testbench answering the scrubber's requests as :class:`Answers` says."""
    async def bench(ctx):
        ctx.set(scrub.block_ready, 1)
        waited = {"key": 0, "gcm_key": 0, "gcm_idle": 0, "fill": 0}
        results = []        # edges to go before each pending result
        watched = [scrub.key_valid, scrub.key_ready, scrub.block_valid, scrub.gcm_key_valid,
                   scrub.gcm_key_ready, scrub.gcm_phase, scrub.fill, scrub.reset]
        async for _, _, *values in ctx.tick().sample(*watched):
            key_valid, key_ready, block_valid, gcm_key_valid, gcm_key_ready, gcm_phase, fill, \
                reset = values
            if reset:
                results = []
            results = [left - 1 for left in results]
            if block_valid:
                results.append(answers.latency)
            ctx.set(scrub.result_valid, 0 in results)
            results = [left for left in results if left > 0]
            for name, valid, ready, after in (
                    ("key", key_valid, key_ready, answers.key),
                    ("gcm_key", gcm_key_valid, gcm_key_ready, answers.gcm_key)):
                waited[name] = waited[name] + 1 if valid and not ready else 0
                ctx.set(getattr(scrub, f"{name}_ready"), waited[name] >= after)
            waiting = gcm_phase and not gcm_key_valid
            waited["gcm_idle"] = waited["gcm_idle"] + 1 if waiting else 0
            ctx.set(scrub.gcm_idle, waited["gcm_idle"] >= answers.gcm_idle)
            waited["fill"] = waited["fill"] + 1 if fill else 0
            ctx.set(scrub.filled, waited["fill"] >= answers.fill)
    return bench


def step(values: dict) -> str:
    """The step the scrubber is in at an edge, from its outputs."""
    if not values["busy"]:
        return "idle"
    for name, found in (("reset", "reset"), ("key_valid", "key"), ("gcm_key_valid", "gcm key"),
                        ("gcm_phase", "gcm wait"), ("fill", "fill"), ("empty", "empty")):
        if values[name]:
            return found
    return "blocks"     # pushing blocks, or waiting for their results


def steps(trace: list) -> list:
    """The steps in order (each once per stay), with the core selected in key and blocks."""
    found = []
    for values in trace:
        name = step(values)
        here = (name, values["select"]) if name in ("key", "blocks") else name
        if not found or found[-1] != here:
            found.append(here)
    return found


def run(scrub, *, answers: Answers = Answers(), start_at=(2,), edges: int = 80) -> list:
    """Pulse ``start`` (one edge each) so that it is sampled at each edge of ``start_at``; run
    ``edges`` edges; the trace."""
    async def bench(ctx):
        edge = 0
        for at in start_at:
            while edge < at - 1:
                await ctx.tick()
                edge += 1
            ctx.set(scrub.start, 1)
            await ctx.tick()
            edge += 1
            ctx.set(scrub.start, 0)
        while edge < edges:
            await ctx.tick()
            edge += 1

    return simulate(scrub, bench, watch=outputs(scrub), background=[peripheral(scrub, answers)])


def transfers(trace: list, valid: str, ready: str) -> list:
    return [index + 1 for index, values in enumerate(trace) if values[valid] and values[ready]]


# The sequence ----------------------------------------------------------------------------------

def test_the_steps_in_order():
    """Reset (with empty), per core its key then its blocks, GCM's key then waiting for GCM, the
    FIFOs filled, emptied; idle."""
    trace = run(Scrubber(cores=2, depth=2, gcm=True, fifos=True))
    assert steps(trace) == ["idle", "reset", ("key", 0), ("blocks", 0), ("key", 1),
                            ("blocks", 1), "gcm key", "gcm wait", "fill", "empty", "idle"]


def test_reset_with_empty_for_the_one_edge_after_start():
    trace = run(Scrubber(cores=1, depth=2), start_at=(5,))
    assert high_edges(trace, "reset") == [6]
    assert high_edges(trace, "empty")[0] == 6
    assert trace[5]["empty"] and trace[5]["select"] == 0


def test_busy_from_the_edge_after_start_until_the_edge_after_the_last_step():
    trace = run(Scrubber(cores=2, depth=2, gcm=True, fifos=True), start_at=(5,))
    empty = high_edges(trace, "empty")[-1]
    assert high_edges(trace, "busy") == list(range(6, empty + 1))
    assert [step(values) for values in trace[empty - 1:empty + 1]] == ["empty", "idle"]


def test_each_core_takes_one_key_load_which_waits_for_key_ready():
    trace = run(Scrubber(cores=3, depth=2), answers=Answers(key=4))
    loads = transfers(trace, "key_valid", "key_ready")
    assert [trace[edge - 1]["select"] for edge in loads] == [0, 1, 2]
    for edge in loads:
        assert all(trace[before - 1]["key_valid"] for before in range(edge - 4, edge))
    assert not any(values["block_valid"] and values["key_valid"] for values in trace)


@pytest.mark.parametrize("depth", [1, 3])
def test_depth_blocks_per_core_each_result_counted_before_the_next_core(depth):
    """``depth`` block transfers per core, no more (``block_ready`` is always high), and the
    next core's key only after the ``depth``-th result (results come 6 edges after a block)."""
    trace = run(Scrubber(cores=2, depth=depth), answers=Answers(latency=6))
    blocks = transfers(trace, "block_valid", "block_ready")
    results = high_edges(trace, "result_valid")
    assert [trace[edge - 1]["select"] for edge in blocks] == [0] * depth + [1] * depth
    assert [trace[edge - 1]["select"] for edge in results] == [0] * depth + [1] * depth
    second_key = next(index + 1 for index, values in enumerate(trace)
                      if values["key_valid"] and values["select"] == 1)
    assert results[depth - 1] < second_key < blocks[depth]


def test_select_walks_through_the_cores_and_returns_to_zero():
    trace = run(Scrubber(cores=4, depth=1))
    assert [here for here in steps(trace) if isinstance(here, tuple)] == [
        ("key", 0), ("blocks", 0), ("key", 1), ("blocks", 1), ("key", 2), ("blocks", 2),
        ("key", 3), ("blocks", 3)]
    assert trace[-1]["busy"] == 0 and trace[-1]["select"] == 0


def test_gcm_key_loaded_then_gcm_awaited_until_idle():
    """``gcm_phase`` from GCM's key to GCM idle; ``gcm_key_valid`` held until
    ``gcm_key_ready``; the FIFOs are filled only once ``gcm_idle`` was seen."""
    trace = run(Scrubber(cores=1, depth=1, gcm=True), answers=Answers(gcm_key=3, gcm_idle=5))
    phase = high_edges(trace, "gcm_phase")
    key_valid = high_edges(trace, "gcm_key_valid")
    loaded = transfers(trace, "gcm_key_valid", "gcm_key_ready")
    idle = [edge for edge in high_edges(trace, "gcm_idle") if trace[edge - 1]["gcm_phase"]]
    assert loaded == [key_valid[-1]] and key_valid == list(range(key_valid[0], loaded[0] + 1))
    assert phase == list(range(key_valid[0], idle[0] + 1))
    assert high_edges(trace, "fill")[0] == idle[0] + 1


def test_fifos_filled_until_filled_then_emptied_for_one_edge():
    trace = run(Scrubber(cores=1, depth=1, fifos=True), answers=Answers(fill=6))
    fill = high_edges(trace, "fill")
    filled = [edge for edge in fill if trace[edge - 1]["filled"]]
    assert filled == [fill[-1]] and fill == list(range(fill[0], fill[-1] + 1))
    assert len(fill) == 7
    after = fill[-1] + 1
    assert [step(values) for values in trace[after - 1:after + 1]] == ["empty", "idle"]


def test_without_fifos_or_gcm_the_cores_are_followed_by_empty():
    trace = run(Scrubber(cores=1, depth=2, gcm=False, fifos=False))
    assert steps(trace) == ["idle", "reset", ("key", 0), ("blocks", 0), "empty", "idle"]
    assert high_edges(trace, "fill") == [] and high_edges(trace, "gcm_phase") == []


# Starting again --------------------------------------------------------------------------------

def test_a_start_while_busy_begins_again_from_reset_and_the_first_core():
    """A start during the second core's blocks: reset on the next edge, select back to 0, and
    the first core again given its key and all ``depth`` blocks."""
    first = run(Scrubber(cores=2, depth=2), edges=60)
    second_core = next(index + 1 for index, values in enumerate(first)
                       if values["block_valid"] and values["select"] == 1)
    trace = run(Scrubber(cores=2, depth=2), start_at=(2, second_core + 1), edges=80)
    assert high_edges(trace, "reset") == [3, second_core + 2]
    assert steps(trace) == ["idle", "reset", ("key", 0), ("blocks", 0), ("key", 1),
                            ("blocks", 1), "reset", ("key", 0), ("blocks", 0), ("key", 1),
                            ("blocks", 1), "fill", "empty", "idle"]
    again = [edge for edge in transfers(trace, "block_valid", "block_ready")
             if edge > second_core + 2]
    assert [trace[edge - 1]["select"] for edge in again] == [0, 0, 1, 1]


# Construction ----------------------------------------------------------------------------------

def test_constructor_checks():
    for cores in (0, 5):
        with pytest.raises(ValueError, match=rf"^cores must be 1 to 4, not {cores}$"):
            Scrubber(cores=cores)
    with pytest.raises(ValueError, match=r"^depth must be at least 1, not 0$"):
        Scrubber(depth=0)
