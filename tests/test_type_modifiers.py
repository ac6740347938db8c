"""char(n), varchar(n) and numeric(p,s): PostgreSQL's modifier semantics (``sql.types.char``/``numeric``,
``repr.char``/``repr.numeric``), one-shot and in maintained objects, on every write path.

Expected answers were taken from PostgreSQL 15.
"""
from __future__ import annotations

from decimal import Decimal

import pytest

import mzlite


def one(con, sql, params=None):
    return con.execute(sql, params).fetchall()


def err(con, sql, params=None, many=False):
    with pytest.raises(mzlite.Error) as ei:
        if many:
            con.executemany(sql, params)
        else:
            con.execute(sql, params)
    return ei.value


def test_explicit_casts_truncate_pad_and_round(con):
    assert one(con, "SELECT 'abcd'::char(3), 'ab'::char(3), 'abcd  '::varchar(4), 'abcd'::varchar(2), "
                    "123.456::numeric(5,2), 1234.5::numeric(5,-2), 'x'::char, 0.5::numeric(2,2)") == \
        [("abc", "ab ", "abcd", "ab", Decimal("123.46"), Decimal("1200"), "x", Decimal("0.50"))]
    # round half away from zero
    assert one(con, "SELECT 2.5::numeric(1,0), (-2.5)::numeric(2,0), 0.005::numeric(3,2)") == \
        [(Decimal(3), Decimal(-3), Decimal("0.01"))]


def test_numeric_overflow_has_postgres_detail(con):
    e = err(con, "SELECT 1234.5::numeric(5,2)")
    assert (e.sqlstate, str(e)) == ("22003", "numeric field overflow")
    assert e.detail == "A field with precision 5, scale 2 must round to an absolute value less than 10^3."
    e = err(con, "SELECT 1::numeric(2,2)")
    assert e.detail == "A field with precision 2, scale 2 must round to an absolute value less than 1."
    e = err(con, "SELECT 0.001::numeric(2,5)")
    assert e.detail == "A field with precision 2, scale 5 must round to an absolute value less than 10^-3."
    e = err(con, "SELECT 'infinity'::numeric::numeric(5,2)")
    assert e.detail == "A field with precision 5, scale 2 cannot hold an infinite value."
    assert one(con, "SELECT 'nan'::numeric::numeric(5,2)")[0][0].is_nan()


def test_bad_modifiers(con):
    for sql, state, msg in [
        ("SELECT 'a'::varchar(0)", "22023", "length for type varchar must be at least 1"),
        ("SELECT 'a'::char(0)", "22023", "length for type char must be at least 1"),
        ("SELECT 1::numeric(0)", "22023", "NUMERIC precision 0 must be between 1 and 1000"),
        ("SELECT 1::numeric(5,1001)", "22023", "NUMERIC scale 1001 must be between -1000 and 1000"),
        ("SELECT 1::int4(3)", "42601", 'type modifier is not allowed for type "int4"'),
    ]:
        e = err(con, sql)
        assert (e.sqlstate, str(e)) == (state, msg), sql
        assert e.position == sql.index("::") + 3, sql


def test_bpchar_semantics(con):
    """Sabotage: with ``cast_bpchar_to_text`` the identity, the equality, length and ||
    answers below keep the padding (PostgreSQL's are the ones asserted)."""
    assert one(con, "SELECT 'a '::char(3) = 'a'::char(3), length('a '::char(3)), 'ab'::char(3) || '|', "
                    "'a'::char(3) = 'a'::text, 'a'::char(3) LIKE 'a', 'ab'::char(3) LIKE 'ab%', "
                    "octet_length('a'::text), upper('a'::char(3)) || '|'") == \
        [(True, 1, "ab|", True, False, True, 1, "A|")]


def test_insert_update_enforce_modifiers(con):
    con.execute("CREATE TABLE t (c char(3), v varchar(3), n numeric(5,2), i int2)")
    con.execute("INSERT INTO t VALUES ('a', 'abc', 1.005, 1), ('abc  ', 'a   ', 2, 2)")
    assert one(con, "SELECT c, v, n, i FROM t ORDER BY i") == \
        [("a  ", "abc", Decimal("1.01"), 1), ("abc", "a  ", Decimal("2.00"), 2)]
    for sql, state, msg in [
        ("INSERT INTO t VALUES ('abcd', 'a', 1, 1)", "22001", "value too long for type character(3)"),
        ("INSERT INTO t VALUES ('a', 'abcd', 1, 1)", "22001", "value too long for type character varying(3)"),
        ("INSERT INTO t VALUES ('a', 'a', 1000, 1)", "22003", "numeric field overflow"),
        ("INSERT INTO t VALUES ('a', 'a', 1, 40000)", "22003", "smallint out of range"),
        ("INSERT INTO t SELECT 'abcd', v, n, i FROM t", "22001", "value too long for type character(3)"),
        ("UPDATE t SET n = n * 1000", "22003", "numeric field overflow"),
        ("UPDATE t SET v = v || 'xyz' WHERE i = 1", "22001", "value too long for type character varying(3)"),
    ]:
        e = err(con, sql)
        assert (e.sqlstate, str(e)) == (state, msg), sql
    e = err(con, "INSERT INTO t VALUES ('a', 'a', 1000, 1)")
    assert e.detail == "A field with precision 5, scale 2 must round to an absolute value less than 10^3."
    assert one(con, "SELECT count(*) FROM t") == [(2,)]  # nothing half-applied
    con.execute("UPDATE t SET c = 'z', n = n * 10.001 WHERE i = 2")
    assert one(con, "SELECT c || '|', n FROM t WHERE i = 2") == [("z|", Decimal("20.00"))]


