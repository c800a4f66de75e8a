"""cocotb tests of the exported AXI4-Stream core (``cipher-cores export --core aes
--key-bits 128 --axis --name aes_axis``), driven by cocotbext-axi's stream models: an
``AxiStreamSource`` on the key channel (``s_axis_key_*``), one on the block channel
(``s_axis_*``, ``tuser`` 1 to decrypt) and an ``AxiStreamSink`` on the results (``m_axis_*``),
the data source and the sink pausing at random (seeded).

Byte lane 0 (``tdata[7:0]``) is the first byte of the FIPS-197 byte string, so a frame of
``16 * n`` bytes is ``n`` blocks, one transfer each, ``tlast`` on the last: every result frame
must be pycryptodome's ECB result of its frame, with the same boundaries.

Run by ``tests/test_cocotb.py`` through :func:`tests.support.cocotb_run.run_cocotb`.
"""

import cocotb
from cocotb.triggers import ClockCycles, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from .firmware import reset, seeded, start_clock


#: Blocks in each frame of a test, in order.
FRAME_BLOCKS = (1, 4, 2, 7, 1, 3)


def pauses(rng, probability: float):
    """A pause generator for cocotbext-axi: ``True`` (pause this cycle) with ``probability``."""
    while True:
        yield rng.random() < probability


async def stream_models(dut, rng):
    """Clock, reset (``aresetn`` low for two edges), then the key source, the data source and
    the result sink, the last two pausing at random."""
    start_clock(dut.aclk)
    for name in ("s_axis_key_tvalid", "s_axis_tvalid", "m_axis_tready"):
        getattr(dut, name).value = 0
    await reset(dut.aclk, dut.aresetn, active=0)
    # Made after the reset: cocotbext-axi takes a reset signal as released until it changes.
    models = []
    for kind, prefix in ((AxiStreamSource, "s_axis_key"), (AxiStreamSource, "s_axis"),
                         (AxiStreamSink, "m_axis")):
        models.append(kind(AxiStreamBus.from_prefix(dut, prefix), dut.aclk, dut.aresetn,
                           reset_active_level=False))
    key_source, source, sink = models
    source.set_pause_generator(pauses(rng, 0.3))
    sink.set_pause_generator(pauses(rng, 0.3))
    return key_source, source, sink


async def run_frames(dut, name: str, decrypt: bool):
    """A random key, then frames of :data:`FRAME_BLOCKS` random blocks sent with ``tuser`` =
    ``decrypt``; each result frame checked against pycryptodome, boundaries included."""
    from Crypto.Cipher import AES

    rng = seeded(name)
    key = rng.randbytes(16)
    frames = [rng.randbytes(16 * blocks) for blocks in FRAME_BLOCKS]
    key_source, source, sink = await stream_models(dut, rng)
    await key_source.send(AxiStreamFrame(key))
    await key_source.wait()
    for data in frames:
        await source.send(AxiStreamFrame(data, tuser=int(decrypt)))
    cipher = AES.new(key, AES.MODE_ECB)
    for index, data in enumerate(frames):
        result = await with_timeout(sink.recv(), 20_000, "ns")
        expected = cipher.decrypt(data) if decrypt else cipher.encrypt(data)
        assert len(result.tdata) == len(data), \
            f"frame {index}: {len(result.tdata)} bytes out, {len(data)} in (tlast misplaced)"
        assert bytes(result.tdata) == expected, f"frame {index} ({len(data) // 16} blocks)"
    await ClockCycles(dut.aclk, 50)
    assert sink.empty(), "results beyond the frames sent"
    assert source.empty() and key_source.empty()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_encrypt_frames(dut):
    """Frames of several lengths encrypted (``tuser`` 0)."""
    await run_frames(dut, "axis-encrypt", decrypt=False)


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_decrypt_frames(dut):
    """Frames of several lengths decrypted (``tuser`` 1)."""
    await run_frames(dut, "axis-decrypt", decrypt=True)


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_key_change_between_frames(dut):
    """A second key sent after the first frames: every frame is encrypted with the key sent
    before it, whatever is still in flight when the new key waits."""
    from Crypto.Cipher import AES

    rng = seeded("axis-key-change")
    keys = [rng.randbytes(16) for _ in range(2)]
    frames = [[rng.randbytes(16 * blocks) for blocks in (3, 1, 2)] for _ in keys]
    key_source, source, sink = await stream_models(dut, rng)
    for key, key_frames in zip(keys, frames):
        # The key waits in the key source until the core takes it (after its blocks in flight);
        # the next frames go in after it.
        await key_source.send(AxiStreamFrame(key))
        await key_source.wait()
        for data in key_frames:
            await source.send(AxiStreamFrame(data, tuser=0))
        await source.wait()
    for key, key_frames in zip(keys, frames):
        cipher = AES.new(key, AES.MODE_ECB)
        for data in key_frames:
            result = await with_timeout(sink.recv(), 20_000, "ns")
            assert bytes(result.tdata) == cipher.encrypt(data)
