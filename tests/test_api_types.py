"""Values both ways through the API: Python parameters in, Python values out.

int2/int4/int8 <-> int, numeric <-> Decimal, float8 <-> float, text <-> str, boolean <->
bool, NULL <-> None, through parameters alone (``SELECT ?``) and through table columns;
edge values by hypothesis; unadaptable parameters are ProgrammingErrors naming the type.
date/time/datetime (naive and aware)/timedelta round-trip as date, time, timestamp,
timestamptz and interval (interval comes back as a timedelta, a month being 30 days);
bytes as bytea, uuid.UUID as uuid, dict/list as jsonb or arrays (tests/test_bytea_uuid.py,
test_jsonb.py and test_arrays.py hold the rest)."""
from __future__ import annotations

import datetime
import enum
import math
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mzlite
from tests.support.remote_targets import mark_difference, open_target

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


#: each test runs on the embedded engine, through mzlite serve and on PostgreSQL 15
#: (tests/support/remote_targets.py; DIFFERENCES there lists what answers otherwise)
API_TARGETS = ("embedded", "remote", "postgres")


@pytest.fixture(scope="module", params=API_TARGETS)
def target_con(request):  # one connection per target for the whole module (read-mostly tests)
    target = None
    if request.param == "embedded":
        c = mzlite.connect()
    else:
        target = open_target(request, request.param)
        c = target.connect()
    c.execute("CREATE TABLE v (i2 int2, i4 int4, i8 int8, n numeric, f float8, s text, b bool)")
    yield request.param, c
    c.close()
    if target is not None:
        target.close()


@pytest.fixture
def con(request, target_con):
    name, c = target_con
    mark_difference(request, name)
    return c


def roundtrip(con, column: str, value):
    """Insert ``value`` into column ``column`` of a fresh row and read it back."""
    con.execute("DELETE FROM v")
    con.execute(f"INSERT INTO v ({column}) VALUES (?)", (value,))
    rows = con.execute(f"SELECT {column} FROM v").fetchall()
    assert len(rows) == 1
    return rows[0][0]


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return type(a) is type(b) and a == b


# ------------------------------------------------------------------ integers

@pytest.mark.parametrize("column, lo, hi", [("i2", -2**15, 2**15 - 1), ("i4", -2**31, 2**31 - 1),
                                            ("i8", -2**63, 2**63 - 1)])
def test_integer_columns_at_their_limits(con, column, lo, hi):
    for v in (lo, hi, 0, -1, 1):
        got = roundtrip(con, column, v)
        assert type(got) is int and got == v
    for v in (lo - 1, hi + 1):
        with pytest.raises(mzlite.DataError) as e:
            roundtrip(con, column, v)
        assert e.value.sqlstate == "22003"


@SETTINGS
@given(v=st.integers(min_value=-2**63, max_value=2**63 - 1))
def test_int8_roundtrip(con, v):
    assert same(roundtrip(con, "i8", v), v)
    assert same(con.execute("SELECT ?", (v,)).fetchone()[0], v)


@SETTINGS
@given(v=st.integers(min_value=-2**31, max_value=2**31 - 1))
def test_int4_roundtrip(con, v):
    assert same(roundtrip(con, "i4", v), v)


@SETTINGS
@given(v=st.integers(min_value=-2**15, max_value=2**15 - 1))
def test_int2_roundtrip(con, v):
    assert same(roundtrip(con, "i2", v), v)


@pytest.mark.parametrize("v, type_code", [(2**31 - 1, "integer"), (2**31, "bigint"), (-2**63, "bigint"),
                                          (2**63, "numeric"), (10**40, "numeric")])
def test_parameter_int_types_by_size(con, v, type_code):
    cur = con.execute("SELECT ?", (v,))
    assert cur.description[0][1] == type_code
    got = cur.fetchone()[0]
    assert got == v and (type(got) is int if type_code != "numeric" else type(got) is Decimal)


# ------------------------------------------------------------------ numeric, float

decimals = st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
    lambda d: len(d.as_tuple().digits) <= 38 and -30 <= d.as_tuple().exponent <= 30)


