"""The one INSERT path (``mzlite.bulk``): every INSERT goes through a plan whose VALUES rows
are compiled once and evaluated for one parameter set or many, and writes (or raises) what
planning each parameter set with its values bound as literals would.

Sabotage runs (each made once, saw red, restored):
- ``mzlite.bulk.prepared`` building a new ``PreparedInsert`` on every call instead of keeping
  it in ``db.plans`` -> ``test_every_insert_takes_the_compiled_path_planned_once`` (planned
  again per execution);
- ``PreparedInsert.null_transparent`` holding every parameter position (a NULL always sharing
  the plan of its column's other type) -> ``test_a_null_shares_a_plan_only_where_its_type_cannot_matter``
  (``pg_typeof(NULL)`` said integer) and the random comparison;
- ``"mz_timestamp"`` added to ``planner.bind_dml.PARSED_AT_EVALUATION`` ->
  ``test_text_parameters_parse_as_binding_folds_them`` ('1_000' parses at evaluation only);
- ``PreparedInsert.evaluate`` reporting no failed sets (the rows that evaluated kept, the
  failing ones dropped) -> ``test_compiled_rows_equal_the_literal_plans`` (rows went missing
  instead of the error being raised).
"""
from __future__ import annotations

import datetime
from decimal import Decimal
import random

import pytest

from expr.functions import FUNCTIONS
import mzlite
from mzlite import bulk
from planner import plan_statement
from planner.bind_dml import PARSED_AT_EVALUATION
from repr.errors import EvalError
from sql import errors, types as T
from sql.parse import parse_statements

TABLE = ("CREATE TABLE t (id int NOT NULL, a int, b int8, n numeric(6,2), f float8, s text, c char(3), "
         "ts timestamp, bo bool)")


def _con(flag=True):
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
    con.execute(TABLE)
    return con


def _outcome(fn):
    """``("ok", sorted rows)`` or ``("error", sqlstate, message)``."""
    try:
        return "ok", sorted(fn(), key=repr)
    except (errors.Error, EvalError) as e:
        return "error", e.sqlstate, getattr(e, "message", str(e))


def _literal_rows(con, sql, param_sets):
    """The general path: every set planned with its values as literals, then each evaluated
    and checked in order."""
    db = con.database
    stmt = parse_statements(sql)[0]
    plans = [plan_statement(stmt, db.catalog, ps) for ps in param_sets]
    rows = []
    for plan in plans:
        out = db.writer.evaluate(con.session, plan.expr)
        db.writer.check_not_null(plan, out)
        rows += out
    return rows


def _table(con):
    return con.execute("SELECT * FROM t").fetchall()


def test_text_parameters_parse_as_binding_folds_them():
    """A text parameter feeding an input function parses at evaluation, so that function
    must be the literal parser binding folds an unknown literal with, value for value and
    error for error."""
    samples = ["1", " 1 ", "-5", "+7", "1.5", "1e3", "abc", "", "  ", "2147483648", "9223372036854775808",
               "0x10", "1_000", "NaN", "inf", "-Infinity", "1.250", "000.10", "1e-400", "1e400", "true", "t",
               "yes", "off", "of", "o", "2024-01-02", "2024-01-02 03:04:05", "2024-01-02T03:04:05.123456789",
               "2024-13-01", "epoch", "infinity", "03:04:05", "24:00:00", "1 day", "1 day 02:03", "P1D",
               "2024-01-02 03:04:05+02", "12345678901234567890.123456789", "\u0661\u0662", "abcd", "ab "]
    for t in PARSED_AT_EVALUATION:
        runtime = FUNCTIONS[f"cast_text_to_{t}"].fn
        for text in samples:
            try:
                folded = ("ok", repr(T.parse_literal(text, t)))
            except errors.Error as e:
                folded = ("error", e.sqlstate, e.message)
            try:
                evaluated = ("ok", repr(runtime(text)))
            except EvalError as e:
                evaluated = ("error", e.sqlstate, e.message)
            assert folded == evaluated, (t, text)


def test_every_insert_takes_the_compiled_path_planned_once(monkeypatch):
    con = _con()
    calls = {"evaluate": 0, "plan_insert": 0, "plan_statement": 0}
    for name, target in (("evaluate", bulk.PreparedInsert), ("plan_insert", bulk), ("plan_statement", bulk)):
        original = getattr(target, name)

        def counted(*a, _name=name, _original=original, **k):
            calls[_name] += 1
            return _original(*a, **k)
        monkeypatch.setattr(target, name, counted)
    con.execute("INSERT INTO t (id, a) VALUES (1, 2), (3, 4)")
    assert calls == {"evaluate": 1, "plan_insert": 1, "plan_statement": 0}
    for i in range(3):
        con.execute("INSERT INTO t (id, a) VALUES (?, ? + 1)", (10 + i, i))
    assert calls == {"evaluate": 4, "plan_insert": 2, "plan_statement": 0}
    con.executemany("INSERT INTO t (id, a) VALUES (?, ? + 1)", [(100 + i, i) for i in range(1000)])
    assert calls == {"evaluate": 5, "plan_insert": 2, "plan_statement": 0}
    con.executemany("INSERT INTO t (id, s) VALUES (?, ?)", [(i, None if i % 2 else "x") for i in range(50)])
    assert calls["plan_insert"] == 3 and calls["plan_statement"] == 0
    assert con.execute("SELECT count(*), sum(a) FROM t").fetchall() == [(1055, 2 + 4 + 1 + 2 + 3 + 500500)]
    # a statement with a query as its source is planned with its values, once per set
    con.executemany("INSERT INTO t (id) SELECT ? + 0", [(1,), (2,)])
    assert calls["plan_statement"] == 2


