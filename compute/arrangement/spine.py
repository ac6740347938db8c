"""Arrangements: a collection indexed by key, as a spine of immutable batches.

Owns ``Spine`` and ``ReadHandle``.  A ``Spine`` is the maintained form of an
index: a tuple of immutable ``Batch``es (``compute.arrangement.batch``), each mapping a key to its
``(row, time, diff)`` entries
(the row is stored whole; the key is computed from the row by the index's compiled key
function, and a one-column key is stored as the value itself: ``stored_key``), plus ``since`` (logical compaction: reads below it are not distinguishable)
and ``upper`` (every time below it is final).

Invariants protected here:

* **Batches are never mutated after creation.**  Merging builds a new batch; the spine
  replaces its state ``(batches, since, upper)`` as one tuple (``ReadHandle``), so a
  reader on another thread that took ``read_handle()`` keeps a consistent snapshot
  without locks, even across merges and compaction.
* **Logical and physical compaction are separate.**  ``set_logical_compaction(since)``
  only changes which times stay distinguishable; merging (``maintain``) advances times
  below ``since`` to ``since`` and consolidates, which never changes a read at a time
  ``>= since``.  ``set_physical_compaction(frontier)`` only decides which batch
  boundaries may disappear: two adjacent batches merge only when the boundary between
  them is ``< frontier`` (so ``updates_between(lower, frontier)`` stays answerable at
  batch granularity); the default, the empty frontier, lets every batch merge.
* **Geometric merging**: after ``maintain`` runs to completion, each batch is at least
  twice the size of the next, so the number of batches stays logarithmic in the number
  of updates and ``lookup`` costs O(batches) dict probes.
* **Reader holds**: the applied ``since`` never passes a live ``SpineHold`` (an importing
  dataflow holds its read frontier, as a DD trace handle does); the latest request is
  applied once the holds allow it.
* ``insert(batch)`` requires ``batch.lower == upper`` and advances ``upper`` to
  ``batch.upper``; ``since``/``upper`` only advance.

Deliberately not here: deciding when to compact (the runtime/registry call
``set_logical_compaction``), key compilation (the caller passes ``key_fn``), and
anything about which thread owns a spine (only its owner mutates it).

Slightly over 600 lines: the read paths of ``ReadHandle`` (snapshot, the latest-state cache,
lookups of one key, many keys and many keys as pairs, updates by time) all read the one batch
format, and the spine's merging and compaction share its state; split, each half would need
the other's internals.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any, Callable, Iterable, Optional

from compute.arrangement.batch import (Batch, batch_at, build_batch, count_of, entries, merge_batches,
                                       probe_batches, probe_key)
from repr.timestamp import Frontier, frontier_le
from storage.listeners import UpperListeners
from storage.persist import SinceError

__all__ = ["Batch", "Spine", "SpineHold", "ReadHandle", "SinceError", "build_batch", "EAGER_MERGE_FUEL",
           "entries", "count_of"]

#: records an ``insert`` may spend merging small batches eagerly (bigger merges wait for
#: ``maintain``), so a stream of tiny batches never piles up between maintenance calls
EAGER_MERGE_FUEL = 4096


def _accumulate(out: dict, lst, as_of: int, upper: Frontier, whole: bool) -> None:
    if whole:
        for row, _t, d in lst:
            out[row] = out.get(row, 0) + d
    else:
        for row, t, d in lst:
            if t <= as_of and (upper is None or t < upper):
                out[row] = out.get(row, 0) + d


_ROW_DIFF = itemgetter(0, 2)


class _SizedPairs:
    """``(row, diff)`` of a single batch's entries, lazily, with a length."""

    __slots__ = ("_entries", "_n")

    def __init__(self, entries, n: int):
        self._entries = entries
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __iter__(self):
        return map(_ROW_DIFF, self._entries)

#: a handle caches its latest state (``_Latest``) only while it has at most this many rows
LATEST_MAX_ROWS = 4096
#: ... and derives it from an ancestor's plus at most this many newer entries
LATEST_MAX_PENDING = 4096


