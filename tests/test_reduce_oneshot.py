"""The reduce of a dataflow that reads one time (a peek): one pass into accumulators.

``OneShotReduceOp`` folds each chunk into a dict of accumulator lists (a one-column key is
the value itself), reads through a pure projection in front of it, finishes the groups in
pieces of the flush budget and releases them as it emits them; a ``min``/``max`` that meets
a negative diff replays its chunks into a ``ReduceOp``.
Sabotage runs (each made once, saw red, restored):
- ``Dataflow._plan_one_shot_reduces`` not called: ``test_a_peek_reduce_folds_in_one_pass``
  and the reference checks red (they assert the reduce is a ``OneShotReduceOp``);
- the projection not bypassed (``project`` forced to ``None``):
  ``test_a_peek_reduce_folds_in_one_pass`` red (the projection still has a consumer);
- the diff written as the constant 1 in the general branch too (not only under ``d == 1``):
  the reference checks and the group-error test red (diffs of 2 and -1);
- ``raise _Retraction`` removed from the generated fold: ``test_min_max_falls_back_on_a_retraction``
  and the reference checks with negative diffs red;
- the flush taking every group regardless of its budget: ``test_the_flush_works_in_pieces`` red;
- the flush leaving the emitted groups in ``groups``: the dataflows never finish (pytest's
  timeout), ``test_the_state_is_released_by_the_flush`` red.
"""
from __future__ import annotations

import random

import pytest

from compute.dataflow import BuildDesc, DataflowDescription, IndexExport, SourceImport
from compute.render import dataflow as render
from compute.render.dataflow import Dataflow
from compute.render.mfp import MfpOp
from compute.render.reduce import ReduceOp
from compute.render.reduce_oneshot import OneShotReduceOp
from expr.relation import AggregateExpr, Get, Negate, Project, Reduce, Union
from expr.scalar import Call, Column, Literal
from repr.ids import user
from storage.persist import StorageCollection
from tests.support.operator_harness import approx_equal
from tests.support.reference import evaluate_with_errors

A = user(1)
BUILD, INDEX = user(900), user(901)


def agg(func, expr=Column(1), it="int4", ot="int8"):
    return AggregateExpr(func, expr, False, it, ot)


AGGS = [
    agg("count"), agg("count", Literal(True, "bool")), agg("sum"), agg("avg", ot="numeric"),
    agg("min", ot="int4"), agg("max", ot="int4"),
]
FLOAT_AGGS = [agg("sum", Column(2), "float8", "float8"), agg("min", Column(2), "float8", "float8"),
              agg("max", Column(2), "float8", "float8"), agg("avg", Column(2), "float8", "float8")]


def dataflow_at(plan, colls, t, fuel=1000):
    key = tuple(Column(i) for i in range(plan.arity()))
    desc = DataflowDescription(
        tuple(SourceImport(g, c.arity) for g, c in colls.items()), (),
        (BuildDesc(BUILD, plan),), (IndexExport(INDEX, BUILD, key, plan.arity()),), (),
        as_of=t, until=t + 1)
    df = Dataflow(desc, sources=colls)
    while df.step(fuel):
        pass
    exp = df.exports[INDEX]
    return df, exp.oks.snapshot(t), exp.errs.snapshot(t)


def reduces(df):
    return [n.op for n in df._nodes if isinstance(n.op, (ReduceOp, OneShotReduceOp))]


def gen_row(rng):
    f = rng.choice([None, 0.5, -3.25, 7.0, float("nan")])
    return (None if rng.random() < 0.15 else rng.randint(0, 3),
            None if rng.random() < 0.2 else rng.randint(-5, 5), f)


def nan_free(rows: dict) -> dict:
    """``rows`` with each NaN as the string ``"NaN"`` (NaN objects are unequal dict keys)."""
    out: dict = {}
    for r, d in rows.items():
        k = tuple("NaN" if isinstance(v, float) and v != v else v for v in r)
        out[k] = out.get(k, 0) + d
    return out


def check(plan, colls, t, one_shot=True):
    old = render.CHUNK
    render.CHUNK = 3
    try:
        df, oks, errs = dataflow_at(plan, colls, t, fuel=7)
    finally:
        render.CHUNK = old
    if one_shot:
        assert [type(r) for r in reduces(df)] == [OneShotReduceOp]
    want_oks, want_errs = evaluate_with_errors(plan, {g: c.snapshot(t) for g, c in colls.items()}, None)
    oks, want_oks = nan_free(oks), nan_free(want_oks)
    assert approx_equal(oks, want_oks), f"time {t}\n got {oks}\nwant {want_oks}"
    assert errs == want_errs, f"time {t}\n got {errs}\nwant {want_errs}"
    return df


