"""Load generator sources: COUNTER, AUCTION, MARKETING (TPCH: ``tests/test_source_tpch.py``).

Time is a ``ManualClock``: a source's tick ``k`` is due ``k`` tick intervals after its first
(written by CREATE SOURCE itself), and a read ingests every tick due by the clock before it
chooses its timestamp, so a test moves the clock and reads -- nothing sleeps.  Every test
runs with the interactive runtime on and off.

Sabotages seen red (each named at its test): the read path not ingesting due ticks before
choosing its timestamp; the progress update committed apart from the tick's rows; the
generator state not restored after a reopen; DROP SOURCE leaving the ingestion running; the
coordinator's tick not ingesting.
"""
from __future__ import annotations

import datetime

import pytest

import mzlite
from mzlite.oracle import ManualClock

T0 = 1_700_000_000_000  # ms: 2023-11-14 22:13:20 UTC


@pytest.fixture
def clock_start():
    return T0


def rows(con, sql):
    return sorted(con.execute(sql).fetchall())


def ts(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)


def test_counter_ticks_on_the_engine_clock(clocked_con):
    """Sabotage: without ``sources.run`` in ``Reader._now_or_since`` the read after moving the
    clock saw only the first tick."""
    con = clocked_con
    con.execute("CREATE SOURCE c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '1s')")
    assert rows(con, "SELECT * FROM c") == [(1,)]
    assert rows(con, "SELECT * FROM c_progress") == [(1,)]
    con.clock.advance(999)
    assert rows(con, "SELECT * FROM c") == [(1,)]
    con.clock.advance(1)
    assert rows(con, "SELECT * FROM c") == [(1,), (2,)]
    con.clock.advance(2500)
    assert rows(con, "SELECT * FROM c") == [(1,), (2,), (3,), (4,)]
    assert rows(con, "SELECT \"offset\" FROM c_progress") == [(4,)]
    desc = con.execute("SELECT * FROM c").description
    assert [(d[0], d[1]) for d in desc] == [("counter", "bigint")]


def test_counter_up_to_as_of_and_max_cardinality(clocked_con):
    con = clocked_con
    con.execute("CREATE SOURCE h FROM LOAD GENERATOR COUNTER (AS OF 100, UP TO 200)")
    assert rows(con, "SELECT count(*), max(counter) FROM h") == [(101, 101)]  # the history up to AS OF, at once
    con.execute("CREATE SOURCE big FROM LOAD GENERATOR COUNTER (AS OF 12000)")  # beyond MAX_TICKS_PER_RUN
    assert rows(con, "SELECT count(*), max(counter) FROM big") == [(12001, 12001)]
    db = con.database
    for name in ("h", "big"):
        coll = db.storage.collections[db.catalog.resolve(name).id]
        assert len({t for _, t, _ in coll.updates_between(0, None)}) == 1, name  # one commit
    con.execute("CREATE SOURCE u FROM LOAD GENERATOR COUNTER (TICK INTERVAL '100ms', UP TO 3)")
    con.execute("CREATE SOURCE a FROM LOAD GENERATOR COUNTER (TICK INTERVAL '100ms', AS OF 5, UP TO 7)")
    con.execute("CREATE SOURCE m FROM LOAD GENERATOR COUNTER (TICK INTERVAL '100ms', MAX CARDINALITY 2)")
    con.clock.advance(10_000)
    assert rows(con, "SELECT * FROM u") == [(1,), (2,), (3,)]
    assert rows(con, "SELECT * FROM u_progress") == [(3,)]
    assert rows(con, "SELECT * FROM a") == [(k,) for k in range(1, 8)]  # AS OF 5: ticks 0..5 at once
    assert rows(con, "SELECT * FROM m") == [(100,), (101,)]  # 101 ticks, the last two kept


