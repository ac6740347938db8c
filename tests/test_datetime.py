"""The date/time family: date, time, timestamp, timestamptz and interval (issue 8).

Answers are PostgreSQL 15's (``PG_ANSWERS``/``PG_ERRORS`` were taken from the server with
``SELECT (expr)::text, pg_typeof(expr)``): literal input, output text, casts, operators,
extract/date_part/date_trunc/age/justify/make_*/to_char/date_bin.  Then: ``Interval``'s
equality, order and hash (a month is 30 days), hypothesis round trips value -> text ->
value, ``now()`` (one value per statement, refused in maintained objects), maintained
views over a changing table equal to the one-shot SELECT (runtime flag on and off),
temporal filters over timestamptz with a manual clock, and generate_series.
"""
from __future__ import annotations

import datetime as dt

from hypothesis import given, settings, strategies as st
import pytest

import mzlite
from repr.dates import (Interval, interval_out, parse_date, parse_interval, parse_time, parse_timestamp,
                        parse_timestamptz)
from repr.strconv import to_text

UTC = dt.timezone.utc

PG_ANSWERS = [
    ("date '2020-01-01'", '2020-01-01', 'date'),
    ("'2020-02-29'::date", '2020-02-29', 'date'),
    ("date '0099-03-04'", '0099-03-04', 'date'),
    ("time '10:00'", '10:00:00', 'time without time zone'),
    ("time '23:59:59.999999'", '23:59:59.999999', 'time without time zone'),
    ("'10:00:00.5'::time", '10:00:00.5', 'time without time zone'),
    ("timestamp '2020-01-01 10:00:00.123456'", '2020-01-01 10:00:00.123456', 'timestamp without time zone'),
    ("timestamp '2020-01-01T10:00'", '2020-01-01 10:00:00', 'timestamp without time zone'),
    ("'2020-01-01 10:00:00.1234567'::timestamp", '2020-01-01 10:00:00.123457', 'timestamp without time zone'),
    ("timestamp '2020-01-01 10:00+02'", '2020-01-01 10:00:00', 'timestamp without time zone'),
    ("timestamptz '2020-01-01 10:00+02'", '2020-01-01 08:00:00+00', 'timestamp with time zone'),
    ("timestamptz '2020-01-01 10:00:00Z'", '2020-01-01 10:00:00+00', 'timestamp with time zone'),
    ("timestamptz '2020-01-01 10:00-05:30'", '2020-01-01 15:30:00+00', 'timestamp with time zone'),
    ("timestamptz '2020-01-01'", '2020-01-01 00:00:00+00', 'timestamp with time zone'),
    ("interval '1 day 2 hours'", '1 day 02:00:00', 'interval'),
    ("interval '1 year 2 mons 3 days 04:05:06.5'", '1 year 2 mons 3 days 04:05:06.5', 'interval'),
    ("interval '-1 day'", '-1 days', 'interval'),
    ("interval '2 weeks'", '14 days', 'interval'),
    ("interval '1.5 hours'", '01:30:00', 'interval'),
    ("interval '01:00:00'", '01:00:00', 'interval'),
    ("interval 'P1D'", '1 day', 'interval'),
    ("interval 'P1Y2M3DT4H5M6.5S'", '1 year 2 mons 3 days 04:05:06.5', 'interval'),
    ("interval '0'", '00:00:00', 'interval'),
    ("interval '10'", '00:00:10', 'interval'),
    ("interval '1 millisecond'", '00:00:00.001', 'interval'),
    ("interval '3 mins 4 secs'", '00:03:04', 'interval'),
    ("interval '-1 day +2 hours'", '-1 days +02:00:00', 'interval'),
    ("interval '1 day -2 hours'", '1 day -02:00:00', 'interval'),
    ("interval '-1 year -2 mons'", '-1 years -2 mons', 'interval'),
    ("interval '-25:00:00.25'", '-25:00:00.25', 'interval'),
    ("interval '@ 1 day ago'", '-1 days', 'interval'),
    ("interval '1.5 years'", '1 year 6 mons', 'interval'),
    ("interval '1.5 months'", '1 mon 15 days', 'interval'),
    ("interval '1 day 1.5 hours'", '1 day 01:30:00', 'interval'),
    ("interval '1 decade 1 century'", '110 years', 'interval'),
    ("interval '100 microseconds'", '00:00:00.0001', 'interval'),
    ("interval '1' day", '1 day', 'interval'),
    ("interval '1 day 10:05:30' hour to minute", '1 day 10:05:00', 'interval'),
    ("date '2020-01-01' + 1", '2020-01-02', 'date'),
    ("1 + date '2020-01-01'", '2020-01-02', 'date'),
    ("date '2020-03-01' - 1", '2020-02-29', 'date'),
    ("date '2020-01-01' - date '2019-01-01'", '365', 'integer'),
    ("date '2020-01-31' + interval '1 month'", '2020-02-29 00:00:00', 'timestamp without time zone'),
    ("interval '1 day' + date '2020-01-01'", '2020-01-02 00:00:00', 'timestamp without time zone'),
    ("date '2020-01-01' - interval '1 hour'", '2019-12-31 23:00:00', 'timestamp without time zone'),
    ("date '2020-01-01' + time '10:30'", '2020-01-01 10:30:00', 'timestamp without time zone'),
    ("time '10:30' + date '2020-01-01'", '2020-01-01 10:30:00', 'timestamp without time zone'),
    ("timestamp '2020-01-31 10:00' + interval '1 mon 1 day 1 hour'", '2020-03-01 11:00:00', 'timestamp without time zone'),
    ("timestamp '2020-03-31 10:00' - interval '1 mon'", '2020-02-29 10:00:00', 'timestamp without time zone'),
    ("interval '1 hour' + timestamp '2020-01-01'", '2020-01-01 01:00:00', 'timestamp without time zone'),
    ("timestamptz '2020-01-01 00:00+00' + interval '36 hours'", '2020-01-02 12:00:00+00', 'timestamp with time zone'),
    ("timestamp '2020-03-04 05:06:07' - timestamp '2020-01-01'", '63 days 05:06:07', 'interval'),
    ("timestamp '2020-01-01' - timestamp '2020-03-04 05:06:07'", '-63 days -05:06:07', 'interval'),
    ("timestamptz '2020-01-02' - timestamptz '2020-01-01 12:00'", '12:00:00', 'interval'),
    ("time '23:00' + interval '2 hours'", '01:00:00', 'time without time zone'),
    ("time '01:00' - interval '2 hours'", '23:00:00', 'time without time zone'),
    ("time '10:00' - time '12:30'", '-02:30:00', 'interval'),
    ("interval '1 day' + interval '1 mon'", '1 mon 1 day', 'interval'),
    ("interval '1 day' - interval '25 hours'", '1 day -25:00:00', 'interval'),
    ("- interval '1 mon 2 days 03:00'", '-1 mons -2 days -03:00:00', 'interval'),
    ("interval '1 day' * 1.5", '1 day 12:00:00', 'interval'),
    ("interval '1 mon' / 7", '4 days 06:51:25.6896', 'interval'),
    ("interval '1 mon' * 0.3", '9 days', 'interval'),
    ("2 * interval '1 year 1 day'", '2 years 2 days', 'interval'),
    ("interval '1 year' / 5", '2 mons 12 days', 'interval'),
    ("interval '1 mon' = interval '30 days'", 'true', 'boolean'),
    ("interval '1 day' > interval '23 hours'", 'true', 'boolean'),
    ("interval '1 day' = interval '24 hours'", 'true', 'boolean'),
    ("date '2020-01-01' < timestamp '2020-01-01 00:00:01'", 'true', 'boolean'),
    ("date '2020-01-01' = timestamptz '2020-01-01'", 'true', 'boolean'),
    ("timestamp '2020-01-01' = timestamptz '2020-01-01 00:00+00'", 'true', 'boolean'),
    ("time '10:00' < time '10:00:00.000001'", 'true', 'boolean'),
    ("timestamp '2020-01-01 10:00' > '2020-01-01'", 'true', 'boolean'),
    ("date '2020-01-01'::timestamp", '2020-01-01 00:00:00', 'timestamp without time zone'),
    ("date '2020-01-01'::timestamptz", '2020-01-01 00:00:00+00', 'timestamp with time zone'),
    ("timestamp '2020-01-01 10:00'::timestamptz", '2020-01-01 10:00:00+00', 'timestamp with time zone'),
    ("timestamptz '2020-01-01 10:00+00'::timestamp", '2020-01-01 10:00:00', 'timestamp without time zone'),
    ("timestamp '2020-01-01 10:00:05'::date", '2020-01-01', 'date'),
    ("timestamp '2020-01-01 10:00:05.5'::time", '10:00:05.5', 'time without time zone'),
    ("time '10:00'::interval", '10:00:00', 'interval'),
    ("interval '1 day 02:00'::time", '02:00:00', 'time without time zone'),
    ("interval '-1 hour'::time", '23:00:00', 'time without time zone'),
    ("date '2020-01-01'::text", '2020-01-01', 'text'),
    ("timestamptz '2020-01-01 10:00+00'::text", '2020-01-01 10:00:00+00', 'text'),
    ("interval '1 mon'::text", '1 mon', 'text'),
    ("extract(year from timestamp '2020-03-04 05:06:07.5')", '2020', 'numeric'),
    ("extract(month from timestamp '2020-03-04 05:06:07.5')", '3', 'numeric'),
    ("extract(day from timestamp '2020-03-04 05:06:07.5')", '4', 'numeric'),
    ("extract(hour from timestamp '2020-03-04 05:06:07.5')", '5', 'numeric'),
    ("extract(minute from timestamp '2020-03-04 05:06:07.5')", '6', 'numeric'),
    ("extract(second from timestamp '2020-03-04 05:06:07.5')", '7.500000', 'numeric'),
    ("extract(milliseconds from timestamp '2020-03-04 05:06:07.5')", '7500.000', 'numeric'),
    ("extract(microseconds from timestamp '2020-03-04 05:06:07.5')", '7500000', 'numeric'),
    ("extract(epoch from timestamp '2020-03-04 05:06:07.5')", '1583298367.500000', 'numeric'),
    ("extract(epoch from timestamptz '2020-01-01 00:00:00.123+00')", '1577836800.123000', 'numeric'),
    ("extract(dow from timestamp '2020-03-08')", '0', 'numeric'),
    ("extract(isodow from timestamp '2020-03-08')", '7', 'numeric'),
    ("extract(doy from timestamp '2020-12-31')", '366', 'numeric'),
    ("extract(week from timestamp '2021-01-01')", '53', 'numeric'),
    ("extract(isoyear from timestamp '2021-01-01')", '2020', 'numeric'),
    ("extract(quarter from timestamp '2020-08-01')", '3', 'numeric'),
    ("extract(decade from timestamp '2019-01-01')", '201', 'numeric'),
    ("extract(century from timestamp '2001-01-01')", '21', 'numeric'),
    ("extract(century from timestamp '2000-12-31')", '20', 'numeric'),
    ("extract(millennium from timestamp '2001-01-01')", '3', 'numeric'),
    ("extract(julian from date '2020-03-04')", '2458913', 'numeric'),
    ("extract(year from date '2020-03-04')", '2020', 'numeric'),
    ("extract(epoch from date '2020-03-04')", '1583280000', 'numeric'),
    ("extract(dow from date '2020-03-04')", '3', 'numeric'),
    ("extract(second from time '10:00:01.25')", '1.250000', 'numeric'),
    ("extract(epoch from time '10:00:01.25')", '36001.250000', 'numeric'),
    ("extract(hour from time '10:00:01.25')", '10', 'numeric'),
    ("extract(epoch from interval '1 year 2 mons 3 days 04:05:06.5')", '37015506.500000', 'numeric'),
    ("extract(month from interval '14 mons')", '2', 'numeric'),
    ("extract(year from interval '-14 mons')", '-1', 'numeric'),
    ("extract(day from interval '40 days')", '40', 'numeric'),
    ("extract(hour from interval '-25:30:00')", '-25', 'numeric'),
    ("extract(minute from interval '-25:30:00')", '-30', 'numeric'),
    ("extract(second from interval '-1.5 seconds')", '-1.500000', 'numeric'),
    ("extract(quarter from interval '7 mons')", '3', 'numeric'),
    ("extract(timezone from timestamptz '2020-01-01')", '0', 'numeric'),
    ("date_part('year', timestamp '2020-03-04 05:06:07.5')", '2020', 'double precision'),
    ("date_part('second', timestamp '2020-03-04 05:06:07.5')", '7.5', 'double precision'),
    ("date_part('epoch', interval '1 mon')", '2592000', 'double precision'),
    ("date_part('hour', date '2020-01-01')", '0', 'double precision'),
    ("date_part('epoch', date '2020-01-01')", '1577836800', 'double precision'),
    ("date_part('milliseconds', time '10:00:01.25')", '1250', 'double precision'),
    ("date_part('dow', timestamptz '2020-03-04 23:00+00')", '3', 'double precision'),
    ("date_trunc('month', timestamp '2020-03-04 05:06:07')", '2020-03-01 00:00:00', 'timestamp without time zone'),
    ("date_trunc('week', timestamp '2020-03-04 05:06:07')", '2020-03-02 00:00:00', 'timestamp without time zone'),
    ("date_trunc('week', date '2020-03-04')", '2020-03-02 00:00:00+00', 'timestamp with time zone'),
    ("date_trunc('quarter', timestamp '2020-08-04 05:06:07')", '2020-07-01 00:00:00', 'timestamp without time zone'),
    ("date_trunc('year', timestamptz '2020-03-04 05:06:07+00')", '2020-01-01 00:00:00+00', 'timestamp with time zone'),
    ("date_trunc('hour', timestamp '2020-03-04 05:06:07.5')", '2020-03-04 05:00:00', 'timestamp without time zone'),
    ("date_trunc('minute', timestamp '2020-03-04 05:06:07.5')", '2020-03-04 05:06:00', 'timestamp without time zone'),
    ("date_trunc('second', timestamp '2020-03-04 05:06:07.5')", '2020-03-04 05:06:07', 'timestamp without time zone'),
    ("date_trunc('milliseconds', timestamp '2020-03-04 05:06:07.5678')", '2020-03-04 05:06:07.567', 'timestamp without time zone'),
    ("date_trunc('decade', timestamp '2019-03-04')", '2010-01-01 00:00:00', 'timestamp without time zone'),
    ("date_trunc('century', timestamp '2001-03-04')", '2001-01-01 00:00:00', 'timestamp without time zone'),
    ("date_trunc('millennium', timestamp '2001-03-04')", '2001-01-01 00:00:00', 'timestamp without time zone'),
    ("date_trunc('day', interval '1 mon 2 days 03:04:05')", '1 mon 2 days', 'interval'),
    ("date_trunc('hour', interval '1 mon 2 days 03:04:05')", '1 mon 2 days 03:00:00', 'interval'),
    ("date_trunc('year', interval '15 mons 2 days')", '1 year', 'interval'),
    ("date_trunc('quarter', interval '15 mons 2 days')", '1 year 3 mons', 'interval'),
    ("age(timestamp '2020-03-04', timestamp '2019-01-31 10:00')", '1 year 1 mon 3 days 14:00:00', 'interval'),
    ("age(timestamp '2019-01-31 10:00', timestamp '2020-03-04')", '-1 years -1 mons -3 days -14:00:00', 'interval'),
    ("age(timestamptz '2020-03-01', timestamptz '2020-01-31')", '1 mon 1 day', 'interval'),
    ("justify_days(interval '35 days')", '1 mon 5 days', 'interval'),
    ("justify_days(interval '-35 days')", '-1 mons -5 days', 'interval'),
    ("justify_hours(interval '27 hours')", '1 day 03:00:00', 'interval'),
    ("justify_hours(interval '1 day -27 hours')", '-03:00:00', 'interval'),
    ("justify_interval(interval '1 mon -1 hour')", '29 days 23:00:00', 'interval'),
    ("justify_interval(interval '-1 mon 50 days')", '20 days', 'interval'),
    ('make_date(2020, 2, 29)', '2020-02-29', 'date'),
    ('make_timestamp(2020, 2, 29, 10, 30, 5.5)', '2020-02-29 10:30:05.5', 'timestamp without time zone'),
    ('make_interval(1, 2, 3, 4, 5, 6, 7.5)', '1 year 2 mons 25 days 05:06:07.5', 'interval'),
    ('make_interval(0, 0, 0, 1)', '1 day', 'interval'),
    ('make_interval()', '00:00:00', 'interval'),
    ('to_timestamp(1583298367.5)', '2020-03-04 05:06:07.5+00', 'timestamp with time zone'),
    ('to_timestamp(0)', '1970-01-01 00:00:00+00', 'timestamp with time zone'),
    ("to_char(timestamp '2020-03-04 05:06:07.5', 'YYYY-MM-DD HH24:MI:SS.MS US')", '2020-03-04 05:06:07.500 500000', 'text'),
    ("to_char(timestamp '2020-03-04 15:06:07', 'Mon Month Day Dy DDD IW Q HH12 AM pm')", 'Mar March     Wednesday Wed 064 10 1 03 PM pm', 'text'),
    ('to_char(timestamp \'2020-03-04 15:06:07\', \'FMMonth FMDD "quoted" YY Y\')', 'March 4 quoted 20 0', 'text'),
    ("to_char(timestamptz '2020-01-01 00:00+00', 'YYYY-MM-DD TZ')", '2020-01-01 UTC', 'text'),
    ("to_char(date '2020-03-04', 'YYYY/MM/DD')", '2020/03/04', 'text'),
    ("to_char(interval '1 day 02:03:04', 'HH24:MI:SS DD')", '02:03:04 01', 'text'),
    ("to_char(timestamp '2020-03-04 00:06:07', 'HH12:MI am MONTH DAY')", '12:06 am MARCH     WEDNESDAY', 'text'),
    ("date_bin(interval '15 minutes', timestamp '2020-02-11 15:44:17', timestamp '2001-01-01')", '2020-02-11 15:30:00', 'timestamp without time zone'),
    ("date_bin(interval '1 day', timestamptz '2020-02-11 15:44:17+00', timestamptz '2001-01-01 00:00+00')", '2020-02-11 00:00:00+00', 'timestamp with time zone'),
    ("greatest(date '2020-01-01', date '2021-01-01')", '2021-01-01', 'date'),
    ("coalesce(null, interval '1 day')", '1 day', 'interval'),
]

