"""push_down_projections: compute and carry only the columns someone reads.

Owns column pruning.  ``_prune(e, demand)`` returns an expression whose column ``k`` is
column ``demand[k]`` of ``e`` (``demand`` sorted, distinct); it drops unused Map
expressions, unused aggregates, unused input columns of Joins, Unions and FlatMaps, and
narrows Constants.  Invariant: the rows of the result, projected back, equal the
original's.  Deliberately conservative: it demands every column below ``TopK`` (ties are
broken by the whole row), ``Threshold`` and ``ArrangeBy`` (multiplicities and keys
depend on all columns), and it never narrows a ``Let`` value.  A Map or Filter directly
over a ``Get`` reads the whole Get (a Project goes on top), keeping the
Project-Filter-Map-Get shape that fast-path peeks and rendering recognise.  A binary
join's input that reads stored rows (a Get under Filters) and keeps a non-key column is
not narrowed either: the join arranges the stored tuples themselves
(``_carries_stored_rows_whole``).
"""
from __future__ import annotations

import dataclasses

from expr.interpret import consolidate
from expr.relation import (ArrangeBy, Constant, Filter, FlatMap, Get, Join, Let, LetRec, Map, Negate, Project,
                           Reduce, Threshold, TopK, Union)
from expr.scalar import columns_referenced, permute


def _project(e, outputs):
    outputs = tuple(outputs)
    if outputs == tuple(range(e.arity())):
        return e
    if isinstance(e, Project):
        return Project(e.input, tuple(e.outputs[i] for i in outputs))
    return Project(e, outputs)


def _select(child, child_demand, wanted):
    """Project ``child`` (which carries ``child_demand``) down to ``wanted`` (old indexes)."""
    pos = {c: k for k, c in enumerate(child_demand)}
    return _project(child, [pos[c] for c in wanted])


def _carries_stored_rows_whole(join, x, off: int, local: tuple) -> bool:
    """Whether the binary ``join`` keeps its input ``x`` (starting at column ``off``) whole
    although it reads only ``local`` of its columns.

    ``x`` is a ``Get`` under nothing but Filters: its rows reach the join as the very tuples
    the collection already holds (table storage, an index's batches).  Narrowed, every row
    becomes a new tuple, built, tracked by the collector and stored in the join's
    arrangement beside the original; kept whole, the arrangement refers to the original,
    and a deletion finds its row by identity.  The join's fused final projection (a Project
    right above it) narrows its output instead.  Only when

    * the join is binary: its path-order row is built once and projected straight away, so
      the unused columns cost nothing; a multiway join would carry them in every
      intermediate row of its later lookups;
    * ``x`` keeps some column its join keys do not use: rows narrowed to their keys alone
      collapse into one counted row per key, which the whole rows would not;
    * ``x`` keeps at least half of its columns: the arrangement hashes every value of each
      row it adds or removes, so a whole row pays for the columns nobody reads, and past
      half the unread ones dominate."""
    if len(join.inputs) != 2 or len(local) == x.arity() or 2 * len(local) < x.arity():
        return False
    base = x
    while isinstance(base, Filter):
        base = base.input
    if not isinstance(base, Get):
        return False
    key_cols: set = set()
    for cls in join.equivalences:
        for expr in cls:
            key_cols |= {c - off for c in columns_referenced(expr) if off <= c < off + x.arity()}
    return any(c not in key_cols for c in local)


def _prune(e, demand: tuple):
    out = _prune_node(e, demand)
    # keep the original object when nothing was pruned (cheap: children compare by identity)
    if out is not e and demand == tuple(range(len(demand))) and out == e:
        return e
    return out


