"""Building firmware for the RISC-V SoC with the ``ziglang`` package's C compiler (no system
tool chain), and the self-test firmware's vectors.

:func:`compile_firmware` compiles any program against the kit in ``cores/soc/firmware``;
:func:`build_selftest` writes ``selftest_vectors.h`` for one peripheral configuration
(:func:`selftest_cases`: the NIST files of ``cryptography-vectors``, the vectors printed in
FIPS-197, SP 800-38A and the PRESENT paper, and for PRESENT's modes the reference model) and
compiles ``selftest/selftest.c`` with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import random
import subprocess
import sys

import cipher_cores.cores.soc
from cipher_cores.cores.bus import regmap


__all__ = ["FirmwareBuildError", "KIT", "KIT_SOURCES", "SelftestCase", "compile_firmware",
           "selftest_cases", "vectors_header", "build_selftest", "compiler_flags"]


#: The firmware kit: linker script, start-up code, headers, driver.
KIT = Path(cipher_cores.cores.soc.__file__).parent / "firmware"
#: The kit's sources every program links (start-up code, UART and exit, driver, runtime).
KIT_SOURCES = ("start.S", "soc.c", "cipher.c", "runtime.c")

BENCH_BLOCKS = 32
SOFTWARE_BLOCKS = 8


class FirmwareBuildError(RuntimeError):
    """The compiler failed; the message holds its first error lines."""


def compiler_flags(isa: str) -> list:
    """The flags of a kit build for an SoC with ``isa`` (``rv32i``, ``rv32im`` or
    ``rv32imc``)."""
    cpu = {"rv32i": "generic_rv32", "rv32im": "generic_rv32+m",
           "rv32imc": "generic_rv32+m+c"}[isa]
    return ["-target", "riscv32-freestanding-none", f"-mcpu={cpu}", "-Os", "-ffreestanding",
            "-nostdlib", "-Wall", "-Werror", "-fno-asynchronous-unwind-tables",
            # Unused functions of the kit (GCM in a build without it, say) take no RAM.
            "-ffunction-sections", "-fdata-sections", "-Wl,--gc-sections"]


def compile_firmware(sources, output, *, isa: str = "rv32i", include_dirs=()) -> Path:
    """Compile and link C and assembly ``sources`` with the kit into the ELF ``output``, and
    write the raw image beside it (``.bin``). Returns the ELF's path."""
    output = Path(output)
    command = [sys.executable, "-m", "ziglang", "cc", *compiler_flags(isa),
               "-T", str(KIT / "link.ld"), *(f"-I{folder}" for folder in include_dirs),
               f"-I{KIT}", *(str(KIT / name) for name in KIT_SOURCES),
               *(str(source) for source in sources), "-o", str(output)]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        raise FirmwareBuildError(f"the C compiler could not be started: {error}") from None
    if result.returncode != 0:
        lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
        if any("No module named ziglang" in line for line in lines):
            raise FirmwareBuildError("building firmware needs the ziglang package: "
                                     "pip install ziglang")
        # The first error on the message's first line (a command prints one line), the
        # compiler's context after it.
        first = next((line for line in lines if "error" in line), lines[0] if lines else "")
        raise FirmwareBuildError(f"firmware build failed: {first.strip()}\n" +
                                 "\n".join(lines[:20]))
    subprocess.run([sys.executable, "-m", "ziglang", "objcopy", "-O", "binary", str(output),
                    str(output.with_suffix(".bin"))], check=True, capture_output=True)
    return output


# --- the self-test's vectors -------------------------------------------------------------------

_CTRL = regmap.register("CTRL")
_MODE = {name: value for name, value, _ in _CTRL.field("MODE").values}
_DECRYPT = 1 << _CTRL.field("DECRYPT").offset


@dataclass(frozen=True)
class SelftestCase:
    """One check of the self-test: ``kind`` ``run`` (``cipher_run`` in ``mode``, a CTRL.MODE
    value with the DECRYPT bit), ``gcm-seal`` or ``gcm-open`` (``expected`` ``None``: a forged
    tag the peripheral must refuse)."""
    name: str
    kind: str
    mode: int
    key: bytes
    iv: bytes
    text: bytes
    expected: bytes | None
    aad: bytes = b""
    tag: bytes = b""


