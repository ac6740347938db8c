"""bytea and uuid: input forms and output as PostgreSQL 15 prints them, the API round trip,
the jsonb ``?`` operator versus the ``?`` placeholder, and gen_random_uuid() (volatile: a
new value per row, refused in maintained objects with 0A000)."""
from __future__ import annotations

import uuid

import pytest

import mzlite
from repr.errors import EvalError
from repr.strconv import bytea_out, parse_bytea, parse_uuid


@pytest.mark.parametrize("text, want", [("abc", "\\x616263"), ("\\x616263", "\\x616263"), ("\\x 41 42", "\\x4142"),
                                        ("ab\\\\c\\101", "\\x61625c6341"), ("", "\\x")])
def test_bytea_input_as_postgres(text, want):
    assert bytea_out(parse_bytea(text)) == want


@pytest.mark.parametrize("text, code", [("\\xzz", "22023"), ("\\x1", "22023"), ("a\\q", "22P02")])
def test_bytea_bad_input(text, code):
    with pytest.raises(EvalError) as e:
        parse_bytea(text)
    assert e.value.sqlstate == code


@pytest.mark.parametrize("text", ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
                                  "A0EEBC999C0B4EF8BB6D6BB9BD380A11", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11"])
def test_uuid_input_forms(text):
    assert str(parse_uuid(text)) == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"


@pytest.mark.parametrize("text", ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
                                  "{a0eebc999c0b4ef8bb6d6bb9bd380a11", " a0eebc999c0b4ef8bb6d6bb9bd380a11", "-a0eebc99"])
def test_uuid_bad_input(text):
    with pytest.raises(EvalError) as e:
        parse_uuid(text)
    assert e.value.sqlstate == "22P02"


def test_api_round_trip(con):
    con.execute("CREATE TABLE b (x bytea, u uuid)")
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    for v in (b"\x00\xff", bytearray(b"ab"), memoryview(b"c")):
        con.execute("DELETE FROM b")
        con.execute("INSERT INTO b VALUES (?, ?)", (v, u))
        cur = con.execute("SELECT x, u, u::text FROM b")
        assert cur.fetchone() == (bytes(v), u, str(u))
        assert cur.description[0][1] == mzlite.BINARY and cur.description[1][1] == mzlite.STRING


def test_question_mark_operator_and_placeholder(con):
    """Sabotage: without ``sql.parse._jsonb_question_mark`` the jsonb ``?`` became $1 (seen red)."""
    assert con.execute("SELECT '{\"a\": 1}'::jsonb ? 'a', ? + 1", (1,)).fetchone() == (True, 2)
    con.execute("CREATE TABLE j (value jsonb, d jsonb)")
    con.execute("INSERT INTO j VALUES (?, ?)", ({"k": 1}, {"z": 2}))
    assert con.execute("SELECT value ? 'k' FROM j WHERE d ? ?", ("z",)).fetchall() == [(True,)]


def test_gen_random_uuid_is_volatile(con):
    """Sabotage: without VOLATILE in ``planner.optimize.util.is_constant_scalar`` every row got
    the same folded uuid (seen red); ``mzlite.temporal.check_volatile`` refuses the
    maintained objects."""
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1), (2), (3)")
    assert len({r[0] for r in con.execute("SELECT gen_random_uuid() FROM t").fetchall()}) == 3
    con.execute("CREATE VIEW v AS SELECT a, gen_random_uuid() AS u FROM t")
    assert len(con.execute("SELECT * FROM v").fetchall()) == 3
    for sql in ("CREATE DEFAULT INDEX ON v", "CREATE MATERIALIZED VIEW m AS SELECT gen_random_uuid()",
                "CREATE MATERIALIZED VIEW m AS SELECT a FROM t WHERE gen_random_uuid() IS NOT NULL"):
        with pytest.raises(mzlite.NotSupportedError) as e:
            con.execute(sql)
        assert e.value.sqlstate == "0A000"