class _Latest:
    """The consolidated state after every update of a read handle, for reads at or past
    its last update: the common read, and the one whose cost otherwise grows with the
    history kept since ``since`` (a 10-row index under a write a millisecond keeps ~2,000
    updates for the compaction window, all summed by every read).

    Computed at most once, on the first such read, from the nearest ancestor whose state
    is known plus the batches inserted since (``link``), or from every batch.  Handles
    whose updates sum to the same state (merges, compaction, upper advances, ``bounded``)
    share one ``_Latest``.  ``counts`` is never mutated once set; a race computes equal
    values twice.  Not kept for large arrangements (``LATEST_MAX_ROWS``): there a full
    read is proportional to the data anyway, and a copy per handle would double memory."""

    __slots__ = ("counts", "link")

    def __init__(self, link=None):
        #: ``row -> count`` (non-zero), ``None`` (not computed) or ``False`` (too large)
        self.counts: Any = None
        #: ``(ancestor with counts, batches inserted after it)`` or ``None``; one attribute,
        #: so a reader takes both in one read
        self.link = link

    def then(self, batch: "Batch") -> "_Latest":
        """The ``_Latest`` of a handle with ``batch`` appended."""
        counts = self.counts
        if counts is False:
            return self  # too large: stays so (never computed, never mutated: shareable)
        if counts is not None:
            return _Latest((self, (batch,)))
        link = self.link
        if link is None or sum(b.count for b in link[1]) + batch.count > LATEST_MAX_PENDING:
            return _Latest()
        return _Latest((link[0], link[1] + (batch,)))

    def derivable(self) -> bool:
        """Whether ``compute`` can derive the state from an ancestor's (cheap)."""
        link = self.link
        return link is not None and link[0].counts.__class__ is dict

    def compute(self) -> dict:
        """The state derived from the ancestor's plus the batches since (``derivable``),
        cached when small; a copy is returned."""
        base, todo = self.link
        out = base.counts.copy()
        get = out.get
        for b in todo:
            for v in b.updates.values():
                for row, _t, d in ((v,) if v[1].__class__ is int else v):
                    out[row] = get(row, 0) + d
        out = {r: c for r, c in out.items() if c}
        self.store(out)
        return out

    def store(self, state: dict) -> None:
        """Remember ``state`` (this handle's whole state, freshly computed and the caller's
        to keep) if it is small: a copy is kept."""
        self.counts = dict(state) if len(state) <= LATEST_MAX_ROWS else False
        self.link = None


