"""One core for several users: :class:`CoreSelect` (several cores behind one interface),
:class:`SharedCore` and its :class:`CorePort` ports (one core, used in turn)."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from ..cipher import BlockCipher, CoreFigures, check_block_cipher, check_unmasked


__all__ = ["CoreSelect", "CorePort", "SharedCore"]


class CoreSelect(BlockCipher):
    """Several cores with one block size behind one core's interface: a
    :class:`~cipher_cores.cores.cipher.BlockCipher` with the widest key.

    ``select`` routes all three streams to one core; the key stream is as wide as the widest key,
    and a core takes its low ``key_bits``. ``select`` must only change while no block is in any
    core (the peripheral changes it only when idle). No registers: latency and rates are the
    selected core's, so the figures this component states are bounds: each is the largest of
    the cores' (exact when the cores agree), and it :attr:`decrypts` only if every core does.

    Parameters
    ----------
    cores : sequence of :class:`~cipher_cores.cores.cipher.BlockCipher`
        The cores (they become submodules), all with the same block size.

    Members
    -------
    key, input, output :
        As in :class:`~cipher_cores.cores.interface.BlockCipherSignature` with the widest key.
    select : :class:`Signal` (an attribute, not a port of the signature)
        The core in use; the parent drives it.
    """
    def __init__(self, cores):
        cores = tuple(cores)
        if not cores:
            raise ValueError("cores must hold at least one core")
        for index, core in enumerate(cores):
            check_unmasked(check_block_cipher(core, f"cores[{index}]"), "CoreSelect")
        if any(core.block_bits != cores[0].block_bits for core in cores):
            raise ValueError("all cores must have the same block size")
        self._cores = cores
        super().__init__(cores[0].block_bits, max(core.key_bits for core in cores),
                         decrypt=all(core.decrypts for core in cores))
        self.select = Signal(range(max(2, len(cores))), name="select")

    @property
    def cores(self) -> tuple:
        return self._cores

    @property
    def latency(self) -> int:
        """The longest latency of the cores."""
        return max(core.latency for core in self._cores)

    @property
    def initiation_interval(self) -> int:
        """The longest initiation interval of the cores."""
        return max(core.initiation_interval for core in self._cores)

    @property
    def key_load_cycles(self) -> int:
        """The longest key load of the cores."""
        return max(core.key_load_cycles for core in self._cores)

    def elaborate(self, platform):
        m = Module()
        for index, core in enumerate(self._cores):
            m.submodules[f"core{index}"] = core
            chosen = self.select == index
            m.d.comb += [
                core.key.payload.eq(self.key.payload[:core.key_bits]),
                core.key.valid.eq(self.key.valid & chosen),
                core.input.payload.eq(self.input.payload),
                core.input.valid.eq(self.input.valid & chosen),
                core.output.ready.eq(self.output.ready & chosen),
            ]
            with m.If(chosen):
                m.d.comb += [
                    self.key.ready.eq(core.key.ready),
                    self.input.ready.eq(core.input.ready),
                    self.output.valid.eq(core.output.valid),
                    self.output.payload.eq(core.output.payload),
                ]
        return m


class CorePort(CoreFigures, BlockCipher):
    """One user's view of a :class:`SharedCore`: a :class:`~cipher_cores.cores.cipher.BlockCipher`
    with the core's widths and no logic of its own (the :class:`SharedCore` drives and reads its
    ports), so that a mode or GCM can take it as its core. Its :attr:`decrypts`,
    :attr:`latency`, :attr:`initiation_interval` and :attr:`key_load_cycles` are the core's.

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        The shared core.
    """
    def __init__(self, core):
        check_block_cipher(core, "core")
        self._core = core
        super().__init__(core.block_bits, core.key_bits, decrypt=core.decrypts)

    def elaborate(self, platform):
        return Module()


class SharedCore(wiring.Component):
    """One block-cipher core used in turn by several users, each through a :class:`CorePort`.

    ``select`` routes the core's three streams to one port; the others see ``ready`` and
    ``valid`` low. ``select`` must only change while no key and no block is in the core and no
    user holds ``valid`` high (the peripheral changes it only when idle). No registers: latency
    and rates are the core's. A user finds the core with whatever key the last user loaded: it
    must load its own (the peripheral reloads the key after a switch that follows a key change).

    Parameters
    ----------
    core : :class:`~cipher_cores.cores.cipher.BlockCipher`
        The core (it becomes a submodule).
    users : :class:`int`
        Number of ports (at least 2).

    Members
    -------
    select : ``In(range(users))``
        The port in use.
    """
    def __init__(self, core, *, users: int = 2):
        check_unmasked(check_block_cipher(core, "core"), "SharedCore")
        if not isinstance(users, int) or isinstance(users, bool):
            raise TypeError(f"users must be an integer, not {users!r}")
        if users < 2:
            raise ValueError(f"users must be at least 2, not {users!r}")
        self._core = core
        self._ports = tuple(CorePort(core) for _ in range(users))
        super().__init__({"select": In(range(users))})

    @property
    def core(self) -> BlockCipher:
        return self._core

    @property
    def ports(self) -> tuple:
        """The :class:`CorePort` of each user, by ``select`` value."""
        return self._ports

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self._core
        for index, port in enumerate(self._ports):
            chosen = self.select == index
            m.d.comb += [
                port.key.ready.eq(core.key.ready & chosen),
                port.input.ready.eq(core.input.ready & chosen),
                port.output.valid.eq(core.output.valid & chosen),
                port.output.payload.eq(core.output.payload),
            ]
            with m.If(chosen):
                m.d.comb += [
                    core.key.valid.eq(port.key.valid),
                    core.key.payload.eq(port.key.payload),
                    core.input.valid.eq(port.input.valid),
                    core.input.payload.eq(port.input.payload),
                    core.output.ready.eq(port.output.ready),
                ]
        return m
