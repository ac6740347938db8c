"""Lowering: optimized plans -> ``DataflowDescription``s.

Owns the shape of every dataflow the coordinator creates: peek dataflows, materialized
views, indexes and subscribes, and the choice of imports.  Every ``Get`` of a GlobalId
is served by (in order of preference) an existing index (``IndexImport``, reusing its
arrangement; for a Get that feeds a Join, an index keyed by that input's join columns
wins), a storage collection (``SourceImport``: a table or a materialized view's output),
or the inlined expression of a non-materialized view; a Map/Filter/Project chain over an
indexed join input is lifted above the join so the join reads the arrangement itself
(``lift_join_input_mfps``).  Invariants: a peek dataflow
exports only transient ids and reads one time (``as_of``, ``until = as_of + 1`` or, at
MAX, the empty frontier), so ``is_peek_dataflow()`` holds; a materialized view, an index
and a subscribe are never peek dataflows.  Deliberately not here: choosing ``as_of``
(the coordinator), allocating ids (the caller passes them) and rendering
(``compute.render.dataflow``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Protocol

from compute.dataflow import (BuildDesc, DataflowDescription, IndexExport, IndexImport, SinkExport,
                              SourceImport)
from expr.relation import Filter, Get, Join, Map, Project, RelationExpr, children
from expr.scalar import Column, ScalarExpr, columns_referenced, permute
from planner.optimize import optimize
from planner.optimize.util import transform_up
from planner.peek import AvailableIndex, mfp_over_get, normalize_indexes
from repr.ids import GlobalId
from repr.timestamp import Frontier, try_step_forward


class LoweringCatalog(Protocol):
    """What lowering needs to know about the collections a plan reads."""

    def is_storage_collection(self, gid: GlobalId) -> bool: ...  # tables, MVs
    def indexes_on(self, gid: GlobalId) -> list[AvailableIndex]: ...
    def view_expr(self, gid: GlobalId) -> Optional[RelationExpr]: ...  # plain views


@dataclass
class SimpleCatalog:
    """A dict-backed ``LoweringCatalog``: ``storage`` ids, ``indexes`` by collection
    (``AvailableIndex`` or ``(id, key, arity)``), ``views`` (non-materialized) by id."""
    storage: Mapping[GlobalId, int] | set = field(default_factory=set)
    indexes: Mapping = field(default_factory=dict)
    views: Mapping[GlobalId, RelationExpr] = field(default_factory=dict)

    def is_storage_collection(self, gid):
        return gid in self.storage

    def indexes_on(self, gid):
        return normalize_indexes({gid: self.indexes.get(gid, [])})[gid]

    def view_expr(self, gid):
        return self.views.get(gid)


def all_columns_key(arity: int) -> tuple[ScalarExpr, ...]:
    return tuple(Column(i) for i in range(arity))


def single_time_until(as_of: int) -> Frontier:
    """``as_of + 1``, or the empty frontier (``None``) when ``as_of`` is MAX."""
    return try_step_forward(as_of)


# ----------------------------------------------------------------- imports


def _join_key_columns(expr) -> dict:
    """For each Get(GlobalId) feeding a Join (bare, or under a Map/Filter/Project chain),
    the sets of its own columns that the join's equivalences use."""
    wanted: dict = {}

    def visit(e):
        if isinstance(e, Join):
            off = 0
            for x in e.inputs:
                a = x.arity()
                found = mfp_over_get(x)
                if found is not None and isinstance(found[0].id, GlobalId):
                    get, mfp = found
                    proj = mfp.output_projection()
                    cols = set()
                    for cls in e.equivalences:
                        for y in cls:
                            if isinstance(y, Column) and off <= y.index < off + a:
                                src = proj[y.index - off]
                                if src < get.arity():
                                    cols.add(src)
                    wanted.setdefault(get.id, []).append(cols)
                off += a
        for k in children(e):
            visit(k)
    visit(expr)
    return wanted


def _choose_index(indexes: list[AvailableIndex], wanted_cols: list[set]) -> AvailableIndex:
    def score(ix):
        key_cols = {k.index for k in ix.key if isinstance(k, Column)}
        matches = any(key_cols and len(key_cols) == len(ix.key) and key_cols <= w
                      for w in wanted_cols)
        return (0 if matches else 1, ix.id)
    return min(indexes, key=score)