PG_ERRORS = [
    ("select 'x'::date", '22007', 'invalid input syntax for type date: "x"'),
    ("select 'x'::timestamp", '22007', 'invalid input syntax for type timestamp: "x"'),
    ("select 'x'::timestamptz", '22007', 'invalid input syntax for type timestamp with time zone: "x"'),
    ("select 'x'::time", '22007', 'invalid input syntax for type time: "x"'),
    ("select 'x'::interval", '22007', 'invalid input syntax for type interval: "x"'),
    ("select '2020-13-01'::date", '22008', 'date/time field value out of range: "2020-13-01"'),
    ("select '2020-02-30'::date", '22008', 'date/time field value out of range: "2020-02-30"'),
    ("select '2020-01-01 25:00'::timestamp", '22008', 'date/time field value out of range: "2020-01-01 25:00"'),
    ("select '25:00'::time", '22008', 'date/time field value out of range: "25:00"'),
    ("select '2020-01-01 10:00:61'::timestamp", '22008', 'date/time field value out of range: "2020-01-01 10:00:61"'),
    ("select '1 fortnight'::interval", '22007', 'invalid input syntax for type interval: "1 fortnight"'),
    ("select ''::date", '22007', 'invalid input syntax for type date: ""'),
    ("select '2020-01-01 10:00+25'::timestamptz", '22009', 'time zone displacement out of range: "2020-01-01 10:00+25"'),
    ('select 1::int4::date', '42846', 'cannot cast type integer to date'),
    ("select date '2020-01-01' + date '2020-01-01'", '42883', 'operator does not exist: date + date'),
    ("select timestamp '2020-01-01' + 1", '42883', 'operator does not exist: timestamp without time zone + integer'),
    ("select interval '1 mon' / 0", '22012', 'division by zero'),
    ("select interval '2147483647 days' + interval '1 day'", '22008', 'interval out of range'),
    ("select interval '1 day' * 'nan'::float8", '22008', 'interval out of range'),
    ("select extract(hour from date '2020-01-01')", '0A000', 'unit "hour" not supported for type date'),
    ("select extract(foo from date '2020-01-01')", '22023', 'unit "foo" not recognized for type date'),
    ("select extract(dow from time '10:00')", '0A000', 'unit "dow" not supported for type time without time zone'),
    ("select extract(foo from timestamp '2020-01-01')", '22023', 'unit "foo" not recognized for type timestamp without time zone'),
    ("select extract(timezone from timestamp '2020-01-01')", '0A000', 'unit "timezone" not supported for type timestamp without time zone'),
    ("select date_trunc('foo', timestamp '2020-01-01')", '22023', 'unit "foo" not recognized for type timestamp without time zone'),
    ("select date_trunc('week', interval '1 day')", '0A000', 'unit "week" not supported for type interval'),
    ("select date_trunc('foo', timestamptz '2020-01-01')", '22023', 'unit "foo" not recognized for type timestamp with time zone'),
    ('select make_date(2020, 2, 30)', '22008', 'date field value out of range: 2020-02-30'),
    ("select date_bin(interval '1 mon', timestamp '2020-01-01', timestamp '2001-01-01')", '0A000', 'timestamps cannot be binned into intervals containing months or years'),
    ("select interval '1 day' < 1", '42883', 'operator does not exist: interval < integer'),
]