def test_each_tick_is_one_timestamp_with_its_progress(clocked_con):
    """At every timestamp the counter's rows and its progress offset agree.  Sabotage: the
    progress update committed in a second ``commit`` after the rows made
    ``SUBSCRIBE ... AS OF`` show a time with the new row and the old offset."""
    con = clocked_con
    con.execute("CREATE SOURCE c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '10ms')")
    start = con.execute("SELECT mz_now()").fetchall()[0][0]
    con.clock.advance(50)
    end = con.execute("SELECT mz_now()").fetchall()[0][0]
    con.execute("CREATE VIEW both_ AS SELECT counter AS v, 'data' AS k FROM c "
                "UNION ALL SELECT \"offset\", 'progress' FROM c_progress")
    changes = con.execute(f"SUBSCRIBE both_ AS OF {start} UP TO {end + 1}").fetchall()
    by_time: dict = {}
    for t, diff, v, k in changes:
        by_time.setdefault(t, []).append((k, v, diff))
    state = {"data": 0, "progress": 0}
    for t in sorted(by_time):
        for k, v, diff in by_time[t]:
            if diff > 0 and (k == "data" or v > state[k]):
                state[k] = max(state[k], v)
        assert state["data"] == state["progress"], (t, by_time[t])
    assert state == {"data": 6, "progress": 6}


def test_the_coordinators_tick_ingests(clocked_con):
    """Sabotage: without ``sources.run`` in ``Database.tick`` a serializable read (which never
    catches up with the clock itself) saw the first tick only."""
    con = clocked_con
    con.execute("CREATE SOURCE c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '1s')")
    con.execute("SET transaction_isolation = 'serializable'")
    con.clock.advance(3000)
    con.database.tick()
    assert rows(con, "SELECT * FROM c") == [(1,), (2,), (3,), (4,)]


def test_auction_subsources_have_materializes_columns_and_shape(clocked_con):
    con = clocked_con
    con.execute("CREATE SOURCE auction_house FROM LOAD GENERATOR AUCTION (TICK INTERVAL '1s') FOR ALL TABLES")
    cols = {}
    for t in ("organizations", "users", "accounts", "auctions", "bids"):
        cols[t] = [(d[0], d[1]) for d in con.execute(f"SELECT * FROM {t}").description]
    assert cols == {
        "organizations": [("id", "bigint"), ("name", "text")],
        "users": [("id", "bigint"), ("org_id", "bigint"), ("name", "text")],
        "accounts": [("id", "bigint"), ("org_id", "bigint"), ("balance", "bigint")],
        "auctions": [("id", "bigint"), ("seller", "bigint"), ("item", "text"), ("end_time", "timestamp with time zone")],
        "bids": [("id", "bigint"), ("buyer", "bigint"), ("auction_id", "bigint"), ("amount", "integer"),
                 ("bid_time", "timestamp with time zone")],
    }
    assert rows(con, "SELECT count(*), min(id), max(id) FROM organizations") == [(75, 1, 75)]
    assert rows(con, "SELECT count(*), min(id), max(id), count(DISTINCT org_id) FROM users") == [(4076, 1, 4076, 75)]
    assert rows(con, "SELECT count(*) FROM accounts WHERE id = org_id + 42 AND balance = 10000") == [(75,)]
    assert rows(con, "SELECT count(*) FROM auctions") == [(0,)]
    con.clock.advance(1000)  # the next tick writes one auction, each later tick one of its bids
    [(aid, seller, item, end)] = rows(con, "SELECT * FROM auctions")
    assert aid == 1 and 1 <= seller <= 4076 and end == ts(T0 + 1000 + 10_000)
    assert item in ("Signed Memorabilia", "City Bar Crawl", "Best Pizza in Town", "Gift Basket", "Custom Art")
    assert rows(con, "SELECT count(*) FROM bids") == [(0,)]
    con.clock.advance(1000)
    assert rows(con, "SELECT id, auction_id, bid_time FROM bids") == [(10, 1, ts(T0 + 1000))]
    con.clock.advance(60_000)
    bids = rows(con, "SELECT id, auction_id, amount, bid_time, buyer FROM bids")
    auctions = rows(con, "SELECT id, end_time FROM auctions")
    assert len(auctions) >= 5
    ends = dict(auctions)
    for bid_id, auction_id, amount, bid_time, buyer in bids:
        i = bid_id - 10 * auction_id
        assert 0 <= i <= 8 and 1 <= amount <= 99 and 1 <= buyer <= 4076
        assert bid_time == ends[auction_id] - datetime.timedelta(seconds=10 - i)
    per_auction = rows(con, "SELECT auction_id, count(*) FROM bids GROUP BY auction_id")
    assert all(2 <= n <= 9 for a, n in per_auction[:-1])  # the last may still be arriving
    assert len(auctions) + len(bids) == 62  # one row per tick: 62 ticks after the first batch


