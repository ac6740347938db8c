"""Read handles: a consistent snapshot of an arrangement and every way to read it.

Owns ``ReadHandle``: the state ``(batches, since, upper)`` of a spine at one moment (and the
spine's key function), with the read methods ``snapshot``, ``snapshot_pairs``, ``lookup``,
``lookup_many``, ``lookup_pairs``, ``updates_between`` and ``updates_by_time``.  The one
read path of the replica: a ``Spine`` reads through its current handle
(``Spine.read_handle()``), a peek reads a handle, and the shared-arrangement registry hands
the interactive runtime handles (``frozen_at``: an import bounded one step past its
``as_of``).  Also the latest-state cache the handles of one spine share (``_Latest``).

Invariant: a handle holds only immutable batches (``compute.arrangement.batch``), so it is
safe to read from any thread without locks and stays correct across the spine's later
inserts, merges and compaction; a read below ``since`` is refused (``SinceError``), and
updates at or past ``upper`` are invisible.

Deliberately not here: building, merging and compacting batches (``compute.arrangement.batch``,
``compute.arrangement.spine``), holds, and which thread owns a spine.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any, Optional

from compute.arrangement.batch import Batch, entries, probe_batches, probe_key
from repr.timestamp import Frontier, frontier_le, try_step_forward
from storage.persist import SinceError

__all__ = ["ReadHandle", "LATEST_MAX_ROWS", "LATEST_MAX_PENDING"]


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
    history kept since ``since`` (a small index under frequent writes keeps thousands of
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

    def frozen_at(self, as_of: int) -> "ReadHandle":
        """This view bounded one step past ``as_of`` (at ``MAX``, the empty frontier: the
        final state): what an import of the arrangement at ``as_of`` may read."""
        return self.bounded(try_step_forward(as_of))

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
        batch lazily, without building a dict of every row (a hydration importing a large
        index)."""
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
