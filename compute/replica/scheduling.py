"""Scheduling: the process-wide interpreter settings the replica's latency depends on.

Owns the interpreter's switch interval (``SwitchIntervals``) and the cyclic collector's
thresholds (``GCThresholds``), and the three mechanisms that request values of them:

* ``Baseline``: while a database is open (``compute.replica.client.ReplicaClient`` holds
  the request for its life), threads hand the GIL over after ``Baseline.SWITCH_S`` rather
  than Python's 5 ms, so each hop of a read across threads (session -> runtime ->
  controller -> session) waits at most that long behind a computing runtime; and the young
  generation is collected every ``Baseline.YOUNG_THRESHOLD`` allocations rather than 700,
  so the commands, batches and closures of a one-row change and its read do not promote
  objects into the oldest generation and trigger full collections that walk every
  arrangement's history;
* ``Urgency``: while latency-sensitive hand-offs are in flight, ``Urgency.URGENT_SWITCH_S``;
* ``BulkGC``: while a runtime is in a long busy period, rarer young and full collections
  and ``BulkGC.BUSY_SWITCH_S``.

Invariants: this is the only module that sets either setting (a test reads the tree to
keep it so).  Requests compose, none makes another a no-op: the switch interval is the
least one requested, each collector threshold the greatest one requested (a threshold of 0,
collection disabled by the program, is left alone), and ending a request leaves the
composition of the others.  With nothing requested the program's own values stand: they
are read when the first request arrives, and a value the program sets while requests stand
becomes its own (kept when they end).  So closing the last database restores them.

Process-wide on purpose: the GIL and the collector are.  Deliberately not here: when a
runtime is urgent or busy (``compute.replica.driver`` decides, the controller raises the
urgency of a delivered answer), and what a runtime does while it steps aside.
"""
from __future__ import annotations

import gc
import sys
import threading
import time
from typing import Any, Optional


class _ProcessSetting:
    """One interpreter setting arbitrated between requests (see the module doc)."""

    def __init__(self):
        self._lock = threading.Lock()
        #: owner -> the value it requested (composed by ``_compose``)
        self._requests: dict = {}
        #: the program's own value while anything is requested (``None`` otherwise): read at
        #: the first request, replaced by a value the program set meanwhile
        self._own: Any = None
        #: the value last set here (read back), which tells the program's changes from ours
        self._set: Any = None

    def _read(self) -> Any:
        raise NotImplementedError

    def _write(self, value: Any) -> None:
        raise NotImplementedError

    def _compose(self, own: Any, requested: list) -> Any:
        raise NotImplementedError

    def request(self, owner: Any, value: Any) -> None:
        """``owner`` wants ``value`` (replacing its earlier request) until ``release``."""
        with self._lock:
            self._requests[owner] = value
            self._apply()

    def release(self, owner: Any) -> None:
        with self._lock:
            if owner in self._requests:
                del self._requests[owner]
                self._apply()

    def requested_by(self, owner: Any) -> bool:
        with self._lock:
            return owner in self._requests

    def _apply(self) -> None:
        current = self._read()
        if self._own is None or current != self._set:
            self._own = current  # the first request, or the program changed it meanwhile
        target = self._compose(self._own, list(self._requests.values())) if self._requests else self._own
        if target != current:
            self._write(target)
        if self._requests:
            self._set = self._read()
        else:
            self._own = self._set = None


class SwitchIntervals(_ProcessSetting):
    """The interpreter's switch interval: the least interval requested."""

    def _read(self) -> float:
        return sys.getswitchinterval()

    def _write(self, value: float) -> None:
        sys.setswitchinterval(value)

    def _compose(self, own: float, requested: list) -> float:
        return min([own] + requested)


class GCThresholds(_ProcessSetting):
    """The cyclic collector's thresholds.  A request is ``(young, oldest)``: thresholds the
    first and the last generation should at least have (0: no request for that one)."""

    def _read(self) -> tuple:
        return gc.get_threshold()

    def _write(self, value: tuple) -> None:
        gc.set_threshold(*value)

    def _compose(self, own: tuple, requested: list) -> tuple:
        t0, t1, t2 = own
        if not t0:  # the program disabled automatic collection: leave it so
            return own
        return (max([t0] + [r[0] for r in requested]), t1, max([t2] + [r[1] for r in requested]))


#: the process's one ``SwitchIntervals`` and one ``GCThresholds``
SWITCH_INTERVAL = SwitchIntervals()
GC_THRESHOLDS = GCThresholds()


