"""The join of a dataflow that reads one time (a peek): one linear path, planned at the flush.

``OneShotJoinOp`` stashes its inputs at ``as_of`` and, at the flush, plans one path from the
smallest input, loads the other inputs into the arrangements that path looks up, and
streams the smallest input through, in pieces of about the flush budget.
Sabotage runs (each made once, saw red, restored):
- the render always building ``JoinOp`` (the ``is_single_time`` branch removed):
  ``test_a_peek_join_plans_one_path`` red (64 paths planned);
- the driver chosen as input 0 rather than the smallest input:
  ``test_the_smallest_input_drives`` red;
- the flush ignoring its budget (everything in one call):
  ``test_the_flush_works_in_pieces`` red;
- ``_start`` not loading the other inputs' stashed chunks: every reference check red.
"""
from __future__ import annotations

import random

import pytest

from compute.dataflow import BuildDesc, DataflowDescription, IndexExport, SourceImport
from compute.render import dataflow as render
from compute.render.dataflow import Dataflow
from compute.render.join import JoinOp
from compute.render.join_oneshot import OneShotJoinOp
from expr.relation import Get, Join
from expr.scalar import Call, Column, Literal
from repr.ids import user
from storage.persist import StorageCollection
from tests.support.reference import evaluate_with_errors

A, B, C = user(1), user(2), user(3)
BUILD, INDEX = user(900), user(901)


def one_shot(plan, data: dict, *, fuel=1000):
    """``plan`` read at time 0 only; returns (dataflow, oks, errs)."""
    colls = {}
    for gid, rows in data.items():
        colls[gid] = StorageCollection(gid, len(rows[0][0]) if rows else 2)
        colls[gid].append(list(rows), 0, 1)
    key = tuple(Column(i) for i in range(plan.arity()))
    desc = DataflowDescription(
        tuple(SourceImport(g, c.arity) for g, c in colls.items()), (),
        (BuildDesc(BUILD, plan),), (IndexExport(INDEX, BUILD, key, plan.arity()),), (),
        as_of=0, until=1)
    df = Dataflow(desc, sources=colls)
    while df.step(fuel):
        pass
    exp = df.exports[INDEX]
    want_oks, _ = evaluate_with_errors(plan, {g: c.snapshot(0) for g, c in colls.items()}, None)
    # errors as the delta join counts them (one per bad input row; the reference counts
    # them per joined combination, a known deviation of ``compute.render.join``)
    delta = Dataflow(DataflowDescription(desc.source_imports, (), desc.objects_to_build,
                                         desc.index_exports, (), as_of=0), sources=colls)
    delta.run_to_completion()
    assert [type(j) for j in joins(delta)] == [JoinOp]
    return df, (exp.oks.snapshot(0), exp.errs.snapshot(0)), (want_oks, delta.exports[INDEX].errs.snapshot(0))


def joins(df):
    return [n.op for n in df._nodes if isinstance(n.op, JoinOp)]


def rows(rng, n, arity=2, hi=4):
    out = []
    for _ in range(n):
        r = tuple(None if rng.random() < 0.1 else rng.randint(0, hi) for _ in range(arity))
        out.append((r, rng.choice((1, 1, 2))))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_one_shot_joins_match_the_reference(seed):
    """Binary, three-way with a residual class, and a computed key that divides by zero."""
    rng = random.Random(seed)
    data = {A: rows(rng, 12), B: rows(rng, 9), C: rows(rng, 7)}
    div = Call("div_int4", (Literal(12, "int4"), Column(0)), "int4")
    plans = [
        Join((Get(A, 2), Get(B, 2)), ((Column(0), Column(2)),)),
        Join((Get(A, 2), Get(B, 2), Get(C, 2)),
             ((Column(0), Column(2)), (Column(3), Column(4), Column(1)))),
        Join((Get(A, 2), Get(B, 2)), ((div, Column(2)),)),
        Join((Get(A, 2), Get(B, 2)), ()),
    ]
    for plan in plans:
        old = render.CHUNK
        render.CHUNK = 3
        try:
            df, got, want = one_shot(plan, data, fuel=5)
        finally:
            render.CHUNK = old
        assert [type(j) for j in joins(df)] == [OneShotJoinOp]
        assert got == want


def test_an_empty_input_makes_an_empty_join():
    plan = Join((Get(A, 2), Get(B, 2)), ((Column(0), Column(2)),))
    df, got, want = one_shot(plan, {A: [((1, 2), 1)], B: []})
    assert got == want == ({}, {})


