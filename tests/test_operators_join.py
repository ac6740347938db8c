"""Join: binary and multiway delta joins against the reference, and arrangement reuse."""
from __future__ import annotations

import random

import pytest

from compute.dataflow import BuildDesc, DataflowDescription, IndexExport, IndexImport, SourceImport
from compute.render import join as join_mod
from compute.render.dataflow import Dataflow
from compute.render.join import JoinOp
from expr.relation import ArrangeBy, Filter, Get, Join, Project
from expr.scalar import Call, Column, Literal
from repr.ids import user
from storage.persist import StorageCollection
from tests.support.operator_harness import run_reference_check, small_int

A, B, C = user(1), user(2), user(3)


def gen2(rng):
    return (small_int(rng), small_int(rng, 0, 6))


@pytest.mark.parametrize("seed", range(4))
def test_binary_join_matches_reference(seed):
    """One-column keys: local arrangements are keyed by the value itself
    (``_LocalArrangement.raw``).  Sabotage: ``_step`` or ``_fused_step`` probing a raw
    arrangement with a 1-tuple -> no match is ever found (seen red)."""
    plan = Join((Get(A, 2), Get(B, 2)), ((Column(0), Column(2)),))
    run_reference_check(plan, {A: (2, gen2), B: (2, gen2)}, seed=seed)


@pytest.mark.parametrize("seed", range(3))
def test_join_two_key_columns_and_residual(seed):
    # key on (a0=b0, a1=b1) plus a class local to one input (a0 = a1): checked on output
    plan = Join((Get(A, 2), Get(B, 2)),
                ((Column(0), Column(2)), (Column(1), Column(3)), ))
    run_reference_check(plan, {A: (2, gen2), B: (2, gen2)}, seed=seed)
    plan = Join((Get(A, 2), Get(B, 2)), ((Column(0), Column(2), Column(1)),))
    run_reference_check(plan, {A: (2, gen2), B: (2, gen2)}, seed=seed + 10)


@pytest.mark.parametrize("seed", range(3))
def test_three_way_delta_join_matches_reference(seed):
    plan = Join((Get(A, 2), Get(B, 2), Get(C, 2)),
                ((Column(0), Column(2)), (Column(3), Column(4))))
    run_reference_check(plan, {A: (2, gen2), B: (2, gen2), C: (2, gen2)}, seed=seed, per_time=8)


def test_cross_join_and_self_join():
    run_reference_check(Join((Get(A, 2), Get(B, 2)), ()), {A: (2, gen2), B: (2, gen2)}, per_time=5)
    run_reference_check(Join((Get(A, 2), Get(A, 2)), ((Column(1), Column(3)),)), {A: (2, gen2)})


def test_join_on_computed_key_with_errors():
    """A key expression that divides by zero puts the row in errs; retracting the row
    retracts the error."""
    key = Call("div_int4", (Literal(12, "int4"), Column(0)), "int4")
    plan = Join((Get(A, 2), Get(B, 2)), ((key, Column(2)),))
    colls = {g: StorageCollection(g, 2) for g in (A, B)}
    colls[A].append([((0, 1), 1), ((3, 1), 1)], 0, 1)
    colls[B].append([((4, 9), 1)], 0, 1)
    desc = DataflowDescription((SourceImport(A, 2), SourceImport(B, 2)), (),
                               (BuildDesc(user(5), plan),),
                               (IndexExport(user(6), user(5), (), 4),), (), as_of=0)
    df = Dataflow(desc, sources=colls)
    df.run_to_completion()
    exp = df.exports[user(6)]
    assert exp.oks.snapshot(0) == {(3, 1, 4, 9): 1}
    assert exp.errs.snapshot(0) == {("22012", "division by zero"): 1}
    colls[A].append([((0, 1), -1)], 1, 2)
    colls[B].append([], 1, 2)
    df.run_to_completion()
    assert exp.errs.snapshot(1) == {}
    assert exp.oks.snapshot(1) == {(3, 1, 4, 9): 1}


def _indexed_join_dataflow(rng, reuse_key, *, as_of=0):
    """customers arranged by an index (from another dataflow), orders from storage."""
    orders = StorageCollection(A, 2)
    cust = StorageCollection(B, 2)
    orders.append([((i, rng.randint(0, 9)), 1) for i in range(40)], 0, 1)
    cust.append([((c, f"r{c % 3}"), 1) for c in range(20)], 0, 1)
    idx_desc = DataflowDescription((SourceImport(B, 2),), (), (),
                                   (IndexExport(user(10), B, reuse_key, 2),), (), as_of=0)
    idx_df = Dataflow(idx_desc, sources={B: cust})
    idx_df.run_to_completion()
    plan = Project(Join((Get(A, 2), ArrangeBy(Get(B, 2), (reuse_key,))), ((Column(1), Column(2)),)),
                   (0, 3))
    desc = DataflowDescription((SourceImport(A, 2),), (IndexImport(user(10), B, reuse_key, 2),),
                               (BuildDesc(user(11), plan),),
                               (IndexExport(user(12), user(11), (Column(0),), 2),), (), as_of=as_of)
    df = Dataflow(desc, sources={A: orders}, indexes={user(10): idx_df.exports[user(10)]})
    return orders, cust, idx_df, df


