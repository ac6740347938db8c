"""Threads: connections and cursors used from several threads at once never corrupt state
or deadlock, and no reader ever sees part of a transaction.

The invariant: transfers move value between accounts in write transactions of two
statements (a debit INSERT into one table, a credit INSERT into another); every read, by
any path (a peek dataflow over the tables, a materialized view's index, a fast-path peek,
serializable or strict serializable), sees the total unchanged.  Thread joins carry a
generous timeout only so that a deadlock fails instead of hanging the suite."""
from __future__ import annotations

import random
import threading

import pytest

import mzlite

JOIN = 120  # seconds; a guard against deadlock, never a timing assertion
TOTAL = 300
ACCOUNTS = (1, 2, 3)

SCHEMA = """
CREATE TABLE debits (acct int NOT NULL, amount int NOT NULL);
CREATE TABLE credits (acct int NOT NULL, amount int NOT NULL);
CREATE VIEW moves AS SELECT acct, -amount AS delta FROM debits UNION ALL SELECT acct, amount FROM credits;
CREATE MATERIALIZED VIEW balances AS SELECT acct, sum(delta) AS bal FROM moves GROUP BY acct;
CREATE INDEX balances_acct ON balances (acct);
INSERT INTO credits VALUES (1, 100), (2, 100), (3, 100);
"""

READS = [
    # (description, sql, how to get the total from the rows)
    ("peek dataflow over both tables",
     "SELECT (SELECT coalesce(sum(amount), 0) FROM credits) - (SELECT coalesce(sum(amount), 0) FROM debits)",
     lambda rows: rows[0][0]),
    ("the materialized view, summed in SQL", "SELECT sum(bal) FROM balances", lambda rows: rows[0][0]),
    ("the materialized view's index, summed here", "SELECT acct, bal FROM balances",
     lambda rows: sum(r[1] for r in rows)),
    ("the view, unindexed", "SELECT sum(delta) FROM moves", lambda rows: rows[0][0]),
]


def transfer(con, a: int, b: int, k: int) -> None:
    con.execute("BEGIN")
    con.execute("INSERT INTO debits VALUES (?, ?)", (a, k))
    con.execute("INSERT INTO credits VALUES (?, ?)", (b, k))
    con.execute("COMMIT")


def check_all_reads(con) -> None:
    for what, sql, total in READS:
        got = total(con.execute(sql).fetchall())
        assert got == TOTAL, f"{what}: saw {got}"


@pytest.fixture
def db(con):  # the shared connection (both settings) with this module's schema
    con.executescript(SCHEMA)
    return con


def test_a_reader_never_sees_half_a_transaction_interleaved_by_hand(db):
    """Deterministic interleaving.  Sabotage: ``Writer._apply`` committing each statement's
    writes at once instead of buffering them until COMMIT made the reader see 300 - 5."""
    writer, reader = db.connect(), db.connect()
    writer.execute("BEGIN")
    writer.execute("INSERT INTO debits VALUES (1, 5)")
    check_all_reads(reader)
    writer.execute("INSERT INTO credits VALUES (2, 5)")
    check_all_reads(reader)
    writer.execute("COMMIT")
    check_all_reads(reader)
    assert reader.execute("SELECT bal FROM balances WHERE acct = 1").fetchone() == (95,)
    writer.close()
    reader.close()


def test_a_read_transaction_sees_one_snapshot(db):
    writer, reader = db.connect(), db.connect()
    reader.execute("BEGIN")
    before = reader.execute("SELECT count(*) FROM debits").fetchone()
    transfer(writer, 1, 2, 7)
    assert reader.execute("SELECT count(*) FROM debits").fetchone() == before
    check_all_reads(reader)
    reader.execute("COMMIT")
    assert reader.execute("SELECT count(*) FROM debits").fetchone() == (before[0] + 1,)
    writer.close()
    reader.close()


