"""Generic SELECT plans (``planner.generic``, ``mzlite.generic_plans``): a parameterised
SELECT is planned once per text and parameter types, and later executions substitute their
values; answers never change.

Sabotages seen red: removing the generic path from ``Database.plan``
(``test_a_prepared_point_read_is_planned_once``: 40 plans instead of 1); not priming the
reader with the optimized generic plan (``..._is_optimized_once``: 20 optimizations); skipping the
comparison with the value-bound plan (``test_a_generic_plan_that_differs_is_never_used``:
the wrong plan answered).
"""
from __future__ import annotations

import datetime
import random
from decimal import Decimal

import pytest

import mzlite.generic_plans as generic_plans
import planner.generic as generic


@pytest.fixture
def kv(con):
    con.execute("CREATE TABLE kv (k int NOT NULL, b bigint, v text, n numeric, d date, ts timestamp, f bool)")
    con.execute("INSERT INTO kv SELECT g, g * 10, 'v' || g, g / 4.0, DATE '2020-01-01' + g, "
                "TIMESTAMP '2020-01-01' + g * INTERVAL '1 hour', g % 2 = 0 FROM generate_series(1, 50) g")
    con.execute("CREATE INDEX kv_k ON kv (k)")
    return con


def test_a_prepared_point_read_is_planned_once(kv, monkeypatch):
    calls = []
    real = generic_plans.plan_statement
    monkeypatch.setattr(generic_plans, "plan_statement", lambda *a: calls.append(a) or real(*a))
    for k in range(1, 41):
        assert kv.execute("SELECT v FROM kv WHERE k = ?", (k,)).fetchall() == [(f"v{k}",)]
    assert len(calls) == 1  # the first execution, to compare the generic plan with


def test_a_prepared_point_read_is_optimized_once(kv, monkeypatch):
    import mzlite.reads as reads
    calls = []
    real = reads.optimize
    monkeypatch.setattr(reads, "optimize", lambda e, **kw: calls.append(e) or real(e, **kw))
    for k in range(1, 21):
        assert kv.execute("SELECT v FROM kv WHERE k = ?", (k,)).fetchall() == [(f"v{k}",)]
    assert len(calls) == 1  # the value-bound plan of the first execution


QUERIES = [
    ("SELECT v FROM kv WHERE k = ?", lambda r: (r.randrange(0, 60),)),
    ("SELECT k FROM kv WHERE b = ? ORDER BY k", lambda r: (r.randrange(0, 600),)),
    ("SELECT k FROM kv WHERE k BETWEEN ? AND ? ORDER BY k", lambda r: (r.randrange(0, 30), r.randrange(20, 60))),
    ("SELECT count(*) FROM kv WHERE n > ?", lambda r: (Decimal(r.randrange(0, 60)) / 5,)),
    ("SELECT k FROM kv WHERE d = ?", lambda r: (datetime.date(2020, 1, 1) + datetime.timedelta(days=r.randrange(60)),)),
    ("SELECT k FROM kv WHERE ts < ? ORDER BY k", lambda r: (datetime.datetime(2020, 1, 1, r.randrange(24)),)),
    ("SELECT count(*) FROM kv WHERE f = ? AND k < ?", lambda r: (r.random() < 0.5, r.randrange(60))),
    ("SELECT ? * k FROM kv WHERE k = ?", lambda r: (2 ** 40 + r.randrange(5), r.randrange(60))),
    ("SELECT k FROM kv ORDER BY k LIMIT ?", lambda r: (r.randrange(5),)),
    ("SELECT v FROM kv WHERE k = ? + 1", lambda r: (r.randrange(60),)),
]


def _literal(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (datetime.date, datetime.datetime)):
        return f"{'TIMESTAMP' if isinstance(v, datetime.datetime) else 'DATE'} '{v}'"
    return str(v)


@pytest.mark.parametrize("sql, gen", QUERIES, ids=[q for q, _ in QUERIES])
def test_parameters_answer_as_literals_do(kv, sql, gen):
    rng = random.Random(sql)
    for _ in range(15):
        params = gen(rng)
        text = sql
        for p in params:
            text = text.replace("?", _literal(p), 1)
        assert kv.execute(sql, params).fetchall() == kv.execute(text).fetchall(), (sql, params)


def test_ddl_leaves_no_stale_generic_plan(kv):
    q = "SELECT v FROM kv WHERE k = ?"
    assert kv.execute(q, (3,)).fetchall() == [("v3",)]
    assert kv.execute(q, (4,)).fetchall() == [("v4",)]
    kv.execute("DROP INDEX kv_k")
    kv.execute("ALTER TABLE kv RENAME TO kv_old")
    kv.execute("CREATE TABLE kv (k int, v text)")
    kv.execute("INSERT INTO kv VALUES (3, 'new')")
    assert kv.execute(q, (3,)).fetchall() == [("new",)]
    assert kv.execute(q, (4,)).fetchall() == []


