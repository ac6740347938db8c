"""Arrangements: a collection indexed by key, as a spine of immutable batches.

Owns ``Batch``, ``Spine`` and ``ReadHandle``.  A ``Spine`` is the maintained form of an
index: a tuple of immutable ``Batch``es, each mapping ``key -> ((row, time, diff), ...)``
(the row is stored whole; the key is computed from the row by the index's compiled key
function), plus ``since`` (logical compaction: reads below it are not distinguishable)
and ``upper`` (every time below it is final).

A key's entries are a tuple, not a list: batches are immutable anyway, and a tuple of
tuples of plain values is untracked by Python's cyclic collector after the first collection
that sees it, so a large index stops costing every later full collection a walk over it
(with lists, building a million-row batch was about 3x slower, most of it in the GC).  A key
with a single entry maps to the entry ``(row, time, diff)`` itself, not a 1-tuple around it
(48 bytes a row: most index keys are unique); ``entries(v)`` gives the sequence either way
(an entry's second field is its time, an int; a tuple of entries has an entry there).

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
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from compute.listeners import UpperListeners
from compute.persist import SinceError
from compute.timestamp import Frontier, frontier_le

__all__ = ["Batch", "Spine", "SpineHold", "ReadHandle", "SinceError", "build_batch", "EAGER_MERGE_FUEL",
           "entries", "count_of"]

#: records an ``insert`` may spend merging small batches eagerly (bigger merges wait for
#: ``maintain``), so a stream of tiny batches never piles up between maintenance calls
EAGER_MERGE_FUEL = 4096


class Batch:
    """Immutable updates with times in ``[lower, upper)`` (times below the spine's since
    at merge time are advanced to it, so ``min_time``/``max_time`` are the truth)."""

    __slots__ = ("lower", "upper", "updates", "count", "min_time", "max_time")

    def __init__(self, lower: int, upper: Frontier, updates: dict, count: int,
                 min_time: Optional[int], max_time: Optional[int]):
        self.lower = lower
        #: ``None``: the empty frontier (the batch seals the spine)
        self.upper = upper
        #: key -> list of ``(row, time, diff)``; never mutated after construction
        self.updates = updates
        #: number of ``(row, time, diff)`` entries
        self.count = count
        #: least / greatest time present (``None`` when the batch is empty)
        self.min_time = min_time
        self.max_time = max_time

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return f"Batch([{self.lower}, {self.upper}), {self.count} updates)"


def entries(v) -> tuple:
    """The ``(row, time, diff)`` entries of a batch value (see the module docstring); a
    plain list of entries (a hand-built batch) is taken as it is."""
    if v.__class__ is list:
        return v
    return (v,) if v[1].__class__ is int else v


def count_of(v) -> int:
    """How many entries a batch value holds."""
    return 1 if v[1].__class__ is int else len(v)


def _pack(entries_list) -> Any:
    """A batch value for a non-empty list of entries."""
    return entries_list[0] if len(entries_list) == 1 else tuple(entries_list)


def build_batch(key_fn: Callable[[tuple], Any], updates: Iterable[tuple], lower: int,
                upper: Frontier) -> Batch:
    """A batch of ``(row, time, diff)`` updates keyed by ``key_fn(row)``, consolidated."""
    acc: dict = {}
    for row, t, d in updates:
        k = (row, t)
        acc[k] = acc.get(k, 0) + d
    by_key: dict = {}
    multi: dict = {}
    n = 0
    lo = hi = None
    for (row, t), d in acc.items():
        if not d:
            continue
        key = key_fn(row)
        got = by_key.get(key)
        if got is None:
            by_key[key] = (row, t, d)
        else:
            lst = multi.get(key)
            if lst is None:
                multi[key] = [got, (row, t, d)]
            else:
                lst.append((row, t, d))
        n += 1
        if lo is None or t < lo:
            lo = t
        if hi is None or t > hi:
            hi = t
    for key, lst in multi.items():
        by_key[key] = tuple(lst)
    return Batch(lower, upper, by_key, n, lo, hi)


def _batch_at(key_fn, updates: list, time: int, lower: int, upper: Frontier) -> Batch:
    """A batch of consolidated ``(row, diff)`` updates all at ``time`` (the dataflow's
    per-time output); skips the time-keyed consolidation of ``build_batch``."""
    by_key: dict = {}
    multi: dict = {}
    get = by_key.get
    n = 0
    col = getattr(key_fn, "key_column", None)
    for row, d in updates:
        if not d:
            continue
        key = (row[col],) if col is not None else key_fn(row)
        got = get(key)
        if got is None:
            by_key[key] = (row, time, d)
        else:
            lst = multi.get(key)
            if lst is None:
                multi[key] = [got, (row, time, d)]
            else:
                lst.append((row, time, d))
        n += 1
    for key, lst in multi.items():
        by_key[key] = tuple(lst)
    return Batch(lower, upper, by_key, n, time if n else None, time if n else None)


def _merge(a: Batch, b: Batch, since: Frontier) -> Batch:
    """``a`` then ``b`` as one batch; keys present in both are consolidated with times
    advanced to ``since`` (keys in one batch only are shared as-is: their lists are
    immutable)."""
    ua, ub = a.updates, b.updates
    if len(ua) >= len(ub):
        out, other = dict(ua), ub
    else:
        out, other = dict(ub), ua
    n = a.count + b.count
    s = since if since is not None else 0
    for key, lst in other.items():
        ex = out.get(key)
        if ex is None:
            out[key] = lst
            continue
        acc: dict = {}
        for row, t, d in entries(ex):
            k = (row, t if t > s else s)
            acc[k] = acc.get(k, 0) + d
        for row, t, d in entries(lst):
            k = (row, t if t > s else s)
            acc[k] = acc.get(k, 0) + d
        merged = [(row, t, d) for (row, t), d in acc.items() if d]
        n += len(merged) - count_of(ex) - count_of(lst)
        if merged:
            out[key] = _pack(merged)
        else:
            del out[key]
    if since is not None and any(x is not None and x < since for x in (a.min_time, b.min_time)):
        # lists from one side only: consolidate those holding several entries (an insert
        # and a later delete cancel once both are advanced to since); single entries keep
        # their time, which reads at or above since cannot tell apart
        for key, lst in [(k, l) for k, l in out.items() if l[1].__class__ is not int and k not in other]:
            acc = {}
            for row, t, d in lst:
                kk = (row, t if t > s else s)
                acc[kk] = acc.get(kk, 0) + d
            if len(acc) == len(lst):
                continue
            merged = [(row, t, d) for (row, t), d in acc.items() if d]
            n += len(merged) - len(lst)
            if merged:
                out[key] = _pack(merged)
            else:
                del out[key]
    times = [x for x in (a.min_time, b.min_time) if x is not None]
    lo = min(times) if times else None
    times = [x for x in (a.max_time, b.max_time) if x is not None]
    hi = max(times) if times else None
    if lo is not None and since is not None and lo < since:
        # advanced times may now sit at since; min/max remain valid bounds
        hi = max(hi, since)
    return Batch(a.lower, b.upper, out, n, lo, hi)


def _accumulate(out: dict, lst, as_of: int, upper: Frontier, whole: bool) -> None:
    if whole:
        for row, _t, d in lst:
            out[row] = out.get(row, 0) + d
    else:
        for row, t, d in lst:
            if t <= as_of and (upper is None or t < upper):
                out[row] = out.get(row, 0) + d


class ReadHandle(tuple):
    """A consistent read view ``(batches, since, upper)`` of a spine at one moment.

    A plain tuple (so ``batches, since, upper = spine.read_handle()`` works) with the
    spine's read methods.  Safe to read from any thread: it holds immutable batches.
    """

    __slots__ = ()

    def __new__(cls, batches: tuple, since: Frontier, upper: Frontier, key_fn=None):
        return tuple.__new__(cls, (batches, since, upper, key_fn))

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

    def bounded(self, upper: Frontier) -> "ReadHandle":
        """This view with ``upper`` lowered to ``upper`` (updates at or past it are hidden):
        the frozen, single-time import of an index."""
        b, s, u, k = (tuple.__getitem__(self, i) for i in range(4))
        return ReadHandle(b, s, upper if frontier_le(upper, u) else u, k)

    def _check(self, as_of: int) -> None:
        since = tuple.__getitem__(self, 1)
        if since is None or as_of < since:
            raise SinceError(f"read at {as_of} is below the arrangement's since {since}")

    def snapshot(self, as_of: int) -> dict:
        """``row -> count`` consolidated over updates with ``time <= as_of`` (zeros removed)."""
        self._check(as_of)
        upper = tuple.__getitem__(self, 2)
        batches = [b for b in tuple.__getitem__(self, 0)
                   if b.min_time is not None and b.min_time <= as_of
                   and (upper is None or b.min_time < upper)]
        if len(batches) == 1:
            b = batches[0]
            if b.min_time == b.max_time:
                # one batch at one time: consolidated per (row, time), so each row appears
                # once with a non-zero count (a loaded table's index, freshly built)
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
        """``row -> count`` for rows with ``key`` at ``as_of``: one dict probe per batch."""
        self._check(as_of)
        upper = tuple.__getitem__(self, 2)
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
        out: dict = {}
        get = out.get
        for b in tuple.__getitem__(self, 0):
            if b.min_time is None or b.min_time > as_of:
                continue
            probe = b.updates.get
            if b.max_time <= as_of and (upper is None or b.max_time < upper):
                for key in keys:
                    lst = probe(key)
                    if lst is not None:
                        for row, _t, d in ((lst,) if lst[1].__class__ is int else lst):
                            out[row] = get(row, 0) + d
            else:
                for key in keys:
                    lst = probe(key)
                    if lst is not None:
                        _accumulate(out, entries(lst), as_of, upper, False)
        return {r: c for r, c in out.items() if c}

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
        #: row -> key (always a tuple, so lookups by a literal key tuple agree)
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
        batches, since, upper, key_fn = (tuple.__getitem__(self._h, i) for i in range(4))
        if batch.lower != upper:
            raise AssertionError(f"batch lower {batch.lower} != spine upper {upper}")
        if batch.upper is not None and (upper is None or batch.upper < upper):
            raise AssertionError("batch upper regresses the spine's upper")
        if batch.count:
            batches = batches + (batch,)
        self._h = ReadHandle(batches, since, batch.upper, key_fn)
        if batch.count:
            self.maintain(EAGER_MERGE_FUEL)
        self._notify()

    def insert_at(self, time: int, updates: Iterable[tuple], new_upper: Frontier) -> None:
        """Insert consolidated ``(row, diff)`` updates all at ``time`` as the batch
        ``[upper, new_upper)`` (``upper <= time < new_upper``); zero diffs are skipped."""
        upper = self.upper
        if upper is None or time < upper or (new_upper is not None and time >= new_upper):
            raise AssertionError(f"time {time} outside [{upper}, {new_upper})")
        self.insert(_batch_at(self.key_fn, updates, time, upper, new_upper))

    def insert_updates(self, updates: Iterable[tuple], new_upper: Frontier) -> None:
        """Insert ``(row, time, diff)`` updates with times in ``[upper, new_upper)``."""
        self.insert(build_batch(self.key_fn, updates, self.upper, new_upper))

    def advance_upper(self, new_upper: Frontier) -> None:
        """Advance ``upper`` with no updates (only advances)."""
        upper = self.upper
        if upper is None or (new_upper is not None and new_upper <= upper):
            return
        h = self._h
        self._h = ReadHandle(h.batches, h.since, new_upper, h.key_fn)
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
        self._h = ReadHandle(h.batches, target, h.upper, h.key_fn)

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
        violation first), spending about ``fuel`` records (``None``: no bound; a merge is
        never split, and one larger than the remaining fuel waits).  Returns whether it
        merged anything.  Reads at times ``>= since`` are unchanged."""
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
                return did
            cost = bs[j].count + bs[j + 1].count
            if fuel is not None and cost > fuel:
                return did
            merged = _merge(bs[j], bs[j + 1], h.since)
            new = bs[:j] + ((merged,) if merged.count else ()) + bs[j + 2:]
            if not merged.count and j > 0 and j + 2 < len(bs):
                pass  # an emptied batch just disappears; its neighbours stay contiguous in time
            self._h = ReadHandle(new, h.since, h.upper, h.key_fn)
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
                            b = _merge(b, Batch(b.upper, b.upper, {}, 0, None, None), since)
                        if b.count:
                            new.append(b)
                    self._h = ReadHandle(tuple(new), since, h.upper, h.key_fn)
                return
            merged = _merge(bs[j], bs[j + 1], h.since)
            self._h = ReadHandle(bs[:j] + ((merged,) if merged.count else ()) + bs[j + 2:],
                                 h.since, h.upper, h.key_fn)

    # ------------------------------------------------------------ reading
    def snapshot(self, as_of: int) -> dict:
        return self._h.snapshot(as_of)

    def lookup(self, key: Any, as_of: int) -> dict:
        return self._h.lookup(key, as_of)

    def lookup_many(self, keys, as_of: int) -> dict:
        return self._h.lookup_many(keys, as_of)

    def updates_between(self, lower: int, upper: Frontier) -> list:
        return self._h.updates_between(lower, upper)

    def updates_by_time(self, lower: int, upper: Frontier) -> list:
        return self._h.updates_by_time(lower, upper)

    def __repr__(self) -> str:
        h = self._h
        return f"Spine({len(h.batches)} batches, since={h.since}, upper={h.upper})"
