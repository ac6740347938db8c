"""The replica as the adapter sees it: one client over the runtimes, drivers and Multiplexer.

Owns ``ReplicaClient``, the only part of ``compute.replica`` the adapter (``mzlite``) uses,
and the wiring of one database's replica (``ReplicaClient.start``): the shared-arrangement
registry, the maintenance runtime and, with ``interactive``, the interactive runtime, a
driver for each (``RuntimeDriver.for_maintenance`` / ``for_interactive``), the
``Multiplexer`` over them, and the process baseline of the scheduling settings
(``compute.replica.scheduling.Baseline``), requested for the client's life.

What it exposes is what the adapter needs and nothing more: the protocol endpoint
(``send``, ``recv``, ``deliver_peek_responses``, ``owner_of``: the Multiplexer's own
methods, bound, so no call goes through a wrapper); ``assist`` (an idle runtime's pending
work on the caller's thread, after a write or before a read blocks); the urgency of a
delivered answer (``raise_urgency``, ``lower_urgency``); the deferred-wake block
(``deferred_wakes``, ``flush_deferred_wakes``, and ``on_commit``, the hook storage calls
when a write commits); whether a runtime is in a bulk busy period (``busy``); introspection
(``runtimes()``, ``maintenance``, ``interactive``); and ``shutdown``.

Invariants: with ``interactive`` off there is no interactive runtime at all and every
command goes to maintenance, so behaviour is identical from the outside; ``shutdown`` stops
every driver thread and then releases the baseline (so closing the last database restores
the program's own settings); the wake hooks (``on_commit`` and the block) are per thread,
not per client, so a storage layer built once serves every replica a database restarts.

Deliberately not here: the protocol conversation (``mzlite.controller``), routing
(``compute.multiplexer``), and how a runtime or driver works.
"""
from __future__ import annotations

from typing import Optional

from compute.multiplexer import Multiplexer
from compute.replica.driver import RuntimeDriver, defer_wakes, deferred_wakes, flush_deferred_wakes
from compute.replica.interactive import InteractiveRuntime
from compute.replica.maintenance import MaintenanceRuntime
from compute.replica.registry import SharedArrangementRegistry
from compute.replica.scheduling import BASELINE, BULK_GC, URGENT, Urgency

#: Work per dataflow activation on maintenance (updates).  Small enough that one hydrating
#: dataflow's activation is a few milliseconds, so every other dataflow (and the reads waiting
#: on it) gets its turn about that often; large enough that per-activation overhead is noise.
MAINTENANCE_FUEL = 1000
#: Work per activation on the interactive runtime.  A peek dataflow's activation delays every
#: fast-path peek queued behind it, so it is as small as maintenance's.
INTERACTIVE_FUEL = 1000


class ReplicaClient:
    #: storage's commit hook: inside a ``deferred_wakes`` block, this thread's later wakes
    #: are deferred (``compute.replica.driver.defer_wakes``)
    on_commit = staticmethod(defer_wakes)
    #: the block in which a writer's wakes may be deferred while it assists
    deferred_wakes = staticmethod(deferred_wakes)
    #: announce the wakes this thread deferred (a caller about to block must)
    flush_deferred_wakes = staticmethod(flush_deferred_wakes)

    def __init__(self, mux: Multiplexer, *, maintenance=None, interactive=None, drivers: tuple = (),
                 urgency: Optional[Urgency] = None, baseline=None):
        """A client over ``mux`` and the parts behind it (``start`` builds them all; a test
        may give a Multiplexer over its own endpoints).  ``baseline`` (a ``Baseline``) is
        requested from now until ``shutdown``."""
        self._mux = mux
        #: the runtimes (introspection); ``interactive`` is ``None`` when there is none
        self.maintenance = maintenance
        self.interactive = interactive
        self._drivers = tuple(drivers)
        self._baseline = baseline
        urgency = URGENT if urgency is None else urgency
        self.send = mux.send
        self.recv = mux.recv
        self.deliver_peek_responses = mux.deliver_peek_responses
        self.owner_of = mux.owner_of
        self.assist = mux.assist
        self.raise_urgency = urgency.raise_
        self.lower_urgency = urgency.lower
        if baseline is not None:
            baseline.request(self)

    @classmethod
    def start(cls, storage_collections, *, interactive: bool) -> "ReplicaClient":
        """The replica of one database over its storage collections, threads running."""
        registry = SharedArrangementRegistry()
        maintenance = MaintenanceRuntime(storage_collections, registry, fuel=MAINTENANCE_FUEL)
        inter = InteractiveRuntime(storage_collections, registry, fuel=INTERACTIVE_FUEL) if interactive else None
        drivers = [RuntimeDriver.for_maintenance(maintenance)]
        if inter is not None:
            drivers.append(RuntimeDriver.for_interactive(inter))
        mux = Multiplexer(*drivers)
        return cls(mux, maintenance=maintenance, interactive=inter, drivers=tuple(drivers), baseline=BASELINE)

    @property
    def maintenance_driver(self) -> Optional[RuntimeDriver]:
        return self._drivers[0] if self._drivers else None

    @property
    def interactive_driver(self) -> Optional[RuntimeDriver]:
        return self._drivers[1] if len(self._drivers) > 1 else None

    @property
    def busy(self) -> bool:
        """Some runtime of the process is in a long busy period: background work may wait."""
        return BULK_GC.active

    def runtimes(self) -> list:
        """``(role, runtime)`` for each runtime, maintenance first."""
        return [(rt.role, rt) for rt in (self.maintenance, self.interactive) if rt is not None]

    def shutdown(self) -> None:
        for d in self._drivers:
            d.shutdown()
        if self._baseline is not None:
            self._baseline.release(self)
