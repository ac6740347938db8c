"""CREATE SOURCE ... FROM POSTGRES against a real PostgreSQL 15 (``wal_level=logical``).

PostgreSQL: ``MZLITE_SLT_PG=host:port`` (skipped unless its ``wal_level`` is logical), else a
throwaway one started by .ci/start-postgres (which sets it); skipped when PostgreSQL is not
installed.  Changes reach mzlite when the coordinator ticks (``db.tick()``, called by hand
here, so nothing sleeps).  Checked: the initial snapshot, a randomised workload of
transactions (inserts, updates, deletes, several tables per transaction, NULLs, the types both
share) after which every subsource equals PostgreSQL's table, every PostgreSQL transaction
applied at one mzlite timestamp (never half of one), a data directory closed and reopened
mid-stream, and an ingesting process killed (SIGKILL) three times and restarted (nothing lost
or applied twice either way), a schema change and a TRUNCATE failing their
subsource only, the slot dropped with the source, and the refusals.

Sabotages seen red: the transaction's writes committed one table at a time (the atomicity
test saw a timestamp with half a transfer); the position not checked before applying
(``end > self.lsn``: the reopened source applied a transaction twice); ``drop_slot`` not
called by DROP SOURCE (the slot outlived the source).
"""
from __future__ import annotations

import datetime
import decimal
import os
import random
import subprocess
import time
import uuid

import pytest

import mzlite
from tests.support.postgres import postgres_server

psycopg = pytest.importorskip("psycopg")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def server():
    with postgres_server("no server to replicate from") as (host, port):
        with psycopg.connect(host=host, port=port, user="postgres", dbname="postgres", autocommit=True) as pg:
            if pg.execute("SHOW wal_level").fetchone()[0] != "logical":
                pytest.skip("the PostgreSQL server's wal_level is not logical")
        yield host, port


@pytest.fixture
def pg(server):
    """A psycopg connection (autocommit) with the test tables dropped and recreated empty."""
    host, port = server
    with psycopg.connect(host=host, port=port, user="postgres", dbname="postgres", autocommit=True) as c:
        c.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE NOT active")
        c.execute("DROP PUBLICATION IF EXISTS mz_source")
        c.execute("DROP PUBLICATION IF EXISTS plain_pub")
        c.execute("DROP TABLE IF EXISTS kinds, acct_a, acct_b, plain")
        c.execute("""CREATE TABLE kinds (id int PRIMARY KEY, i2 smallint, i8 bigint, n numeric, f float8,
                     b bool, t text, v varchar(20), d date, ts timestamp, tz timestamptz, j jsonb, by bytea,
                     u uuid, iv interval)""")
        c.execute("CREATE TABLE acct_a (id int PRIMARY KEY, bal int NOT NULL)")
        c.execute("CREATE TABLE acct_b (id int PRIMARY KEY, bal int NOT NULL)")
        for t in ("kinds", "acct_a", "acct_b"):
            c.execute(f"ALTER TABLE {t} REPLICA IDENTITY FULL")
        c.execute("INSERT INTO acct_a SELECT g, 100 FROM generate_series(1, 20) g")
        c.execute("INSERT INTO acct_b SELECT g, 100 FROM generate_series(1, 20) g")
        c.execute("CREATE PUBLICATION mz_source FOR TABLE kinds, acct_a, acct_b")
        c.host, c.port_ = host, port
        yield c


def mz_connect(pg, path=None, interactive=None):
    params = {} if interactive is None else {"enable_compute_interactive_runtime": interactive}
    con = mzlite.connect(path, system_parameters=params) if path else mzlite.connect(system_parameters=params)
    if con.execute("SELECT count(*) FROM mz_connections").fetchall() == [(0,)]:
        con.execute("CREATE SECRET pgpass AS 'postgres'")
        con.execute(f"CREATE CONNECTION pg_connection TO POSTGRES (HOST '{pg.host}', PORT {pg.port_}, "
                    f"USER 'postgres', PASSWORD SECRET pgpass, DATABASE 'postgres')")
    return con


