"""The timestamp oracle: hands out write and read timestamps.

Owns the mapping from wall-clock time to logical time.  Invariants: write timestamps
are strictly increasing; every write timestamp is greater than every read timestamp
handed out before it; read timestamps never decrease.  By default timestamps are
epoch milliseconds, so ``mz_now()`` means what users expect; tests pass a manual
clock.  Deliberately not here: advancing storage uppers (``mzlite.storage``).
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


class TimestampOracle:
    def __init__(self, clock: Optional[Callable[[], int]] = None):
        self.clock = clock or wall_clock_ms
        self._last_write = 0
        self._last_read = 0
        self._lock = threading.Lock()

    def write_ts(self) -> int:
        """A fresh write timestamp, strictly above every timestamp handed out so far."""
        with self._lock:
            t = max(self.clock(), self._last_write + 1, self._last_read + 1)
            self._last_write = t
            return t

    def read_ts(self) -> int:
        """The timestamp a strict-serializable read uses: at or after every committed write."""
        with self._lock:
            t = max(self.clock(), self._last_write, self._last_read)
            self._last_read = t
            return t

    def peek_read_ts(self) -> int:
        """The current read timestamp, without handing it out."""
        with self._lock:
            return max(self.clock(), self._last_write, self._last_read)

    @property
    def last_write(self) -> int:
        return self._last_write
