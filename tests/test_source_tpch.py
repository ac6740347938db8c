"""The TPCH load generator: TPC-H's tables at a small scale factor, checked against the
specification's generation rules, TPC-H queries over it, and its order churn.

Sabotage seen red: ``part_supplier`` returning ``partkey % S + 1`` for every ``i`` (one
supplier per part) failed the partsupp rule; dropping the ``(1 + tax)`` factor from the
order total failed the total rule.
"""
from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

import pytest

SF = 0.001


@pytest.fixture
def clock_start():
    return 1_700_000_000_000


@pytest.fixture
def con(clocked_con):
    clocked_con.execute(f"CREATE SOURCE tpch FROM LOAD GENERATOR TPCH (SCALE FACTOR {SF}) FOR ALL TABLES")
    return clocked_con


def q(con, sql):
    return con.execute(sql).fetchall()


def test_cardinalities_and_keys(con):
    counts = {t: q(con, f"SELECT count(*) FROM {t}")[0][0]
              for t in ("supplier", "part", "partsupp", "customer", "orders", "nation", "region")}
    assert counts == {"supplier": 10, "part": 200, "partsupp": 800, "customer": 150, "orders": 1500,
                      "nation": 25, "region": 5}
    n_lines = q(con, "SELECT count(*) FROM lineitem")[0][0]
    assert 1500 <= n_lines <= 7 * 1500
    keys = [r[0] for r in q(con, "SELECT o_orderkey FROM orders ORDER BY 1")]
    assert keys[:9] == [1, 2, 3, 4, 5, 6, 7, 8, 33] and len(set(keys)) == 1500
    assert q(con, "SELECT count(*) FROM orders WHERE o_custkey % 3 = 0") == [(0,)]
    assert q(con, "SELECT count(*) FROM nation n JOIN region r ON n.n_regionkey = r.r_regionkey") == [(25,)]
    assert q(con, "SELECT r_name FROM region ORDER BY r_regionkey") == [
        ("AFRICA",), ("AMERICA",), ("ASIA",), ("EUROPE",), ("MIDDLE EAST",)]
    desc = [(d[0], d[1]) for d in con.execute("SELECT * FROM orders").description]
    assert desc[:5] == [("o_orderkey", "bigint"), ("o_custkey", "bigint"), ("o_orderstatus", "text"),
                        ("o_totalprice", "numeric"), ("o_orderdate", "date")]


