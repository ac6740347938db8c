"""Property: every maintained view equals a one-shot evaluation of its query.

After every random insert, update and delete, each materialized view (and each indexed
view) is read and compared with (a) the same query evaluated one-shot by mzlite at the
same timestamp (a peek dataflow) and (b) SQLite running the query from scratch on a
mirror of the tables.  Run with the interactive runtime on and off.
"""
import sqlite3
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mzlite

QUERIES = {
    "j_agg": "SELECT c.region, count(*) AS n, sum(o.amount) AS total, min(o.amount) AS lo, max(o.amount) AS hi "
             "FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region",
    "distinct_amounts": "SELECT DISTINCT amount FROM orders",
    "count_distinct": "SELECT customer_id, count(DISTINCT amount) AS k FROM orders GROUP BY customer_id",
    "left_join": "SELECT o.id, c.region FROM orders o LEFT JOIN customers c ON o.customer_id = c.id",
    "exists": "SELECT c.id FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)",
    "not_in": "SELECT c.id FROM customers c WHERE c.id NOT IN (SELECT o.customer_id FROM orders o "
              "WHERE o.customer_id IS NOT NULL)",
    "union_all": "SELECT customer_id AS x FROM orders UNION ALL SELECT id AS x FROM customers",
    "except": "SELECT id FROM customers EXCEPT SELECT customer_id FROM orders",
    "having": "SELECT customer_id, sum(amount) AS s FROM orders GROUP BY customer_id HAVING count(*) > 1",
    "scalar_sub": "SELECT o.id, (SELECT count(*) FROM customers c WHERE c.id = o.customer_id) AS k FROM orders o",
}

op = st.one_of(
    st.tuples(st.just("insert_order"), st.integers(1, 30), st.one_of(st.none(), st.integers(1, 6)),
              st.integers(-5, 20)),
    st.tuples(st.just("insert_customer"), st.integers(1, 6), st.sampled_from(["east", "west", "north"])),
    st.tuples(st.just("update_order"), st.integers(1, 30), st.integers(-5, 20)),
    st.tuples(st.just("delete_order"), st.integers(1, 30)),
    st.tuples(st.just("delete_customer"), st.integers(1, 6)),
    st.tuples(st.just("move_customer"), st.integers(1, 6), st.sampled_from(["east", "west", "south"])),
)

STATEMENTS = {
    "insert_order": "INSERT INTO orders VALUES (?, ?, ?)",
    "insert_customer": "INSERT INTO customers VALUES (?, ?)",
    "update_order": "UPDATE orders SET amount = ? WHERE id = ?",
    "delete_order": "DELETE FROM orders WHERE id = ?",
    "delete_customer": "DELETE FROM customers WHERE id = ?",
    "move_customer": "UPDATE customers SET region = ? WHERE id = ?",
}


def _params(o):
    kind = o[0]
    if kind in ("update_order", "move_customer"):
        return (o[2], o[1])
    return tuple(o[1:])


def _norm(rows):
    return Counter(tuple(int(v) if hasattr(v, "as_integer_ratio") and not isinstance(v, (bool, float))
                         else v for v in r) for r in rows)


@pytest.mark.parametrize("interactive", [True, False], ids=["interactive", "maintenance-only"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=12))
def test_maintained_views_equal_one_shot_evaluation(interactive, ops):
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": interactive})
    lite = sqlite3.connect(":memory:")
    try:
        for c in (con, lite):
            c.execute("CREATE TABLE orders (id int NOT NULL, customer_id int, amount int)")
            c.execute("CREATE TABLE customers (id int NOT NULL, region text NOT NULL)")
        for i, (name, sql) in enumerate(QUERIES.items()):
            if i % 2 == 0:
                con.execute(f"CREATE MATERIALIZED VIEW v_{name} AS {sql}")
                if i % 4 == 0:
                    con.execute(f"CREATE DEFAULT INDEX ON v_{name}")
            else:
                con.execute(f"CREATE VIEW v_{name} AS {sql}")
                con.execute(f"CREATE DEFAULT INDEX ON v_{name}")
        for o in ops:
            sql, params = STATEMENTS[o[0]], _params(o)
            con.execute(sql, params)
            lite.execute(sql, params)
            for name, query in QUERIES.items():
                maintained = _norm(con.execute(f"SELECT * FROM v_{name}").fetchall())
                one_shot = _norm(con.execute(query).fetchall())
                expected = _norm(lite.execute(query).fetchall())
                assert maintained == one_shot, (name, o)
                assert one_shot == expected, (name, o)
    finally:
        con.close()
        lite.close()
