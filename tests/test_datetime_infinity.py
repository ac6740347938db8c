"""``infinity``/``-infinity`` of date, timestamp and timestamptz (issue 8).

The two ``repr.dates_infinity`` singletons are compared with Python's ``date`` and
``datetime`` from both sides, so a column mixing them sorts, groups and deduplicates as
PostgreSQL orders it (checked with hypothesis against a key that puts -infinity first and
infinity last).  End to end: input, output text, isfinite, arithmetic, extract, and a
maintained view and materialized view over a table with infinite values as rows come and go,
with the interactive runtime on and off.  The answers are PostgreSQL 15's (also checked in
slt/test/dates_infinity.slt, which runs against the server).
"""
from __future__ import annotations

import datetime as dt
import pickle

from hypothesis import given, settings, strategies as st
import pytest

import mzlite
from repr.dates import INFINITY, NEG_INFINITY, parse_date, parse_timestamp, parse_timestamptz
from repr.dates_infinity import DateInfinity
from repr.strconv import to_text

UTC = dt.timezone.utc


def _pg_key(v):
    return (-1, None) if v is NEG_INFINITY else (1, None) if v is INFINITY else (0, v)


def _pg_sorted(xs):
    order = sorted(range(len(xs)), key=lambda i: (_pg_key(xs[i])[0], xs[i] if _pg_key(xs[i])[0] == 0 else 0))
    return [xs[i] for i in order]


dates = st.one_of(st.dates(), st.sampled_from([INFINITY, NEG_INFINITY]))
stamps = st.one_of(st.datetimes(), st.sampled_from([INFINITY, NEG_INFINITY]))
stamps_tz = st.one_of(st.datetimes(timezones=st.just(UTC)), st.sampled_from([INFINITY, NEG_INFINITY]))


@settings(max_examples=200, deadline=None)
@given(xs=st.one_of(st.lists(dates), st.lists(stamps), st.lists(stamps_tz)))
def test_mixed_columns_sort_as_postgresql(xs):
    """Sorting (and max/min, tuple keys) of finite and infinite values puts -infinity first and
    infinity last.  Sabotage: ``DateInfinity._cmp`` answering ``None`` for a date (so Python's
    comparison falls back to a TypeError) fails here."""
    assert sorted(xs) == _pg_sorted(xs)
    assert sorted(xs, reverse=True) == list(reversed(_pg_sorted(xs)))
    assert sorted((1, x) for x in xs) == [(1, x) for x in _pg_sorted(xs)]
    if xs:
        assert max(xs) == _pg_sorted(xs)[-1] and min(xs) == _pg_sorted(xs)[0]


@given(x=st.one_of(st.dates(), st.datetimes()))
def test_comparisons_from_both_sides(x):
    assert x < INFINITY and INFINITY > x and x <= INFINITY and INFINITY >= x
    assert x > NEG_INFINITY and NEG_INFINITY < x and not (x == INFINITY) and x != NEG_INFINITY
    assert not (INFINITY < x) and not (NEG_INFINITY > x)


def test_singletons_hash_and_pickle():
    """Equal only to itself, hashable (rows are dict keys), and a singleton after pickling.
    Sabotage: dropping ``__reduce__`` makes unpickling fail (seen red here)."""
    assert DateInfinity(1) is INFINITY and DateInfinity(-1) is NEG_INFINITY
    assert pickle.loads(pickle.dumps(INFINITY)) is INFINITY
    assert {(INFINITY,): 1}[(DateInfinity(1),)] == 1
    assert INFINITY != NEG_INFINITY and NEG_INFINITY < INFINITY
    assert INFINITY != dt.date.max and hash(INFINITY) != hash(NEG_INFINITY)


@pytest.mark.parametrize("parse", [parse_date, parse_timestamp, parse_timestamptz])
def test_input_and_output(parse):
    assert parse("infinity") is INFINITY and parse(" -Infinity ") is NEG_INFINITY
    assert to_text(parse("infinity")) == "infinity" and to_text(NEG_INFINITY) == "-infinity"


