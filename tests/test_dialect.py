"""SQLite and DuckDB SQL run unchanged with ``sql_dialect`` (``mzlite.dialect``).

Each query below runs on the same data in mzlite (with the session's ``sql_dialect`` set)
and in the real engine (``sqlite3`` / ``duckdb``), and the answers must match.
Sabotage: with ``Database._parse`` ignoring the session's dialect, every ``ifnull`` /
``group_concat`` / ``EXCLUDE`` / ``FROM t SELECT`` row below fails (42883 / 42601).
"""
from __future__ import annotations

import sqlite3
from decimal import Decimal

import pytest

import mzlite

duckdb = pytest.importorskip("duckdb")

SCHEMA = [
    "CREATE TABLE t (a INTEGER, b TEXT, x TEXT)",
    "CREATE TABLE u (a INTEGER, c TEXT)",
]
DATA = [
    "INSERT INTO t VALUES (1, 'ab', '3'), (2, 'cd', '4'), (NULL, 'ef', '5'), (3, 'abc', '10')",
    "INSERT INTO u VALUES (1, 'one'), (3, 'three'), (4, 'four')",
]

SQLITE_QUERIES = [
    "SELECT ifnull(a, 0), a || b, substr(b, 1, 2), CAST(x AS INTEGER) FROM t ORDER BY b LIMIT 2 OFFSET 1",
    "SELECT group_concat(b) FROM t WHERE a = 2",
    "SELECT a, group_concat(b, ';') FROM t WHERE a IS NOT NULL GROUP BY a",
    "SELECT iif(a > 1, 'big', 'small') FROM t WHERE a IS NOT NULL",
    "SELECT max(a, 2), min(a, 2) FROM t WHERE a IS NOT NULL",
    "SELECT instr(b, 'b') FROM t",
    "SELECT a / 2, a % 2 FROM t WHERE a IS NOT NULL",
    "SELECT count(*), count(a), sum(a), min(b), max(b) FROM t",
    "SELECT upper(b), lower(b), length(b), replace(b, 'a', 'z'), trim('  x  ') FROM t",
    "SELECT b FROM t WHERE b LIKE 'a%'",
    "SELECT coalesce(a, -1) FROM t ORDER BY 1 DESC",
    "SELECT CASE WHEN a IS NULL THEN 'none' ELSE b END FROM t",
    "SELECT t.a, u.c FROM t JOIN u ON t.a = u.a",
    "SELECT t.b, u.c FROM t LEFT JOIN u ON t.a = u.a",
    "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) >= 1",
    "SELECT b FROM t WHERE a IN (SELECT a FROM u)",
    "SELECT DISTINCT a > 1 FROM t WHERE a IS NOT NULL",
    "SELECT nullif(a, 1), abs(-a) FROM t",
    "SELECT \"b\" FROM t WHERE a BETWEEN 1 AND 2 ORDER BY b LIMIT 1",
    "SELECT a FROM t UNION SELECT a FROM u",
    "SELECT a FROM t EXCEPT SELECT a FROM u",
]

DUCKDB_QUERIES = [
    "SELECT * EXCLUDE (x) FROM t",
    "SELECT t.* EXCLUDE (a, x) FROM t",
    "FROM t SELECT a",
    "SELECT a::INTEGER + x::INTEGER FROM t",
    "SELECT count_if(a > 1) FROM t",
    "SELECT ifnull(a, 0) FROM t",
    "SELECT a // 2, a / 2 FROM t WHERE a IS NOT NULL",
    "SELECT concat(b, '-', x) FROM t",
    "SELECT a, count(*) FROM t GROUP BY ALL",
    "SELECT b FROM t ORDER BY ALL",
    "SELECT string_agg(b, ',') FROM t WHERE a = 1",
    "SELECT upper(b), length(b), starts_with(b, 'a') FROM t",
    "SELECT t.a, u.c FROM t JOIN u USING (a)",
    "SELECT greatest(a, 2), least(a, 2) FROM t WHERE a IS NOT NULL",
    # these lean on arrays, window functions and dates (other parts of the engine)
    "SELECT list_value(1, 2), [1, 2, 3]",
    "SELECT a, b FROM t QUALIFY row_number() OVER (ORDER BY a DESC NULLS LAST) <= 2",
    "SELECT strftime(DATE '2020-01-02', '%Y-%m')",
    "SELECT b FROM t WHERE b ILIKE 'A%'",
]


def _norm(rows, ordered: bool):
    def v(x):
        if isinstance(x, Decimal):
            x = float(x)
        if isinstance(x, float) and x == int(x):
            x = int(x)
        if isinstance(x, bool):
            x = int(x)
        return x
    out = [tuple(v(x) for x in r) for r in rows]
    return out if ordered else sorted(out, key=repr)


def _mz(dialect, interactive):
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": interactive},
                         session_parameters={"sql_dialect": dialect})
    for s in SCHEMA + DATA:
        con.execute(s)
    return con


@pytest.fixture
def sqlite_con():
    con = sqlite3.connect(":memory:")
    for s in SCHEMA + DATA:
        con.execute(s)
    return con


@pytest.fixture
def duck_con():
    con = duckdb.connect()
    for s in SCHEMA + DATA:
        con.execute(s)
    return con


def test_sqlite_queries_match_sqlite3(sqlite_con, interactive):
    con = _mz("sqlite", interactive)
    for q in SQLITE_QUERIES:
        ordered = "ORDER BY" in q
        want = _norm(sqlite_con.execute(q).fetchall(), ordered)
        got = _norm(con.execute(q).fetchall(), ordered)
        assert got == want, q


