"""The timestamp oracle: reads use settled ticks, never fall behind a write or the clock by
more than ``tick_ms``.

Sabotage checked: making ``_read_time`` return the clock fails
``test_reads_use_settled_ticks`` (every read would force dataflows to catch up with a new
millisecond); dropping its catch-up branch fails ``test_a_late_ticker_does_not_let_reads_fall_behind``;
using the newest tick instead of the settled one fails ``test_reads_use_settled_ticks``;
leaving ``last_tick + 1`` out of ``write_ts`` fails ``test_a_write_lands_above_every_tick``
(the write would land below the tables' upper).
"""
from hypothesis import given, settings, strategies as st

from mzlite.oracle import ManualClock, TimestampOracle


def test_reads_use_settled_ticks():
    clock = ManualClock(10_000)
    o = TimestampOracle(clock, tick_ms=1000)
    assert o.read_ts() == 10_000       # far behind at start: catches up with the clock
    clock.value = 10_100
    assert o.tick() == 10_100
    clock.value = 10_300
    assert o.read_ts() == 10_000       # the tick has not settled: dataflows may lag it
    clock.value = 10_700
    assert o.read_ts() == 10_100       # settled
    clock.value = 10_750
    w = o.write_ts()
    assert w == 10_750
    assert o.read_ts() == 10_750       # every committed write is visible at once


def test_a_late_ticker_does_not_let_reads_fall_behind():
    clock = ManualClock(10_000)
    o = TimestampOracle(clock, tick_ms=1000)
    assert o.read_ts() == 10_000
    clock.value = 11_000
    assert o.read_ts() == 11_000       # no tick for tick_ms: the read catches up itself
    clock.value = 11_010
    assert o.read_ts() == 11_000


def test_a_write_lands_above_every_tick():
    clock = ManualClock(10_000)
    o = TimestampOracle(clock, tick_ms=1000)
    assert o.tick() == 10_000
    assert o.write_ts() == 10_001      # tables' upper is already 10_001


def test_a_manual_clock_is_followed_at_once_by_default():
    clock = ManualClock(5)
    o = TimestampOracle(clock)
    assert o.read_ts() == 5
    clock.advance(3)
    assert o.read_ts() == 8


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["read", "write", "tick", "peek"]), st.integers(0, 700)), max_size=40),
       st.sampled_from([0, 1, 1000]))
def test_oracle_invariants(ops, tick_ms):
    clock = ManualClock(100_000)
    o = TimestampOracle(clock, tick_ms=tick_ms)
    last_read, last_write, last_tick = 0, 0, 0
    for op, advance in ops:
        clock.advance(advance)
        if op == "write":
            w = o.write_ts()
            assert w > last_write and w > last_read and w > last_tick
            last_write = w
        elif op == "tick":
            last_tick = o.tick()
            assert last_tick >= max(last_read, last_write)
        elif op == "read":
            t = o.read_ts()
            assert t >= last_read and t >= last_write
            assert clock() - t < max(tick_ms, 1)
            last_read = t
        else:
            assert o.peek_read_ts() >= max(last_read, last_write)


def test_the_ticker_reserves_the_high_water_mark_ahead_of_writes_and_reads():
    """A durable oracle's tick renews the persisted mark once less than ``RESERVE_AHEAD_MS``
    is left, so the writes and reads after it find their timestamps covered and persist
    nothing themselves (no store transaction, no fsync, on their path).  Sabotage: the
    tick's ahead reservation removed (``ahead`` always false) failed this: the write at
    ``mark + 100`` reserved on its own path."""
    from mzlite.oracle import RESERVE_AHEAD_MS, RESERVE_MS
    clock = ManualClock(100_000)
    persisted = []
    o = TimestampOracle(clock, tick_ms=1000, reserve=persisted.append)
    o.tick()
    mark = persisted[-1]
    assert mark >= 100_000
    clock.value = mark - RESERVE_AHEAD_MS + 1   # less than RESERVE_AHEAD_MS of the mark left
    o.tick()
    assert persisted[-1] == clock.value + RESERVE_MS
    before = list(persisted)
    clock.value = mark + 100                    # past the old mark: the foreground would claim
    w = o.write_ts()
    r = o.read_ts(at_clock=True)
    assert w == mark + 100 and r >= w
    assert persisted == before                  # neither persisted anything itself
    assert max(w, r) <= persisted[-1]           # and both are covered by the persisted mark


def test_a_failed_ahead_reservation_leaves_the_claim_to_the_foreground():
    """When the tick's reservation fails (disk full) the oracle keeps the old mark, and the
    first timestamp past it is claimed (and would raise) on its own path."""
    clock = ManualClock(100_000)
    persisted, fail = [], [False]

    def reserve(mark):
        if fail[0]:
            raise OSError("disk full")
        persisted.append(mark)
    o = TimestampOracle(clock, tick_ms=1000, reserve=reserve)
    o.tick()
    mark = persisted[-1]
    fail[0] = True
    clock.value = mark - 1
    o.tick()                                    # the ahead reservation failed quietly
    fail[0] = False
    clock.value = mark + 5
    assert o.write_ts() == mark + 5
    assert persisted[-1] >= mark + 5            # claimed by the write itself