def test_join_reuses_imported_arrangement_and_stays_correct():
    """With the index key equal to the join key the join reads the imported arrangement in
    place: no local copy of customers is built and the hydration snapshot of the import
    is never materialized.  Sabotage: forcing `arranged` empty in the render made the
    `reused`/`_arrangements` assertions fail (a local copy appeared); corrupting the
    pending-delta subtraction in `_ImportedArrangement.get` (sign +1) double-counted the
    customer update at time 2 and failed the reference comparison."""
    rng = random.Random(1)
    orders, cust, idx_df, df = _indexed_join_dataflow(rng, (Column(0),))
    df.run_to_completion()
    join = next(n.op for n in df._nodes if isinstance(n.op, JoinOp))
    assert list(join.reused) == [1]
    assert all(k[0] != 1 for k in join._arrangements), "customers were copied"
    live_o = dict(orders.snapshot(0))
    live_c = dict(cust.snapshot(0))
    for t in range(1, 8):
        o_ups = [((100 + t, rng.randint(0, 9)), 1)]
        victim = sorted(live_o)[rng.randrange(len(live_o))]
        o_ups.append((victim, -1))
        # keys no order has probed yet: the join's first lookup of them misses its cache
        # in the very time that changes them
        c_ups = [((50 + t, "new"), 1), ((10 + t, f"r{(10 + t) % 3}"), -1), ((10 + t, "moved"), 1)]
        o_ups += [((200 + t, 50 + t), 1), ((300 + t, 10 + t), 1)]
        if t % 2 == 0:
            c = rng.randint(0, 9)
            old = next((r for r in live_c if r[0] == c), None)
            if old:
                c_ups.append((old, -1))
            c_ups.append(((c, f"n{t}"), 1))
        for r, d in o_ups:
            live_o[r] = live_o.get(r, 0) + d
            if not live_o[r]:
                del live_o[r]
        for r, d in c_ups:
            live_c[r] = live_c.get(r, 0) + d
            if not live_c[r]:
                del live_c[r]
        orders.append(o_ups, t, t + 1)
        cust.append(c_ups, t, t + 1)
        idx_df.run_to_completion()
        df.run_to_completion()
        want = {}
        for (oid, ck), n in live_o.items():
            for (c, region), m in live_c.items():
                if c == ck:
                    want[(oid, region)] = want.get((oid, region), 0) + n * m
        assert df.exports[user(12)].oks.snapshot(t) == want, t


def test_join_without_matching_index_builds_local_arrangement():
    rng = random.Random(2)
    orders, cust, idx_df, df = _indexed_join_dataflow(rng, (Column(1),))
    df.run_to_completion()
    join = next(n.op for n in df._nodes if isinstance(n.op, JoinOp))
    assert not join.reused
    assert any(k[0] == 1 for k in join._arrangements)
    assert len(df.exports[user(12)].oks.snapshot(0)) == 40


def test_imported_arrangement_cache_miss_in_a_changing_time():
    """Unit-level: a miss reads the import at the current time, subtracts the whole delta of
    that time and adds back the part already applied.  Sabotage: dropping the
    subtraction (sign +1) double-counts the new row."""
    class Handle:
        def lookup(self, key, as_of):
            return {("k", 1): 1, ("k", 2): 1} if as_of >= 5 else {("k", 1): 1}
    imp = join_mod._ImportedArrangement(1, (Column(0),), lambda r: (r[0],), Handle())
    imp.read_time = 5
    imp.pending = {("k",): {("k", 2): 1}}
    assert imp.get(("k",)) == {("k", 1): 1}
    imp2 = join_mod._ImportedArrangement(1, (Column(0),), lambda r: (r[0],), Handle())
    imp2.read_time = 5
    imp2.pending = {("k",): {("k", 2): 1}}
    imp2.overlay = {("k",): {("k", 2): 1}}
    assert imp2.get(("k",)) == {("k", 1): 1, ("k", 2): 1}


def test_reused_import_read_at_compacted_since():
    """The import's since may sit at the dataflow's read frontier (the last processed
    time): in-place reads happen at the time being processed, never below it."""
    rng = random.Random(3)
    orders, cust, idx_df, df = _indexed_join_dataflow(rng, (Column(0),))
    df.run_to_completion()
    for t in range(1, 5):
        cust.append([((t, "x"), 1)], t, t + 1)
        orders.append([((1000 + t, t), 1)], t, t + 1)
        idx_df.run_to_completion()
        exp = idx_df.exports[user(10)]
        exp.oks.set_logical_compaction(df.read_frontier())
        exp.errs.set_logical_compaction(df.read_frontier())
        exp.oks.maintain()
        df.run_to_completion()
        snap = df.exports[user(12)].oks.snapshot(t)
        assert (1000 + t, "x") in snap


@pytest.mark.parametrize("proj", [(0,), (0, 1), (3, 0), (2,), (), (1, 1, 3)])
def test_projection_fused_into_join(proj):
    """A Project directly over a Join is built into the join's output rows.  Sabotage:
    treating a prefix projection such as (0,) as the identity (the bug this test was
    written for) emitted whole joined rows."""
    plan = Project(Join((Get(A, 2), Get(B, 2)), ((Column(1), Column(2)),)), proj)
    run_reference_check(plan, {A: (2, gen2), B: (2, gen2)}, seed=len(proj))
    plan = Project(Join((Get(A, 2), Get(B, 2)), ((Column(1), Column(2)), (Column(0), Column(0)))), proj)
    run_reference_check(plan, {A: (2, gen2), B: (2, gen2)}, seed=7)
