"""A join feeding a count/sum reduce from its own lookup loops (``JoinOp.fuse_reduce``).

When a join's only consumer is a ``ReduceOp`` whose aggregates are counts and sums of plain
columns, each match found by the join's last lookup updates its group in place: no output
row, pair or list in between.  The dataflow marks the reduce for flushing after each push
(``_Node.fused_into``).  Checked against a from-scratch recomputation in the test over random
+1/-1 changes to both inputs (NULL values, duplicate rows, keys with several matches), with
the interactive runtime on and off, and the fusion shown to be in use.  Also here: the
join of that shape arranging a stored table's own row tuples (not narrowed copies).
"""
from __future__ import annotations

import random

import pytest

from compute.render.join import JoinOp
import mzlite

VIEW = ("SELECT b.g, count(*) AS n, sum(a.v) AS s, count(a.v) AS nv "
        "FROM a JOIN b ON a.k = b.k GROUP BY b.g")


def _expected(a_rows, b_rows):
    out = {}
    for (ak, av) in a_rows:
        for (bk, bg) in b_rows:
            if ak is not None and ak == bk:
                n, s, nv = out.get(bg, (0, None, 0))
                if av is not None:
                    s = av if s is None else s + av
                    nv += 1
                out[bg] = (n + 1, s, nv)
    return sorted((g, n, s, nv) for g, (n, s, nv) in out.items())


@pytest.mark.parametrize("flag", ["true", "false"])
@pytest.mark.parametrize("seed", range(4))
def test_a_fused_join_and_reduce_equal_a_recomputation(monkeypatch, flag, seed):
    """Sabotage: the dataflow not marking the fused reduce for flushing -> the view keeps its
    old groups; the fused loop adding ``d0`` instead of ``d`` (a match's count ignored) ->
    a key with a duplicate row in ``b`` counts once; the loop not adding the key to
    ``touched`` -> changed groups are not re-emitted."""
    fused = []
    real = JoinOp.fuse_reduce
    monkeypatch.setattr(JoinOp, "fuse_reduce", lambda self, r: fused.append(real(self, r)) or fused[-1])
    rng = random.Random(seed)
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
    con.execute("CREATE TABLE a (k int, v int)")
    con.execute("CREATE TABLE b (k int, g text)")
    a_rows = [(rng.choice([None, 1, 2, 3, 4]), rng.choice([None, 5, 7, 11])) for _ in range(30)]
    b_rows = [(k, rng.choice("xyz")) for k in (1, 2, 2, 3)] + [(2, "x"), (2, "x")]
    con.cursor().executemany("INSERT INTO a VALUES (?, ?)", a_rows)
    con.cursor().executemany("INSERT INTO b VALUES (?, ?)", b_rows)
    con.execute(f"CREATE MATERIALIZED VIEW m AS {VIEW}")
    con.execute("CREATE DEFAULT INDEX ON m")
    read = lambda: sorted(con.execute("SELECT * FROM m").fetchall())
    assert read() == _expected(a_rows, b_rows)
    assert True in fused  # (the dataflow is built by then)
    for _ in range(25):
        side = rng.random()
        if side < 0.6:
            if a_rows and rng.random() < 0.4:
                row = rng.choice(a_rows)
                a_rows.remove(row)
                con.execute("DELETE FROM a WHERE k IS NOT DISTINCT FROM ? AND v IS NOT DISTINCT FROM ?", row)
                a_rows = [r for r in a_rows if r != row]
            else:
                new = [(rng.choice([None, 1, 2, 3, 4, 5]), rng.choice([None, 5, 7])) for _ in range(rng.randint(1, 4))]
                con.cursor().executemany("INSERT INTO a VALUES (?, ?)", new)
                a_rows += new
        else:
            if b_rows and rng.random() < 0.5:
                row = rng.choice(b_rows)
                con.execute("DELETE FROM b WHERE k = ? AND g = ?", row)
                b_rows = [r for r in b_rows if r != row]
            else:
                row = (rng.randint(1, 5), rng.choice("xyz"))
                con.execute("INSERT INTO b VALUES (?, ?)", row)
                b_rows.append(row)
        assert read() == _expected(a_rows, b_rows)


def test_a_join_arranges_the_stored_rows_themselves(monkeypatch):
    """A binary join over a table read through one of its columns and another column keeps
    the table's row tuples whole (``push_down_projections``' stored-rows exception): its
    arrangement of the table holds the very tuples table storage holds, not narrowed
    copies, and the view is right.  Sabotage: ``_carries_stored_rows_whole`` always False ->
    the arrangement held new 2-column tuples."""
    joins = []
    real = JoinOp.__init__

    def capture(self, *args, **kw):
        real(self, *args, **kw)
        joins.append(self)
    monkeypatch.setattr(JoinOp, "__init__", capture)
    con = mzlite.connect()
    con.execute("CREATE TABLE a (id int, k int, v int)")
    con.execute("CREATE TABLE b (k int, g text)")
    con.cursor().executemany("INSERT INTO a VALUES (?, ?, ?)", [(i, i % 3, i * 10) for i in range(20)])
    con.cursor().executemany("INSERT INTO b VALUES (?, ?)", [(0, "x"), (1, "y"), (2, "x")])
    con.execute("CREATE MATERIALIZED VIEW m AS SELECT b.g, sum(a.v) AS s FROM a JOIN b ON a.k = b.k GROUP BY b.g")
    con.execute("CREATE DEFAULT INDEX ON m")
    assert sorted(con.execute("SELECT * FROM m").fetchall()) == [
        ("x", sum(i * 10 for i in range(20) if i % 3 != 1)), ("y", sum(i * 10 for i in range(20) if i % 3 == 1))]
    db = con.database
    coll = db.storage.collections[db.catalog.resolve("a").id]
    stored = {id(r) for r in coll.snapshot(coll.upper - 1)}
    arranged = [r for j in joins for arr in j._arrangements.values() if arr.input == 0
                for bucket in arr.data.values() for r in bucket]
    assert len(arranged) == 20 and all(len(r) == 3 and id(r) in stored for r in arranged)
    con.close()
