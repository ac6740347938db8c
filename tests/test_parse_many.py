"""The list forms of the text input parsers (``repr.numeric.parse_numeric_many``,
``repr.dates_many``) and the column-at-a-time INSERT path that uses them
(``mzlite.bulk``): the same values, and the same first error, as the per-value parsers, over
random mixes of canonical and near-canonical input.
"""
import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mzlite
from repr import dates, dates_many, numeric
from repr.errors import EvalError

_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcome(fn, values):
    try:
        return ("ok", fn(values))
    except EvalError as e:
        return ("error", e.sqlstate, str(e))


def _per_value(one):
    return lambda values: [one(v) for v in values]


_numeric_text = st.one_of(
    st.integers(-10**30, 10**30).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=4).map(str),
    st.sampled_from(["1.", ".5", "-.5", "+1", "007", "1e5", "1E-3", " 1", "1 ", "1_0", "NaN", "nan", "sNaN",
                     "-NaN", "Infinity", "-inf", "", ".", "+-1", "1.2.3", "1-2", "9" * 1001, "1\n2", "٣"]))


@_SETTINGS
@given(st.lists(_numeric_text, max_size=8))
def test_parse_numeric_many_equals_per_value(values):
    many = _outcome(numeric.parse_numeric_many, values)
    one = _outcome(_per_value(numeric.parse_numeric), values)
    assert many[0] == one[0]
    if many[0] == "ok":  # equal, and the same representation (scale) too
        assert list(map(str, many[1])) == list(map(str, one[1]))
    else:
        assert many == one


_int_text = st.one_of(
    st.integers(-2**40, 2**40).map(str),
    st.sampled_from(["007", "+5", "-0", "", "-", "+-1", "1-2", " 1", "1_0", "٣", "2147483647", "2147483648",
                     "-2147483648", "-2147483649", "999999999", "99999", "32768", "-32768", "9223372036854775808"]))


@_SETTINGS
@given(st.lists(_int_text, max_size=8), st.sampled_from(["int2", "int4", "int8"]))
def test_parse_int_many_equals_per_value(values, type_):
    from repr import strconv
    assert _outcome(lambda vs: strconv.parse_int_many(vs, type_), values) == \
        _outcome(_per_value(lambda v: strconv.parse_int(v, type_)), values)


_base = datetime.datetime(1999, 12, 31, 23, 59, 58)
_ts_text = st.one_of(
    st.datetimes(min_value=datetime.datetime(1, 1, 1), max_value=datetime.datetime(9999, 12, 31)).map(str),
    st.integers(0, 10**7).map(lambda s: str(_base + datetime.timedelta(seconds=s))),
    st.integers(0, 10**6).map(lambda us: (str(_base + datetime.timedelta(microseconds=us)))[:21 + us % 6]),
    st.sampled_from(["2020-01-01T00:00:00", "2020-13-01 00:00:00", "2020-02-30 00:00:00", "2020-01-01 24:00:00",
                     "2020-01-01 23:59:60", "0000-01-01 00:00:00", "20200101 00:00:00", "2020-01-01 00:00",
                     "2020-01-01", "2020-01-01 00:00:00+05:00", "2020-01-01 00:00:00-05:00", "2020-01-01 00:00:00Z",
                     "2020-01-01 00:00:00.", "2020-01-01 00:00:00.1234567", "2020-01-01 0:00:00.5",
                     "2020-01-0100:00:00", "infinity", "-infinity", "epoch", "2020-01-01 00:00:00 BC",
                     "2020-1-01 00:00:00", "2020-01-01  00:00:00", "2020-01-01 00-00-00", "2020:01:01 00:00:00",
                     ""]))


@_SETTINGS
@given(st.lists(_ts_text, max_size=6))
def test_parse_timestamp_many_equals_per_value(values):
    for many, one in ((dates_many.parse_timestamp_many, dates.parse_timestamp),
                      (dates_many.parse_timestamptz_many, dates.parse_timestamptz)):
        got, want = _outcome(many, values), _outcome(_per_value(one), values)
        assert got == want
        if got[0] == "ok":  # the same zone too (equal instants in different zones compare equal)
            assert [getattr(v, "tzinfo", None) for v in got[1]] == [getattr(v, "tzinfo", None) for v in want[1]]


