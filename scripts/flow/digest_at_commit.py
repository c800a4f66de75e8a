"""Print the design digest of ``TARGET@DEVICE`` arguments as the sources of the current directory
make them: run as a script with ``PYTHONPATH`` set to a checkout of any commit (see
:mod:`cipher_cores.scripts.flow.backfill`). It reads the checkout's own harness, devices and target
parser: with ``--namespace`` first, in the ``cipher_cores`` namespace, else in the top-level
``cores``/``platforms``/``scripts`` packages of the commits before it, and digests as :func:`cipher_cores.scripts.flow.digest.rtlil_digest`
does (the same rule, repeated here because the checkout may predate it). One line per argument:
``TARGET@DEVICE sha256:...`` or ``TARGET@DEVICE ERROR message``."""

import hashlib
import re
import sys


def _layout(namespace: bool):
    if namespace:
        from cipher_cores.platforms.devices import get_device
        from cipher_cores.platforms.harness import BareDeviceTop, MeasurementHarness
        from cipher_cores.scripts.flow.targets import parse_target
    else:
        from platforms.devices import get_device
        from platforms.harness import BareDeviceTop, MeasurementHarness
        try:
            from scripts.flow.targets import parse_target
        except ImportError:
            from cores.catalog import parse_config as parse_target
    return get_device, BareDeviceTop, MeasurementHarness, parse_target


def main(arguments):
    # "--namespace": the checkout's packages are cipher_cores.* (else top-level, as before it).
    namespace = arguments[:1] == ["--namespace"]
    arguments = arguments[1:] if namespace else arguments
    get_device, BareDeviceTop, MeasurementHarness, parse_target = _layout(namespace)
    source_lines = re.compile(r"^\s*attribute \\src .*\n", re.MULTILINE)
    for argument in arguments:
        target, _, device = argument.rpartition("@")
        try:
            top = BareDeviceTop(MeasurementHarness(parse_target(target).build()))
            rtlil = get_device(device)().prepare(top, name="top").files["top.il"]
        except Exception as error:      # reported per argument: one old target may not build
            print(argument, "ERROR", " ".join(str(error).split())[:200], flush=True)
            continue
        digest = hashlib.sha256(source_lines.sub("", rtlil).encode()).hexdigest()[:20]
        print(argument, f"sha256:{digest}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