def _prune_node(e, demand: tuple):
    n = e.arity()
    if isinstance(e, Project):
        needed = tuple(sorted({e.outputs[d] for d in demand}))
        child = _prune(e.input, needed)
        return _select(child, needed, [e.outputs[d] for d in demand])
    if isinstance(e, Map):
        m = e.input.arity()
        keep: set = set()
        cols_in: set = {d for d in demand if d < m}
        todo = [d for d in demand if d >= m]
        while todo:
            c = todo.pop()
            if c in keep:
                continue
            keep.add(c)
            for r in columns_referenced(e.scalars[c - m]):
                if r >= m:
                    todo.append(r)
                else:
                    cols_in.add(r)
        in_demand = tuple(sorted(cols_in))
        if isinstance(e.input, Get):  # keep Map directly over Get (the MFP shape)
            in_demand = tuple(range(m))
        child = _prune(e.input, in_demand)
        mapping = {c: k for k, c in enumerate(in_demand)}
        kept = sorted(keep)
        for j, c in enumerate(kept):
            mapping[c] = len(in_demand) + j
        scalars = tuple(permute(e.scalars[c - m], mapping) for c in kept)
        new = Map(child, scalars) if scalars else child
        return _project(new, [mapping[d] for d in demand])
    if isinstance(e, Filter):
        cols = set(demand)
        for p in e.predicates:
            cols |= columns_referenced(p)
        child_demand = tuple(sorted(cols))
        if isinstance(e.input, Get):  # keep Filter directly over Get (the MFP shape)
            child_demand = tuple(range(e.input.arity()))
        child = _prune(e.input, child_demand)
        mapping = {c: k for k, c in enumerate(child_demand)}
        preds = tuple(permute(p, mapping) for p in e.predicates)
        if isinstance(child, Project):
            # keep the canonical Project-over-Filter shape (predicate pushdown's order)
            preds = tuple(permute(p, dict(enumerate(child.outputs))) for p in preds)
            new = Project(Filter(child.input, preds), child.outputs)
        else:
            new = Filter(child, preds)
        return _select(new, child_demand, demand)
    if isinstance(e, FlatMap):
        m = e.input.arity()
        cols = {d for d in demand if d < m}
        for x in e.exprs:
            cols |= columns_referenced(x)
        in_demand = tuple(sorted(cols))
        child = _prune(e.input, in_demand)
        mapping = {c: k for k, c in enumerate(in_demand)}
        new = FlatMap(child, e.func, tuple(permute(x, mapping) for x in e.exprs), e.output_arity)
        carried = in_demand + tuple(range(m, n))
        return _select(new, carried, demand)
    if isinstance(e, Join):
        cols = set(demand)
        for cls in e.equivalences:
            for x in cls:
                cols |= columns_referenced(x)
        mapping, inputs, carried = {}, [], []
        off = 0
        for x in e.inputs:
            a = x.arity()
            local = tuple(c - off for c in sorted(cols) if off <= c < off + a)
            if _carries_stored_rows_whole(e, x, off, local):
                local = tuple(range(a))
            inputs.append(_prune(x, local))
            for c in local:
                mapping[c + off] = len(carried)
                carried.append(c + off)
            off += a
        eqs = tuple(tuple(permute(x, mapping) for x in cls) for cls in e.equivalences)
        return _select(Join(tuple(inputs), eqs), tuple(carried), demand)
    if isinstance(e, Reduce):
        k = len(e.group_key)
        kept = [i for i in range(len(e.aggregates)) if k + i in demand]
        aggs = tuple(e.aggregates[i] for i in kept)
        cols: set = set()
        for x in e.group_key:
            cols |= columns_referenced(x)
        for a in aggs:
            cols |= columns_referenced(a.expr)
        in_demand = tuple(sorted(cols))
        child = _prune(e.input, in_demand)
        mapping = {c: j for j, c in enumerate(in_demand)}
        new = Reduce(child, tuple(permute(x, mapping) for x in e.group_key),
                     tuple(dataclasses.replace(a, expr=permute(a.expr, mapping)) for a in aggs),
                     e.global_default)
        carried = tuple(range(k)) + tuple(k + i for i in kept)
        return _select(new, carried, demand)
    if isinstance(e, Union):
        return Union(tuple(_prune(x, demand) for x in e.inputs))
    if isinstance(e, Negate):
        return Negate(_prune(e.input, demand))
    if isinstance(e, Constant):
        if e.error is not None or demand == tuple(range(n)):
            return e
        rows = consolidate((tuple(r[d] for d in demand), c) for r, c in e.rows)
        return Constant(tuple(rows.items()), len(demand))
    if isinstance(e, Let):
        return Let(e.id, push_down_projections(e.value), _prune(e.body, demand))
    if isinstance(e, LetRec):  # recursive values keep their columns (their Gets read them all)
        return LetRec(e.ids, tuple(push_down_projections(v) for v in e.values), e.limits,
                      _prune(e.body, demand))
    if isinstance(e, (TopK, Threshold, ArrangeBy)):
        full = tuple(range(e.input.arity()))
        return _project(dataclasses.replace(e, input=_prune(e.input, full)), demand)
    # Get and anything unknown: read everything, project on top
    return _project(e, demand)


def push_down_projections(expr):
    """Prune columns nobody reads (the output keeps all of ``expr``'s columns)."""
    return _prune(expr, tuple(range(expr.arity())))
