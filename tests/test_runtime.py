"""The runtime state machine, stepped by hand with the stand-in Spine/Dataflow."""
from __future__ import annotations

import pytest

from compute.errors import ComputeProtocolError
from compute.protocol import (AllowCompaction, CancelPeek, CreateDataflow, Frontiers, Peek, PeekCanceled,
                              PeekError, PeekResponse, PeekRows, Status, SubscribeResponse)
from compute.replica.interactive import InteractiveRuntime
from compute.replica.maintenance import MaintenanceRuntime
from compute.replica.registry import SharedArrangementRegistry
from expr.finishing import RowSetFinishing
from expr.mfp import MapFilterProject
from repr.timestamp import MAX
from tests.support.standins import StandinDataflow, index_desc, peek_dataflow, sink_desc, t, table, u

RUNTIMES = {"maintenance": MaintenanceRuntime, "interactive": InteractiveRuntime}


def runtime(role="maintenance", storage=None, registry=None, factory=StandinDataflow, **kw):
    return RUNTIMES[role](storage if storage is not None else {}, registry, dataflow_factory=factory, **kw)


def _real_dataflow():
    from compute.render.dataflow import Dataflow
    return Dataflow


@pytest.fixture(params=["standin", "render"])
def factory(request):
    """Generic tests run on the stand-in and on the real ``compute.render.dataflow.Dataflow``."""
    return StandinDataflow if request.param == "standin" else _real_dataflow()


def drain(rt, rounds=50):
    out = []
    for _ in range(rounds):
        did = rt.step()
        out += rt.drain_responses()
        if not did:
            break
    return out


def peek(uuid, target, ts, keys=None, finishing=RowSetFinishing(), arity=2):
    return Peek(uuid, target, keys, ts, finishing, MapFilterProject.identity(arity))


def rows_of(resp):
    assert isinstance(resp.result, PeekRows), resp
    return sorted(resp.result.rows)


def test_index_hydrates_reports_frontiers_and_answers_peeks(factory):
    storage = {u(1): table(u(1), [(1, "a"), (2, "b")], 0, 1)}
    rt = runtime(storage=storage, factory=factory)
    rt.handle(CreateDataflow(index_desc(u(1), u(2))))
    out = drain(rt)
    assert Frontiers(u(2), 1, 1, 1) in out
    rt.handle(peek("p1", u(2), 0))
    rt.handle(peek("p2", u(2), 0, keys=((2,),)))
    out = drain(rt)
    by = {r.uuid: r for r in out if isinstance(r, PeekResponse)}
    assert rows_of(by["p1"]) == [((1, "a"), 1), ((2, "b"), 1)]
    assert rows_of(by["p2"]) == [((2, "b"), 1)]
    assert by["p1"].kind == "fast_path" and by["p1"].answered_by == "maintenance"
    assert rt.peek_counts["fast_path"] == 2
    assert rt.dataflows() == [(u(2), "u2")]


def test_peek_waits_for_upper_then_answers_and_storage_wakes_the_runtime(factory):
    """Sabotage checked: answering without the ``upper <= timestamp`` wait returned the
    rows at time 1 before the write at time 1 was applied (red), then restored."""
    coll = table(u(1), [(1, "a")], 0, 1)
    rt = runtime(storage={u(1): coll}, factory=factory)
    woken = []
    rt.set_waker(lambda: woken.append(1))
    rt.handle(CreateDataflow(index_desc(u(1), u(2))))
    drain(rt)
    rt.handle(peek("p", u(2), 1))
    assert not [r for r in drain(rt) if isinstance(r, PeekResponse)]
    coll.append([((5, "e"), 1)], 1, 2)
    assert woken, "a storage upper advance must wake the runtime"
    out = drain(rt)
    (resp,) = [r for r in out if isinstance(r, PeekResponse)]
    assert rows_of(resp) == [((1, "a"), 1), ((5, "e"), 1)]
    assert Frontiers(u(2), 2, 2, 2) in out


