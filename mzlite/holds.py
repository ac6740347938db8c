"""Read holds on storage collections, and the compaction of those collections.

Owns ``StorageHolds``: the read holds the adapter takes on tables and materialized views'
outputs (a read in progress, a transaction, a dataflow being created, a SUBSCRIBE), and
the one place storage collections are compacted behind the compaction window
(``StorageHolds.compact``, which the ticker calls).

Invariant (the one this module exists for): compaction never passes a live hold.  Taking
a hold and deciding how far a collection may compact happen under one lock, so the two
are ordered: a hold at ``t`` is refused (``SinceError``) when the collection's since has
already passed ``t``, and once granted, no compaction moves since past ``t`` until it is
released.  Without the shared lock the ticker could read the minimum hold, a reader then
take a hold below its target, and the ticker compact past it (the reader's read then
fails far away, with an internal error).  Sabotage seen red in
``tests/test_read_holds.py``: ``acquire`` without its since check, and ``compact`` reading
the minimum hold outside the lock.

Deliberately not here: choosing timestamps (``mzlite.reads``), holds on compute
collections (``mzlite.controller``, which orders its own holds against its own
``AllowCompaction`` in the same way), and how a collection compacts
(``storage.persist.StorageCollection.compact``).
"""
from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping

from mzlite.controller import SinceError
from repr.ids import GlobalId


class StorageHolds:
    """Read holds on storage collections (see the module docstring)."""

    def __init__(self):
        #: collection id -> {hold id: time}; since never passes the least time
        self._holds: dict[GlobalId, dict[int, int]] = {}
        self._ids = itertools.count(1)
        #: orders hold acquisition against compaction decisions (the module's invariant)
        self._lock = threading.Lock()

    def acquire(self, collections: Mapping, ids, t: int) -> list:
        """Hold every id of ``collections`` among ``ids`` at ``t``; all or nothing.  Raises
        ``SinceError`` when some collection's since has passed ``t`` (or it was dropped:
        since None); ids that are not storage collections are skipped."""
        out = []
        with self._lock:
            for gid in ids:
                coll = collections.get(gid)
                if coll is None:
                    continue
                if coll.since is None or coll.since > t:
                    for g, h in out:
                        self._holds[g].pop(h, None)
                    raise SinceError(gid, coll.since, t)
                h = next(self._ids)
                self._holds.setdefault(gid, {})[h] = t
                out.append((gid, h))
        return out

    def release(self, holds) -> None:
        with self._lock:
            for gid, h in holds:
                hs = self._holds.get(gid)
                if hs is not None:
                    hs.pop(h, None)
                    if not hs:
                        del self._holds[gid]

    def min_hold(self, gid) -> int | None:
        with self._lock:
            hs = self._holds.get(gid)
            return min(hs.values()) if hs else None

    def compact(self, coll, target: int, *, fold: bool = True) -> None:
        """Compact ``coll`` to ``target``, or to its least hold when that is earlier; never
        backwards.  The decision and the since advance are made under the holds lock."""
        with self._lock:
            hs = self._holds.get(coll.id)
            if hs:
                target = min(target, min(hs.values()))
            if coll.since is None or target <= coll.since:
                return
            coll.compact(target, fold=fold)
