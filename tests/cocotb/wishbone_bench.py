"""cocotb tests of the exported Wishbone peripheral (``cipher-cores export --core
wishbone:aes-128``), driven by cocotbext-wishbone's ``WishboneMaster`` as firmware would drive
it: each access one classic cycle (``cyc``/``stb`` until ``ack``), ``adr`` the word address.

Run by ``tests/test_cocotb.py`` through :func:`tests.support.cocotb_run.run_cocotb`; results
are checked against pycryptodome and FIPS-197.
"""

import cocotb
from cocotb.triggers import Timer
from cocotbext.wishbone.driver import WBOp, WishboneMaster

from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_C

from .firmware import Firmware, reference, reset, seeded, start_clock


#: Our port names (``bus__cyc``, ``bus__dat_w``, ...) by the names cocotbext-wishbone uses.
SIGNALS = {"cyc": "cyc", "stb": "stb", "we": "we", "adr": "adr", "datwr": "dat_w",
           "datrd": "dat_r", "ack": "ack", "sel": "sel"}


async def wishbone_firmware(dut) -> Firmware:
    """Clock, reset, and a :class:`Firmware` over a ``WishboneMaster`` on the ``bus__`` ports."""
    start_clock(dut.clk)
    # Idle bus and reset as ordinary writes, landed before the master is made. The master sets
    # its outputs with immediate writes, which Icarus 11 applies to these top-level nets without
    # waking the continuous assignments reading them: at time 0 (nets still Z) that leaves
    # ``cyc & stb`` X inside, and ``ack``, whose next value depends on itself, X for good. Once
    # the nets hold these values, the master's writes change nothing.
    dut.rst.value = 1
    for name in ("cyc", "stb", "we", "adr", "dat_w"):
        getattr(dut, f"bus__{name}").value = 0
    dut.bus__sel.value = 0b1111
    await Timer(1, "ns")
    master = WishboneMaster(dut, "bus", dut.clk, width=32, timeout=100, signals_dict=SIGNALS,
                            bus_separator="__")
    await reset(dut.clk, dut.rst)

    async def read(address: int) -> int:
        result, = await master.send_cycle([WBOp(adr=address // 4, acktimeout=100)])
        return result.datrd.to_unsigned()

    async def write(address: int, value: int):
        await master.send_cycle([WBOp(adr=address // 4, dat=value, sel=0b1111,
                                      acktimeout=100)])

    return Firmware(read, write)


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_fips197_ecb(dut):
    """FIPS-197 Appendix C.1 (AES-128) in ECB mode, encrypted then decrypted."""
    vector = FIPS197_APPENDIX_C[0]
    firmware = await wishbone_firmware(dut)
    assert await firmware.message("ECB", vector.key, 0, [vector.plaintext]) == \
        [vector.ciphertext]
    assert await firmware.message("ECB", vector.key, 0, [vector.ciphertext], decrypt=True) == \
        [vector.plaintext]


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_cbc_message(dut):
    """A CBC message of random blocks (key, IV, text from the seed) encrypted, then decrypted."""
    rng = seeded("wishbone-cbc")
    key, iv = rng.getrandbits(128), rng.getrandbits(128)
    blocks = [rng.getrandbits(128) for _ in range(5)]
    firmware = await wishbone_firmware(dut)
    ciphertext = await firmware.message("CBC", key, iv, blocks)
    assert ciphertext == reference("CBC", key, iv, blocks)
    await firmware.wait_done()
    assert await firmware.message("CBC", key, iv, ciphertext, decrypt=True) == blocks


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_ctr_message(dut):
    """A CTR message of random blocks (key, initial counter, text from the seed)."""
    rng = seeded("wishbone-ctr")
    key, counter = rng.getrandbits(128), rng.getrandbits(128)
    blocks = [rng.getrandbits(128) for _ in range(5)]
    firmware = await wishbone_firmware(dut)
    assert await firmware.message("CTR", key, counter, blocks) == \
        reference("CTR", key, counter, blocks)
