"""SUBSCRIBE end to end: the Python iterator API, the streaming cursor, SQL cursors, and the
lifecycle of a subscription (UP TO, drops, closing, slow consumers, replica restarts).

Every test runs with the interactive runtime on and off (the ``con`` fixture): a subscribe
always runs on maintenance, so results must be identical either way.  Time comes from a
``ManualClock``; waits are on the subscription itself with a generous timeout, never sleeps.
"""
from __future__ import annotations

import threading
import time

import pytest

import mzlite
from mzlite.subscribe import Progress, Update, consolidate

WAIT = 20.0  # seconds: an upper bound for anything that should happen "soon"


@pytest.fixture
def con(clocked_con):  # this module's tests move time by hand: the shared manual-clock connection
    return clocked_con


def collect_until(sub, pred, timeout=WAIT):
    """Fetch from ``sub`` until ``pred(items)`` holds; fail after ``timeout`` seconds."""
    items = []
    deadline = time.monotonic() + timeout
    while not pred(items):
        left = deadline - time.monotonic()
        assert left > 0, f"timed out; got {items}"
        items.extend(sub.fetch(timeout=min(left, 1.0)))
    return items


def updates(items):
    return [(u.timestamp, u.diff, u.row) for u in items if isinstance(u, Update)]


def settle(con, sub, t):
    """Wait until ``sub`` has received everything before ``t``."""
    deadline = time.monotonic() + WAIT
    while sub._received is not None and sub._received < t and not sub._ended:
        assert time.monotonic() < deadline, f"frontier stuck at {sub._received}, waiting for {t}"
        with sub._cond:
            sub._cond.wait(0.5)


# ---------------------------------------------------------------------------- the iterator API


def test_snapshot_is_stamped_with_as_of_and_updates_follow_in_time_order(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1), (2), (2)")
    sub = con.subscribe("t")
    t0 = sub.as_of
    snap = collect_until(sub, lambda xs: len(xs) >= 2)
    assert sorted(updates(snap)) == [(t0, 1, (1,)), (t0, 2, (2,))]
    con.execute("INSERT INTO t VALUES (3)")
    con.execute("DELETE FROM t WHERE a = 2")
    more = updates(collect_until(sub, lambda xs: len(xs) >= 2))
    assert [(d, r) for _, d, r in more] == [(1, (3,)), (-2, (2,))]
    assert t0 < more[0][0] < more[1][0]
    sub.close()