def norm(v):
    if isinstance(v, memoryview):
        return bytes(v)
    if isinstance(v, float):
        return round(v, 9)
    if isinstance(v, datetime.timedelta):
        return v
    return v


def rows_of(cur_rows):
    return sorted((tuple(norm(v) for v in r) for r in cur_rows), key=repr)


def pg_rows(pg, table):
    return rows_of(pg.execute(f"SELECT * FROM {table}").fetchall())


def mz_rows(con, table):
    out = []
    for r in con.execute(f"SELECT * FROM {table}").fetchall():
        out.append(tuple(v.to_timedelta() if hasattr(v, "to_timedelta") else v for v in r))
    return rows_of(out)


def random_kind_row(rng, id):
    def maybe(v):
        return None if rng.random() < 0.2 else v
    return (id, maybe(rng.randint(-32768, 32767)), maybe(rng.randint(-2**62, 2**62)),
            maybe(decimal.Decimal(rng.randint(-10**8, 10**8)) / 1000), maybe(rng.uniform(-1e6, 1e6)),
            maybe(rng.random() < 0.5), maybe(rng.choice(["", "x", "héllo", "a'b", "line\nbreak"])),
            maybe("v" * rng.randint(0, 20)), maybe(datetime.date(2000, 1, 1) + datetime.timedelta(days=rng.randint(0, 9000))),
            maybe(datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=rng.randint(0, 10**8), microseconds=rng.randint(0, 999999))),
            maybe(datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=rng.randint(0, 10**8))),
            maybe(psycopg.types.json.Jsonb({"k": rng.randint(0, 9), "l": [1, None, "s"]})),
            maybe(bytes(rng.randrange(256) for _ in range(rng.randint(0, 8)))), maybe(uuid.UUID(int=rng.getrandbits(128))),
            maybe(datetime.timedelta(days=rng.randint(0, 400), seconds=rng.randint(0, 86399))))


def settle(con, pg, tables, seconds: float = 60.0) -> None:
    """Tick until every subsource in ``tables`` holds what PostgreSQL holds, or ``seconds``
    pass.  One tick is not always enough: the database's own ticker may be polling the slot
    when the test ticks (the test's tick then leaves the poll to it), and that poll may have
    started before the workload's last commit."""
    deadline = time.monotonic() + seconds
    while True:
        con.database.tick()
        if all(mz_rows(con, t) == pg_rows(pg, t) for t in tables) or time.monotonic() > deadline:
            return


def test_snapshot_then_a_random_workload_matches_postgres(pg, interactive):
    rng = random.Random(21)
    ins = "INSERT INTO kinds VALUES (" + ", ".join(["%s"] * 15) + ")"
    for i in range(1, 31):
        pg.execute(ins, random_kind_row(rng, i))
    con = mz_connect(pg, interactive=interactive)
    con.execute("CREATE SOURCE mz_source FROM POSTGRES CONNECTION pg_connection (PUBLICATION 'mz_source') "
                "FOR ALL TABLES")
    assert sorted(r[0] for r in con.execute("SHOW SUBSOURCES ON mz_source").fetchall()) == [
        "acct_a", "acct_b", "kinds", "mz_source_progress"]
    for t in ("kinds", "acct_a", "acct_b"):
        assert mz_rows(con, t) == pg_rows(pg, t), t
    con.execute("CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(i8) AS s, count(t) AS nt FROM kinds")
    con.execute("CREATE VIEW joined AS SELECT a.id, a.bal + b.bal AS both_ FROM acct_a a JOIN acct_b b ON a.id = b.id")
    con.execute("CREATE INDEX ON joined (id)")
    next_id = 31
    for round_ in range(40):
        with pg.transaction():
            for _ in range(rng.randint(1, 5)):
                op = rng.random()
                ids = [r[0] for r in pg.execute("SELECT id FROM kinds").fetchall()]
                if op < 0.4 or not ids:
                    pg.execute(ins, random_kind_row(rng, next_id))
                    next_id += 1
                elif op < 0.7:
                    row = random_kind_row(rng, rng.choice(ids))
                    pg.execute("UPDATE kinds SET i2 = %s, i8 = %s, n = %s, f = %s, b = %s, t = %s, v = %s, d = %s, "
                               "ts = %s, tz = %s, j = %s, by = %s, u = %s, iv = %s WHERE id = %s", row[1:] + row[:1])
                elif op < 0.85:
                    pg.execute("DELETE FROM kinds WHERE id = %s", (rng.choice(ids),))
                else:
                    k = rng.randint(1, 20)
                    pg.execute("UPDATE acct_a SET bal = bal - 1 WHERE id = %s", (k,))
                    pg.execute("UPDATE acct_b SET bal = bal + 1 WHERE id = %s", (k,))
        if round_ % 7 == 0:
            con.database.tick()
    settle(con, pg, ("kinds", "acct_a", "acct_b"))
    for t in ("kinds", "acct_a", "acct_b"):
        assert mz_rows(con, t) == pg_rows(pg, t), t
    want = pg.execute("SELECT count(*), sum(i8), count(t) FROM kinds").fetchone()
    assert con.execute("SELECT * FROM totals").fetchall() == [tuple(want)]
    assert con.execute("SELECT count(*), min(both_), max(both_) FROM joined").fetchall() == [(20, 200, 200)]
    [(_id, received, committed, snapshot, known, applied)] = con.execute(
        "SELECT * FROM mz_internal.mz_source_statistics").fetchall()
    assert snapshot and received > 0 and committed > 0 and known >= applied > 0  # lag: known - applied WAL bytes
    con.close()