class ReadHandle(tuple):
    """A consistent read view ``(batches, since, upper)`` of a spine at one moment.

    A plain tuple (so ``batches, since, upper = spine.read_handle()`` works) with the
    spine's read methods.  Safe to read from any thread: it holds immutable batches.
    """

    __slots__ = ()

    def __new__(cls, batches: tuple, since: Frontier, upper: Frontier, key_fn=None,
                latest: Optional[_Latest] = None):
        return tuple.__new__(cls, (batches, since, upper, key_fn,
                                   _Latest() if latest is None else latest))

    def __iter__(self):  # unpack as the documented 3-tuple
        return iter(tuple.__getitem__(self, slice(0, 3)))

    def __len__(self) -> int:
        return 3

    @property
    def batches(self) -> tuple:
        return tuple.__getitem__(self, 0)

    @property
    def since(self) -> Frontier:
        return tuple.__getitem__(self, 1)

    @property
    def upper(self) -> Frontier:
        return tuple.__getitem__(self, 2)

    @property
    def key_fn(self):
        return tuple.__getitem__(self, 3)

    @property
    def latest(self) -> _Latest:
        return tuple.__getitem__(self, 4)

    def bounded(self, upper: Frontier) -> "ReadHandle":
        """This view with ``upper`` lowered to ``upper`` (updates at or past it are hidden):
        the frozen, single-time import of an index."""
        b, s, u, k, latest = (tuple.__getitem__(self, i) for i in range(5))
        return ReadHandle(b, s, upper if frontier_le(upper, u) else u, k, latest)

    def _check(self, as_of: int) -> None:
        since = tuple.__getitem__(self, 1)
        if since is None or as_of < since:
            raise SinceError(f"read at {as_of} is below the arrangement's since {since}")

    def snapshot(self, as_of: int) -> dict:
        """``row -> count`` consolidated over updates with ``time <= as_of`` (zeros removed)."""
        self._check(as_of)
        upper = tuple.__getitem__(self, 2)
        every = tuple.__getitem__(self, 0)
        latest = None
        if every and all(b.max_time is None or (b.max_time <= as_of and (upper is None or b.max_time < upper))
                         for b in every):
            # every update is visible: the latest state, cached across reads (``_Latest``)
            latest = tuple.__getitem__(self, 4)
            counts = latest.counts
            if counts.__class__ is dict:
                return dict(counts)
            if counts is False:
                latest = None
            elif latest.derivable():
                return latest.compute()
        out = self._snapshot(every, as_of, upper)
        if latest is not None:
            latest.store(out)
        return out

    def snapshot_pairs(self, as_of: int):
        """The ``(row, count)`` pairs of ``snapshot(as_of)`` as a sized iterable: for a
        single-time batch with one entry a key (a freshly built index) they are read off the
        batch lazily, without building a dict of every row (a hydration importing a
        million-row index spent 0.3 s there)."""
        self._check(as_of)
        upper = tuple.__getitem__(self, 2)
        every = tuple.__getitem__(self, 0)
        if len(every) == 1:
            b = every[0]
            if (b.single and b.min_time is not None and b.min_time == b.max_time and b.max_time <= as_of
                    and (upper is None or b.max_time < upper)):
                return _SizedPairs(b.updates.values(), b.count)
        return self.snapshot(as_of).items()

    def _snapshot(self, every: tuple, as_of: int, upper: Frontier) -> dict:
        batches = [b for b in every
                   if b.min_time is not None and b.min_time <= as_of
                   and (upper is None or b.min_time < upper)]
        if len(batches) == 1:
            b = batches[0]
            if b.min_time == b.max_time:
                # one batch at one time: consolidated per (row, time), so each row appears
                # once with a non-zero count (a loaded table's index, freshly built)
                if b.single:  # every value one entry: one C-level pass
                    return dict(map(_ROW_DIFF, b.updates.values()))
                return {row: d for v in b.updates.values()
                        for row, _t, d in ((v,) if v[1].__class__ is int else v)}
        out: dict = {}
        get = out.get
        for b in batches:
            if b.max_time <= as_of and (upper is None or b.max_time < upper):
                for v in b.updates.values():
                    for row, _t, d in ((v,) if v[1].__class__ is int else v):
                        out[row] = get(row, 0) + d
            else:
                for v in b.updates.values():
                    _accumulate(out, entries(v), as_of, upper, False)
        return {r: c for r, c in out.items() if c}

    def lookup(self, key: Any, as_of: int) -> dict:
        """``row -> count`` for rows with ``key`` (the key tuple) at ``as_of``: one dict probe
        per batch."""
        self._check(as_of)
        upper = tuple.__getitem__(self, 2)
        if probe_key(tuple.__getitem__(self, 3)) is not None:
            key = key[0]  # batches store a one-column key as the value (``stored_key``)
        out: dict = {}
        for b in tuple.__getitem__(self, 0):
            lst = b.updates.get(key)
            if lst is None or b.min_time > as_of:
                continue
            whole = b.max_time <= as_of and (upper is None or b.max_time < upper)
            _accumulate(out, entries(lst), as_of, upper, whole)
        return {r: c for r, c in out.items() if c}

    def lookup_many(self, keys, as_of: int) -> dict:
        """``row -> count`` over the rows of every key in ``keys`` at ``as_of`` (a key given
        twice counts twice, as separate ``lookup``s would): one pass per batch, the probes
        inline (a bulk UPDATE/DELETE reads thousands of keys in one peek)."""
        self._check(as_of)
        upper = tuple.__getitem__(self, 2)
        to_stored = probe_key(tuple.__getitem__(self, 3))
        if to_stored is not None:
            keys = list(map(to_stored, keys))
        out: dict = {}
        get = out.get
        for b in tuple.__getitem__(self, 0):
            if b.min_time is None or b.min_time > as_of:
                continue
            probe = b.updates.get
            if b.max_time <= as_of and (upper is None or b.max_time < upper):
                # the probes and the skipping of absent keys in C (most keys miss the
                # small recent batches)
                for lst in filter(None, map(probe, keys)):
                    if lst[1].__class__ is int:
                        row = lst[0]
                        out[row] = get(row, 0) + lst[2]
                    else:
                        for row, _t, d in lst:
                            out[row] = get(row, 0) + d
            else:
                for key in keys:
                    lst = probe(key)
                    if lst is not None:
                        _accumulate(out, entries(lst), as_of, upper, False)
        return {r: c for r, c in out.items() if c}

    def lookup_pairs(self, keys, as_of: int) -> list:
        """``lookup_many`` as ``[(row, count)]`` pairs, each row once: for distinct keys whose
        every update is visible at ``as_of``, built without hashing the rows found
        (``compute.arrangement.batch.probe_batches``)."""
        self._check(as_of)
        upper = tuple.__getitem__(self, 2)
        to_stored = probe_key(tuple.__getitem__(self, 3))
        stored = list(map(to_stored, keys)) if to_stored is not None else list(keys)
        batches = tuple(b for b in tuple.__getitem__(self, 0) if b.min_time is not None and b.min_time <= as_of)
        if (all(b.max_time <= as_of and (upper is None or b.max_time < upper) for b in batches)
                and len(set(stored)) == len(stored)):
            return probe_batches(batches, stored, as_of, upper)
        return list(self.lookup_many(keys, as_of).items())

    def updates_between(self, lower: int, upper: Frontier) -> list:
        """Every update with ``lower <= time < upper`` as ``(row, time, diff)``, time-ordered."""
        bound = tuple.__getitem__(self, 2)
        hi = upper if frontier_le(upper, bound) else bound
        out = []
        for b in tuple.__getitem__(self, 0):
            if b.min_time is None or b.max_time < lower or (hi is not None and b.min_time >= hi):
                continue
            for v in b.updates.values():
                for u in ((v,) if v[1].__class__ is int else v):
                    t = u[1]
                    if t >= lower and (hi is None or t < hi):
                        out.append(u)
        out.sort(key=lambda u: u[1])
        return out

    def updates_by_time(self, lower: int, upper: Frontier) -> list:
        """``[(time, [(row, diff), ...])]`` for the updates with ``lower <= time < upper``,
        time-ordered: ``updates_between`` grouped, without the intermediate triples (a
        batch wholly at one time in the range is copied out in one comprehension)."""
        bound = tuple.__getitem__(self, 2)
        hi = upper if frontier_le(upper, bound) else bound
        by_time: dict = {}
        for b in tuple.__getitem__(self, 0):
            lo_t, hi_t = b.min_time, b.max_time
            if lo_t is None or hi_t < lower or (hi is not None and lo_t >= hi):
                continue
            if lo_t == hi_t:
                if b.single:  # every value one entry: one C-level pass
                    pairs = list(map(_ROW_DIFF, b.updates.values()))
                else:
                    pairs = [(row, d) for v in b.updates.values()
                             for row, _t, d in ((v,) if v[1].__class__ is int else v)]
                got = by_time.get(lo_t)
                if got is None:
                    by_time[lo_t] = pairs
                else:
                    got.extend(pairs)
                continue
            for v in b.updates.values():
                for row, t, d in ((v,) if v[1].__class__ is int else v):
                    if t >= lower and (hi is None or t < hi):
                        got = by_time.get(t)
                        if got is None:
                            by_time[t] = [(row, d)]
                        else:
                            got.append((row, d))
        return sorted(by_time.items())

    def read_handle(self) -> "ReadHandle":
        return self

    def __repr__(self) -> str:
        return f"ReadHandle({len(self.batches)} batches, since={self.since}, upper={self.upper})"


