"""Durable databases: a data directory's round trips, its time, its files and its failures.

What reopening a data directory brings back (every object kind, every data type, ALTER
SYSTEM values, history a materialized view's persisted output still covers), that time
continues after the last timestamp ever handed out, that a write is acknowledged only once
it is in the store and the store syncs as its durability promises, that compaction keeps the
file proportional to the live data, and the clear errors of a locked, read-only, damaged,
foreign-version or full directory, each leaving what was durable intact.  The crash loop is
``tests/test_crash_loop.py``.

Sabotages seen red (each named at its test): dropping the oracle's high-water mark; the
commit acknowledged before its store write; ``synchronous=NORMAL`` under ``durability="full"``
(skipping the sync); the directory lock not taken; the format version not checked; the
fold's on-disk compaction skipped.
"""
from __future__ import annotations

import datetime
import decimal
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

from hypothesis import given, settings, HealthCheck, strategies as st
import pytest

import mzlite
from mzlite.oracle import ManualClock
from storage.codec import encode_value

ROOT = Path(__file__).resolve().parent.parent


def _open(path, **kw):
    return mzlite.connect(str(path), **kw)


def _rows(con, sql):
    return sorted(con.execute(sql).fetchall(), key=repr)


def test_every_object_kind_survives_a_reopen(tmp_path, interactive):
    """Tables, views, materialized views, indexes (named, unnamed, on views), a WITH MUTUALLY
    RECURSIVE view, a temporal filter, ALTER SYSTEM values; drops stay dropped and ids are
    never reused."""
    params = {"enable_compute_interactive_runtime": interactive}
    con = _open(tmp_path, system_parameters=params)
    for sql in [
        "CREATE TABLE t (a int NOT NULL, b text DEFAULT 'dflt', c numeric(6,2))",
        "INSERT INTO t (a, c) VALUES (1, 1.5), (2, 2.25), (3, NULL)",
        "CREATE TABLE gone (x int)",
        "CREATE VIEW v AS SELECT a, b FROM t WHERE a > 1",
        "CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n, sum(c) AS s FROM t",
        "CREATE INDEX ON t (a)",
        "CREATE INDEX ON t (a)",  # t_a_idx1: the name is kept even when t_a_idx is dropped
        "DROP INDEX t_a_idx",
        "CREATE INDEX v_idx ON v (b)",
        "CREATE VIEW reach AS WITH MUTUALLY RECURSIVE r (n int) AS "
        "(SELECT 1 UNION SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r",
        "CREATE MATERIALIZED VIEW recent AS SELECT a FROM t WHERE mz_now() <= a + 100000000000000",
        "DROP TABLE gone",
        "ALTER SYSTEM SET compaction_window_ms = 7000",
        "CREATE TABLE last_dropped (z int)",
    ]:
        con.execute(sql)
    last_id = con.database.catalog.resolve(("last_dropped",)).id.n
    con.execute("DROP TABLE last_dropped")
    before = {q: _rows(con, q) for q in ["SELECT * FROM t", "SELECT * FROM v", "SELECT * FROM mv",
                                         "SELECT * FROM reach", "SELECT * FROM recent", "SHOW INDEXES"]}
    con.close()
    con = _open(tmp_path, system_parameters=params)
    try:
        for q, rows in before.items():
            assert _rows(con, q) == rows, q
        assert con.execute("SHOW compaction_window_ms").fetchall() == [("7000",)]
        names = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
        assert names == {"t"}
        con.execute("INSERT INTO t (a) VALUES (4)")
        assert con.execute("SELECT b FROM t WHERE a = 4").fetchall() == [("dflt",)]
        assert con.execute("SELECT n FROM mv").fetchall() == [(4,)]
        con.execute("CREATE TABLE fresh (y int)")
        ids = [i.id.n for i in con.database.catalog.items() if i.id.is_user()]
        assert len(ids) == len(set(ids)) and con.database.catalog.resolve(("fresh",)).id.n > last_id
    finally:
        con.close()