def test_peek_below_since_is_an_error_and_data_errors_surface_with_sqlstate():
    coll = table(u(1), [(1, "a")], 0, 1)
    rt = runtime(storage={u(1): coll})
    rt.handle(CreateDataflow(index_desc(u(1), u(2))))
    coll.append([(("ERR", 0), 1)], 1, 3)
    drain(rt)
    rt.handle(AllowCompaction(u(2), 2))
    rt.handle(peek("old", u(2), 1))
    rt.handle(peek("bad", u(2), 2))
    by = {r.uuid: r for r in drain(rt) if isinstance(r, PeekResponse)}
    assert isinstance(by["old"].result, PeekError) and "since" in by["old"].result.message
    assert by["bad"].result == PeekError("22012", "division by zero")


def test_drop_reports_empty_frontier_and_later_commands_for_it_are_refused(factory):
    coll = table(u(1), [(1, "a")], 0, 1)
    rt = runtime(storage={u(1): coll}, factory=factory)
    rt.handle(CreateDataflow(index_desc(u(1), u(2))))
    drain(rt)
    rt.handle(AllowCompaction(u(2), None))
    out2 = rt.drain_responses() + drain(rt)
    assert Frontiers(u(2), None, None, None) in out2
    assert rt.dataflows() == []
    with pytest.raises(ComputeProtocolError):
        rt.handle(AllowCompaction(u(2), 3))


def test_cancel_pending_peek_yields_canceled_exactly_once(factory):
    coll = table(u(1), [(1, "a")], 0, 1)
    rt = runtime(storage={u(1): coll}, factory=factory)
    rt.handle(CreateDataflow(index_desc(u(1), u(2))))
    drain(rt)
    rt.handle(peek("p", u(2), 5))
    rt.handle(CancelPeek("p"))
    rt.handle(CancelPeek("p"))
    got = [r for r in rt.drain_responses() + drain(rt) if isinstance(r, PeekResponse)]
    assert got == [PeekResponse("p", PeekCanceled(), "maintenance", "fast_path")]


def test_protocol_musts_are_checked_loudly():
    coll = table(u(1), [(1, "a")], 0, 1)
    rt = runtime(storage={u(1): coll})
    with pytest.raises(ComputeProtocolError):
        rt.handle(CreateDataflow(index_desc(u(9), u(2))))  # unknown source
    rt.handle(CreateDataflow(index_desc(u(1), u(2))))
    with pytest.raises(ComputeProtocolError):
        rt.handle(CreateDataflow(index_desc(u(1), u(2))))  # reused export id
    with pytest.raises(ComputeProtocolError):
        rt.handle(peek("p", u(7), 0))  # unknown target
    coll.compact(1)
    with pytest.raises(ComputeProtocolError):
        rt.handle(CreateDataflow(index_desc(u(1), u(3), as_of=0)))  # since passed as_of
    inter = runtime("interactive")
    with pytest.raises(ComputeProtocolError):
        inter.handle(CreateDataflow(index_desc(u(1), u(4))))  # not a peek dataflow


def test_materialized_view_sink_and_subscribe(factory):
    coll = table(u(1), [(1, "a")], 0, 1)
    mv = table(u(5), (), 0, 0)
    rt = runtime(storage={u(1): coll, u(5): mv}, factory=factory)
    rt.handle(CreateDataflow(sink_desc(u(1), u(5), "materialized_view")))
    rt.handle(CreateDataflow(sink_desc(u(1), t(6), "subscribe")))
    out = drain(rt)
    assert mv.snapshot(0) == {(1, "a"): 1} and mv.upper == 1
    subs = [r for r in out if isinstance(r, SubscribeResponse)]
    assert subs and subs[0].id == t(6) and subs[0].response.updates == (((1, "a"), 0, 1),)
    assert Frontiers(u(5), 1, 1, 1) in out and Frontiers(t(6), 1, 1, 1) in out


