"""Write timestamps against since and upper: the workloads that used to fail internally.

Two internal errors, found by workloads a user could run, and the invariants that remove them:

* a transaction's reads are held: its first read chooses its timestamp and holds every
  collection of its time domain there until it ends (``Reader.choose_and_hold``,
  ``Reader.end_transaction``); UPDATE and DELETE, alone or through ``executemany``, are
  refused in a transaction block (Materialize's write transactions are insert-only), since
  their reads and their retractions would be at different times;
* choosing a write timestamp is ordered against advancing the uppers: both happen under
  ``TableStorage``'s commit lock, so a tick (or a read at now) never closes the time a
  commit was handed before it appends (``tests/test_write_timestamps_interleavings.py``
  checks every interleaving of the real objects).

Each test names the sabotage it was seen red with.
"""
from __future__ import annotations

import random
import threading

import pytest

import mzlite
from mzlite.oracle import ManualClock

ROUNDS = 1000


def _orders(cur, n_orders: int):
    cur.execute("CREATE TABLE orders (id int NOT NULL, customer_id int, amount int)")
    cur.execute("CREATE TABLE customers (id int NOT NULL, region text NOT NULL)")
    cur.executemany("INSERT INTO customers VALUES (?, ?)", [(i, f"r{i % 10}") for i in range(100)])
    cur.executemany("INSERT INTO orders VALUES (?, ?, ?)", [(i, i % 100, i % 97) for i in range(n_orders)])
    cur.execute("CREATE INDEX ON orders (id)")
    cur.execute("CREATE MATERIALIZED VIEW sales AS SELECT c.region, count(*) AS n, sum(o.amount) AS total "
                "FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region")
    cur.execute("CREATE INDEX ON sales (region)")


def test_update_and_delete_many_in_a_transaction_are_refused(con):
    """The first workload: INSERT, UPDATE and DELETE through ``executemany`` in one
    transaction.  The UPDATE is refused up front (25001), as a single UPDATE is, the
    transaction is failed, COMMIT rolls it back, and nothing changed.  Sabotage: without the
    refusal in ``Writer.modify_many`` the UPDATE ran, read at a time nothing held, and the
    DELETE failed "internal error: SinceError" once compaction passed it (every time, with
    100,000 orders)."""
    cur = con.cursor()
    _orders(cur, 2_000)
    before = cur.execute("SELECT region, n, total FROM sales ORDER BY region").fetchall()
    cur.execute("BEGIN")
    cur.executemany("INSERT INTO orders VALUES (?, ?, ?)", [(10_000 + i, i % 100, 5) for i in range(300)])
    with pytest.raises(mzlite.OperationalError) as e:
        cur.executemany("UPDATE orders SET customer_id = ?, amount = ? WHERE id = ?",
                        [(i % 100, 7, i) for i in range(300, 600)])
    assert e.value.sqlstate == "25001" and "UPDATE cannot be run inside a transaction block" in str(e.value)
    with pytest.raises(mzlite.Error) as e:
        cur.executemany("DELETE FROM orders WHERE id = ?", [(i,) for i in range(600, 900)])
    assert e.value.sqlstate == "25P02"  # the transaction is aborted
    cur.execute("COMMIT")
    assert cur.statusmessage == "ROLLBACK"
    assert cur.execute("SELECT region, n, total FROM sales ORDER BY region").fetchall() == before
    # outside a transaction the same statements run, each as one write
    cur.executemany("UPDATE orders SET customer_id = ?, amount = ? WHERE id = ?",
                    [(i % 100, 7, i) for i in range(300, 600)])
    cur.executemany("DELETE FROM orders WHERE id = ?", [(i,) for i in range(600, 900)])
    assert cur.execute("SELECT sum(n) FROM sales").fetchall() == [(1_700,)]