def _chain(n):
    classes = tuple((Column(2 * t + 1), Column(2 * (t + 1))) for t in range(n - 1))
    return Join(tuple(Get(user(10 + t), 2) for t in range(n)), classes)


def test_a_peek_join_plans_one_path():
    """A 64-input chain read once plans one path of 63 lookups, each keyed (no cross
    product), and arranges each input but the driver once."""
    n = 64
    data = {user(10 + t): [((a, (a * 7 + t) % 10), 1) for a in range(10)] for t in range(n)}
    df, got, want = one_shot(_chain(n), data)
    assert got == want and len(got[0]) == 10
    (op,) = joins(df)
    planned = [p for p in op.paths if p is not None]
    assert len(planned) == 1
    steps = planned[0][0]
    assert len(steps) == n - 1 and all(s[2].key_exprs for s in steps)
    assert len(op._arrangements) == n - 1


def test_the_smallest_input_drives():
    plan = Join((Get(A, 2), Get(B, 2), Get(C, 2)), ((Column(0), Column(2)), (Column(3), Column(4))))
    rng = random.Random(3)
    data = {A: rows(rng, 30), B: rows(rng, 20), C: rows(rng, 2)}
    df, got, want = one_shot(plan, data)
    assert got == want
    (op,) = joins(df)
    assert op._driver == 2
    assert [i for i, p in enumerate(op.paths) if p is not None] == [2]


def test_the_flush_works_in_pieces():
    """The flush loads and streams about ``budget`` rows (in and out) per call
    (``flush_pending``)."""
    op = OneShotJoinOp([2, 2], ((Column(0), Column(2)),), as_of=0)
    for k in range(10):
        op.push(0, [((k, k), 1) for _ in range(1)] * 5, 0)
        op.push(1, [((k, -k), 1)] * 3, 0)
    out, pieces = [], 0
    while True:
        oks, _errs = op.flush(0, budget=5)
        out.extend(oks)
        pieces += 1
        assert op.last_flush_work <= 6   # a chunk of 5 loaded, or 3 driver rows and their output
        if not op.flush_pending():
            break
    assert pieces == 20   # 10 chunks of 5 loaded, 10 of 3 streamed (3 rows in, 3 out), one a call
    assert sum(d for _r, d in out) == 10 * 5 * 3


def test_a_cross_product_streams_in_bounded_pieces():
    """A 300 x 300 cross product: the driver goes through in pieces, none producing more
    than twice ``_PIECE_OUTPUT`` pairs, and all 90,000 pairs come out.  Sabotage: the driver
    chunk taken whole (no pieces) -> one piece of 300 x 300 (seen red)."""
    from compute.render import join_oneshot
    op = OneShotJoinOp([1, 1], (), as_of=0)
    op.push(0, [((i,), 1) for i in range(300)], 0)
    op.push(1, [((i,), 1) for i in range(300)], 0)
    sizes, total = [], 0
    real = op._delta

    def spy(port, chunk, errs):
        out = real(port, chunk, errs)
        sizes.append(len(out))
        return out
    op._delta = spy
    while True:
        oks, _ = op.flush(0, budget=1000)
        total += len(oks)
        if not op.flush_pending():
            break
    assert total == 300 * 300
    assert len(sizes) > 1 and max(sizes) <= 2 * join_oneshot._PIECE_OUTPUT


def test_a_peek_join_feeding_count_and_sum(connect):
    """A peek's join feeding a count/sum reduce: fused into the reduce's groups at the flush,
    and the answer right."""
    con = connect()
    con.execute("CREATE TABLE a (k int, v int)")
    con.execute("CREATE TABLE b (k int, g text)")
    con.cursor().executemany("INSERT INTO a VALUES (?, ?)", [(i % 4, i) for i in range(40)])
    con.cursor().executemany("INSERT INTO b VALUES (?, ?)", [(0, "x"), (1, "y"), (2, "x"), (2, "z")])
    got = sorted(con.execute("SELECT g, count(*), sum(v) FROM a JOIN b ON a.k = b.k GROUP BY g").fetchall())
    want = {}
    for i in range(40):
        for k, g in [(0, "x"), (1, "y"), (2, "x"), (2, "z")]:
            if i % 4 == k:
                n, s = want.get(g, (0, 0))
                want[g] = (n + 1, s + i)
    assert got == sorted((g, n, s) for g, (n, s) in want.items())
