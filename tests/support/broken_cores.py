"""Deliberately broken cores, one per kind of contract violation, to show the contract checks of
``tests/test_contract.py`` catch each one.

Each wraps the toy cipher (``tests/support/toy_cipher.py``, fast to simulate) and breaks one rule of
:class:`~cipher_cores.cores.interface.BlockCipherSignature` on its ports, or lies about one of its figures.
:data:`BROKEN` maps each fault to a catalog entry (``CipherEntry``) built on the toy's model.
"""

from amaranth.hdl import Module, Signal

from cipher_cores.cores.catalog import CipherEntry
from cipher_cores.cores.cipher import BlockCipher

from .helpers import pass_through
from .toy_cipher import ToyCipher, toy_decrypt, toy_encrypt


__all__ = ["BrokenCore", "FAULTS", "BROKEN"]


#: Each fault, and what it breaks.
FAULTS = {
    "valid_drops": "output.valid drops for a cycle while the result waits",
    "payload_changes": "output.payload changes while the result waits",
    "spurious_output": "output.valid rises once with no block in the core",
    "key_ready_while_busy": "key.ready is always high (keys arriving while busy are lost)",
    "ready_before_key": "input.ready is high before the first key (such blocks are lost)",
    "ready_while_key_valid": "input.ready ignores key.valid (such blocks are lost)",
    "wrong_latency": "the latency property is one more than the core's",
    "wrong_interval": "the initiation_interval property is one less than the core's",
    "wrong_key_load": "the key_load_cycles property is one more than the core's",
    "data_dependent_timing": "a result with bit 0 set waits one more cycle",
    "survives_reset": "a key loaded before a reset is loaded again after it",
}


class BrokenCore(BlockCipher):
    """The toy cipher (2 rounds) with one ``fault`` from :data:`FAULTS`.

    Parameters
    ----------
    key_bits : :class:`int`
        Key width (80).
    fault : :class:`str`
        One of :data:`FAULTS`.
    """
    def __init__(self, *, key_bits: int = 80, fault: str):
        if fault not in FAULTS:
            raise ValueError(f"fault must be one of {', '.join(FAULTS)}, not {fault!r}")
        self._fault = fault
        self._toy = ToyCipher(block_bits=64, key_bits=key_bits, rounds=2)
        super().__init__(64, key_bits)

    @property
    def fault(self) -> str:
        return self._fault

    @property
    def latency(self) -> int:
        return self._toy.latency + (self._fault == "wrong_latency")

    @property
    def initiation_interval(self) -> int:
        return self._toy.initiation_interval - (self._fault == "wrong_interval")

    @property
    def key_load_cycles(self) -> int:
        return self._toy.key_load_cycles + (self._fault == "wrong_key_load")

    def elaborate(self, platform):
        m = Module()
        m.submodules.toy = toy = self._toy
        fault = self._fault
        pass_through(m, self, toy)

        phase = Signal()                    # toggles every cycle
        m.d.sync += phase.eq(~phase)

        if fault == "valid_drops":
            m.d.comb += [
                self.output.valid.eq(toy.output.valid & ~phase),
                toy.output.ready.eq(self.output.ready & ~phase),
            ]
        elif fault == "payload_changes":
            m.d.comb += self.output.payload.eq(toy.output.payload ^ phase)
        elif fault == "spurious_output":
            count = Signal(range(4))
            with m.If(count != 3):
                m.d.sync += count.eq(count + 1)
            m.d.comb += self.output.valid.eq(toy.output.valid | (count == 2))
        elif fault == "key_ready_while_busy":
            m.d.comb += [
                self.key.ready.eq(1),
                toy.key.valid.eq(self.key.valid & toy.key.ready),
            ]
        elif fault in ("ready_before_key", "ready_while_key_valid", "survives_reset"):
            seen_key = Signal(reset_less=fault == "survives_reset")
            with m.If(self.key.valid & self.key.ready):
                m.d.sync += seen_key.eq(1)
            if fault == "ready_before_key":
                m.d.comb += [
                    self.input.ready.eq(toy.input.ready | ~seen_key),
                    toy.input.valid.eq(self.input.valid & seen_key),
                ]
            elif fault == "ready_while_key_valid":
                m.d.comb += [
                    self.input.ready.eq(toy.input.ready | (toy.key.ready & seen_key)),
                    toy.input.valid.eq(self.input.valid & ~self.key.valid),
                ]
            else:
                # The key register survives the reset, and is loaded into the toy again.
                saved = Signal(self.signature.key_bits, reset_less=True)
                reloaded = Signal()
                with m.If(self.key.valid & self.key.ready):
                    m.d.sync += [saved.eq(self.key.payload), reloaded.eq(1)]
                with m.If(seen_key & ~reloaded & ~self.key.valid):
                    m.d.comb += [toy.key.valid.eq(1), toy.key.payload.eq(saved)]
                    m.d.sync += reloaded.eq(1)
        elif fault == "data_dependent_timing":
            waited = Signal()
            late = toy.output.payload[0] & ~waited
            with m.If(toy.output.valid & late):
                m.d.sync += waited.eq(1)
            with m.If(self.output.valid & self.output.ready):
                m.d.sync += waited.eq(0)
            m.d.comb += [
                self.output.valid.eq(toy.output.valid & ~late),
                toy.output.ready.eq(self.output.ready & ~late),
            ]
        return m


def _entry(fault: str) -> CipherEntry:
    return CipherEntry(
        name=f"broken-{fault}", title=f"BROKEN-{fault}",
        component=lambda key_bits, **options: BrokenCore(key_bits=key_bits, fault=fault),
        encrypt=lambda key, block, key_bits: toy_encrypt(key, block, key_bits=key_bits, rounds=2),
        decrypt=lambda key, block, key_bits: toy_decrypt(key, block, key_bits=key_bits, rounds=2),
        block_bits=64, key_bits=(80,), default_key_bits=80, description=FAULTS[fault])


#: A catalog entry per fault, for the contract checks.
BROKEN = {fault: _entry(fault) for fault in FAULTS}
