"""Storage collections: a tiny in-memory stand-in for Materialize's persist shards.

Owns ``StorageCollection``: an append log of ``(row, time, diff)`` updates with a
``since`` and an ``upper``, used for tables (written by the coordinator) and for
materialized views' outputs (written by the maintenance runtime's sink).
Invariants: appended times are ``>= upper`` at the time of the append and ``< `` the
new upper; ``since <= upper``; readers read ``upper`` *before* the log, and writers
extend the log *before* advancing ``upper``, so a reader never sees a time below
``upper`` change (no locks on the read path; the GIL makes list appends atomic).
A base or a log entry is never mutated once stored, so a reader may be handed one as it is
(``snapshot_view``: a loaded table's snapshot without a copy).
Compaction replaces ``(base, log)`` as one tuple, so a concurrent reader keeps a
consistent view; folding the log into the base is built privately in bounded steps
(``_FoldJob``) and published the same way, so no call holds the GIL for a whole fold.
Durability (a data directory): a collection may carry hooks into ``storage.durable``: a
materialized view's output persists every ``append_timed`` *before* making it visible
(``durable``), and a finished fold hands its new base to ``on_folded`` (physical compaction
of the shard); tables are persisted by ``storage.tables``' commit.  A collection restored
from a data directory (``restore``) starts with its persisted since, upper and history;
an output restored that way retracts its persisted contents at its first write after the
restart (``correct_at_first_write``: its new dataflow writes its whole snapshot then, so
the difference is what changed, as Materialize's self-correcting persist sink does).
Deliberately not here: read holds (the coordinator owns them), when folds are stepped
(the coordinator's ticker), the store itself.
"""
from __future__ import annotations

from itertools import islice
import threading
from typing import Callable, Iterable, Optional

from repr.timestamp import Frontier
from storage.listeners import UpperListeners


def _foldable(log: list, since: int) -> int:
    """How many entries at the head of ``log`` are at or below ``since``."""
    k = 0
    while k < len(log) and log[k][0] <= since:
        k += 1
    return k


def _fold(state: tuple[dict, list], since: int) -> tuple[dict, list]:
    """``(base, log)`` with log entries at or below ``since`` folded into the base, in one
    piece (the error log: small)."""
    base, log = state
    k = _foldable(log, since)
    return (_fold_into(base, log[:k]), log[k:]) if k else state


def _pairs(updates):
    """A log entry's updates as ``(row, diff)`` pairs: a list of pairs, or a ``row -> diff``
    dict (a bulk insert: no pair tuple per row, and a snapshot or fold of it is a dict copy)."""
    return updates.items() if updates.__class__ is dict else updates


def _fold_into(base: dict, entries: list) -> dict:
    """A new base: ``base`` plus every ``(time, updates)`` of ``entries``.  An empty base
    and one time's updates (a bulk load's first fold) take one C-level ``dict`` build
    when those updates are consolidated (each row once, no zero diff), several times cheaper
    than inserting them one by one (docs/PERFORMANCE.md)."""
    if not base and len(entries) == 1:
        ups = entries[0][1]
        if ups.__class__ is dict:
            if 0 not in ups.values():
                return ups  # never mutated: a log entry's dict may become the base as it is
        else:
            out = dict(ups)
            if len(out) == len(ups) and 0 not in out.values():
                return out
    out = base.copy()  # (dict(base) takes the slow path once deletions left holes)
    get = out.get
    for _t, ups in entries:
        for row, d in _pairs(ups):
            c = get(row, 0) + d
            if c:
                out[row] = c
            else:
                out.pop(row, None)
    return out


#: Fold the log into the base only once at least this many updates (and a quarter of the
#: base's size) are foldable.
FOLD_MIN_UPDATES = 4096
#: Updates a fold applies per step (``StorageCollection.fold_step``): about 10 ms of the GIL.
#: A million-row table's fold of 250,000 updates held it for 0.2-0.3 s in one piece.
FOLD_STEP_UPDATES = 16_384


