"""Arrangements: a collection indexed by key, as a spine of immutable batches.

Owns ``Spine`` and ``SpineHold``.  A ``Spine`` is the maintained form of an index: a tuple
of immutable ``Batch``es (``compute.arrangement.batch``), each mapping a key to its
``(row, time, diff)`` entries (the row is stored whole; the key is computed from the row by
the index's compiled key function, and a one-column key is stored as the value itself:
``stored_key``), plus ``since`` (logical compaction: reads below it are not
distinguishable) and ``upper`` (every time below it is final).  Its state is one
``ReadHandle`` (``compute.arrangement.read``), replaced whole; every read goes through it.

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

Deliberately not here: the read paths (``compute.arrangement.read``), deciding when to
compact (the runtime/registry call ``set_logical_compaction``), key compilation (the caller
passes ``key_fn``), and anything about which thread owns a spine (only its owner mutates it).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from compute.arrangement.batch import Batch, batch_at, build_batch, merge_batches
from compute.arrangement.read import ReadHandle
from repr.timestamp import Frontier
from storage.listeners import UpperListeners
from storage.persist import SinceError

__all__ = ["Spine", "SpineHold", "EAGER_MERGE_FUEL"]

#: records an ``insert`` may spend merging small batches eagerly (bigger merges wait for
#: ``maintain``), so a stream of tiny batches never piles up between maintenance calls
EAGER_MERGE_FUEL = 4096


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
        are not starved (else a spine under large changes grows a batch per change, and every
        lookup probes them all).  Returns whether it merged or banked anything
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
