"""The AES state register and its SubBytes / InvSubBytes image.

The S-boxes look up the *registered* state, so that they can be block RAM: a synchronous RAM read
port addressed by the register's next value, enabled with it, yields S(state) in the same cycle as
the register itself, with no extra cycle of latency. In look-up-logic form the same S-box ROM is
read combinationally from the register. Either way one 512-entry table per byte lane holds SubBytes
at addresses 0..255 and InvSubBytes at 256..511, so each lane's S-box serves both directions. In
Boolean form each lane is a :class:`~cipher_cores.cores.aes.boolean_sbox.BooleanSBox`, also read combinationally
from the register: one tower-field inverter per lane serves both directions.
"""

from amaranth.hdl import Cat, Module, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from .boolean_sbox import BooleanSBox
from .round import join_bytes, state_bytes
from .sbox import INV_SBOX, SBOX


__all__ = ["SBOX_IMPLEMENTATIONS", "check_sbox", "SubstitutedRegister"]


#: The S-box implementations: ``"logic"`` (look-up tables in LUTs), ``"bram"`` (block RAM),
#: ``"boolean"`` (tower-field inversion in XOR/AND logic).
SBOX_IMPLEMENTATIONS = ("logic", "bram", "boolean")


def check_sbox(sbox) -> str:
    if not isinstance(sbox, str):
        raise TypeError(f"sbox must be a string ('logic', 'bram' or 'boolean'), not {sbox!r}")
    if sbox not in SBOX_IMPLEMENTATIONS:
        raise ValueError(f"sbox must be 'logic', 'bram' or 'boolean', not {sbox!r}")
    return sbox


class SubstitutedRegister(wiring.Component):
    """A 128-bit state register and the S-box image of its contents.

    Parameters
    ----------
    sbox : :class:`str`
        ``"logic"``, ``"bram"`` (16 synchronous 512x8 memories: 16 ``SB_RAM40_4K`` on iCE40, 16
        ``DP16KD`` on ECP5) or ``"boolean"`` (16 :class:`~cipher_cores.cores.aes.boolean_sbox.BooleanSBox`).

    Members
    -------
    d : ``In(128)``
        Next state, loaded when ``en`` is high.
    d_inverse : ``In(1)``
        Next direction flag, loaded with ``d``.
    en : ``In(1)``
        Load enable.
    q : ``Out(128)``
        The state register.
    q_inverse : ``Out(1)``
        The direction flag register.
    substituted : ``Out(128)``
        SubBytes(``q``) if ``q_inverse`` is 0, InvSubBytes(``q``) if it is 1. Valid from the cycle
        after the first load (in block-RAM form it is not reset).
    """
    d: In(128)
    d_inverse: In(1)
    en: In(1)
    q: Out(128)
    q_inverse: Out(1)
    substituted: Out(128)

    def __init__(self, *, sbox: str = "logic"):
        self._sbox = check_sbox(sbox)
        super().__init__()

    @property
    def sbox(self) -> str:
        return self._sbox

    def elaborate(self, platform):
        m = Module()
        with m.If(self.en):
            m.d.sync += [self.q.eq(self.d), self.q_inverse.eq(self.d_inverse)]

        table = list(SBOX) + list(INV_SBOX)
        looked_up = []
        for lane, (d_byte, q_byte) in enumerate(zip(state_bytes(self.d), state_bytes(self.q))):
            if self._sbox == "boolean":
                m.submodules[f"sbox{lane}"] = sbox = BooleanSBox()
                m.d.comb += [sbox.i.eq(q_byte), sbox.inverse.eq(self.q_inverse)]
                looked_up.append(sbox.o)
                continue
            if self._sbox == "bram":
                # ECP5 keeps small memories in LUTs unless asked; iCE40 infers block RAM anyway.
                rom = memory.Memory(shape=unsigned(8), depth=512, init=table,
                                    attrs={"ram_style": "block"})
                port = rom.read_port(domain="sync", transparent_for=())
                m.d.comb += [port.addr.eq(Cat(d_byte, self.d_inverse)), port.en.eq(self.en)]
            else:
                rom = memory.Memory(shape=unsigned(8), depth=512, init=table)
                port = rom.read_port(domain="comb")
                m.d.comb += port.addr.eq(Cat(q_byte, self.q_inverse))
            m.submodules[f"sbox{lane}"] = rom
            looked_up.append(port.data)
        m.d.comb += self.substituted.eq(join_bytes(looked_up))
        return m