def test_duckdb_queries_match_duckdb(duck_con, interactive):
    con = _mz("duckdb", interactive)
    for q in DUCKDB_QUERIES:
        ordered = "ORDER BY" in q
        want = _norm(duck_con.execute(q).fetchall(), ordered)
        got = _norm(con.execute(q).fetchall(), ordered)
        assert got == want, q


def test_dialect_in_maintained_views(sqlite_con, interactive):
    """A view and a materialized view defined in SQLite's SQL stay up to date."""
    con = _mz("sqlite", interactive)
    q = "SELECT ifnull(a, 0) AS a, group_concat(b) AS g FROM t WHERE a IS NULL OR a < 3 GROUP BY ifnull(a, 0)"
    con.execute(f"CREATE VIEW v AS {q}")
    con.execute("CREATE DEFAULT INDEX ON v")
    con.execute(f"CREATE MATERIALIZED VIEW mv AS {q}")
    for s in ("INSERT INTO t VALUES (2, 'zz', '1')", "DELETE FROM t WHERE b = 'ab'"):
        con.execute(s)
        sqlite_con.execute(s)
    # group_concat's order is unspecified: compare the sets of parts
    norm = lambda rows: sorted((a, tuple(sorted(g.split(",")))) for a, g in rows)  # noqa: E731
    want = norm(sqlite_con.execute(q).fetchall())
    assert norm(con.execute("SELECT * FROM v").fetchall()) == want
    assert norm(con.execute("SELECT * FROM mv").fetchall()) == want


def test_writes_in_dialect(sqlite_con):
    con = _mz("sqlite", "true")
    for s in ("UPDATE t SET b = ifnull(b, '') || '!' WHERE a = 1", "DELETE FROM t WHERE a IS NULL",
              "INSERT INTO t (a, b) SELECT a + 10, c FROM u WHERE a > 1"):
        con.execute(s)
        sqlite_con.execute(s)
    q = "SELECT a, b, x FROM t"
    assert _norm(con.execute(q).fetchall(), False) == _norm(sqlite_con.execute(q).fetchall(), False)


def test_materialize_statements_pass_through():
    """SHOW, EXPLAIN, SUBSCRIBE (DECLARE/FETCH), AS OF, CREATE DEFAULT INDEX and SET work in
    every dialect.  Sabotage: without the passthrough list, SHOW TABLES becomes '' in sqlglot
    and SUBSCRIBE becomes 'SUBSCRIBE AS t'."""
    for dialect in ("sqlite", "duckdb"):
        con = _mz(dialect, "true")
        assert ("t", "") in con.execute("SHOW TABLES").fetchall()
        assert con.execute("EXPLAIN SELECT a FROM t").fetchall()
        con.execute("CREATE DEFAULT INDEX ON u")
        con.execute("CREATE MATERIALIZED VIEW m AS SELECT ifnull(a, 0) AS a FROM t")
        assert sorted(con.execute("SELECT a FROM m").fetchall()) == [(0,), (1,), (2,), (3,)]
        assert con.execute("SELECT count(*) FROM u AS OF AT LEAST 0").fetchall() == [(3,)]
        con.execute("BEGIN")
        con.execute("DECLARE c CURSOR FOR SUBSCRIBE u")
        rows = con.execute("FETCH 3 c").fetchall()
        assert len(rows) >= 1
        con.execute("COMMIT")
        con.execute("SET sql_dialect = postgres")
        assert con.execute("SHOW sql_dialect").fetchall() == [("postgres",)]


def test_sql_dialect_values():
    con = mzlite.connect()
    assert con.execute("SHOW sql_dialect").fetchall() == [("postgres",)]
    con.execute("SET sql_dialect = 'DuckDB'")
    assert con.execute("SHOW sql_dialect").fetchall() == [("duckdb",)]
    with pytest.raises(mzlite.DataError) as ei:
        con.execute("SET sql_dialect = mysql")
    assert ei.value.sqlstate == "22023"
    assert "sqlite" in ei.value.hint and "duckdb" in ei.value.hint
    con.execute("RESET sql_dialect")
    assert con.execute("SHOW sql_dialect").fetchall() == [("postgres",)]
    with pytest.raises(mzlite.DataError):
        mzlite.connect(session_parameters={"sql_dialect": "oracle"})


def test_errors_name_the_dialect_and_positions_are_never_wrong():
    """Sabotage: without ``Statement.position`` being replaced for changed text, the error
    for ``ifnull(nosuch, 0)`` points at column 17 of the translated ``COALESCE`` text."""
    con = _mz("sqlite", "true")
    with pytest.raises(mzlite.ProgrammingError) as ei:
        con.execute("SELECT (")
    assert ei.value.sqlstate == "42601" and "sqlite" in str(ei.value)
    with pytest.raises(mzlite.NotSupportedError) as ei:
        con.execute("INSERT OR REPLACE INTO t VALUES (1, 'a', 'b')")
    assert ei.value.sqlstate == "0A000"
    with pytest.raises(mzlite.NotSupportedError):
        con.execute("INSERT OR IGNORE INTO t VALUES (1, 'a', 'b')")
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(4,)]
    # unchanged text: the position is the user's
    with pytest.raises(mzlite.ProgrammingError) as ei:
        con.execute("SELECT nosuch FROM t")
    assert ei.value.sqlstate == "42703" and ei.value.position == 8
    # changed text: no position rather than a wrong one
    with pytest.raises(mzlite.ProgrammingError) as ei:
        con.execute("SELECT ifnull(nosuch, 0) FROM t")
    assert ei.value.sqlstate == "42703" and ei.value.position is None
