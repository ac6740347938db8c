"""Exhaustive interleavings of the real Multiplexer and runtime state machines.

The controller's script is sent through the real ``Multiplexer`` into two ``QueuedEndpoint``s
over the real ``MaintenanceRuntime`` and ``InteractiveRuntime`` sharing one
``SharedArrangementRegistry`` (operators are the test stand-ins).  Then every interleaving of three actors is replayed from scratch:
maintenance (apply its next command, then step), interactive (likewise) and storage (the
next table write/seal).  After every action we check:

* I1: a published index's since never passes the ``as_of`` of a peek dataflow queued on
  (or waiting in) the interactive runtime to import it;
* frontiers delivered to the controller never regress, and nothing follows an empty one;
* no runtime raised (a refused import is a ComputeProtocolError: counted as a violation);

and after draining both runtimes to quiescence:

* every peek got exactly one response, and rows equal the table's contents at the time;
* liveness: the index's published since reached the controller's last AllowCompaction
  (the bound a lagging interactive runtime imposes is temporary).

The shipped design (broadcast + standing holds) has no violation in any interleaving.
Each of the two mechanisms is switched off by a constructor flag, and the checker finds a
violation: without standing holds, I1 (maintenance compacts before interactive builds);
with AllowCompaction routed to the owner alone, the standing hold never rises and
compaction stalls (liveness).  Both refutations are asserted, so the checker would notice
if it ever stopped being able to see them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from compute.errors import ComputeProtocolError
from compute.multiplexer import Multiplexer, QueuedEndpoint
from compute.protocol import (AllowCompaction, CancelPeek, CreateDataflow, Frontiers, Peek, PeekCanceled,
                              PeekResponse, PeekRows)
from compute.replica.interactive import InteractiveRuntime
from compute.replica.maintenance import MaintenanceRuntime
from compute.replica.registry import SharedArrangementRegistry
from expr.finishing import RowSetFinishing
from expr.mfp import MapFilterProject
from repr.timestamp import frontier_le
from tests.support.standins import StandinDataflow, index_desc, peek_dataflow, t, table, u

ROWS = [(1, "a"), (2, "b")]


def pk(uuid, target, ts):
    return Peek(uuid, target, None, ts, RowSetFinishing(), MapFilterProject.identity(2))


@dataclass
class Scenario:
    name: str
    setup: list            # commands sent and run to quiescence before the interleaving
    script: list           # commands sent (routed) up front, then interleaved
    storage_events: list   # callables (table) -> None, interleaved as the third actor
    table_upper: int       # the table's upper at the start
    final_since: int       # the index's since once everything drains (liveness)
    expect_rows: dict = field(default_factory=dict)   # uuid -> rows at its time
    #: uuid -> commands the controller sends when that peek's response arrives
    on_response: dict = field(default_factory=dict)


SCENARIOS = [
    Scenario(  # create a peek dataflow importing a published index, cancel and drop it, compact
        "drop-then-compact",
        setup=[CreateDataflow(index_desc(u(1), u(2)))],
        script=[CreateDataflow(peek_dataflow(u(2), t(1), 5)), pk("p1", t(1), 5),
                CancelPeek("p1"), AllowCompaction(t(1), None), AllowCompaction(u(2), 10)],
        storage_events=[lambda tb: tb.advance_upper(12)],
        table_upper=6, final_since=10),
    Scenario(  # the index is published late, the import waits for the seal, then compaction
        "publish-late-and-seal",
        setup=[],
        script=[CreateDataflow(index_desc(u(1), u(2))), CreateDataflow(peek_dataflow(u(2), t(1), 5)),
                pk("p1", t(1), 5), pk("p2", u(2), 5), AllowCompaction(u(2), 4)],
        storage_events=[lambda tb: tb.append([((3, "c"), 1)], 4, 6)],
        table_upper=3, final_since=4,
        expect_rows={"p1": ROWS + [(3, "c")], "p2": ROWS + [(3, "c")]},
        on_response={"p1": [AllowCompaction(t(1), None)]}),
    Scenario(  # a fast-path peek and a peek dataflow wait for the seal of a published index
        "wait-for-seal",
        setup=[CreateDataflow(index_desc(u(1), u(2)))],
        script=[pk("p1", u(2), 5), CreateDataflow(peek_dataflow(u(2), t(1), 5)), pk("p2", t(1), 5),
                AllowCompaction(u(2), 4)],
        storage_events=[lambda tb: tb.append([((3, "c"), 1)], 4, 7)],
        table_upper=3, final_since=4,
        expect_rows={"p1": ROWS + [(3, "c")], "p2": ROWS + [(3, "c")]},
        on_response={"p2": [AllowCompaction(t(1), None)]}),
    Scenario(  # two imports at different as_ofs; compaction follows the controller's holds
        "two-imports",
        setup=[CreateDataflow(index_desc(u(1), u(2)))],
        script=[CreateDataflow(peek_dataflow(u(2), t(1), 3)), pk("p1", t(1), 3),
                CreateDataflow(peek_dataflow(u(2), t(2), 8)), pk("p2", t(2), 8),
                AllowCompaction(u(2), 3)],
        storage_events=[lambda tb: tb.append([((4, "d"), 1)], 10, 12)],
        table_upper=10, final_since=8,
        expect_rows={"p1": ROWS, "p2": ROWS},
        on_response={"p1": [AllowCompaction(t(1), None), AllowCompaction(u(2), 8)],
                     "p2": [AllowCompaction(t(2), None)]}),
]


class Violation(Exception):
    pass


class World:
    def __init__(self, sc: Scenario, *, standing_holds=True, broadcast=True, interactive=True,
                 factory=StandinDataflow):
        self.sc = sc
        self.reg = SharedArrangementRegistry(standing_holds=standing_holds)
        self.table = table(u(1), ROWS, 0, sc.table_upper)
        storage = {u(1): self.table}
        self.m = QueuedEndpoint(MaintenanceRuntime(storage, self.reg, dataflow_factory=factory))
        self.i = (QueuedEndpoint(InteractiveRuntime(storage, self.reg, dataflow_factory=factory))
                  if interactive else None)
        self.mux = Multiplexer(self.m, self.i, broadcast_compaction=broadcast)
        self.frontiers: dict = {}
        self.peeks: dict = {}
        for c in sc.setup:
            self.mux.send(c)
        self.m.run_until_quiet()
        self.collect()
        for c in sc.script:
            self.mux.send(c)
        self.events = list(sc.storage_events)

    def enabled(self) -> list:
        out = [n for n, ep in (("M", self.m), ("I", self.i)) if ep is not None and ep.commands]
        return out + (["S"] if self.events else [])

    def act(self, who: str) -> None:
        try:
            if who == "S":
                self.events.pop(0)(self.table)
            else:
                ep = self.m if who == "M" else self.i
                ep.process_one()
                ep.step()
        except ComputeProtocolError as e:
            raise Violation(f"{who} raised: {e}")
        self.collect()
        self.check_i1()

    def collect(self) -> None:
        for r in self.mux.drain():
            if isinstance(r, Frontiers):
                last = self.frontiers.get(r.id, 0)
                if last is None or not frontier_le(last, r.write_frontier):
                    raise Violation(f"frontier of {r.id} regressed {last} -> {r.write_frontier}")
                self.frontiers[r.id] = r.write_frontier
            elif isinstance(r, PeekResponse):
                if r.uuid in self.peeks:
                    raise Violation(f"peek {r.uuid} answered twice")
                self.peeks[r.uuid] = r.result
                for c in self.sc.on_response.get(r.uuid, ()):
                    self.mux.send(c)

    def check_i1(self) -> None:
        if self.i is None:
            return
        waiting = [c.desc for c in self.i.commands if isinstance(c, CreateDataflow)]
        waiting += [h.desc for h in self.i.runtime._dataflows if h.df is None and h.failed is None]
        for d in waiting:
            for imp in d.index_imports:
                slot = self.reg.slot(imp.id)
                if slot is not None and slot.adopted and not frontier_le(slot.since, d.as_of):
                    raise Violation(f"I1: since {slot.since} of {imp.id} passed as_of {d.as_of} "
                                    f"of queued {d.debug_name}")

    def finish(self) -> None:
        eps = [self.m] + ([self.i] if self.i is not None else [])
        for _ in range(1000):
            did = False
            while self.events:
                self.act("S")
                did = True
            for ep in eps:
                try:
                    did |= ep.process_one()
                    did |= ep.step()
                except ComputeProtocolError as e:
                    raise Violation(f"raised while draining: {e}")
            self.collect()
            self.check_i1()
            if not did:
                break
        self.collect()
        if self.mux.try_recv() is not None:
            raise Violation("a response arrived after the drain")
        uuids = [c.uuid for c in self.sc.script if isinstance(c, Peek)]
        for uuid in uuids:
            if uuid not in self.peeks:
                raise Violation(f"peek {uuid} never answered")
            res = self.peeks[uuid]
            if uuid in self.sc.expect_rows:
                if not isinstance(res, PeekRows) or sorted(r for r, _ in res.rows) != sorted(self.sc.expect_rows[uuid]):
                    raise Violation(f"peek {uuid} answered {res}")
            elif not isinstance(res, (PeekRows, PeekCanceled)):
                raise Violation(f"peek {uuid} answered {res}")
        since = self.reg.since(u(2))
        if since != self.sc.final_since:
            raise Violation(f"liveness: since of u2 stalled at {since}, controller allowed {self.sc.final_since}")


def explore(sc: Scenario, **flags):
    """Depth-first over every interleaving (each node replayed from scratch, since runtime
    state is not cloneable); returns (number of complete schedules, [(schedule, violation)]).
    An actor is enabled while it has a queued command (or a pending storage event); the
    controller's reactions to peek responses join the queues as they arrive."""
    found: list = []

    def rec(prefix: tuple) -> int:
        w = World(sc, **flags)
        try:
            for who in prefix:
                w.act(who)
            enabled = w.enabled()
            if not enabled:
                w.finish()
                return 1
        except Violation as v:
            found.append((prefix, str(v)))
            return 1
        return sum(rec(prefix + (who,)) for who in enabled)

    return rec(()), found


