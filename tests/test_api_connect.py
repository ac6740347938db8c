"""``connect()``: private and named in-memory databases, data directories, the context
manager, sessions on one database, and ``interrupt``.

Waits in these tests are on events the engine reaches (a peek submitted, a lock attempt
failed), never on sleeps; thread joins carry a generous timeout only so that a regression
fails instead of hanging the suite."""
from __future__ import annotations

import pathlib
import threading

import pytest

import mzlite

JOIN = 60  # seconds; a guard against hangs, never a timing assertion


def count(con, table="t") -> int:
    return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


# ------------------------------------------------------------------ which database

def test_connect_makes_a_private_database_each_time():
    a, b, c = mzlite.connect(), mzlite.connect(":memory:"), mzlite.connect(None)
    a.execute("CREATE TABLE t (x int)")
    for other in (b, c):
        with pytest.raises(mzlite.ProgrammingError) as e:
            other.execute("SELECT * FROM t")
        assert e.value.sqlstate == "42P01"
    for con in (a, b, c):
        con.close()


def test_named_memory_databases_are_shared_by_name():
    a = mzlite.connect(":memory:shared_by_name")
    b = mzlite.connect(":memory:shared_by_name")
    other = mzlite.connect(":memory:another_name")
    a.execute("CREATE TABLE t (x int)")
    a.execute("INSERT INTO t VALUES (1)")
    assert b.execute("SELECT x FROM t").fetchall() == [(1,)]
    assert a.database is b.database and a.session is not b.session
    with pytest.raises(mzlite.ProgrammingError):
        other.execute("SELECT * FROM t")
    for con in (a, b, other):
        con.close()


def test_a_named_database_goes_away_with_its_last_connection():
    """Sabotage: keeping closed databases in the registry handed the closed one out again
    (connect raised InterfaceError "the database is closed")."""
    a = mzlite.connect(":memory:goes_away")
    a.execute("CREATE TABLE t (x int)")
    b = mzlite.connect(":memory:goes_away")
    a.close()
    assert count(b) == 0  # still there: b is open
    b.close()
    c = mzlite.connect(":memory:goes_away")
    with pytest.raises(mzlite.ProgrammingError):
        c.execute("SELECT * FROM t")
    c.close()


def test_con_connect_opens_another_session_on_the_same_database():
    a = mzlite.connect()
    a.execute("CREATE TABLE t (x int)")
    b = a.connect()
    b.execute("INSERT INTO t VALUES (1)")
    assert count(a) == 1
    b.execute("SET application_name = 'b'")
    assert a.execute("SHOW application_name").fetchone() == ("",)
    a.close()
    with pytest.raises(mzlite.InterfaceError):
        a.connect()  # a is closed, though its database lives on in b
    assert count(b) == 1
    b.close()
    with pytest.raises(mzlite.InterfaceError):
        b.connect()


def test_the_database_closes_with_its_last_connection():
    a = mzlite.connect()
    db = a.database
    a.close()
    assert db._closed
    with pytest.raises(mzlite.InterfaceError):
        db.connect()


@pytest.mark.parametrize("path", ["data", pathlib.Path("somewhere"), "file:x.db"])
def test_any_other_string_is_a_data_directory(path, tmp_path, monkeypatch):
    """A path opens (creating it) a durable database (tests/test_durable.py has the rest)."""
    monkeypatch.chdir(tmp_path)
    con = mzlite.connect(path)
    con.execute("CREATE TABLE t (a int)")
    con.close()
    assert (tmp_path / path / "mzlite.sqlite").exists()
    con = mzlite.connect(path)
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]
    con.close()


def test_database_must_be_a_string():
    with pytest.raises(mzlite.ProgrammingError):
        mzlite.connect(42)


def test_system_parameters_apply_to_a_new_named_database_and_must_agree_later():
    flag = "enable_compute_interactive_runtime"
    a = mzlite.connect(":memory:params", system_parameters={flag: False})
    assert a.execute(f"SHOW {flag}").fetchone() == ("off",)
    b = mzlite.connect(":memory:params", system_parameters={flag: "off"})  # agrees: fine
    with pytest.raises(mzlite.ProgrammingError):
        mzlite.connect(":memory:params", system_parameters={flag: True})
    with pytest.raises(mzlite.ProgrammingError):
        mzlite.connect(":memory:params", clock=lambda: 5)
    c = mzlite.connect(":memory:params")  # no parameters: joins as it is
    assert c.execute(f"SHOW {flag}").fetchone() == ("off",)
    for con in (a, b, c):
        con.close()