@pytest.fixture(scope="module")
def con():  # one connection for the whole module (read-mostly tests, default settings)
    c = mzlite.connect()
    yield c
    c.close()


@pytest.fixture
def flag_con(connect, interactive):  # the shared ``con`` under another name: ``con`` is module-scoped here
    return connect(interactive)


@pytest.mark.parametrize("expr, text, type_name", PG_ANSWERS)
def test_postgres_answers(con, expr, text, type_name):
    """Text through a cast to text and through ``to_text`` of the value agree with PostgreSQL."""
    cur = con.cursor()
    cur.intervals_as_timedelta = False
    cur.execute(f"SELECT ({expr})::text, ({expr})")
    got_text, value = cur.fetchone()
    assert got_text == text
    assert cur.description[1][1] == type_name
    if type_name != "text":
        assert (to_text(value) if not isinstance(value, float) else got_text) == text


@pytest.mark.parametrize("sql, sqlstate, message", PG_ERRORS)
def test_postgres_errors(con, sql, sqlstate, message):
    with pytest.raises(mzlite.Error) as e:
        con.execute(sql).fetchall()
    assert (e.value.sqlstate, e.value.message) == (sqlstate, message)


def test_literal_errors_carry_a_position(con):
    with pytest.raises(mzlite.DataError) as e:
        con.execute("SELECT 1, '2020-02-30'::date")
    assert e.value.sqlstate == "22008" and e.value.position is not None


