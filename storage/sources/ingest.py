"""Source ingestion: turning a generator's due ticks into table commits.

Owns ``Ingestion`` (one source: its generator, its outputs' collection ids, its progress
collection, its tick schedule and ``UP TO``) and ``Ingestions`` (every running source of one
``TableStorage``, and ``run(now_ms)``, which ingests every tick due at or before ``now_ms``).
The schedule, as Materialize's: offsets start at 0 and every offset up to ``AS OF`` is due
when the source is created (they are ingested as one commit, so ``AS OF n`` starts a source
with ``n`` ticks of history); offset ``k`` after that is due ``(k - AS OF) * tick_ms`` later;
offsets from ``UP TO`` on never are.  A restored source anchors its schedule at its
persisted next offset and the time it was reopened (ticks are not replayed for the time the
database was closed).  Invariants: each tick is one
``TableStorage.commit`` (the ticks up to ``AS OF`` together) -- its rows, the progress
collection's move from the old offset to the new one, and (in a data directory) the generator's resume state -- so a reader sees a
tick whole or not at all and a reopened source continues from exactly the offset it
persisted; a tick whose commit fails leaves the generator as it was (the tick is retried);
``run`` is serialised (the ticker and a reading session may both call it) and ingests
at most ``MAX_TICKS_PER_RUN`` ticks after ``AS OF`` per source per call; an external source
(``storage.sources.postgres``) is polled under its own lock, outside the registry's, so a
slow or unreachable server delays only itself, and removing it waits for its poll.
Deliberately not here: when ``run`` is called (the coordinator: on its tick and before a
read chooses its timestamp), what the ticks contain (``storage.sources.generators``).
"""
from __future__ import annotations

import threading
from typing import Optional

#: at most this many ticks per source per ``Ingestions.run`` (a clock that jumped far ahead
#: is caught up over several calls rather than in one unbounded burst)
MAX_TICKS_PER_RUN = 10_000


def state_key(source_id) -> str:
    """The store's meta key of a source's resume state."""
    return f"source_state:{source_id}"


class Ingestion:
    def __init__(self, source_id, generator, outputs: dict, progress_id, *, tick_ms: Optional[int], as_of: int = 0,
                 up_to: Optional[int] = None, now_ms: int, state: Optional[dict] = None):
        self.source_id = source_id
        self.generator = generator
        #: output name -> collection id (outputs not in it are not ingested: ``FOR TABLES``)
        self.outputs = dict(outputs)
        self.progress_id = progress_id
        self.tick_ms = tick_ms
        self.as_of = as_of
        self.up_to = up_to
        self.next_offset = 0
        if state is not None:
            generator.restore(state.get("generator", {}))
            self.next_offset = int(state["offset"])
        self.anchor = (self.next_offset, now_ms)
        #: updates written since the source started here (``mz_source_statistics``)
        self.updates_committed = 0

    def status(self) -> tuple:
        """``(status, error)`` as ``mz_source_statuses`` shows them."""
        return ("running" if self.due_ms() is not None else "finished"), None

    def statistics(self) -> tuple:
        """``(messages_received, updates_committed, snapshot_committed, offset_known,
        offset_committed)``: offsets are ticks."""
        return (self.next_offset, self.updates_committed, self.next_offset > self.as_of, self.next_offset,
                self.next_offset)

    def forget(self, gid) -> None:
        """Collection ``gid`` is dropped: no longer written."""
        self.outputs = {o: g for o, g in self.outputs.items() if g != gid}
        if self.progress_id == gid:
            self.progress_id = None

    def due_ms(self) -> Optional[int]:
        """When the next offset is due (None: never, the source has finished)."""
        k = self.next_offset
        if self.up_to is not None and k >= self.up_to:
            return None
        first = max(self.anchor[0], self.as_of)  # offsets up to here are due at the anchor
        if k <= first:
            return self.anchor[1]
        if self.tick_ms is None:
            return None
        return self.anchor[1] + (k - first) * self.tick_ms

    def step(self, due_ms: int) -> tuple[dict, dict]:
        """``(writes, meta)`` of the next tick: ``writes`` by collection id, ``meta`` the resume
        state to persist with it."""
        k = self.next_offset
        writes: dict = {}
        for output, ups in self.generator.step(k, due_ms).items():
            gid = self.outputs.get(output)
            if gid is not None and ups:
                writes.setdefault(gid, []).extend(ups)
        if self.progress_id is not None:
            prog = writes.setdefault(self.progress_id, [])
            if k > 0:  # the previous tick's offset is replaced
                prog.append(((k,), -1))
            prog.append(((k + 1,), 1))
        self.next_offset = k + 1
        self.updates_committed += sum(len(u) for g, u in writes.items() if g != self.progress_id)
        meta = {state_key(self.source_id): {"offset": k + 1, "generator": self.generator.state()}}
        return writes, meta