def test_a_null_shares_a_plan_only_where_its_type_cannot_matter():
    """A NULL binds as unknown.  Where the parameter is a whole VALUES item, NULL is NULL
    whatever its type, so it shares the plan of the column's other values (one plan for the
    sets); elsewhere its type may matter (``pg_typeof``) and it is planned as unknown."""
    con = _con()
    sets = [(1, 5), (2, None), (3, 7)]
    con.executemany("INSERT INTO t (id, s) VALUES (?, pg_typeof(?)::text)", sets)
    assert sorted(_table(con)) == sorted(_literal_rows(con, "INSERT INTO t (id, s) VALUES (?, pg_typeof(?)::text)",
                                                       sets))
    assert sorted(r[5] for r in _table(con)) == ["integer", "integer", "unknown"]
    prep = bulk.prepared(con.database, parse_statements("INSERT INTO t (id, a) VALUES (?, ?)")[0], ("int4", "int4"))
    assert prep.null_transparent == {0, 1}
    prep = bulk.prepared(con.database, parse_statements("INSERT INTO t (id, a) VALUES (?, ? + 1)")[0],
                         ("int4", "int4"))
    assert prep.null_transparent == {0}


_TEMPLATES = [
    ("INSERT INTO t (id, a) VALUES (?, ?)", "ii"),
    ("INSERT INTO t (id, a, b) VALUES (?, ? + 1, ? * 2)", "iII"),
    ("INSERT INTO t (id, s, c) VALUES (?, ? || 'x', ?)", "iss"),
    ("INSERT INTO t (id, n, f) VALUES (?, ?, ?)", "inf"),
    ("INSERT INTO t (id, ts, bo) VALUES (?, ?, ?)", "itb"),
    ("INSERT INTO t (id, s) VALUES (?, pg_typeof(?)::text)", "ix"),
    ("INSERT INTO t (id, a) VALUES (?, coalesce(?, 7)), (? + 100, ?)", "iiii"),
    ("INSERT INTO t (id, a, s) VALUES ($1, $2, $2::text)", "ii"),
    ("INSERT INTO t (id, a) VALUES (?, ?) RETURNING id", "ii"),
]


def _value(rnd, kind):
    if rnd.random() < 0.15:
        return None
    if kind == "i":
        return rnd.choice([rnd.randrange(-50, 50), 2147483647, -2147483648, 2 ** 31, 2 ** 40, "12", "x1"])
    if kind == "I":
        return rnd.choice([rnd.randrange(100), 2 ** 40, 2 ** 62, "7"])
    if kind == "s":
        return rnd.choice(["a", "ab", "abcd", "", 5, "é"])
    if kind == "n":
        return rnd.choice([Decimal("1.005"), Decimal("9999.99"), Decimal("10000"), 3, "2.5", "bad", 1.25])
    if kind == "f":
        return rnd.choice([1.5, 2, "3.25", "1e400", Decimal("0.1")])
    if kind == "t":
        return rnd.choice(["2024-01-02 03:04:05", "2024-13-01", datetime.datetime(2024, 5, 6, 7, 8),
                           datetime.datetime(2024, 5, 6, tzinfo=datetime.timezone.utc), "epoch"])
    if kind == "b":
        return rnd.choice([True, False, "yes", "off", "maybe"])
    return rnd.choice([1, "x", 2.5, None, True])


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_compiled_rows_equal_the_literal_plans(flag, seed):
    """Random parameter sets of mixed types, some failing (overflow, bad text, NOT NULL,
    modifiers): ``executemany`` writes the rows, or raises the error, of the general path;
    one ``execute`` per set does too, error positions included."""
    rnd = random.Random(seed)
    for sql, kinds in _TEMPLATES:
        for _ in range(4):
            sets = [tuple(_value(rnd, k) for k in kinds) for _i in range(rnd.choice([1, 3, 40]))]
            if rnd.random() < 0.5:  # mostly good: distinct small ids
                sets = [(i,) + ps[1:] for i, ps in enumerate(sets)]
            con = _con(flag)
            want = _outcome(lambda: _literal_rows(con, sql, sets))
            assert _outcome(lambda: con.executemany(sql, sets) and _table(con)) == want, (sql, sets)
            con.close()
            con = _con(flag)
            expected = []
            for ps in sets:
                try:
                    rows = _literal_rows(con, sql, [ps])
                    want_one = ("ok",)
                except errors.Error as e:
                    want_one = ("error", e.sqlstate, e.message, e.position)
                except EvalError as e:
                    want_one = ("error", e.sqlstate, e.message, None)
                try:
                    con.execute(sql, ps)
                    got_one = ("ok",)
                except mzlite.Error as e:
                    got_one = ("error", e.sqlstate, e.message, e.position)
                assert got_one == want_one, (sql, ps)
                if want_one == ("ok",):
                    expected += rows
            assert sorted(_table(con), key=repr) == sorted(expected, key=repr), sql
            con.close()


def test_returning_reads_the_row_and_the_parameters():
    con = _con()
    cur = con.execute("INSERT INTO t (id, a) VALUES (?, ?), (? + 1, ?) RETURNING id, a + ?, s", (1, 2, 3, 4, 10))
    assert cur.fetchall() == [(1, 12, None), (4, 14, None)]
    assert [d[0] for d in cur.description] == ["id", "?column?", "s"]
    assert con.execute("INSERT INTO t (id) VALUES (7) RETURNING id * 2").fetchall() == [(14,)]
    con.close()