# ---------------------------------------------------------------------------- Interval values

def test_interval_compares_as_postgresql():
    """A month is 30 days and a day 24 hours for =, <, hash (so GROUP BY/DISTINCT agree).
    Sabotage: hashing the fields instead of the span made '1 mon' and '30 days' unequal keys."""
    a, b = Interval(1, 0, 0), Interval(0, 30, 0)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert Interval(0, 1, 0) == Interval(0, 0, 86_400_000_000)
    assert Interval(0, 1, 1) > Interval(0, 0, 86_400_000_000)
    assert sorted([Interval(0, 0, 5), Interval(-1, 0, 0), Interval(0, 1, 0)]) == \
        [Interval(-1, 0, 0), Interval(0, 0, 5), Interval(0, 1, 0)]
    assert (Interval(1, 0, 0), None) == (Interval(0, 30, 0), None)
    assert Interval(1, 2, 3) != "1 mon"
    with pytest.raises(AttributeError):
        Interval().months = 3


def test_interval_group_by_and_distinct(con):
    rows = con.execute("SELECT count(DISTINCT x) FROM (VALUES (interval '1 mon'), (interval '30 days'), "
                       "(interval '720 hours'), (interval '1 day')) t(x)").fetchall()
    assert rows == [(2,)]


_intervals = st.builds(Interval, st.integers(-2**31, 2**31 - 1), st.integers(-2**31, 2**31 - 1),
                       st.integers(-2**63, 2**63 - 1))