def _one(cur, q):
    cur.execute(q)
    return cur.fetchall()


ANSWERS = [  # PostgreSQL 15
    ("isfinite('infinity'::date), isfinite(date '2020-01-01'), isfinite('-infinity'::timestamptz)",
     (False, True, False)),
    ("'infinity'::timestamp + interval '1 day', '-infinity'::timestamptz - interval '1 mon'",
     (INFINITY, NEG_INFINITY)),
    ("'infinity'::date + 1, 'infinity'::date - interval '1 day', 'infinity'::date + time '10:00'",
     (INFINITY, INFINITY, INFINITY)),
    ("extract(year from 'infinity'::timestamp)::text, extract(epoch from '-infinity'::date)::text, "
     "extract(day from 'infinity'::date)", ("Infinity", "-Infinity", None)),
    ("date_part('hour', 'infinity'::timestamp), extract(timezone from 'infinity'::timestamp)", (None, None)),
    ("date_trunc('day', 'infinity'::timestamp), 'infinity'::timestamp::time, to_char('infinity'::date, 'YYYY')",
     (INFINITY, None, None)),
    ("'-infinity'::timestamp::date, 'infinity'::date::timestamptz, to_timestamp('-Infinity'::float8)",
     (NEG_INFINITY, INFINITY, NEG_INFINITY)),
    ("'infinity'::date > date '9999-12-31', '-infinity'::timestamp < timestamp '0001-01-01'", (True, True)),
]


@pytest.mark.parametrize("expr,expected", ANSWERS)
def test_one_shot_answers(cur, expr, expected):
    assert _one(cur, "SELECT " + expr) == [expected]


@pytest.mark.parametrize("expr,state", [
    ("'infinity'::date - date '2020-01-01'", "22008"),
    ("'infinity'::timestamp - timestamp '2020-01-01'", "22008"),
    ("extract(hour from 'infinity'::date)", "0A000"),
    ("extract(foo from 'infinity'::timestamp)", "22023"),
    ("'+infinity'::date", "22007"),
    ("'infinity'::date::mz_timestamp", "22008"),
    ("count(*) FROM generate_series('-infinity'::timestamp, '2020-01-01', '1 day')", "22008"),
])
def test_errors(cur, expr, state):
    """Sabotage: letting ``sub_timestamps`` subtract an infinity (no check) raises a bare
    AttributeError instead of 22008."""
    with pytest.raises(mzlite.Error) as ei:
        _one(cur, "SELECT " + expr)
    assert ei.value.sqlstate == state


def test_maintained_views_follow_changes(cur):
    """A view (indexed) and a materialized view over infinite values equal the one-shot
    query as rows come and go."""
    cur.execute("CREATE TABLE t (id int, d date, ts timestamp)")
    cur.execute("INSERT INTO t VALUES (1, '2020-01-01', '2020-01-01 10:00'), (2, 'infinity', '-infinity'),"
                " (3, '-infinity', 'infinity')")
    q = "SELECT id, d, isfinite(d) AS f, ts + interval '1 day' AS n FROM t"
    cur.execute(f"CREATE VIEW v AS {q}")
    cur.execute("CREATE DEFAULT INDEX ON v")
    cur.execute("CREATE MATERIALIZED VIEW m AS SELECT max(d) AS hi, min(d) AS lo, max(ts) AS top FROM t")
    for change in ["DELETE FROM t WHERE id = 2", "INSERT INTO t VALUES (4, 'infinity', '2021-01-01')",
                   "UPDATE t SET d = '2022-02-02' WHERE id = 3"]:
        cur.execute(change)
        assert _one(cur, "SELECT * FROM v ORDER BY d") == _one(cur, q + " ORDER BY d")
        assert _one(cur, "SELECT * FROM m") == _one(cur, "SELECT max(d), min(d), max(ts) FROM t")
    assert _one(cur, "SELECT * FROM m") == [(INFINITY, dt.date(2020, 1, 1), INFINITY)]
    assert _one(cur, "SELECT id FROM v ORDER BY d DESC") == [(4,), (3,), (1,)]