def test_each_postgres_transaction_is_one_mzlite_timestamp(pg):
    con = mz_connect(pg)
    con.execute("CREATE SOURCE mz_source FROM POSTGRES CONNECTION pg_connection (PUBLICATION 'mz_source') "
                "FOR TABLES (acct_a, acct_b)")
    rng = random.Random(5)
    for _ in range(30):
        k = rng.randint(1, 20)
        with pg.transaction():
            pg.execute("UPDATE acct_a SET bal = bal - 3 WHERE id = %s", (k,))
            pg.execute("UPDATE acct_b SET bal = bal + 3 WHERE id = %s", (k,))
        if rng.random() < 0.3:
            con.database.tick()
    settle(con, pg, ("acct_a", "acct_b"))
    db = con.database
    by_time: dict = {}
    for name in ("acct_a", "acct_b"):
        for row, t, d in db.storage.collections[db.catalog.resolve(name).id].updates_between(0, None):
            by_time[t] = by_time.get(t, 0) + row[1] * d
    first = min(by_time)
    assert by_time.pop(first) == 4000  # the snapshot
    assert len(by_time) == 30 and all(v == 0 for v in by_time.values()), by_time  # no half transfer anywhere
    progress = con.execute("SELECT lsn FROM mz_source_progress").fetchall()
    assert len(progress) == 1 and progress[0][0] > 0
    con.close()


def test_a_reopened_source_resumes_without_loss_or_duplicates(pg, tmp_path, monkeypatch):
    """The first database never advances its slot (as if it stopped between each commit and
    the advance): the reopened source is handed every change again and must skip what it
    applied, by position."""
    from storage.sources import postgres
    monkeypatch.setattr(postgres.PostgresIngestion, "_advance_slot", lambda self: None)
    con = mz_connect(pg, str(tmp_path))
    con.execute("CREATE SOURCE mz_source FROM POSTGRES CONNECTION pg_connection (PUBLICATION 'mz_source') "
                "FOR TABLES (acct_a)")
    for k in range(1, 6):
        pg.execute("INSERT INTO acct_a VALUES (%s, %s)", (100 + k, k))
    con.database.tick()
    assert mz_rows(con, "acct_a") == pg_rows(pg, "acct_a")
    for k in range(6, 11):  # committed in PostgreSQL but not yet read by mzlite
        pg.execute("INSERT INTO acct_a VALUES (%s, %s)", (100 + k, k))
    con.close()
    monkeypatch.undo()
    for k in range(11, 16):  # while mzlite is closed
        pg.execute("INSERT INTO acct_a VALUES (%s, %s)", (100 + k, k))
    con = mzlite.connect(str(tmp_path))
    con.database.tick()
    assert mz_rows(con, "acct_a") == pg_rows(pg, "acct_a")
    assert con.execute("SELECT count(*), count(DISTINCT id) FROM acct_a").fetchall() == [(35, 35)]
    con.close()


