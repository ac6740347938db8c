"""PREPARE / EXECUTE / DEALLOCATE, embedded and over the wire, and their interplay with the
extended protocol's named statements (one namespace, as in PostgreSQL).

The wire script runs step by step against ``mzlite serve`` and against PostgreSQL 15
(``tests/support/postgres.py``) through psycopg and libpq's own prepare / exec_prepared /
describe_prepared / close_prepared; every step's answer (rows or SQLSTATE) must agree.

Sabotages seen red: the server keeping named Parse statements in its own dict instead of
``Session.prepared`` (``test_sql_and_protocol_statements_share_one_namespace``: EXECUTE of a
Parse-made statement was 26000, and DEALLOCATE ALL left it bindable); ``python_literal``
not passing a ``Literal`` through (every EXECUTE with arguments raised 0A000);
``describe_execute`` returning ``[]`` columns (``test_extended_protocol_execute_is_described``:
Describe of ``EXECUTE e(41)`` had no fields).
"""
from __future__ import annotations

from decimal import Decimal

import pytest

import mzlite

psycopg = pytest.importorskip("psycopg")

from psycopg import generators, waiting  # noqa: E402

from tests.support.postgres import postgres_database  # noqa: E402
from tests.support.wire import dsn, running_server  # noqa: E402


def _state(e) -> str:
    return getattr(e, "sqlstate", None) or type(e).__name__


# ------------------------------------------------------------------ embedded


def test_prepare_execute_deallocate_embedded(con):
    con.execute("CREATE TABLE t (a int, b text)")
    con.execute("INSERT INTO t VALUES (1, 'x'), (2, 'y')")
    assert con.execute("PREPARE q(int) AS SELECT b FROM t WHERE a = $1").statusmessage == "PREPARE"
    cur = con.execute("EXECUTE q(2)")
    assert cur.fetchall() == [("y",)] and cur.description[0][0] == "b"
    assert con.execute("EXECUTE q(1.6)").fetchall() == [("y",)]  # assignment coercion rounds
    assert con.execute("EXECUTE q('1')").fetchall() == [("x",)]
    con.execute("PREPARE i(int, text) AS INSERT INTO t VALUES ($1, $2)")
    assert con.execute("EXECUTE i(3, 'z' || 'z')").statusmessage == "INSERT 0 1"
    con.execute("PREPARE u AS UPDATE t SET b = $1 WHERE a = $2")
    assert con.execute("EXECUTE u('w', 1)").statusmessage == "UPDATE 1"
    assert con.execute("SELECT a, b FROM t ORDER BY a").fetchall() == [(1, "w"), (2, "y"), (3, "zz")]
    con.execute("PREPARE z(numeric(10,2)) AS SELECT $1")  # the type modifier is dropped, as PostgreSQL
    assert con.execute("EXECUTE z(1.234)").fetchall() == [(Decimal("1.234"),)]
    assert con.execute("DEALLOCATE q").statusmessage == "DEALLOCATE"
    assert con.execute("DEALLOCATE PREPARE i").statusmessage == "DEALLOCATE"
    assert con.execute("DEALLOCATE ALL").statusmessage == "DEALLOCATE ALL"
    with pytest.raises(mzlite.Error) as e:
        con.execute("EXECUTE u('v', 2)")
    assert e.value.sqlstate == "26000"


@pytest.mark.parametrize("sql, sqlstate, position", [
    ("EXECUTE p", "42601", None),
    ("EXECUTE p(1, 2)", "42601", None),
    ("EXECUTE p(now())", "42804", 11),
    ("EXECUTE p(a)", "42703", 11),
    ("EXECUTE p((SELECT 1))", "0A000", 11),
    ("EXECUTE p('abc')", "22P02", None),
    ("PREPARE p AS SELECT 1", "42P05", None),
    ("PREPARE e AS SELECT nope", "42703", 21),
    ("DEALLOCATE nope", "26000", None),
    ("EXECUTE nope", "26000", None),
])
def test_prepared_statement_errors(con, sql, sqlstate, position):
    """The SQLSTATEs and positions PostgreSQL 15 gives for the same statements."""
    con.execute("PREPARE p(int) AS SELECT $1 + 1")
    with pytest.raises(mzlite.Error) as e:
        con.execute(sql)
    assert e.value.sqlstate == sqlstate
    if position is not None:
        assert e.value.position == position
    if sqlstate == "42601":
        assert e.value.detail.startswith("Expected 1 parameters but got")
    assert con.execute("EXECUTE p(1)").fetchall() == [(2,)]  # the session goes on


