"""Errors through the API: each failure's PEP 249 class, SQLSTATE and position, and the
connection staying usable after it."""
from __future__ import annotations

import pytest

import mzlite
from sql import errors as E

#: each test runs on the embedded engine, through mzlite serve and on PostgreSQL 15
#: (tests/support/remote_targets.py; DIFFERENCES there lists what answers otherwise)
API_TARGETS = ("embedded", "remote", "postgres")


@pytest.fixture
def con(connect, api_target):  # how errors map to the API does not depend on the runtime: one default connection
    c = connect()
    c.execute("CREATE TABLE t (a int NOT NULL, b text)")
    c.execute("INSERT INTO t VALUES (1, 'x')")
    return c


@pytest.mark.parametrize("sqlstate, cls", [
    ("42601", mzlite.ProgrammingError), ("42P01", mzlite.ProgrammingError), ("42703", mzlite.ProgrammingError),
    ("42883", mzlite.ProgrammingError), ("42804", mzlite.ProgrammingError), ("22012", mzlite.DataError),
    ("22003", mzlite.DataError), ("22P02", mzlite.DataError), ("23502", mzlite.IntegrityError),
    ("23505", mzlite.IntegrityError), ("0A000", mzlite.NotSupportedError), ("57014", mzlite.QueryCanceled),
    ("XX000", mzlite.InternalError), ("25P02", mzlite.OperationalError), ("21000", mzlite.ProgrammingError),
])
def test_sqlstate_classes_map_to_pep_249_classes(sqlstate, cls):
    e = E.error_for(sqlstate, "m", position=3)
    assert type(e) is cls
    assert (e.sqlstate, e.pgcode, e.position, str(e)) == (sqlstate, sqlstate, 3, "m")
    assert isinstance(e, mzlite.DatabaseError)


def test_query_canceled_is_an_operational_error():
    assert isinstance(E.error_for("57014", "m"), mzlite.OperationalError)


@pytest.mark.parametrize("sql, cls, sqlstate, position", [
    ("SELEC 1", mzlite.ProgrammingError, "42601", 1),
    ("SELECT * FROM nosuch", mzlite.ProgrammingError, "42P01", 15),
    ("SELECT nosuch FROM t", mzlite.ProgrammingError, "42703", 8),
    ("SELECT 1 / 0", mzlite.DataError, "22012", None),
    ("SELECT 2147483647::int4 + 1", mzlite.DataError, "22003", None),
    ("SELECT 'abc'::int", mzlite.DataError, "22P02", None),
    ("INSERT INTO t VALUES (NULL, 'y')", mzlite.IntegrityError, "23502", None),
    ("SELECT nosuch_function(1)", mzlite.ProgrammingError, "42883", 8),
    ("SELECT (SELECT a FROM t UNION ALL SELECT a FROM t)", mzlite.Error, "21000", None),
])
def test_statement_errors(con, sql, cls, sqlstate, position):
    with pytest.raises(cls) as e:
        con.execute(sql)
    assert e.value.sqlstate == sqlstate
    if position is not None:
        assert e.value.position == position
    assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)


def test_position_counts_from_the_start_of_a_script(con):
    """In a script, the position is into the whole text, not the failing statement."""
    sql = "SELECT 1; SELECT nosuch FROM t"
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute(sql)
    assert sql[e.value.position - 1:].startswith("nosuch")


def test_error_inside_a_transaction_aborts_it_until_it_ends(con):
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (2, 'y')")
    with pytest.raises(mzlite.DataError):
        con.execute("INSERT INTO t VALUES (1 / 0, 'z')")
    with pytest.raises(mzlite.OperationalError) as e:
        con.execute("INSERT INTO t VALUES (3, 'w')")
    assert e.value.sqlstate == "25P02"
    con.rollback()
    assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)


@pytest.mark.parametrize("sql", ["UPDATE t SET b = 'z'", "DELETE FROM t"])
def test_update_and_delete_are_refused_inside_a_transaction(con, sql):
    """Materialize's write transactions are insert-only.  Sabotage: without the refusal, two
    connections' transactions updating the same row both retracted it at COMMIT, and every
    later read of the table failed with "saw retractions for row that does not exist"."""
    con.execute("BEGIN")
    with pytest.raises(mzlite.OperationalError) as e:
        con.execute(sql)
    assert e.value.sqlstate == "25001"
    assert "transaction block" in str(e.value)
    con.rollback()
    assert con.execute(sql).rowcount == 1


def test_concurrent_transactions_cannot_corrupt_a_table(con):
    other = con.connect()
    con.execute("BEGIN")
    other.execute("BEGIN")
    for c in (con, other):
        with pytest.raises(mzlite.OperationalError):
            c.execute("UPDATE t SET a = a + 1 WHERE a = 1")
        c.execute("COMMIT")
    assert con.execute("SELECT a, b FROM t").fetchall() == [(1, "x")]
    other.close()


def test_errors_are_never_internal_for_bad_input(con):
    for sql, params in [("SELECT ?", (object(),)), ("SELECT $3", (1,)), ("", None), ("CREATE TABLE t (a int)", None),
                        ("INSERT INTO t VALUES ('x', 'y')", None)]:
        try:
            con.execute(sql, params)
        except mzlite.InternalError as e:  # pragma: no cover - the failure this test looks for
            pytest.fail(f"{sql!r}: internal error {e}")
        except mzlite.Error:
            pass


def test_psycopg_and_sqlite_spellings(con):
    with pytest.raises(mzlite.Error) as e:
        con.execute("SELECT 1 / 0")
    assert e.value.pgcode == "22012"
    assert e.value.args == ("division by zero",)


def test_non_string_sql_is_a_programming_error(con):
    with pytest.raises(mzlite.ProgrammingError):
        con.execute(42)
