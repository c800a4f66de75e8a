"""cocotb tests of the exported AXI4-Lite peripheral (``cipher-cores export --core axi:aes-128
--name aes_axi``), driven by cocotbext-axi's ``AxiLiteMaster`` on the ``s_axi_*`` ports
(``aclk``, ``aresetn`` active low): the same register map and firmware sequence as the Wishbone
peripheral, at byte addresses; every access's response checked (``OKAY``, or ``SLVERR`` for the
accesses the map flags: an unmapped address, a write to a read-only register).

Run by ``tests/test_cocotb.py`` through :func:`tests.support.cocotb_run.run_cocotb`.
"""

import cocotb
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp

from cipher_cores.cores.aes.vectors import FIPS197_APPENDIX_C

from .firmware import Firmware, bit, offset, reference, reset, seeded, start_clock


#: An address the peripheral does not decode (beyond the last register, below 0x100).
UNMAPPED = 0xF0


async def axi_master(dut) -> AxiLiteMaster:
    """Clock, reset (``aresetn`` low for two edges) and an ``AxiLiteMaster`` on ``s_axi_*``,
    made once the reset is over (cocotbext-axi takes a reset signal as released until it sees
    it change)."""
    start_clock(dut.aclk)
    for name in ("awvalid", "wvalid", "bready", "arvalid", "rready"):
        getattr(dut, f"s_axi_{name}").value = 0
    await reset(dut.aclk, dut.aresetn, active=0)
    master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi"), dut.aclk, dut.aresetn,
                           reset_active_level=False)
    return master


def firmware_on(master: AxiLiteMaster) -> Firmware:
    """A :class:`Firmware` whose every access must answer ``OKAY``."""
    async def read(address: int) -> int:
        answer = await master.read(address, 4)
        assert answer.resp == AxiResp.OKAY, f"read of {address:#04x}: {answer.resp!r}"
        return int.from_bytes(answer.data, "little")

    async def write(address: int, value: int):
        answer = await master.write(address, value.to_bytes(4, "little"))
        assert answer.resp == AxiResp.OKAY, f"write of {address:#04x}: {answer.resp!r}"

    return Firmware(read, write)


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_fips197_ecb(dut):
    """FIPS-197 Appendix C.1 (AES-128) in ECB mode, encrypted then decrypted."""
    vector = FIPS197_APPENDIX_C[0]
    firmware = firmware_on(await axi_master(dut))
    assert await firmware.message("ECB", vector.key, 0, [vector.plaintext]) == \
        [vector.ciphertext]
    assert await firmware.message("ECB", vector.key, 0, [vector.ciphertext], decrypt=True) == \
        [vector.plaintext]


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_cbc_message(dut):
    """A CBC message of random blocks (key, IV, text from the seed) encrypted, then decrypted."""
    rng = seeded("axi-cbc")
    key, iv = rng.getrandbits(128), rng.getrandbits(128)
    blocks = [rng.getrandbits(128) for _ in range(5)]
    firmware = firmware_on(await axi_master(dut))
    ciphertext = await firmware.message("CBC", key, iv, blocks)
    assert ciphertext == reference("CBC", key, iv, blocks)
    await firmware.wait_done()
    assert await firmware.message("CBC", key, iv, ciphertext, decrypt=True) == blocks


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_ctr_message(dut):
    """A CTR message of random blocks (key, initial counter, text from the seed)."""
    rng = seeded("axi-ctr")
    key, counter = rng.getrandbits(128), rng.getrandbits(128)
    blocks = [rng.getrandbits(128) for _ in range(5)]
    firmware = firmware_on(await axi_master(dut))
    assert await firmware.message("CTR", key, counter, blocks) == \
        reference("CTR", key, counter, blocks)


async def error_flags(firmware: Firmware) -> int:
    return await firmware.read("ERROR") & (bit("ERROR", "BAD_ADDRESS") | bit("ERROR", "READ_ONLY"))


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_unmapped_read_answers_slverr(dut):
    """A read of an unmapped address: ``SLVERR``, data 0, ``ERROR.BAD_ADDRESS`` set (and only
    it); writing 1 to it clears it."""
    master = await axi_master(dut)
    firmware = firmware_on(master)
    assert await error_flags(firmware) == 0
    answer = await master.read(UNMAPPED, 4)
    assert answer.resp == AxiResp.SLVERR, answer
    assert answer.data == bytes(4)
    assert await error_flags(firmware) == bit("ERROR", "BAD_ADDRESS")
    await firmware.write("ERROR", bit("ERROR", "BAD_ADDRESS"))
    assert await error_flags(firmware) == 0


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_unmapped_write_answers_slverr(dut):
    """A write to an unmapped address: ``SLVERR`` and ``ERROR.BAD_ADDRESS``."""
    master = await axi_master(dut)
    firmware = firmware_on(master)
    answer = await master.write(UNMAPPED, (0x12345678).to_bytes(4, "little"))
    assert answer.resp == AxiResp.SLVERR, answer
    assert await error_flags(firmware) == bit("ERROR", "BAD_ADDRESS")


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_read_only_write_answers_slverr(dut):
    """A write to ``STATUS`` (read-only): ``SLVERR``, ``ERROR.READ_ONLY`` set (and only it),
    ``STATUS`` unchanged."""
    master = await axi_master(dut)
    firmware = firmware_on(master)
    status = await firmware.read("STATUS")
    answer = await master.write(offset("STATUS"), (0xffffffff).to_bytes(4, "little"))
    assert answer.resp == AxiResp.SLVERR, answer
    assert await error_flags(firmware) == bit("ERROR", "READ_ONLY")
    assert await firmware.read("STATUS") & ~bit("STATUS", "ERROR") == \
        status & ~bit("STATUS", "ERROR")


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_busy_write_answers_slverr(dut):
    """A key write while a message is in progress (started, its blocks not yet written):
    ``SLVERR`` and ``ERROR.BUSY_WRITE``; the message then runs with the key written before."""
    rng = seeded("axi-busy")
    key, iv = rng.getrandbits(128), rng.getrandbits(128)
    blocks = [rng.getrandbits(128) for _ in range(2)]
    master = await axi_master(dut)
    firmware = firmware_on(master)
    await firmware.set_key(key)
    await firmware.set_iv(iv)
    await firmware.start("CBC", len(blocks))
    assert await firmware.read("STATUS") & bit("STATUS", "BUSY")
    answer = await master.write(offset("KEY", 0), (0xdeadbeef).to_bytes(4, "little"))
    assert answer.resp == AxiResp.SLVERR, answer
    assert await firmware.read("ERROR") == bit("ERROR", "BUSY_WRITE")
    assert await firmware.stream(blocks) == reference("CBC", key, iv, blocks)