def test_round_robin_fuel_keeps_small_dataflow_progressing_while_big_one_hydrates():
    """Each step() does bounded work per dataflow, so the small dataflow's frontier advances
    while the big one is still catching up.  Sabotage checked: stepping each dataflow to
    completion inside step() (``while df.step(): pass``) let one step() run the big one
    to its end before returning (red), then restored."""
    big = table(u(1), (), 0, 1)
    for k in range(1, 40):
        big.append([((k, "x"), 1)], k, k + 1)
    small = table(u(3), [(1, "s")], 0, 1)
    rt = runtime(storage={u(1): big, u(3): small}, fuel=1)
    rt.handle(CreateDataflow(index_desc(u(1), u(2))))
    rt.handle(CreateDataflow(index_desc(u(3), u(4))))
    rt.step()
    rt.step()
    out = rt.drain_responses()
    assert Frontiers(u(4), 1, 1, 1) in out
    big_reports = [f.write_frontier for f in out if isinstance(f, Frontiers) and f.id == u(2)]
    assert big_reports and big_reports[-1] < 10
    small.append([((2, "s"), 1)], 1, 2)
    rt.step()
    assert Frontiers(u(4), 2, 2, 2) in rt.drain_responses()
    up = [f.write_frontier for f in drain(rt, 200) if isinstance(f, Frontiers) and f.id == u(2)]
    assert up == sorted(up) and up[-1] == 40


def test_step_exception_fails_the_dataflow_with_status_and_internal_error_peeks():
    coll = table(u(1), [(1, "a")], 0, 1)
    rt = runtime(storage={u(1): coll})
    rt.handle(CreateDataflow(index_desc(u(1), u(2))))
    drain(rt)
    rt.handle(peek("p", u(2), 3))
    StandinDataflow.instances[-1].broken = True
    out = drain(rt)
    assert any(isinstance(r, Status) and "failed" in r.message for r in out)
    (resp,) = [r for r in out if isinstance(r, PeekResponse)]
    assert resp.result.sqlstate == "XX000"


def test_interactive_fast_path_peek_off_published_index_and_peek_dataflow(factory):
    reg = SharedArrangementRegistry()
    coll = table(u(1), [(1, "a"), (2, "b")], 0, 1)
    maint = runtime(storage={u(1): coll}, registry=reg, factory=factory)
    inter = runtime("interactive", storage={u(1): coll}, registry=reg, factory=factory)
    # interactive sees the peek before maintenance published: a placeholder, then answered
    inter.handle(peek("fp", u(2), 0))
    inter.handle(CreateDataflow(peek_dataflow(u(2), t(1), 0)))
    inter.handle(peek("df", t(1), 0, keys=((1,),)))
    assert not [r for r in drain(inter) if isinstance(r, PeekResponse)]
    maint.handle(CreateDataflow(index_desc(u(1), u(2))))
    drain(maint)
    out = drain(inter)
    by = {r.uuid: r for r in out if isinstance(r, PeekResponse)}
    assert rows_of(by["fp"]) == [((1, "a"), 1), ((2, "b"), 1)]
    assert by["fp"].answered_by == "interactive" and by["fp"].kind == "fast_path"
    assert rows_of(by["df"]) == [((1, "a"), 1)] and by["df"].kind == "dataflow"
    assert Frontiers(t(1), 1, 1, 1) in out
    assert inter.peek_counts == {"fast_path": 1, "dataflow": 1}
    # interactive built no copy of the maintained index: its only dataflow is the peek's
    assert inter.dataflows() == [(t(1), "peek-t1")]
    inter.handle(AllowCompaction(t(1), None))
    assert Frontiers(t(1), None, None, None) in inter.drain_responses()
    assert inter.dataflows() == []


def test_read_at_max_of_a_sealed_index(factory):
    reg = SharedArrangementRegistry()
    coll = table(u(1), [(1, "a")], 0, None)  # a constant collection: sealed
    maint = runtime(storage={u(1): coll}, registry=reg, factory=factory)
    inter = runtime("interactive", storage={u(1): coll}, registry=reg, factory=factory)
    maint.handle(CreateDataflow(index_desc(u(1), u(2))))
    drain(maint)
    assert reg.upper(u(2)) is None
    inter.handle(peek("fp", u(2), MAX))
    d = peek_dataflow(u(2), t(1), MAX)
    assert d.until is None and d.is_peek_dataflow()
    inter.handle(CreateDataflow(d))
    inter.handle(peek("df", t(1), MAX))
    maint.handle(peek("m", u(2), MAX))
    by = {r.uuid: r for r in drain(inter) + drain(maint) if isinstance(r, PeekResponse)}
    assert rows_of(by["fp"]) == rows_of(by["df"]) == rows_of(by["m"]) == [((1, "a"), 1)]


