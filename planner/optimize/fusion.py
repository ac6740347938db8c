"""fuse_map_filter_project: merge adjacent per-row operators and drop no-ops.

Owns: Filter∘Filter, Map∘Map, Project∘Project fusion, nested-Union flattening,
nested-Join flattening (a Join
input that is itself a Join is spliced in, its equivalences shifted), and removal of
identity Projects, empty Maps and empty Filters; a Join loses its unit inputs (arity 0,
one row), and a Join of one input becomes a Filter of datum equalities
(``is_not_distinct_from``).  Invariant: per-row semantics are
unchanged (Map expressions keep their column numbering because the inner Map's columns
come first).  Deliberately not here: moving operators past each other
(``push_down_predicates``, ``push_down_projections``).
"""
from __future__ import annotations

from expr.relation import Constant, Filter, Join, Map, Project, Union
from expr.scalar import columns_referenced, permute
from planner.optimize.names import make_not_distinct
from planner.optimize.util import transform_up

UNIT = Constant((((), 1),), 0)


def _is_unit(x) -> bool:
    """The arity-0 collection with one row: the identity of Join."""
    return isinstance(x, Constant) and x.error is None and x.column_count == 0 and \
        sum(c for _, c in x.rows) == 1 and len(x.rows) == 1


def _fuse(e):
    if isinstance(e, Filter):
        if not e.predicates:
            return e.input
        if isinstance(e.input, Filter):
            return Filter(e.input.input, e.input.predicates + tuple(
                p for p in e.predicates if p not in e.input.predicates))
        return e
    if isinstance(e, Map):
        if not e.scalars:
            return e.input
        if isinstance(e.input, Map):
            return Map(e.input.input, e.input.scalars + e.scalars)
        return e
    if isinstance(e, Project):
        if isinstance(e.input, Project):
            return _fuse(Project(e.input.input, tuple(e.input.outputs[i] for i in e.outputs)))
        if e.outputs == tuple(range(e.input.arity())):
            return e.input
        return e
    if isinstance(e, Union) and any(isinstance(x, Union) for x in e.inputs):
        flat = []
        for x in e.inputs:
            flat.extend(x.inputs if isinstance(x, Union) else (x,))
        return Union(tuple(flat))
    if isinstance(e, Join) and any(_is_unit(x) for x in e.inputs):
        kept = tuple(x for x in e.inputs if not _is_unit(x))
        if not kept:
            return UNIT
        return _fuse(Join(kept, e.equivalences))
    if isinstance(e, Join) and len(e.inputs) == 1:
        preds = tuple(make_not_distinct(cls[0], y) for cls in e.equivalences for y in cls[1:])
        return Filter(e.inputs[0], preds) if preds else e.inputs[0]
    if isinstance(e, Join) and any(isinstance(x, Join) for x in e.inputs):
        inputs, eqs = [], []
        off = 0
        for x in e.inputs:
            a = x.arity()
            if isinstance(x, Join):
                inputs.extend(x.inputs)
                shift = {c: c + off for cls in x.equivalences for y in cls
                         for c in columns_referenced(y)}
                eqs.extend(tuple(permute(y, shift) for y in cls) for cls in x.equivalences)
            else:
                inputs.append(x)
            off += a
        return Join(tuple(inputs), tuple(eqs) + e.equivalences)
    return e


def fuse_map_filter_project(expr):
    return transform_up(expr, _fuse)