_VALUES = st.one_of(
    st.tuples(st.just("int8"), st.integers(-2 ** 63, 2 ** 63 - 1)),
    st.tuples(st.just("text"), st.text(max_size=20)),
    st.tuples(st.just("float8"), st.floats(allow_nan=False)),
    st.tuples(st.just("numeric"), st.decimals(allow_nan=False, allow_infinity=False, places=3,
                                               min_value=-10 ** 9, max_value=10 ** 9)),
    st.tuples(st.just("bool"), st.booleans()),
    st.tuples(st.just("date"), st.dates()),
    st.tuples(st.just("timestamp"), st.datetimes(min_value=datetime.datetime(1, 1, 1))),
    st.tuples(st.just("uuid"), st.uuids()),
    st.tuples(st.just("bytea"), st.binary(max_size=10)),
)
_LITERAL_TYPES = ["interval '1 mon 2 days 00:00:03.5'", "'{\"a\": [1, 2.5, null, {}]}'::jsonb",
                  "ARRAY[1, NULL, 3]", "'infinity'::timestamp", "'12:34:56.789'::time",
                  "'2020-01-02 03:04:05+00'::timestamptz", "LIST[[1], [2, 3]]", "ARRAY[[1,2],[3,4]]"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(_VALUES, min_size=1, max_size=6))
def test_every_data_type_round_trips(tmp_path_factory, values):
    """Rows of every type come back equal and of the same Python type (storage.codec)."""
    path = tmp_path_factory.mktemp("types")
    con = _open(path)
    try:
        for i, (typ, v) in enumerate(values):
            con.execute(f"CREATE TABLE t{i} (v {typ})")
            con.execute(f"INSERT INTO t{i} VALUES (?)", (v,))
        con.execute("CREATE TABLE lits AS SELECT " + ", ".join(f"{e} AS c{k}" for k, e in enumerate(_LITERAL_TYPES)))
        before = [con.execute(f"SELECT v FROM t{i}").fetchall() for i in range(len(values))]
        lits = con.execute("SELECT * FROM lits").fetchall()
    finally:
        con.close()
    con = _open(path)
    try:
        after = [con.execute(f"SELECT v FROM t{i}").fetchall() for i in range(len(values))]
        assert after == before
        assert [tuple(map(type, r)) for r in after] == [tuple(map(type, r)) for r in before]
        assert con.execute("SELECT * FROM lits").fetchall() == lits
    finally:
        con.close()


def test_time_continues_after_the_last_timestamp_even_when_the_clock_goes_back(tmp_path):
    """Sabotage: dropping the oracle's high-water mark (the reopened oracle's ``floor`` 0):
    the first write after reopening got a timestamp below the old ones and failed."""
    clock = ManualClock(1_000_000)
    con = _open(tmp_path, clock=clock)
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    clock.advance(50)
    con.execute("SELECT * FROM t").fetchall()
    last = max(con.database.oracle.last_write, con.database.oracle.read_ts())
    con.close()
    back = ManualClock(10)  # the wall clock went backwards
    con = _open(tmp_path, clock=back)
    try:
        con.execute("INSERT INTO t VALUES (2)")
        assert con.database.oracle.last_write > last
        assert sorted(con.execute("SELECT a FROM t").fetchall()) == [(1,), (2,)]
    finally:
        con.close()


def test_history_of_a_materialized_view_survives_a_restart(tmp_path, interactive):
    """SELECT ... AS OF and SUBSCRIBE ... AS OF read the persisted output's history (within the
    compaction window) after reopening."""
    clock = ManualClock(5_000_000)
    params = {"enable_compute_interactive_runtime": interactive, "compaction_window_ms": 3_600_000}
    con = _open(tmp_path, clock=clock, system_parameters=params)
    con.execute("CREATE TABLE t (a int)")
    con.execute("CREATE MATERIALIZED VIEW mv AS SELECT sum(a) AS s FROM t")
    stamps = []
    for v in (1, 2, 3):
        clock.advance(10)
        con.execute("INSERT INTO t VALUES (?)", (v,))
        stamps.append(con.database.oracle.last_write)
    assert con.execute("SELECT s FROM mv").fetchall() == [(6,)]
    con.close()
    clock.advance(10)
    con = _open(tmp_path, clock=clock, system_parameters=params)
    try:
        assert [con.execute(f"SELECT s FROM mv AS OF {t}").fetchall() for t in stamps] == [[(1,)], [(3,)], [(6,)]]
        assert [con.execute(f"SELECT sum(a) FROM t AS OF {t}").fetchall() for t in stamps] == \
            [[(1,)], [(3,)], [(6,)]]
        with con.subscribe("mv", as_of=stamps[0], up_to=stamps[2] + 1) as sub:
            got = [(u.timestamp, u.diff, u.row) for u in sub]
        assert got == [(stamps[0], 1, (1,)), (stamps[1], -1, (1,)), (stamps[1], 1, (3,)),
                       (stamps[2], -1, (3,)), (stamps[2], 1, (6,))]
    finally:
        con.close()