def resolve_imports(expr, catalog: LoweringCatalog, *, exclude=()):
    """``(expr', source_imports, index_imports)``: plain views inlined, every other Get
    served by an index import (preferred) or a source import.  Raises ``LookupError``
    for a GlobalId the catalog does not know (a caller bug)."""
    def inline(e, depth=0):
        def f(node):
            if isinstance(node, Get) and isinstance(node.id, GlobalId) and node.id not in exclude:
                if catalog.indexes_on(node.id) or catalog.is_storage_collection(node.id):
                    return node
                v = catalog.view_expr(node.id)
                if v is None:
                    raise LookupError(f"lowering: unknown collection {node.id}")
                if depth > 64:
                    raise LookupError(f"lowering: view nesting too deep at {node.id}")
                return inline(v, depth + 1)
            return node
        return transform_up(e, f)

    expr = inline(expr)
    wanted = _join_key_columns(expr)
    sources: dict = {}
    index_imports: dict = {}
    for gid in sorted(_gets(expr)):
        if gid in exclude:
            continue
        ixs = catalog.indexes_on(gid)
        if ixs:
            ix = _choose_index(ixs, wanted.get(gid, []))
            index_imports[ix.id] = IndexImport(ix.id, gid, tuple(ix.key), ix.arity)
        else:
            sources[gid] = SourceImport(gid, _arity_of(expr, gid))
    return expr, tuple(sources.values()), tuple(index_imports.values())


def _gets(expr) -> set:
    out, stack = set(), [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Get) and isinstance(e.id, GlobalId):
            out.add(e.id)
        stack.extend(children(e))
    return out


def _arity_of(expr, gid) -> int:
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Get) and e.id == gid:
            return e.arity()
        stack.extend(children(e))
    raise LookupError(gid)


# ----------------------------------------------------------------- join planning


def lift_join_input_mfps(expr, index_imports) -> RelationExpr:
    """Make indexed join inputs bare ``Get``s so the join reads the imported arrangement.

    Optimization leaves join inputs like ``Project(Filter(Get u1))``; the join operator
    reuses an imported index only for a bare ``Get`` whose index key is the join key.  For
    each such input (a Map/Filter/Project chain over a Get of a collection with an
    imported index keyed by plain columns that are all join-key columns), the chain is
    lifted above the join: ``Join(.., Get, ..)`` then the chain's Maps and Filters, then a
    Project restoring the original columns.  An input is lifted only when every
    equivalence member on it reads Get columns (not Map outputs).  The result's rows
    equal ``expr``'s: the lifted predicates apply to the same joined rows.  (A data error
    of a lifted Map or predicate now surfaces only for rows that find a join partner, as
    in Materialize, where errors may depend on the plan.)"""
    keys: dict = {}
    for ix in index_imports:
        if all(isinstance(k, Column) for k in ix.key) and ix.key:
            keys.setdefault(ix.on_id, []).append({k.index for k in ix.key})

    def lift(e):
        if not isinstance(e, Join):
            return e
        return _lift_join(e, keys)
    return transform_up(expr, lift)


def _lift_join(join: Join, keys: dict):
    offsets, off = [], 0
    for x in join.inputs:
        offsets.append(off)
        off += x.arity()
    lifted = {}
    for k, x in enumerate(join.inputs):
        found = None if isinstance(x, Get) else mfp_over_get(x)
        if found is None or found[0].id not in keys:
            continue
        get, mfp = found
        proj = mfp.output_projection()
        used, ok = set(), True
        for cls in join.equivalences:
            for y in cls:
                for c in columns_referenced(y):
                    if offsets[k] <= c < offsets[k] + x.arity():
                        src = proj[c - offsets[k]]
                        if src >= get.arity():
                            ok = False
                        used.add(src)
        if ok and any(key <= used for key in keys[get.id]):
            lifted[k] = (get, mfp)
    if not lifted:
        return join
    new_inputs, new_off, total = [], [], 0
    for k, x in enumerate(join.inputs):
        new_off.append(total)
        y = lifted[k][0] if k in lifted else x
        new_inputs.append(y)
        total += y.arity()
    exprs, preds, where = [], [], {}  # where[(k, local col)] -> new global column
    for k, x in enumerate(join.inputs):
        if k not in lifted:
            for j in range(x.arity()):
                where[(k, j)] = new_off[k] + j
            continue
        get, mfp = lifted[k]
        n = get.arity()
        local = {c: new_off[k] + c for c in range(n)}
        for i, e in enumerate(mfp.expressions):
            local[n + i] = total + len(exprs)
            exprs.append(permute(e, {c: local[c] for c in columns_referenced(e)}))
        preds.extend(permute(p, {c: local[c] for c in columns_referenced(p)}) for p in mfp.predicates)
        for j, src in enumerate(mfp.output_projection()):
            where[(k, j)] = local[src]
    old_to_new = {}
    for k, x in enumerate(join.inputs):
        for j in range(x.arity()):
            old_to_new[offsets[k] + j] = where[(k, j)]
    eqs = tuple(tuple(permute(y, {c: old_to_new[c] for c in columns_referenced(y)}) for y in cls)
                for cls in join.equivalences)
    out = Join(tuple(new_inputs), eqs)
    if exprs:
        out = Map(out, tuple(exprs))
    if preds:
        out = Filter(out, tuple(preds))
    return Project(out, tuple(old_to_new[c] for c in range(join.arity())))


# ----------------------------------------------------------------- dataflows


