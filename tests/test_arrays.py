"""Arrays (repr.arrays and the SQL surface), against PostgreSQL 15's answers.

Array text output/input round trips by hypothesis (PostgreSQL's quoting rules), the order
of arrays with NULL elements, ANY/ALL three-valued logic, unnest, and the API (lists in,
lists out).  Expected strings come from PostgreSQL 15 for the same expressions.
"""
from __future__ import annotations

from hypothesis import given, settings, strategies as st
import pytest

import mzlite
from repr.arrays import Array, array_out, parse_array
from repr.errors import EvalError
from repr.strconv import to_text

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6)


@settings(max_examples=300, deadline=None)
@given(vals=st.lists(st.none() | texts, max_size=6))
def test_text_array_output_parses_back(vals):
    """Sabotage: not quoting elements spelled NULL (case-insensitively) made ``{"null"}``
    parse back as a NULL element (seen red)."""
    a = Array(vals)
    assert parse_array(array_out(a, to_text), lambda s: s) == a


def test_output_quoting_as_postgres():
    a = Array(["a b", "", "NULL", 'x"y', "a\\b", None, "c", "{", ","])
    assert to_text(a) == '{"a b","","NULL","x\\"y","a\\\\b",NULL,c,"{",","}'
    assert to_text(Array([True, False])) == "{t,f}"
    assert to_text(Array([])) == "{}"


@pytest.mark.parametrize("text", ["{1,2", "1,2", "{1,,2}", "{1}x", '{"a}', "{a\"b}"])
def test_malformed_literals(text):
    with pytest.raises(EvalError) as e:
        parse_array(text, lambda s: s)
    assert e.value.sqlstate == "22P02"


def test_order_nulls_after_values_then_length():
    """PostgreSQL: ARRAY[1,NULL] > ARRAY[1,2]; ARRAY[1] < ARRAY[1,0].
    Sabotage: using tuple's comparison raised TypeError on None elements (seen red)."""
    assert Array([1, None]) > Array([1, 2])
    assert Array([1]) < Array([1, 0])
    assert sorted([Array([2]), Array([1, None]), Array([1, 5]), Array([])]) == \
        [Array([]), Array([1, 5]), Array([1, None]), Array([2])]
    assert Array([1, 2]) != (1, 2)  # an array is not a record


PG_EXPR = [
    ("ARRAY[1, 2, NULL]", "{1,2,NULL}"),
    ("(ARRAY[10, 20, 30])[2]", "20"),
    ("(ARRAY[10, 20, 30])[4]", None),
    ("(ARRAY[10, 20, 30])[2:3]", "{20,30}"),
    ("3 = ANY(ARRAY[1, NULL])", None),
    ("1 = ANY(ARRAY[]::int[])", "false"),
    ("3 = ALL(ARRAY[3, NULL])", None),
    ("2.5 > ANY(ARRAY[1, 3])", "true"),
    ("ARRAY[1, 2] || 3", "{1,2,3}"),
    ("ARRAY[1, NULL] @> ARRAY[NULL]::int[]", "false"),
    ("array_to_string(ARRAY['a', NULL], '-', '*')", "a-*"),
    ("array_position(ARRAY['a', NULL], NULL)", "2"),
    ("regexp_match('foobarbaz', 'b(a)(r)')", "{a,r}"),
    ("regexp_split_to_array('abc', '')", "{a,b,c}"),
    ("string_to_array('a|b|NA', '|', 'NA')", "{a,b,NULL}"),
    ("'{1, 2 ,3}'::int[]::bigint[]", "{1,2,3}"),
]


@pytest.mark.parametrize("expr, want", PG_EXPR)
def test_sql_expressions_as_postgres(con, expr, want):
    assert con.execute(f"SELECT ({expr})::text").fetchone()[0] == want


def test_unnest_and_array_agg_keep_nulls(con):
    con.execute("CREATE TABLE t (g int, a int)")
    con.execute("INSERT INTO t VALUES (1, 1), (1, NULL), (2, 3)")
    assert sorted(con.execute("SELECT g, array_agg(a) FROM t GROUP BY g").fetchall()) == [(1, [1, None]), (2, [3])]
    assert sorted(con.execute("SELECT unnest(ARRAY[a, g]) FROM t WHERE g = 2").fetchall()) == [(2,), (3,)]
    with pytest.raises(mzlite.Error) as e:
        con.execute("SELECT ARRAY[]")
    assert e.value.sqlstate == "42P18"


def test_api_lists_in_and_out(con):
    con.execute("CREATE TABLE a (i int[], t text[])")
    con.execute("INSERT INTO a VALUES (?, ?)", ([1, None, 3], ["x", "y z", None]))
    cur = con.execute("SELECT i, t, i[1] FROM a")
    assert cur.fetchone() == ([1, None, 3], ["x", "y z", None], 1)
    assert [d[1] for d in cur.description] == ["integer[]", "text[]", "integer"]
    assert con.execute("SELECT ?", ([1.5, 2],)).fetchone()[0] == [1.5, 2.0]


def test_maintained_view_matches_one_shot(con):
    con.execute("CREATE TABLE t (g int, a int, arr int[])")
    q = "SELECT g, x, count(*) AS c FROM t, unnest(arr) AS x WHERE x = ANY(ARRAY[1, 2, 7]) GROUP BY g, x"
    con.execute(f"CREATE VIEW v AS {q}")
    con.execute("CREATE DEFAULT INDEX ON v")
    con.execute(f"CREATE MATERIALIZED VIEW mv AS {q}")
    for s in ["INSERT INTO t VALUES (1, 1, ARRAY[1, 2, 2]), (2, 2, '{7,8}'), (3, 3, NULL)",
              "DELETE FROM t WHERE g = 1", "UPDATE t SET arr = arr || 1 WHERE g = 2"]:
        con.execute(s)
        want = sorted(con.execute(q).fetchall())
        assert sorted(con.execute("SELECT * FROM v").fetchall()) == want
        assert sorted(con.execute("SELECT * FROM mv").fetchall()) == want