_dates = st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))
_datetimes = st.datetimes(dt.datetime(1, 1, 2), dt.datetime(9999, 12, 30))


@settings(max_examples=300, deadline=None)
@given(_intervals)
def test_interval_text_roundtrip(iv):
    back = parse_interval(interval_out(iv))
    assert (back.months, back.days, back.micros) == (iv.months, iv.days, iv.micros)


@settings(max_examples=200, deadline=None)
@given(_dates, _datetimes, st.times())
def test_datetime_text_roundtrip(d, ts, t):
    assert parse_date(to_text(d)) == d
    assert parse_timestamp(to_text(ts)) == ts
    aware = ts.replace(tzinfo=UTC)
    assert to_text(aware).endswith("+00") and parse_timestamptz(to_text(aware)) == aware
    assert parse_time(to_text(t)) == t


@settings(max_examples=200, deadline=None)
@given(_datetimes, st.integers(-10**5, 10**5), st.integers(-10**14, 10**14))
def test_timestamp_plus_interval_and_difference(ts, days, us):
    """``(ts + iv) - ts`` has the span of ``iv`` (days and time, no months), and a month
    added to the 31st lands on the month's last day."""
    from repr.dates import add_interval, sub_timestamps
    from repr.errors import EvalError
    iv = Interval(0, days, us)
    try:
        moved = add_interval(ts, iv)
    except EvalError as e:
        assert e.sqlstate == "22008"
        return
    assert moved == ts + dt.timedelta(days=days, microseconds=us)
    assert sub_timestamps(moved, ts) == iv
    assert add_interval(dt.datetime(2021, 1, 31), Interval(1, 0, 0)) == dt.datetime(2021, 2, 28)