def test_same_schedule_same_data(connect, interactive):
    """The generators are deterministic: two databases on the same clock schedule agree."""
    got = []
    for _ in range(2):
        con = connect(interactive, clock=ManualClock(T0))
        con.execute("CREATE SOURCE a FROM LOAD GENERATOR AUCTION (TICK INTERVAL '1s') FOR ALL TABLES")
        con.execute("CREATE SOURCE m FROM LOAD GENERATOR MARKETING (TICK INTERVAL '1s') FOR ALL TABLES")
        con.clock.advance(30_000)
        got.append([rows(con, f"SELECT * FROM {t}") for t in ("auctions", "bids", "leads", "clicks", "coupons")])
    assert got[0] == got[1]


def test_marketing_subsources_and_conversions(clocked_con):
    con = clocked_con
    con.execute("CREATE SOURCE mk FROM LOAD GENERATOR MARKETING (TICK INTERVAL '1s') FOR ALL TABLES")
    assert [r[0] for r in rows(con, "SHOW SOURCES")] == sorted(
        ["mk", "mk_progress", "customers", "impressions", "clicks", "leads", "coupons", "conversion_predictions"])
    assert [(d[0], d[1]) for d in con.execute("SELECT * FROM leads").description] == [
        ("id", "bigint"), ("customer_id", "bigint"), ("created_at", "timestamp with time zone"), ("converted_at", "timestamp with time zone"),
        ("conversion_amount", "bigint")]
    assert [(d[0], d[1]) for d in con.execute("SELECT * FROM conversion_predictions").description] == [
        ("lead_id", "bigint"), ("experiment_bucket", "text"), ("predicted_at", "timestamp with time zone"), ("score", "double precision")]
    assert rows(con, "SELECT count(*), min(id), max(id) FROM customers") == [(50, 0, 49)]
    assert rows(con, "SELECT count(*) FROM customers WHERE income >= 5000000 AND income < 10000000") == [(50,)]
    con.clock.advance(200_000)
    assert rows(con, "SELECT count(*) FROM impressions") == [(200,)]
    assert rows(con, "SELECT count(*) FROM leads") == [(200,)]  # a conversion replaces its lead's row
    assert rows(con, "SELECT count(*) FROM conversion_predictions") == [(200,)]
    converted = rows(con, "SELECT count(*) FROM leads WHERE converted_at IS NOT NULL "
                          "AND conversion_amount BETWEEN 1000 AND 24999 AND converted_at > created_at")
    assert 20 < converted[0][0] < 200
    assert rows(con, "SELECT count(*) FROM clicks c JOIN impressions i ON c.impression_id = i.id "
                     "WHERE c.click_time < i.impression_time + INTERVAL '20 seconds'") == [(0,)]
    assert rows(con, "SELECT count(*) FROM coupons c JOIN conversion_predictions p ON c.lead_id = p.lead_id "
                     "WHERE p.score > 0.5 OR p.experiment_bucket <> 'experiment'") == [(0,)]