_date_text = st.one_of(
    st.dates(min_value=datetime.date(1, 1, 1)).map(str),
    st.sampled_from(["2020-02-30", "2020-13-01", "0000-01-01", "20200101", "2020-01-01 10:00:00", "2020-1-1",
                     "2020/01/01", "infinity", "epoch", "", "2020-01-01-", "2020--01-01"]))


@_SETTINGS
@given(st.lists(_date_text, max_size=6))
def test_parse_date_many_equals_per_value(values):
    assert _outcome(dates_many.parse_date_many, values) == _outcome(_per_value(dates.parse_date), values)


def test_canonical_columns_never_take_the_per_value_path(monkeypatch):
    """The mechanism: a column of canonical values is parsed in C, not value by value.
    Sabotage: make ``_canonical`` return False (or drop the ``_PLAIN_CHARS`` branch of
    ``parse_numeric_many``, or the ``_INT_CHARS`` one of ``parse_int_many``); the per-value parsers, made to fail here, are then called."""
    def refuse(_v):
        raise AssertionError("per-value parser called")
    monkeypatch.setattr(dates, "parse_timestamp", refuse)
    monkeypatch.setattr(dates, "parse_timestamptz", refuse)
    monkeypatch.setattr(dates, "parse_date", refuse)
    monkeypatch.setattr(numeric, "parse_numeric", refuse)
    from repr import strconv
    monkeypatch.setattr(strconv, "parse_int", refuse)
    assert strconv.parse_int_many(["1", "-22", "+3"], "int2") == [1, -22, 3]
    ts = [str(_base + datetime.timedelta(seconds=i)) for i in range(100)]
    assert dates_many.parse_timestamp_many(ts)[1] == _base + datetime.timedelta(seconds=1)
    assert dates_many.parse_timestamptz_many(ts)[0].tzinfo is dates.UTC
    assert dates_many.parse_timestamp_many(["2020-01-01 00:00:00.25"])[0].microsecond == 250000
    assert dates_many.parse_date_many(["2020-01-02", "1999-12-31"])[1] == datetime.date(1999, 12, 31)
    assert str(numeric.parse_numeric_many(["1.25", "-3", "0.000"])[2]) == "0.000"


def test_columnar_insert_path_is_taken(monkeypatch):
    """``executemany`` of text timestamps and numerics evaluates a column at a time.
    Sabotage: make ``bulk._columnar_form`` return None; the row-at-a-time evaluation, made
    to fail here, is then used."""
    from mzlite import bulk
    con = mzlite.connect()
    con.execute("CREATE TABLE t (a int, b numeric, c timestamp, d date, e timestamptz)")
    evaluate = bulk.PreparedInsert.evaluate

    def row_path(_sets):
        raise AssertionError("row-at-a-time evaluation used")

    def evaluate_without_row_path(self, sets):
        self.fn = row_path
        return evaluate(self, sets)
    monkeypatch.setattr(bulk.PreparedInsert, "evaluate", evaluate_without_row_path)
    rows = [(i, f"{i}.5", str(_base + datetime.timedelta(hours=i)), "2020-01-0%d" % (i % 9 + 1),
             str(_base + datetime.timedelta(minutes=i))) for i in range(50)]
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    assert con.execute("SELECT count(*), sum(b) FROM t").fetchall() == [(50, numeric.Decimal("1250.0"))]


@pytest.mark.parametrize("bad, sqlstate", [("x1.5", "22P02"), ("2020-13-01 00:00:00", "22008")])
def test_columnar_insert_errors_and_nulls_match_the_row_path(bad, sqlstate):
    """A bad value anywhere in the column gives the per-value error and writes nothing; NULLs
    stay NULL beside values parsed a column at a time."""
    con = mzlite.connect()
    con.execute("CREATE TABLE t (a int, b numeric, c timestamp)")
    good = [(i, None if i % 3 else f"{i}.25", None if i % 4 else str(_base)) for i in range(20)]
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", good)
    assert con.execute("SELECT count(*), count(b), count(c) FROM t").fetchall() == [(20, 7, 5)]
    rows = [(i, "1.5", "2020-01-01 00:00:00") for i in range(10)]
    rows[6] = (6, bad, "2020-01-01 00:00:00") if sqlstate == "22P02" else (6, "1.5", bad)
    with pytest.raises(mzlite.Error) as e:
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    assert e.value.sqlstate == sqlstate
    assert bad in str(e.value)
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(20,)]