def _mmt_cases(mode: str, key_bits: int, decrypts: bool) -> list:
    from cipher_cores.cores.cavp import cryptography_vectors_path, parse_rsp
    prefix = {"ECB": "ECB", "CBC": "CBC", "CFB": "CFB128", "OFB": "OFB"}[mode]
    path = cryptography_vectors_path("ciphers", "AES", mode, f"{prefix}MMT{key_bits}.rsp")
    cases, seen = [], set()
    for section, record in parse_rsp(path):
        decrypt = section == "DECRYPT"
        # The first message of two or more blocks in each direction.
        if "COUNT" not in record or decrypt in seen or len(record["PLAINTEXT"]) < 64:
            continue
        if decrypt and not decrypts and mode in ("ECB", "CBC"):
            continue
        seen.add(decrypt)
        plaintext, ciphertext = bytes.fromhex(record["PLAINTEXT"]), \
            bytes.fromhex(record["CIPHERTEXT"])
        cases.append(SelftestCase(
            f"{path.name} {section} COUNT={record['COUNT']}", "run",
            _MODE[mode] | (_DECRYPT if decrypt else 0), bytes.fromhex(record["KEY"]),
            bytes.fromhex(record.get("IV", "00" * 16)),
            ciphertext if decrypt else plaintext, plaintext if decrypt else ciphertext))
    return cases


def _ctr_cases(key_bits: int) -> list:
    from cipher_cores.cores.modes.vectors import SP800_38A_CTR, SP800_38A_INITIAL_COUNTER, \
        SP800_38A_PLAINTEXT
    key, ciphertext = (bytes.fromhex(text) for text in SP800_38A_CTR[key_bits])
    plaintext, counter = bytes.fromhex(SP800_38A_PLAINTEXT), \
        bytes.fromhex(SP800_38A_INITIAL_COUNTER)
    return [SelftestCase(f"SP 800-38A F.5 CTR-AES{key_bits}.Encrypt", "run", _MODE["CTR"], key,
                         counter, plaintext, ciphertext),
            SelftestCase(f"SP 800-38A F.5 CTR-AES{key_bits}.Decrypt", "run",
                         _MODE["CTR"] | _DECRYPT, key, counter, ciphertext, plaintext)]


def _gcm_cases(key_bits: int) -> list:
    from cipher_cores.cores.cavp import cryptography_vectors_path, parse_rsp
    cases = []

    def pick(kind: str, want):
        path = cryptography_vectors_path("ciphers", "AES", "GCM", f"gcm{kind}{key_bits}.rsp")
        for _, record in parse_rsp(path):
            if "Count" in record and len(record["IV"]) == 24 and want(record):
                return path.name, record
        raise ValueError(f"no suitable case in {path.name}")

    name, record = pick("EncryptExtIV",
                        lambda r: len(r["PT"]) >= 64 and r["AAD"] and len(r["Tag"]) == 32)
    cases.append(SelftestCase(f"{name} Count={record['Count']} (seal)", "gcm-seal", _MODE["GCM"],
                              bytes.fromhex(record["Key"]), bytes.fromhex(record["IV"]),
                              bytes.fromhex(record["PT"]), bytes.fromhex(record["CT"]),
                              bytes.fromhex(record["AAD"]), bytes.fromhex(record["Tag"])))
    name, record = pick("Decrypt", lambda r: "FAIL" not in r and len(r["CT"]) >= 64 and r["AAD"])
    cases.append(SelftestCase(f"{name} Count={record['Count']} (open)", "gcm-open",
                              _MODE["GCM"] | _DECRYPT, bytes.fromhex(record["Key"]),
                              bytes.fromhex(record["IV"]), bytes.fromhex(record["CT"]),
                              bytes.fromhex(record["PT"]), bytes.fromhex(record["AAD"]),
                              bytes.fromhex(record["Tag"])))
    name, record = pick("Decrypt", lambda r: "FAIL" in r and r["CT"])
    cases.append(SelftestCase(f"{name} Count={record['Count']} (forged tag refused)",
                              "gcm-open", _MODE["GCM"] | _DECRYPT, bytes.fromhex(record["Key"]),
                              bytes.fromhex(record["IV"]), bytes.fromhex(record["CT"]), None,
                              bytes.fromhex(record["AAD"]), bytes.fromhex(record["Tag"])))
    return cases


