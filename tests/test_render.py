"""Rendering whole dataflows: table -> join -> reduce -> index export, sinks, imports, fuel."""
from __future__ import annotations

import random

import pytest

from compute.dataflow import (BuildDesc, DataflowDescription, IndexExport, IndexImport, SinkExport,
                              SourceImport)
from compute.errors import ComputeProtocolError
from compute.protocol import SubscribeBatch
from compute.render.dataflow import Dataflow
from compute.replica.registry import SharedImport
from expr.relation import AggregateExpr, Filter, Get, Join, Let, LocalId, Map, Negate, Project, Reduce, Union
from expr.scalar import Call, Column, Literal
from repr.ids import transient, user
from repr.timestamp import MAX
from storage.persist import StorageCollection
from tests.support.reference import evaluate_with_errors

ORDERS, CUST = user(1), user(2)
VIEW, IDX = user(3), user(4)


def c(i):
    return Column(i)


def orders_by_region_plan(with_div=True):
    """orders(id, cust, amount) JOIN customers(cust, region) GROUP BY region:
    count(*), sum(amount), and sum(100 / amount) (division by zero for amount 0)."""
    join = Join((Get(ORDERS, 3), Get(CUST, 2)), ((c(1), c(3)),))
    cols = [c(4), c(2)]
    if with_div:
        cols.append(Call("div_int4", (Literal(100, "int4"), c(2)), "int4"))
    proj = Project(Map(join, tuple(cols[2:])), (4, 2) + ((5,) if with_div else ()))
    aggs = [AggregateExpr("count", Literal(True, "bool"), False, "bool", "int8"),
            AggregateExpr("sum", c(1), False, "int4", "int8")]
    if with_div:
        aggs.append(AggregateExpr("sum", c(2), False, "int4", "int8"))
    return Reduce(proj, (c(0),), tuple(aggs))


def tables():
    return StorageCollection(ORDERS, 3), StorageCollection(CUST, 2)


def commit(colls, t, updates):
    """Group commit: every table's upper passes ``t`` together."""
    for coll in colls:
        coll.append(updates.get(coll.id, []), t, t + 1)


def view_desc(plan, as_of=0, until=None, sinks=(), key=(c(0),)):
    return DataflowDescription((SourceImport(ORDERS, 3), SourceImport(CUST, 2)), (),
                               (BuildDesc(VIEW, plan),),
                               (IndexExport(IDX, VIEW, key, plan.arity()),), tuple(sinks),
                               as_of=as_of, until=until)


def test_join_reduce_index_across_inserts_updates_deletes_with_an_error_row():
    """The whole path, including an error row that appears with a bad row and disappears
    when the row is retracted.  Sabotage: dropping ``_forward_errs`` from ``_emit`` left
    the errs spine empty and failed."""
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((1, 10, 5), 1), ((2, 10, 20), 1), ((3, 11, 4), 1)],
                        CUST: [((10, "east"), 1), ((11, "west"), 1)]})
    df = Dataflow(view_desc(orders_by_region_plan()), sources={ORDERS: o, CUST: cu})
    df.run_to_completion()
    exp = df.exports[IDX]
    assert df.frontier() == 1 and exp.oks.upper == 1
    assert exp.oks.snapshot(0) == {("east", 2, 25, 25): 1, ("west", 1, 4, 25): 1}
    assert exp.oks.lookup(("west",), 0) == {("west", 1, 4, 25): 1}
    # insert an order with amount 0: division by zero
    commit((o, cu), 1, {ORDERS: [((4, 11, 0), 1)]})
    df.run_to_completion()
    assert exp.errs.snapshot(1) == {("22012", "division by zero"): 1}
    assert exp.oks.snapshot(1) == {("east", 2, 25, 25): 1, ("west", 1, 4, 25): 1}
    # update: customer 10 moves to west; delete order 1
    commit((o, cu), 2, {CUST: [((10, "east"), -1), ((10, "west"), 1)], ORDERS: [((1, 10, 5), -1)]})
    df.run_to_completion()
    assert exp.oks.snapshot(2) == {("west", 2, 24, 30): 1}
    assert exp.errs.snapshot(2) == {("22012", "division by zero"): 1}
    # retract the bad row: the error disappears
    commit((o, cu), 3, {ORDERS: [((4, 11, 0), -1)]})
    df.run_to_completion()
    assert exp.errs.snapshot(3) == {}
    assert exp.errs.snapshot(2) == {("22012", "division by zero"): 1}
    assert df.frontier() == 4
    for t in range(4):
        want_oks, want_errs = evaluate_with_errors(orders_by_region_plan(),
                                                   {ORDERS: o.snapshot(t), CUST: cu.snapshot(t)})
        assert exp.oks.snapshot(t) == want_oks
        assert exp.errs.snapshot(t) == want_errs


