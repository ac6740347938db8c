"""Table storage: the coordinator's storage collections and group commit.

Owns the map from collection id to ``storage.persist.StorageCollection`` for tables,
sources' collections (written by their ingestion, ``sources``, through ``commit`` like a
table) and materialized views' outputs (which the maintenance runtime writes).
Invariants: a write commits at one timestamp from the oracle, and every *table's*
upper advances past it together (group commit), so one read timestamp sees a
consistent database; table uppers only advance; choosing a write timestamp and advancing
uppers (``commit``, ``create_table``, ``advance_tables``) happen under one lock, so a
write's timestamp is at or above every upper it appends to, whatever the clock does, and no
upper passes a timestamp handed to a writer that has not appended yet
(``tests/test_write_timestamps_interleavings.py``).  In a data directory (``store``, a
``storage.durable.DurableStore``) a commit is appended to the store inside the same
critical section that chose its timestamp and *before* it becomes visible in memory, so
``commit`` returns (and the statement is acknowledged) only once the write is durable, and
a write the store refused (disk full) is neither visible nor acknowledged.  Collections
restored from the store (``restored``) come back with their persisted since and history;
a materialized view's output persists its sink's writes (without a sync of its own: the
next table commit's sync covers them, and a lost tail is corrected at restart) and is
compacted on disk when its fold publishes.  Deliberately not here: validation of rows (the
coordinator checks NOT NULL and types before calling ``commit``), the catalog's
persistence (the adapter's ``mzlite.catalog_store``).
"""
from __future__ import annotations

import threading
from typing import Callable, Iterable, Mapping, Optional

from repr.ids import GlobalId
from storage.persist import StorageCollection
from storage.sources.ingest import Ingestions


class TableStorage:
    def __init__(self, oracle, *, on_commit: Callable[[], None] = lambda: None, store=None,
                 restored: Optional[dict] = None, restored_meta: Optional[dict] = None):
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
        #: the data directory's store (``storage.durable.DurableStore``), or None in memory
        self.store = store
        #: shard name -> ``storage.durable.StoredShard`` not yet claimed by its collection's
        #: CREATE (replayed when the data directory opens)
        self.restored: dict = dict(restored or {})
        #: outputs' uppers advanced without data since the last ``flush_uppers``
        self._pending_uppers: dict = {}
        #: the running sources, which commit their ticks here (``storage.sources.ingest``)
        self.sources = Ingestions(self)
        #: store meta entries restored from the data directory (sources' resume states)
        self.restored_meta: dict = dict(restored_meta or {})

    def create_table(self, id: GlobalId, arity: int) -> StorageCollection:
        with self._lock:
            t = self.oracle.write_ts()
            stored = self.restored.pop(str(id), None)
            if stored is not None:  # every persisted time is below t: the oracle resumed above them
                coll = StorageCollection(id, arity, since=min(stored.since, t), upper=t + 1)
                coll.restore(stored.batches)
            else:
                coll = StorageCollection(id, arity, since=t, upper=t + 1)
            self._attach(coll, output=False)
            self.collections[id] = coll
            self.tables.add(id)
        self.advance_tables(t + 1)
        return coll

    def restored_upper(self, id: GlobalId) -> Optional[int]:
        """The persisted upper of the output ``id`` awaiting its dataflow, if any: the new
        dataflow's as_of must be at or past it."""
        stored = self.restored.get(str(id))
        return stored.upper if stored is not None else None  # (a kept collection has one too)

    def keep_output(self, id: GlobalId) -> None:
        """The output ``id`` is about to get a new dataflow (a restarted replica): keep its
        history, as a restart from the store would (``create_output`` corrects it)."""
        coll = self.collections.get(id)
        if coll is not None and coll.upper is not None:
            self.restored[str(id)] = coll

    def create_output(self, id: GlobalId, arity: int, as_of: int) -> StorageCollection:
        """A collection written by a materialized view's sink, starting at ``as_of``; a
        restored one (``restored_upper(id) <= as_of``) keeps its history and retracts its
        old contents at its first write (``StorageCollection.correct_at_first_write``)."""
        stored = self.restored.pop(str(id), None)
        if isinstance(stored, StorageCollection):
            coll = stored
        elif stored is not None and stored.upper is not None:
            coll = StorageCollection(id, arity, since=stored.since, upper=stored.upper)
            coll.restore(stored.batches, stored.errors)
        else:
            coll = None
        if coll is not None:
            if as_of > coll.upper:  # nothing was written in between: the dataflow starts at as_of
                coll.upper = as_of
            coll.correct_at_first_write()
        else:
            if stored is not None and self.store is not None:
                self.store.truncate_shard(str(id), as_of, as_of)
            coll = StorageCollection(id, arity, since=as_of, upper=as_of)
        self._attach(coll, output=True)
        self.collections[id] = coll
        return coll

    def _attach(self, coll: StorageCollection, output: bool) -> None:
        """Hook ``coll`` to the store (see the module docstring)."""
        store = self.store
        if store is None:
            return
        shard, arity = str(coll.id), coll.arity
        coll.on_folded = lambda c, time, base: store.compact_shard(shard, arity, time, base, c.since) \
            if self.collections.get(c.id) is c else None
        if output:
            def durable(batches, errors, upper):
                if batches or errors:
                    self._pending_uppers.pop(shard, None)
                    store.append_output(shard, arity, batches, errors, upper)
                else:
                    self._pending_uppers[shard] = upper
            coll.durable = durable

    def flush_uppers(self) -> None:
        """Record the outputs' uppers that advanced without data (the ticker calls it)."""
        if self.store is not None and self._pending_uppers:
            pending, self._pending_uppers = self._pending_uppers, {}
            self.store.set_uppers(pending)

    def drop(self, id: GlobalId) -> None:
        with self._lock:
            coll = self.collections.pop(id, None)
            self.tables.discard(id)
        if coll is not None:
            coll.compact(None)

    def commit(self, writes: Mapping[GlobalId, list], meta: Optional[dict] = None) -> int:
        """Apply ``{table: [(row, diff), ...]}`` at one fresh timestamp; return it.  The
        committing session propagates the write itself afterwards, so the runtimes' threads
        are not woken for it (``on_commit``).  ``meta``: store entries written in the same
        store transaction (a source's resume state; ignored in memory)."""
        self._on_commit()
        with self._lock:
            t = self.oracle.write_ts()
            if self.store is not None:  # durable before visible, inside the timestamp's critical section
                self.store.append_tables(t, {str(id): ups for id, ups in writes.items() if ups},
                                         {str(id): self.collections[id].arity for id in writes}, meta)
            self.commits += 1
            for id, updates in writes.items():
                if updates:
                    self.collections[id].append(updates, t, t + 1)
            for id in self.tables:
                coll = self.collections[id]
                if coll.upper is not None and coll.upper <= t:
                    coll.advance_upper(t + 1)
            return t

    def fail_collections(self, ids, message: str) -> None:
        """A source cannot continue: its collections stop advancing and fail with ``message``
        (readers waiting on them get it)."""
        with self._lock:
            for id in ids:
                coll = self.collections.get(id)
                self.tables.discard(id)
                if coll is not None:
                    coll.fail(message)

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