# ---------------------------------------------------------------------------- now()

def test_now_is_one_value_per_statement_and_moves(con):
    r = con.execute("SELECT now() = current_timestamp, now() = statement_timestamp(), "
                    "current_date = now()::date, localtimestamp = now()::timestamp").fetchone()
    assert r == (True, True, True, True)
    a = con.execute("SELECT now()").fetchone()[0]
    b = con.execute("SELECT now()").fetchone()[0]
    assert a.tzinfo == UTC and b >= a
    assert con.execute("SELECT count(*) FROM generate_series(1, 50) WHERE now() = current_timestamp"
                       ).fetchone()[0] == 50


def test_now_is_not_frozen_in_a_view_or_a_cached_plan(con):
    """Sabotage: binding now() without its read-time argument (a constant call, folded at plan time)
    turned this red."""
    con.execute("CREATE VIEW clock AS SELECT now() AS t")
    a = con.execute("SELECT t FROM clock").fetchone()[0]
    import time
    deadline = time.monotonic() + 5
    b = a
    while b == a and time.monotonic() < deadline:
        b = con.execute("SELECT t FROM clock").fetchone()[0]
    assert b > a
    con.execute("DROP VIEW clock")


@pytest.mark.parametrize("ddl", [
    "CREATE MATERIALIZED VIEW m AS SELECT id, now() FROM t",
    "CREATE MATERIALIZED VIEW m AS SELECT id FROM t WHERE ts > current_timestamp - INTERVAL '1 day'",
    "CREATE MATERIALIZED VIEW m AS SELECT current_date FROM t",
    "CREATE MATERIALIZED VIEW m AS SELECT id FROM t WHERE mz_now() <= now()",
])
def test_now_is_refused_in_materialized_views(flag_con, ddl):
    """Sabotage: without ``temporal._refuse_wall_clock`` the MV was created and went stale."""
    flag_con.execute("CREATE TABLE t (id int, ts timestamptz)")
    with pytest.raises(mzlite.NotSupportedError) as e:
        flag_con.execute(ddl)
    assert e.value.sqlstate == "0A000"
    assert e.value.message == "cannot materialize call to current_timestamp"


def test_now_is_refused_in_an_index_on_a_view(flag_con):
    flag_con.execute("CREATE TABLE t (id int, ts timestamp)")
    flag_con.execute("CREATE VIEW v AS SELECT id FROM t WHERE ts < localtimestamp")
    assert flag_con.execute("SELECT * FROM v").fetchall() == []
    with pytest.raises(mzlite.NotSupportedError) as e:
        flag_con.execute("CREATE INDEX i ON v (id)")
    assert e.value.message == "cannot materialize call to current_timestamp"


def test_session_time_zone_is_utc(con):
    assert con.execute("SHOW TIMEZONE").fetchone() == ("UTC",)
    con.execute("SET TIME ZONE 'UTC'")
    with pytest.raises(mzlite.Error) as e:
        con.execute("SET TIMEZONE = 'America/New_York'")
    assert e.value.sqlstate == "22023"
    assert con.execute("SHOW TIMEZONE").fetchone() == ("UTC",)