@pytest.mark.parametrize("seed", range(4))
def test_random_workload_matches_reference_at_every_time(seed):
    rng = random.Random(seed)
    o, cu = tables()
    live_o, live_c = {}, {}

    def change(live, make, n):
        ups = []
        for _ in range(n):
            if live and rng.random() < 0.45:
                r = rng.choice(sorted(live))
                live[r] -= 1
                if not live[r]:
                    del live[r]
                ups.append((r, -1))
            else:
                r = make()
                live[r] = live.get(r, 0) + 1
                ups.append((r, 1))
        return ups
    mk_o = lambda: (rng.randint(0, 30), rng.randint(0, 5), rng.randint(0, 9))
    mk_c = lambda: (rng.randint(0, 5), rng.choice(["n", "s", "e"]))
    commit((o, cu), 0, {ORDERS: change(live_o, mk_o, 20), CUST: change(live_c, mk_c, 5)})
    commit((o, cu), 1, {ORDERS: change(live_o, mk_o, 5)})
    df = Dataflow(view_desc(orders_by_region_plan(), as_of=1), sources={ORDERS: o, CUST: cu})
    for t in range(2, 12):
        commit((o, cu), t, {ORDERS: change(live_o, mk_o, rng.randint(0, 8)),
                            CUST: change(live_c, mk_c, rng.randint(0, 2))})
        while df.step(fuel=rng.randint(1, 50)):
            pass
        for s in range(1, t + 1):
            want_oks, want_errs = evaluate_with_errors(orders_by_region_plan(),
                                                       {ORDERS: o.snapshot(s), CUST: cu.snapshot(s)})
            assert df.exports[IDX].oks.snapshot(s) == want_oks
            assert df.exports[IDX].errs.snapshot(s) == want_errs


def test_fuel_bounded_hydration_never_exposes_a_partial_time(monkeypatch):
    """Hydration in small steps: the export's upper stays at as_of until every update of
    as_of is applied.  Sabotage: finishing the time as soon as the message queue drained
    (skipping the remaining input chunks) advanced the upper early and failed."""
    from compute.render import dataflow as render
    monkeypatch.setattr(render, "CHUNK", 16)
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((i, i % 7, 1), 1) for i in range(500)],
                        CUST: [((k, f"r{k % 3}"), 1) for k in range(7)]})
    df = Dataflow(view_desc(orders_by_region_plan(with_div=False)), sources={ORDERS: o, CUST: cu})
    steps = 0
    while df.step(fuel=20):
        steps += 1
        if df.exports[IDX].oks.upper == 0:
            assert df.exports[IDX].oks.batches == ()
    assert steps > 20
    snap = df.exports[IDX].oks.snapshot(0)
    assert sum(row[1] for row in snap) == 500


def test_materialized_view_sink_appends_to_storage():
    mv = StorageCollection(user(7), 4)
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((1, 10, 5), 1)], CUST: [((10, "east"), 1)]})
    sink = SinkExport(user(7), VIEW, "materialized_view", 4)
    df = Dataflow(view_desc(orders_by_region_plan(), sinks=[sink]), sources={ORDERS: o, CUST: cu},
                  sinks={user(7): mv}, writes_allowed=False)
    df.run_to_completion()
    assert mv.upper == 0
    df.allow_writes(user(7))
    assert mv.upper == 1 and mv.snapshot(0) == {("east", 1, 5, 20): 1}
    commit((o, cu), 1, {ORDERS: [((2, 10, 5), 1)]})
    commit((o, cu), 2, {})
    df.run_to_completion()
    assert mv.upper == 3
    assert mv.snapshot(2) == {("east", 2, 10, 40): 1}