def test_refused_import_is_loud_and_the_peek_on_its_export_still_gets_one_answer():
    """An import refused at create (since passed as_of) raises ComputeProtocolError with
    the diagnostic, and the peek the controller sends next is answered, not lost.
    Sabotage checked: without registering the failed dataflow's exports the Peek raised
    'unknown index' and was never answered (red), then restored."""
    reg = SharedArrangementRegistry()
    coll = table(u(1), [(1, "a")], 0, 9)
    maint = runtime(storage={u(1): coll}, registry=reg)
    inter = runtime("interactive", storage={u(1): coll}, registry=reg)
    maint.handle(CreateDataflow(index_desc(u(1), u(2))))
    drain(maint)
    inter.handle(AllowCompaction(u(2), 6))   # interactive applied the compaction first
    maint.handle(AllowCompaction(u(2), 6))
    drain(maint)
    with pytest.raises(ComputeProtocolError, match="equal to the refusing since"):
        inter.handle(CreateDataflow(peek_dataflow(u(2), t(1), 3)))
    inter.handle(peek("p", t(1), 3))
    (resp,) = [r for r in inter.drain_responses() + drain(inter) if isinstance(r, PeekResponse)]
    assert resp.result.sqlstate == "XX000"
    assert reg.reader_holds(u(2)) == []


def test_standing_hold_change_wakes_the_publisher_which_then_compacts():
    reg = SharedArrangementRegistry()
    coll = table(u(1), [(1, "a")], 0, 9)
    maint = runtime(storage={u(1): coll}, registry=reg)
    inter = runtime("interactive", storage={u(1): coll}, registry=reg)
    woken = []
    maint.set_waker(lambda: woken.append(1))
    maint.handle(CreateDataflow(index_desc(u(1), u(2))))
    drain(maint)
    maint.handle(AllowCompaction(u(2), 5))
    assert reg.since(u(2)) == 0          # pinned: interactive has not applied it
    inter.handle(AllowCompaction(u(2), 5))
    assert woken
    drain(maint)
    assert reg.since(u(2)) == 5


def test_dropped_index_keeps_running_while_another_dataflow_imports_it(factory):
    """The catalog drops an index that another index's dataflow imports: the producer keeps
    running until its importer goes, so the importer stays current.  Sabotage checked:
    dropping the producer dataflow as soon as its exports were dropped froze the importer's
    frontier at 1 and the peek waited forever (red), then restored."""
    coll = table(u(1), [(1, "a")], 0, 1)
    rt = runtime(storage={u(1): coll}, factory=factory)
    rt.handle(CreateDataflow(index_desc(u(1), u(2))))
    rt.handle(CreateDataflow(index_desc(u(2), u(3), from_index=True)))
    drain(rt)
    rt.handle(AllowCompaction(u(2), None))
    assert [i for i, _ in rt.dataflows()] == [u(2), u(3)]
    coll.append([((2, "b"), 1)], 1, 2)
    rt.handle(peek("p", u(3), 1))
    out = rt.drain_responses() + drain(rt)
    (resp,) = [r for r in out if isinstance(r, PeekResponse)]
    assert rows_of(resp) == [((1, "a"), 1), ((2, "b"), 1)]
    # the dropped index reported its empty frontier once and nothing after it
    assert [f for f in out if isinstance(f, Frontiers) and f.id == u(2)] == [Frontiers(u(2), None, None, None)]
    rt.handle(AllowCompaction(u(3), None))
    assert rt.dataflows() == []