def test_a_generic_plan_that_differs_is_never_used(kv, monkeypatch):
    """A generic plan is used only after it equalled the value-bound plan: a substitution
    that went wrong (here: every value shifted by one) is caught on the first execution."""
    real = generic.bind_generic
    monkeypatch.setattr(generic, "bind_generic", lambda plan, values: real(plan, tuple(v + 1 for v in values)))
    for k in range(1, 11):
        assert kv.execute("SELECT v FROM kv WHERE k = ?", (k,)).fetchall() == [(f"v{k}",)]


def test_takes_time_reads_parameters_as_inspect_does():
    """``compute.peek.takes_time`` (the peek's per-read check, without ``inspect``) agrees
    with ``inspect.signature``.  Sabotage seen red: answering False always."""
    import functools
    import inspect

    from compute.peek import takes_time

    def plain(row):
        time = 1  # a local of that name is not a parameter
        return time

    def timed(row, time=None):
        return row

    def kw_only(row, *, time):
        return row
    for f in (plain, timed, kw_only, functools.partial(timed, ()), lambda row, time: row):
        assert takes_time(f) == ("time" in inspect.signature(f).parameters), f
    assert takes_time(timed) and not takes_time(plain)


def test_a_prepared_point_read_skips_peek_planning(kv, monkeypatch):
    """A verified generic plan that is a key lookup on an index is read through its peek
    template (``mzlite.generic_plans.PeekTemplate``): values put into the lookup, no binding
    and no peek planning per execution.  Sabotages seen red: ``Reader.primed_peek``
    answering None (20 peek plannings instead of 1); binding the generic plan on every
    execution as before the template (18 bindings after the second execution instead of 0)."""
    import mzlite.reads as reads
    calls, binds = [], []
    real = reads.plan_peek
    monkeypatch.setattr(reads, "plan_peek", lambda *a, **kw: calls.append(a) or real(*a, **kw))
    real_bind = generic.bind_generic
    monkeypatch.setattr(generic, "bind_generic", lambda *a: binds.append(a) or real_bind(*a))
    for k in range(1, 21):
        if k == 3:
            binds.clear()  # the first execution verifies the generic plan, the second builds the template
        assert kv.execute("SELECT v FROM kv WHERE k = ?", (k,)).fetchall() == [(f"v{k}",)]
    assert len(calls) == 1  # the value-bound plan of the first execution
    assert binds == []


TEMPLATE_QUERIES = [
    ("SELECT v FROM kv WHERE k = ?", lambda r: (r.randrange(0, 60),)),
    ("SELECT v FROM kv WHERE k IN (?, ?, 7)", lambda r: (r.randrange(0, 9), r.randrange(0, 9))),
    ("SELECT v FROM kv WHERE k = ? OR k = ?", lambda r: (r.randrange(0, 9), r.randrange(0, 9))),
    ("SELECT v, b FROM kv WHERE k = ? AND b = ?", lambda r: (r.randrange(0, 9), 10 * r.randrange(0, 9))),
    ("SELECT k, v FROM kv WHERE b = ? AND v = 'v3'", lambda r: (10 * r.randrange(0, 6),)),
    ("SELECT ? * k FROM kv WHERE k = ?", lambda r: (r.randrange(5), r.randrange(60))),
    ("SELECT v FROM kv WHERE k = ? + 1", lambda r: (r.randrange(60),)),
]


@pytest.mark.parametrize("sql, gen", TEMPLATE_QUERIES, ids=[q for q, _ in TEMPLATE_QUERIES])
def test_prepared_point_reads_answer_as_literals_do(kv, sql, gen):
    """Point reads through peek templates (one key, IN and OR lists with repeated values, a
    two-column index, parameters outside the lookup) answer as the text with literals does,
    also after writes.  Sabotage seen red: not deduplicating the instantiated lookups
    (``k IN (3, 3, 7)`` answered v3 twice)."""
    kv.execute("CREATE INDEX kv_b ON kv (b)")
    kv.execute("CREATE INDEX kv_kb ON kv (k, b)")
    rng = random.Random(sql)
    for i in range(24):
        if i % 8 == 7:
            kv.execute("UPDATE kv SET v = v || 'x' WHERE k % 3 = ?", (i % 3,))
        params = gen(rng)
        text = sql
        for p in params:
            text = text.replace("?", _literal(p), 1)
        assert kv.execute(sql, params).fetchall() == kv.execute(text).fetchall(), (sql, params)