# ---------------------------------------------------------------------------- maintained views

QUERIES = [
    "SELECT date_trunc('day', ts) AS day, count(*) AS n, sum(dur) AS total, avg(dur) AS mean, max(tz) AS last, "
    "min(d) AS first FROM ev GROUP BY 1",
    "SELECT id, extract(epoch FROM tz) AS e, date_part('dow', d) AS dow, ts + dur AS fin, d + 1 AS next, "
    "to_char(ts, 'YYYY-MM HH24') AS ym, age(ts, d) AS age, ts - tz AS gap, -dur AS neg, dur * 1.5 AS more "
    "FROM ev WHERE d >= date '2020-01-01'",
    "SELECT extract(month FROM d) AS m, justify_interval(sum(dur)) AS j FROM ev GROUP BY 1",
]


def _snapshot(con, sql):
    cur = con.cursor()
    cur.intervals_as_timedelta = False
    return sorted(cur.execute(sql).fetchall(), key=repr)


def test_maintained_views_equal_one_shot(flag_con):
    """A materialized view and an indexed view using date_trunc/extract/interval arithmetic
    over a table that changes agree with the one-shot SELECT after every change."""
    c = flag_con
    c.execute("CREATE TABLE ev (id int, ts timestamp, tz timestamptz, d date, dur interval)")
    for i, q in enumerate(QUERIES):
        c.execute(f"CREATE MATERIALIZED VIEW mv{i} AS {q}")
        c.execute(f"CREATE VIEW v{i} AS {q}")
        c.execute(f"CREATE DEFAULT INDEX ON v{i}")
    changes = [
        "INSERT INTO ev VALUES (1, '2020-01-31 10:00', '2020-01-31 09:00+00', '2020-01-31', '1 mon 2 hours'), "
        "(2, '2020-01-31 23:59:59.5', '2020-02-01 00:00Z', '2020-01-30', '-1 day'), "
        "(3, '2019-12-31 00:00', '2019-12-31 00:00+00', '2019-12-31', '00:00:00.000001')",
        "INSERT INTO ev VALUES (4, '2020-02-29 12:00', '2020-02-29 12:00+02', '2020-02-29', '30 days')",
        "UPDATE ev SET dur = dur + interval '1 day', ts = ts + interval '1 mon' WHERE id <= 2",
        "DELETE FROM ev WHERE tz < '2020-01-01'",
        "INSERT INTO ev VALUES (5, NULL, NULL, NULL, NULL), (6, '2020-03-01', '2020-03-01', '2020-03-01', '1 year')",
    ]
    for change in changes:
        c.execute(change)
        for i, q in enumerate(QUERIES):
            expected = _snapshot(c, q)
            assert _snapshot(c, f"SELECT * FROM mv{i}") == expected, (change, q)
            assert _snapshot(c, f"SELECT * FROM v{i}") == expected, (change, q)
    assert _snapshot(c, "SELECT id FROM ev") == [(1,), (2,), (4,), (5,), (6,)]


def test_generate_series_over_timestamps(flag_con):
    rows = flag_con.execute("SELECT * FROM generate_series(timestamp '2020-01-31', timestamp '2020-05-01', "
                            "interval '1 month')").fetchall()
    assert [r[0] for r in rows] == [dt.datetime(2020, 1, 31), dt.datetime(2020, 2, 29), dt.datetime(2020, 3, 29),
                                    dt.datetime(2020, 4, 29)]
    rows = flag_con.execute("SELECT generate_series(date '2020-01-02', date '2020-01-01', '-12 hours')").fetchall()
    # no ORDER BY: the rows come out in the order of the whole row (Materialize's finishing)
    assert [r[0] for r in rows] == [dt.datetime(2020, 1, 1, tzinfo=UTC), dt.datetime(2020, 1, 1, 12, tzinfo=UTC),
                                    dt.datetime(2020, 1, 2, tzinfo=UTC)]
    with pytest.raises(mzlite.Error) as e:
        flag_con.execute("SELECT generate_series(timestamp '2020-01-01', timestamp '2020-01-02', interval '0')"
                         ).fetchall()
    assert e.value.sqlstate == "22023"


# ---------------------------------------------------------------------------- temporal filters

T0 = 1_704_067_200_000  # 2024-01-01 00:00:00 UTC in epoch milliseconds
HOUR = 3_600_000


@pytest.fixture
def clock_start():
    return T0


@pytest.fixture
def clocked(clocked_con):  # the shared manual-clock connection (both settings), starting at T0
    return clocked_con


def _at(con, t):
    con.clock.value = t
    con.database.tick()


