"""The arrangement a peek dataflow exports: read once, at its one time, by its peek.

Owns ``OneShotSpine``: a ``Spine`` for the transient index of a peek dataflow
(``DataflowDescription.is_peek_dataflow``) keyed by plain columns.  Its one time's
consolidated updates arrive from the dataflow's collector as a ``row -> diff`` dict's items;
the spine keeps that dict as it is (no batch: no entry tuple, key or sort per row) and a
snapshot at or after that time is the dict itself, which is what the peek reads.  Any other
read (a lookup, a read handle, the updates) first builds the kept rows into an ordinary
batch (``_materialize``), so every read answers as a ``Spine`` would.

Invariants: the kept rows are the updates at ``_time`` and are visible exactly where that
batch's would be (a snapshot at ``as_of >= _time``; the spine's since, upper and holds are
the inner spine's); they are in at most one place (kept, or built into a batch, never both);
the kept dict is never mutated here (the dataflow's collector hands it over and starts a new
one).  A key of expressions (which may fail on a row) takes the ordinary path.

Deliberately not here: when a spine is one-shot (``compute.render.dataflow`` decides from the
description), batches and merging (``compute.arrangement.batch``, ``compute.arrangement.spine``).
"""
from __future__ import annotations

import threading
from typing import Any, Iterable, Optional

from compute.arrangement.batch import batch_at
from compute.arrangement.read import ReadHandle
from compute.arrangement.spine import Spine
from repr.timestamp import Frontier

__all__ = ["OneShotSpine"]

class OneShotSpine(Spine):
    """A ``Spine`` keeping its first time's updates as the collector's dict (see the module
    docstring)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        #: the kept ``row -> diff`` dict (zero diffs possible) and its time, or None
        self._kept: Optional[dict] = None
        #: the kept rows' time and the ``[lower, upper)`` their batch would have had
        self._time: Optional[int] = None
        self._bounds: tuple = ()
        self._lock = threading.Lock()

    def insert_at(self, time: int, updates: Iterable[tuple], new_upper: Frontier) -> None:
        """As ``Spine.insert_at``; ``updates`` may also be a ``row -> diff`` dict (the
        collector's, handed over), which the first insert keeps as it is."""
        if updates.__class__ is dict:
            if self._kept is None and not self._h.batches:
                upper = self.upper
                if upper is None or time < upper or (new_upper is not None and time >= new_upper):
                    raise AssertionError(f"time {time} outside [{upper}, {new_upper})")
                self._kept, self._time, self._bounds = updates, time, (upper, new_upper)
                self.advance_upper(new_upper)
                return
            updates = updates.items()
        self._materialize()
        super().insert_at(time, updates, new_upper)

    def snapshot(self, as_of: int) -> dict:
        kept = self._kept
        if kept is None:
            return super().snapshot(as_of)
        rest = super().snapshot(as_of)  # checks since (and holds any later batch)
        if as_of < self._time:
            return rest
        if not rest:
            return kept if 0 not in kept.values() else {r: d for r, d in kept.items() if d}
        out = {r: d for r, d in kept.items() if d}
        for r, d in rest.items():
            c = out.get(r, 0) + d
            if c:
                out[r] = c
            else:
                out.pop(r, None)
        return out

    def _materialize(self) -> None:
        """Build the kept rows into an ordinary batch at the front of the spine."""
        if self._kept is None:
            return
        with self._lock:
            kept, t = self._kept, self._time
            if kept is None:
                return
            h = self._h
            batch = batch_at(self.key_fn, kept.items(), t, *self._bounds)
            batches = ((batch,) if batch.count else ()) + h.batches
            self._h = ReadHandle(batches, h.since, h.upper, self.key_fn)
            self._kept = None

    # every other read sees the kept rows as a batch
    @property
    def batches(self) -> tuple:
        self._materialize()
        return super().batches

    def read_handle(self) -> ReadHandle:
        self._materialize()
        return super().read_handle()

    def __len__(self) -> int:
        kept = self._kept
        return super().__len__() + (len(kept) if kept is not None else 0)

    def lookup(self, key: Any, as_of: int) -> dict:
        self._materialize()
        return super().lookup(key, as_of)

    def lookup_many(self, keys, as_of: int) -> dict:
        self._materialize()
        return super().lookup_many(keys, as_of)

    def lookup_pairs(self, keys, as_of: int) -> list:
        self._materialize()
        return super().lookup_pairs(keys, as_of)

    def snapshot_pairs(self, as_of: int):
        self._materialize()
        return super().snapshot_pairs(as_of)

    def updates_between(self, lower: int, upper: Frontier) -> list:
        self._materialize()
        return super().updates_between(lower, upper)

    def updates_by_time(self, lower: int, upper: Frontier) -> list:
        self._materialize()
        return super().updates_by_time(lower, upper)

    def insert(self, batch) -> None:
        self._materialize()
        super().insert(batch)
