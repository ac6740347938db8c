"""Coordinator mechanisms: bulk writes, the statement lock, the plan cache, system relations."""
import threading
import time

import pytest

import mzlite


def _rows(con, sql, params=None):
    return sorted(con.execute(sql, params).fetchall())


def test_executemany_update_and_delete_match_one_statement_at_a_time(con):
    """The set-oriented executemany (one index read, one write) must give what running each
    parameter set in turn gives, including a row hit twice.  Sabotage: dropping the updated
    row instead of putting it back where later parameter sets look (bulk_modify.py's ``b2``) lost
    the second update of the same row (seen red)."""
    con.execute("CREATE TABLE t (id int NOT NULL, v int)")
    con.execute("CREATE INDEX t_id ON t (id)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i, i) for i in range(10)])
    cur = con.cursor()
    cur.executemany("UPDATE t SET v = v + ? WHERE id = ?", [(1, 1), (5, 1), (1, 2), (1, 99)])
    assert cur.rowcount == 3
    assert _rows(con, "SELECT v FROM t WHERE id IN (1, 2)") == [(3,), (7,)]
    cur.executemany("UPDATE t SET v = v * ? WHERE id = ?", [(2, 1), (2, 1)])
    assert _rows(con, "SELECT v FROM t WHERE id = 1") == [(28,)]
    cur.executemany("DELETE FROM t WHERE id = ?", [(3,), (3,), (4,)])
    assert cur.rowcount == 2
    assert _rows(con, "SELECT id FROM t") == [(i,) for i in range(10) if i not in (3, 4)]


def test_executemany_not_null_violation_changes_nothing(con):
    con.execute("CREATE TABLE t (id int NOT NULL, v int NOT NULL)")
    con.execute("CREATE INDEX t_id ON t (id)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(1, 1), (2, 2)])
    with pytest.raises(mzlite.IntegrityError):
        con.executemany("INSERT INTO t VALUES (?, ?)", [(3, 3), (4, None)])
    with pytest.raises(mzlite.IntegrityError):
        con.executemany("UPDATE t SET v = ? WHERE id = ?", [(5, 1), (None, 2)])
    assert _rows(con, "SELECT id, v FROM t") == [(1, 1), (2, 2)]


def test_a_waiting_read_does_not_block_other_sessions(con):
    """A SELECT waiting for its peek releases the statement lock.  Sabotage: reading with
    release_lock=False made the second session wait for the first one's timeout, so the
    waiting reader had already finished when the second statement returned (seen red)."""
    con.execute("CREATE TABLE t (a int)")
    con.execute("CREATE DEFAULT INDEX ON t")
    waiter = con.connect()
    waiter.execute("SET statement_timeout = '20s'")
    started, outcome = threading.Event(), []

    def wait_forever():
        started.set()
        try:
            waiter.execute("SELECT * FROM t AS OF 18446744073709551615").fetchall()
        except mzlite.Error as e:
            outcome.append(e.sqlstate)

    th = threading.Thread(target=wait_forever)
    th.start()
    started.wait()
    controller = con.database.controller
    deadline = time.monotonic() + 10
    while not controller._peeks and time.monotonic() < deadline:
        th.join(0.002)  # until the waiter's peek has been sent
    assert controller._peeks
    # the waiter's peek is pending; another session gets its answer meanwhile
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]
    assert th.is_alive()
    # an interrupt only cancels a statement already running (a call clears the flag when it
    # starts), and the waiter may not have got that far yet: interrupt until it ends
    deadline = time.monotonic() + 10
    while th.is_alive() and time.monotonic() < deadline:
        waiter.cancel()
        th.join(0.05)
    assert not th.is_alive() and outcome == ["57014"]


def test_plan_cache_is_invalidated_by_ddl(con):
    """A cached plan of a SELECT must not survive DDL that changes what it reads.
    Sabotage: not bumping catalog_version on DDL kept serving the dropped table's plan."""
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    assert _rows(con, "SELECT * FROM t") == [(1,)]
    con.execute("DROP TABLE t")
    con.execute("CREATE TABLE t (a int, b int)")
    con.execute("INSERT INTO t VALUES (2, 3)")
    assert _rows(con, "SELECT * FROM t") == [(2, 3)]


def test_introspection_relations_name_the_runtime(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("CREATE DEFAULT INDEX ON t")
    flows = _rows(con, "SELECT name, runtime FROM mz_internal.mz_dataflows")
    assert ("index t_primary_idx", "maintenance") in flows
    con.execute("SELECT * FROM t").fetchall()
    counts = dict(((r, k), c) for r, k, c in con.execute("SELECT * FROM mz_internal.mz_peek_counts").fetchall())
    interactive = con.execute("SHOW enable_compute_interactive_runtime").fetchall()[0][0] == "on"
    answered_by = "interactive" if interactive else "maintenance"
    assert counts[(answered_by, "fast_path")] >= 1


def test_executemany_without_an_index_is_one_write_with_sequential_semantics(con):
    """The general executemany path (no index pins the key) applies every parameter set as
    one write, each set seeing the earlier sets' changes.  Sabotage: skipping the pending
    rows in ``Writer.modify_many`` made the second doubling read the committed value and
    give 4 instead of 8 (seen red)."""
    con.execute("CREATE TABLE t (id int NOT NULL, v int)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(1, 1), (2, 2)])
    cur = con.cursor()
    cur.executemany("UPDATE t SET v = v * ? WHERE id = ?", [(2, 1), (2, 1), (2, 1)])
    assert cur.rowcount == 3
    assert _rows(con, "SELECT v FROM t WHERE id = 1") == [(8,)]
    cur.executemany("DELETE FROM t WHERE v = ?", [(8,), (2,)])
    assert _rows(con, "SELECT id FROM t") == []


def test_postgres_text_is_parsed_before_the_statement_lock_is_taken():
    """A session parses (milliseconds for a DDL) without holding the statement lock, so
    another session's read is not held up by it; other dialects parse under the lock (their
    translation reads the catalog).  Sabotage checked: dropping the parse before
    ``statement_lock`` in ``execute_sql`` made every parse hold the lock (red)."""
    con = mzlite.connect()
    db = con.database
    held = []
    original = db._parse

    def recording(sql, session=None):
        held.append(db.lock._is_owned())
        return original(sql, session)

    db._parse = recording
    try:
        con.execute("SELECT 1").fetchall()
        assert held == [False]
        held.clear()
        con.execute("SET sql_dialect = sqlite")
        held.clear()
        con.execute("SELECT ifnull(NULL, 2)").fetchall()
        assert held == [True]
    finally:
        db._parse = original
        con.close()
