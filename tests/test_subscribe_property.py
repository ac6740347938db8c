"""Property: a subscription's consolidated output at any time equals the view read AS OF it.

For random workloads of inserts, deletes and the passing of time (a ``ManualClock`` and the
coordinator's tick), over views with aggregates, filters, joins and temporal filters (as a
plain view, a materialized view, and an indexed view), every update a SUBSCRIBE delivered
with a timestamp ``<= T``, summed, is the view's contents read ``AS OF T``, for every ``T``
from the subscription's AS OF to the end of the workload.  With the interactive runtime on
and off.  Hypothesis is derandomized, so the suite is deterministic.  Sabotage: dropping
retractions in ``mzlite.subscribe.consolidate`` (keeping only positive diffs) went red.
"""
from __future__ import annotations

import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mzlite
from mzlite.oracle import ManualClock
from mzlite.subscribe import Update

WAIT = 20.0

VIEWS = {
    "aggregate": "SELECT a, count(*) AS n, sum(b) AS s FROM t GROUP BY a",
    "filter": "SELECT a, b FROM t WHERE b > 1",
    "join": "SELECT x.a, y.b FROM t x JOIN t y ON x.a = y.b",
    "temporal": "SELECT a, b FROM t WHERE mz_now() <= 10005 + 4 * b AND mz_now() >= 10000 + a",
}

OPS = st.lists(st.one_of(
    st.tuples(st.just("insert"), st.integers(0, 3), st.integers(0, 3)),
    st.tuples(st.just("delete"), st.integers(0, 3), st.just(0)),
    st.tuples(st.just("tick"), st.integers(1, 6), st.just(0)),
), min_size=1, max_size=10)


def run(interactive: bool, view: str, kind: str, ops) -> None:
    clock = ManualClock(10_000)
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": interactive,
                                            "compaction_window_ms": 10 ** 9}, clock=clock)
    try:
        con.execute("CREATE TABLE t (a int, b int)")
        con.execute("INSERT INTO t VALUES (1, 1), (2, 3)")
        if kind == "materialized":
            con.execute(f"CREATE MATERIALIZED VIEW v AS {VIEWS[view]}")
        else:
            con.execute(f"CREATE VIEW v AS {VIEWS[view]}")
            if kind == "indexed":
                con.execute("CREATE DEFAULT INDEX ON v")
        sub = con.subscribe("v")
        for op, x, y in ops:
            if op == "insert":
                con.execute("INSERT INTO t VALUES (?, ?)", (x, y))
            elif op == "delete":
                con.execute("DELETE FROM t WHERE a = ?", (x,))
            else:
                clock.advance(x)
                con.database.tick()
        end = con.execute("SELECT mz_now()").fetchall()[0][0]
        got = []
        deadline = time.monotonic() + WAIT
        while sub.frontier is None or sub.frontier <= end or sub._received <= end:
            assert time.monotonic() < deadline, f"subscription stuck at {sub.frontier}"
            got.extend(sub.fetch(timeout=0.5))
        got.extend(sub.fetch(timeout=0))
        sub.close()
        ups = [u for u in got if isinstance(u, Update)]
        times = sorted({sub.as_of, end} | {u.timestamp for u in ups if u.timestamp <= end})
        assert [u.timestamp for u in ups] == sorted(u.timestamp for u in ups), "out of time order"
        for t in times:
            acc = Counter()
            for u in ups:
                if u.timestamp <= t:
                    acc[u.row] += u.diff
            assert all(c >= 0 for c in acc.values()), (t, acc)
            want = Counter(con.execute(f"SELECT * FROM v AS OF {t}").fetchall())
            assert +acc == want, (t, sorted(acc.elements()), sorted(want.elements()))
    finally:
        con.close()


@pytest.mark.parametrize("interactive", [True, False], ids=["interactive", "maintenance-only"])
@pytest.mark.parametrize("kind", ["view", "materialized", "indexed"])
@pytest.mark.parametrize("view", sorted(VIEWS))
@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_subscription_equals_the_view_as_of_every_time(interactive, kind, view, ops):
    run(interactive, view, kind, ops)