def _merge(into: dict, writes: dict) -> None:
    for gid, ups in writes.items():
        acc = into.setdefault(gid, {})
        for row, d in ups:
            n = acc.get(row, 0) + d
            if n:
                acc[row] = n
            else:
                acc.pop(row, None)


class Ingestions:
    """The running sources of one ``TableStorage`` (``storage.tables``)."""

    def __init__(self, storage):
        self.storage = storage
        self._by_id: dict = {}
        self._lock = threading.Lock()

    def add(self, ingestion: Ingestion) -> None:
        with self._lock:
            self._by_id[ingestion.source_id] = ingestion

    def remove(self, source_id):
        """Stop ``source_id``'s ingestion (waiting for an external one's poll in progress); it."""
        with self._lock:
            ing = self._by_id.pop(source_id, None)
        lock = getattr(ing, "lock", None)
        if lock is not None:
            with lock:
                pass
        return ing

    def forget_collection(self, source_id, gid) -> None:
        """Source ``source_id`` no longer writes collection ``gid`` (a dropped subsource or
        progress collection)."""
        with self._lock:
            ing = self._by_id.get(source_id)
        if ing is None:
            return
        lock = getattr(ing, "lock", None)
        if lock is None:
            with self._lock:
                ing.forget(gid)
        else:
            with lock:
                ing.forget(gid)

    def __contains__(self, source_id) -> bool:
        return source_id in self._by_id

    def get(self, source_id) -> Optional[Ingestion]:
        return self._by_id.get(source_id)

    def run(self, now_ms: int, external: bool = True) -> int:
        """Ingest every tick due at or before ``now_ms`` (see the module docstring) and, with
        ``external``, what external sources (``storage.sources.postgres``) have to apply; the
        number of ticks and transactions committed."""
        if not self._by_id:
            return 0
        done = 0
        with self._lock:
            for ing in list(self._by_id.values()):
                if isinstance(ing, Ingestion):
                    done += self._run_generator(ing, now_ms)
            others = [ing for ing in self._by_id.values() if not isinstance(ing, Ingestion)] if external else []
        for ing in others:  # each under its own lock, so a slow server never holds up the generators or reads
            if ing.lock.acquire(blocking=False):  # another thread is polling it: that poll will do
                try:
                    if ing.source_id in self._by_id:
                        done += ing.run(self.storage)
                finally:
                    ing.lock.release()
        return done

    def _run_generator(self, ing: Ingestion, now_ms: int) -> int:
        done = 0
        before = (ing.next_offset, ing.generator.state())
        batch: dict = {}
        meta = None
        ticks = 0
        try:
            while ticks < MAX_TICKS_PER_RUN:
                due = ing.due_ms()
                if due is None or due > now_ms:
                    break
                k = ing.next_offset
                writes, meta = ing.step(due)
                _merge(batch, writes)
                done += 1
                if k >= ing.as_of:  # ticks before AS OF are one commit with tick AS OF
                    ticks += 1
                    self.storage.commit({g: list(u.items()) for g, u in batch.items()}, meta=meta)
                    batch, meta = {}, None
                    before = (ing.next_offset, ing.generator.state())
            if meta is not None:
                self.storage.commit({g: list(u.items()) for g, u in batch.items()}, meta=meta)
        except BaseException:
            ing.next_offset = before[0]
            ing.generator.restore(before[1])
            raise
        return done