@pytest.mark.parametrize("interactive", [True, False], ids=["interactive", "maintenance-only"])
def test_a_read_transaction_outlives_the_compaction_window(connect, interactive):
    """A read-only transaction reads at one timestamp however long it lives: time passes
    far beyond the compaction window, ticks compact everything else, another connection
    writes, and the transaction's reads still answer at its timestamp; after COMMIT its
    holds are gone and compaction catches up.  Sabotage: ``_begin_transaction_read``
    choosing the timestamp without holding the domain -> compaction passed it and the second
    SELECT failed (22000, its inputs no longer readable at its timestamp); ``end_transaction``
    keeping the holds -> the table's since stayed at the transaction's timestamp."""
    clock = ManualClock(1_000)
    con = connect(interactive, clock)
    other = con.database.connect()
    cur = con.cursor()
    _orders(cur, 500)
    db = con.database
    orders = db.catalog.try_resolve("orders").id
    cur.execute("BEGIN")
    first = cur.execute("SELECT region, n, total FROM sales ORDER BY region").fetchall()
    count = cur.execute("SELECT count(*) FROM orders").fetchall()
    read_ts = session_txn_ts = cur.execute("SELECT mz_now()::text::bigint").fetchall()[0][0]
    for _ in range(5):
        clock.advance(5_000)
        other.execute("INSERT INTO orders VALUES (100000, 1, 1)")
        db.tick()
    assert cur.execute("SELECT region, n, total FROM sales ORDER BY region").fetchall() == first
    assert db.storage.collections[orders].since <= read_ts
    assert cur.execute("SELECT count(*) FROM orders").fetchall() == count
    assert cur.execute("SELECT mz_now()::text::bigint").fetchall() == [(session_txn_ts,)]
    cur.execute("COMMIT")
    assert db.storage_holds.min_hold(orders) is None
    db.tick()
    assert db.storage.collections[orders].since > read_ts
    assert cur.execute("SELECT count(*) FROM orders").fetchall() == [(count[0][0] + 5,)]
    other.close()


def test_a_closed_session_releases_its_transaction(connect):
    """Closing a connection in the middle of a read transaction releases its holds.
    Sabotage: ``Database.session_closed`` without ``end_transaction`` -> the hold stayed."""
    clock = ManualClock(1_000)
    con = connect(None, clock)
    con.execute("CREATE TABLE t (a int)")
    db = con.database
    tid = db.catalog.try_resolve("t").id
    other = db.connect()
    other.execute("BEGIN")
    other.execute("SELECT * FROM t").fetchall()
    assert db.storage_holds.min_hold(tid) is not None
    other.close()
    assert db.storage_holds.min_hold(tid) is None


def test_an_object_created_after_the_transaction_chose_its_time_is_refused_clearly(connect):
    """A transaction reads at its timestamp; an index created later is not readable there:
    a clear 22000 naming it, never an internal error."""
    clock = ManualClock(1_000)
    con = connect(None, clock)
    con.execute("CREATE TABLE t (a int)")
    other = con.database.connect()
    cur = con.cursor()
    cur.execute("BEGIN")
    cur.execute("SELECT * FROM t").fetchall()
    clock.advance(10)
    other.execute("CREATE TABLE late (a int)")
    with pytest.raises(mzlite.Error) as e:
        cur.execute("SELECT * FROM late").fetchall()
    assert e.value.sqlstate == "22000" and '"late"' in str(e.value)
    cur.execute("ROLLBACK")
    assert cur.execute("SELECT * FROM late").fetchall() == []
    other.close()


class _HeldClock:
    """A clock that stands still, jumps forward and steps back, as writers move it."""

    def __init__(self, start: int, rng: random.Random):
        self.value = start
        self.rng = rng
        self.lock = threading.Lock()

    def __call__(self) -> int:
        return self.value

    def move(self) -> None:
        with self.lock:
            r = self.rng.random()
            if r < 0.6:
                return  # still: several writes in one millisecond
            self.value += self.rng.choice([1, 2, 50, 1_000]) if r < 0.9 else -self.rng.choice([1, 5, 300])


def _ticking(db, stop: threading.Event, errors: list):
    """Drive the real tick as fast as it will go, beside the writers (the race partner)."""
    def run():
        try:
            while not stop.is_set():
                db.tick()
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


@pytest.mark.parametrize("interactive", [True, False], ids=["interactive", "maintenance-only"])
def test_held_and_jumping_clock_writes_never_fail(connect, interactive):
    """The second workload: single-row inserts, two-insert transactions and an UPDATE of a
    counter, with materialized views and an index over the tables, under a clock that holds
    still and jumps, while the tick runs as fast as it can.  Sabotage: ``advance_tables``
    without the commit lock -> "internal error: AssertionError: append at ... below upper
    ..." within the first few hundred rounds."""
    rng = random.Random(24)
    clock = _HeldClock(1_000, rng)
    con = connect(interactive, clock)
    cur = con.cursor()
    cur.execute("CREATE TABLE events (k int, v int)")
    cur.execute("CREATE TABLE counter (k int, n int)")
    cur.execute("INSERT INTO counter VALUES (1, 0)")
    cur.execute("CREATE INDEX ON counter (k)")
    cur.execute("CREATE MATERIALIZED VIEW per_k AS SELECT k, count(*) AS c, sum(v) AS s FROM events GROUP BY k")
    cur.execute("CREATE MATERIALIZED VIEW total AS SELECT sum(n) AS n FROM counter")
    cur.execute("CREATE INDEX ON per_k (k)")
    stop, errors = threading.Event(), []
    ticker = _ticking(con.database, stop, errors)
    inserted = 0
    try:
        for i in range(ROUNDS):
            clock.move()
            kind = i % 3
            if kind == 0:
                cur.execute("INSERT INTO events VALUES (?, ?)", (i % 7, i))
                inserted += 1
            elif kind == 1:
                cur.execute("BEGIN")
                cur.execute("INSERT INTO events VALUES (?, ?)", (i % 7, i))
                cur.execute("INSERT INTO events VALUES (?, ?)", (i % 7, -i))
                cur.execute("COMMIT")
                inserted += 2
            else:
                cur.execute("UPDATE counter SET n = ? WHERE k = 1", (i,))
    finally:
        stop.set()
        ticker.join(10)
    assert not errors, errors
    assert cur.execute("SELECT sum(c) FROM per_k").fetchall() == [(inserted,)]
    assert cur.execute("SELECT n FROM total").fetchall() == [(max(i for i in range(ROUNDS) if i % 3 == 2),)]