def test_schema_change_and_truncate_fail_their_subsource_only(pg):
    con = mz_connect(pg)
    con.execute("CREATE SOURCE mz_source FROM POSTGRES CONNECTION pg_connection (PUBLICATION 'mz_source') "
                "FOR ALL TABLES")
    pg.execute("ALTER TABLE acct_a ADD COLUMN note text")
    pg.execute("INSERT INTO acct_a VALUES (99, 1, 'x')")
    pg.execute("TRUNCATE acct_b")
    pg.execute("INSERT INTO kinds (id) VALUES (1)")
    con.database.tick()
    with pytest.raises(mzlite.Error) as e:
        con.execute("SELECT * FROM acct_a")
    assert "incompatible schema change" in str(e.value)
    with pytest.raises(mzlite.Error) as e:
        con.execute("SELECT * FROM acct_b")
    assert "truncated" in str(e.value)
    assert con.execute("SELECT id FROM kinds").fetchall() == [(1,)]
    statuses = {r[1]: (r[3], r[4]) for r in con.execute("SELECT * FROM mz_internal.mz_source_statuses").fetchall()}
    assert statuses["mz_source"] == ("running", statuses["mz_source"][1])
    assert statuses["acct_a"][0] == "stalled" and "incompatible schema change" in statuses["acct_a"][1]
    assert statuses["acct_b"][0] == "stalled" and "truncated" in statuses["acct_b"][1]
    assert statuses["kinds"] == ("running", None)
    con.close()


def test_drop_source_drops_the_slot(pg):
    con = mz_connect(pg)
    con.execute("CREATE SOURCE mz_source FROM POSTGRES CONNECTION pg_connection (PUBLICATION 'mz_source') "
                "FOR ALL TABLES")
    slots = [r[0] for r in pg.execute("SELECT slot_name FROM pg_replication_slots").fetchall()]
    assert len(slots) == 1 and slots[0].startswith("mzlite_")
    with pytest.raises(mzlite.Error) as e:
        con.execute("DROP CONNECTION pg_connection")
    assert e.value.sqlstate == "2BP01"
    con.execute("DROP SOURCE mz_source CASCADE")
    assert pg.execute("SELECT count(*) FROM pg_replication_slots").fetchone()[0] == 0
    con.close()


def test_what_a_source_cannot_read_is_refused(pg):
    con = mz_connect(pg)
    pg.execute("CREATE TABLE plain (id int, p point)")
    pg.execute("CREATE PUBLICATION plain_pub FOR TABLE plain")
    cases = [("(PUBLICATION 'nope') FOR ALL TABLES", "42704", "nope"),
             ("(PUBLICATION 'plain_pub') FOR ALL TABLES", "55000", "REPLICA IDENTITY FULL"),
             ("(PUBLICATION 'mz_source') FOR TABLES (missing)", "42704", "missing"),
             ("(PUBLICATION 'mz_source') FOR SCHEMAS (nope)", "42704", "nope"),
             ("(PUBLICATION 'mz_source', TEXT COLUMNS (kinds.t)) FOR ALL TABLES", "0A000", "TEXT COLUMNS"),
             ("(PUBLICATION 'mz_source')", "42601", "FOR ALL TABLES")]
    for tail, state, words in cases:
        with pytest.raises(mzlite.Error) as e:
            con.execute(f"CREATE SOURCE s FROM POSTGRES CONNECTION pg_connection {tail}")
        assert e.value.sqlstate == state and words in str(e.value), (tail, str(e.value))
    pg.execute("ALTER TABLE plain REPLICA IDENTITY FULL")
    with pytest.raises(mzlite.Error) as e:
        con.execute("CREATE SOURCE s FROM POSTGRES CONNECTION pg_connection (PUBLICATION 'plain_pub') FOR ALL TABLES")
    assert e.value.sqlstate == "0A000" and "point" in str(e.value)
    assert pg.execute("SELECT count(*) FROM pg_replication_slots").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM mz_sources").fetchall() == [(0,)]
    con.close()