@SETTINGS
@given(v=decimals)
def test_numeric_roundtrip(con, v):
    got = roundtrip(con, "n", v)
    assert type(got) is Decimal and got == v
    got = con.execute("SELECT ?", (v,)).fetchone()[0]
    assert type(got) is Decimal and got == v


@pytest.mark.parametrize("v", [Decimal("0"), Decimal("-0.000001"), Decimal("123456789012345678901234567890.123"),
                               Decimal("1E+30"), Decimal("1E-30")])
def test_numeric_edge_values(con, v):
    got = roundtrip(con, "n", v)
    assert type(got) is Decimal and got == v


@SETTINGS
@given(v=st.floats(allow_nan=True, allow_infinity=True))
def test_float8_roundtrip(con, v):
    assert same(roundtrip(con, "f", v), v)
    assert same(con.execute("SELECT ?", (v,)).fetchone()[0], v)


@pytest.mark.parametrize("v", [0.0, -0.0, 5e-324, 1.7976931348623157e308, float("inf"), float("-inf"), float("nan")])
def test_float8_edge_values(con, v):
    assert same(roundtrip(con, "f", v), v)


# ------------------------------------------------------------------ text, bool, NULL

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)


@SETTINGS
@given(v=texts)
def test_text_roundtrip(con, v):
    assert same(roundtrip(con, "s", v), v)
    assert same(con.execute("SELECT ?::text", (v,)).fetchone()[0], v)


@pytest.mark.parametrize("v", ["", "'", "''", '"', "?", "$1", "\\", "é", "\U0001F600", "a;b", "--", "/*"])
def test_text_that_looks_like_sql(con, v):
    """Parameters are values, never SQL text: quotes, placeholders and comment markers stay data."""
    assert roundtrip(con, "s", v) == v


def test_bool_roundtrip(con):
    for v in (True, False):
        got = roundtrip(con, "b", v)
        assert got is v
    assert con.execute("SELECT ?", (True,)).description[0][1] == "boolean"


def test_null_roundtrip(con):
    for column in ("i2", "i4", "i8", "n", "f", "s", "b"):
        assert roundtrip(con, column, None) is None
    assert con.execute("SELECT ?::int", (None,)).fetchone() == (None,)


def test_result_value_types(con):
    row = con.execute("SELECT 1::int2, 2::int4, 3::int8, 1.5::numeric, 2.5::float8, 'x'::text, true, NULL").fetchone()
    assert [type(v) for v in row] == [int, int, int, Decimal, float, str, bool, type(None)]


def test_int_subclasses_bind_as_plain_values(con):
    class Color(enum.IntEnum):
        RED = 7

    got = con.execute("SELECT ?", (Color.RED,)).fetchone()[0]
    assert type(got) is int and got == 7


def test_dollar_placeholders(con):
    assert con.execute("SELECT $2, $1, $2", ("a", 1)).fetchone() == (1, "a", 1)


# ------------------------------------------------------------------ unadaptable parameters

@pytest.mark.parametrize("value", [object(), {1, 2}, [object()], {"a": object()}, 1j, frozenset()])
def test_unadaptable_parameter_is_a_programming_error_naming_the_type(con, value):
    """Sabotage: letting the value through to the engine gave NotSupportedError (0A000) from the
    binder instead of a ProgrammingError."""
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("SELECT ?", (value,))
    assert type(value).__name__ in str(e.value)
    assert not isinstance(e.value, mzlite.InternalError)
    with pytest.raises(mzlite.ProgrammingError):
        con.executemany("SELECT ?", [(1,), (value,)])
    assert con.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("params", ["ab", {"x": 1}, 5])
def test_parameters_must_be_a_sequence(con, params):
    with pytest.raises(mzlite.ProgrammingError):
        con.execute("SELECT ?", params)


def test_missing_parameter(con):
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("SELECT ?, ?", (1,))
    assert e.value.sqlstate == "42P02"


# ------------------------------------------------------------------ bytea

