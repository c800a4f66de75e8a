"""A fault-injection campaign in simulation: single bit flips in the flip-flops of a core checked by
:class:`~cipher_cores.cores.fault.FaultDetecting` (or of the bare core, ``--no-check``).

``python -m cipher_cores.scripts.flow.faults --core present-80 --faults 10000``

The wrapped core is compiled by CXXRTL (:func:`~cipher_cores.cores.sim.cxxrtl.compile_model`,
``write_cxxrtl -g1`` so that the model carries its debug information) with the C++ program
``faults_driver.cpp`` beside this module, which does the whole campaign in one process:

* **Which flip-flops.** Every wire CXXRTL marks ``DRIVEN_SYNC`` (written by a clocked process):
  the core's state, key and control registers and the wrapper's copies, parities, flags, state
  and watchdog. A fault picks one bit uniformly over all their bits.
* **When.** A scenario is a random key and ``--blocks`` random blocks (random directions if the
  core decrypts), with their results from the catalog's reference model. Each fault picks a
  scenario and an edge uniformly within the first block's initiation interval (from the edge
  where block 0 transfers in to the edge before block 1 does; a golden run of the scenario finds
  them), and flips the bit just after that edge, in a fresh model (power-on values) that loads
  the key and then takes the blocks back to back. A flipped bit stays flipped until the design
  writes that flip-flop again, so later blocks see persistent faults (a key register, say).
* **Classes.** *detected*: ``alert`` rose before any wrong result came out; *harmless*: every
  result right, no alert; *silent*: a wrong (or an extra) result released without an alert
  first; *stalled*: none of these within the run's edge budget (results missing, no alert).

Prints the counts (and, for detections, how many right results came out before the alert:
a fault during block 0 caught at a later block is a persistent one); ``--json FILE`` writes them
with the counts per flip-flop. The command line of ``cipher-cores`` can take this module as a
subcommand through :func:`add_arguments` and :func:`run`.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


__all__ = ["CLASSES", "Campaign", "run_campaign", "campaign_lines", "add_arguments", "run",
           "main"]


#: The classes of a fault's outcome, in the order they are printed.
CLASSES = ("detected", "harmless", "silent", "stalled")

DRIVER_SOURCE = (Path(__file__).parent / "faults_driver.cpp").read_text()


@dataclass
class Campaign:
    """What a campaign found.

    ``counts`` maps each of :data:`CLASSES` to its number of faults; ``by_flip_flop`` maps a
    flip-flop's name to its counts; ``detected_after`` maps the number of right results released
    before the alert (0: caught within the block it struck) to a count of detected faults;
    ``flip_flops`` lists ``(name, width)``. ``seconds`` is the campaign's run time,
    ``compile_seconds`` what getting the model took."""
    core: str
    checked: bool
    faults: int
    blocks: int
    seed: int
    latency: int
    flip_flops: list
    counts: dict
    by_flip_flop: dict
    detected_after: dict
    seconds: float
    compile_seconds: float
    examples: dict = field(default_factory=dict)

    @property
    def flip_flop_bits(self) -> int:
        return sum(width for _, width in self.flip_flops)

    def to_dict(self) -> dict:
        return {"core": self.core, "checked": self.checked, "faults": self.faults,
                "blocks": self.blocks, "seed": self.seed, "latency": self.latency,
                "flip_flop_bits": self.flip_flop_bits, "counts": self.counts,
                "detected_after": {str(k): v for k, v in sorted(self.detected_after.items())},
                "seconds": round(self.seconds, 2),
                "compile_seconds": round(self.compile_seconds, 2),
                "by_flip_flop": self.by_flip_flop,
                "flip_flops": [{"name": name, "width": width} for name, width in self.flip_flops],
                "examples": self.examples}


def _scenarios(config, core, rng: random.Random, count: int, blocks: int) -> list:
    """``count`` scenarios: ``(key, [(input payload, expected result)] * blocks)``."""
    scenarios = []
    for _ in range(count):
        key = rng.getrandbits(config.key_bits)
        items = []
        for _ in range(blocks):
            block = rng.getrandbits(config.block_bits)
            decrypt = core.decrypts and rng.random() < 0.5
            result = (config.decrypt if decrypt else config.encrypt)(key, block)
            items.append((block | int(decrypt) << config.block_bits, result))
        scenarios.append((key, items))
    return scenarios


def _driver_input(scenarios, blocks: int, faults: int, seed: int, max_edges: int) -> str:
    lines = ["FAULTS 1", f"{len(scenarios)} {blocks} {faults} {seed} {max_edges}"]
    for key, items in scenarios:
        lines.append(f"{key:x}")
        lines += [f"{payload:x} {result:x}" for payload, result in items]
    return "\n".join(lines) + "\n"


def run_campaign(config, *, faults: int, blocks: int = 4, scenarios: int = 16, seed: int = 1,
                 checked: bool = True, check: str | None = None) -> Campaign:
    """Run a campaign of ``faults`` single bit flips on ``config`` (a
    :class:`~cipher_cores.cores.catalog.CoreConfig`), wrapped in
    :class:`~cipher_cores.cores.fault.FaultDetecting` with ``check`` (``checked``) or bare.

    Raises :exc:`ValueError` for a bad count and :exc:`RuntimeError` if the model cannot be built
    or a scenario fails without a fault."""
    from cipher_cores.cores.fault import FaultDetecting
    from cipher_cores.cores.sim.cxxrtl import compile_model, run_driver

    for name, value, least in (("faults", faults, 0), ("blocks", blocks, 2),
                               ("scenarios", scenarios, 1)):
        if not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an integer of at least {least}, not {value!r}")
    core = config.build()
    if checked:
        core = FaultDetecting(core, check=check)
    defines = ""
    if checked:
        defines += "#define FAULT_HAS_ALERT 1\n"
    if core.random_bits:
        defines += "#define FAULT_HAS_RANDOM 1\n"
    model = compile_model(core, driver_source=defines + DRIVER_SOURCE, debug_level=1)
    rng = random.Random(f"faults-{config.text}-{seed}")
    chosen = _scenarios(config, core, rng, scenarios, blocks)
    # A run lasts a key load and the blocks; a stalled one gets as long again.
    max_edges = 2 * (core.key_load_cycles + (blocks + 1) * core.initiation_interval) + 64
    start = time.monotonic()
    text = run_driver(model, _driver_input(chosen, blocks, faults, seed, max_edges))
    seconds = time.monotonic() - start

    flip_flops, counts = [], dict.fromkeys(CLASSES, 0)
    by_flip_flop = collections.defaultdict(lambda: dict.fromkeys(CLASSES, 0))
    detected_after = collections.Counter()
    examples = {}
    for line in text.splitlines():
        fields = line.split()
        if fields[0] == "FF":
            flip_flops.append((" ".join(fields[3:]), int(fields[2])))
        elif fields[0] == "R":
            _, scenario, ff, bit, edge, verdict, released = fields
            name = flip_flops[int(ff)][0]
            counts[verdict] += 1
            by_flip_flop[name][verdict] += 1
            if verdict == "detected":
                detected_after[int(released)] += 1
            elif verdict in ("silent", "stalled"):
                examples.setdefault(verdict, []).append(
                    {"flip_flop": name, "bit": int(bit), "edge": int(edge),
                     "scenario": int(scenario)})
    if sum(counts.values()) != faults:
        raise RuntimeError(f"the campaign driver reported {sum(counts.values())} of {faults} "
                           f"faults")
    return Campaign(core=config.text, checked=checked, faults=faults, blocks=blocks, seed=seed,
                    latency=core.latency, flip_flops=flip_flops, counts=counts,
                    by_flip_flop=dict(by_flip_flop), detected_after=dict(detected_after),
                    seconds=seconds, compile_seconds=model.seconds, examples=examples)


def campaign_lines(campaign: Campaign) -> list:
    """The campaign as the command line prints it."""
    what = "checked (FaultDetecting)" if campaign.checked else "unprotected"
    lines = [f"{campaign.core}, {what}: {campaign.faults} single bit flips in "
             f"{campaign.flip_flop_bits} flip-flop bits ({len(campaign.flip_flops)} registers), "
             f"each during block 0 of {campaign.blocks} under one key"]
    for verdict in CLASSES:
        lines.append(f"  {verdict:<9} {campaign.counts[verdict]:>7}")
    if campaign.checked:
        for region, inside in (("the core", True), ("the wrapper", False)):
            counts = dict.fromkeys(CLASSES, 0)
            for name, by_class in campaign.by_flip_flop.items():
                if name.startswith("core ") == inside:
                    for verdict, count in by_class.items():
                        counts[verdict] += count
            lines.append(f"  in {region}'s flip-flops: " +
                         ", ".join(f"{counts[verdict]} {verdict}" for verdict in CLASSES))
    if campaign.detected_after:
        later = sum(n for released, n in campaign.detected_after.items() if released > 0)
        lines.append(f"  detected at a later block (persistent faults): {later}")
    rate = campaign.faults / campaign.seconds if campaign.seconds else 0.0
    lines.append(f"  {campaign.seconds:.1f} s ({rate:,.0f} faults/s), model "
                 f"{campaign.compile_seconds:.1f} s")
    return lines


def add_arguments(parser: argparse.ArgumentParser):
    """The campaign's options, for a ``cipher-cores`` subcommand or this module's ``main``."""
    parser.add_argument("--core", default="present-80", metavar="CONFIG",
                        help="configuration, as NAME[-KEYBITS][:OPTION=VALUE,...] "
                             "(default: present-80)")
    parser.add_argument("--faults", type=int, default=1000, help="faults (default 1000)")
    parser.add_argument("--blocks", type=int, default=4,
                        help="blocks per run, the fault during the first (default 4)")
    parser.add_argument("--scenarios", type=int, default=16,
                        help="random keys and block lists the faults share (default 16)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--check", choices=("inverse", "twice"), default=None,
                        help="how FaultDetecting checks (default: inverse if the core decrypts)")
    parser.add_argument("--no-check", action="store_true",
                        help="flip bits in the bare core (a baseline: no alert)")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON to FILE")


def run(args) -> int:
    """Run the campaign the parsed ``args`` ask for; print its figures. Returns the exit status
    (1 with a one-line error for a bad argument or a failed build)."""
    from cipher_cores.cores.catalog import parse_config
    try:
        config = parse_config(args.core)
        if args.no_check and args.check:
            raise ValueError("--check and --no-check exclude each other")
        campaign = run_campaign(config, faults=args.faults, blocks=args.blocks,
                                scenarios=args.scenarios, seed=args.seed,
                                checked=not args.no_check, check=args.check)
    except (KeyError, ValueError, RuntimeError) as error:
        message = str(error.args[0] if isinstance(error, KeyError) else error)
        print(f"cipher-cores faults: error: {message.splitlines()[0]}", file=sys.stderr)
        return 1
    print("\n".join(campaign_lines(campaign)))
    if args.json:
        Path(args.json).write_text(json.dumps(campaign.to_dict(), indent=1) + "\n")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cipher_cores.scripts.flow.faults",
        description="Fault-injection campaign: single bit flips in the flip-flops of a core "
                    "checked by FaultDetecting, in a compiled (CXXRTL) simulation.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
