"""timestamp(p) / timestamptz(p) / time(p) / interval(p) and interval field qualifiers (issue 8).

``repr.dates_typmod`` is checked against a model of PostgreSQL's arithmetic written
independently here (microseconds counted from 2000-01-01, ``(t + half) / scale * scale``
mirrored below zero), over hypothesis-chosen values; then end to end: a cast rounds, an
INSERT/UPDATE into a typed column rounds, and maintained objects hold the rounded values,
with the interactive runtime on and off.  Answers are PostgreSQL 15's (also in
slt/test/dates_precision.slt, which runs against the server).
"""
from __future__ import annotations

import datetime as dt

from hypothesis import given, strategies as st
import pytest

from repr.dates import INFINITY, Interval
from repr.dates_typmod import typmod_interval, typmod_time, typmod_timestamp
from repr.errors import EvalError

PG_EPOCH = dt.datetime(2000, 1, 1)


def _pg_round(t: int, p: int) -> int:
    """PostgreSQL's AdjustTimestampForTypmod on an int64 of microseconds."""
    scale = 10 ** (6 - p)
    off = scale // 2
    return (t + off) // scale * scale if t >= 0 else -(((-t) + off) // scale * scale)


def _micros(d: dt.timedelta) -> int:
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


@given(ts=st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
       p=st.integers(0, 6))
def test_timestamp_rounding_matches_postgresql(ts, p):
    """Sabotage: rounding halves up on both sides of 2000 (dropping ``before_epoch``) fails
    here on a half before 2000, e.g. 1999-12-31 23:59:59.5 at p=0."""
    expected = PG_EPOCH + dt.timedelta(microseconds=_pg_round(_micros(ts - PG_EPOCH), p))
    assert typmod_timestamp(ts, p) == expected
    aware = ts.replace(tzinfo=dt.timezone.utc)
    assert typmod_timestamp(aware, p) == expected.replace(tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("text,p,expected", [
    ("1999-12-31 23:59:59.5", 0, dt.datetime(1999, 12, 31, 23, 59, 59)),
    ("2000-01-01 00:00:00.5", 0, dt.datetime(2000, 1, 1, 0, 0, 1)),
    ("2020-01-01 10:00:00.123456", 3, dt.datetime(2020, 1, 1, 10, 0, 0, 123000)),
])
def test_timestamp_halves(text, p, expected):
    assert typmod_timestamp(dt.datetime.fromisoformat(text), p) == expected


@given(t=st.times(max_value=dt.time(23, 59, 59)), p=st.integers(0, 6))
def test_time_rounding_is_half_up(t, p):
    us = ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond
    r = _pg_round(us, p)
    got = typmod_time(t, p)
    assert ((got.hour * 60 + got.minute) * 60 + got.second) * 1_000_000 + got.microsecond == r


def test_time_rounding_to_midnight_is_an_error():
    """PostgreSQL answers 24:00:00, which Python's time cannot hold."""
    with pytest.raises(EvalError) as ei:
        typmod_time(dt.time(23, 59, 59, 900000), 0)
    assert ei.value.sqlstate == "22008"


@given(us=st.integers(-10**12, 10**12), p=st.integers(0, 6))
def test_interval_precision_rounds_away_from_zero(us, p):
    iv = typmod_interval(Interval(1, 2, us), (0x7FFF << 16) | p)
    assert (iv.months, iv.days, iv.micros) == (1, 2, _pg_round(us, p))


def test_interval_fields():
    iv = Interval(14, 3, ((4 * 60 + 5) * 60 + 6) * 1_000_000 + 500_000)
    hour, year, day_min = (1 << 10), (1 << 2), (1 << 3) | (1 << 10) | (1 << 11)
    assert typmod_interval(iv, (hour << 16) | 0xFFFF) == Interval(14, 3, 4 * 3600 * 10**6)
    assert typmod_interval(iv, (year << 16) | 0xFFFF) == Interval(12, 0, 0)
    assert typmod_interval(iv, (day_min << 16) | 0xFFFF) == Interval(14, 3, (4 * 60 + 5) * 60 * 10**6)
    assert typmod_timestamp(INFINITY, 0) is INFINITY


def test_casts_and_assignments_round(cur):
    """A cast rounds, and so do INSERT, UPDATE and executemany into typed columns; a
    materialized view and an indexed view see the rounded values.  Sabotage: restoring
    ``type_modifier``'s old early return for the date/time types (modifier ignored) fails
    every assertion here."""
    cur.execute("SELECT '2020-01-01 10:00:00.123456'::timestamp(3), '10:00:00.15'::time(1), "
                "'1.55 sec'::interval(1)")
    assert cur.fetchall() == [(dt.datetime(2020, 1, 1, 10, 0, 0, 123000), dt.time(10, 0, 0, 200000),
                               dt.timedelta(seconds=1.6))]
    cur.execute("CREATE TABLE p (id int, ts timestamp(1), tz timestamptz(0))")
    cur.execute("CREATE MATERIALIZED VIEW pm AS SELECT * FROM p")
    cur.execute("CREATE VIEW pv AS SELECT id, ts FROM p")
    cur.execute("CREATE DEFAULT INDEX ON pv")
    cur.execute("INSERT INTO p VALUES (1, '2020-01-01 00:00:00.15', '2020-01-01 00:00:00.5+00')")
    cur.executemany("INSERT INTO p VALUES (?, ?, ?)",
                    [(2, dt.datetime(2020, 1, 1, 0, 0, 0, 260000), "2020-01-01 00:00:00.49")])
    cur.execute("UPDATE p SET ts = ts + interval '0.06 sec' WHERE id = 1")
    utc = dt.timezone.utc
    expected = [(1, dt.datetime(2020, 1, 1, 0, 0, 0, 300000), dt.datetime(2020, 1, 1, 0, 0, 1, tzinfo=utc)),
                (2, dt.datetime(2020, 1, 1, 0, 0, 0, 300000), dt.datetime(2020, 1, 1, 0, 0, 0, tzinfo=utc))]
    for q in ("SELECT * FROM p ORDER BY id", "SELECT * FROM pm ORDER BY id"):
        cur.execute(q)
        assert cur.fetchall() == expected
    cur.execute("SELECT * FROM pv ORDER BY id")
    assert cur.fetchall() == [r[:2] for r in expected]