def test_defaults_are_checked():
    con = mzlite.connect()
    con.execute("CREATE TABLE d2 (v varchar(2) DEFAULT 'abc', k int)")  # checked when used, as in PostgreSQL
    assert err(con, "INSERT INTO d2 (k) VALUES (1)").sqlstate == "22001"
    assert err(con, "INSERT INTO d2 (k) VALUES (?)", [(1,)], many=True).sqlstate == "22001"
    con.execute("CREATE TABLE d (c char(4) DEFAULT 'x', n numeric(4,1) DEFAULT 1.26, k int)")
    con.execute("INSERT INTO d (k) VALUES (1)")
    assert one(con, "SELECT c, n FROM d") == [("x   ", Decimal("1.3"))]


def test_bulk_paths_enforce_modifiers(con):
    """Sabotage: ``mzlite.bulk.PreparedInsert`` compiling the rows without their ``typmod_*``
    checks made executemany store 'abcd' in a varchar(3) column and an unpadded char(3)."""
    con.execute("CREATE TABLE t (c char(3), v varchar(3), n numeric(5,2), i int2)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [("a", "ab", Decimal("1.005"), 1), ("ab ", "abc  ", 2, 2)])
    assert one(con, "SELECT c, v, n FROM t ORDER BY i") == \
        [("a  ", "ab", Decimal("1.01")), ("ab ", "abc", Decimal("2.00"))]
    for row, state in [(("abcd", "a", 1, 3), "22001"), (("a", "abcd", 1, 3), "22001"),
                       (("a", "a", Decimal(1000), 3), "22003"), (("a", "a", 1, 40000), "22003")]:
        assert err(con, "INSERT INTO t VALUES (?, ?, ?, ?)", [row], many=True).sqlstate == state
        assert err(con, "INSERT INTO t VALUES (?, ?, ?, ?)", row).sqlstate == state
    con.execute("CREATE INDEX t_i ON t (i)")
    assert err(con, "UPDATE t SET v = ? WHERE i = ?", [("wxyz", 1)], many=True).sqlstate == "22001"
    con.executemany("UPDATE t SET v = ?, n = ? WHERE i = ?", [("xy", 3.14159, 1)])
    assert one(con, "SELECT v, n FROM t WHERE i = 1") == [("xy", Decimal("3.14"))]


def test_fast_path_is_taken_for_modified_columns():
    """The compiled INSERT path accepts modified columns (it does not just fall back to
    planning the set with its values)."""
    from mzlite.bulk import prepared
    from sql.parse import parse_one
    con = mzlite.connect()
    con.execute("CREATE TABLE t (c char(3), v varchar(3), n numeric(5,2))")
    prep = prepared(con.database, parse_one("INSERT INTO t VALUES ($1, $2, $3)"), ("unknown", "unknown", "numeric"))
    assert prep.evaluate([("a", "ab", Decimal("1.005"))]) == ([("a  ", "ab", Decimal("1.01"))], [])
    assert prep.evaluate([("abcd", "ab", Decimal(1))])[1] == [0]  # failed: the set's literal plan raises 22001


def test_maintained_objects_keep_modifier_semantics(con):
    con.execute("CREATE TABLE t (c char(3), n numeric(6,2))")
    con.execute("CREATE VIEW v AS SELECT c, c || '|' AS s, length(c) AS l, n::numeric(4,1) AS r FROM t")
    con.execute("CREATE DEFAULT INDEX ON v")
    con.execute("CREATE MATERIALIZED VIEW m AS SELECT c, count(*) AS k FROM t GROUP BY c")
    con.execute("INSERT INTO t VALUES ('a', 1.25), ('a  ', 2), ('b', 3.33)")
    want = [("a  ", "a|", 1, Decimal("1.3")), ("a  ", "a|", 1, Decimal("2.0")), ("b  ", "b|", 1, Decimal("3.3"))]
    assert sorted(one(con, "SELECT * FROM v")) == want
    assert sorted(one(con, "SELECT * FROM m")) == [("a  ", 2), ("b  ", 1)]
    assert one(con, "SELECT count(*) FROM t WHERE c = 'a'") == [(2,)]
    con.execute("INSERT INTO t VALUES ('c', 1000.5)")
    e = err(con, "SELECT * FROM v")  # the view's numeric(4,1) overflows on the new row
    assert e.sqlstate == "22003"


def test_catalog_remembers_modifiers(con):
    con.execute("CREATE TABLE t (a varchar(10), b char(2), c numeric(7,3), d numeric, e varchar)")
    assert one(con, "SHOW COLUMNS FROM t") == [
        ("a", "true", "character varying(10)", ""), ("b", "true", "character(2)", ""),
        ("c", "true", "numeric(7,3)", ""), ("d", "true", "numeric", ""), ("e", "true", "character varying", "")]
    assert [d[1] for d in con.execute("SELECT * FROM t").description] == \
        ["text", "character", "numeric", "numeric", "text"]


# ----------------------------------------------------------------------------- real (float4)

def test_real_is_single_precision_with_postgres_output(con):
    """Answers from PostgreSQL 15.  Sabotage: with ``float4_canon`` returning its input, 0.1::real
    * 3 is 0.30000000000000004 and (1/3)::real prints 0.3333333333333333."""
    assert one(con, "SELECT 0.1::real, (0.1::real * 3), 1::real / 3::real, (1::real / 3::real)::text, "
                    "1e6::real::text, 123456789::real::text, 1e-5::real::text, 0.1::real::float8, "
                    "0.1::real::numeric, 1.5::real + 1::float8") == \
        [(0.1, 0.30000000447034836, 0.33333334, "0.33333334", "1e+06", "1.2345679e+08", "1e-05",
          0.10000000149011612, Decimal("0.1"), 2.5)]
    cur = con.execute("SELECT 1::real * 2::real, 1::real * 2, 1::real + 1.5, -(1::real), abs(-1::real)")
    assert [d[1] for d in cur.description] == ["real", "double precision", "double precision", "real", "real"]
    for sql, state in [("SELECT 1e39::real", "22003"), ("SELECT 3e38::real * 10::real", "22003"),
                       ("SELECT 'x'::real", "22P02"), ("SELECT 1e-46::real", "22003"),
                       ("SELECT 1::real / 0::real", "22012"), ("SELECT 1e300::float8::real", "22003")]:
        assert err(con, sql).sqlstate == state, sql


def test_real_columns_aggregates_and_views(con):
    con.execute("CREATE TABLE r (x real, y double precision)")
    con.executemany("INSERT INTO r VALUES (?, ?)", [(0.1, 0.1), (3, 3)])
    con.execute("INSERT INTO r VALUES (?, ?), (0.2, 0.2)", (1e6, 1e6))
    assert sorted(one(con, "SELECT x, x + y, x = y FROM r")) == [
        (0.1, 0.20000000149011612, False), (0.2, 0.40000000298023225, False), (3.0, 6.0, True),
        (1e6, 2e6, True)]
    cur = con.execute("SELECT sum(x), avg(x), max(x) FROM r WHERE x < 1")
    assert cur.fetchall() == [(0.3, 0.15000000223517418, 0.2)]
    assert [d[1] for d in cur.description] == ["real", "double precision", "real"]
    con.execute("CREATE VIEW v AS SELECT x * 2::real AS d FROM r WHERE x < 1")
    con.execute("CREATE DEFAULT INDEX ON v")
    con.execute("CREATE MATERIALIZED VIEW m AS SELECT sum(x) AS s FROM r")
    con.execute("INSERT INTO r VALUES (0.3, 0)")
    assert sorted(one(con, "SELECT d FROM v")) == [(0.2,), (0.4,), (0.6,)]
    assert one(con, "SELECT s FROM m") == [(1000003.6,)]
    assert err(con, "INSERT INTO r VALUES (?, 0)", (1e39,)).sqlstate == "22003"
    assert err(con, "INSERT INTO r VALUES (?, 0)", [(1e39,)], many=True).sqlstate == "22003"
    assert one(con, "SELECT numeric_precision, numeric_precision_radix FROM information_schema.columns "
                    "WHERE table_name = 'r' AND column_name = 'x'") == [(24, 2)]


def test_real_plan_time_and_runtime_parsers_agree():
    """``sql.types.parse_literal`` of a real (plan-time literals) and ``cast_text_to_float4``
    (run time) give the same values and the same errors."""
    from expr.functions import FUNCTIONS
    from repr.errors import EvalError
    from sql.errors import DataError
    from sql.types import parse_literal
    run = FUNCTIONS["cast_text_to_float4"].fn
    for s in ["0.1", " 1e6 ", "-3.4e38", "3.5e38", "1e-46", "1e-45", "nan", "-Infinity", "x", "1.2345678", ""]:
        try:
            want = ("ok", parse_literal(s, "float4"))
        except DataError as e:
            want = ("err", e.sqlstate, str(e))
        try:
            got = ("ok", run(s))
        except EvalError as e:
            got = ("err", e.sqlstate, e.message)
        assert repr(got) == repr(want), s
