"""Tests of sql.types: spellings, display names, the cast lattice, common types, literals."""
from __future__ import annotations

from decimal import Decimal as D
import math

from hypothesis import given, settings, strategies as st
import pytest

from expr.functions import FUNCTIONS
from repr.errors import EvalError
from repr.numeric import numeric_out
from repr.strconv import to_text
from sql.errors import Error
from sql.types import (TYPES, can_cast, cast_context, common_type, display_name, normalize_type_name,
                       parse_literal)

SPELLINGS = [
    ("int", "int4"), ("INTEGER", "int4"), ("int4", "int4"), ("smallint", "int2"), ("int2", "int2"),
    ("bigint", "int8"), ("int8", "int8"), ("real", "float4"), ("float4", "float4"),
    ("double precision", "float8"), ("DOUBLE   PRECISION", "float8"), ("float", "float8"), ("float8", "float8"),
    ("numeric", "numeric"), ("decimal", "numeric"), ("numeric(10, 2)", "numeric"), ("numeric(5)", "numeric"),
    ("text", "text"), ("varchar", "text"), ("varchar(10)", "text"), ("character varying", "text"),
    ("character varying(3)", "text"), ("char(3)", "bpchar"), ("bpchar", "bpchar"), ("string", "text"),
    ("boolean", "bool"), ("bool", "bool"), ("pg_catalog.int4", "int4"), ("float(24)", "float8"),
    ("mz_timestamp", "mz_timestamp"),
]


@pytest.mark.parametrize("spelling,name", SPELLINGS)
def test_normalize_type_name(spelling, name):
    assert normalize_type_name(spelling) == name


def test_unknown_type_name():
    with pytest.raises(Error) as ei:
        normalize_type_name("widget")
    assert ei.value.sqlstate == "42704" and ei.value.message == 'type "widget" does not exist'


def test_display_names():
    assert [display_name(t) for t in ("bool", "int2", "int4", "int8", "numeric", "float8", "text")] == \
        ["boolean", "smallint", "integer", "bigint", "numeric", "double precision", "text"]


CAST_CONTEXTS = [
    ("int2", "int4", "implicit"), ("int4", "int8", "implicit"), ("int8", "numeric", "implicit"),
    ("numeric", "float8", "implicit"), ("int2", "float8", "implicit"), ("unknown", "bool", "implicit"),
    ("int8", "int4", "assignment"), ("float8", "numeric", "assignment"), ("numeric", "int2", "assignment"),
    ("int4", "text", "assignment"), ("bool", "text", "assignment"), ("float8", "text", "assignment"),
    ("text", "int4", "explicit"), ("text", "bool", "explicit"), ("bool", "int4", "explicit"),
    ("int4", "bool", "explicit"), ("int8", "bool", "explicit"), ("int2", "bool", None), ("bool", "float8", None), ("text", "unknown", None),
]


@pytest.mark.parametrize("a,b,ctx", CAST_CONTEXTS)
def test_cast_contexts(a, b, ctx):
    assert cast_context(a, b) == ctx
    for c in ("implicit", "assignment", "explicit"):
        allowed = ctx is not None and ["implicit", "assignment", "explicit"].index(ctx) <= \
            ["implicit", "assignment", "explicit"].index(c)
        assert can_cast(a, b, c) == allowed


def test_can_cast_is_monotone_in_context():
    for a in TYPES:
        for b in TYPES:
            if can_cast(a, b, "implicit"):
                assert can_cast(a, b, "assignment")
            if can_cast(a, b, "assignment"):
                assert can_cast(a, b, "explicit")


COMMON = [
    (["int4", "int4"], "int4"), (["unknown", "unknown"], "text"), (["unknown", "int4"], "int4"),
    (["int4", "int8"], "int8"), (["int8", "int4"], "int8"), (["int4", "numeric"], "numeric"),
    (["numeric", "float8", "int2"], "float8"), (["float8", "numeric"], "float8"), (["int2", "unknown", "int2"], "int2"),
    (["int4", "text"], None), (["bool", "int4"], None), (["text", "unknown", "text"], "text"),
    (["bool", "unknown"], "bool"), ([], None), (["mz_timestamp", "int8"], None),
]


@pytest.mark.parametrize("types,want", COMMON)
def test_common_type(types, want):
    assert common_type(types) == want


