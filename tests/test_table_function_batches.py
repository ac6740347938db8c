"""Table functions in batches: an integer ``generate_series`` feeding a count/sum/avg reduce.

``FlatMapOp.fuse_reduce``: when the flat map's only consumer is a ``ReduceOp`` (perhaps
through a pure projection, as ``count(*)`` plans) whose inputs are columns and literals and
whose aggregates are counts, sums and averages, each input row's integer series is one
``range`` whose count and closed-form sum update the group; no series row exists.
Sabotage runs (each made once, saw red, restored):
- the fusion not wired in the render (the ``FlatMapOp`` branch of the fusion loop removed):
  ``test_a_large_series_is_never_materialised`` red (the series function is called);
- the sum of a series taken as ``n * r[0]`` (the closed form wrong):
  ``test_batches_answer_like_rows`` red;
- the group key allowed to read the series column: ``test_batches_answer_like_rows`` red
  (every series value its own group, summed as one);
- a NULL-count aggregate counted without its ``is not None`` check:
  ``test_batches_answer_like_rows`` red (``count(g)`` with NULL ``g``).
"""
from __future__ import annotations

import random

import pytest

from compute.render import flat_map
from expr import table_functions

QUERIES = [
    "SELECT sum(x), count(*), avg(x), count(x) FROM generate_series({a}, {b}, {s}) x",
    "SELECT sum(x) FROM generate_series({a}, {b}) x",
    "SELECT count(*) FROM generate_series({a}, {b}, {s}) x",
    "SELECT g, sum(x), avg(x), count(*), count(g), sum(g), sum(2) FROM "
    "(VALUES ({a}), (NULL), ({b}), ({a})) v(g), generate_series(g, {b} + 3, {s}) x GROUP BY g",
    "SELECT x, count(*) FROM generate_series({a}, {b}) x GROUP BY x",
    "SELECT g, count(g), sum(g), avg(g), count(*) FROM (VALUES ({a}), (NULL)) v(g), "
    "generate_series(1, {b}) x GROUP BY g",
    "SELECT sum(x::int8), count(*) FROM generate_series({a}, {b}, {s}) x",
    "SELECT sum(x) FROM (VALUES ({a}, {b}), (NULL, 1), ({b}, {a})) v(p, q), generate_series(p, q, {s}) x",
]


@pytest.mark.parametrize("seed", range(8))
def test_batches_answer_like_rows(connect, monkeypatch, seed):
    """Random bounds and steps (negative, empty, NULL arguments): the same answers as with
    the series emitted as rows."""
    rng = random.Random(seed)
    cases = []
    for q in QUERIES:
        a, b = rng.randint(-20, 20), rng.randint(-20, 30)
        s = rng.choice([1, 2, 3, -1, -2])
        cases.append(q.format(a=a, b=b, s=s))
    fused = connect()
    got = [sorted(fused.execute(q).fetchall(), key=repr) for q in cases]
    monkeypatch.setattr(flat_map.FlatMapOp, "fuse_reduce", lambda self, r, p=None: False)
    rows = connect()
    want = [sorted(rows.execute(q).fetchall(), key=repr) for q in cases]
    for q, g, w in zip(cases, got, want):
        assert g == w, q


def test_a_large_series_is_never_materialised(connect, monkeypatch):
    """``sum`` and ``count(*)`` of a 20-million-row series, and the series function never
    called (the rows never exist); a timestamp series still goes through rows."""
    calls = []
    real = table_functions.generate_series
    monkeypatch.setitem(table_functions.TABLE_FUNCTIONS, "generate_series",
                        lambda *a: calls.append(a) or real(*a))
    con = connect()
    n = 20_000_000
    assert con.execute(f"SELECT sum(x), count(*) FROM generate_series(1, {n}) x").fetchall() == [
        (n * (n + 1) // 2, n)]
    assert con.execute(f"SELECT count(*) FROM generate_series(1, {n}) x").fetchall() == [(n,)]
    assert calls == []
    assert con.execute("SELECT count(*) FROM generate_series('2020-01-01'::timestamp, "
                       "'2020-01-03'::timestamp, '1 day') x").fetchall() == [(3,)]
    assert calls


def test_a_zero_step_still_fails(connect):
    con = connect()
    with pytest.raises(Exception) as e:
        con.execute("SELECT sum(x) FROM generate_series(1, 10, 0) x").fetchall()
    assert getattr(e.value, "sqlstate", None) == "22023"