def test_binary_roundtrips_as_bytea(con):
    value = mzlite.Binary(b"\x00\xff")
    cur = con.execute("SELECT ?", (value,))
    assert cur.fetchone()[0] == value
    assert cur.description[0][1] == mzlite.BINARY


# ---- date/time family ----
UTC = datetime.timezone.utc


@pytest.mark.parametrize("value, type_code", [
    (mzlite.Date(2024, 2, 29), "date"),
    (mzlite.Time(12, 30, 1), "time without time zone"),
    (mzlite.Time(12, 30, 1, 250), "time without time zone"),
    (mzlite.Timestamp(2024, 2, 29, 12, 30, 1), "timestamp without time zone"),
    (mzlite.Timestamp(2024, 2, 29, 12, 30, 1, 123456, tzinfo=UTC), "timestamp with time zone"),
    (datetime.timedelta(days=1, seconds=5), "interval"),
    (datetime.timedelta(days=-3, microseconds=7), "interval"),
])
def test_datetime_parameters_roundtrip(con, value, type_code):
    cur = con.execute("SELECT ?", (value,))
    assert cur.fetchone()[0] == value
    assert cur.description[0][1] == type_code
    assert cur.description[0][1] == mzlite.DATETIME


def test_datetime_columns_roundtrip(con):
    """Through a table, and aware datetimes in other zones are stored as UTC instants.
    Sabotage: without the cursor's interval conversion the interval came back as Interval."""
    con.execute("CREATE TABLE dt (d date, t time, ts timestamp, tz timestamptz, i interval)")
    plus2 = datetime.timezone(datetime.timedelta(hours=2))
    row = (mzlite.Date(2024, 1, 2), mzlite.Time(3, 4, 5), mzlite.Timestamp(2024, 1, 2, 3, 4, 5),
           mzlite.Timestamp(2024, 1, 2, 5, 4, 5, tzinfo=plus2), datetime.timedelta(hours=25))
    con.execute("INSERT INTO dt VALUES (?, ?, ?, ?, ?)", row)
    got = con.execute("SELECT * FROM dt").fetchone()
    assert got == row
    assert got[3].tzinfo == UTC and got[3].hour == 3
    assert type(got[4]) is datetime.timedelta
    assert con.execute("SELECT interval '1 mon 1 day'").fetchone()[0] == datetime.timedelta(days=31)
    assert con.execute("SELECT count(*) FROM dt WHERE ts < ? AND d = ?",
                       (mzlite.Timestamp(2025, 1, 1), mzlite.Date(2024, 1, 2))).fetchone()[0] == 1
    con.execute("DROP TABLE dt")


def test_extra_parameters_are_an_error(con):
    """Sabotage: without ``_check_parameter_count`` the extra value was silently ignored."""
    for sql, params in [("SELECT ?", (1, 2)), ("SELECT 1", (1,)), ("SELECT $1", (1, 2))]:
        with pytest.raises(mzlite.ProgrammingError):
            con.execute(sql, params)
    with pytest.raises(mzlite.ProgrammingError):
        con.executemany("INSERT INTO v (i4) VALUES (?)", [(1,), (2, 3)])
    assert con.execute("SELECT $2, $1", (1, 2)).fetchone() == (2, 1)


def test_subscribe_rows_hold_the_same_python_values_as_cursor_rows(con):
    """``Connection.subscribe`` hands out interval as timedelta, jsonb as dict/list and arrays
    as lists, as ``cursor.fetch*`` does.  Sabotage checked: not setting ``python_values`` in
    ``Connection.subscribe`` left the engine's Interval/Jsonb/Array objects in the rows (red)."""
    con.execute("CREATE TABLE docs (i interval, j jsonb, a int[])")
    con.execute("INSERT INTO docs VALUES (interval '1 day 2 hours', '{\"k\": [1, 2]}', ARRAY[1, NULL])")
    want = con.execute("SELECT * FROM docs").fetchone()
    assert want == (datetime.timedelta(days=1, hours=2), {"k": [1, 2]}, [1, None])
    with con.subscribe("docs") as sub:
        (update,) = sub.fetch(timeout=None)
    assert update.diff == 1 and update.row == want
    con.execute("DROP TABLE docs")