def test_temporal_filter_over_timestamptz(clocked):
    """``mz_now() <= created_at + INTERVAL '1 hour'`` compares through epoch milliseconds
    and maintains the view as time passes, without writes.  Sabotage: without the implicit
    timestamptz -> mz_timestamp cast the comparison was 42883 operator does not exist."""
    c = clocked
    c.execute("CREATE TABLE ev (id int, created_at timestamptz)")
    c.execute("INSERT INTO ev VALUES (1, '2023-12-31 22:00+00'), (2, '2023-12-31 23:30+00'), "
              "(3, '2024-01-01 00:00+00'), (4, '2024-01-01 02:00+00')")
    where = "WHERE mz_now() >= created_at AND mz_now() <= created_at + INTERVAL '1 hour'"
    c.execute(f"CREATE MATERIALIZED VIEW recent AS SELECT id FROM ev {where}")
    c.execute(f"CREATE VIEW recent_v AS SELECT id FROM ev {where}")
    c.execute("CREATE DEFAULT INDEX ON recent_v")
    for t, expected in [(T0, [2, 3]), (T0 + 31 * 60_000, [3]), (T0 + HOUR + 1, []), (T0 + 2 * HOUR, [4]),
                        (T0 + 3 * HOUR + 1, [])]:
        _at(c, t)
        for name in ("recent", "recent_v"):
            assert sorted(r[0] for r in c.execute(f"SELECT id FROM {name}").fetchall()) == expected, (name, t)
        one_shot = sorted(r[0] for r in c.execute(f"SELECT id FROM ev {where}").fetchall())
        assert one_shot == expected


def test_mz_now_converts_to_timestamptz(clocked):
    got = clocked.execute("SELECT mz_now()::timestamptz, mz_now()::timestamp, "
                          "timestamptz '2024-01-01 00:00:01+00'::mz_timestamp").fetchone()
    assert got[0] >= dt.datetime(2024, 1, 1, tzinfo=UTC) and got[0].tzinfo == UTC
    assert got[1] == got[0].replace(tzinfo=None)
    assert got[2] == T0 + 1000


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=30),
                 st.from_regex(r"\A[-+ @:.PTYMWDHS0-9a-z]{0,24}\Z"),
                 st.from_regex(r"\A\d{1,6}-\d{1,3}-\d{1,3}( \d{1,3}:\d{1,3}(:\d{1,3}(\.\d{0,9})?)?)?([+-]\d{1,4}|Z)?\Z")))
def test_input_functions_raise_only_eval_errors(text):
    """Garbage in, a SQLSTATE out: no bare Python exception escapes an input function."""
    from repr.dates import PARSERS
    from repr.errors import EvalError
    for parse in PARSERS.values():
        try:
            parse(text)
        except EvalError as e:
            assert e.sqlstate in ("22007", "22008", "22009")


@pytest.mark.parametrize("unit, a, b, want", [
    ("days", "2020-01-01 23:59:00+00", "2020-01-02 00:01:00+00", 1),   # a boundary crossed, not a day elapsed
    ("day", "2020-01-02 00:01:00+00", "2020-01-01 23:59:00+00", -1),
    ("hour", "2020-01-01 10:59:59+00", "2020-01-01 11:00:00+00", 1),
    ("minutes", "2020-01-01 10:00:00+00", "2020-01-01 10:00:59+00", 0),
    ("week", "2024-07-21 12:00:00+00", "2024-07-22 00:00:00+00", 1),    # weeks start on Monday
    ("month", "2020-01-31 00:00:00+00", "2020-02-01 00:00:00+00", 1),
    ("quarter", "2020-03-31 00:00:00+00", "2020-04-01 00:00:00+00", 1),
    ("year", "2000-12-31 23:59:59+00", "2001-01-01 00:00:00+00", 1),
    ("decade", "2009-06-01 00:00:00+00", "2010-01-01 00:00:00+00", 1),
    ("century", "2000-06-01 00:00:00+00", "2001-01-01 00:00:00+00", 1),  # centuries start at year 1
    ("millisecond", "2020-01-01 00:00:00.0015+00", "2020-01-01 00:00:00.0031+00", 2),
])
def test_datediff_counts_boundaries_as_materialize(con, unit, a, b, want):
    """Materialize's ``datediff(unit, a, b)`` (the quickstart's flipper view uses it).  Sabotage:
    the day count taken from the elapsed ``timedelta`` gave 0 for the first case."""
    assert con.execute(f"SELECT datediff('{unit}', '{a}'::timestamptz, '{b}'::timestamptz)").fetchall() == [(want,)]
    got = con.execute(f"SELECT datediff('{unit}', '{a}'::timestamptz::timestamp, '{b}'::timestamptz::timestamp)")
    assert got.fetchall() == [(want,)]


def test_datediff_on_dates_and_bad_units(con):
    assert con.execute("SELECT datediff('year', DATE '2000-12-31', DATE '2001-01-01')").fetchall() == [(1,)]
    assert con.execute("SELECT datediff('day', DATE '2020-03-01', DATE '2020-02-01')").fetchall() == [(-29,)]
    with pytest.raises(mzlite.DataError) as e:
        con.execute("SELECT datediff('fortnight', DATE '2000-12-31', DATE '2001-01-01')")
    assert e.value.sqlstate == "22023" and "fortnight" in str(e.value)