def test_subsources_are_read_only(clocked_con):
    con = clocked_con
    con.execute("CREATE SOURCE ah FROM LOAD GENERATOR AUCTION FOR ALL TABLES")
    for sql in ["INSERT INTO bids VALUES (1, 1, 1, 1, now())", "UPDATE users SET name = 'x'", "DELETE FROM accounts",
                "INSERT INTO ah_progress VALUES (7)", "COPY bids FROM STDIN"]:
        with pytest.raises(mzlite.ProgrammingError) as e:
            con.execute(sql)
        assert e.value.sqlstate == "42809" and "written only by the source itself" in str(e.value), sql
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("SELECT * FROM ah")
    assert e.value.sqlstate == "42809" and "subsource" in str(e.value)


def test_show_sources_mz_sources_and_drop(clocked_con):
    """Sabotage: ``drop_source_item`` not removing the ingestion made the next read fail
    committing to a dropped collection."""
    con = clocked_con
    con.execute("CREATE SOURCE c FROM LOAD GENERATOR COUNTER")
    con.execute("CREATE SOURCE ah FROM LOAD GENERATOR AUCTION FOR TABLES (bids, auctions AS a) "
                "EXPOSE PROGRESS AS ah_prog")
    assert rows(con, "SHOW SOURCES") == [
        ("a", "subsource", "quickstart", ""), ("ah", "load-generator", "quickstart", ""),
        ("ah_prog", "progress", None, ""), ("bids", "subsource", "quickstart", ""), ("c", "load-generator", "quickstart", ""),
        ("c_progress", "progress", None, "")]
    assert rows(con, "SELECT name, type FROM mz_sources") == [
        ("a", "subsource"), ("ah", "load-generator"), ("ah_prog", "progress"), ("bids", "subsource"),
        ("c", "load-generator"), ("c_progress", "progress")]
    assert "LOAD GENERATOR COUNTER" in con.execute("SHOW CREATE SOURCE c").fetchall()[0][1]
    assert rows(con, "SELECT name, type, status FROM mz_internal.mz_source_statuses") == [
        ("a", "subsource", "running"), ("ah", "load-generator", "running"), ("bids", "subsource", "running"),
        ("c", "load-generator", "running")]
    assert rows(con, "SELECT offset_known, offset_committed, snapshot_committed FROM mz_source_statistics") == [
        (1, 1, True), (1, 1, True)]
    assert con.execute("SHOW CREATE SOURCE bids").fetchall()[0][1].startswith(
        'CREATE SUBSOURCE "materialize"."public"."bids" ("id" "pg_catalog"."int8" NOT NULL, ')
    assert "WITH (PROGRESS = true)" in con.execute("SHOW CREATE SOURCE c_progress").fetchall()[0][1]
    assert rows(con, "SHOW SUBSOURCES ON ah") == [("a", "subsource"), ("ah_prog", "progress"), ("bids", "subsource")]
    assert len(rows(con, "SHOW SUBSOURCES")) == 4
    con.execute("CREATE VIEW n AS SELECT count(*) FROM bids")
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("DROP SOURCE ah")
    assert e.value.sqlstate == "2BP01"
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("DROP SOURCE bids")
    assert e.value.sqlstate == "2BP01" and "view n" in str(e.value)
    with pytest.raises(mzlite.NotSupportedError):
        con.execute("DROP SOURCE c_progress")
    con.execute("DROP SOURCE c")  # its progress collection goes with it
    con.execute("DROP SOURCE ah CASCADE")
    assert rows(con, "SHOW SOURCES") == [] and rows(con, "SHOW VIEWS") == []
    con.execute("DROP SOURCE IF EXISTS ah")
    con.clock.advance(5000)
    assert rows(con, "SELECT count(*) FROM mz_sources") == [(0,)]
    assert not con.database.storage.sources._by_id