@pytest.mark.parametrize("seed", range(8))
def test_one_shot_reduces_match_the_reference(seed):
    """Random rows with deletes (and diffs of 2) over several times, each time read by a
    fresh peek dataflow; random group keys (none, one column, two columns, an expression)
    and random subsets of the aggregates, over a projection and not."""
    rng = random.Random(seed)
    coll = StorageCollection(A, 3)
    live: dict = {}
    plans = []
    for _ in range(4):
        keys = rng.choice([(), (Column(0),), (Column(0), Column(1)),
                           (Call("add_int4", (Column(0), Literal(1, "int4")), "int4"),)])
        aggs = tuple(rng.sample(AGGS, rng.randint(1, 4))) + tuple(rng.sample(FLOAT_AGGS, rng.randint(0, 2)))
        plans.append(Reduce(Get(A, 3), keys, aggs, global_default=not keys))
        # the same over a projection that reorders the columns (read through by the reduce)
        proj = Project(Get(A, 3), (2, 1, 0))
        m = {0: 2, 1: 1, 2: 0}
        from expr.scalar import permute
        plans.append(Reduce(proj, tuple(permute(k, m) for k in keys),
                            tuple(AggregateExpr(a.func, permute(a.expr, m), False, a.input_type, a.output_type)
                                  for a in aggs), global_default=not keys))
    for t in range(5):
        ups = []
        for _ in range(rng.randint(0, 14)):
            if live and rng.random() < 0.4:
                row = rng.choice(sorted(live, key=repr))
                ups.append((row, -1))
                live[row] -= 1
                if not live[row]:
                    del live[row]
            else:
                row = gen_row(rng)
                d = rng.choice((1, 1, 2))
                ups.append((row, d))
                live[row] = live.get(row, 0) + d
        coll.append(ups, t, t + 1)
        for plan in plans:
            check(plan, {A: coll}, t)


@pytest.mark.parametrize("seed", range(4))
def test_negative_multiplicities_and_retractions_match_reduce_op(seed):
    """A union with a negated input: some groups' multiplicities are negative (the error row)
    or zero (no row), and ``min``/``max`` see retractions (the fallback).  Compared with the
    maintained ``ReduceOp`` (the reference evaluator errs on any negative row, a stricter
    rule than the operators')."""
    rng = random.Random(100 + seed)
    coll = StorageCollection(A, 3)
    coll.append([(gen_row(rng), rng.choice((1, 2))) for _ in range(15)], 0, 1)
    b = StorageCollection(user(2), 3)
    b.append([(gen_row(rng), 1) for _ in range(8)], 0, 1)
    colls = {A: coll, user(2): b}
    inp = Union((Get(A, 3), Negate(Get(user(2), 3))))
    for aggs in ((AGGS[0], AGGS[2], AGGS[3]), (AGGS[4], AGGS[1]), tuple(FLOAT_AGGS)):
        for keys in ((Column(0),), ()):
            plan = Reduce(inp, keys, aggs, global_default=not keys)
            old = render.CHUNK
            render.CHUNK = 3
            try:
                df, oks, errs = dataflow_at(plan, colls, 0, fuel=7)
            finally:
                render.CHUNK = old
            assert [type(r) for r in reduces(df)] == [OneShotReduceOp]
            maintained = Dataflow(DataflowDescription(
                df.desc.source_imports, (), df.desc.objects_to_build, df.desc.index_exports, (), as_of=0),
                sources=colls)
            maintained.run_to_completion()
            assert [type(r) for r in reduces(maintained)] == [ReduceOp]
            exp = maintained.exports[INDEX]
            assert approx_equal(nan_free(oks), nan_free(exp.oks.snapshot(0)))
            assert errs == exp.errs.snapshot(0)