def test_dropping_a_peek_dataflow_still_waiting_for_its_seal_reports_empty_and_releases():
    """The deferred-cancel path: a peek dataflow dropped before its import sealed never
    built, yet reports the empty frontier (so the controller drops its holds) and gives up
    its reader hold.  Sabotage checked: reporting the drop only for collections that had
    reported before (``if id in self._reported``) left the controller without it (red)."""
    reg = SharedArrangementRegistry()
    coll = table(u(1), [(1, "a")], 0, 1)
    maint = runtime(storage={u(1): coll}, registry=reg)
    inter = runtime("interactive", storage={u(1): coll}, registry=reg)
    maint.handle(CreateDataflow(index_desc(u(1), u(2))))
    drain(maint)
    inter.handle(CreateDataflow(peek_dataflow(u(2), t(1), 5)))
    drain(inter)
    assert reg.reader_holds(u(2)) == [5] and inter.dataflows() == [(t(1), "peek-t1")]
    inter.handle(AllowCompaction(t(1), None))
    assert inter.drain_responses() == [Frontiers(t(1), None, None, None)]
    assert reg.reader_holds(u(2)) == [] and inter.dataflows() == []
    assert drain(inter) == []


def test_a_peek_at_an_unknown_index_is_loud_and_still_answered_once():
    """A Peek naming an index the runtime does not host (e.g. its dataflow was refused at
    create) raises ComputeProtocolError and is answered with an internal error, so the
    controller's wait ends.  Sabotage checked: raising before answering left no
    PeekResponse (red): a read with the interactive runtime off hung forever."""
    maint = runtime(storage={})
    with pytest.raises(ComputeProtocolError, match="unknown index"):
        maint.handle(peek("lost", u(7), 3))
    responses = [r for r in maint.drain_responses() + drain(maint) if isinstance(r, PeekResponse)]
    assert [(r.uuid, r.result.sqlstate) for r in responses] == [("lost", "XX000")]
    assert drain(maint) == []


def test_one_step_carries_a_change_from_a_table_through_a_view_into_its_index():
    """Dataflows are stepped in creation order, which is dependency order, so a change
    travels table -> materialized view -> index on it within one ``step()``.  Sabotage:
    stepping them in reverse order left the index's frontier behind after one step (red)."""
    coll = table(u(1), [(1, "a")], 0, 1)
    mv = table(u(5), (), 0, 0)
    rt = runtime(storage={u(1): coll, u(5): mv}, factory=_real_dataflow())
    rt.handle(CreateDataflow(sink_desc(u(1), u(5), "materialized_view")))
    rt.handle(CreateDataflow(index_desc(u(5), u(6))))
    drain(rt)
    coll.append([((2, "b"), 1)], 1, 2)
    rt.step()
    assert Frontiers(u(6), 2, 2, 2) in rt.drain_responses()


def test_a_subscribe_batch_leaves_before_a_later_dataflow_steps():
    """A subscribe's batch is handed to the driver (``set_flusher``) right after its own
    dataflow's activation, not after every later dataflow's (a hydrating neighbour would
    hold a one-row write back by its whole activation).  Sabotage seen red: not calling the
    flusher in ``RuntimeCore.step`` (the batch left after the index had stepped)."""
    from compute.render.dataflow import Dataflow
    coll = table(u(1), [(1, "a")], 0, 1)
    big = table(u(3), [(k, "x") for k in range(100)], 0, 1)
    rt = runtime(storage={u(1): coll, u(3): big}, factory=Dataflow)
    rt.handle(CreateDataflow(sink_desc(u(1), t(6), "subscribe")))
    rt.handle(CreateDataflow(index_desc(u(3), u(4))))
    events = []
    rt.set_flusher(lambda: events.extend(type(r).__name__ for r in rt.drain_responses()))
    real = Dataflow.step

    def step(self, fuel=None):
        if u(4) in self.exports:
            events.append("index stepped")
        return real(self, fuel) if fuel is not None else real(self)
    Dataflow.step = step
    try:
        rt.step()
    finally:
        Dataflow.step = real
    events += [type(r).__name__ for r in rt.drain_responses()]
    assert "SubscribeResponse" in events and "index stepped" in events
    assert events.index("SubscribeResponse") < events.index("index stepped")
    assert not [r for r in drain(rt) if isinstance(r, SubscribeResponse) and r.response.updates]