def test_iteration_stops_at_up_to_and_up_to_is_exclusive(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    t1 = con.execute("SELECT mz_now()").fetchall()[0][0]
    con.execute("INSERT INTO t VALUES (2)")
    t2 = con.execute("SELECT mz_now()").fetchall()[0][0]
    con.execute("INSERT INTO t VALUES (3)")
    with con.subscribe("SELECT a FROM t", as_of=t1, up_to=t2) as sub:
        got = []
        done = threading.Event()

        def consume():
            got.extend(sub)
            done.set()
        threading.Thread(target=consume, daemon=True).start()
        assert done.wait(WAIT), "iteration did not stop at UP TO"
    ups = updates(got)
    assert (t1, 1, (1,)) in ups
    assert all(t1 <= t < t2 for t, _, _ in ups)
    assert (3,) not in [r for _, _, r in ups]
    assert sub.frontier is None


def test_progress_items_pass_each_timestamp_only_after_it_is_complete(con):
    """Sabotage: appending the Progress before the batch's updates put a progress row ahead
    of updates at an earlier time and this test went red."""
    con.execute("CREATE TABLE t (a int)")
    sub = con.subscribe("t", progress=True, snapshot=False)
    first = sub.fetch()  # the first progress row; time may already have moved on once more
    assert first[0] == Progress(sub.as_of) and all(isinstance(x, Progress) for x in first)
    con.execute("INSERT INTO t VALUES (1), (2)")
    items = collect_until(sub, lambda xs: any(isinstance(x, Update) for x in xs) and isinstance(xs[-1], Progress))
    last_progress = 0
    for x in items:
        if isinstance(x, Progress):
            assert x.timestamp > last_progress
            last_progress = x.timestamp
        else:
            assert x.timestamp >= last_progress, "an update arrived after a progress row passed its time"
    assert last_progress > max(u.timestamp for u in items if isinstance(u, Update))
    sub.close()


def test_snapshot_false_sends_only_changes(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    sub = con.subscribe("t", snapshot=False)
    con.execute("INSERT INTO t VALUES (2)")
    ups = updates(collect_until(sub, lambda xs: len(xs) >= 1))
    assert [(d, r) for _, d, r in ups] == [(1, (2,))]
    assert ups[0][0] > sub.as_of
    sub.close()


def test_frontier_counts_only_what_was_yielded(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    sub = con.subscribe("t")
    settle(con, sub, sub.as_of + 1)
    assert sub.frontier == sub.as_of  # the snapshot is buffered, not yet yielded
    assert updates(sub.fetch(timeout=0)) == [(sub.as_of, 1, (1,))]
    assert sub.frontier > sub.as_of
    sub.close()


def test_consolidate_orders_by_time_and_sums_diffs():
    """Sabotage: without the sort, the later time came first and this went red."""
    out = consolidate([((9,), 5, 1), ((1,), 5, 1), ((2,), 3, 1), ((1,), 5, -1), ((2,), 3, 1), ((3,), 4, 1)])
    assert out == [Update(3, 2, (2,)), Update(4, 1, (3,)), Update(5, 1, (9,))]


def test_fetch_waits_up_to_its_timeout_and_returns_nothing_when_idle(con):
    con.execute("CREATE TABLE t (a int)")
    sub = con.subscribe("t")
    assert sub.fetch(timeout=0.05) == []
    sub.close()
    with pytest.raises(mzlite.InterfaceError):
        sub.fetch()


def test_as_of_before_since_is_a_clear_error(con):
    con.execute("CREATE TABLE t (a int)")
    with pytest.raises(mzlite.DataError) as e:
        con.subscribe("t", as_of=1)
    assert "not valid for all inputs" in str(e.value) and e.value.sqlstate == "22000"


def test_up_to_before_as_of_is_an_error_and_equal_is_empty(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    t = con.execute("SELECT mz_now()").fetchall()[0][0]
    with pytest.raises(mzlite.DataError) as e:
        con.subscribe("t", as_of=t, up_to=t - 1)
    assert e.value.sqlstate == "22023"
    assert list(con.subscribe("t", as_of=t, up_to=t)) == []


# ---------------------------------------------------------------------------- the streaming cursor


def test_cursor_streams_subscribe_rows_as_flat_tuples(con):
    con.execute("CREATE TABLE t (a int, b text)")
    con.execute("INSERT INTO t VALUES (1, 'x')")
    cur = con.cursor()
    cur.execute("SUBSCRIBE t WITH (PROGRESS)")
    assert [d[0] for d in cur.description] == ["mz_timestamp", "mz_progressed", "mz_diff", "a", "b"]
    assert [d[1] for d in cur.description][:3] == ["mz_timestamp", "boolean", "bigint"]
    first = cur.fetchone()
    assert first[1:] == (True, None, None, None)  # the initial progress row at AS OF
    row = cur.fetchone()
    assert row == (first[0], False, 1, 1, "x")
    with pytest.raises(mzlite.ProgrammingError) as e:
        cur.fetchall()
    assert "UP TO" in str(e.value)
    con.execute("INSERT INTO t VALUES (2, 'y')")
    rows = []
    deadline = time.monotonic() + WAIT
    while not any(r[1] is False for r in rows):
        assert time.monotonic() < deadline
        rows.extend(cur.fetchmany(10))
    assert [r[2:] for r in rows if r[1] is False] == [(1, 2, "y")]
    cur.close()


def test_cursor_fetchall_of_a_bounded_subscribe_returns_everything(con):
    rows = con.execute("SUBSCRIBE (SELECT * FROM (VALUES (1, 10), (2, 20)) v(a, e) WHERE mz_now() < e) "
                       "AS OF 5").fetchall()
    assert rows == [(5, 1, 1, 10), (5, 1, 2, 20), (10, -1, 1, 10), (20, -1, 2, 20)]
    rows = con.execute("SUBSCRIBE (SELECT * FROM (VALUES (1, 10), (2, 20)) v(a, e) WHERE mz_now() < e) "
                       "AS OF 5 UP TO 20").fetchall()
    assert rows == [(5, 1, 1, 10), (5, 1, 2, 20), (10, -1, 1, 10)]


# ---------------------------------------------------------------------------- SQL cursors


def test_declare_fetch_close_in_a_transaction(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    other = con.connect()
    con.execute("BEGIN")
    con.execute("DECLARE c CURSOR FOR SUBSCRIBE t")
    cur = con.execute("FETCH ALL c")
    assert [r[1:] for r in cur.fetchall()] == [(1, 1)]
    assert cur.statusmessage == "FETCH 1"
    assert con.execute("FETCH ALL c WITH (timeout = '0s')").fetchall() == []
    other.execute("INSERT INTO t VALUES (2)")
    rows = con.execute("FETCH 10 c WITH (timeout = '20s')").fetchall()
    assert [r[1:] for r in rows] == [(1, 2)]
    con.execute("CLOSE c")
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("FETCH c")
    assert e.value.sqlstate == "34000"
    con.execute("ROLLBACK")


def test_commit_closes_cursors_and_declare_needs_a_transaction(con):
    con.execute("CREATE TABLE t (a int)")
    with pytest.raises(mzlite.OperationalError) as e:
        con.execute("DECLARE c CURSOR FOR SUBSCRIBE t")
    assert e.value.sqlstate == "25P01"
    con.execute("BEGIN")
    con.execute("DECLARE c CURSOR FOR SUBSCRIBE t")
    sub = con.session.portals["c"].stream.sub
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("DECLARE c CURSOR FOR SUBSCRIBE t")
    assert e.value.sqlstate == "42P03"
    con.execute("ROLLBACK")
    con.execute("BEGIN")
    con.execute("DECLARE c CURSOR FOR SUBSCRIBE t")
    con.execute("COMMIT")
    assert sub.done and sub.sink_id is None  # its dataflow is gone
    with pytest.raises(mzlite.ProgrammingError):
        con.execute("FETCH c")


def test_declare_cursor_for_select(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (3), (1), (2)")
    con.execute("BEGIN")
    con.execute("DECLARE s CURSOR FOR SELECT a FROM t ORDER BY a")
    assert con.execute("FETCH 2 s").fetchall() == [(1,), (2,)]
    assert con.execute("FETCH ALL s").fetchall() == [(3,)]
    assert con.execute("FETCH ALL s").fetchall() == []
    con.execute("COMMIT")


def test_a_waiting_fetch_blocks_no_other_session(con):
    """FETCH without a timeout releases the database lock while it waits.  Sabotage: holding
    the lock while waiting made the other session's INSERT wait forever (red here)."""
    con.execute("CREATE TABLE t (a int)")
    con.execute("BEGIN")
    con.execute("DECLARE c CURSOR FOR SUBSCRIBE t WITH (SNAPSHOT = false)")
    result = []
    fetched = threading.Event()

    def fetch():
        result.extend(con.execute("FETCH ALL c").fetchall())
        fetched.set()
    threading.Thread(target=fetch, daemon=True).start()
    other = con.connect()
    wrote = threading.Event()

    def write():
        other.execute("INSERT INTO t VALUES (7)")
        assert other.execute("SELECT count(*) FROM t").fetchall() == [(1,)]
        wrote.set()
    threading.Thread(target=write, daemon=True).start()
    assert wrote.wait(WAIT), "another session was blocked by a waiting FETCH"
    assert fetched.wait(WAIT)
    assert [r[1:] for r in result] == [(1, 7)]
    con.execute("COMMIT")


def test_fetch_can_be_interrupted(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("BEGIN")
    con.execute("DECLARE c CURSOR FOR SUBSCRIBE t WITH (SNAPSHOT = false)")
    errors = []
    done = threading.Event()

    def fetch():
        try:
            con.execute("FETCH ALL c")
        except mzlite.Error as e:
            errors.append(e)
        done.set()
    th = threading.Thread(target=fetch, daemon=True)
    th.start()
    while not done.is_set():  # cancel until the FETCH notices (it may not have started yet)
        con.cancel()
        done.wait(0.05)
    assert errors and errors[0].sqlstate == "57014"


# ---------------------------------------------------------------------------- lifecycle


def test_dropping_what_a_subscription_reads_ends_it_with_an_error(con):
    """Sabotage: without ``ending_dropped`` on DROP the subscription just stopped (red)."""
    con.execute("CREATE TABLE t (a int)")
    con.execute("CREATE VIEW v AS SELECT a + 1 AS b FROM t")
    con.execute("INSERT INTO t VALUES (1)")
    sub = con.subscribe("v")
    assert updates(collect_until(sub, lambda xs: len(xs) >= 1))[0][2] == (2,)
    con.execute("DROP VIEW v")
    with pytest.raises(mzlite.ProgrammingError) as e:
        collect_until(sub, lambda xs: False)
    assert 'underlying relation "v" was dropped' in str(e.value)
    assert e.value.sqlstate == "42P01"
    assert sub.sink_id is None


def test_dropping_a_table_under_a_view_ends_a_query_subscription(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n FROM t")
    sub = con.subscribe("SELECT n FROM m")
    con.execute("DROP TABLE t CASCADE")
    with pytest.raises(mzlite.ProgrammingError) as e:
        collect_until(sub, lambda xs: False)
    assert "was dropped" in str(e.value)


def test_a_full_buffer_fails_the_subscription_naming_the_cap(con):
    """Sabotage: without the cap check, the buffer grew past max_buffered (red)."""
    con.execute("CREATE TABLE t (a int)")
    sub = con.subscribe("t", max_buffered=3)
    con.execute("INSERT INTO t VALUES (1), (2)")
    con.execute("INSERT INTO t VALUES (3), (4)")
    settle(con, sub, con.execute("SELECT mz_now()").fetchall()[0][0] + 1)  # nothing read meanwhile
    got = []
    with pytest.raises(mzlite.OperationalError) as e:
        collect_until(sub, lambda xs: got.extend(xs) or False)
    assert "max_buffered" in str(e.value) and "3" in str(e.value) and e.value.sqlstate == "53000"
    assert sorted(r for _, _, r in updates(got)) == [(1,), (2,)]  # whole timestamps before the error


def test_an_unread_subscription_never_holds_back_maintenance(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n FROM t")
    sub = con.subscribe("t")  # never read
    for i in range(20):
        con.execute("INSERT INTO t VALUES (?)", (i,))
    assert con.execute("SELECT n FROM m").fetchall() == [(20,)]
    sub.close()


def test_holds_follow_the_frontier_and_compaction_never_passes_them(con):
    """Sabotage: without ``_advance_holds`` the hold stayed at AS OF; without any hold the
    table's since passed the subscription's frontier (red either way)."""
    con.execute("ALTER SYSTEM SET compaction_window_ms = 0")
    con.execute("CREATE TABLE t (a int)")
    tid = con.database.catalog.resolve(("t",)).id
    sub = con.subscribe("t")
    for i in range(3):
        con.execute("INSERT INTO t VALUES (?)", (i,))
    last = con.execute("SELECT mz_now()").fetchall()[0][0]
    settle(con, sub, last + 1)
    con.database.tick()
    hold = con.database.storage_holds.min_hold(tid)
    assert hold is not None and hold >= last - 1 and hold > sub.as_of
    since = con.database.storage.collections[tid].since
    assert since <= hold
    sub.close()
    assert con.database.storage_holds.min_hold(tid) is None


def test_closing_the_connection_ends_its_subscriptions(con):
    other = con.connect()
    other.execute("CREATE TABLE t (a int)")
    sub = other.subscribe("t")
    sink = sub.sink_id
    assert sink in con.database.controller.collections
    other.close()
    assert sub.done and sink not in con.database.controller.collections


def test_a_replica_restart_resumes_subscriptions_from_their_frontier(con):
    """Sabotage: without ``resume_all`` the subscription saw nothing after the restart (red)."""
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    sub = con.subscribe("t")
    assert len(collect_until(sub, lambda xs: len(xs) >= 1)) == 1
    settle(con, sub, sub.as_of + 1)
    flag = con.database.system["enable_compute_interactive_runtime"]
    con.execute(f"ALTER SYSTEM SET enable_compute_interactive_runtime = {'off' if flag else 'on'}")
    con.execute("INSERT INTO t VALUES (2)")
    more = updates(collect_until(sub, lambda xs: len(xs) >= 1))
    assert [(d, r) for _, d, r in more] == [(1, (2,))]
    assert sub.fetch(timeout=0.2) == []  # nothing repeated
    sub.close()


def test_subscribe_never_runs_on_the_interactive_runtime(con):
    con.execute("CREATE TABLE t (a int)")
    sub = con.subscribe("t")
    settle(con, sub, sub.as_of + 1)  # the dataflow exists once its first batch arrived
    replica = con.database.replica
    assert sub.sink_id in [gid for gid, _ in replica.maintenance.dataflows()]
    if replica.interactive is not None:
        assert sub.sink_id not in [gid for gid, _ in replica.interactive.dataflows()]
    sub.close()


def test_python_api_argument_errors(con):
    with pytest.raises(mzlite.ProgrammingError):
        con.subscribe(42)
    with pytest.raises(mzlite.ProgrammingError):
        con.subscribe("t", as_of="soon")
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.subscribe("no_such_table")
    assert e.value.sqlstate == "42P01"


def test_envelope_upsert_reports_each_changed_key_once_per_timestamp(con):
    """Sabotage: treating several rows for a key as an upsert of one of them (no
    ``key_violation`` branch) went red here."""
    con.execute("CREATE VIEW kv AS SELECT * FROM (VALUES ('a', 1, 0, 10), ('a', 2, 10, 20), ('b', 5, 0, 15), "
                "('c', 7, 12, 30), ('c', 8, 12, 14)) AS v (k, v, s, e)")
    con.execute("CREATE VIEW kv_now AS SELECT v, k FROM kv WHERE mz_now() >= s AND mz_now() < e")
    cur = con.execute("SUBSCRIBE kv_now ENVELOPE UPSERT (KEY (k)) AS OF 5 UP TO 100")
    assert [d[0] for d in cur.description] == ["mz_timestamp", "mz_state", "k", "v"]
    rows = cur.fetchall()
    assert sorted(rows[:2]) == [(5, "upsert", "a", 1), (5, "upsert", "b", 5)]
    assert rows[2:] == [(10, "upsert", "a", 2), (12, "key_violation", "c", None), (14, "upsert", "c", 7),
                        (15, "delete", "b", None), (20, "delete", "a", None), (30, "delete", "c", None)]


def test_within_timestamp_order_by_sorts_inside_each_timestamp_only(con):
    """Sabotage: without ``order_within_timestamps`` the rows kept their arrival order (red)."""
    con.execute("CREATE VIEW nv AS SELECT * FROM (VALUES (1, 0, 10), (5, 0, 100), (NULL, 0, 100), (7, 0, 10), "
                "(3, 10, 100)) AS v (x, s, e)")
    con.execute("CREATE VIEW nv_now AS SELECT x FROM nv WHERE mz_now() >= s AND mz_now() < e")
    rows = con.execute("SUBSCRIBE nv_now WITHIN TIMESTAMP ORDER BY x DESC AS OF 5 UP TO 11").fetchall()
    assert rows == [(5, 1, None), (5, 1, 7), (5, 1, 5), (5, 1, 1), (10, -1, 7), (10, 1, 3), (10, -1, 1)]
    rows = con.execute("SUBSCRIBE nv_now WITHIN TIMESTAMP ORDER BY mz_diff DESC, x AS OF 9 UP TO 11").fetchall()
    assert rows == [(9, 1, 1), (9, 1, 5), (9, 1, 7), (9, 1, None), (10, 1, 3), (10, -1, 1), (10, -1, 7)]