class _FoldJob:
    """A fold in progress: ``base`` plus the log entries ``entries`` (a prefix of the log,
    every time at or below since), built into ``out`` a bounded number of updates per step.
    ``out`` is private until the job's last step publishes it (with ``log[len(entries):]``)
    in place of ``base`` and that prefix, so readers never see it half-built."""

    __slots__ = ("base", "entries", "out", "next_entry", "pairs")

    def __init__(self, base: dict, entries: list):
        self.base = base
        self.entries = entries
        #: the new base (``None`` until the first step copies ``base``)
        self.out: Optional[dict] = None
        #: index of the next entry whose pairs ``pairs`` does not hold yet
        self.next_entry = 0
        #: an iterator over the pairs of the entry being applied (log entries are never
        #: mutated, so it stays valid across steps)
        self.pairs = iter(())

    def step(self, budget: int) -> bool:
        """Apply up to ``budget`` updates; True when every entry has been applied."""
        if self.out is None:
            if not self.base and len(self.entries) <= 1:
                self.out = _fold_into(self.base, self.entries)  # one C-level build (or empty)
                self.next_entry = len(self.entries)
                return True
            # one C-level copy (``copy`` clones a dict with up to a third of its slots
            # deleted; ``dict(base)`` re-inserts every entry then, about 3x slower)
            self.out = self.base.copy()
        out = self.out
        get = out.get
        while budget > 0:
            n = 0
            for row, d in islice(self.pairs, budget):
                n += 1
                c = get(row, 0) + d
                if c:
                    out[row] = c
                else:
                    out.pop(row, None)
            budget -= n
            if budget <= 0:
                break
            if self.next_entry == len(self.entries):
                return True
            self.pairs = iter(_pairs(self.entries[self.next_entry][1]))
            self.next_entry += 1
        return False


def _consolidate_pairs(pairs: list) -> list:
    acc: dict = {}
    for row, d in pairs:
        acc[row] = acc.get(row, 0) + d
    return [(r, d) for r, d in acc.items() if d]


def _restored(batches: list, since) -> tuple[dict, list]:
    """``(base, log)`` of persisted batches: times at or below ``since`` summed into the base,
    later ones merged per time into log entries."""
    base: dict = {}
    by_time: dict = {}
    for t, ups in batches:
        if since is not None and t <= since:
            for row, d in ups:
                c = base.get(row, 0) + d
                if c:
                    base[row] = c
                else:
                    base.pop(row, None)
        else:
            by_time.setdefault(t, []).extend(ups)
    log = []
    for t in sorted(by_time):
        ups = _consolidate_pairs(by_time[t])
        if ups:
            log.append((t, tuple(ups)))
    return base, log


class SinceError(Exception):
    """A read below the collection's since."""