def test_subscribe_sink_streams_updates_with_progress():
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((1, 10, 5), 1)], CUST: [((10, "east"), 1)]})
    sink = SinkExport(transient(1), VIEW, "subscribe", 4)
    desc = DataflowDescription((SourceImport(ORDERS, 3), SourceImport(CUST, 2)), (),
                               (BuildDesc(VIEW, orders_by_region_plan()),), (), (sink,), as_of=0)
    df = Dataflow(desc, sources={ORDERS: o, CUST: cu})
    df.run_to_completion()
    batches = df.drain_subscribe(transient(1))
    assert batches == [SubscribeBatch(0, 1, ((("east", 1, 5, 20), 0, 1),))]
    commit((o, cu), 1, {ORDERS: [((2, 10, 5), 1)]})
    commit((o, cu), 2, {})
    commit((o, cu), 3, {ORDERS: [((3, 10, 0), 1)]})
    df.run_to_completion()
    batches = df.drain_subscribe(transient(1))
    ups = [u for b in batches for u in b.updates]
    assert sorted(ups) == sorted([(("east", 1, 5, 20), 1, -1), (("east", 2, 10, 40), 1, 1)])
    assert batches[-1].upper == 4 and batches[-1].error == ("22012", "division by zero")
    assert all(b.lower < b.upper for b in batches)
    assert df.drain_subscribe(transient(1)) == []


def test_subscribe_without_snapshot_and_until_ends_the_stream():
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((1, 10, 5), 1)], CUST: [((10, "east"), 1)]})
    sink = SinkExport(transient(1), VIEW, "subscribe", 4, (("with_snapshot", False),))
    desc = DataflowDescription((SourceImport(ORDERS, 3), SourceImport(CUST, 2)), (),
                               (BuildDesc(VIEW, orders_by_region_plan()),), (), (sink,),
                               as_of=0, until=3)
    df = Dataflow(desc, sources={ORDERS: o, CUST: cu})
    for t in range(1, 6):
        commit((o, cu), t, {ORDERS: [((t + 1, 10, 1), 1)]})
    df.run_to_completion()
    batches = df.drain_subscribe(transient(1))
    times = sorted({t for b in batches for _, t, _ in b.updates})
    assert times == [1, 2], "no snapshot, and nothing at or past until"
    assert batches[-1].upper is None
    assert df.frontier() == 3 and df.is_done()


def test_until_caps_the_frontier_of_a_peek_dataflow():
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((1, 10, 5), 1)], CUST: [((10, "east"), 1)]})
    commit((o, cu), 1, {ORDERS: [((2, 10, 5), 1)]})
    commit((o, cu), 2, {ORDERS: [((3, 10, 5), 1)]})
    desc = DataflowDescription((SourceImport(ORDERS, 3), SourceImport(CUST, 2)), (),
                               (BuildDesc(transient(2), orders_by_region_plan()),),
                               (IndexExport(transient(3), transient(2), (), 4),), (),
                               as_of=1, until=2)
    assert desc.is_peek_dataflow()
    df = Dataflow(desc, sources={ORDERS: o, CUST: cu})
    df.run_to_completion()
    exp = df.exports[transient(3)]
    assert df.frontier() == 2 and exp.oks.upper == 2
    assert exp.oks.snapshot(1) == {("east", 2, 10, 40): 1}
    assert exp.oks.updates_between(2, None) == []


def test_index_import_from_another_dataflow_and_frozen_snapshot():
    """A second dataflow reads the first's exported index live (maintenance) and as a
    frozen snapshot bounded past as_of (interactive)."""
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((1, 10, 5), 1), ((2, 11, 3), 1)],
                        CUST: [((10, "east"), 1), ((11, "west"), 1)]})
    df1 = Dataflow(view_desc(orders_by_region_plan(with_div=False)), sources={ORDERS: o, CUST: cu})
    df1.run_to_completion()
    plan = Filter(Get(VIEW, 3), (Call("gt", (c(2), Literal(4, "int8")), "bool"),))
    desc2 = DataflowDescription((), (IndexImport(IDX, VIEW, (c(0),), 3),),
                                (BuildDesc(user(8), plan),),
                                (IndexExport(user(9), user(8), (), 3),), (), as_of=0)
    df2 = Dataflow(desc2, indexes={IDX: df1.exports[IDX]})
    df2.run_to_completion()
    assert df2.exports[user(9)].oks.snapshot(0) == {("east", 1, 5): 1}
    commit((o, cu), 1, {ORDERS: [((3, 11, 9), 1)]})
    df1.run_to_completion()
    df2.run_to_completion()
    assert df2.frontier() == 2
    assert df2.exports[user(9)].oks.snapshot(1) == {("east", 1, 5): 1, ("west", 2, 12): 1}
    # interactive: a frozen snapshot bounded one step past as_of
    exp = df1.exports[IDX]
    frozen = SharedImport(exp.oks.read_handle().frozen_at(1), exp.errs.read_handle().frozen_at(1))
    desc3 = DataflowDescription((), (IndexImport(IDX, VIEW, (c(0),), 3),),
                                (BuildDesc(transient(4), plan),),
                                (IndexExport(transient(5), transient(4), (), 3),), (), as_of=1, until=2)
    df3 = Dataflow(desc3, indexes={IDX: frozen})
    df3.run_to_completion()
    assert df3.frontier() == 2 and df3.is_done()
    assert df3.exports[transient(5)].oks.snapshot(1) == {("east", 1, 5): 1, ("west", 2, 12): 1}