def test_for_schemas_reads_the_publication_tables_in_those_schemas(pg):
    """``FOR SCHEMAS (s)`` makes a subsource of each table of the publication in schema ``s``
    and of no other.  Sabotage seen red: ``describe`` ignoring ``schemas`` (public's tables
    became subsources too)."""
    pg.execute("DROP SCHEMA IF EXISTS other CASCADE")
    pg.execute("CREATE SCHEMA other")
    pg.execute("CREATE TABLE other.extra (id int PRIMARY KEY, note text)")
    pg.execute("ALTER TABLE other.extra REPLICA IDENTITY FULL")
    pg.execute("INSERT INTO other.extra VALUES (1, 'one'), (2, 'two')")
    pg.execute("ALTER PUBLICATION mz_source ADD TABLE other.extra")
    con = mz_connect(pg)
    try:
        con.execute("CREATE SOURCE s FROM POSTGRES CONNECTION pg_connection (PUBLICATION 'mz_source') "
                    "FOR SCHEMAS (other)")
        subs = sorted(r[0] for r in con.execute("SHOW SUBSOURCES ON s").fetchall())
        assert [n for n in subs if not n.endswith("_progress")] == ["extra"]
        assert sorted(con.execute("SELECT * FROM extra").fetchall()) == [(1, "one"), (2, "two")]
        con.execute("DROP SOURCE s CASCADE")
    finally:
        con.close()
        pg.execute("DROP SCHEMA other CASCADE")


CHILD = """
import sys, mzlite
con = mzlite.connect(sys.argv[1])
if sys.argv[2] == "create":
    con.execute("CREATE SECRET pgpass AS 'postgres'")
    con.execute(f"CREATE CONNECTION pg_connection TO POSTGRES (HOST '{sys.argv[3]}', PORT {sys.argv[4]}, "
                "USER 'postgres', PASSWORD SECRET pgpass, DATABASE 'postgres')")
    con.execute("CREATE SOURCE mz_source FROM POSTGRES CONNECTION pg_connection (PUBLICATION 'mz_source') "
                "FOR TABLES (acct_a, acct_b)")
print("ready", flush=True)
while True:
    con.database.tick()
"""


def test_killed_mid_stream_and_restarted_nothing_lost_or_doubled(pg, tmp_path):
    """A process ingesting from PostgreSQL is killed (SIGKILL) three times while transfers
    commit in PostgreSQL; each time a new process reopens the data directory.  At the end every
    subsource equals PostgreSQL's table and the balances still sum to their total: no
    transaction lost, none applied twice."""
    import sys
    rng = random.Random(9)
    env = dict(os.environ, PYTHONPATH=ROOT)
    for round_ in range(3):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), "create" if round_ == 0 else "open",
                                  pg.host, str(pg.port_)], stdout=subprocess.PIPE, env=env)
        assert child.stdout.readline().strip() == b"ready"
        for _ in range(40):
            k = rng.randint(1, 20)
            with pg.transaction():
                pg.execute("UPDATE acct_a SET bal = bal - 2 WHERE id = %s", (k,))
                pg.execute("UPDATE acct_b SET bal = bal + 2 WHERE id = %s", (k,))
        child.kill()
        child.wait()
        child.stdout.close()
    con = mzlite.connect(str(tmp_path))
    con.database.tick()
    for t in ("acct_a", "acct_b"):
        assert mz_rows(con, t) == pg_rows(pg, t), t
    assert con.execute("SELECT (SELECT sum(bal) FROM acct_a) + (SELECT sum(bal) FROM acct_b)").fetchall() == [(4000,)]
    con.execute("DROP SOURCE mz_source CASCADE")
    con.close()
