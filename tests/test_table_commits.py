"""Group commit against time passing: a tick never overtakes a commit in flight.

The ticker (``Database.tick``) takes a tick from the oracle and advances every table's
upper past it.  A tick may equal the write timestamp a commit has just been handed (the
oracle's ticks are at or after every write timestamp handed out), so advancing the tables
between that commit's ``write_ts`` and its append would close the time the append is at.
"""
from __future__ import annotations

import threading

from mzlite.oracle import ManualClock, TimestampOracle
from repr.ids import GlobalId
from storage.tables import TableStorage

WAIT = 10.0


class _ContendedLock:
    """A lock that sets ``contended`` when an acquirer has to wait for it."""

    def __init__(self, contended: threading.Event):
        self._lock = threading.Lock()
        self.contended = contended

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            self.contended.set()
            self._lock.acquire()
        return self

    def __exit__(self, *exc):
        self._lock.release()
        return False


def test_a_tick_at_a_commits_timestamp_waits_for_its_append():
    """The tick runs on another thread right after the commit got its timestamp, and the
    commit goes on once the tick has either finished or is waiting for the commit lock.
    Sabotage: ``advance_tables`` without the commit lock -> the tick advanced the upper past
    the timestamp and the append raised (``append at t below upper t+1``)."""
    oracle = TimestampOracle(ManualClock(5))
    storage = TableStorage(oracle)
    gid = GlobalId("u", 1)
    coll = storage.create_table(gid, 1)
    progressed = threading.Event()
    storage._lock = _ContendedLock(progressed)
    real_write_ts = oracle.write_ts
    ticker = []

    def tick():
        storage.advance_tables(oracle.tick() + 1)
        progressed.set()

    def write_ts():
        t = real_write_ts()
        th = threading.Thread(target=tick)
        ticker.append(th)
        th.start()
        assert progressed.wait(WAIT)  # the tick is done, or waits for this commit
        return t

    oracle.write_ts = write_ts
    t = storage.commit({gid: [((1,), 1)]})
    ticker[0].join(WAIT)
    assert not ticker[0].is_alive()
    assert coll.snapshot(t) == {(1,): 1} and coll.upper == t + 1
