"""PEP 249 conformance: module attributes, the exception hierarchy, type objects and
constructors, connection and cursor methods, fetch semantics and ``arraysize``.

Each mechanism's test names the sabotage that turned it red."""
from __future__ import annotations

import datetime
import threading

import pytest

import mzlite
from mzlite.cursor import Column

#: each test runs on the embedded engine, through mzlite serve and on PostgreSQL 15
#: (tests/support/remote_targets.py; DIFFERENCES there lists what answers otherwise)
API_TARGETS = ("embedded", "remote", "postgres")


@pytest.fixture
def con(connect, api_target):  # the API's conformance does not depend on the runtime: one default connection
    return connect()


@pytest.fixture
def t(con):
    con.execute("CREATE TABLE t (a int NOT NULL, b text)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"r{i}") for i in range(1, 6)])
    return con


# ------------------------------------------------------------------ module attributes

def test_module_globals():
    assert mzlite.apilevel == "2.0"
    assert mzlite.threadsafety in (1, 2, 3)
    assert mzlite.paramstyle == "qmark"
    assert callable(mzlite.connect)


def test_exception_hierarchy_is_pep_249s():
    E = mzlite
    assert issubclass(E.Warning, Exception)
    assert issubclass(E.Error, Exception)
    assert not issubclass(E.Warning, E.Error)
    assert issubclass(E.InterfaceError, E.Error)
    assert issubclass(E.DatabaseError, E.Error)
    assert not issubclass(E.InterfaceError, E.DatabaseError)
    for name in ("DataError", "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
                 "NotSupportedError"):
        assert issubclass(getattr(E, name), E.DatabaseError), name
    assert issubclass(E.QueryCanceled, E.OperationalError)


def test_exceptions_are_connection_attributes(con):
    """PEP 249's optional extension (sqlite3 has it): ``con.Error`` is ``mzlite.Error``, etc."""
    for name in ("Warning", "Error", "InterfaceError", "DatabaseError", "DataError", "OperationalError",
                 "IntegrityError", "InternalError", "ProgrammingError", "NotSupportedError"):
        assert getattr(con, name) is getattr(mzlite, name)


def test_everything_in_all_exists():
    for name in mzlite.__all__:
        assert getattr(mzlite, name) is not None, name


# ------------------------------------------------------------------ type objects and constructors

@pytest.mark.parametrize("sql, group", [
    ("SELECT 1::int2", "NUMBER"), ("SELECT 1::int4", "NUMBER"), ("SELECT 1::int8", "NUMBER"),
    ("SELECT 1.5::numeric", "NUMBER"), ("SELECT 1.5::float8", "NUMBER"), ("SELECT 'x'::text", "STRING"),
    ("SELECT 'x'::varchar(3)", "STRING"),
])
def test_description_type_codes_equal_their_type_object(con, sql, group):
    """Sabotage: ``DBAPITypeObject.__eq__`` returning False for strings made these red."""
    code = con.execute(sql).description[0][1]
    obj = getattr(mzlite, group)
    assert code == obj and obj == code and not (code != obj)
    for other in ("STRING", "BINARY", "NUMBER", "DATETIME", "ROWID"):
        if other != group:
            assert code != getattr(mzlite, other), other


def test_boolean_belongs_to_no_group(con):
    """As in psycopg, PEP 249 has no boolean group: ``boolean`` equals none of the five."""
    code = con.execute("SELECT true").description[0][1]
    assert code == "boolean"
    assert all(code != getattr(mzlite, g) for g in ("STRING", "BINARY", "NUMBER", "DATETIME", "ROWID"))


def test_type_objects_by_name():
    assert mzlite.NUMBER == "double precision" and "bigint" in mzlite.NUMBER
    assert mzlite.DATETIME == "timestamp with time zone" and mzlite.DATETIME == "mz_timestamp"
    assert mzlite.BINARY == "bytea" and mzlite.ROWID == "oid"
    assert mzlite.STRING != mzlite.NUMBER and mzlite.STRING == mzlite.STRING
    assert len({mzlite.STRING, mzlite.BINARY, mzlite.NUMBER, mzlite.DATETIME, mzlite.ROWID}) == 5
    assert mzlite.NUMBER != 1


def test_every_engine_type_has_a_display_name_the_api_classifies():
    """Every non-boolean SQL type the engine knows (``sql.types.TYPES``) falls in one PEP 249 group,
    so a new type added without a group here fails this test."""
    from sql.types import TYPES
    groups = [mzlite.STRING, mzlite.BINARY, mzlite.NUMBER, mzlite.DATETIME]
    for name, (display, _cat, _pref) in TYPES.items():
        if name in ("bool", "unknown"):
            continue
        assert sum(display == g for g in groups) == 1, display


def test_constructors():
    assert mzlite.Date(2024, 2, 29) == datetime.date(2024, 2, 29)
    assert mzlite.Time(12, 30, 1) == datetime.time(12, 30, 1)
    assert mzlite.Timestamp(2024, 2, 29, 12, 30, 1) == datetime.datetime(2024, 2, 29, 12, 30, 1)
    ticks = 1_700_000_000.5
    ts = mzlite.TimestampFromTicks(ticks)
    assert ts == datetime.datetime.fromtimestamp(int(ticks))
    assert mzlite.DateFromTicks(ticks) == ts.date()
    assert mzlite.TimeFromTicks(ticks) == ts.time()
    assert mzlite.Binary(b"\x00\xff") == b"\x00\xff"
    assert mzlite.Binary(bytearray(b"ab")) == b"ab"
    assert mzlite.Binary("é") == "é".encode()


# ------------------------------------------------------------------ connection methods

def test_connection_methods_exist(con):
    for name in ("close", "commit", "rollback", "cursor", "execute", "executemany", "executescript", "interrupt",
                 "cancel", "connect"):
        assert callable(getattr(con, name)), name


def test_commit_and_rollback_without_transaction_are_noops(con):
    con.commit()
    con.rollback()
    assert not con.in_transaction


def test_commit_and_rollback_end_a_transaction(t):
    t.execute("BEGIN")
    assert t.in_transaction
    t.execute("INSERT INTO t VALUES (6, 'r6')")
    t.rollback()
    assert not t.in_transaction
    assert t.execute("SELECT count(*) FROM t").fetchone() == (5,)
    t.execute("BEGIN")
    t.execute("INSERT INTO t VALUES (6, 'r6')")
    t.commit()
    assert t.execute("SELECT count(*) FROM t").fetchone() == (6,)


def test_closed_connection_refuses_everything(t):
    cur = t.execute("SELECT a FROM t")
    t.close()
    t.close()  # idempotent
    assert t.closed and cur.closed
    for call in (t.cursor, lambda: t.execute("SELECT 1"), t.commit, t.rollback,
                 lambda: cur.execute("SELECT 1"), cur.fetchone, cur.fetchall, lambda: cur.fetchmany(2)):
        with pytest.raises(mzlite.InterfaceError):
            call()


# ------------------------------------------------------------------ cursor methods and attributes

def test_cursor_attributes(con):
    cur = con.cursor()
    assert cur.connection is con
    assert cur.description is None
    assert cur.rowcount == -1
    assert cur.lastrowid is None
    assert cur.arraysize == 1
    cur.setinputsizes([None])
    cur.setoutputsize(10)
    cur.setoutputsize(10, 0)


def test_description_is_seven_tuples(t):
    cur = t.execute("SELECT a, b, a + 1 AS c FROM t")
    d = cur.description
    assert [len(col) for col in d] == [7, 7, 7]
    assert [col[0] for col in d] == ["a", "b", "c"]
    assert [col[1] for col in d] == ["integer", "text", "integer"]
    assert isinstance(d[0], Column) and d[0].name == "a" and d[0].type_code == "integer"
    assert tuple(d[0]) == ("a", "integer", None, 4, None, None, None)  # internal_size: PostgreSQL's typlen


def test_description_is_none_for_statements_without_rows(t):
    for sql in ("INSERT INTO t VALUES (9, 'x')", "UPDATE t SET b = 'y' WHERE a = 9", "CREATE TABLE u (x int)",
                "SET application_name = 'x'"):
        assert t.execute(sql).description is None, sql


def test_rowcount(t):
    assert t.execute("SELECT * FROM t").rowcount == 5
    assert t.execute("SELECT * FROM t WHERE a > 3").rowcount == 2
    assert t.execute("INSERT INTO t VALUES (6, 'a'), (7, 'b')").rowcount == 2
    assert t.execute("UPDATE t SET b = 'z' WHERE a >= 6").rowcount == 2
    assert t.execute("DELETE FROM t WHERE a = 7").rowcount == 1
    assert t.execute("DELETE FROM t WHERE a = 700").rowcount == 0
    assert t.execute("CREATE TABLE u (x int)").rowcount == -1
    assert t.executemany("INSERT INTO u VALUES (?)", [(1,), (2,), (3,)]).rowcount == 3
    assert t.executemany("UPDATE u SET x = x + 10 WHERE x = ?", [(1,), (2,), (9,)]).rowcount == 2


def test_statusmessage(t):
    assert t.execute("SELECT * FROM t").statusmessage == "SELECT 5"
    assert t.execute("INSERT INTO t VALUES (6, 'a')").statusmessage == "INSERT 0 1"


def test_fetch_semantics(t):
    cur = t.execute("SELECT a FROM t ORDER BY a")
    assert cur.fetchone() == (1,)
    assert cur.fetchmany() == [(2,)]  # arraysize 1
    assert cur.fetchmany(2) == [(3,), (4,)]
    assert cur.fetchall() == [(5,)]
    assert cur.fetchone() is None
    assert cur.fetchmany(3) == []
    assert cur.fetchall() == []


def test_fetchmany_uses_arraysize(t):
    cur = t.execute("SELECT a FROM t ORDER BY a")
    cur.arraysize = 3
    assert cur.fetchmany() == [(1,), (2,), (3,)]
    assert cur.fetchmany() == [(4,), (5,)]
    assert cur.fetchmany() == []
    with pytest.raises(mzlite.ProgrammingError):
        cur.fetchmany(-1)


def test_rows_are_tuples(t):
    assert all(type(r) is tuple for r in t.execute("SELECT a, b FROM t").fetchall())


def test_iteration(t):
    cur = t.execute("SELECT a FROM t ORDER BY a")
    assert cur.fetchone() == (1,)
    assert [r[0] for r in cur] == [2, 3, 4, 5]
    assert list(cur) == []
    assert next(iter(t.execute("SELECT 7"))) == (7,)


def test_fetch_without_a_result_is_an_error(t):
    cur = t.cursor()
    with pytest.raises(mzlite.ProgrammingError):
        cur.fetchone()
    cur.execute("INSERT INTO t VALUES (8, 'x')")
    for call in (cur.fetchone, cur.fetchall, cur.fetchmany):
        with pytest.raises(mzlite.ProgrammingError):
            call()


def test_a_failed_execute_leaves_no_stale_result(t):
    """Sabotage: not clearing ``_result`` before running let ``fetchall`` return the previous
    statement's rows after an error."""
    cur = t.execute("SELECT a FROM t")
    with pytest.raises(mzlite.ProgrammingError):
        cur.execute("SELECT nope FROM t")
    with pytest.raises(mzlite.ProgrammingError):
        cur.fetchall()
    assert cur.description is None


def test_re_execute_resets_the_position(t):
    cur = t.cursor()
    cur.execute("SELECT a FROM t ORDER BY a")
    cur.fetchall()
    cur.execute("SELECT a FROM t ORDER BY a DESC")
    assert cur.fetchone() == (5,)


def test_closed_cursor_refuses_everything(t):
    cur = t.execute("SELECT a FROM t")
    cur.close()
    cur.close()
    for call in (cur.fetchone, cur.fetchall, lambda: cur.execute("SELECT 1"), lambda: cur.executemany("SELECT 1", [])):
        with pytest.raises(mzlite.InterfaceError):
            call()
    t.execute("SELECT 1")  # the connection is unaffected


def test_cursor_context_manager_closes(t):
    with t.cursor() as cur:
        cur.execute("SELECT 1")
    assert cur.closed


def test_executemany_takes_one_statement(t):
    with pytest.raises(mzlite.ProgrammingError):
        t.executemany("INSERT INTO t VALUES (?, 'a'); INSERT INTO t VALUES (?, 'b')", [(1, 2)])
    with pytest.raises(mzlite.ProgrammingError):
        t.executemany("INSERT INTO t VALUES (?, ?)", "ab")


def test_executemany_with_no_parameter_sets(t):
    assert t.executemany("INSERT INTO t VALUES (?, ?)", []).rowcount == 0
    assert t.execute("SELECT count(*) FROM t").fetchone() == (5,)


def test_executescript(con):
    cur = con.executescript("""
        CREATE TABLE s (x int);
        INSERT INTO s VALUES (1), (2);
        INSERT INTO s VALUES (3);
        SELECT sum(x) FROM s;
    """)
    assert cur.fetchall() == [(6,)]
    with pytest.raises(mzlite.ProgrammingError):
        con.executescript("INSERT INTO s VALUES (4); SELECT nope FROM s; INSERT INTO s VALUES (5)")
    # statements before the failing one stay applied, those after it never ran
    assert con.execute("SELECT sum(x) FROM s").fetchone() == (10,)
    with pytest.raises(mzlite.ProgrammingError):
        con.executescript(b"SELECT 1")


def test_a_cursor_shared_by_threads_hands_out_each_row_once(con):
    """Two threads fetch the last row of one cursor at once.  The row list below holds the first
    thread inside ``fetchone`` (in ``len``) for a while, giving the other thread the chance to
    enter too.  Sabotage: without the cursor's lock both passed the "rows left?" check and the
    second failed with IndexError; with it, one gets the row and the other None."""
    cur = con.execute("SELECT 1")

    class HoldingRows(list):
        def __init__(self, rows):
            super().__init__(rows)
            self.entered = threading.Semaphore(0)
            self.both_inside = threading.Event()

        def __len__(self):
            self.entered.release()
            if self.entered.acquire(blocking=False) and self.entered.acquire(blocking=False):
                self.both_inside.set()
            else:
                self.entered.release()
                self.both_inside.wait(0.2)  # bounded: with the lock, the other thread never comes in
            return list.__len__(self)

    cur._result.rows = HoldingRows(cur._result.rows)
    got, errors = [], []

    def take():
        try:
            got.append(cur.fetchone())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=take) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert errors == []
    assert sorted(got, key=repr) == [(1,), None]
