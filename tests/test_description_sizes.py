"""``cursor.description`` sizes (PEP 249 items 3-6) from type modifiers (issue 8).

A column read unchanged from a table, view or materialized view reports its declared
modifier as PostgreSQL's RowDescription does (numeric(p,s): precision and scale;
varchar(n)/char(n): display size; timestamp(p)/time(p)/interval(p): precision), so does an
explicit cast; a computed value reports none; fixed-size types report their byte size as
internal_size.  Checked with the interactive runtime on and off.
"""
from __future__ import annotations

import pytest



@pytest.fixture
def cur(cur):  # the shared cursor (both settings) over this module's table
    cur.execute("CREATE TABLE t (n numeric(5,2), v varchar(10), ch char(3), ts timestamp(3), i int, tx text)")
    cur.execute("INSERT INTO t VALUES (1.5, 'x', 'y', '2020-01-01', 1, 'z')")
    return cur


def _sizes(cur, q):
    cur.execute(q)
    return [tuple(d[2:6]) for d in cur.description]


def test_table_columns(cur):
    """Sabotage: ``output_typmods`` answering None for a table's Get (no modifiers) fails here."""
    assert _sizes(cur, "SELECT * FROM t") == [(None, None, 5, 2), (10, None, None, None), (3, None, None, None),
                                              (None, 8, 3, None), (None, 4, None, None), (None, None, None, None)]
    d = cur.description[0]
    assert (d.name, d.type_code, d[4], d[5]) == ("n", "numeric", 5, 2)


def test_views_casts_and_computed_values(cur):
    cur.execute("CREATE VIEW v AS SELECT n, n + 1 AS m, v FROM t")
    cur.execute("CREATE DEFAULT INDEX ON v")
    cur.execute("CREATE MATERIALIZED VIEW mv AS SELECT i, n FROM t WHERE i > 0")
    assert _sizes(cur, "SELECT * FROM v") == [(None, None, 5, 2), (None, None, None, None), (10, None, None, None)]
    assert _sizes(cur, "SELECT n FROM mv") == [(None, None, 5, 2)]
    assert _sizes(cur, "SELECT i::numeric(10,4), v::varchar(2), max(n) FROM t GROUP BY 1, 2") == [
        (None, None, 10, 4), (2, None, None, None), (None, None, None, None)]
    assert _sizes(cur, "SELECT a.n FROM t a JOIN t b ON a.i = b.i UNION ALL SELECT n FROM t") == [
        (None, None, 5, 2)]
    assert _sizes(cur, "SELECT n FROM t UNION ALL SELECT n + 0 FROM t") == [(None, None, None, None)]