@pytest.mark.parametrize("sql, sqlstate, words", [
    ("CREATE SOURCE s FROM POSTGRES CONNECTION pg (PUBLICATION 'p') FOR ALL TABLES", "42P01", "'pg'"),
    ("CREATE SOURCE s FROM POSTGRES (PUBLICATION 'p') FOR ALL TABLES", "0A000", "PostgreSQL"),
    ("CREATE SOURCE s FROM KAFKA CONNECTION k (TOPIC 't')", "0A000", "Kafka"),
    ("CREATE SOURCE s FROM MYSQL CONNECTION m FOR ALL TABLES", "0A000", "MySQL"),
    ("CREATE SOURCE s FROM SQL SERVER CONNECTION m FOR ALL TABLES", "0A000", "SQL Server"),
    ("CREATE SOURCE s FROM WEBHOOK BODY FORMAT JSON ARRAY", "0A000", "JSON ARRAY"),
    ("CREATE SOURCE s FROM WEBHOOK BODY FORMAT JSON INCLUDE HEADERS ('x')", "0A000", "header filter"),
    ("CREATE SOURCE s FROM WEBHOOK BODY FORMAT TEXT CHECK (WITH (BODY) length(body))", "42804", "boolean"),
    ("CREATE SOURCE s FROM WEBHOOK BODY FORMAT TEXT CHECK (WITH (SECRET nope) true)", "42P01", "nope"),
    ("CREATE SOURCE s FROM WEBHOOK FORMAT JSON", "42601", "syntax error"),
    ("CREATE SOURCE s FROM LOAD GENERATOR KEY VALUE (KEYS 4)", "0A000", "LOAD GENERATOR KEY"),
    ("CREATE SOURCE s FROM LOAD GENERATOR DATUMS", "0A000", "DATUMS"),
    ("CREATE SOURCE s FROM LOAD GENERATOR COUNTER (SCALE FACTOR 1)", "0A000", "option SCALE FACTOR"),
    ("CREATE SOURCE s FROM LOAD GENERATOR COUNTER WITH (RETAIN HISTORY = FOR '1h')", "0A000", "WITH"),
    ("CREATE SOURCE s FROM LOAD GENERATOR AUCTION", "42601", "FOR ALL TABLES"),
    ("CREATE SOURCE s FROM LOAD GENERATOR COUNTER FOR ALL TABLES", "42601", "multi-output"),
    ("CREATE SOURCE s FROM LOAD GENERATOR AUCTION FOR SCHEMAS (x)", "0A000", "FOR SCHEMAS"),
    ("CREATE SOURCE s FROM LOAD GENERATOR COUNTER (TICK INTERVAL 'soon')", "22007", "interval"),
    ("CREATE SOURCE s FROM LOAD GENERATOR COUNTER (TICK INTERVAL '0s')", "22023", "TICK INTERVAL"),
    ("CREATE SOURCE s FROM LOAD GENERATOR COUNTER (UP TO -1)", "22023", "UP TO"),
    ("CREATE SOURCE s FROM LOAD GENERATOR COUNTER (AS OF 5, UP TO 2)", "22023", "UP TO"),
    ("CREATE SOURCE s FROM LOAD GENERATOR AUCTION FOR TABLES (nope)", "42704", "nope"),
    ("CREATE SOURCE s FROM SOMEWHERE", "42601", "syntax error"),
    ("ALTER SOURCE s ADD SUBSOURCE t", "0A000", "ALTER SOURCE"),
    ("CREATE TABLE t FROM SOURCE s (REFERENCE bids)", "0A000", "CREATE TABLE ... FROM SOURCE"),
    ("CREATE SUBSOURCE x (a int8)", "0A000", "CREATE SUBSOURCE"),
    ("COMMENT ON SOURCE s IS 'x'", "0A000", "COMMENT ON SOURCE"),
])
def test_what_cannot_be_honoured_is_refused_by_name(clocked_con, sql, sqlstate, words):
    with pytest.raises(mzlite.Error) as e:
        clocked_con.execute(sql)
    assert e.value.sqlstate == sqlstate and words in str(e.value), str(e.value)
    assert rows(clocked_con, "SELECT count(*) FROM mz_sources") == [(0,)]


