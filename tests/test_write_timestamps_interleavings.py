"""Every interleaving of two writes, one tick and one read, on the real oracle, table
storage, storage holds, tick and read-hold code (``tests/support/schedules.py``).

The objects are the shipped ones (``TimestampOracle``, ``TableStorage``, ``StorageHolds``,
``Database.tick`` and ``Reader.choose_and_hold`` run against a small database of just
those parts); only their locks are replaced by the scheduler's (taking the holds lock is a
scheduling point) and a collection's ``append`` is a scheduling point too (a write between
its timestamp and its append).  The clock holds
still and the tick moves it on, as a real clock does to an oracle that hands out more
than one timestamp per millisecond.  After every schedule:

* no actor raised (an append below the upper is ``storage.persist``'s AssertionError);
* the read's hold was honoured: while it was held, the table's since never passed it;
* every write is at or above the upper it appended to, and the table's contents at the
  read's timestamp are exactly the writes at or before it (the read saw a consistent table).

Sabotage seen red (each found by the exploration, then restored):
``TableStorage.advance_tables`` without the commit lock (a tick closes a write's time
between its ``write_ts`` and its append: "append at 2 below upper 4");
``StorageHolds.acquire`` without its since check (a hold granted below a since the tick
had just compacted to: the read fails "as_of 1 is below since 3"); ``StorageHolds.compact`` reading the least hold before taking
the lock (a read's hold is passed by since while it is held).
"""
from __future__ import annotations

import types

from mzlite.coordinator import Database
from mzlite.holds import StorageHolds
from mzlite.oracle import ManualClock, TimestampOracle
from mzlite.reads import Reader
from mzlite.session import Session, SystemParameters
from planner.catalog import Catalog
from repr.ids import GlobalId
from storage.tables import TableStorage
from tests.support.schedules import SchedLock, explore

T = GlobalId("u", 1)


class _NoCompute:
    """The compute side of a read hold: this scenario reads a table only."""

    def __init__(self):
        self.collections: dict = {}

    def acquire_hold(self, ids, t):
        assert not ids
        return []

    def release_holds(self, holds):
        pass

    def since(self, gid):
        return None


def _scenario(names):
    """A ``make`` for ``explore`` running the actors ``names`` of: ``w1``, ``w2`` (a one-row
    commit each), ``tick`` (the clock moves on, then ``Database.tick``) and ``read`` (a
    strict serializable read of the table: timestamp and holds, then the snapshot)."""
    def make(sched):
        clock = ManualClock(1)
        oracle = TimestampOracle(clock, tick_ms=0)
        oracle._lock = SchedLock(sched, "oracle", point=False)
        storage = TableStorage(oracle)
        storage._lock = SchedLock(sched, "storage", point=False)
        holds = StorageHolds()
        holds._lock = SchedLock(sched, "holds")
        db = types.SimpleNamespace(oracle=oracle, storage=storage, storage_holds=holds, controller=_NoCompute(),
                                   catalog=Catalog(), system={"compaction_window_ms": 0}, retain_history_ms={},
                                   replica=types.SimpleNamespace(busy=False))
        db.reader = Reader(db)
        coll = storage.create_table(T, 1)
        state = types.SimpleNamespace(coll=coll, writes={}, appended=[], read=None, seen=None, passed=[])
        append, compact = coll.append, coll.compact

        def recording_append(updates, time, new_upper):
            sched.point("append")  # a write between its timestamp and its append
            state.appended.append((time, coll.upper))
            return append(updates, time, new_upper)

        def checked_compact(since, fold=True):
            compact(since, fold)
            if state.read is not None and state.read[1] is not None and coll.since > state.read[0]:
                state.passed.append((state.read[0], coll.since))
        coll.append, coll.compact = recording_append, checked_compact

        def writer(value):
            def run():
                state.writes[value] = storage.commit({T: [((value,), 1)]})
            return run

        def tick():
            clock.advance(2)  # the held clock moves on
            Database.tick(db)

        def read():
            ts, h = db.reader.choose_and_hold(Session(1, SystemParameters()), {T})
            state.read = (ts, h)
            state.seen = sorted(r for (r,), c in coll.snapshot(ts).items() for _ in range(c))
            db.reader.release(h)
            state.read = (ts, None)

        every = {"w1": writer(1), "w2": writer(2), "tick": tick, "read": read}
        return {n: every[n] for n in names}, state
    return make


def _check(state, sched):
    assert not sched.errors, {n: repr(e) for n, e in sched.errors.items()}
    assert not state.passed, f"since passed a live read hold: {state.passed}"
    assert all(t >= upper for t, upper in state.appended), state.appended
    if state.read is not None:
        ts = state.read[0]
        assert state.seen == sorted(v for v, t in state.writes.items() if t <= ts), (state.seen, state.writes, ts)


def test_no_append_below_an_upper_and_no_hold_passed_in_any_interleaving():
    """Two writes, one tick and one read: every interleaving."""
    tried = explore(_scenario(("w1", "w2", "tick", "read")), _check)
    assert tried > 1000  # the scenario really branches