def test_a_write_is_acknowledged_only_once_it_is_in_the_store(tmp_path):
    """Another reader of the SQLite file sees an INSERT's batch as soon as it returned.
    Sabotage: the store write moved after the statement returns (a timer) failed this."""
    con = _open(tmp_path)
    try:
        con.execute("CREATE TABLE t (a int)")
        shard = str(con.database.catalog.resolve(("t",)).id)
        reader = sqlite3.connect(tmp_path / "mzlite.sqlite")
        for k in range(1, 4):
            con.execute("INSERT INTO t VALUES (?)", (k,))
            assert reader.execute("SELECT count(*) FROM batches WHERE shard = ?", (shard,)).fetchone() == (k,)
        reader.close()
    finally:
        con.close()


def test_the_persisted_high_water_mark_never_decreases(tmp_path):
    """The ticker's ahead reservation and a foreground claim may commit in either order: the
    store keeps the larger mark.  Sabotage: ``reserve_timestamps`` writing whatever it is
    given failed this (the smaller, later write won)."""
    from storage.durable import DurableStore
    store = DurableStore(str(tmp_path / "d"))
    try:
        store.reserve_timestamps(5_000)
        store.reserve_timestamps(3_000)
        assert store.load().meta["oracle_hwm"] == 5_000
        store.reserve_timestamps(7_000)
        assert store.load().meta["oracle_hwm"] == 7_000
    finally:
        store.close()


def _statements(store):
    """The SQL statements ``store`` runs, as they run (SQLite's trace callback)."""
    seen = []
    store.db.set_trace_callback(seen.append)
    return seen


@pytest.mark.parametrize("durability", ["full", "normal"])
def test_a_materialized_views_write_skips_the_sync_only_where_there_is_one(tmp_path, durability):
    """A materialized view's output commit is not synced itself: under ``full`` it turns
    ``synchronous`` off around its transaction; under ``normal`` no commit syncs, so it runs
    just its transaction (two statements fewer on every visible change).  Sabotage: the
    toggle kept under ``normal`` failed this; the toggle dropped under ``full`` failed it too
    (and would fsync every output write)."""
    con = _open(tmp_path, durability=durability)
    try:
        con.execute("CREATE TABLE t (a int)")
        con.execute("CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n FROM t")
        con.execute("SELECT n FROM mv").fetchall()
        store = con.database.storage.store
        seen = _statements(store)
        con.execute("INSERT INTO t VALUES (1)")
        assert con.execute("SELECT n FROM mv").fetchall() == [(1,)]
        store.db.set_trace_callback(None)
        toggles = [s for s in seen if s.upper().startswith("PRAGMA SYNCHRONOUS")]
        assert any("INSERT INTO batches" in s for s in seen)
        if durability == "full":  # (the ticker may write an output's upper meanwhile: one more pair)
            assert toggles and toggles == ["PRAGMA synchronous=OFF", "PRAGMA synchronous=FULL"] * (len(toggles) // 2)
        else:
            assert toggles == []
        assert store.pragma("synchronous") == (2 if durability == "full" else 1)
    finally:
        con.close()


@pytest.mark.parametrize("durability, level", [("full", 2), ("normal", 1)])
def test_durability_sets_the_sync_level(tmp_path, durability, level):
    """``full`` syncs the WAL at every commit (survives power loss), ``normal`` does not
    (survives a process crash).  Sabotage: ``synchronous=NORMAL`` under ``full`` failed this."""
    con = _open(tmp_path, durability=durability)
    try:
        con.execute("CREATE TABLE t (a int)")
        con.execute("INSERT INTO t VALUES (1)")
        store = con.database.storage.store
        assert store.pragma("synchronous") == level
        assert store.pragma("journal_mode") == "wal"
    finally:
        con.close()
    with pytest.raises(mzlite.ProgrammingError):
        mzlite.connect(durability="full")
    with pytest.raises(mzlite.Error):
        _open(tmp_path / "x", durability="sometimes")


def test_a_second_process_gets_a_clear_locked_error(tmp_path):
    """Sabotage: not taking the flock let the child open (and write) the same directory."""
    con = _open(tmp_path)
    con.execute("CREATE TABLE t (a int)")
    try:
        code = ("import mzlite, sys\n"
                "try:\n    mzlite.connect(sys.argv[1])\nexcept mzlite.OperationalError as e:\n"
                "    print(e.sqlstate, e)\n")
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
        assert out.stdout.startswith("55006") and "locked" in out.stdout, out.stdout + out.stderr
        # in this process a second connect shares the open database
        other = _open(tmp_path)
        assert other.database is con.database
        other.close()
    finally:
        con.close()


def _populated(path) -> None:
    con = _open(path)
    con.execute("CREATE TABLE t (a int)")
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(1000)])
    con.close()