def _reference_cases(config, rng: random.Random) -> list:
    """Each mode both ways on a random four-block message, against the reference model."""
    from cipher_cores.cores.modes.reference import decrypt_message, encrypt_message
    bits = config.block_bits
    size = bits // 8
    key_bytes = -(-config.key_bits // 8)
    key = rng.getrandbits(config.key_bits)
    iv = rng.getrandbits(bits)
    blocks = [rng.getrandbits(bits) for _ in range(4)]
    encrypt = lambda block: config.encrypt(key, block)
    decrypt = lambda block: config.decrypt(key, block)
    as_bytes = lambda values: b"".join(value.to_bytes(size, "big") for value in values)
    cases = []
    for mode in ("ECB", "CBC", "CFB", "OFB", "CTR"):
        ciphertext = encrypt_message(mode, encrypt, iv, blocks, bits)
        cases.append(SelftestCase(f"{mode} encrypt, random message (reference model)", "run",
                                  _MODE[mode], key.to_bytes(key_bytes, "big"),
                                  iv.to_bytes(size, "big"), as_bytes(blocks),
                                  as_bytes(ciphertext)))
        if mode in ("ECB", "CBC") and not config.decrypts:
            continue
        plaintext = decrypt_message(mode, encrypt, decrypt, iv, ciphertext, bits)
        cases.append(SelftestCase(f"{mode} decrypt, random message (reference model)", "run",
                                  _MODE[mode] | _DECRYPT, key.to_bytes(key_bytes, "big"),
                                  iv.to_bytes(size, "big"), as_bytes(ciphertext),
                                  as_bytes(plaintext)))
    return cases


def selftest_cases(target, *, small: bool = False) -> list:
    """The checks of the self-test for ``target`` (a :class:`~cipher_cores.scripts.flow.targets.
    PeripheralConfig`): the core's known answers in ECB both ways, then each mode both ways
    (AES: NIST files; PRESENT: the reference model), then GCM if built. ``small`` keeps the
    known answers and CBC only (for a RAM of a few KiB)."""
    config = target.core
    size = config.block_bits // 8
    key_bytes = -(-config.key_bits // 8)
    cases = []
    for vector in config.vectors():
        key = vector.key.to_bytes(key_bytes, "big")
        plaintext, ciphertext = vector.plaintext.to_bytes(size, "big"), \
            vector.ciphertext.to_bytes(size, "big")
        cases.append(SelftestCase(f"{vector.source} encrypt", "run", _MODE["ECB"], key,
                                  bytes(size), plaintext, ciphertext))
        if config.decrypts:
            cases.append(SelftestCase(f"{vector.source} decrypt", "run", _MODE["ECB"] | _DECRYPT,
                                      key, bytes(size), ciphertext, plaintext))
    if config.spec.name.startswith("aes"):
        for mode in ("ECB", "CBC", "CFB", "OFB"):
            cases += _mmt_cases(mode, config.key_bits, config.decrypts)
        cases += _ctr_cases(config.key_bits)
    else:
        cases += _reference_cases(config, random.Random(f"selftest {config.text}"))
    if target.gcm:
        cases += _gcm_cases(config.key_bits)
    if small:
        cases = [case for case in cases if case.kind == "run" and
                 case.mode & ~_DECRYPT in (_MODE["ECB"], _MODE["CBC"])
                 and (case.mode & ~_DECRYPT == _MODE["CBC"] or "MMT" not in case.name
                      and "random" not in case.name)]
    return cases


def _c_bytes(data: bytes) -> str:
    return "{" + ", ".join(f"0x{byte:02x}" for byte in data) + "}" if data else "{0}"


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def vectors_header(target, *, small: bool = False, interrupts: bool = True) -> str:
    """``selftest_vectors.h`` for ``target`` (``small``: see :func:`selftest_cases`; no
    software AES, four-block benchmarks; ``interrupts``: whether the CPU takes them)."""
    config = target.core
    cases = selftest_cases(target, small=small)
    size = config.block_bits // 8
    key_bytes = -(-config.key_bits // 8)
    kinds = {"run": "SELFTEST_RUN", "gcm-seal": "SELFTEST_GCM_SEAL",
             "gcm-open": "SELFTEST_GCM_OPEN"}
    modes = (1 << 5) - 1 | ((1 << _MODE["GCM"]) if target.gcm else 0)
    software = config.spec.name.startswith("aes") and config.key_bits == 128 and not small
    irq_case = next(index for index, case in enumerate(cases)
                    if case.kind == "run" and case.mode == _MODE["ECB"])
    bench_key = random.Random(f"bench {config.text}").getrandbits(config.key_bits)
    lines = [
        f"/* Self-test vectors for {target.label}; generated by scripts/flow/firmware.py. */",
        "#include <stdint.h>", "",
        f"#define SELFTEST_CORE {_c_string(target.label)}",
        f"#define SELFTEST_BLOCK_BYTES {size}u",
        f"#define SELFTEST_MODES 0x{modes:x}u",
        f"#define SELFTEST_DECRYPTS {int(config.decrypts)}",
        f"#define SELFTEST_GCM {int(target.gcm and not small)}",
        # The DMA checks are compiled only for a peripheral with its DMA (the small RAMs of the
        # iCE40 boards have no room for code that would not run).
        f"#define SELFTEST_DMA {int(target.dma)}",
        f"#define SELFTEST_IRQ {int(interrupts)}",
        f"#define SELFTEST_SOFTWARE_AES {int(software)}",
        f"#define SELFTEST_BENCH_BLOCKS {4 if small else BENCH_BLOCKS}u",
        f"#define SELFTEST_SOFTWARE_BLOCKS {SOFTWARE_BLOCKS}u",
        f"#define SELFTEST_BENCH_KEY_BYTES {key_bytes}u",
        f"#define SELFTEST_BUFFER_BYTES "
        f"{max(max(len(case.text) for case in cases), 0 if small else 16 * SOFTWARE_BLOCKS)}u",
        f"#define SELFTEST_CASE_COUNT {len(cases)}u",
        f"#define SELFTEST_IRQ_CASE {irq_case}u",
        "enum { SELFTEST_RUN, SELFTEST_GCM_SEAL, SELFTEST_GCM_OPEN };",
        "typedef struct {",
        "    const char *name;",
        "    uint8_t kind, mode, key_bytes, tag_length;",
        "    uint32_t length, aad_length;",
        "    const uint8_t *key, *iv, *in, *expected, *aad, *tag;",
        "} selftest_case;", "",
        f"static const uint8_t SELFTEST_BENCH_KEY[] = "
        f"{_c_bytes(bench_key.to_bytes(key_bytes, 'big'))};",
    ]
    entries = []
    for index, case in enumerate(cases):
        for field in ("key", "iv", "text", "expected", "aad", "tag"):
            value = getattr(case, field)
            if value is not None:
                lines.append(f"static const uint8_t case{index}_{field}[] = {_c_bytes(value)};")
        expected = "0" if case.expected is None else f"case{index}_expected"
        entries.append(
            f"    {{{_c_string(case.name)}, {kinds[case.kind]}, 0x{case.mode:02x}, "
            f"{len(case.key)}, {len(case.tag)}, {len(case.text)}, {len(case.aad)}, "
            f"case{index}_key, case{index}_iv, case{index}_text, {expected}, "
            f"case{index}_aad, case{index}_tag}},")
    lines += ["", "static const selftest_case SELFTEST_CASES[] = {", *entries, "};", ""]
    return "\n".join(lines)


#: The self-test programs: the full one, and the known-answer check alone (no printf, no
#: benchmarks) for a RAM of 2 KiB.
PROGRAMS = {"full": "selftest.c", "small": "selftest.c", "known-answers": "known_answers.c"}


def build_selftest(target, folder, *, isa: str = "rv32i", variant: str = "full",
                   interrupts: bool = True) -> Path:
    """Write ``selftest_vectors.h`` for ``target`` into ``folder`` and build ``selftest.elf``
    (and ``selftest.bin``) there; returns the ELF's path. ``variant`` is ``full``, ``small``
    (fewer vectors, no software AES: for boards with little block RAM) or ``known-answers``
    (the small set of vectors, checked and reported as PASS/FAIL lines only)."""
    if variant not in PROGRAMS:
        raise ValueError(f"variant must be one of {', '.join(PROGRAMS)}, not {variant!r}")
    small = variant != "full"
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "selftest_vectors.h").write_text(vectors_header(target, small=small,
                                                              interrupts=interrupts))
    sources = [KIT / "selftest" / PROGRAMS[variant]]
    if target.core.spec.name.startswith("aes") and target.core.key_bits == 128 and not small:
        sources.append(KIT / "aes_soft.c")
    return compile_firmware(sources, folder / "selftest.elf", isa=isa, include_dirs=[folder])
