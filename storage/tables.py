"""Table storage: the coordinator's storage collections and group commit.

Owns the map from collection id to ``storage.persist.StorageCollection`` for tables
and for materialized views' outputs (which the maintenance runtime writes).
Invariants: a write commits at one timestamp from the oracle, and every *table's*
upper advances past it together (group commit), so one read timestamp sees a
consistent database; table uppers only advance; choosing a write timestamp and advancing
uppers (``commit``, ``create_table``, ``advance_tables``) happen under one lock, so a
write's timestamp is at or above every upper it appends to, whatever the clock does, and no
upper passes a timestamp handed to a writer that has not appended yet
(``tests/test_write_timestamps_interleavings.py``).  Deliberately not here: validation
of rows (the coordinator checks NOT NULL and types before calling ``commit``), and
durability (a later issue).
"""
from __future__ import annotations

import threading
from typing import Callable, Iterable, Mapping

from repr.ids import GlobalId
from storage.persist import StorageCollection


class TableStorage:
    def __init__(self, oracle, *, on_commit: Callable[[], None] = lambda: None):
        #: hands out write timestamps (``write_ts()``): the adapter's timestamp oracle
        self.oracle = oracle
        #: called as a write begins to commit: the adapter defers the runtimes' wakes
        #: (its session propagates the write itself)
        self._on_commit = on_commit
        #: every storage collection the compute layer may read: tables and MV outputs
        self.collections: dict[GlobalId, StorageCollection] = {}
        #: the subset that are tables (written by the coordinator, advanced by group commit)
        self.tables: set[GlobalId] = set()
        #: writes committed so far (a session that wrote helps propagate them: ``Database``)
        self.commits = 0
        self._lock = threading.Lock()

    def create_table(self, id: GlobalId, arity: int) -> StorageCollection:
        with self._lock:
            t = self.oracle.write_ts()
            coll = StorageCollection(id, arity, since=t, upper=t + 1)
            self.collections[id] = coll
            self.tables.add(id)
        self.advance_tables(t + 1)
        return coll

    def create_output(self, id: GlobalId, arity: int, as_of: int) -> StorageCollection:
        """A collection written by a materialized view's sink, starting at ``as_of``."""
        coll = StorageCollection(id, arity, since=as_of, upper=as_of)
        self.collections[id] = coll
        return coll

    def drop(self, id: GlobalId) -> None:
        with self._lock:
            coll = self.collections.pop(id, None)
            self.tables.discard(id)
        if coll is not None:
            coll.compact(None)

    def commit(self, writes: Mapping[GlobalId, list]) -> int:
        """Apply ``{table: [(row, diff), ...]}`` at one fresh timestamp; return it.  The
        committing session propagates the write itself afterwards, so the runtimes' threads
        are not woken for it (``on_commit``)."""
        self._on_commit()
        with self._lock:
            t = self.oracle.write_ts()
            self.commits += 1
            for id, updates in writes.items():
                if updates:
                    self.collections[id].append(updates, t, t + 1)
            for id in self.tables:
                coll = self.collections[id]
                if coll.upper is not None and coll.upper <= t:
                    coll.advance_upper(t + 1)
            return t

    def folding(self) -> bool:
        """Some collection has a fold in progress (``StorageCollection.fold_step``)."""
        return any(c.folding() for c in list(self.collections.values()))

    def fold_steps(self) -> None:
        """One bounded step of every fold in progress."""
        for coll in list(self.collections.values()):
            if coll.folding():
                coll.fold_step()

    def advance_tables(self, upper: int) -> None:
        """Advance every table's upper to at least ``upper`` (time passes without writes).
        Under the commit lock: a commit between its write timestamp and its append is not
        overtaken (a tick at the timestamp handed out would close it first)."""
        with self._lock:
            for id in list(self.tables):
                coll = self.collections.get(id)
                if coll is not None:
                    u = coll.upper
                    if u is not None and u < upper:  # most reads find every upper already past
                        coll.advance_upper(upper)