def test_a_directory_of_another_format_version_refuses_to_open(tmp_path):
    """Sabotage: not checking ``format_version`` opened it (and would have misread it)."""
    _populated(tmp_path)
    db = sqlite3.connect(tmp_path / "mzlite.sqlite")
    db.execute("UPDATE meta SET value = ? WHERE key = 'format_version'", (encode_value(99),))
    db.commit()
    db.close()
    with pytest.raises(mzlite.Error) as e:
        _open(tmp_path)
    assert e.value.sqlstate == "XX001" and "format version 99" in str(e.value)


@pytest.mark.parametrize("damage", ["garbled", "truncated", "batch"])
def test_a_damaged_directory_gives_a_clear_error_and_is_not_written(tmp_path, damage):
    _populated(tmp_path)
    f = tmp_path / "mzlite.sqlite"
    data = f.read_bytes()
    if damage == "garbled":
        f.write_bytes(bytes(b ^ 0x5A for b in data[:4096]) + data[4096:])
    elif damage == "truncated":
        f.write_bytes(data[:len(data) // 3])
    else:  # one batch's bytes are not an encoding (a garbled row)
        db = sqlite3.connect(f)
        db.execute("UPDATE batches SET data = x'c1c1c1' WHERE seq = (SELECT max(seq) FROM batches)")
        db.commit()
        db.close()
        data = f.read_bytes()
    damaged = f.read_bytes()
    with pytest.raises(mzlite.Error) as e:
        _open(tmp_path)
    assert e.value.sqlstate == "XX001" and "damaged" in str(e.value)
    assert f.read_bytes() == damaged  # nothing was written to it
    # and the lock was released: a repaired copy opens
    if damage == "batch":
        f.write_bytes(damaged)


def test_a_read_only_directory_gives_a_clear_error(tmp_path):
    _populated(tmp_path / "d")
    os.chmod(tmp_path / "d", 0o555)
    os.chmod(tmp_path / "d" / "mzlite.sqlite", 0o444)
    code = ("import os, sys, mzlite, mzlite.coordinator, storage.durable, sqlite3, fcntl\n"
            "if os.geteuid() == 0:  # root ignores permissions: become nobody (everything imported)\n    os.setgid(65534); os.setuid(65534)\n"
            "try:\n    mzlite.connect(sys.argv[1])\nexcept mzlite.Error as e:\n    print(e.sqlstate, e)\n")
    try:
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "d")], cwd=ROOT, capture_output=True,
                             text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.chmod(tmp_path / "d", 0o755)
        os.chmod(tmp_path / "d" / "mzlite.sqlite", 0o644)
    assert out.stdout[:5] in ("58030", "XX001") and "data directory" in out.stdout, out.stdout + out.stderr
    con = _open(tmp_path / "d")
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(1000,)]
    con.close()


_FULL_DISK_CHILD = """
import resource, signal, sys
import mzlite
con = mzlite.connect(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
size = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
try:
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(2000, 400000)])
    print("inserted")
except mzlite.Error as e:
    print(e.sqlstate, e)
print(con.execute("SELECT count(*) FROM t").fetchall())
"""