@pytest.mark.parametrize("interactive", [True, False], ids=["interactive", "maintenance-only"])
def test_writers_and_a_reader_under_a_wandering_clock(connect, interactive):
    """Stress: three writer threads and a reader thread over tables with an index and
    materialized views, the clock standing still, jumping and stepping back (moved by the
    writers), the tick running beside them, for a bounded number of rounds.  No internal
    error; every read is consistent (in one read transaction each materialized view equals
    its from-scratch evaluation: both are read at the transaction's one timestamp); and no
    session's time goes back (``mz_now()`` never decreases)."""
    rng = random.Random(7)
    clock = _HeldClock(5_000, rng)
    con = connect(interactive, clock)
    db = con.database
    con.execute("CREATE TABLE a (k int, v int)")
    con.execute("CREATE TABLE b (k int, w int)")
    con.execute("CREATE INDEX ON a (k)")
    con.execute("CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS c, sum(v) AS s FROM a GROUP BY k")
    con.execute("CREATE MATERIALIZED VIEW joined AS SELECT a.k, count(*) AS c FROM a JOIN b ON a.k = b.k "
                "GROUP BY a.k")
    checks = [("SELECT k, c, s FROM agg", "SELECT k, count(*), sum(v) FROM a GROUP BY k"),
              ("SELECT k, c FROM joined", "SELECT a.k, count(*) FROM a JOIN b ON a.k = b.k GROUP BY a.k")]
    stop, errors = threading.Event(), []
    ticker = _ticking(db, stop, errors)
    failures: list = []

    def writer(seed):
        w = db.connect()
        r = random.Random(seed)
        try:
            for i in range(120):
                clock.move()
                k = r.randrange(5)
                choice = r.random()
                if choice < 0.5:
                    w.execute("INSERT INTO a VALUES (?, ?)", (k, r.randrange(100)))
                elif choice < 0.7:
                    w.execute("INSERT INTO b VALUES (?, ?)", (k, i))
                elif choice < 0.85:
                    w.execute("BEGIN")
                    w.execute("INSERT INTO a VALUES (?, ?)", (k, 1))
                    w.execute("INSERT INTO b VALUES (?, ?)", (k, 2))
                    w.execute("COMMIT")
                else:
                    w.execute("DELETE FROM a WHERE k = ?", (k,))
        except BaseException as e:  # noqa: BLE001 - reported by the test
            failures.append(e)
        finally:
            w.close()

    def reader():
        rd = db.connect()
        last = 0
        try:
            for _ in range(60):
                rd.execute("BEGIN")
                now = rd.execute("SELECT mz_now()::text::bigint").fetchall()[0][0]
                for maintained, scratch in checks:
                    got = sorted(rd.execute(maintained).fetchall())
                    want = sorted(rd.execute(scratch).fetchall())
                    if got != want:
                        failures.append(AssertionError(f"at {now}: {maintained} = {got}, from scratch {want}"))
                rd.execute("COMMIT")
                if now < last:
                    failures.append(AssertionError(f"time went back for a session: {last} -> {now}"))
                last = now
        except BaseException as e:  # noqa: BLE001 - reported by the test
            failures.append(e)
        finally:
            rd.close()

    threads = [threading.Thread(target=writer, args=(s,)) for s in range(3)] + [threading.Thread(target=reader)]
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
    finally:
        stop.set()
        ticker.join(10)
    assert not any(th.is_alive() for th in threads)
    assert not errors, errors
    assert not failures, failures[:3]
