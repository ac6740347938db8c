"""Rendering a DataflowDescription into a running dataflow, and running it in fuel-bounded steps.

Owns ``Dataflow`` (and ``ExportedIndex``): the operator graph for a description (imports,
``objects_to_build`` in order, ``index_exports`` as ``Spine``s, ``sink_exports``), and
the scheduler that drives it.

Execution model (DBSP-style over totally ordered time): the dataflow processes its
inputs one timestamp at a time, in order.  All updates at time ``t`` (from every input,
plus future updates scheduled at ``t`` by temporal filters) flow through the graph as
chunks of ``(row, diff)`` messages; linear operators emit from ``push``; non-linear
ones are flushed in topological order once nothing upstream of them has work left for
``t``; then the exports receive one batch for ``t`` and the next time starts.

Invariants protected here:

* **No export's upper passes a time whose updates are not all applied**, and never
  passes ``desc.until``: export uppers advance only in ``_finish_time`` (to ``t + 1``)
  and in ``_advance`` (to the inputs' frontier, read *before* their data).
* **Fuel**: ``step(fuel)`` does about ``fuel`` records of work (messages are split into
  ``CHUNK``-sized pieces; one flush or one merge is not split), so hydrating a large
  input never blocks the runtime for long in one step.  A one-shot read's input that feeds
  only maps/filters/projections is a scan (``_plan_scan``): its snapshot goes through the
  compiled MFP in units of up to ``SCAN_UNIT`` rows (fewer the more calls the MFP makes),
  read straight off the stored dict, with no message or step per ``CHUNK``.
* **Hydration** reads each input's snapshot at ``as_of`` (times advanced to ``as_of``;
  a storage collection's stored dict itself when it already is that snapshot, read only);
  imports whose since has passed ``as_of`` are refused loudly at construction.  A peek
  dataflow's index export is a ``OneShotSpine`` (its one time's rows stay the collector's
  dict for the peek, no batch built).
* **Fusion changes no result**: a join whose only consumer is a count/sum reduce updates
  the reduce's groups from its lookup loops (``JoinOp.fuse_reduce``) rather than sending it
  rows; the reduce is then marked for flushing after each such push, as a message to it
  would mark it, so it flushes at the same point of the time.
* **Errors** flow beside the oks: every operator's data errors, and every imported error
  collection, are forwarded unchanged along the graph's edges to every export and sink
  downstream (each export has an errs spine keyed by ``()``); they never stop the
  dataflow.

Imports needing a read hold: an index import's since must stay at or below
``read_frontier()`` (the last processed time).  A live ``Spine`` import is held there by
a ``SpineHold`` (released by ``close()`` or garbage collection); reading an import
compacted past it anyway is refused loudly (``ComputeProtocolError``) rather than
double-counting updates that compaction moved.

Deliberately not here: which runtime hosts the dataflow, publishing exports to the
registry, frontier reports (``compute.replica.core``), and operator semantics
(``compute.render.operator``).  This module is somewhat over the usual size because the graph
builder and the scheduler share all of their state; they are split by section.

Over 600 lines: the render of every MIR node shares the dataflow's one state (nodes,
fuel, frontiers, error streams); the operators themselves live in ``compute/render/``.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
import heapq
from itertools import islice
from time import perf_counter as _perf_counter
from typing import Any, Mapping, Optional
import weakref

from compute.arrangement.oneshot import OneShotSpine
from compute.arrangement.spine import Spine
from compute.dataflow import DataflowDescription
from compute.errors import ComputeProtocolError
from compute.protocol import SubscribeBatch
from compute.render.constant import ConstantInput
from compute.render.flat_map import FlatMapOp
from compute.render.join import JoinOp
from compute.render.join_oneshot import OneShotJoinOp
from compute.render.letrec import LetRecOp, free_ids
from compute.render.mfp import MfpOp
from compute.render.operator import Operator, consolidate_pairs, key_function
from compute.render.reduce import DistinctOp, ReduceOp
from compute.render.reduce_oneshot import one_shot_reduce
from expr.aggregate import Count, new_state
from compute.render.threshold import NegateOp, ThresholdOp, UnionOp
from compute.render.topk import TopKOp
from expr.mfp import MapFilterProject
from expr.relation import (ArrangeBy, Constant, Filter, FlatMap, Get, Join, Let, LetRec, LocalId, Map, Negate,
                           Project, Reduce, Threshold, TopK, Union)
from expr.scalar import Column, permute
from repr.errors import EvalError
from repr.ids import GlobalId
from repr.timestamp import Frontier, frontier_le, frontier_min, try_step_forward

__all__ = ["Dataflow", "ExportedIndex", "CHUNK", "DEFAULT_FUEL"]

#: records per message: the granularity of fuel accounting, and so the longest stretch a
#: dataflow works without a chance to yield (a 1,024-row chunk through a join and a reduce
#: is a few milliseconds; larger chunks made single steps, and a read's tail, several times longer)
CHUNK = 1024
DEFAULT_FUEL = 100_000
#: the rows of a one-shot scan unit (``Dataflow._plan_scan``) through an MFP with no calls;
#: each call in the MFP divides it (down to ``CHUNK``), so a unit stays a few milliseconds
SCAN_UNIT = 32_768
#: a maintained join's push is bounded by its input, not its output: a chunk of rows that
#: each match many (a hydrating join's fan-out) is pushed in slices of about this many
#: seconds, by the join node's observed cost per row, and charged fuel for its time
#: (``JOIN_FUEL_PER_S``: a fuel unit is about a microsecond of work, a row through a cheap
#: operator), so a hydrating join yields to its neighbours within milliseconds
JOIN_SLICE_S = 0.002
JOIN_FUEL_PER_S = 1_000_000


@dataclass
class ExportedIndex:
    id: GlobalId
    on_id: GlobalId
    key: tuple
    oks: Spine
    errs: Spine


# ------------------------------------------------------------------ graph nodes


class _Node:
    __slots__ = ("index", "op", "consumers", "input", "name", "fused_into", "count_into", "scan",
                 "cost")

    def __init__(self, index: int, op: Optional[Operator], name: str, input=None):
        self.index = index
        self.op = op
        #: (node or collector, port)
        self.consumers: list = []
        #: the reduce node this join updates from its own loops (``JoinOp.fuse_reduce``):
        #: marked for flushing after each push here, as a message to it would mark it
        self.fused_into: Optional["_Node"] = None
        #: the input adapter when this node is a source of data
        self.input = input
        self.name = name
        #: the global count(*) reduce node this input feeds through a pure projection: its
        #: updates go into the group as one sum of diffs (``Dataflow._count_into``)
        self.count_into: Optional["_Node"] = None
        #: ``(mfp nodes, unit)`` when this input of a one-shot read feeds only maps/filters/
        #: projections: its chunks go through them from the input (``Dataflow._plan_scan``)
        self.scan: Optional[tuple] = None
        #: a join's last observed seconds per pushed row, by port (``JOIN_SLICE_S``)
        self.cost: Optional[dict] = None


class _Collector:
    """Accumulates the oks/errs of the time being processed for one export or sink."""

    def __init__(self, kind: str, id: GlobalId):
        self.kind = kind
        self.id = id
        self.oks: dict = {}
        self.errs: dict = {}
        #: the time's updates taken whole (``add_whole``), not yet merged into ``oks``
        self.whole = None

    def add_whole(self, pairs) -> None:
        """Take ``pairs`` (a sequence nobody changes later: a storage log entry) as they are
        when nothing else was collected at this time: an index straight on a table then
        builds its batch from the write's own pairs, with no dict of every row changed in
        between (a batch tolerates a row listed twice: reads sum its entries)."""
        if self.whole is None and not self.oks:
            self.whole = pairs
        else:
            self.add(pairs)

    def _unwhole(self) -> None:
        whole, self.whole = self.whole, None
        self.add(whole)

    def add(self, pairs, errs: bool = False) -> None:
        if not errs and self.whole is not None:
            self._unwhole()
        acc = self.errs if errs else self.oks
        if len(pairs) > 64:
            # distinct rows not yet collected (a snapshot's chunk): one C-level merge
            new = dict(pairs)
            if len(new) == len(pairs) and acc.keys().isdisjoint(new):  # iterates ``new``
                acc.update(new)
                return
        get = acc.get
        for row, d in pairs:
            acc[row] = get(row, 0) + d

    def add_mapping(self, counts: dict) -> None:
        """Add a whole ``row -> count`` dict (not kept: its entries are copied)."""
        if self.whole is not None:
            self._unwhole()
        if not self.oks:
            self.oks.update(counts)
        else:
            self.add(counts.items())

    def take_items(self, mapping: bool = False):
        """Like ``take``, but the oks as the accumulating dict's items (zero counts
        included): an index export builds its batch straight off them, without a list of a
        million pairs in between (``mapping``: the dict itself, handed over to a
        ``OneShotSpine``).  Pairs taken whole (``add_whole``) are returned as they are."""
        oks = (self.oks if mapping else self.oks.items()) if self.whole is None else self.whole
        self.whole = None
        errs = [(r, d) for r, d in self.errs.items() if d]
        self.oks = {}
        self.errs = {}
        return oks, errs

    def take(self):
        if self.whole is not None:
            self._unwhole()
        oks = [(r, d) for r, d in self.oks.items() if d]
        errs = [(r, d) for r, d in self.errs.items() if d]
        self.oks = {}
        self.errs = {}
        return oks, errs


class _Chunks:
    """``size``-sized (``CHUNK``) lists cut lazily off a sized iterable of ``(row, diff)`` pairs."""

    __slots__ = ("_it", "left", "size")

    def __init__(self, pairs, size: Optional[int] = None):
        self._it = iter(pairs)
        #: pairs not yet cut off
        self.left = len(pairs)
        self.size = CHUNK if size is None else size

    def next_chunk(self) -> list:
        chunk = list(islice(self._it, self.size))
        self.left = self.left - len(chunk) if chunk else 0
        return chunk

    def next_slice(self) -> tuple:
        """``(iterator over the next up to size pairs, how many)``: a unit read once, with no
        list of its pairs built (a dict's items then pass through one pair tuple at a time,
        none kept alive for the collector to walk)."""
        n = min(self.size, self.left)
        self.left -= n
        return islice(self._it, n), n


class _SourceInput:
    """A storage collection (table or materialized view output)."""

    def __init__(self, coll):
        self.coll = coll

    @property
    def upper(self) -> Frontier:
        return self.coll.upper

    @property
    def since(self) -> Frontier:
        return self.coll.since

    def hydrate(self, as_of: int, oks: bool = True):
        """The snapshot at ``as_of`` as a ``row -> count`` dict (``Dataflow._queue_input``
        takes a dict whole where it can), and the error rows."""
        errs = self.coll.error_snapshot(as_of) if hasattr(self.coll, "error_snapshot") else {}
        if not oks:
            return [], list(errs.items())
        # read-only use below (chunks of its items, a collector's copy, a sum of its counts):
        # the stored base itself when nothing above it is due, not a copy
        view = getattr(self.coll, "snapshot_view", None)
        return (view(as_of) if view is not None else self.coll.snapshot(as_of)), list(errs.items())

    def read(self, lower: int, upper: Frontier):
        out = [(t, ups, ()) for t, ups in self.coll.batches_between(lower, upper)]
        if hasattr(self.coll, "error_batches_between"):
            errs = self.coll.error_batches_between(lower, upper)
            if errs:
                by_time = {t: (ups, []) for t, ups, _ in out}
                for t, eups in errs:
                    by_time.setdefault(t, ([], []))[1].extend(eups)
                out = [(t, ups, e) for t, (ups, e) in sorted(by_time.items())]
        return out


class _IndexInput:
    """An imported index (``ImportedIndex``: live spines or frozen snapshots)."""

    def __init__(self, imported):
        self.imported = imported
        self.oks = imported.oks
        self.errs = imported.errs

    @property
    def upper(self) -> Frontier:
        return frontier_min(self.oks.upper, self.errs.upper)

    @property
    def since(self) -> Frontier:
        a, b = self.oks.since, self.errs.since
        if a is None or b is None:
            return None
        return max(a, b)

    def hydrate(self, as_of: int, oks: bool = True):
        """Snapshots at ``as_of``; ``oks=False`` when every consumer reads the arrangement
        in place (a join reusing it), so the rows are not materialized at all."""
        pairs = getattr(self.oks, "snapshot_pairs", None)
        if not oks:
            rows = []
        elif pairs is not None:
            rows = pairs(as_of)
        else:
            rows = self.oks.snapshot(as_of).items()
        return rows, list(self.errs.snapshot(as_of).items())

    def read(self, lower: int, upper: Frontier):
        since = self.since
        if since is None or since >= lower:
            # merging advanced times below since to since: updates already read could come
            # back at since and be counted twice.  The importer must hold since <= lower - 1.
            raise ComputeProtocolError(
                f"imported index compacted to {since}, past the importing dataflow's read "
                f"frontier {lower - 1}")
        grouped = getattr(self.oks, "updates_by_time", None)
        if grouped is not None:
            by_time = {t: (oks, []) for t, oks in grouped(lower, upper)}
        else:
            by_time = {}
            for row, t, d in self.oks.updates_between(lower, upper):
                by_time.setdefault(t, ([], []))[0].append((row, d))
        for row, t, d in self.errs.updates_between(lower, upper):
            by_time.setdefault(t, ([], []))[1].append((row, d))
        return [(t, oks, errs) for t, (oks, errs) in sorted(by_time.items())]


def _release_holds(holds: list) -> None:
    for h in holds:
        h.release()
    holds.clear()


def _options(options) -> dict:
    out = {}
    for item in options or ():
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            out[item[0]] = item[1]
        elif isinstance(item, str):
            out[item] = True
    return out


# ------------------------------------------------------------------ the dataflow


class Dataflow:
    def __init__(self, desc: DataflowDescription, *, sources: Mapping[GlobalId, Any] = None,
                 indexes: Mapping[GlobalId, Any] = None, sinks: Mapping[GlobalId, Any] = None,
                 writes_allowed: bool = True):
        if desc.as_of is None:
            raise ComputeProtocolError(f"dataflow {desc.debug_name!r} has no as_of")
        self.desc = desc
        self.as_of: int = desc.as_of
        self.until: Frontier = desc.until
        sources = dict(sources or {})
        indexes = dict(indexes or {})
        self._sinks_storage = dict(sinks or {})
        self._nodes: list[_Node] = []
        self._inputs: list[_Node] = []
        # name -> node: builds, imports (by collection id and by index id)
        self._env: dict = {}
        # collection id -> [(key_exprs, imported handle)] for join reuse
        self._arranged: dict = {}
        # holds on live imported spines, downgraded to read_frontier(); released by
        # close() or, failing that, when the dataflow is garbage collected
        self._holds: list = []
        weakref.finalize(self, _release_holds, self._holds)
        for imp in desc.source_imports:
            coll = sources.get(imp.id)
            if coll is None:
                raise ComputeProtocolError(f"dataflow {desc.debug_name!r}: no storage for {imp.id}")
            self._check_since(imp.id, coll.since)
            self._env[imp.id] = self._add_input(_SourceInput(coll), f"source {imp.id}")
        for imp in desc.index_imports:
            handle = indexes.get(imp.id)
            if handle is None:
                raise ComputeProtocolError(f"dataflow {desc.debug_name!r}: no arrangement for {imp.id}")
            inp = _IndexInput(handle)
            self._check_since(imp.id, inp.since)
            for spine in (handle.oks, handle.errs):
                if hasattr(spine, "acquire_hold"):  # a live spine: hold it at our read frontier
                    self._holds.append(spine.acquire_hold(self.as_of))
            node = self._add_input(inp, f"index {imp.id}")
            self._env[imp.id] = node
            self._env.setdefault(imp.on_id, node)
            self._arranged.setdefault(imp.on_id, []).append((tuple(imp.key), handle.oks))
            self._arranged.setdefault(imp.id, []).append((tuple(imp.key), handle.oks))
        for build in desc.objects_to_build:
            self._env[build.id] = self._render(build.plan, {})
        # exports
        self.exports: dict[GlobalId, ExportedIndex] = {}
        self._collectors: list[tuple[_Collector, Any]] = []
        for exp in desc.index_exports:
            node = self._lookup(exp.on_id)
            # a peek dataflow's index is read once, by its peek: its rows stay the collector's
            # dict (``OneShotSpine``) unless its key may fail on a row
            one_shot = desc.is_peek_dataflow() and all(e.__class__ is Column for e in exp.key)
            oks = (OneShotSpine if one_shot else Spine)(
                key_function(exp.key), exp.arity, since=self.as_of, upper=self.as_of, key_exprs=tuple(exp.key))
            errs = Spine(lambda row: (), 2, since=self.as_of, upper=self.as_of, key_exprs=())
            self.exports[exp.id] = ExportedIndex(exp.id, exp.on_id, tuple(exp.key), oks, errs)
            col = _Collector("index", exp.id)
            node.consumers.append((col, 0))
            self._collectors.append((col, self.exports[exp.id]))
        self._subscribe: dict[GlobalId, dict] = {}
        self._mv: dict[GlobalId, dict] = {}
        for sink in desc.sink_exports:
            node = self._lookup(sink.from_id)
            col = _Collector(sink.kind, sink.id)
            node.consumers.append((col, 0))
            if sink.kind == "materialized_view":
                storage = self._sinks_storage.get(sink.id)
                if storage is None:
                    raise ComputeProtocolError(f"no storage collection for materialized view {sink.id}")
                st = {"storage": storage, "pending": [], "pending_errs": [], "allowed": writes_allowed}
                self._mv[sink.id] = st
                self._collectors.append((col, st))
            else:  # subscribe, copy_to: buffered for the runtime to drain
                opts = _options(sink.options)
                st = {"updates": [], "batches": [], "lower": self.as_of,
                      "with_snapshot": opts.get("with_snapshot", True), "error": None, "done": False}
                self._subscribe[sink.id] = st
                self._collectors.append((col, st))
        for node in self._nodes:
            # a join whose only consumer is a count/sum reduce feeds it from its lookup loops
            if isinstance(node.op, JoinOp) and len(node.consumers) == 1:
                c, port = node.consumers[0]
                if c.__class__ is _Node and c.op.__class__ is ReduceOp and node.op.fuse_reduce(c.op):
                    node.fused_into = c
            if node.op.__class__ is FlatMapOp and len(node.consumers) == 1:
                # generate_series into a count/sum reduce (through a pure projection): batches
                c, port = node.consumers[0]
                project = None
                if (c.__class__ is _Node and c.op.__class__ is MfpOp and c.op.project is not None
                        and not c.op.temporal and len(c.consumers) == 1):
                    project = c.op.mfp.output_projection()
                    c = c.consumers[0][0]
                if c.__class__ is _Node and c.op.__class__ is ReduceOp and node.op.fuse_reduce(c.op, project):
                    node.fused_into = c
        for node in self._inputs:
            self._plan_count_into(node)
        if desc.is_single_time():
            # reduces first: they may bypass a projection, which changes the inputs' consumers
            self._plan_one_shot_reduces()
            for node in self._inputs:
                self._plan_scan(node)
        self._flushable = [n for n in self._nodes if n.op is not None and n.op.needs_flush]
        self._future_ops = [n for n in self._nodes if isinstance(n.op, MfpOp) and n.op.temporal]
        # scheduler state
        self._frontier: Frontier = self.as_of
        self._hydrated = False
        self._read_lower: Frontier = self.as_of
        self._pending: dict = {}     # time -> [(input node, oks, errs)]
        self._future: dict = {}      # time -> [(node, oks)]
        self._cur: Optional[int] = None
        self._cur_inputs: deque = deque()
        self._msgs: deque = deque()
        self._dirty: list = []
        self._dirty_set: set = set()
        self._done = False

    # -------------------------------------------------------------- building
    def _plan_count_into(self, node: _Node) -> None:
        """An input whose only consumer is a pure projection whose only consumer is a
        global reduce of ``count(*)``-like aggregates (counts of non-NULL literals): its
        updates need no rows at all, only their diffs' sum (``count(*) FROM t``)."""
        if len(node.consumers) != 1:
            return
        mfp, _port = node.consumers[0]
        if not (mfp.__class__ is _Node and mfp.op.__class__ is MfpOp and mfp.op.project is not None
                and not mfp.op.temporal and len(mfp.consumers) == 1):
            return
        red = mfp.consumers[0][0]
        if red.__class__ is not _Node or red.op.__class__ is not ReduceOp:
            return
        spec = red.op.batch_spec
        if spec is None or spec[0]:
            return
        if not red.op.aggs or any(type(a) is not Count or p not in ("True", "1")
                                  for a, p in zip(red.op.aggs, spec[1])):
            return
        node.count_into = red

    def _plan_scan(self, node: _Node) -> None:
        """A one-shot read's input whose every consumer is a non-temporal map/filter/project
        (a scan, a point filter, a projection over a table): its snapshot is cut into units of
        up to ``SCAN_UNIT`` rows, each pushed through the compiled MFPs as it is cut, with no
        message or scheduler step per ``CHUNK`` in between.  The result is the same (an MFP is
        linear); only the unit of work grows, bounded by the MFP's calls."""
        if node.count_into is not None or not node.consumers:
            return
        mfps = [c for c, _port in node.consumers]
        if not all(c.__class__ is _Node and c.op.__class__ is MfpOp and not c.op.temporal for c in mfps):
            return
        calls = sum(c.op.calls() for c in mfps)
        node.scan = (mfps, max(CHUNK, SCAN_UNIT // (1 + calls)))

    def _plan_one_shot_reduces(self) -> None:
        """A single-time dataflow's reduces that nothing feeds directly fold their input in
        one pass (``compute.render.reduce_oneshot``), reading through a pure projection in
        front of them (whose node is then left out of the graph)."""
        fed = {n.fused_into.index for n in self._nodes if n.fused_into is not None}
        fed |= {n.count_into.index for n in self._nodes if n.count_into is not None}
        feeders = lambda dst: [n for n in self._nodes if any(c is dst for c, _p in n.consumers)]  # noqa: E731
        for node in self._nodes:
            if node.op.__class__ is not ReduceOp or node.index in fed:
                continue
            srcs = feeders(node)
            if len(srcs) != 1:
                continue
            src, up, project = srcs[0], None, None
            if (src.op.__class__ is MfpOp and src.op.project is not None and not src.op.temporal
                    and len(src.consumers) == 1):
                up = feeders(src)
                if len(up) == 1 and up[0].fused_into is None and up[0].count_into is None:
                    project = src.op.mfp.output_projection()
            op = one_shot_reduce(node.op, project)
            if op is None:
                continue
            if project is not None:
                up[0].consumers = [(node, 0) if c is src else (c, p) for c, p in up[0].consumers]
                src.consumers = []
            node.op = op

    def _count_into(self, node: _Node, oks) -> None:
        """``oks`` into ``node.count_into``'s one group: its count and every count(*)."""
        total = sum(oks.values()) if oks.__class__ is dict else sum(d for _r, d in oks)
        if not total:
            return
        red = node.count_into
        op = red.op
        G = op.groups.get(())
        if G is None:
            G = op.groups[()] = new_state(op.aggs)
        G[0] += total
        for a in op.aggs:
            G[a.off] += total
        op.touched.add(())
        self._mark_dirty(red.index)

    def _check_since(self, id, since) -> None:
        if since is None or since > self.as_of:
            raise ComputeProtocolError(
                f"dataflow {self.desc.debug_name!r}: import {id} has since {since} past as_of {self.as_of}")

    def _add_node(self, op: Optional[Operator], name: str, input=None) -> _Node:
        node = _Node(len(self._nodes), op, name, input)
        self._nodes.append(node)
        return node

    def _add_input(self, inp, name: str) -> _Node:
        node = self._add_node(None, name, inp)
        self._inputs.append(node)
        return node

    def _lookup(self, id) -> _Node:
        node = self._env.get(id)
        if node is None:
            raise ComputeProtocolError(f"dataflow {self.desc.debug_name!r}: unknown collection {id}")
        return node

    def _connect(self, src: _Node, dst: _Node, port: int = 0) -> None:
        src.consumers.append((dst, port))

    def _op(self, op: Operator, name: str, inputs: list) -> _Node:
        node = self._add_node(op, name)
        for port, src in enumerate(inputs):
            self._connect(src, node, port)
        return node

    def _render(self, expr, env: dict) -> _Node:
        if isinstance(expr, Get):
            if isinstance(expr.id, LocalId):
                return env[expr.id]
            return self._lookup(expr.id)
        if isinstance(expr, Let):
            value = self._render(expr.value, env)
            return self._render(expr.body, {**env, expr.id: value})
        if isinstance(expr, (Map, Filter, Project)):
            return self._render_mfp(expr, env)
        if isinstance(expr, ArrangeBy):
            return self._render(expr.input, env)
        if isinstance(expr, Constant):
            return self._add_input(ConstantInput(expr), "constant")
        if isinstance(expr, Join):
            return self._render_join(expr, env, None)
        if isinstance(expr, Reduce):
            src = self._render(expr.input, env)
            if not expr.aggregates and not expr.global_default:  # a global default row needs ReduceOp
                return self._op(DistinctOp(expr.group_key), "distinct", [src])
            return self._op(ReduceOp(expr.group_key, expr.aggregates, expr.global_default), "reduce", [src])
        if isinstance(expr, TopK):
            src = self._render(expr.input, env)
            return self._op(TopKOp(expr.group_key, expr.order_key, expr.limit, expr.offset), "topk", [src])
        if isinstance(expr, Negate):
            return self._op(NegateOp(), "negate", [self._render(expr.input, env)])
        if isinstance(expr, Threshold):
            return self._op(ThresholdOp(), "threshold", [self._render(expr.input, env)])
        if isinstance(expr, Union):
            inputs = [self._render(i, env) for i in expr.inputs]
            return self._op(UnionOp(len(inputs)), "union", inputs)
        if isinstance(expr, FlatMap):
            src = self._render(expr.input, env)
            return self._op(FlatMapOp(expr.func, expr.exprs, expr.input.arity()),
                            f"flat_map {expr.func}", [src])
        if isinstance(expr, LetRec):  # re-derived per changed time (compute.render.letrec)
            frees = free_ids(expr)
            srcs = [env[i] if isinstance(i, LocalId) else self._lookup(i) for i, _ in frees]
            return self._op(LetRecOp(expr, frees), "letrec", srcs)
        raise ComputeProtocolError(f"render: unsupported plan node {type(expr).__name__}")

    def _render_join(self, expr: Join, env: dict, project) -> _Node:
        inputs = [self._render(i, env) for i in expr.inputs]
        arranged = {}
        for k, i in enumerate(expr.inputs):
            while isinstance(i, ArrangeBy):
                i = i.input
            if isinstance(i, Get) and not isinstance(i.id, LocalId) and i.id in self._arranged:
                arranged[k] = self._arranged[i.id]
        if not arranged and self.desc.is_single_time():
            # read at one time only (a peek): one linear path, planned when the data is in
            op = OneShotJoinOp([i.arity() for i in expr.inputs], expr.equivalences,
                               as_of=self.as_of, project=project)
        else:
            op = JoinOp([i.arity() for i in expr.inputs], expr.equivalences, arranged=arranged,
                        as_of=self.as_of, project=project)
        return self._op(op, "join" if project is None else "join+project", inputs)

    def _render_mfp(self, expr, env: dict) -> _Node:
        layers = []
        while isinstance(expr, (Map, Filter, Project)):
            layers.append(expr)
            expr = expr.input
        arity = expr.arity()
        exprs: list = []
        preds: list = []
        proj = list(range(arity))
        for layer in reversed(layers):
            if isinstance(layer, Map):
                for s in layer.scalars:
                    e = permute(s, dict(enumerate(proj)))
                    exprs.append(e)
                    proj.append(arity + len(exprs) - 1)
            elif isinstance(layer, Filter):
                preds.extend(permute(p, dict(enumerate(proj))) for p in layer.predicates)
            else:
                proj = [proj[i] for i in layer.outputs]
        mfp = MapFilterProject(arity, tuple(exprs), tuple(preds), tuple(proj))
        if isinstance(expr, Join) and not exprs and not preds:
            # a projection fused into the join: output rows are built already projected
            return self._render_join(expr, env, tuple(proj))
        base = self._render(expr, env)
        if mfp.is_identity():
            return base
        return self._op(MfpOp(mfp), "mfp", [base])

    # -------------------------------------------------------------- running
    def frontier(self) -> Frontier:
        """The upper of every output: all times below it are applied."""
        return self._frontier

    def read_frontier(self) -> Frontier:
        """The hold this dataflow needs on its index imports: their since must stay at or
        below it.  ``as_of`` until hydrated, then the last processed time (the frontier
        minus one): the next read asks for updates from the frontier on, and a since at the
        frontier would have advanced already-read updates into that range."""
        if not self._hydrated:
            return self.as_of
        if self._frontier is None:
            return None
        return max(self.as_of, self._frontier - 1)

    def input_frontier(self) -> Frontier:
        """The meet of the inputs' uppers (constants are sealed)."""
        f: Frontier = None
        for n in self._inputs:
            f = frontier_min(f, n.input.upper)
        return f

    def is_done(self) -> bool:
        """The frontier reached ``until`` (or the empty frontier): nothing more will happen."""
        return self._frontier is None or (self.until is not None and self._frontier >= self.until)

    def step(self, fuel: int = DEFAULT_FUEL) -> bool:
        did = False
        fuel = max(1, fuel)
        msgs = self._msgs
        while fuel > 0:
            if self._cur is None:
                if not self._start_next_time():
                    break
                did = True
                continue
            did = True
            t = self._cur
            if msgs:
                node, port, chunk = msgs.popleft()
                op = node.op
                if op.needs_flush:
                    self._mark_dirty(node.index)
                if op.__class__ is JoinOp:  # bounded by time: see JOIN_SLICE_S
                    costs = node.cost
                    if costs is None:
                        costs = node.cost = {}
                    cost = costs.get(port, 0.0)
                    if cost * len(chunk) > JOIN_SLICE_S and len(chunk) > 1:
                        n = max(1, int(JOIN_SLICE_S / cost))
                        msgs.appendleft((node, port, chunk[n:]))  # next, before anything else
                        chunk = chunk[:n]
                    t0 = _perf_counter()
                    oks, errs = op.push(port, chunk, t)
                    spent = _perf_counter() - t0
                    if chunk:
                        costs[port] = spent / len(chunk)
                    fuel -= int(spent * JOIN_FUEL_PER_S)
                else:
                    oks, errs = op.push(port, chunk, t)
                if node.fused_into is not None:
                    self._mark_dirty(node.fused_into.index)
                self._emit(node, oks, errs, t)
                if node.op.__class__ is MfpOp and node.op.future:
                    self._schedule_future(node)
                fuel -= len(chunk) + 1
            elif self._cur_inputs:
                node, oks, errs = self._cur_inputs[0]
                scan = node.scan
                if scan is not None and oks.__class__ is _Chunks:  # a one-shot scan unit
                    if oks.left <= scan[1]:
                        self._cur_inputs.popleft()
                    unit, n = oks.next_slice() if len(scan[0]) == 1 else (oks.next_chunk(), None)
                    for c in scan[0]:  # straight through its MFPs
                        o, e = c.op.push(0, unit, t)
                        self._emit(c, o, e, t)
                    fuel -= (len(unit) if n is None else n) + 1
                    continue
                if oks.__class__ is _Chunks:
                    oks = oks.next_chunk()
                    if self._cur_inputs[0][1].left <= 0:
                        self._cur_inputs.popleft()
                else:
                    self._cur_inputs.popleft()
                self._emit(node, oks, errs, t)
                fuel -= len(oks) + len(errs) + 1
            elif self._dirty:
                idx = heapq.heappop(self._dirty)
                self._dirty_set.discard(idx)
                node = self._nodes[idx]
                oks, errs = node.op.flush(t, max(fuel, CHUNK))
                if node.op.flush_pending():
                    self._mark_dirty(idx)
                self._emit(node, oks, errs, t)
                fuel -= len(oks) + len(errs) + 1
                fuel -= getattr(node.op, "last_flush_work", 0)  # LetRec iterations
            else:
                self._finish_time(t)
                fuel -= 1
        if fuel > 0 and self._cur is None:
            for exp in self.exports.values():
                if exp.oks.maintain(fuel):
                    did = True
                    break
        return did

    def run_to_completion(self, fuel: int = DEFAULT_FUEL) -> None:
        """Step until no work is left (tests and single-threaded callers)."""
        while self.step(fuel):
            pass

    def _start_next_time(self) -> bool:
        if self._done:
            return False
        upper = self.input_frontier()
        f_eff = frontier_min(upper, self.until)
        as_of = self.as_of
        if not self._hydrated:
            if f_eff is not None and f_eff <= as_of:
                return False
            self._hydrate(as_of)
            return True
        lower = self._read_lower
        if lower is not None and (f_eff is None or lower < f_eff):
            for node in self._inputs:
                if not node.consumers:
                    continue  # e.g. a second index on a collection, read only in place
                for t, oks, errs in node.input.read(lower, f_eff):
                    self._pending.setdefault(t, []).append((node, oks, errs))
            self._read_lower = f_eff
        times = [t for t in self._pending if f_eff is None or t < f_eff]
        times += [t for t in self._future if f_eff is None or t < f_eff]
        if times:
            t = min(times)
            self._cur = t
            for node, oks, errs in self._pending.pop(t, ()):
                for c, port in node.consumers:
                    if isinstance(c, _Node) and isinstance(c.op, JoinOp) and c.op.reuses(port):
                        c.op.begin_time(port, t, (oks,))
                self._queue_input(node, oks, errs)
            for node, oks in self._future.pop(t, ()):
                for i in range(0, len(oks), CHUNK):
                    self._cur_inputs.append((node, oks[i:i + CHUNK], ()))
            return True
        # drop anything at or past until: it is never produced
        if self.until is not None:
            for d in (self._pending, self._future):
                for t in [t for t in d if t >= self.until]:
                    del d[t]
        return self._advance(f_eff)

    def _hydrate(self, as_of: int) -> None:
        self._hydrated = True
        self._cur = as_of
        self._read_lower = try_step_forward(as_of)
        got = []
        for node in self._inputs:
            if not node.consumers:
                continue
            skip_oks = all(
                isinstance(c, _Node) and isinstance(c.op, JoinOp) and c.op.ignores_hydration(p)
                for c, p in node.consumers)
            oks, errs = node.input.hydrate(as_of, oks=not skip_oks)
            got.append((len(oks), node.index, node, oks, errs))
        # smallest inputs first: a join then builds the small side's arrangement before
        # the large side streams through it, so no single chunk fans out hugely
        for _n, _i, node, oks, errs in sorted(got, key=lambda g: (g[0], g[1])):
            self._queue_input(node, oks, errs)
        for node in self._flushable:
            self._mark_dirty(node.index)

    def _mark_dirty(self, index: int) -> None:
        """Queue node ``index`` for flushing in this time (once)."""
        if index not in self._dirty_set:
            self._dirty_set.add(index)
            heapq.heappush(self._dirty, index)

    def _queue_input(self, node: _Node, oks, errs) -> None:
        """Queue an input's updates for the time being processed, to be emitted a chunk at
        a time.  A large input (a hydration snapshot) is cut into chunks as they are
        emitted, so at most one chunk's pairs exist beside it."""
        if errs:
            self._cur_inputs.append((node, [], list(errs)))
        if node.count_into is not None:
            self._count_into(node, oks)
            return
        if oks and oks.__class__ is not dict and node.input.__class__ is _SourceInput and all(
                c.__class__ is _Collector and c.kind == "index" for c, _port in node.consumers):
            # a table's write straight into its indexes: each takes the log entry whole
            for c, _port in node.consumers:
                c.add_whole(oks)
            return
        if oks.__class__ is dict:
            if oks and all(c.__class__ is _Collector for c, _port in node.consumers):
                # straight into the collectors (an index on a table): one C-level merge
                # each instead of a chunk at a time (1M rows: 0.3 s -> 0.04 s)
                for c, _port in node.consumers:
                    c.add_mapping(oks)
                return
            oks = oks.items()
        n = len(oks)
        if node.scan is not None:
            if n:
                self._cur_inputs.append((node, _Chunks(oks, node.scan[1]), ()))
        elif n > CHUNK:
            self._cur_inputs.append((node, _Chunks(oks), ()))
        elif n:
            self._cur_inputs.append((node, oks if oks.__class__ is list else list(oks), ()))

    def _schedule_future(self, node: _Node) -> None:
        fut = node.op.future
        node.op.future = []
        for row, t, d in fut:
            if self.until is not None and t >= self.until:
                continue
            lst = self._future.setdefault(t, [])
            if lst and lst[-1][0] is node:
                lst[-1][1].append((row, d))
            else:
                lst.append((node, [(row, d)]))

    def _emit(self, node: _Node, oks, errs, t: int) -> None:
        if errs:
            self._forward_errs(node, errs)
        if not oks:
            return
        hydrating = t == self.as_of
        msgs = self._msgs
        for c, port in node.consumers:
            if isinstance(c, _Collector):
                c.add(oks)
            else:
                if hydrating and isinstance(c.op, JoinOp) and c.op.ignores_hydration(port):
                    continue
                if len(oks) <= CHUNK:
                    msgs.append((c, port, oks))
                else:
                    for i in range(0, len(oks), CHUNK):
                        msgs.append((c, port, oks[i:i + CHUNK]))

    def _forward_errs(self, node: _Node, errs) -> None:
        errs = list(errs)
        stack = [node]
        while stack:
            n = stack.pop()
            for c, _port in n.consumers:
                if isinstance(c, _Collector):
                    c.add(errs, errs=True)
                else:
                    stack.append(c)

    def _finish_time(self, t: int) -> None:
        nxt = try_step_forward(t)
        if self.until is not None and nxt is not None and nxt > self.until:
            nxt = self.until
        for col, target in self._collectors:
            oks, errs = col.take_items(target.oks.__class__ is OneShotSpine) if col.kind == "index" else col.take()
            self._deliver(col, target, t, nxt, oks, errs)
        self._cur = None
        self._frontier = nxt
        self._after_advance()

    def _deliver(self, col: _Collector, target, t: int, nxt: Frontier, oks, errs) -> None:
        if col.kind == "index":
            try:
                target.oks.insert_at(t, oks, nxt)
            except EvalError:
                # an index key expression failed on some rows: those rows become errors
                key_fn = target.oks.key_fn
                good = []
                errs = list(errs)
                for row, d in oks:
                    try:
                        key_fn(row)
                        good.append((row, d))
                    except EvalError as e:
                        errs.append(((e.sqlstate, e.message), d))
                target.oks.insert_at(t, good, nxt)
                errs = consolidate_pairs(errs)
            target.errs.insert_at(t, errs, nxt)
        elif col.kind == "materialized_view":
            target["pending"].extend((r, t, d) for r, d in oks)
            target["pending_errs"].extend((r, t, d) for r, d in errs)
        else:
            if t == self.as_of and not target["with_snapshot"]:
                return
            target["updates"].extend((r, t, d) for r, d in oks)
            if errs:
                pos = [r for r, d in errs if d > 0]
                if pos and target["error"] is None:  # the first error is reported
                    target["error"] = min(pos)

    def _advance(self, f_eff: Frontier) -> bool:
        """No pending time below ``f_eff``: advance every output to it."""
        if f_eff == self._frontier or not frontier_le(self._frontier, f_eff):
            if self._frontier is None or (self.until is not None and self._frontier >= self.until):
                self._done = True
            return False
        self._frontier = f_eff
        for exp in self.exports.values():
            exp.oks.advance_upper(f_eff)
            exp.errs.advance_upper(f_eff)
        self._after_advance()
        return True

    def close(self) -> None:
        """Release this dataflow's holds on its imports (call when dropping it)."""
        _release_holds(self._holds)
        self._done = True

    def _after_advance(self) -> None:
        f = self._frontier
        if self._holds:
            rf = self.read_frontier()
            for h in self._holds:
                h.downgrade(rf)
        for sid, st in self._mv.items():
            self._write_mv(st, f)
        for sid, st in self._subscribe.items():
            if st["done"]:
                continue
            final = f is None or (self.until is not None and f >= self.until)
            if f == st["lower"] and not st["updates"] and not final:
                continue
            ups = tuple(sorted(st["updates"], key=lambda u: u[1]))
            st["updates"] = []
            st["batches"].append(SubscribeBatch(st["lower"], None if final else f, ups, st["error"]))
            st["error"] = None
            st["lower"] = f if f is not None else st["lower"]
            if final:
                st["done"] = True

    def _write_mv(self, st: dict, f: Frontier) -> None:
        if not st["allowed"]:
            return
        storage = st["storage"]
        su = storage.upper
        if su is None:
            st["pending"] = []
            st["pending_errs"] = []
            return
        ups = [u for u in st["pending"] if u[1] >= su]
        errs = [u for u in st["pending_errs"] if u[1] >= su]
        st["pending"] = []
        st["pending_errs"] = []
        if f is not None and f <= su:
            return
        if errs:
            storage.append_timed(ups, f, errors=errs)
        else:
            storage.append_timed(ups, f)

    # -------------------------------------------------------------- runtime API
    def drain_subscribe(self, id: GlobalId) -> list:
        """The ``SubscribeBatch``es produced since the last drain, in order."""
        st = self._subscribe.get(id)
        if st is None:
            return []
        out = st["batches"]
        st["batches"] = []
        return out

    def allow_writes(self, id: GlobalId) -> None:
        """Let the materialized-view sink ``id`` write (buffered output is written now)."""
        st = self._mv.get(id)
        if st is not None and not st["allowed"]:
            st["allowed"] = True
            self._write_mv(st, self._frontier)

    def describe(self) -> list[str]:
        """One line per operator, for EXPLAIN-like introspection and debugging."""
        return [f"{n.index}: {n.name} -> {[getattr(c, 'name', getattr(c, 'kind', '?')) for c, _ in n.consumers]}"
                for n in self._nodes]