class Baseline:
    """What an open database requests for its whole life (see the module doc)."""

    SWITCH_S = 0.0005
    YOUNG_THRESHOLD = 10_000

    def __init__(self, intervals: Optional[SwitchIntervals] = None, thresholds: Optional[GCThresholds] = None):
        self._intervals = SWITCH_INTERVAL if intervals is None else intervals
        self._thresholds = GC_THRESHOLDS if thresholds is None else thresholds

    def request(self, owner: Any) -> None:
        self._intervals.request(owner, self.SWITCH_S)
        self._thresholds.request(owner, (self.YOUNG_THRESHOLD, 0))

    def release(self, owner: Any) -> None:
        self._intervals.release(owner)
        self._thresholds.release(owner)


#: the process's one ``Baseline``
BASELINE = Baseline()


class Urgency:
    """How many latency-sensitive hand-offs are in flight in this process: commands queued
    for the interactive runtime and not yet worked off, and peek answers delivered to a
    waiting session that has not woken yet.

    All runtimes of the process share one GIL.  A thread that wants it waits up to the
    switch interval while a busy runtime keeps it, and a read crosses threads two or three
    times.  A driver whose policy ``yields_to_urgent`` (maintenance) checks ``pending``
    after every bounded step and, while it is set, sleeps in short slices (so the GIL is
    surely released) for at most ``YIELD_BUDGET_S``: the interactive work and the woken
    reader run first, maintenance resumes right after.  The budget bounds the cost of a
    raise that is never lowered.  While anything is pending the switch interval is requested
    down to ``URGENT_SWITCH_S``, so even a thread in the middle of a long step hands the GIL
    over within a fraction of a millisecond.  Tests: tests/test_latency_mechanisms.py."""

    YIELD_BUDGET_S = 0.003
    SLICE_S = 0.00005
    URGENT_SWITCH_S = 0.0002

    def __init__(self, intervals: Optional[SwitchIntervals] = None):
        self._intervals = SWITCH_INTERVAL if intervals is None else intervals
        self._lock = threading.Lock()
        self._n = 0

    @property
    def pending(self) -> int:
        return self._n

    def raise_(self, n: int = 1) -> None:
        with self._lock:
            if not self._n and n > 0:
                self._intervals.request(self, self.URGENT_SWITCH_S)
            self._n += n

    def lower(self, n: int = 1) -> None:
        with self._lock:
            was = self._n
            self._n = max(0, self._n - n)
            if was and not self._n:
                self._intervals.release(self)

    def yield_while_pending(self) -> float:
        """Sleep in slices while anything is pending (bounded); returns the seconds yielded."""
        if not self._n:
            return 0.0
        start = time.perf_counter()
        deadline = start + self.YIELD_BUDGET_S
        while self._n and time.perf_counter() < deadline:
            time.sleep(self.SLICE_S)
        return time.perf_counter() - start


#: the process's one ``Urgency`` (see there)
URGENT = Urgency()


class BulkGC:
    """While any runtime is in a long busy period (a hydration, a large batch), the young
    generation is collected every ``BULK_THRESHOLD0`` allocations at least, and the oldest
    generation after ``BULK_THRESHOLD2`` middle-generation collections instead of 10.

    Building a large arrangement allocates millions of tuples; at Python's thresholds the
    promoted ones soon trigger a full collection, and each full collection walks every
    structure being built and stops every thread meanwhile.  The rows are acyclic, so
    collecting them later loses nothing; deferred, the full collection runs after the busy
    period.  ``BULK_THRESHOLD0`` is not larger because a young collection cannot be
    interrupted: with far larger ones the middle generation's collections paused every
    thread for long.  While busy, the switch interval is requested down to
    ``BUSY_SWITCH_S`` as well, so sessions waking up get the GIL sooner."""

    BULK_THRESHOLD0 = 10_000
    BULK_THRESHOLD2 = 100
    BUSY_SWITCH_S = 0.001

    def __init__(self, thresholds: Optional[GCThresholds] = None, intervals: Optional[SwitchIntervals] = None):
        self._thresholds = GC_THRESHOLDS if thresholds is None else thresholds
        self._intervals = SWITCH_INTERVAL if intervals is None else intervals
        self._lock = threading.Lock()
        self._n = 0

    def enter(self) -> None:
        with self._lock:
            if not self._n:
                self._thresholds.request(self, (self.BULK_THRESHOLD0, self.BULK_THRESHOLD2))
                self._intervals.request(self, self.BUSY_SWITCH_S)
            self._n += 1

    @property
    def active(self) -> bool:
        """Some runtime is in a long busy period (background work may wait)."""
        return self._n > 0

    def exit(self) -> None:
        with self._lock:
            was = self._n
            self._n = max(0, self._n - 1)
            if was and not self._n:
                self._thresholds.release(self)
                self._intervals.release(self)


#: the process's one ``BulkGC``
BULK_GC = BulkGC()
#: consecutive steps with work after which a runtime counts as busy with bulk work (about
#: 20 ms of work: a single change never gets there)
BULK_AFTER_STEPS = 8
