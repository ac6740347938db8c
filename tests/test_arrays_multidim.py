"""Multi-dimensional arrays, ARRAY(SELECT ...) and unnest(a, b, ...) (issue 8).

``repr.arrays``: hypothesis round trips of nested arrays through PostgreSQL's text form,
shape-aware equality/hash, and the btree order (elements, then element count, then number of
dimensions, then dimension lengths) against a model; then end to end: a correlated
ARRAY(SELECT ...) and subscripts inside an indexed view and a materialized view as rows come
and go, with the interactive runtime on and off, and the Python API's nested lists.  SQL
answers are PostgreSQL 15's (slt/test/arrays_multidim.slt runs against the server).
"""
from __future__ import annotations

import functools

from hypothesis import given, settings, strategies as st
import pytest

from expr.functions import FUNCTIONS
import mzlite
from repr.arrays import Array, MdArray, array_out, make_array, parse_array, unnest_zip
from repr.errors import EvalError
from repr.strconv import to_text


@st.composite
def arrays(draw):
    dims = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    n = functools.reduce(lambda a, b: a * b, dims, 1)
    elems = draw(st.lists(st.none() | st.integers(-3, 3), min_size=n, max_size=n))
    return make_array(elems, dims)


def _model_key(a):
    flat = [(1, 0) if x is None else (0, x) for x in a]
    return (flat, len(a), len(a.dims), a.dims)


@settings(max_examples=200, deadline=None)
@given(a=arrays())
def test_text_round_trip(a):
    """Sabotage: ``array_out`` ignoring ``dims`` (flat braces) fails the round trip."""
    text = array_out(a, to_text)
    b = parse_array(text, int)
    assert b == a and b.dims == a.dims and hash(b) == hash(a)
    assert text.count("{") == sum(functools.reduce(lambda x, y: x * y, a.dims[:k], 1) for k in range(len(a.dims)))


@settings(max_examples=200, deadline=None)
@given(xs=st.lists(arrays(), max_size=6))
def test_order_is_postgresql_btree_order(xs):
    """Elements first (NULL last), then fewer elements, fewer dimensions, shorter leading
    dimensions.  Sabotage: dropping the dims comparison from ``_cmp`` makes {{1,2}} and
    {1,2} tie (and compare equal in sort), which fails here."""
    got = sorted(xs)
    want = sorted(xs, key=_model_key)
    assert [(_model_key(a)) for a in got] == [(_model_key(a)) for a in want]
    for a in xs:
        for b in xs:
            assert (a == b) == (_model_key(a) == _model_key(b))


def test_shapes_are_part_of_equality():
    flat = Array([1, 2, 3, 4])
    square = make_array([1, 2, 3, 4], (2, 2))
    row = make_array([1, 2, 3, 4], (1, 4))
    assert isinstance(square, MdArray) and square != flat and square != row and flat != square
    assert len({flat, square, row}) == 3
    assert make_array([], (0, 3)) == Array(()) and type(make_array([1], (1,))) is Array


@pytest.mark.parametrize("text", ["{{1,2},{3}}", "{{1,2},3}", "{1,{2}}", "{{}}", "{{1},{2}"])
def test_ragged_literals_are_malformed(text):
    with pytest.raises(EvalError) as ei:
        parse_array(text, int)
    assert ei.value.sqlstate == "22P02"


def test_subscripts_and_slices():
    a = make_array([1, 2, 3, 4, 5, 6], (2, 3))
    idx, sl = FUNCTIONS["array_index"].fn, FUNCTIONS["array_slice"].fn
    assert idx(a, 2, 3) == 6 and idx(a, 1) is None and idx(a, 3, 1) is None and idx(a, 1, 1, 1) is None
    assert sl(a, 1, 1, None, None) == make_array([1, 2, 3], (1, 3))
    assert sl(a, None, None, 2, 3) == make_array([2, 3, 5, 6], (2, 2))
    assert sl(a, 1, 2, 1, 2, 1, 1) == Array(())


def test_unnest_zip_pads_with_null():
    assert unnest_zip(Array([1, 2, 3]), make_array(["a", "b", "c", "d"], (2, 2)), None) == [
        (1, "a", None), (2, "b", None), (3, "c", None), (None, "d", None)]
    assert unnest_zip(None, None) == []


@pytest.mark.parametrize("flag", ["true", "false"])
def test_maintained_views_with_array_subqueries(flag):
    """A correlated ARRAY(SELECT ... ORDER BY) with subscripts, in an indexed view and a
    materialized view, equals the one-shot query after every change.  Sabotage:
    ``bind_array_subquery`` dropping the ORDER BY (no ``agg_order``) fails the DESC order."""
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
    cur = con.cursor()
    cur.execute("CREATE TABLE g (id int, m int[])")
    cur.execute("CREATE TABLE t (id int, name text, pos int)")
    cur.execute("INSERT INTO g VALUES (1, '{{1,2},{3,4}}'), (2, '{5}'), (3, NULL)")
    cur.execute("INSERT INTO t VALUES (1, 'a', 1), (1, 'b', 2), (2, 'c', 1)")
    q = ("SELECT id, m[2][1] AS x, array_dims(m) AS d, "
         "ARRAY(SELECT name FROM t WHERE t.id = g.id ORDER BY pos DESC) AS names FROM g")
    cur.execute(f"CREATE VIEW v AS {q}")
    cur.execute("CREATE DEFAULT INDEX ON v")
    cur.execute(f"CREATE MATERIALIZED VIEW mv AS {q}")
    changes = ["INSERT INTO t VALUES (1, 'z', 0), (3, 'q', 5)", "DELETE FROM t WHERE name = 'b'",
               "INSERT INTO g VALUES (4, ARRAY[[7,8],[9,10],[11,12]])", "DELETE FROM g WHERE id = 1"]
    for change in [None] + changes:
        if change:
            cur.execute(change)
        cur.execute(q + " ORDER BY id")
        want = cur.fetchall()
        for name in ("v", "mv"):
            cur.execute(f"SELECT * FROM {name} ORDER BY id")
            assert cur.fetchall() == want
    assert want == [(2, None, "[1:1]", ["c"]), (3, None, None, ["q"]), (4, 9, "[1:3][1:2]", [])]
    cur.execute("SELECT ARRAY(SELECT name FROM t ORDER BY name DESC), m FROM g WHERE id = 4")
    assert cur.fetchall() == [(["z", "q", "c", "a"], [[7, 8], [9, 10], [11, 12]])]
    con.close()