class StorageCollection(UpperListeners):
    def __init__(self, id, arity: int, since: int = 0, upper: int = 0):
        self.id = id
        self.arity = arity
        #: ``(base, log)``: ``base`` maps row -> count consolidated as of ``since``;
        #: ``log`` is a list of ``(time, updates)`` with strictly increasing times > since
        #: where ``updates`` is a list of ``(row, diff)``, or a ``row -> diff`` dict with no
        #: zero diff (a bulk insert); read either through ``_pairs``.  Never mutated.
        self._state: tuple[dict, list] = ({}, [])
        #: the collection's data errors, shaped like ``_state`` with rows
        #: ``(sqlstate, message)``: written by a materialized view's sink beside its rows
        #: (``append_timed(..., errors=...)``) under the same upper; tables have none
        self._err_state: tuple[dict, list] = ({}, [])
        self.since: Frontier = since
        self.upper: Frontier = upper
        self._listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()  # serialises writers only
        #: the fold in progress, if any (``compact`` starts it, ``fold_step`` continues it)
        self._folding: Optional[_FoldJob] = None
        self._fold_lock = threading.Lock()  # one thread steps the fold at a time
        #: why the writer of this collection failed (a materialized view's dataflow), else None
        self.failed: Optional[str] = None
        #: ``durable(batches, error_batches, new_upper)``: persists an output's write before it
        #: is visible (``storage.tables`` sets it in a data directory); None in memory
        self.durable: Optional[Callable] = None
        #: ``on_folded(collection, time, base)``: a fold published ``base``, the contents as of
        #: ``time`` (its last folded entry's); the store compacts the shard to it
        self.on_folded: Optional[Callable] = None
        #: ``(rows, errors)`` to retract at the first ``append_timed`` (``correct_at_first_write``)
        self._correction: Optional[tuple[dict, dict]] = None

    def restore(self, batches: list, errors: list = ()) -> None:
        """Load persisted ``(time, [(row, diff)])`` batches (time order; a fresh collection
        whose since and upper are the persisted ones): those at or below since fold into the
        base, the rest become the log."""
        self._state = _restored(batches, self.since)
        self._err_state = _restored(list(errors), self.since)

    def correct_at_first_write(self) -> None:
        """Retract the current contents at the next ``append_timed`` (see the module docstring)."""
        everything = self.upper - 1 if self.upper is not None else None
        if everything is None or self.since is None or everything < self.since:
            self._correction = ({}, {})
            return
        self._correction = (self._consolidated(self._state, everything),
                            self._consolidated(self._err_state, everything))

    # ----------------------------------------------------------- writing
    def append(self, updates: list, time: int, new_upper: Frontier) -> None:
        """Append ``updates`` (``(row, diff)`` pairs) at ``time`` and advance the upper."""
        with self._lock:
            if self.upper is None or time < self.upper:
                raise AssertionError(f"append at {time} below upper {self.upper} of {self.id}")
            if new_upper is not None and new_upper <= time:
                raise AssertionError("new upper must pass the appended time")
            if updates:
                # a dict (``row -> diff``, no zero diff) is kept as it is: the caller hands it over.
                # Pairs are kept as a tuple: once the cyclic collector finds its pairs hold only
                # plain values it stops tracking it, where a list is walked by every full
                # collection for as long as the entry lives
                self._state[1].append((time, updates if updates.__class__ is dict else tuple(updates)))
            self.upper = new_upper
        self._notify()

    def append_timed(self, updates: Iterable[tuple[tuple, int, int]], new_upper: Frontier,
                     errors: Iterable[tuple[tuple, int, int]] = ()) -> None:
        """Append ``(row, time, diff)`` updates with times in ``[upper, new_upper)``;
        ``errors``: ``((sqlstate, message), time, diff)`` updates of the error log."""
        by_time: dict[int, list] = {}
        for row, t, d in updates:
            by_time.setdefault(t, []).append((row, d))
        err_by_time: dict[int, list] = {}
        for row, t, d in errors:
            err_by_time.setdefault(t, []).append((row, d))
        if self._correction is not None and self.upper is not None and (new_upper is None or new_upper > self.upper):
            rows, errs = self._correction
            self._correction = None
            at = self.upper
            by_time[at] = _consolidate_pairs(by_time.get(at, []) + [(r, -d) for r, d in rows.items()])
            err_by_time[at] = _consolidate_pairs(err_by_time.get(at, []) + [(r, -d) for r, d in errs.items()])
            if not by_time[at]:
                del by_time[at]
            if not err_by_time[at]:
                del err_by_time[at]
        if self.durable is not None and (by_time or err_by_time or new_upper != self.upper):
            self.durable(sorted(by_time.items()), sorted(err_by_time.items()), new_upper)
        with self._lock:
            for t in sorted(err_by_time):
                if self.upper is None or t < self.upper or (new_upper is not None and t >= new_upper):
                    raise AssertionError(f"error time {t} outside [{self.upper}, {new_upper}) for {self.id}")
                self._err_state[1].append((t, err_by_time[t]))
            for t in sorted(by_time):
                if self.upper is None or t < self.upper or (new_upper is not None and t >= new_upper):
                    raise AssertionError(f"time {t} outside [{self.upper}, {new_upper}) for {self.id}")
                self._state[1].append((t, by_time[t]))
            if new_upper is not None and self.upper is not None and new_upper < self.upper:
                raise AssertionError("upper regressed")
            self.upper = new_upper
        self._notify()

    def advance_upper(self, new_upper: Frontier) -> None:
        with self._lock:
            if self.upper is None:
                return
            if new_upper is not None and new_upper <= self.upper:
                return
            self.upper = new_upper
        self._notify()

    def fail(self, message: str) -> None:
        """The dataflow writing this collection failed: its upper will never advance again.
        Readers (dataflows reading it) fail with ``message`` instead of waiting for ever."""
        self.failed = message
        self._notify()

    # ----------------------------------------------------------- reading
    def snapshot(self, as_of: int) -> dict:
        """``row -> count`` consolidated at ``as_of`` (requires ``since <= as_of``)."""
        return self._consolidated(self._state, as_of)

    def snapshot_view(self, as_of: int) -> dict:
        """Like ``snapshot``, but without a copy of the collection where the stored state
        already is the answer: the base itself when no log entry is at or below ``as_of``
        (a table whose writes compaction folded), or the one entry at or below it when the
        base is empty and that entry is a bulk insert's dict (consolidated, no zero count: a
        table loaded once).  The caller must not mutate the result (nothing here mutates a
        base or a log entry either: compaction replaces them)."""
        base, log = self._state
        if self.since is None or as_of < self.since:
            raise SinceError(f"{self.id}: as_of {as_of} is below since {self.since}")
        if not log or log[0][0] > as_of:
            return base
        if not base and log[0][1].__class__ is dict and (len(log) == 1 or log[1][0] > as_of):
            return log[0][1]
        return self._consolidated((base, log), as_of)

    def _consolidated(self, state: tuple[dict, list], as_of: int) -> dict:
        base, log = state
        if self.since is None or as_of < self.since:
            raise SinceError(f"{self.id}: as_of {as_of} is below since {self.since}")
        out = base.copy()
        for t, ups in log:
            if t > as_of:
                break
            if not out and len(ups) > 1024:
                # the first entry on an empty base (a bulk load): built in C when its rows
                # are distinct and non-zero, else summed below
                first = dict(ups)
                if len(first) == len(ups) and 0 not in first.values():
                    out = first
                    continue
            for row, d in _pairs(ups):
                c = out.get(row, 0) + d
                if c:
                    out[row] = c
                else:
                    del out[row]
        return out

    def updates_between(self, lower: int, upper: Frontier) -> list[tuple[tuple, int, int]]:
        """Every update with ``lower <= time < upper`` as ``(row, time, diff)``."""
        _, log = self._state
        out = []
        for t, ups in log:
            if t < lower:
                continue
            if upper is not None and t >= upper:
                break
            out.extend((row, t, d) for row, d in _pairs(ups))
        return out

    def batches_between(self, lower: int, upper: Frontier) -> list[tuple[int, list]]:
        """The log entries ``(time, [(row, diff)])`` with ``lower <= time < upper``, in time order."""
        _, log = self._state
        out = []
        # times are increasing: scan from the end for the common "recent" case
        i = len(log)
        while i > 0 and log[i - 1][0] >= lower:
            i -= 1
        for t, ups in log[i:]:
            if upper is not None and t >= upper:
                break
            out.append((t, _pairs(ups)))
        return out

    def error_snapshot(self, as_of: int) -> dict:
        """``(sqlstate, message) -> count`` of the error log at ``as_of``."""
        return self._consolidated(self._err_state, as_of)

    def error_batches_between(self, lower: int, upper: Frontier) -> list[tuple[int, list]]:
        """The error log's entries ``(time, [(error_row, diff)])`` with ``lower <= time < upper``."""
        _, log = self._err_state
        return [(t, ups) for t, ups in log if t >= lower and (upper is None or t < upper)]

    # ----------------------------------------------------------- compaction
    def compact(self, since: Frontier, fold: bool = True) -> None:
        """Advance ``since``; fold log entries at or below it into the base (unless
        ``fold`` is false: the caller defers that work, e.g. while a runtime is busy).

        Logical compaction (``since``) takes effect at once.  Physical folding (a copy of the
        base, O(collection)) waits until the foldable updates are a fair fraction of the
        base, so its cost stays proportional to the updates it absorbs; it then runs as a
        ``_FoldJob`` of bounded steps (``FOLD_STEP_UPDATES`` updates each), the first one
        here and the rest in ``fold_step`` calls, so no single call holds the GIL for the
        whole fold."""
        with self._lock:
            if since is None:
                self.since = None
                self._state = ({}, [])
                self._err_state = ({}, [])
                self._folding = None
                return
            if self.since is not None and since > self.since:
                if self.upper is not None:
                    since = min(since, self.upper)
                self._err_state = _fold(self._err_state, since)
                base, log = self._state
                if fold and self._folding is None:
                    k = _foldable(log, since)
                    pending = sum(len(ups) for _, ups in log[:k]) if k else 0
                    if k and pending >= max(FOLD_MIN_UPDATES, len(base) // 4):
                        self._folding = _FoldJob(base, log[:k])
                self.since = since
        if fold:
            self.fold_step()  # (a fold in progress goes on even when since stays)

    def fold_step(self, budget: Optional[int] = None) -> bool:
        """Continue the fold in progress by up to ``budget`` updates (``FOLD_STEP_UPDATES``);
        publish it when done.  True while a fold remains in progress afterwards."""
        if self._folding is None or not self._fold_lock.acquire(blocking=False):
            return self._folding is not None
        try:
            job = self._folding
            if job is None:
                return False
            if not job.step(FOLD_STEP_UPDATES if budget is None else budget):
                return True
            with self._lock:
                if self._folding is job:
                    base, log = self._state
                    # only a finished job replaces the base; the log only grows at its end
                    assert base is job.base and log[:len(job.entries)] == job.entries
                    self._state = (job.out, log[len(job.entries):])
                    self._folding = None
                    published = True
                else:
                    published = False
            if published and self.on_folded is not None and job.entries:
                self.on_folded(self, job.entries[-1][0], job.out)
            return False
        finally:
            self._fold_lock.release()

    def folding(self) -> bool:
        """A fold is in progress (``fold_step`` has work)."""
        return self._folding is not None

    def __len__(self) -> int:  # approximate size, for introspection
        base, log = self._state
        return len(base) + sum(len(u) for _, u in log)