def test_discard(con):
    """DISCARD ALL deallocates every prepared statement and resets the session's variables,
    and is refused in a transaction block (25001), as PostgreSQL 15's; DISCARD PLANS / TEMP /
    SEQUENCES answer their tags (mzlite keeps none of those per session).  Sabotage seen
    red: a DISCARD ALL that left ``Session.prepared`` alone (EXECUTE still ran)."""
    con.execute("SET application_name = 'x'")
    con.execute("PREPARE d AS SELECT 1")
    assert con.execute("DISCARD ALL").statusmessage == "DISCARD ALL"
    assert con.execute("SHOW application_name").fetchone() == ("",)
    with pytest.raises(mzlite.Error) as e:
        con.execute("EXECUTE d")
    assert e.value.sqlstate == "26000"
    for what in ("PLANS", "TEMP", "SEQUENCES"):
        assert con.execute(f"DISCARD {what}").statusmessage == f"DISCARD {what}"
    con.execute("BEGIN")
    with pytest.raises(mzlite.Error) as e:
        con.execute("DISCARD ALL")
    assert e.value.sqlstate == "25001"
    con.execute("ROLLBACK")


def test_prepare_is_not_transactional(con):
    con.execute("BEGIN")
    con.execute("PREPARE r AS SELECT 2")
    con.execute("ROLLBACK")
    assert con.execute("EXECUTE r").fetchall() == [(2,)]
    con.execute("BEGIN")
    con.execute("DEALLOCATE r")
    con.execute("ROLLBACK")
    with pytest.raises(mzlite.Error) as e:
        con.execute("EXECUTE r")
    assert e.value.sqlstate == "26000"


def test_prepared_statements_are_per_session(connect):
    a = connect()
    b = a.database.connect()
    a.execute("PREPARE p AS SELECT 1")
    with pytest.raises(mzlite.Error) as e:
        b.execute("EXECUTE p")
    assert e.value.sqlstate == "26000"
    b.execute("PREPARE p AS SELECT 2")  # its own namespace
    assert a.execute("EXECUTE p").fetchall() == [(1,)] and b.execute("EXECUTE p").fetchall() == [(2,)]
    b.close()


# ------------------------------------------------------------------ over the wire, against PostgreSQL


@pytest.fixture(scope="module")
def srv():
    with running_server() as s:
        yield s


@pytest.fixture(scope="module")
def postgres():
    with postgres_database("mzlite_prepared") as (conn, conninfo):
        yield conninfo