LITERALS = [
    ("12", "int4", 12), (" 12 ", "int4", 12), ("-3", "int8", -3), ("+3", "int2", 3), ("32767", "int2", 32767),
    ("1.50", "numeric", D("1.50")), ("1e3", "numeric", D("1000")), (".5", "numeric", D("0.5")),
    ("NaN", "numeric", D("NaN")), ("1.5", "float8", 1.5), ("-Infinity", "float8", -math.inf),
    ("1e-5", "float8", 1e-05), ("true", "bool", True), ("t", "bool", True), ("off", "bool", False),
    ("No", "bool", False), ("1", "bool", True), ("hello", "text", "hello"), (" x ", "text", " x "),
    ("17", "mz_timestamp", 17),
]


@pytest.mark.parametrize("text,type_,want", LITERALS)
def test_parse_literal(text, type_, want):
    got = parse_literal(text, type_)
    assert type(got) is type(want)
    if isinstance(want, D) and want.is_nan():
        assert got.is_nan()
        return
    assert got == want
    if isinstance(want, D) and want.is_finite():
        assert str(got) == str(want)


LITERAL_ERRORS = [
    ("abc", "int4", "22P02", 'invalid input syntax for type integer: "abc"'),
    ("1.5", "int4", "22P02", None), ("", "int4", "22P02", None), ("1_000", "int8", "22P02", None),
    ("99999999999", "int4", "22003", 'value "99999999999" is out of range for type integer'),
    ("40000", "int2", "22003", 'value "40000" is out of range for type smallint'),
    ("x", "numeric", "22P02", 'invalid input syntax for type numeric: "x"'),
    ("1e400", "float8", "22003", None), ("abc", "float8", "22P02", None),
    ("maybe", "bool", "22P02", 'invalid input syntax for type boolean: "maybe"'), ("o", "bool", "22P02", None),
    ("-1", "mz_timestamp", "22003", None),
]


@pytest.mark.parametrize("text,type_,code,msg", LITERAL_ERRORS)
def test_parse_literal_errors(text, type_, code, msg):
    with pytest.raises(Error) as ei:
        parse_literal(text, type_)
    assert ei.value.sqlstate == code
    if msg:
        assert ei.value.message == msg


#: the run-time casts from text (what a cast of a column evaluates)
RUNTIME_PARSERS = {t: FUNCTIONS[f"cast_text_to_{t}"].fn for t in ("int2", "int4", "int8", "numeric", "float8", "bool")}


def _outcome(fn, s):
    try:
        v = fn(s)
    except (Error, EvalError) as e:
        return ("err", e.sqlstate, e.message)
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, D):
        return ("ok", str(v))
    return ("ok", type(v), v)


TEXTS = st.one_of(
    st.text(alphabet=" +-.0123456789eEaflnstruioyNIF_\t", max_size=8),
    st.sampled_from(["1e400", "-1e-400", "99999999999", "9223372036854775808", "Infinity", "inf", "nan",
                     "of", "on", "yes", "tru", "", " ", "0.000", "5.", ".5", "1e3"]),
)


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_plan_time_and_run_time_parsers_agree(s):
    """A literal parsed at plan time (sql.types.parse_literal) and a value cast at run time
    (expr.functions' cast_text_to_<type>) give the same values and the same errors: both call
    the type's repr parser, parse_literal keeping its SQLSTATE and message.
    Sabotage: sql.types.boolean's PARSERS entry accepting "yes" only in full -> differs on
    "y" (seen red); parse_literal raising every EvalError as 22P02 -> differs on "1e400" (seen red)."""
    for t, fn in RUNTIME_PARSERS.items():
        assert _outcome(lambda x: parse_literal(x, t), s) == _outcome(fn, s), (t, s)


NUMERIC_OUT = [(D("1.50"), "1.50"), (D("1E+3"), "1000"), (D("-0.00"), "0.00"), (D("1E-7"), "0.0000001"),
               (D("NaN"), "NaN"), (D("Infinity"), "Infinity"), (D("-Infinity"), "-Infinity"), (D("-12.5"), "-12.5")]


@pytest.mark.parametrize("d,text", NUMERIC_OUT)
def test_numeric_out(d, text):
    assert numeric_out(d) == text


def test_to_text_by_python_type():
    assert [to_text(v) for v in (True, False, 3, 1.0, D("2.50"), "s", (1, None, "a"))] == \
        ["true", "false", "3", "1", "2.50", "s", "(1,,a)"]
