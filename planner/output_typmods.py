"""The type modifiers of a query's output columns (``cursor.description``'s precision, scale
and display size), found by following each output column back through the bound plan.

Owns ``output_typmods(expr, project, catalog)``: for each output column, the modifier
PostgreSQL would report in its RowDescription: a column read unchanged from a table (or a
view / materialized view, whose definition is followed in turn) keeps the table column's
``ColumnDef.typmod``; an explicit cast to a modified type (``x::numeric(5,2)``,
``varchar(3)``, ``timestamp(3)``) has that cast's modifier (the ``typmod_*`` call the binder
inserted); a UNION keeps a modifier all its branches agree on; anything computed has none.
Invariant: a pure function of the plan and the catalog; never raises (an unknown shape
answers None for that column).  Deliberately not here: how a modifier is enforced
(``sql.types.typmod_for``, ``sql.types.datetime``) or shown (``mzlite.types.column_sizes``).
"""
from __future__ import annotations

from typing import Optional

from expr.relation import ArrangeBy, Filter, Get, Join, Map, Project, Reduce, Threshold, TopK, Union
from expr.scalar import Call, Column, Literal

__all__ = ["output_typmods"]

_DEPTH = 64


def output_typmods(expr, project, catalog) -> tuple:
    """One modifier (or None) per output column of ``expr`` after ``project``."""
    try:
        arity = expr.arity()
        cols = project if project is not None else range(arity)
        return tuple(_trace(expr, c, catalog, 0) for c in cols)
    except (AttributeError, IndexError, KeyError, TypeError):  # an unexpected shape: report none
        return ()


def _trace(e, col: int, catalog, depth: int) -> Optional[tuple]:
    while depth < _DEPTH:
        depth += 1
        if isinstance(e, Project):
            e, col = e.input, e.outputs[col]
        elif isinstance(e, Map):
            n = e.input.arity()
            if col < n:
                e = e.input
            else:
                return _scalar(e.scalars[col - n], e, catalog, depth)  # its columns: the Map's own
        elif isinstance(e, (Filter, TopK, Threshold, ArrangeBy)):
            e = e.input
        elif isinstance(e, Get):
            if e.id not in catalog:
                return None  # a local (WITH) binding or a transient id
            item = catalog.get(e.id)
            if item.kind == "table":
                return item.columns[col].typmod if col < len(item.columns) else None
            if item.expr is None:
                return None
            e = item.expr
        elif isinstance(e, Join):
            for inp in e.inputs:
                n = inp.arity()
                if col < n:
                    e = inp
                    break
                col -= n
            else:
                return None
        elif isinstance(e, Reduce):
            if col >= len(e.group_key):
                return None  # an aggregate's value: PostgreSQL reports no modifier
            k = e.group_key[col]
            if not isinstance(k, Column):
                return _scalar(k, e.input, catalog, depth)
            e, col = e.input, k.index
        elif isinstance(e, Union):
            mods = {_trace(i, col, catalog, depth) for i in e.inputs}
            return mods.pop() if len(mods) == 1 else None
        else:
            return None
    return None


def _scalar(s, rel, catalog, depth: int) -> Optional[tuple]:
    """The modifier of scalar ``s`` whose columns are those of relation ``rel``."""
    if isinstance(s, Column):
        return _trace(rel, s.index, catalog, depth)
    if isinstance(s, Call) and s.func.startswith("typmod_") and len(s.args) >= 2:
        vals = [a.value for a in s.args[1:] if isinstance(a, Literal)]
        kind = s.func[len("typmod_"):]
        if kind == "numeric" and len(vals) >= 2:
            return ("numeric", vals[0], vals[1])
        if vals:
            return (kind, vals[0])
    return None