def test_let_is_rendered_once_and_shared():
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((1, 10, 5), 1), ((2, 11, 3), 1)], CUST: []})
    l0 = LocalId(0)
    value = Filter(Get(ORDERS, 3), (Call("gt", (c(2), Literal(3, "int4")), "bool"),))
    plan = Let(l0, value, Union((Get(l0, 3), Get(l0, 3), Negate(Get(ORDERS, 3)))))
    desc = DataflowDescription((SourceImport(ORDERS, 3), SourceImport(CUST, 2)), (),
                               (BuildDesc(VIEW, plan),), (IndexExport(IDX, VIEW, (), 3),), (), as_of=0)
    df = Dataflow(desc, sources={ORDERS: o, CUST: cu})
    df.run_to_completion()
    from compute.render.mfp import MfpOp
    assert sum(isinstance(n.op, MfpOp) for n in df._nodes) == 1
    assert df.exports[IDX].oks.snapshot(0) == {(1, 10, 5): 1, (2, 11, 3): -1}


def test_objects_to_build_in_order_and_hydration_at_a_later_as_of():
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((1, 10, 5), 1)], CUST: [((10, "east"), 1)]})
    commit((o, cu), 1, {ORDERS: [((1, 10, 5), -1), ((2, 10, 7), 1)]})
    commit((o, cu), 2, {ORDERS: [((3, 10, 1), 1)]})
    first = Project(Get(ORDERS, 3), (1, 2))
    second = Reduce(Get(user(20), 2), (c(0),), (AggregateExpr("sum", c(1), False, "int4", "int8"),))
    desc = DataflowDescription((SourceImport(ORDERS, 3), SourceImport(CUST, 2)), (),
                               (BuildDesc(user(20), first), BuildDesc(VIEW, second)),
                               (IndexExport(IDX, VIEW, (c(0),), 2),), (), as_of=2)
    df = Dataflow(desc, sources={ORDERS: o, CUST: cu})
    df.run_to_completion()
    exp = df.exports[IDX]
    assert exp.oks.since == 2 and exp.oks.snapshot(2) == {(10, 8): 1}
    assert [t for _, t, _ in exp.oks.updates_between(0, None)] == [2]


def test_import_with_since_past_as_of_is_refused():
    o, cu = tables()
    commit((o, cu), 0, {})
    commit((o, cu), 1, {})
    o.compact(1)
    with pytest.raises(ComputeProtocolError):
        Dataflow(view_desc(orders_by_region_plan(), as_of=0), sources={ORDERS: o, CUST: cu})


def test_dataflow_waits_for_inputs_and_reports_no_work():
    o, cu = tables()
    df = Dataflow(view_desc(orders_by_region_plan(), as_of=0), sources={ORDERS: o, CUST: cu})
    assert not df.step()
    assert df.frontier() == 0
    o.append([((1, 10, 5), 1)], 0, 1)
    assert not df.step(), "customers' upper has not passed as_of yet"
    cu.append([], 0, 1)
    assert df.step()
    df.run_to_completion()
    assert df.frontier() == 1
    o.advance_upper(10)
    cu.advance_upper(10)
    assert df.step()
    assert df.frontier() == 10 and df.exports[IDX].oks.upper == 10
    assert not df.step()


def _importing_pair():
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((1, 10, 5), 1)], CUST: [((10, "east"), 1)]})
    df1 = Dataflow(view_desc(orders_by_region_plan(with_div=False)), sources={ORDERS: o, CUST: cu})
    df1.run_to_completion()
    desc2 = DataflowDescription((), (IndexImport(IDX, VIEW, (c(0),), 3),),
                                (BuildDesc(user(8), Get(VIEW, 3)),),
                                (IndexExport(user(9), user(8), (), 3),), (), as_of=0)
    df2 = Dataflow(desc2, indexes={IDX: df1.exports[IDX]})
    df2.run_to_completion()
    return o, cu, df1, df2