def test_a_peek_reduce_folds_in_one_pass():
    """A peek's GROUP BY over a projection: a ``OneShotReduceOp`` fed by the source itself
    (the projection's node has no consumer left); a maintained dataflow keeps ``ReduceOp``."""
    coll = StorageCollection(A, 3)
    coll.append([((i % 3, i, 1.5), 1) for i in range(10)], 0, 1)
    plan = Reduce(Project(Get(A, 3), (0, 1)), (Column(0),), (AGGS[1], AGGS[2]))
    df = check(plan, {A: coll}, 0)
    (op,) = reduces(df)
    assert op.groups == {}
    mfps = [n for n in df._nodes if isinstance(n.op, MfpOp)]
    assert mfps and all(not n.consumers for n in mfps)
    src = df._inputs[0]
    assert [type(c.op) for c, _p in src.consumers] == [OneShotReduceOp]
    maintained = Dataflow(DataflowDescription(
        (SourceImport(A, 3),), (), (BuildDesc(BUILD, plan),),
        (IndexExport(INDEX, BUILD, (Column(0), Column(1), Column(2)), 3),), (), as_of=0), sources={A: coll})
    assert [type(r) for r in reduces(maintained)] == [ReduceOp]


def test_min_max_falls_back_on_a_retraction():
    op = OneShotReduceOp((Column(0),), (agg("min", ot="int4"), agg("max", ot="int4")))
    op.push(0, [((1, 5), 1), ((1, 2), 1), ((2, 7), 1)], 0)
    assert op._fallback is None
    op.push(0, [((1, 2), -1)], 0)
    assert isinstance(op._fallback, ReduceOp)
    oks, errs = op.flush(0)
    assert sorted(oks) == [((1, 5, 5), 1), ((2, 7, 7), 1)] and not errs


def test_the_flush_works_in_pieces():
    op = OneShotReduceOp((Column(0),), (agg("count", Literal(True, "bool")),))
    op.push(0, [((k, 0), 1) for k in range(10)], 0)
    sizes = []
    while op.flush_pending():
        oks, _errs = op.flush(0, 3)
        sizes.append(len(oks))
    assert sizes == [3, 3, 3, 1]


def test_the_state_is_released_by_the_flush():
    op = OneShotReduceOp((Column(0),), (agg("sum"),))
    op.push(0, [((k % 4, k), 1) for k in range(100)], 0)
    assert len(op.groups) == 4
    oks, _errs = op.flush(0)
    assert len(oks) == 4 and op.groups == {} and not op.flush_pending()


def test_sum_overflow_and_negative_multiplicity_are_group_errors():
    op = OneShotReduceOp((Column(0),), (agg("sum", it="int8", ot="int8"),))
    big = 2 ** 62
    op.push(0, [((0, big), 1), ((0, big + 1), 1), ((1, 1), 1), ((2, 3), -1), ((3, 3), 1), ((3, 3), -1)], 0)
    oks, errs = op.flush(0)
    assert oks == [((1, 1), 1)]
    assert sorted(e[0] for e, _d in errs) == ["22003", "XX000"]


def test_the_global_default_row_over_empty_input():
    op = OneShotReduceOp((), (AGGS[0], AGGS[1], AGGS[2], AGGS[4]), global_default=True)
    assert op.flush_pending() is False
    oks, errs = op.flush(0)
    assert oks == [((0, 0, None, None), 1)] and not errs


def test_sql_group_by_matches_under_both_runtimes(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (id int, g int, v int, f float8, n numeric)")
    rows = [(i, None if i % 7 == 0 else i % 5, None if i % 3 == 0 else i % 11 - 4,
             float("nan") if i % 13 == 0 else i / 4, None if i % 4 == 0 else i % 6) for i in range(200)]
    cur.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    cur.execute("DELETE FROM t WHERE id % 9 = 0")
    got = sorted(cur.execute(
        "SELECT g, count(*), count(v), sum(v), min(v), max(v), max(f), min(n), sum(n) FROM t GROUP BY g"
    ).fetchall(), key=repr)
    live = [r for r in rows if r[0] % 9]
    want = []
    for g in sorted({r[1] for r in live}, key=repr):
        grp = [r for r in live if r[1] == g]
        vs = [r[2] for r in grp if r[2] is not None]
        ns = [r[4] for r in grp if r[4] is not None]
        want.append((g, len(grp), len(vs), sum(vs) if vs else None, min(vs, default=None),
                     max(vs, default=None), any(r[3] != r[3] for r in grp) or max(r[3] for r in grp),
                     min(ns, default=None), sum(ns) if ns else None))
    want.sort(key=repr)
    assert [r[:6] for r in got] == [r[:6] for r in want]
    # NaN is the largest float
    assert [True if r[6] != r[6] else r[6] for r in got] == [r[6] for r in want]
    assert [(r[7], r[8]) for r in got] == [(w[7], w[8]) for w in want]
    assert cur.execute("SELECT count(*), sum(v) FROM t WHERE id < 0").fetchall() == [(0, None)]