@pytest.fixture(params=["standin", "render"])
def factory(request):
    if request.param == "standin":
        return StandinDataflow
    from compute.render.dataflow import Dataflow
    return Dataflow


def test_shipped_design_has_no_violation_in_any_interleaving(factory):
    for sc in SCENARIOS:
        n, found = explore(sc, factory=factory)
        assert n > 20, (sc.name, n)
        assert not found, (sc.name, found[:3])


def test_without_interactive_runtime_the_same_script_is_answered_identically(factory):
    for sc in SCENARIOS:
        n, found = explore(sc, interactive=False, factory=factory)
        assert not found, (sc.name, found[:3])


def test_without_standing_holds_the_checker_finds_an_i1_violation():
    """Refutation: the publisher ignores the interactive runtime's applied hold (the
    ``standing_holds=False`` switch), so maintenance applies AllowCompaction(u2, 10) while
    interactive still has the create at as_of 5 queued."""
    n, found = explore(SCENARIOS[0], standing_holds=False)
    assert found and all("I1" in v or "since" in v for _, v in found), found[:3]
    for schedule, v in found:  # exactly: maintenance compacted before interactive built
        assert "I" not in schedule or schedule.index("M") < schedule.index("I"), (schedule, v)


def test_with_compaction_routed_to_the_owner_alone_the_checker_finds_a_violation():
    """Refutation: AllowCompaction routed only to maintenance (``broadcast_compaction=
    False``).  The interactive runtime never applies a hold, so its standing hold pins the
    publisher forever: every interleaving ends with compaction stalled."""
    for sc in SCENARIOS:
        n, found = explore(sc, broadcast=False)
        assert len(found) == n and all("liveness" in v for _, v in found), (sc.name, found[:3])
