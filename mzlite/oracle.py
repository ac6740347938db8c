"""The timestamp oracle: hands out write and read timestamps.

Owns the mapping from wall-clock time to logical time.  Invariants: write timestamps
are strictly increasing; every write timestamp is greater than every read timestamp
handed out before it; read timestamps never decrease; a read timestamp is at or after
every write timestamp handed out before it (so a strict serializable read sees every
committed write).  By default timestamps are epoch milliseconds, so ``mz_now()`` means
what users expect; tests pass a manual clock.

Read timestamps follow the clock in steps, as Materialize's oracle does: a read uses the
last write, the last read, or the newest *settled* tick, whichever is latest, not the
clock itself.  A tick is the time the coordinator advanced every table's upper to (it
ticks every ``tick_ms / 4``); it settles ``settle_ms`` later, by which time the dataflows
have caught up with it, so a strict serializable read normally finds its inputs readable
at once instead of forcing every dataflow to catch up with a brand-new millisecond first
(while maintenance is busy, that wait was most of a read's latency).  When that time is
``tick_ms`` or more behind the clock (the ticker is late, or ``tick_ms`` is 0, the default
for a manual clock so tests see time move at once), ``read_ts`` catches up to the clock and
the caller advances the tables.
In a data directory the oracle is durable, as Materialize's is: it never hands out a
timestamp above its persisted high-water mark (``reserve``, called under its lock, persists
a new mark ``RESERVE_MS`` ahead before the first timestamp past the old one goes out), and a
reopened oracle starts above the persisted mark (``floor``), so time continues strictly
after every timestamp ever handed out even when the wall clock went backwards.  The ticker
renews the mark ahead of need (``tick``: once less than ``RESERVE_AHEAD_MS`` of it is left,
persisted outside the lock), so a write or read normally finds its timestamp already covered
and pays no store write of its own; the foreground claim remains for a late ticker.
Deliberately not here: advancing storage uppers (``storage.tables``) or running the
ticker (``mzlite.coordinator``).
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Optional


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class ManualClock:
    """A clock for tests: ``now()`` returns what you set."""

    def __init__(self, start: int = 1):
        self.value = start

    def __call__(self) -> int:
        return self.value

    def advance(self, by: int = 1) -> int:
        self.value += by
        return self.value


#: how far (ms) a read timestamp may trail a wall clock before a read catches up itself
TICK_MS = 1000
#: how far (ms) past the timestamp that needs it a durable oracle reserves its high-water
#: mark: one durable write per this much time, not one per timestamp
RESERVE_MS = 1000
#: a tick renews the high-water mark once less than this much (ms) of it is left: well over a
#: tick interval (``TICK_MS / 4``), so the foreground rarely finds its timestamp uncovered
RESERVE_AHEAD_MS = RESERVE_MS // 2


class TimestampOracle:
    def __init__(self, clock: Optional[Callable[[], int]] = None, tick_ms: Optional[int] = None, *,
                 floor: int = 0, reserve: Optional[Callable[[int], None]] = None):
        self.clock = clock or wall_clock_ms
        #: reads trail the clock by less than this many ms (0: reads follow the clock)
        self.tick_ms = (0 if clock is not None else TICK_MS) if tick_ms is None else tick_ms
        #: a tick is used by reads once it is this old (ms): dataflows have had that long to
        #: catch up with the table uppers it advanced, so reading at it rarely waits
        self.settle_ms = self.tick_ms // 2
        #: every timestamp handed out is above ``floor`` (a reopened durable oracle's persisted mark)
        self._last_write = floor
        self._last_read = floor
        #: ``reserve(mark)`` persists a high-water mark (None: an in-memory oracle)
        self._reserve = reserve
        #: the persisted high-water mark: no timestamp above it has been handed out
        self._reserved = floor
        #: ticks handed out (ascending, the newest last), none older than the settled one
        self._ticks: list[int] = []
        #: the newest tick at least ``settle_ms`` old when a read last looked
        self._settled = 0
        self._lock = threading.Lock()

    def write_ts(self) -> int:
        """A fresh write timestamp, strictly above every timestamp handed out so far."""
        with self._lock:
            last_tick = self._ticks[-1] if self._ticks else 0
            t = max(self.clock(), self._last_write + 1, self._last_read + 1, last_tick + 1)
            if self._reserve is not None and t > self._reserved:
                self._claim(t)
            self._last_write = t
            return t

    def _claim(self, t: int) -> None:
        """Persist a high-water mark past ``t`` before ``t`` is handed out (under the lock)."""
        mark = t + RESERVE_MS
        self._reserve(mark)
        self._reserved = mark

    def _read_time(self, now: int) -> int:
        ticks = self._ticks
        while ticks and now - ticks[0] >= self.settle_ms:
            self._settled = max(self._settled, ticks.pop(0))
        applied = max(self._last_write, self._last_read, self._settled)
        return now if now - applied >= self.tick_ms else applied

    def read_ts(self, at_clock: bool = False) -> int:
        """The timestamp a strict-serializable read uses: at or after every committed write
        and every timestamp read before.  The caller advances table uppers past it (a no-op
        unless this read caught up with the clock).  ``at_clock``: at or after the clock
        too (a read whose answer depends on the time itself: ``mz_now()``, temporal filters),
        without waiting for a tick to settle."""
        with self._lock:
            now = self.clock()
            t = max(now, self._read_time(now)) if at_clock else self._read_time(now)
            if self._reserve is not None and t > self._reserved:
                self._claim(t)
            if t == now and t > max(self._last_write, self._last_read, self._settled):
                self._ticks.append(t)
            self._last_read = t
            return t

    def tick(self) -> int:
        """The clock's time, handed out as a tick: the caller advances every table past it.
        Reads use it once it has settled (``settle_ms`` later)."""
        with self._lock:
            t = max(self.clock(), self._last_write, self._last_read, self._ticks[-1] if self._ticks else 0)
            if self._reserve is not None and t > self._reserved:
                self._claim(t)
            self._ticks.append(t)
            ahead = self._reserve is not None and t + RESERVE_AHEAD_MS > self._reserved
        if ahead:
            self._reserve_ahead(t + RESERVE_MS)
        return t

    def _reserve_ahead(self, mark: int) -> None:
        """Persist ``mark`` without holding the lock (writers and readers go on meanwhile, under
        the old mark), then let timestamps up to it go out.  The store keeps the largest mark
        it was given, so a concurrent foreground ``_claim`` cannot be overwritten by a smaller
        one.  Best effort: on failure (disk full) the foreground claim persists it, or raises."""
        try:
            self._reserve(mark)
        except Exception:
            return
        with self._lock:
            if mark > self._reserved:
                self._reserved = mark

    def peek_read_ts(self) -> int:
        """The current read timestamp, without handing it out."""
        with self._lock:
            return self._read_time(self.clock())

    @property
    def last_write(self) -> int:
        return self._last_write