def test_system_parameters_of_a_private_database():
    con = mzlite.connect(system_parameters={"compaction_window_ms": 5000})
    assert con.execute("SHOW compaction_window_ms").fetchone() == ("5000",)
    con.close()
    with pytest.raises(mzlite.ProgrammingError):
        mzlite.connect(system_parameters={"no_such_parameter": 1})


def test_concurrent_connect_and_close_of_one_name_never_hands_out_a_closed_database():
    """A smoke test under real concurrency; the race it guards against (a connect between the
    registry's check and the last close) is forced deterministically in the next test."""
    errors: list = []
    barrier = threading.Barrier(6)

    def churn():
        barrier.wait()
        try:
            for _ in range(12):
                con = mzlite.connect(":memory:churn")
                con.execute("SELECT 1").fetchall()
                con.close()
        except Exception as e:  # noqa: BLE001 - collected and reported below
            errors.append(e)

    threads = [threading.Thread(target=churn) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(JOIN)
    assert not any(th.is_alive() for th in threads)
    assert errors == []


def test_a_connect_racing_the_last_close_gets_a_fresh_database():
    """The last connection closes just after the registry found the database open.  Sabotage:
    without the retry in ``open_database`` (``except InterfaceError``) connect raised
    InterfaceError "the database is closed"; without the closed check in ``Database.connect``
    it returned a connection to the shut-down database."""
    from mzlite.coordinator import Database
    a = mzlite.connect(":memory:race")
    a.execute("CREATE TABLE t (x int)")
    db = a.database

    def connect_after_the_last_close():
        a.close()
        return Database.connect(db)

    db.connect = connect_after_the_last_close
    b = mzlite.connect(":memory:race")
    assert b.database is not db and not b.database._closed
    with pytest.raises(mzlite.ProgrammingError):
        b.execute("SELECT * FROM t")  # a fresh database
    b.close()


# ------------------------------------------------------------------ the context manager

def test_with_commits_on_success_and_closes():
    watcher = mzlite.connect(":memory:with_ok")
    watcher.execute("CREATE TABLE t (x int)")
    with mzlite.connect(":memory:with_ok") as con:
        con.execute("BEGIN")
        con.execute("INSERT INTO t VALUES (1)")
        assert count(watcher) == 0
    assert con.closed
    assert count(watcher) == 1
    watcher.close()


def test_with_rolls_back_on_error_and_closes():
    watcher = mzlite.connect(":memory:with_err")
    watcher.execute("CREATE TABLE t (x int)")
    with pytest.raises(ValueError):
        with mzlite.connect(":memory:with_err") as con:
            con.execute("BEGIN")
            con.execute("INSERT INTO t VALUES (1)")
            raise ValueError("boom")
    assert con.closed
    assert count(watcher) == 0
    watcher.close()


def test_with_tolerates_a_close_inside():
    with mzlite.connect() as con:
        con.close()
    assert con.closed


# ------------------------------------------------------------------ interrupt

def blocking_read(con) -> str:
    """A read that waits forever: a table read AS OF a time its upper never reaches."""
    con.execute("CREATE TABLE IF NOT EXISTS slow (x int)")
    return "SELECT * FROM slow AS OF 18446744073709551000"


def spy_peeks(con) -> threading.Event:
    """An event set when the connection's database submits a peek."""
    db = con.database
    submitted = threading.Event()
    original = db.controller.peek

    def peek(*args, **kwargs):
        submitted.set()
        return original(*args, **kwargs)

    db.controller.peek = peek
    return submitted


def run_in_thread(fn):
    out: dict = {}

    def body():
        try:
            out["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            out["error"] = e

    th = threading.Thread(target=body)
    th.start()
    return th, out


def test_interrupt_cancels_a_waiting_read_and_the_connection_stays_usable():
    con = mzlite.connect()
    sql = blocking_read(con)
    submitted = spy_peeks(con)
    th, out = run_in_thread(lambda: con.execute(sql).fetchall())
    assert submitted.wait(JOIN)
    con.interrupt()
    th.join(JOIN)
    assert not th.is_alive()
    err = out["error"]
    assert isinstance(err, mzlite.QueryCanceled) and isinstance(err, mzlite.OperationalError)
    assert err.sqlstate == "57014" and "user request" in str(err)
    con.execute("INSERT INTO slow VALUES (1)")
    assert con.execute("SELECT x FROM slow").fetchall() == [(1,)]
    con.close()


def test_cancel_is_interrupt():
    assert mzlite.Connection.cancel is mzlite.Connection.interrupt


def test_an_interrupt_while_idle_does_not_cancel_the_next_statement():
    """Sabotage: not clearing ``cancel_requested`` when a call starts canceled this SELECT."""
    con = mzlite.connect()
    con.interrupt()
    assert con.execute("SELECT 1").fetchall() == [(1,)]
    con.interrupt()
    assert con.executemany("SELECT ?", [(1,), (2,)]).rowcount == 2
    con.close()


def test_interrupt_between_statements_of_a_script_stops_the_rest():
    """Sabotage: clearing the flag per statement (as ``execute_statement`` once did) lost an
    interrupt that arrived between two statements, and the INSERT ran."""
    con = mzlite.connect()
    db = con.database
    original = db.execute_statement
    calls = []

    def execute_statement(session, stmt, params):
        result = original(session, stmt, params)
        calls.append(stmt.kind)
        if len(calls) == 1:
            con.interrupt()  # arrives after the first statement finished
        return result

    db.execute_statement = execute_statement
    with pytest.raises(mzlite.QueryCanceled):
        con.executescript("CREATE TABLE s (x int); INSERT INTO s VALUES (1)")
    del db.execute_statement
    assert calls == ["create_table"]
    assert count(con, "s") == 0
    con.close()


class SpyLock:
    """Wraps the database's statement lock and reports a failed (contended) acquire."""

    def __init__(self, inner):
        self.inner = inner
        self.contended = threading.Event()

    def acquire(self, blocking=True, timeout=-1):
        ok = self.inner.acquire(blocking, timeout)
        if not ok:
            self.contended.set()
        return ok

    def release(self):
        self.inner.release()

    def __getattr__(self, name):  # _release_save & co. for Database.unlocked()
        return getattr(self.inner, name)

    def __enter__(self):
        self.inner.acquire()
        return self

    def __exit__(self, *exc):
        self.inner.release()


def test_interrupt_cancels_a_statement_waiting_for_another_connections_statement():
    """The test holds the statement lock as another connection's running statement would.
    Sabotage: a plain ``self.lock.acquire()`` in ``statement_lock`` left the waiting statement
    deaf to the interrupt until the lock was released (the contended event never fired)."""
    a = mzlite.connect()
    b = a.connect()
    db = a.database
    spy = SpyLock(db.lock)
    db.lock = spy
    spy.inner.acquire()  # "another statement is running"
    try:
        tb, out_b = run_in_thread(lambda: b.execute("SELECT 1").fetchall())
        assert spy.contended.wait(JOIN)
        b.interrupt()
        tb.join(JOIN)
        assert not tb.is_alive()
        assert isinstance(out_b.get("error"), mzlite.QueryCanceled)
        assert out_b["error"].sqlstate == "57014"
    finally:
        spy.inner.release()
    assert b.execute("SELECT 1").fetchall() == [(1,)]
    assert a.execute("SELECT 2").fetchall() == [(2,)]
    a.close()
    b.close()


def test_statement_timeout_cancels_with_57014():
    con = mzlite.connect()
    sql = blocking_read(con)
    con.execute("SET statement_timeout = 20")
    with pytest.raises(mzlite.QueryCanceled) as e:
        con.execute(sql)
    assert e.value.sqlstate == "57014" and "timeout" in str(e.value)
    con.execute("SET statement_timeout = 0")
    assert con.execute("SELECT 1").fetchall() == [(1,)]
    con.close()


def test_closing_a_connection_cancels_its_waiting_statement():
    """``close()`` from another thread stops the statement the connection is running."""
    con = mzlite.connect()
    keep = con.connect()  # keeps the database open while con closes
    sql = blocking_read(con)
    submitted = spy_peeks(con)
    th, out = run_in_thread(lambda: con.execute(sql).fetchall())
    assert submitted.wait(JOIN)
    con.close()
    th.join(JOIN)
    assert not th.is_alive() and isinstance(out.get("error"), mzlite.QueryCanceled)
    assert keep.execute("SELECT 1").fetchall() == [(1,)]
    keep.close()
