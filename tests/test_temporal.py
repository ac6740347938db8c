"""Time in SQL: ``mz_now()``, ``AS OF``, ``EXPLAIN TIMESTAMP`` and temporal filters.

Temporal filters make rows appear and disappear as time passes *without any write*: the
clock is a ``ManualClock`` and ``db.tick()`` (the coordinator's periodic tick, called by hand)
advances the tables' uppers to the clock's time; a strict serializable read then waits
until the dataflows have caught up, so no test sleeps.  Every test runs with the
interactive runtime on and off.
"""
from __future__ import annotations

import time

import pytest

import mzlite
from mzlite.subscribe import Update

WAIT = 20.0
T0 = 10_000


@pytest.fixture
def clock_start():
    return T0


@pytest.fixture
def con(clocked_con):  # the shared manual-clock connection (both settings), starting at T0, with ev
    clocked_con.execute("CREATE TABLE ev (id int, s int, e int)")
    clocked_con.execute("INSERT INTO ev VALUES (1, 10100, 10200), (2, 10150, 10300), (3, 9000, 20000)")
    return clocked_con


def at(con, t):
    """Let time pass to ``t`` without writes."""
    con.clock.value = t
    con.database.tick()


def ids(con, sql):
    return sorted(r[0] for r in con.execute(sql).fetchall())


FORMS = {
    "le": "mz_now() <= e",
    "mirrored": "e >= mz_now()",
    "between": "mz_now() BETWEEN s AND e",
    "conjunction": "mz_now() >= s AND mz_now() < e + 1",
    "row_expression": "mz_now() <= s + 100",
    "cast": "mz_now() <= e::mz_timestamp",
}

# id -> the rows visible at each probe time, per form
PROBES = (10050, 10100, 10150, 10201, 10250, 10301)
EXPECTED = {
    "le": [[1, 2, 3], [1, 2, 3], [1, 2, 3], [2, 3], [2, 3], [3]],
    "mirrored": [[1, 2, 3], [1, 2, 3], [1, 2, 3], [2, 3], [2, 3], [3]],
    "between": [[3], [1, 3], [1, 2, 3], [2, 3], [2, 3], [3]],
    "conjunction": [[3], [1, 3], [1, 2, 3], [2, 3], [2, 3], [3]],
    "row_expression": [[1, 2], [1, 2], [1, 2], [2], [2], []],
    "cast": [[1, 2, 3], [1, 2, 3], [1, 2, 3], [2, 3], [2, 3], [3]],
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_temporal_filters_in_views_mvs_and_indexes_follow_the_clock(con, form):
    """Sabotage: dropping the temporal MFP's future retraction (``future.append((row, upper,
    -d))`` in compute/render/mfp.py) left expired rows in the materialized view (red)."""
    pred = FORMS[form]
    con.execute(f"CREATE VIEW v AS SELECT id FROM ev WHERE {pred}")
    con.execute(f"CREATE MATERIALIZED VIEW m AS SELECT id FROM ev WHERE {pred}")
    con.execute(f"CREATE VIEW vi AS SELECT id FROM ev WHERE {pred}")
    con.execute("CREATE INDEX vi_idx ON vi (id)")
    for t, want in zip(PROBES, EXPECTED[form]):
        at(con, t)
        assert con.execute("SELECT mz_now()").fetchall() == [(t,)]
        assert ids(con, "SELECT id FROM v") == want, ("view", t)
        assert ids(con, "SELECT id FROM m") == want, ("materialized view", t)
        assert ids(con, "SELECT id FROM vi") == want, ("indexed view", t)


def test_a_subscription_sees_rows_appear_and_expire_at_their_exact_times(con):
    con.execute("CREATE MATERIALIZED VIEW live AS SELECT id FROM ev WHERE mz_now() BETWEEN s AND e")
    sub = con.subscribe("live")
    at(con, 10400)
    got = []
    deadline = time.monotonic() + WAIT
    while not any(u.timestamp == 10301 for u in got):
        assert time.monotonic() < deadline, got
        got.extend(sub.fetch(timeout=1.0))
    sub.close()
    changes = [(u.timestamp, u.diff, u.row) for u in got if isinstance(u, Update) and u.timestamp > sub.as_of]
    assert changes == [(10100, 1, (1,)), (10150, 1, (2,)), (10201, -1, (1,)), (10301, -1, (2,))]


def test_temporal_filter_on_constants_with_exact_logical_times(con):
    rows = con.execute("SUBSCRIBE (SELECT a FROM (VALUES (1, 10, 20), (2, 15, 30)) v(a, s, e) "
                       "WHERE mz_now() >= s AND mz_now() < e) AS OF 5 UP TO 25").fetchall()
    assert rows == [(10, 1, 1), (15, 1, 2), (20, -1, 1)]


@pytest.mark.parametrize("sql, message", [
    ("CREATE MATERIALIZED VIEW bad AS SELECT id, mz_now() AS t FROM ev", "cannot materialize call to mz_now"),
    ("CREATE MATERIALIZED VIEW bad AS SELECT id FROM ev WHERE mz_now() < s OR id = 3",
     "unsupported temporal predicate"),
    ("CREATE MATERIALIZED VIEW bad AS SELECT count(*) FILTER (WHERE mz_now() < e) FROM ev", "mz_now"),
])
def test_mz_now_outside_a_temporal_filter_is_refused_where_it_would_go_stale(con, sql, message):
    """Sabotage: without ``temporal.checked`` the OR form was accepted and never retracted id 2."""
    with pytest.raises(mzlite.NotSupportedError) as e:
        con.execute(sql)
    assert message in str(e.value) and e.value.sqlstate == "0A000"
    assert con.execute("SELECT count(*) FROM ev WHERE mz_now() < s OR id = 3").fetchall() == [(3,)]


def test_index_and_subscribe_refuse_stale_mz_now_too(con):
    con.execute("CREATE VIEW stamped AS SELECT id, mz_now() AS t FROM ev")
    assert len(con.execute("SELECT * FROM stamped").fetchall()) == 3  # a one-shot read is fine
    with pytest.raises(mzlite.NotSupportedError):
        con.execute("CREATE INDEX ON stamped (id)")
    with pytest.raises(mzlite.NotSupportedError):
        con.subscribe("stamped")


def test_mz_now_is_the_read_timestamp(con):
    t = con.execute("SELECT mz_now()").fetchall()[0][0]
    assert t == T0 + 0 or t >= T0
    explained = con.execute("EXPLAIN TIMESTAMP FOR SELECT * FROM ev").fetchall()[0][0]
    assert f"query timestamp: {t:>13}" in explained
    assert "ev (u1): since [" in explained
    assert con.execute("SELECT mz_now() AS OF 12345").fetchall() == [(12345,)]
    assert con.execute(f"SELECT mz_now(), count(*) FROM ev AS OF {t}").fetchall() == [(t, 3)]
    desc = con.execute("SELECT mz_now()").description
    assert desc[0][1] == "mz_timestamp"


def test_as_of_before_since_names_the_earliest_readable_time(con):
    with pytest.raises(mzlite.DataError) as e:
        con.execute("SELECT * FROM ev AS OF 5")
    msg = str(e.value)
    assert e.value.sqlstate == "22000"
    assert "Timestamp (5) is not valid for all inputs" in msg and "earliest readable time" in msg
    [(n, t)] = con.execute("SELECT count(*), mz_now() FROM ev AS OF AT LEAST 5").fetchall()
    assert t > 5 and n in (0, 3)  # the earliest readable time: the since