def test_a_name_taken_refuses_the_whole_source(clocked_con):
    con = clocked_con
    con.execute("CREATE TABLE bids (x int)")
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("CREATE SOURCE ah FROM LOAD GENERATOR AUCTION FOR ALL TABLES")
    assert e.value.sqlstate == "42710" and "bids" in str(e.value)
    assert rows(con, "SELECT count(*) FROM mz_sources") == [(0,)]
    con.execute("CREATE SOURCE IF NOT EXISTS ah2 FROM LOAD GENERATOR COUNTER")
    con.execute("CREATE SOURCE IF NOT EXISTS ah2 FROM LOAD GENERATOR COUNTER")
    assert rows(con, "SELECT count(*) FROM mz_sources") == [(2,)]


def test_a_source_in_a_schema_puts_its_subsources_there(clocked_con):
    con = clocked_con
    con.execute("CREATE SCHEMA qck")
    con.execute("CREATE SOURCE qck.ah FROM LOAD GENERATOR AUCTION FOR ALL TABLES")
    assert rows(con, "SELECT count(*) FROM qck.users") == [(4076,)]
    assert rows(con, "SHOW SOURCES") == []
    assert len(rows(con, "SHOW SOURCES FROM qck")) == 7


def test_a_reopened_data_directory_continues_each_source(tmp_path, interactive):
    """The subsources persist their data and the ingestion resumes at its persisted offset
    with its generator's state: nothing is written twice, nothing skipped, and an auction
    whose bids were still arriving completes with the times it started with.  Sabotage:
    ``Ingestion`` ignoring the restored ``state`` restarted the counter at 1 (a duplicate)."""
    clock = ManualClock(T0)
    params = {"enable_compute_interactive_runtime": interactive}
    con = mzlite.connect(str(tmp_path), clock=clock, system_parameters=params)
    con.execute("CREATE SOURCE c FROM LOAD GENERATOR COUNTER (TICK INTERVAL '1s')")
    con.execute("CREATE SOURCE ah FROM LOAD GENERATOR AUCTION (TICK INTERVAL '1s') FOR ALL TABLES")
    con.execute("CREATE SOURCE mk FROM LOAD GENERATOR MARKETING (TICK INTERVAL '1s') FOR ALL TABLES")
    clock.advance(3000)  # the auction's row and its first two bids
    before = rows(con, "SELECT * FROM bids")
    assert len(before) == 2 and rows(con, "SELECT max(counter) FROM c") == [(4,)]
    leads = rows(con, "SELECT count(*) FROM leads")
    con.close()
    clock.advance(3_600_000)  # an hour closed: not replayed
    con = mzlite.connect(str(tmp_path), clock=clock, system_parameters=params)
    assert rows(con, "SELECT * FROM c") == [(1,), (2,), (3,), (4,), (5,)]
    assert rows(con, "SELECT * FROM c_progress") == [(5,)]
    clock.advance(20_000)
    assert rows(con, "SELECT count(*), count(DISTINCT counter), max(counter) FROM c") == [(25, 25, 25)]
    bids = rows(con, "SELECT id, auction_id, bid_time FROM bids WHERE auction_id = 1")
    assert [b[0] for b in bids][:2] == [10, 11] and len(bids) >= 2
    assert all(t == ts(T0 + 1000 + 1000 * (i - 10)) for i, _, t in bids)  # auction 1's own times
    assert rows(con, "SELECT count(*) FROM leads")[0][0] == leads[0][0] + 21
    assert rows(con, "SELECT count(*), count(DISTINCT id) FROM impressions") == [(24, 24)]
    con.close()
