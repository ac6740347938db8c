"""Building the replica: the two runtimes, their drivers, the registry and the Multiplexer.

Owns the wiring of compute's machinery for one database.  Invariant: with
``enable_compute_interactive_runtime`` off there is no interactive runtime at all and
every command goes to maintenance, so behaviour is identical from the outside.
Deliberately not here: the protocol conversation (``mzlite.controller``).
"""
from __future__ import annotations

#: Work per dataflow activation on maintenance (updates).  Small enough that one hydrating
#: dataflow's activation is a few milliseconds, so every other dataflow (and the reads waiting
#: on it) gets its turn about that often; large enough that per-activation overhead is noise.
MAINTENANCE_FUEL = 1000
#: Work per activation on the interactive runtime.  A peek dataflow's activation delays every
#: fast-path peek queued behind it, so it is as small as maintenance's.
INTERACTIVE_FUEL = 1000


def _inline_sets():
    from compute.protocol import AllowCompaction, CancelPeek, CreateDataflow, Peek, Schedule

    # maintenance: a peek only (its other commands may start long work: that is its thread's);
    # interactive: everything a read sends, and its peek dataflows are stepped inline briefly
    return (Peek, CancelPeek), (Peek, CancelPeek, CreateDataflow, Schedule, AllowCompaction)


MAINTENANCE_INLINE, INTERACTIVE_INLINE = _inline_sets()


class Replica:
    def __init__(self, storage_collections, *, interactive: bool):
        from compute.multiplexer import Multiplexer
        from compute.replica.driver import RuntimeDriver
        from compute.replica.registry import SharedArrangementRegistry
        from compute.replica.runtime import Runtime

        self.registry = SharedArrangementRegistry()
        self.maintenance = Runtime("maintenance", storage_collections, self.registry, fuel=MAINTENANCE_FUEL)
        self.interactive = (Runtime("interactive", storage_collections, self.registry, fuel=INTERACTIVE_FUEL)
                            if interactive else None)
        # maintenance steps aside (briefly) for the interactive runtime and for readers being
        # woken with an answer: see compute.replica.driver.Urgency.  An idle runtime lets the sender
        # apply a read's commands itself (compute.replica.driver.RuntimeDriver.send): no thread hop.
        self.maintenance_driver = RuntimeDriver(self.maintenance, yields_to_urgent=True,
                                                inline_commands=MAINTENANCE_INLINE, inline_steps=True)
        self.interactive_driver = (RuntimeDriver(self.interactive, urgent_commands=True,
                                                 inline_commands=INTERACTIVE_INLINE, inline_steps=True)
                                   if self.interactive is not None else None)
        self.mux = Multiplexer(self.maintenance_driver, self.interactive_driver)

    def runtimes(self):
        out = [("maintenance", self.maintenance)]
        if self.interactive is not None:
            out.append(("interactive", self.interactive))
        return out

    def shutdown(self) -> None:
        for d in (self.maintenance_driver, self.interactive_driver):
            if d is not None:
                d.shutdown()