def test_import_compacted_to_the_read_frontier_reads_exactly_once():
    """Holding the import at ``read_frontier()`` while it merges keeps every update read
    once.  Sabotage: compacting to ``frontier()`` instead (one more) re-read merged
    updates; the dataflow now refuses that loudly (next test)."""
    o, cu, df1, df2 = _importing_pair()
    exp = df1.exports[IDX]
    for t in range(1, 30):
        commit((o, cu), t, {ORDERS: [((t + 1, 10, 1), 1)]})
        df1.run_to_completion()
        exp.oks.set_logical_compaction(df2.read_frontier())
        exp.errs.set_logical_compaction(df2.read_frontier())
        exp.oks.compact_fully()
        df2.run_to_completion()
        assert df2.exports[user(9)].oks.snapshot(t) == {("east", t + 1, 5 + t): 1}


def test_importing_dataflow_holds_the_spine_at_its_read_frontier():
    """The controller may ask for more compaction than a lagging importer can take: the
    importer's SpineHold keeps since at its read frontier, and releasing it (close)
    applies the request.  Sabotage: not acquiring the holds in Dataflow.__init__ let
    since jump to the request and the importer refused its next read."""
    o, cu, df1, df2 = _importing_pair()
    exp = df1.exports[IDX]
    for t in range(1, 6):
        commit((o, cu), t, {ORDERS: [((t + 1, 10, 1), 1)]})
    df1.run_to_completion()
    exp.oks.set_logical_compaction(5)
    exp.errs.set_logical_compaction(5)
    assert exp.oks.since == df2.read_frontier() == 0
    exp.oks.compact_fully()
    df2.run_to_completion()
    assert df2.exports[user(9)].oks.snapshot(5) == {("east", 6, 10): 1}
    assert exp.oks.since == df2.read_frontier() == 5
    commit((o, cu), 6, {})
    df1.run_to_completion()
    exp.oks.set_logical_compaction(6)
    assert exp.oks.since == 5
    df2.close()
    assert exp.oks.since == 6


def test_import_compacted_past_the_read_frontier_is_refused():
    o, cu, df1, df2 = _importing_pair()
    commit((o, cu), 1, {ORDERS: [((2, 10, 1), 1)]})
    df1.run_to_completion()
    exp = df1.exports[IDX]
    for h in df2._holds:  # as if the importer held nothing
        h.release()
    exp.oks.set_logical_compaction(df2.frontier())
    exp.errs.set_logical_compaction(df2.frontier())
    exp.oks.compact_fully()
    with pytest.raises(ComputeProtocolError):
        df2.run_to_completion()


def test_a_large_flush_is_split_across_steps(monkeypatch):
    """A Reduce touching many groups flushes them a budget at a time.  Sabotage: ignoring
    the budget (flushing every touched group at once) failed the size bound."""
    from compute.render import dataflow as render
    from compute.render.reduce import ReduceOp
    monkeypatch.setattr(render, "CHUNK", 16)
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((i, i, 1), 1) for i in range(2000)], CUST: []})
    plan = Reduce(Get(ORDERS, 3), (c(0),), (AggregateExpr("count", c(1), False, "int4", "int8"),))
    df = Dataflow(view_desc(plan), sources={ORDERS: o, CUST: cu})
    op = next(n.op for n in df._nodes if isinstance(n.op, ReduceOp))
    sizes = []
    real = op.flush

    def flush(t, budget=None):
        out = real(t, budget)
        sizes.append(len(out[0]))
        return out
    op.flush = flush
    while df.step(fuel=20):
        pass
    assert len(df.exports[IDX].oks.snapshot(0)) == 2000
    assert max(sizes) <= 20 and len(sizes) >= 100


def test_index_key_expression_error_goes_to_errs():
    """An index keyed by an expression that fails on a row puts that row's error in the
    errs spine instead of failing the dataflow."""
    o, cu = tables()
    commit((o, cu), 0, {ORDERS: [((1, 10, 5), 1), ((2, 10, 0), 1)], CUST: []})
    key = (Call("div_int4", (Literal(10, "int4"), c(2)), "int4"),)
    desc = DataflowDescription((SourceImport(ORDERS, 3), SourceImport(CUST, 2)), (), (),
                               (IndexExport(IDX, ORDERS, key, 3),), (), as_of=0)
    df = Dataflow(desc, sources={ORDERS: o, CUST: cu})
    df.run_to_completion()
    exp = df.exports[IDX]
    assert exp.oks.snapshot(0) == {(1, 10, 5): 1}
    assert exp.oks.lookup((2,), 0) == {(1, 10, 5): 1}
    assert exp.errs.snapshot(0) == {("22012", "division by zero"): 1}
    commit((o, cu), 1, {ORDERS: [((2, 10, 0), -1)]})
    df.run_to_completion()
    assert exp.errs.snapshot(1) == {}