def _script(conn) -> list:
    """Each step's answer: ``("ok", rows or status)`` or ``("error", sqlstate)``."""
    pq = conn.pgconn
    out = []

    def sql(text):
        try:
            cur = conn.execute(text)
            out.append(("ok", cur.fetchall() if cur.description else cur.statusmessage))
        except psycopg.Error as e:
            out.append(("error", e.sqlstate))

    def libpq(fn, *args):
        fn(*args)  # libpq's send_* forms: the blocking ones hold the GIL the in-process server needs
        res = waiting.wait(generators.execute(pq), pq.socket)[-1]
        if res.error_message:
            out.append(("error", res.error_field(psycopg.pq.DiagnosticField.SQLSTATE).decode()))
        else:
            out.append(("ok", [tuple(res.get_value(r, c) for c in range(res.nfields)) for r in range(res.ntuples)],
                        res.command_status))

    sql("PREPARE s1 AS SELECT $1::int * 2 AS v")
    libpq(pq.send_query_prepared, b"s1", [b"21"])  # Bind finds what PREPARE made
    libpq(pq.send_prepare, b"s2", b"SELECT $1::text || 'x' AS w")
    sql("EXECUTE s2('a')")  # EXECUTE finds what Parse made
    libpq(pq.send_prepare, b"s1", b"SELECT 1")  # one namespace: 42P05
    sql("PREPARE s2 AS SELECT 1")
    sql("DEALLOCATE s2")
    libpq(pq.send_query_prepared, b"s2", [b"a"])  # DEALLOCATE dropped a Parse-made statement
    libpq(pq.send_close_prepared, b"s1")  # Close drops a PREPARE-made one
    sql("EXECUTE s1(1)")
    libpq(pq.send_prepare, b"", b"SELECT 5")  # the unnamed statement is not in the namespace
    libpq(pq.send_query_prepared, b"", [])
    sql("PREPARE s3 AS SELECT 3")
    libpq(pq.send_prepare, b"s4", b"SELECT 4")
    sql("DEALLOCATE ALL")
    libpq(pq.send_describe_prepared, b"s3")
    libpq(pq.send_describe_prepared, b"s4")
    libpq(pq.send_query_prepared, b"", [])  # a simple query (psycopg's without parameters) ended it
    sql("DEALLOCATE PREPARE s4")
    libpq(pq.send_close_prepared, b"nope")  # Close of a missing name is not an error
    return out


def test_sql_and_protocol_statements_share_one_namespace(srv, postgres):
    with psycopg.connect(dsn(srv), autocommit=True) as mz, psycopg.connect(postgres, autocommit=True) as pg:
        got, want = _script(mz), _script(pg)
    assert got == want
    assert got[1] == ("ok", [(b"42",)], b"SELECT 1") and got[3] == ("ok", [("ax",)])
    assert got[7] == ("error", "26000") and got[4] == ("error", "42P05")


def test_psycopg_prepared_statements_survive_deallocate_all(srv, postgres):
    """psycopg prepares a query it runs often (Parse with a name) and forgets its names when
    it sees DEALLOCATE ALL (or DROP, ROLLBACK): both servers keep answering."""
    for info in (dsn(srv), postgres):
        with psycopg.connect(info, autocommit=True, prepare_threshold=0) as c:
            c.execute("DROP TABLE IF EXISTS pp")
            c.execute("CREATE TABLE pp (a int)")
            c.execute("INSERT INTO pp VALUES (1), (2)")
            q = "SELECT count(*) FROM pp WHERE a >= %s"
            assert c.execute(q, (1,)).fetchone() == (2,)
            assert c.execute(q, (2,)).fetchone() == (1,)
            assert c._prepared._names  # psycopg made a named statement
            c.execute("DEALLOCATE ALL")
            assert not c._prepared._names
            assert c.execute(q, (1,)).fetchone() == (2,)
            assert c.execute(q, (1,)).fetchone() == (2,)


def test_extended_protocol_execute_is_described(srv, postgres):
    """``EXECUTE name(...)`` sent by Parse/Describe/Bind/Execute: its rows are described as
    the prepared statement's; a ``$n`` among its arguments is 42P02 (a utility statement
    takes no parameters), on both servers."""
    for info in (dsn(srv), postgres):
        with psycopg.connect(info, autocommit=True) as c:
            c.execute("PREPARE e(int) AS SELECT $1 + 1 AS n")
            with pytest.raises(psycopg.errors.UndefinedParameter):
                c.execute("EXECUTE e(%s)", (41,))
            pq = c.pgconn
            pq.send_prepare(b"ex", b"EXECUTE e(41)")
            assert not waiting.wait(generators.execute(pq), pq.socket)[-1].error_message
            pq.send_describe_prepared(b"ex")
            d = waiting.wait(generators.execute(pq), pq.socket)[-1]
            assert d.nparams == 0 and d.nfields == 1 and d.ftype(0) == 23 and d.fname(0) == b"n"
            cur = c.execute("EXECUTE e(41)", prepare=True)  # psycopg's own Parse/Bind/Execute
            assert cur.fetchall() == [(42,)] and cur.description[0].name == "n"
