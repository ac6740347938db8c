"""End-to-end tests of the public API: SQL in, incrementally maintained results out.

Every test runs with the interactive runtime on and off (the ``con`` fixture), since
results must be identical either way.
"""
from decimal import Decimal

import pytest

import mzlite


def q(con, sql, params=None):
    return con.execute(sql, params).fetchall()


def test_select_constant(con):
    assert q(con, "SELECT 1 + 1") == [(2,)]


def test_issue_example_sales_view_stays_current(con):
    con.execute("CREATE TABLE orders (id int NOT NULL, customer_id int, amount int)")
    con.execute("CREATE TABLE customers (id int NOT NULL, region text NOT NULL)")
    con.execute("CREATE MATERIALIZED VIEW sales AS SELECT c.region, count(*) AS n, sum(o.amount) AS total "
                "FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region")
    con.execute("CREATE INDEX sales_by_region ON sales (region)")
    con.execute("INSERT INTO customers VALUES (1, 'east'), (2, 'west')")
    con.execute("INSERT INTO orders VALUES (1, 1, 100)")
    assert q(con, "SELECT n, total FROM sales WHERE region = 'east'") == [(1, 100)]
    con.execute("INSERT INTO orders VALUES (2, 1, 50), (3, 2, 7)")
    assert q(con, "SELECT n, total FROM sales WHERE region = 'east'") == [(2, 150)]
    con.execute("UPDATE orders SET amount = amount + 1 WHERE id = 1")
    assert q(con, "SELECT n, total FROM sales WHERE region = 'east'") == [(2, 151)]
    con.execute("DELETE FROM orders WHERE customer_id = 1")
    assert q(con, "SELECT n, total FROM sales WHERE region = 'east'") == []
    assert q(con, "SELECT region, n, total FROM sales") == [("west", 1, 7)]


def test_view_index_and_one_shot_agree(con):
    con.execute("CREATE TABLE t (a int, b int)")
    con.execute("INSERT INTO t VALUES (1, 2), (1, 3), (2, NULL)")
    con.execute("CREATE VIEW v AS SELECT a, sum(b) AS s, count(*) AS c FROM t GROUP BY a")
    con.execute("CREATE DEFAULT INDEX ON v")
    assert sorted(q(con, "SELECT * FROM v")) == [(1, 5, 2), (2, None, 1)]
    con.execute("INSERT INTO t VALUES (2, 10)")
    assert sorted(q(con, "SELECT * FROM v")) == [(1, 5, 2), (2, 10, 2)]
    assert sorted(q(con, "SELECT a, sum(b), count(*) FROM t GROUP BY a")) == [(1, 5, 2), (2, 10, 2)]


def test_transaction_groups_writes_and_rollback_discards(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (1)")
    con.execute("INSERT INTO t VALUES (2)")
    con.execute("COMMIT")
    assert sorted(q(con, "SELECT a FROM t")) == [(1,), (2,)]
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (3)")
    con.execute("ROLLBACK")
    assert sorted(q(con, "SELECT a FROM t")) == [(1,), (2,)]


def test_failed_multi_row_insert_inserts_nothing(con):
    con.execute("CREATE TABLE t (a int NOT NULL)")
    with pytest.raises(mzlite.IntegrityError) as e:
        con.execute("INSERT INTO t VALUES (1), (NULL)")
    assert e.value.sqlstate == "23502"
    assert q(con, "SELECT count(*) FROM t") == [(0,)]


def test_errors_carry_sqlstate_and_position(con):
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("SELECT * FORM t")
    assert e.value.sqlstate == "42601"
    assert e.value.position is not None
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("SELECT * FROM nope")
    assert e.value.sqlstate == "42P01"
    with pytest.raises(mzlite.DataError) as e:
        con.execute("SELECT 1 / 0")
    assert e.value.sqlstate == "22012"
    assert q(con, "SELECT 1") == [(1,)]


def test_division_by_zero_inside_a_view_surfaces_on_read_and_runtime_goes_on(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("CREATE MATERIALIZED VIEW v AS SELECT 10 / a AS x FROM t")
    con.execute("INSERT INTO t VALUES (2)")
    assert q(con, "SELECT x FROM v") == [(5,)]
    con.execute("INSERT INTO t VALUES (0)")
    with pytest.raises(mzlite.DataError) as e:
        q(con, "SELECT x FROM v")
    assert e.value.sqlstate == "22012"
    con.execute("DELETE FROM t WHERE a = 0")
    assert q(con, "SELECT x FROM v") == [(5,)]


def test_drop_with_dependents_needs_cascade(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("CREATE VIEW v AS SELECT a FROM t")
    with pytest.raises(mzlite.Error) as e:
        con.execute("DROP TABLE t")
    assert e.value.sqlstate == "2BP01"
    con.execute("DROP TABLE t CASCADE")
    with pytest.raises(mzlite.Error):
        con.execute("SELECT * FROM v")
    con.execute("DROP TABLE IF EXISTS t")


def test_parameters_qmark_and_dollar(con):
    con.execute("CREATE TABLE t (a int, b text)")
    con.execute("INSERT INTO t VALUES (?, ?)", (1, "x"))
    con.execute("INSERT INTO t VALUES ($1, $2)", (2, "y"))
    con.cursor().executemany("INSERT INTO t VALUES (?, ?)", [(3, "z"), (4, None)])
    assert sorted(q(con, "SELECT a, b FROM t WHERE a > ?", (1,))) == [(2, "y"), (3, "z"), (4, None)]


def test_cursor_description_and_rowcount(con):
    cur = con.execute("SELECT 1 AS a, 'x' AS b")
    assert [d[0] for d in cur.description] == ["a", "b"]
    assert [d[1] for d in cur.description] == ["integer", "text"]
    assert cur.rowcount == 1
    con.execute("CREATE TABLE t (a int)")
    cur = con.execute("INSERT INTO t VALUES (1), (2)")
    assert cur.rowcount == 2
    assert cur.statusmessage == "INSERT 0 2"
