"""A join whose every input is an imported index on its join key (select4.test: ``FROM
t7, t6 WHERE e7 = d6`` with indexes on e7 and d6).  Every reused input skips its hydration
(the import holds it); one of them must still push it through its path, or nothing is
produced for as_of.  Sabotage: make ``JoinOp.ignores_hydration`` true for every reused
input (``_hydrating_port`` ignored) and these joins come out empty."""
import pytest

import mzlite


@pytest.mark.parametrize("interactive", [True, False])
def test_join_of_indexed_join_keys(interactive):
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": interactive})
    con.execute("CREATE TABLE a (x int, k int)")
    con.execute("CREATE TABLE b (y int, k int)")
    con.execute("CREATE TABLE c (z int, k int)")
    con.execute("INSERT INTO a VALUES (1, 10), (2, 20), (3, 10)")
    con.execute("INSERT INTO b VALUES (4, 10), (5, 30), (6, 10)")
    con.execute("INSERT INTO c VALUES (7, 10), (8, 20)")
    two = "SELECT x, y FROM a, b WHERE a.k = b.k"
    three = "SELECT x, y, z FROM a, b, c WHERE a.k = b.k AND b.k = c.k"
    want2 = sorted(con.execute(two).fetchall())
    want3 = sorted(con.execute(three).fetchall())
    assert want2 == [(1, 4), (1, 6), (3, 4), (3, 6)] and len(want3) == 4
    for t in "abc":
        con.execute(f"CREATE INDEX {t}_k ON {t} (k)")
    assert sorted(con.execute(two).fetchall()) == want2
    assert sorted(con.execute(three).fetchall()) == want3
    assert con.execute(f"SELECT count(*) FROM ({two}) AS j").fetchall() == [(4,)]
    con.execute(f"CREATE MATERIALIZED VIEW mv AS {three}")
    assert sorted(con.execute("SELECT * FROM mv").fetchall()) == want3
    con.execute("INSERT INTO c VALUES (9, 10)")
    con.execute("DELETE FROM a WHERE x = 1")
    assert sorted(con.execute("SELECT * FROM mv").fetchall()) == [(3, 4, 7), (3, 4, 9), (3, 6, 7), (3, 6, 9)]
    assert sorted(con.execute(three).fetchall()) == [(3, 4, 7), (3, 4, 9), (3, 6, 7), (3, 6, 9)]
    con.close()


def test_an_import_keyed_by_part_of_the_join_key_is_not_reused():
    """``a.x = b.x AND a.y = b.y`` with an index on ``b (x)`` only: the lookup into b must be
    by the whole key (b arranged by (x, y)), not by x with y checked afterwards (every row
    sharing x returned per lookup: the quickstart's flipper self-join over an index on
    ``item`` took minutes).  Sabotage: without the whole-key condition in
    ``JoinOp._plan_path`` input 1 was reused with key (x)."""
    from compute.render.join import JoinOp
    from expr.scalar import Column
    whole = JoinOp([2, 2], [[Column(0), Column(2)], [Column(1), Column(3)]],
                   arranged={1: [((Column(0), Column(1)), object())]})
    assert 1 in whole.reused  # an import on the whole key is still reused
    part = JoinOp([2, 2], [[Column(0), Column(2)], [Column(1), Column(3)]],
                  arranged={1: [((Column(0),), object())]})
    assert part.reused == {}