def test_writers_and_readers_on_many_threads_keep_the_invariant(db):
    """Writers on their own connections transfer concurrently; readers on other connections
    (one serializable) check the total on every read, by every read path."""
    n_writers, transfers = 3, 20
    errors: list = []
    done = threading.Event()
    reads = [0]
    start = threading.Barrier(n_writers + 3)

    def writer(seed):
        rng = random.Random(seed)
        con = db.connect()
        try:
            start.wait()
            for _ in range(transfers):
                a, b = rng.sample(ACCOUNTS, 2)
                transfer(con, a, b, rng.randint(1, 10))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            con.close()

    def reader(isolation):
        con = db.connect()
        con.execute(f"SET transaction_isolation = '{isolation}'")
        try:
            start.wait()
            while True:
                finished = done.is_set()
                check_all_reads(con)
                reads[0] += 1
                if finished:
                    return
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            con.close()

    writers = [threading.Thread(target=writer, args=(i,)) for i in range(n_writers)]
    readers = [threading.Thread(target=reader, args=(iso,))
               for iso in ("strict serializable", "strict serializable", "serializable")]
    for th in writers + readers:
        th.start()
    for th in writers:
        th.join(JOIN)
    done.set()
    for th in readers:
        th.join(JOIN)
    assert not any(th.is_alive() for th in writers + readers), "deadlock"
    assert errors == []
    assert reads[0] >= 3
    check_all_reads(db)
    n = db.execute("SELECT count(*) FROM debits").fetchone()[0]
    assert n == n_writers * transfers


def test_one_connection_shared_by_many_threads(db):
    """Threads share one connection, each with its own cursor; statements interleave but never
    corrupt the session or the results."""
    db.execute("CREATE TABLE log (thread int, i int)")
    errors: list = []
    start = threading.Barrier(4)

    def work(tid):
        try:
            start.wait()
            cur = db.cursor()
            for i in range(25):
                cur.execute("INSERT INTO log VALUES (?, ?)", (tid, i))
                assert cur.rowcount == 1
                cur.execute("SELECT count(*) FROM log WHERE thread = ?", (tid,))
                assert cur.fetchall() == [(i + 1,)]
                assert cur.description[0][0] == "count"
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(JOIN)
    assert not any(th.is_alive() for th in threads), "deadlock"
    assert errors == []
    assert db.execute("SELECT count(*) FROM log").fetchone() == (100,)


def test_ddl_reads_and_writes_from_many_threads(db):
    """Views come and go while other threads read and write: every statement either works or
    fails with a user error (a dropped view is 42P01), never an InternalError or a hang."""
    errors: list = []
    start = threading.Barrier(3)

    def ddl():
        con = db.connect()
        try:
            start.wait()
            for i in range(8):
                con.execute(f"CREATE VIEW v{i} AS SELECT acct, bal FROM balances WHERE bal > {i}")
                con.execute(f"CREATE INDEX v{i}_idx ON v{i} (acct)")
                con.execute(f"SELECT * FROM v{i}").fetchall()
                con.execute(f"DROP VIEW v{i} CASCADE")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            con.close()

    def writes():
        con = db.connect()
        try:
            start.wait()
            for i in range(20):
                transfer(con, 1 + i % 3, 1 + (i + 1) % 3, 1)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            con.close()

    def reads():
        con = db.connect()
        try:
            start.wait()
            for i in range(20):
                check_all_reads(con)
                try:
                    con.execute(f"SELECT count(*) FROM v{i % 8}").fetchall()
                except mzlite.ProgrammingError as e:
                    assert e.sqlstate == "42P01"
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            con.close()

    threads = [threading.Thread(target=f) for f in (ddl, writes, reads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(JOIN)
    assert not any(th.is_alive() for th in threads), "deadlock"
    assert errors == []
    check_all_reads(db)


def test_separate_databases_on_separate_threads(db):
    """Databases share nothing: statements on two databases run on two threads at once."""
    errors: list = []

    def work(i):
        try:
            with mzlite.connect() as con:
                con.execute("CREATE TABLE t (x int)")
                con.executemany("INSERT INTO t VALUES (?)", [(j,) for j in range(50)])
                assert con.execute("SELECT sum(x) FROM t").fetchone() == (sum(range(50)),)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(JOIN)
    assert not any(th.is_alive() for th in threads)
    assert errors == []
