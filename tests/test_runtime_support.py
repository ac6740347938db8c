"""Small stand-ins for compute.arrangement.spine.Spine and compute.render.dataflow.Dataflow, written to the
contract in docs/INTERFACES.md, so the replica's tests do not depend on those modules.

StandinSpine really compacts (``maintain`` advances times to ``since`` and merges), and
refuses reads below ``since``, so a test that lets since pass a reader's time sees wrong
or refused reads.  StandinDataflow passes its single input (a storage collection or an
imported index) through to its index exports and sinks, time by time, with fuel.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from compute.dataflow import (BuildDesc, DataflowDescription, IndexExport, IndexImport, SinkExport,
                              SourceImport)
from compute.protocol import SubscribeBatch
from expr.relation import Get
from expr.scalar import Column
from repr.ids import GlobalId
from repr.timestamp import MAX, frontier_le, frontier_min, try_step_forward
from storage.persist import StorageCollection

ERR = "ERR"  # a row whose first column is ERR becomes a data error (22012)


@dataclass(frozen=True)
class Batch:
    lower: int
    upper: object
    updates: dict


class StandinSpine:
    def __init__(self, key_fn, arity, since=0, upper=0):
        self.key_fn = key_fn
        self.arity = arity
        self.batches = ()
        self.since = since
        self.upper = upper
        self.physical = since

    def insert(self, batch):
        assert batch.lower == self.upper, (batch.lower, self.upper)
        self.batches = self.batches + (batch,)
        self.upper = batch.upper

    def advance_upper(self, t):
        if frontier_le(self.upper, t) and t != self.upper:
            self.insert(Batch(self.upper, t, {}))

    def set_logical_compaction(self, since):
        if frontier_le(self.since, since):
            self.since = since

    def set_physical_compaction(self, f):
        if frontier_le(self.physical, f):
            self.physical = f

    def maintain(self, fuel=None):
        """Merge all batches, advancing times to the physical frontier (<= since)."""
        f = frontier_min(self.physical, self.since)
        if f is None or len(self.batches) < 2:
            return False
        acc = {}
        for b in self.batches:
            for key, ups in b.updates.items():
                for row, t, d in ups:
                    t = max(t, f)
                    acc[(key, row, t)] = acc.get((key, row, t), 0) + d
        merged = {}
        for (key, row, t), d in acc.items():
            if d:
                merged.setdefault(key, []).append((row, t, d))
        self.batches = (Batch(self.batches[0].lower, self.upper, merged),)
        return True

    def read_handle(self):
        return (self.batches, self.since, self.upper)

    def _acc(self, ups_iter, as_of):
        if self.since is None or as_of < self.since:
            raise AssertionError(f"read at {as_of} below since {self.since}")
        out = {}
        for row, t, d in ups_iter:
            if t <= as_of:
                out[row] = out.get(row, 0) + d
        return {r: c for r, c in out.items() if c}

    def snapshot(self, as_of):
        return self._acc((u for b in self.batches for ups in b.updates.values() for u in ups), as_of)

    def lookup(self, key, as_of):
        return self._acc((u for b in self.batches for u in b.updates.get(key, ())), as_of)

    def updates_between(self, lower, upper):
        out = [u for b in self.batches for ups in b.updates.values() for u in ups
               if u[1] >= lower and (upper is None or u[1] < upper)]
        out.sort(key=lambda u: u[1])
        return out


@dataclass
class Exported:
    oks: StandinSpine
    errs: StandinSpine


class StandinDataflow:
    """Identity pass-through of one input to every export, one time at a time."""

    instances: list = []

    def __init__(self, desc, *, sources, indexes, sinks):
        self.desc = desc
        assert len(sources) + len(indexes) == 1, "stand-in takes exactly one input"
        self.input = next(iter(sources.values())) if sources else next(iter(indexes.values())).oks
        self.sinks = sinks
        self.exports = {}
        for e in desc.index_exports:
            cols = tuple(k.index for k in e.key)
            kf = (lambda row, cols=cols: tuple(row[c] for c in cols))
            self.exports[e.id] = Exported(StandinSpine(kf, e.arity, desc.as_of, desc.as_of),
                                          StandinSpine(lambda row: (), 2, desc.as_of, desc.as_of))
        self._frontier = desc.as_of
        self._hydrated = False
        self._subs = {s.id: [] for s in desc.sink_exports if s.kind == "subscribe"}
        self.steps = 0
        self.broken = False
        StandinDataflow.instances.append(self)

    def frontier(self):
        return self._frontier

    def _emit(self, lower, upper, updates):
        for eid, exp in self.exports.items():
            oks, errs = {}, {}
            for row, t, d in updates:
                if row and row[0] == ERR:
                    errs.setdefault((), []).append((("22012", "division by zero"), t, d))
                else:
                    oks.setdefault(exp.oks.key_fn(row), []).append((row, t, d))
            exp.oks.insert(Batch(lower, upper, oks))
            exp.errs.insert(Batch(lower, upper, errs))
            exp.oks.maintain()
            exp.errs.maintain()
        for s in self.desc.sink_exports:
            if s.kind == "materialized_view":
                self.sinks[s.id].append_timed(updates, upper)
            elif s.kind == "subscribe":
                self._subs[s.id].append(SubscribeBatch(lower, upper, tuple(updates)))

    def step(self, fuel=1000):
        if self.broken:
            raise RuntimeError("stand-in dataflow broke")
        self.steps += 1
        if self._frontier is None:
            return False
        as_of = self.desc.as_of
        target = frontier_min(self.input.upper, self.desc.until)
        if not self._hydrated:
            if self.input.upper is not None and self.input.upper <= as_of:
                return False
            ups = [(row, as_of, c) for row, c in self.input.snapshot(as_of).items()]
            self._hydrated = True
            new = try_step_forward(as_of)
            self._frontier = new
            self._emit(as_of, new, ups)
            return True
        if target is not None and target <= self._frontier:
            return False
        lower = self._frontier
        rest = self.input.updates_between(lower, target)
        ups, new_frontier = [], target
        for i, up in enumerate(rest):
            if len(ups) >= max(fuel, 1) and up[1] != rest[i - 1][1]:
                new_frontier = up[1]
                break
            ups.append(up)
        self._frontier = new_frontier
        self._emit(lower, new_frontier, ups)
        return True

    def drain_subscribe(self, id):
        out, self._subs[id] = self._subs[id], []
        return out


# ---------------------------------------------------------------- description helpers

def u(n):
    return GlobalId("u", n)


def t(n):
    return GlobalId("t", n)


def coll_of(id):
    """The collection an index ``id`` is built on (a distinct id, as the planner makes)."""
    return GlobalId(id.kind, 1000 + id.n)


def index_desc(src, idx, as_of=0, until=None, key=(0,), arity=2, from_index=False, name=""):
    """A dataflow reading source/index ``src`` and exporting index ``idx`` on a build of it.
    Valid for both the stand-in and the real ``compute.render.dataflow.Dataflow``."""
    imports = dict(source_imports=(), index_imports=())
    if from_index:
        imports["index_imports"] = (IndexImport(src, coll_of(src), tuple(Column(k) for k in key), arity),)
        read = coll_of(src)
    else:
        imports["source_imports"] = (SourceImport(src, arity),)
        read = src
    build = BuildDesc(coll_of(idx), Get(read, arity))
    return DataflowDescription(**imports, objects_to_build=(build,),
                               index_exports=(IndexExport(idx, coll_of(idx), tuple(Column(k) for k in key), arity),),
                               sink_exports=(), as_of=as_of, until=until, debug_name=name or str(idx))


def peek_dataflow(index_id, export_id, as_of, arity=2, key=(0,)):
    return index_desc(index_id, export_id, as_of=as_of, until=try_step_forward(as_of), key=key,
                      arity=arity, from_index=True, name=f"peek-{export_id}")


def sink_desc(src, sink_id, kind, as_of=0, until=None, arity=2):
    return DataflowDescription(source_imports=(SourceImport(src, arity),), index_imports=(),
                               objects_to_build=(), index_exports=(),
                               sink_exports=(SinkExport(sink_id, src, kind, arity),),
                               as_of=as_of, until=until, debug_name=f"{kind}-{sink_id}")


def table(id, rows=(), time=0, upper=1):
    c = StorageCollection(id, 2, since=0, upper=0)
    if rows or upper:
        c.append([(r, 1) for r in rows], time, upper)
    return c


# ---------------------------------------------------------------- sanity of the stand-ins

def test_standin_spine_compacts_and_refuses_below_since():
    s = StandinSpine(lambda r: (r[0],), 2)
    s.insert(Batch(0, 2, {(1,): [((1, "a"), 0, 1)]}))
    s.insert(Batch(2, 4, {(1,): [((1, "a"), 3, -1)]}))
    assert s.snapshot(2) == {(1, "a"): 1}
    s.set_logical_compaction(3)
    s.set_physical_compaction(3)
    s.maintain()
    assert s.snapshot(3) == {}
    try:
        s.snapshot(2)
    except AssertionError:
        pass
    else:
        raise AssertionError("read below since must be refused")


def test_standin_dataflow_passes_input_through_time_by_time():
    src = table(u(1), [(1, "a"), (2, "b")], 0, 1)
    df = StandinDataflow(index_desc(u(1), u(2)), sources={u(1): src}, indexes={}, sinks={})
    assert df.step()
    assert df.exports[u(2)].oks.snapshot(0) == {(1, "a"): 1, (2, "b"): 1}
    src.append([((3, "c"), 1)], 1, 2)
    src.append([((1, "a"), -1)], 2, 3)
    assert df.step(fuel=1) and df.frontier() == 2
    assert df.exports[u(2)].oks.snapshot(1) == {(1, "a"): 1, (2, "b"): 1, (3, "c"): 1}
    assert df.step(fuel=1) and df.frontier() == 3
    assert df.exports[u(2)].oks.snapshot(2) == {(2, "b"): 1, (3, "c"): 1}
    assert not df.step()