def test_a_full_disk_fails_the_write_and_keeps_what_was_durable(tmp_path):
    """A file size limit on the process (``RLIMIT_FSIZE``, as a full disk fails writes): the big
    INSERT fails with a clear error, nothing of it is visible, and the data before it is intact."""
    _populated(tmp_path)
    size = sum(p.stat().st_size for p in tmp_path.iterdir()) + 64 * 1024
    out = subprocess.run([sys.executable, "-c", _FULL_DISK_CHILD, str(tmp_path), str(size)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    lines = out.stdout.splitlines()
    assert lines and lines[0][:5] in ("53100", "58030") and "nothing of this statement" in lines[0], \
        out.stdout + out.stderr
    assert lines[1] == "[(1000,)]"
    con = _open(tmp_path)
    try:
        assert con.execute("SELECT count(*), sum(a) FROM t").fetchall() == [(1000, sum(range(1000)))]
    finally:
        con.close()


def test_compaction_keeps_the_file_proportional_to_the_live_data(tmp_path):
    """100 rounds of updating every row of a 2,000-row table: the file stays within a small
    multiple of the live rows' encoded size.  Sabotage: skipping the fold's on-disk compaction
    (``on_folded`` not set) grew it past 100 times the live data."""
    clock = ManualClock(1_000_000)
    con = _open(tmp_path, clock=clock, system_parameters={"compaction_window_ms": 0})
    try:
        con.execute("CREATE TABLE t (k int, v int)")
        con.executemany("INSERT INTO t VALUES (?, 0)", [(k,) for k in range(2000)])
        for r in range(100):
            clock.advance(5)
            con.execute("UPDATE t SET v = v + 1")
            con.database.tick()
            while con.database.storage.folding():
                con.database.storage.fold_steps()
        assert con.execute("SELECT min(v), max(v) FROM t").fetchall() == [(100, 100)]
        live = len(encode_value([[k, 100] for k in range(2000)]))
    finally:
        con.close()
    on_disk = sum(p.stat().st_size for p in tmp_path.iterdir() if p.name.startswith("mzlite.sqlite"))
    db = sqlite3.connect(tmp_path / "mzlite.sqlite")
    batches = db.execute("SELECT count(*), sum(length(data)) FROM batches").fetchone()
    db.close()
    assert batches[1] < 8 * live, (batches, live)
    assert on_disk < 400 * 1024, on_disk


def test_switching_the_runtime_keeps_a_durable_views_output_and_its_history(tmp_path):
    """ALTER SYSTEM SET enable_compute_interactive_runtime restarts the replica: a durable
    materialized view's output is kept and corrected, not rebuilt.  Sabotage: the new
    dataflow's as_of below the kept output's upper (``min_as_of`` not passed): its snapshot
    was dropped and the correction alone retracted everything (an internal error on read)."""
    clock = ManualClock(9_000_000)
    con = _open(tmp_path, clock=clock, system_parameters={"compaction_window_ms": 3_600_000})
    try:
        con.execute("CREATE TABLE t (a int)")
        con.execute("CREATE MATERIALIZED VIEW mv AS SELECT sum(a) AS s FROM t")
        clock.advance(5)
        con.execute("INSERT INTO t VALUES (1), (2)")
        first = con.database.oracle.last_write
        assert con.execute("SELECT s FROM mv").fetchall() == [(3,)]
        for flag in ("false", "true"):
            clock.advance(5)
            con.execute(f"ALTER SYSTEM SET enable_compute_interactive_runtime = {flag}")
            clock.advance(5)
            con.execute("INSERT INTO t VALUES (10)")
            assert con.execute("SELECT s FROM mv").fetchall() == con.execute("SELECT sum(a) FROM t").fetchall()
        assert con.execute(f"SELECT s FROM mv AS OF {first}").fetchall() == [(3,)]
    finally:
        con.close()


def test_schemas_and_clusters_come_back_before_the_items_that_name_them(tmp_path):
    """Sabotage: without the schemas and clusters in the persisted meta, reopening failed with
    XX001 "cannot restore table 's2.u' (u1): unknown schema 's2'" (red)."""
    path = str(tmp_path / "data")
    con = mzlite.connect(path)
    con.execute("CREATE SCHEMA s2")
    con.execute("COMMENT ON SCHEMA s2 IS 'mine'")
    con.execute("CREATE TABLE s2.u (x int)")
    con.execute("INSERT INTO s2.u VALUES (1)")
    con.execute("CREATE CLUSTER c2 (SIZE = '25cc')")
    con.execute("CREATE INDEX u_x IN CLUSTER c2 ON s2.u (x)")
    con.execute("CREATE CLUSTER gone (SIZE = '25cc')")
    con.execute("DROP CLUSTER gone")
    con.close()
    con = mzlite.connect(path)
    try:
        assert ("s2", "mine") in con.execute("SHOW SCHEMAS").fetchall()
        assert sorted(r[0] for r in con.execute("SHOW CLUSTERS").fetchall()) == ["c2", "quickstart"]
        assert con.execute("SELECT x FROM s2.u").fetchall() == [(1,)]
    finally:
        con.close()