class SpineHold:
    """A reader's hold on a spine's since (see ``Spine.acquire_hold``)."""

    __slots__ = ("spine", "token")

    def __init__(self, spine: "Spine", token: int):
        self.spine = spine
        self.token = token

    def downgrade(self, time: Frontier) -> None:
        """Allow compaction up to ``time`` (only advances; None releases)."""
        self.spine._downgrade(self.token, time)

    def release(self) -> None:
        self.spine._downgrade(self.token, None)


class Spine(UpperListeners):
    """A maintained arrangement (see the module docstring for its invariants)."""

    def __init__(self, key_fn: Callable[[tuple], Any], arity: int, *, since: Frontier = 0,
                 upper: Frontier = 0, key_exprs: Optional[tuple] = None):
        #: row -> key (always a tuple, so lookups by a literal key tuple agree; batches
        #: store ``stored_key(key_fn)``, and reads translate)
        self.key_fn = key_fn
        self.arity = arity
        #: the key as scalar expressions over the row, when known (join planning reuses
        #: an arrangement whose key matches)
        self.key_exprs = key_exprs
        #: the whole state, replaced atomically: readers never see a half-applied change
        self._h = ReadHandle((), since, upper, key_fn)
        #: batch boundaries ``< physical`` may disappear in a merge (None: any may)
        self.physical: Frontier = None
        self._listeners: list[Callable[[], None]] = []
        #: the latest logical compaction requested (the applied since may lag behind it)
        self._requested: Frontier = since
        #: fuel banked toward the next merge, which is larger than one activation's fuel
        self._merge_credit = 0
        #: live reader holds: token -> time (each only advances)
        self._holds: dict[int, int] = {}
        self._next_hold = 1

    # ------------------------------------------------------------ state
    @property
    def batches(self) -> tuple:
        return self._h.batches

    @property
    def since(self) -> Frontier:
        return self._h.since

    @property
    def upper(self) -> Frontier:
        return self._h.upper

    def read_handle(self) -> ReadHandle:
        """The current ``(batches, since, upper)``: a consistent view for any thread."""
        return self._h

    def __len__(self) -> int:
        return sum(b.count for b in self._h.batches)

    # ------------------------------------------------------------ writing
    def insert(self, batch: Batch) -> None:
        """Append ``batch`` (``batch.lower == upper``) and advance ``upper`` to ``batch.upper``."""
        batches, since, upper, key_fn, latest = (tuple.__getitem__(self._h, i) for i in range(5))
        if batch.lower != upper:
            raise AssertionError(f"batch lower {batch.lower} != spine upper {upper}")
        if batch.upper is not None and (upper is None or batch.upper < upper):
            raise AssertionError("batch upper regresses the spine's upper")
        if batch.count:
            batches = batches + (batch,)
            latest = latest.then(batch)
        self._h = ReadHandle(batches, since, batch.upper, key_fn, latest)
        if batch.count:
            self.maintain(EAGER_MERGE_FUEL)
        self._notify()

    def insert_at(self, time: int, updates: Iterable[tuple], new_upper: Frontier) -> None:
        """Insert consolidated ``(row, diff)`` updates all at ``time`` as the batch
        ``[upper, new_upper)`` (``upper <= time < new_upper``); zero diffs are skipped."""
        upper = self.upper
        if upper is None or time < upper or (new_upper is not None and time >= new_upper):
            raise AssertionError(f"time {time} outside [{upper}, {new_upper})")
        self.insert(batch_at(self.key_fn, updates, time, upper, new_upper))

    def insert_updates(self, updates: Iterable[tuple], new_upper: Frontier) -> None:
        """Insert ``(row, time, diff)`` updates with times in ``[upper, new_upper)``."""
        self.insert(build_batch(self.key_fn, updates, self.upper, new_upper))

    def advance_upper(self, new_upper: Frontier) -> None:
        """Advance ``upper`` with no updates (only advances)."""
        upper = self.upper
        if upper is None or (new_upper is not None and new_upper <= upper):
            return
        h = self._h
        self._h = ReadHandle(h.batches, h.since, new_upper, h.key_fn, h.latest)
        self._notify()

    def set_logical_compaction(self, since: Frontier) -> None:
        """Allow reads at ``since`` and later only (only advances).  The applied since
        stays at or below every live ``SpineHold`` (the request is remembered and applied
        as the holds advance or go away)."""
        r = self._requested
        if r is None or (since is not None and since <= r):
            return
        self._requested = since
        self._apply_since()

    def _apply_since(self) -> None:
        target = self._requested
        for t in self._holds.values():
            if target is None or t < target:
                target = t
        h = self._h
        if h.since is None or (target is not None and target <= h.since):
            return
        self._h = ReadHandle(h.batches, target, h.upper, h.key_fn, h.latest)

    def acquire_hold(self, time: int) -> "SpineHold":
        """A reader's hold: since will not pass ``time`` until the hold is downgraded or
        released (the importing dataflow's read frontier, as a trace handle in DD)."""
        h = self._h
        if h.since is None or time < h.since:
            raise SinceError(f"cannot hold at {time}: since is {h.since}")
        token = self._next_hold
        self._next_hold += 1
        self._holds[token] = time
        return SpineHold(self, token)

    def _downgrade(self, token: int, time: Frontier) -> None:
        old = self._holds.get(token)
        if old is None:
            return
        if time is None:
            del self._holds[token]
        elif time > old:
            self._holds[token] = time
        else:
            return
        self._apply_since()

    def set_physical_compaction(self, frontier: Frontier) -> None:
        """Batch boundaries below ``frontier`` may disappear in merges (None: any)."""
        self.physical = frontier

    # ------------------------------------------------------------ merging
    def _mergeable(self, batches: tuple, i: int) -> bool:
        boundary = batches[i].upper
        return self.physical is None or (boundary is not None and boundary < self.physical)

    def needs_maintenance(self) -> bool:
        bs = self._h.batches
        return any(bs[i].count < 2 * bs[i + 1].count and self._mergeable(bs, i)
                   for i in range(len(bs) - 1))

    def maintain(self, fuel: Optional[int] = None) -> bool:
        """Merge adjacent batches until each is at least twice the next (the rightmost
        violation first), spending about ``fuel`` records (``None``: no bound).  A merge
        is never split: one larger than the fuel at hand banks the fuel (``_merge_credit``)
        and happens once enough has been banked, so merges larger than one activation's fuel
        are not starved (they were: a spine under 10,000-row changes grew a batch per change,
        and every lookup probed them all).  Returns whether it merged or banked anything
        (work the caller should come back for).  Reads at times ``>= since`` are unchanged."""
        did = False
        while True:
            h = self._h
            bs = h.batches
            j = None
            for i in range(len(bs) - 2, -1, -1):
                if bs[i].count < 2 * bs[i + 1].count and self._mergeable(bs, i):
                    j = i
                    break
            if j is None:
                self._merge_credit = 0  # nothing owed: fuel is not banked while idle
                return did
            cost = bs[j].count + bs[j + 1].count
            if fuel is not None:
                fuel += self._merge_credit
                self._merge_credit = 0
                if cost > fuel:
                    self._merge_credit = fuel
                    return True
            merged = merge_batches(bs[j], bs[j + 1], h.since)
            new = bs[:j] + ((merged,) if merged.count else ()) + bs[j + 2:]
            if not merged.count and j > 0 and j + 2 < len(bs):
                pass  # an emptied batch just disappears; its neighbours stay contiguous in time
            self._h = ReadHandle(new, h.since, h.upper, h.key_fn, h.latest)
            did = True
            if fuel is not None:
                fuel -= cost

    def compact_fully(self) -> None:
        """Merge everything mergeable into as few batches as physical compaction allows."""
        while True:
            h = self._h
            bs = h.batches
            j = next((i for i in range(len(bs) - 2, -1, -1) if self._mergeable(bs, i)), None)
            if j is None:
                # re-consolidate batches still holding times below since
                since = h.since
                if since is not None and any(b.min_time is not None and b.min_time < since for b in bs):
                    new = []
                    for b in bs:
                        if b.min_time is not None and b.min_time < since:
                            b = merge_batches(b, Batch(b.upper, b.upper, {}, 0, None, None), since)
                        if b.count:
                            new.append(b)
                    self._h = ReadHandle(tuple(new), since, h.upper, h.key_fn, h.latest)
                return
            merged = merge_batches(bs[j], bs[j + 1], h.since)
            self._h = ReadHandle(bs[:j] + ((merged,) if merged.count else ()) + bs[j + 2:],
                                 h.since, h.upper, h.key_fn)

    # ------------------------------------------------------------ reading
    def snapshot(self, as_of: int) -> dict:
        return self._h.snapshot(as_of)

    def lookup(self, key: Any, as_of: int) -> dict:
        return self._h.lookup(key, as_of)

    def lookup_many(self, keys, as_of: int) -> dict:
        return self._h.lookup_many(keys, as_of)

    def lookup_pairs(self, keys, as_of: int) -> list:
        return self._h.lookup_pairs(keys, as_of)

    def snapshot_pairs(self, as_of: int):
        return self._h.snapshot_pairs(as_of)

    def updates_between(self, lower: int, upper: Frontier) -> list:
        return self._h.updates_between(lower, upper)

    def updates_by_time(self, lower: int, upper: Frontier) -> list:
        return self._h.updates_by_time(lower, upper)

    def __repr__(self) -> str:
        h = self._h
        return f"Spine({len(h.batches)} batches, since={h.since}, upper={h.upper})"
