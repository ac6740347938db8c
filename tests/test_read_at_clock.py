"""Reads whose answer depends on the time itself are at the clock, not at a settled tick.

A strict serializable read normally uses the oracle's newest *settled* tick (or the last
write or read), which trails the wall clock by up to a second, so that its inputs are
readable at once (``mzlite.oracle``).  A read that calls ``mz_now()`` or reads a temporal
filter is about the time, though: at a trailing time, a row of ``mz_now() <= ts + INTERVAL
'2s'`` stayed visible 2.5 s after it was inserted, and ``SELECT mz_now()`` trailed the clock
by 0.1 to 0.7 s.  Such reads ask the oracle for a time at or after the clock
(``Reader.reads_the_clock``, ``TimestampOracle.read_ts(at_clock=True)``).

The clock here is a manual one with the wall clock's tick settings (reads trail it), so
the trailing is deterministic.  Sabotage: ``reads_the_clock`` returning False -> each
test below fails (the row is still visible; ``mz_now()`` is the last write's time).
"""
from __future__ import annotations

import pytest

from mzlite.oracle import TICK_MS, ManualClock


@pytest.fixture
def trailing(connect, interactive):
    """A connection whose oracle trails its manual clock as it trails the wall clock."""
    clock = ManualClock(100_000)
    con = connect(interactive, clock)
    oracle = con.database.oracle
    oracle.tick_ms, oracle.settle_ms = TICK_MS, TICK_MS // 2
    return con, clock


def test_a_temporal_filter_is_read_at_the_clock(trailing):
    con, clock = trailing
    con.execute("CREATE TABLE t (a int, ts timestamptz)")
    con.execute("CREATE MATERIALIZED VIEW recent AS SELECT a FROM t WHERE mz_now() <= ts + INTERVAL '2s'")
    con.execute("CREATE VIEW recent_view AS SELECT a FROM t WHERE mz_now() <= ts + INTERVAL '2s'")
    con.execute("CREATE INDEX recent_view_idx ON recent_view (a)")
    con.execute("INSERT INTO t VALUES (1, to_timestamp(100))")  # at the clock's 100 s
    clock.advance(1_500)
    assert con.execute("SELECT a FROM recent").fetchall() == [(1,)]
    assert con.execute("SELECT a FROM recent_view").fetchall() == [(1,)]
    clock.advance(501)  # 2.001 s after ts: the filter no longer holds
    assert con.execute("SELECT a FROM recent").fetchall() == []
    assert con.execute("SELECT a FROM recent_view").fetchall() == []
    # a read of the table alone still uses the settled time (it does not depend on the clock)
    assert con.execute("SELECT a FROM t").fetchall() == [(1,)]


def test_select_mz_now_is_the_clock(trailing):
    con, clock = trailing
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    clock.advance(700)
    assert con.execute("SELECT mz_now()::text::bigint").fetchall() == [(clock.value,)]
    clock.advance(300)
    assert con.execute("SELECT mz_now()::text::bigint, a FROM t").fetchall() == [(clock.value, 1)]
