"""Every statement does what it says or refuses clearly: multi-statement strings are one
implicit transaction, clauses mzlite cannot honour are refused, and shapes that used to
crash answer.  SQL-level cases checked against PostgreSQL 15 live in
``slt/test/statement_honesty.slt``."""
import pytest

import mzlite


def _table(con):
    con.execute("CREATE TABLE t (a int, b text)")
    con.execute("INSERT INTO t VALUES (1, 'one')")


def _rows(con):
    return sorted(con.execute("SELECT * FROM t").fetchall())


@pytest.mark.parametrize("sql", [
    "INSERT INTO t VALUES (10, 'x'); SELECT 1 / 0",
    "DELETE FROM t; SELECT 1 / 0",
    "UPDATE t SET a = a + 100; SELECT nope FROM t",
    "INSERT INTO t VALUES (2, 'two'); UPDATE t SET a = a * 10; SELECT * FROM t; SELECT 1 / 0",
])
def test_multi_statement_string_is_atomic(con, sql):
    """A failing statement undoes the writes of the string's earlier statements, as
    PostgreSQL's implicit transaction does.  Sabotage seen red: not calling
    ``Writer.rollback_implicit`` in ``Database._execute_sql`` (the insert was kept)."""
    _table(con)
    with pytest.raises(mzlite.Error):
        con.execute(sql)
    assert _rows(con) == [(1, "one")]


def test_multi_statement_reads_its_own_writes_and_commits(con):
    _table(con)
    cur = con.execute("INSERT INTO t VALUES (2, 'two'); INSERT INTO t VALUES (3, 'three'); SELECT count(*) FROM t")
    assert cur.fetchall() == [(3,)]
    assert len(_rows(con)) == 3


def test_transaction_statement_ends_the_implicit_transaction(con):
    """What a COMMIT inside the string committed stays, as in PostgreSQL."""
    _table(con)
    with pytest.raises(mzlite.DataError):
        con.execute("INSERT INTO t VALUES (2, 'two'); BEGIN; INSERT INTO t VALUES (3, 'x'); COMMIT; "
                    "INSERT INTO t VALUES (4, 'y'); SELECT 1 / 0")
    assert _rows(con) == [(1, "one"), (2, "two"), (3, "x")]


def test_executescript_keeps_sqlite3_semantics(con):
    """``executescript`` is sqlite3's: statements before a failing one stay applied."""
    _table(con)
    with pytest.raises(mzlite.DataError):
        con.executescript("INSERT INTO t VALUES (2, 'two'); SELECT 1 / 0")
    assert _rows(con) == [(1, "one"), (2, "two")]
