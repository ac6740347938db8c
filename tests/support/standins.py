"""A stand-in for ``compute.render.dataflow.Dataflow`` and description helpers, written to
the contract in docs/INTERFACES.md, so the replica's tests do not depend on the operators.

``StandinDataflow`` passes its single input (a storage collection or an imported index)
through to its index exports (real ``compute.arrangement.spine.Spine``s, so imports and
peeks read them through the one read path, ``compute.arrangement.read.ReadHandle``) and
sinks, time by time, with fuel.  A row whose first column is ``ERR`` becomes a data error
(22012).  The helpers build descriptions valid for the stand-in and the real dataflow.
"""
from __future__ import annotations

from dataclasses import dataclass

from compute.arrangement.spine import Spine
from compute.dataflow import (BuildDesc, DataflowDescription, IndexExport, IndexImport, SinkExport,
                              SourceImport)
from compute.protocol import SubscribeBatch
from expr.relation import Get
from expr.scalar import Column
from repr.ids import GlobalId
from repr.timestamp import frontier_min, try_step_forward
from storage.persist import StorageCollection

ERR = "ERR"  # a row whose first column is ERR becomes a data error (22012)


@dataclass
class Exported:
    oks: Spine
    errs: Spine


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
            self.exports[e.id] = Exported(Spine(kf, e.arity, since=desc.as_of, upper=desc.as_of),
                                          Spine(lambda row: (), 2, since=desc.as_of, upper=desc.as_of))
        self._frontier = desc.as_of
        self._hydrated = False
        self._subs = {s.id: [] for s in desc.sink_exports if s.kind == "subscribe"}
        self.steps = 0
        self.broken = False
        StandinDataflow.instances.append(self)

    def frontier(self):
        return self._frontier

    def _emit(self, lower, upper, updates):
        oks = [u for u in updates if not (u[0] and u[0][0] == ERR)]
        errs = [(("22012", "division by zero"), t, d) for row, t, d in updates if row and row[0] == ERR]
        for exp in self.exports.values():
            exp.oks.insert_updates(oks, upper)
            exp.errs.insert_updates(errs, upper)
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
