"""ORDER BY inside aggregate calls, and the ordered-form aggregates (array_agg, jsonb_agg,
jsonb_object_agg, string_agg with ORDER BY): the Reduce operator under random +1/-1 updates
against the from-scratch reference, the ordering itself against an independent sort, and
maintained views against one-shot SELECTs (interactive runtime on and off)."""
from __future__ import annotations

import functools
import random

import pytest

from expr.functions.aggregates import ordered_aggregate
from expr.relation import AggregateExpr, Get, Reduce
from expr.scalar import Call, Column, If, Literal
import mzlite
from repr.ids import user
from tests.support.operator_harness import run_reference_check, small_int

A = user(1)


def gen(rng):
    # (group, value, sort key 1, sort key 2, filter flag)
    return (small_int(rng, 0, 2, 0.0), small_int(rng, -3, 5), small_int(rng, 0, 3, 0.25),
            rng.choice(["a", "b", None]), rng.random() < 0.7)


def rec(*xs):
    return Call("record", tuple(xs), "record")


def ordered(func, value, keys, dirs, distinct=False, filtered=False, ot="int4[]"):
    e = rec(value, *keys)
    if filtered:
        e = If(Column(4), e, Literal(None, "record"), "record")
    return AggregateExpr(func, e, distinct, "int4", ot, tuple(dirs))


CASES = {
    "array_agg_by_key_desc": ordered("array_agg", Column(1), [Column(2)], [(True, False)]),
    "array_agg_two_keys_nulls_first": ordered("array_agg", Column(1), [Column(3), Column(2)],
                                              [(False, False), (True, True)]),
    "array_agg_filter": ordered("array_agg", Column(1), [Column(2)], [(False, True)], filtered=True),
    "array_agg_distinct_by_value": ordered("array_agg", Column(1), [Column(1)], [(True, False)], distinct=True),
    "jsonb_agg": ordered("jsonb_agg", Column(1), [Column(3)], [(False, True)], ot="jsonb"),
    "string_agg": ordered("string_agg", rec(Column(3), Literal(",", "text")), [Column(2)], [(True, True)],
                          ot="text"),
    "jsonb_object_agg": AggregateExpr("jsonb_object_agg", rec(rec(Call("cast_int4_to_text", (Column(2),), "text"),
                                                                  Column(1))), False, "record", "jsonb"),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", range(3))
def test_ordered_aggregates_match_reference(name, seed):
    """Random +1/-1 updates: each group's value is recomputed from its current multiset.
    Sabotage: ``_Ordered.update`` ignoring retractions (``d < 0``) -> mismatch (seen red)."""
    plan = Reduce(Get(A, 5), (Column(0),), (CASES[name],))
    run_reference_check(plan, {A: (5, gen)}, seed=seed, times=6)


def _reference_sort(records, dirs):
    """Independent: a comparator over the keys with PostgreSQL's NULL placement, ties by value."""
    def cmp_val(x, y, nulls_last):
        if x is None or y is None:
            if x is None and y is None:
                return 0
            return (1 if x is None else -1) * (1 if nulls_last else -1)
        return (x > y) - (x < y)

    def cmp(a, b):
        for j, (desc, nulls_last) in enumerate(dirs, 1):
            x, y = a[j], b[j]
            if x is None or y is None:
                c = cmp_val(x, y, nulls_last)
            else:
                c = -cmp_val(x, y, True) if desc else cmp_val(x, y, True)
            if c:
                return c
        return cmp_val(a[0], b[0], True)
    return sorted(records, key=functools.cmp_to_key(cmp))


@pytest.mark.parametrize("seed", range(30))
def test_ordering_against_independent_sort(seed):
    """Sabotage: swapping the NULL placement for DESC keys in ``ordered_aggregate`` (seen red)."""
    rng = random.Random(seed)
    dirs = tuple((rng.random() < 0.5, rng.random() < 0.5) for _ in range(rng.randint(1, 3)))
    recs = [(small_int(rng, 0, 9), *(small_int(rng, 0, 2, 0.3) for _ in dirs)) for _ in range(rng.randint(0, 12))]
    counts: dict = {}
    for r in recs:
        counts[r] = counts.get(r, 0) + 1
    got = ordered_aggregate("array_agg", list(counts.items()), dirs)
    want = [r[0] for r in _reference_sort(recs, dirs)]
    assert (list(got) if got is not None else []) == want


@pytest.fixture
def con(con):  # the shared connection (both settings) with this module's table
    con.execute("CREATE TABLE t (g int, a int, b text)")
    return con


QUERIES = [
    "SELECT g, string_agg(b, ',' ORDER BY b DESC) AS s, array_agg(a ORDER BY a DESC NULLS LAST) AS x FROM t GROUP BY g",
    "SELECT g, array_agg(DISTINCT b ORDER BY b) AS x, jsonb_agg(a ORDER BY b, a) FILTER (WHERE a > 0) AS j "
    "FROM t GROUP BY g",
    "SELECT string_agg(b, '' ORDER BY a, b) AS s, jsonb_object_agg(coalesce(b, 'none'), a ORDER BY a) AS o FROM t",
    "SELECT g, array_agg(a) FILTER (WHERE b IS NOT NULL) AS x, sum(a ORDER BY b) AS s FROM t GROUP BY g",
]


def test_maintained_views_match_one_shot(con):
    for i, q in enumerate(QUERIES):
        con.execute(f"CREATE VIEW v{i} AS {q}")
        con.execute(f"CREATE DEFAULT INDEX ON v{i}")
        con.execute(f"CREATE MATERIALIZED VIEW m{i} AS {q}")
    rng = random.Random(7)
    rows: list = []
    for step in range(8):
        new = [(rng.randint(0, 2), small_int(rng, -2, 5), rng.choice(["x", "y", "z", None])) for _ in range(4)]
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", new)
        rows += new
        if rows and step % 2:
            g, a, b = rows.pop(rng.randrange(len(rows)))
            con.execute("DELETE FROM t WHERE g = ? AND a IS NOT DISTINCT FROM ? AND b IS NOT DISTINCT FROM ?",
                        (g, a, b))
            rows = [tuple(r) for r in con.execute("SELECT * FROM t").fetchall()]
        for i, q in enumerate(QUERIES):
            want = sorted(map(repr, con.execute(q).fetchall()))
            assert sorted(map(repr, con.execute(f"SELECT * FROM v{i}").fetchall())) == want, (i, step)
            assert sorted(map(repr, con.execute(f"SELECT * FROM m{i}").fetchall())) == want, (i, step)


def test_answers_as_postgres(con):
    """PostgreSQL 15's answers for the same data (no ties among the ORDER BY keys)."""
    con.execute("INSERT INTO t VALUES (1, 1, 'x'), (1, 2, 'y'), (2, 3, NULL), (2, NULL, 'z')")
    assert sorted(con.execute("SELECT g, string_agg(b, ',' ORDER BY a DESC), array_agg(a ORDER BY b DESC) "
                              "FROM t GROUP BY g").fetchall()) == [(1, "y,x", [2, 1]), (2, "z", [3, None])]
    assert con.execute("SELECT array_agg(a ORDER BY b NULLS FIRST, a) FROM t").fetchone()[0] == [3, 1, 2, None]
    assert con.execute("SELECT jsonb_agg(b ORDER BY a) FROM t").fetchone()[0] == ["x", "y", None, "z"]
    with pytest.raises(mzlite.Error) as e:
        con.execute("SELECT array_agg(DISTINCT a ORDER BY b) FROM t")
    assert e.value.sqlstate == "42P10"
