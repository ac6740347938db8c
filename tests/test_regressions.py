"""Regressions found while integrating: each test names the defect it pins."""
import pytest

import mzlite


@pytest.fixture
def con(con):  # the shared connection (both settings) with a longer statement timeout
    con.execute("SET statement_timeout = 20000")
    return con


def test_self_join_through_let_keeps_its_projection_when_maintained(con):
    """A join whose two inputs are the same Let binding produced unprojected rows ((1, 1)
    instead of (1,)) on incremental updates, while one-shot reads were right."""
    q = "SELECT c.id FROM customers c, (SELECT DISTINCT id FROM customers) d WHERE c.id = d.id"
    con.execute("CREATE TABLE customers (id int NOT NULL, region text NOT NULL)")
    con.execute(f"CREATE MATERIALIZED VIEW v AS {q}")
    con.execute("INSERT INTO customers VALUES (1, 'east')")
    con.execute("INSERT INTO customers VALUES (1, 'east')")
    assert sorted(con.execute("SELECT * FROM v").fetchall()) == [(1,), (1,)]
    assert sorted(con.execute(q).fetchall()) == [(1,), (1,)]


def test_dropping_an_index_another_index_imports_keeps_the_importer_current(con):
    """An index on a view imported the table's index; dropping the table's index stopped the
    imported arrangement, so reads of the view's index waited forever."""
    con.execute("CREATE TABLE t (a int, b int)")
    con.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    con.execute("CREATE INDEX t_a ON t (a)")
    con.execute("CREATE VIEW sums AS SELECT a, sum(b) AS s FROM t GROUP BY a")
    con.execute("CREATE INDEX sums_a ON sums (a)")
    assert sorted(con.execute("SELECT * FROM sums").fetchall()) == [(1, 10), (2, 20)]
    con.execute("DROP INDEX t_a")
    con.execute("INSERT INTO t VALUES (1, 5)")
    assert sorted(con.execute("SELECT * FROM sums").fetchall()) == [(1, 15), (2, 20)]


def test_scalar_subquery_with_no_rows_is_null_and_two_rows_is_an_error(con):
    """A scalar subquery's cardinality guard named a function no implementation had, and the
    failed dataflow left its peek waiting forever instead of answering with an error."""
    con.execute("CREATE TABLE emp (id int, salary int)")
    con.execute("INSERT INTO emp VALUES (1, 10), (2, 20)")
    assert con.execute("SELECT (SELECT salary FROM emp WHERE id = 99)").fetchall() == [(None,)]
    with pytest.raises(mzlite.Error) as e:
        con.execute("SELECT (SELECT salary FROM emp)").fetchall()
    assert e.value.sqlstate == "21000"


# -- found by the differential test against PostgreSQL (tests/test_differential_pg.py) --------

def test_having_without_aggregates_over_empty_input_is_one_row(con):
    """``SELECT 1 FROM t HAVING true`` is a global aggregate: one row even for an empty t
    (PostgreSQL).  A Reduce with no aggregates was rendered as Distinct, which drops the
    global default row; one-shot, materialized and indexed answers were empty."""
    con.execute("CREATE TABLE t (a int)")
    q = "SELECT 'x' AS c FROM t WHERE a > 0 HAVING true"
    con.execute(f"CREATE MATERIALIZED VIEW mv AS {q}")
    con.execute(f"CREATE VIEW v AS {q}")
    con.execute("CREATE DEFAULT INDEX ON v")
    for sql in (q, "SELECT * FROM mv", "SELECT * FROM v"):
        assert con.execute(sql).fetchall() == [("x",)], sql
    con.execute("INSERT INTO t VALUES (1), (2)")
    for sql in (q, "SELECT * FROM mv", "SELECT * FROM v"):
        assert con.execute(sql).fetchall() == [("x",)], sql
    assert con.execute("SELECT 1 FROM t HAVING false").fetchall() == []


@pytest.mark.parametrize("kind", ["index", "materialized view"])
def test_a_slow_dataflow_build_keeps_its_inputs_readable_at_its_as_of(kind, monkeypatch):
    """CREATE INDEX chose its as_of, then optimized and lowered the view's plan (over a second
    for a large query) before taking read holds; a tick meanwhile compacted the table past
    as_of, the runtime refused the dataflow, and reads of the index waited forever.  Here
    the "slow build" ticks the clock past the compaction window while building."""
    import mzlite.ddl as ddl
    from mzlite.oracle import ManualClock

    clock = ManualClock(1_000)
    c = mzlite.connect(clock=clock)
    try:
        c.execute("SET statement_timeout = 20000")
        db = c.database
        c.execute("CREATE TABLE t (a int)")
        c.execute("INSERT INTO t VALUES (1), (2)")
        c.execute("CREATE VIEW v AS SELECT a + 1 AS b FROM t")
        name = "build_index_dataflow" if kind == "index" else "build_materialized_view_dataflow"
        real = getattr(ddl, name)

        def slow_build(*args, **kwargs):
            clock.advance(10_000)
            db.tick()
            return real(*args, **kwargs)

        monkeypatch.setattr(ddl, name, slow_build)
        if kind == "index":
            c.execute("CREATE DEFAULT INDEX ON v")
            target = "v"
        else:
            c.execute("CREATE MATERIALIZED VIEW mv AS SELECT a + 1 AS b FROM t")
            target = "mv"
        assert sorted(c.execute(f"SELECT * FROM {target}").fetchall()) == [(2,), (3,)]
    finally:
        c.close()