def build_peek_dataflow(expr, *, view_id: GlobalId, index_id: GlobalId, as_of: int,
                        catalog: LoweringCatalog, optimize_plan: bool = True,
                        debug_name: str = "") -> DataflowDescription:
    """A transient dataflow building ``expr`` as ``view_id`` and exporting a transient
    index ``index_id`` on it keyed by all columns, reading exactly ``as_of``."""
    if not (view_id.is_transient() and index_id.is_transient()):
        raise ValueError("a peek dataflow builds and exports transient ids only")
    if optimize_plan:
        expr = optimize(expr)
    expr, sources, index_imports = resolve_imports(expr, catalog)
    expr = lift_join_input_mfps(expr, index_imports)
    arity = expr.arity()
    return DataflowDescription(
        source_imports=sources, index_imports=index_imports,
        objects_to_build=(BuildDesc(view_id, expr),),
        index_exports=(IndexExport(index_id, view_id, all_columns_key(arity), arity),),
        sink_exports=(), as_of=as_of, until=single_time_until(as_of),
        debug_name=debug_name or f"peek-{index_id}")


def build_materialized_view_dataflow(expr, *, id: GlobalId, as_of: Optional[int],
                                     catalog: LoweringCatalog, optimize_plan: bool = True,
                                     debug_name: str = "") -> DataflowDescription:
    """Maintain ``expr`` and write it into the storage collection ``id`` (the MV)."""
    if optimize_plan:
        expr = optimize(expr)
    expr, sources, index_imports = resolve_imports(expr, catalog, exclude=())
    expr = lift_join_input_mfps(expr, index_imports)
    arity = expr.arity()
    return DataflowDescription(
        source_imports=sources, index_imports=index_imports,
        objects_to_build=(BuildDesc(id, expr),), index_exports=(),
        sink_exports=(SinkExport(id, id, "materialized_view", arity),),
        as_of=as_of, until=None, debug_name=debug_name or f"materialized-view-{id}")


def build_index_dataflow(on_id: GlobalId, *, index_id: GlobalId, key, arity: int,
                         as_of: Optional[int], catalog: LoweringCatalog,
                         optimize_plan: bool = True, debug_name: str = "") -> DataflowDescription:
    """Maintain index ``index_id`` on ``on_id`` by ``key``.  A table or MV is read
    through a source import (the build is ``Get(on_id)``); a plain view's expression
    is inlined and built."""
    if catalog.is_storage_collection(on_id):
        plan = Get(on_id, arity)
        sources, index_imports = (SourceImport(on_id, arity),), ()
    else:
        view = catalog.view_expr(on_id)
        if view is None:
            raise LookupError(f"lowering: unknown collection {on_id}")
        if optimize_plan:
            view = optimize(view)
        plan, sources, index_imports = resolve_imports(view, catalog)
        # never serve the view from the index being built
        index_imports = tuple(i for i in index_imports if i.id != index_id)
        plan = lift_join_input_mfps(plan, index_imports)
    return DataflowDescription(
        source_imports=sources, index_imports=index_imports,
        objects_to_build=(BuildDesc(on_id, plan),),
        index_exports=(IndexExport(index_id, on_id, tuple(key), arity),),
        sink_exports=(), as_of=as_of, until=None, debug_name=debug_name or f"index-{index_id}")


def build_subscribe_dataflow(expr, *, sink_id: GlobalId, as_of: Optional[int],
                             catalog: LoweringCatalog, up_to: Optional[int] = None,
                             with_snapshot: bool = True, view_id: Optional[GlobalId] = None,
                             optimize_plan: bool = True, debug_name: str = "") -> DataflowDescription:
    """Stream the changes of ``expr`` from ``as_of`` (snapshot first when
    ``with_snapshot``) until ``up_to`` (exclusive; ``None``: forever)."""
    view_id = view_id or sink_id
    if optimize_plan:
        expr = optimize(expr)
    expr, sources, index_imports = resolve_imports(expr, catalog)
    expr = lift_join_input_mfps(expr, index_imports)
    arity = expr.arity()
    options = (("with_snapshot", with_snapshot), ("up_to", up_to))
    return DataflowDescription(
        source_imports=sources, index_imports=index_imports,
        objects_to_build=(BuildDesc(view_id, expr),), index_exports=(),
        sink_exports=(SinkExport(sink_id, view_id, "subscribe", arity, options),),
        as_of=as_of, until=up_to, debug_name=debug_name or f"subscribe-{sink_id}")


def build_dataflow(kind: str, **kwargs) -> DataflowDescription:
    """Dispatch on ``kind``: ``"peek"``, ``"materialized_view"``, ``"index"``, ``"subscribe"``
    (keyword arguments as for the matching ``build_*_dataflow``)."""
    builders = {
        "peek": build_peek_dataflow,
        "materialized_view": build_materialized_view_dataflow,
        "index": build_index_dataflow,
        "subscribe": build_subscribe_dataflow,
    }
    if kind not in builders:
        raise ValueError(f"unknown dataflow kind {kind!r}")
    if kind == "index":
        return builders[kind](kwargs.pop("on_id"), **kwargs)
    return builders[kind](kwargs.pop("expr"), **kwargs)