def test_the_specifications_generation_rules_hold(con):
    s = 10
    by_part = defaultdict(set)
    for partkey, suppkey in q(con, "SELECT ps_partkey, ps_suppkey FROM partsupp"):
        by_part[partkey].add(suppkey)
    for p, supps in by_part.items():
        assert supps == {(p + i * (s // 4 + (p - 1) // s)) % s + 1 for i in range(4)}, p
    assert q(con, "SELECT count(*) FROM lineitem l LEFT JOIN partsupp ps ON l.l_partkey = ps.ps_partkey "
                  "AND l.l_suppkey = ps.ps_suppkey WHERE ps.ps_partkey IS NULL") == [(0,)]
    assert q(con, "SELECT count(*) FROM lineitem l JOIN part p ON l.l_partkey = p.p_partkey "
                  "WHERE l.l_extendedprice <> l.l_quantity * p.p_retailprice") == [(0,)]
    assert q(con, "SELECT count(*) FROM part WHERE p_retailprice <> "
                  "(90000 + (p_partkey / 10) % 20001 + 100 * (p_partkey % 1000))::numeric / 100") == [(0,)]
    assert q(con, "SELECT count(*) FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey WHERE "
                  "l.l_shipdate NOT BETWEEN o.o_orderdate + 1 AND o.o_orderdate + 121 "
                  "OR l.l_commitdate NOT BETWEEN o.o_orderdate + 30 AND o.o_orderdate + 90 "
                  "OR l.l_receiptdate NOT BETWEEN l.l_shipdate + 1 AND l.l_shipdate + 30 "
                  "OR l.l_discount NOT BETWEEN 0 AND 0.10 OR l.l_tax NOT BETWEEN 0 AND 0.08 "
                  "OR l.l_quantity NOT BETWEEN 1 AND 50") == [(0,)]
    assert q(con, "SELECT count(*) FROM lineitem WHERE "
                  "(l_receiptdate <= DATE '1995-06-17' AND l_returnflag NOT IN ('R', 'A')) "
                  "OR (l_receiptdate > DATE '1995-06-17' AND l_returnflag <> 'N') "
                  "OR l_linestatus <> CASE WHEN l_shipdate > DATE '1995-06-17' THEN 'O' ELSE 'F' END") == [(0,)]
    totals = dict(q(con, "SELECT o_orderkey, o_totalprice FROM orders"))
    statuses = dict(q(con, "SELECT o_orderkey, o_orderstatus FROM orders"))
    acc, seen = defaultdict(Decimal), defaultdict(set)
    for key, price, tax, disc, status in q(con, "SELECT l_orderkey, l_extendedprice, l_tax, l_discount, "
                                               "l_linestatus FROM lineitem"):
        acc[key] += price * (1 + tax) * (1 - disc)
        seen[key].add(status)
    for key, total in totals.items():
        assert total == acc[key].quantize(Decimal("0.01")), key
        want = seen[key].copy().pop() if len(seen[key]) == 1 else "P"
        assert statuses[key] == want, key
    assert q(con, "SELECT count(*) FROM supplier WHERE s_phone NOT LIKE (s_nationkey + 10)::text || '-%'") == [(0,)]
    assert q(con, "SELECT count(DISTINCT o_orderpriority) FROM orders") == [(5,)]


def test_tpch_queries_run_over_the_source(con):
    con.execute("""CREATE VIEW q1 AS SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty,
        sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, count(*) AS count_order
        FROM lineitem WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '90' day
        GROUP BY l_returnflag, l_linestatus""")
    con.execute("CREATE INDEX ON q1 (l_returnflag, l_linestatus)")
    rows = q(con, "SELECT l_returnflag, l_linestatus, count_order FROM q1 ORDER BY 1, 2")
    assert {(r[0], r[1]) for r in rows} <= {("A", "F"), ("N", "F"), ("N", "O"), ("R", "F")}
    assert sum(r[2] for r in rows) == q(con, "SELECT count(*) FROM lineitem "
                                             "WHERE l_shipdate <= DATE '1998-09-02'")[0][0]
    q3 = q(con, """SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate
        FROM customer, orders, lineitem WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey
        AND l_orderkey = o_orderkey AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'
        GROUP BY l_orderkey, o_orderdate ORDER BY revenue DESC, o_orderdate LIMIT 10""")
    assert len(q3) <= 10 and all(r[1] > 0 for r in q3)


def test_with_a_tick_interval_each_tick_replaces_one_order(clocked_con):
    con = clocked_con
    con.execute("CREATE SOURCE t FROM LOAD GENERATOR TPCH (SCALE FACTOR 0.0005, TICK INTERVAL '1s') FOR ALL TABLES")
    before = set(q(con, "SELECT * FROM orders"))
    con.clock.advance(5000)
    after = set(q(con, "SELECT * FROM orders"))
    assert len(after) == len(before) == 750
    assert {r[0] for r in after} == {r[0] for r in before}  # the same keys, regenerated
    assert 1 <= len(after - before) <= 5
    assert q(con, "SELECT count(*) FROM lineitem l LEFT JOIN orders o ON l.l_orderkey = o.o_orderkey "
                  "WHERE o.o_orderkey IS NULL") == [(0,)]
    assert q(con, "SELECT \"offset\" FROM t_progress") == [(6,)]


def test_without_a_tick_interval_the_snapshot_is_all(con):
    con.clock.advance(60_000)
    assert q(con, "SELECT \"offset\" FROM tpch_progress") == [(1,)]


def test_the_churn_resumes_after_a_reopen(tmp_path, interactive):
    """A reopened data directory continues the order churn from the persisted versions: every
    retraction finds its row.  Sabotage: ``Tpch.restore`` ignoring ``versions`` made a
    replaced order's next replacement retract rows that were never there (a negative
    multiplicity)."""
    import mzlite
    from mzlite.oracle import ManualClock
    clock = ManualClock(1_700_000_000_000)
    params = {"enable_compute_interactive_runtime": interactive}
    con = mzlite.connect(str(tmp_path), clock=clock, system_parameters=params)
    con.execute("CREATE SOURCE t FROM LOAD GENERATOR TPCH (SCALE FACTOR 0.0001, TICK INTERVAL '1s') FOR ALL TABLES")
    clock.advance(400_000)  # 400 replacements among 150 orders: most replaced more than once
    before = sorted(q(con, "SELECT * FROM orders"))
    con.close()
    con = mzlite.connect(str(tmp_path), clock=clock, system_parameters=params)
    after = sorted(q(con, "SELECT * FROM orders"))
    assert len(set(after) - set(before)) <= 1  # the data came back; the reopened source's first tick replaced one
    clock.advance(400_000)
    assert q(con, "SELECT count(*), count(DISTINCT o_orderkey) FROM orders") == [(150, 150)]
    assert q(con, "SELECT count(*) FROM lineitem l LEFT JOIN orders o ON l.l_orderkey = o.o_orderkey "
                  "WHERE o.o_orderkey IS NULL") == [(0,)]
    assert q(con, "SELECT count(*) FROM (SELECT l_orderkey, l_linenumber FROM lineitem "
                  "GROUP BY 1, 2 HAVING count(*) > 1) d") == [(0,)]
    con.close()
