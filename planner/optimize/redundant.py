"""remove_redundant_distinct and remove_redundant_threshold: drop operators whose input
already has the property they enforce.

Owns two facts about inputs.  Unique rows: a ``Reduce`` emits each group once with
count 1, so a DISTINCT over all of its columns changes nothing.  Non-negative counts: a
``Get`` of a GlobalId (tables, materialized views, indexes hold no negative counts), a
``Reduce``, a ``Threshold``, a ``Constant`` with positive counts, and Map, Filter,
Project and Union of those, so a ``Threshold`` over them changes nothing.  Invariant: an operator is removed only when one of these
facts holds of its input.  Deliberately not here: deriving unique keys through other
operators (a Project of a unique input is not necessarily unique).
"""
from __future__ import annotations

from expr.relation import Constant, Filter, Get, Map, Project, Reduce, Threshold, Union
from expr.scalar import Column
from planner.optimize.util import transform_up
from repr.ids import GlobalId


def _is_distinct_on_all_columns(e) -> bool:
    return (isinstance(e, Reduce) and not e.aggregates and not e.global_default and
            e.group_key == tuple(Column(i) for i in range(e.input.arity())))


def _remove_distinct(e):
    if _is_distinct_on_all_columns(e) and isinstance(e.input, Reduce):
        return e.input
    return e


def non_negative(e) -> bool:
    """Every count of ``e`` is positive, whatever its inputs hold."""
    if isinstance(e, Get):
        return isinstance(e.id, GlobalId)
    if isinstance(e, (Reduce, Threshold)):
        return True
    if isinstance(e, Constant):
        return e.error is None and all(c > 0 for _, c in e.rows)
    if isinstance(e, (Map, Filter, Project)):
        return non_negative(e.input)
    if isinstance(e, Union):
        return all(non_negative(x) for x in e.inputs)
    return False


def _remove_threshold(e):
    if isinstance(e, Threshold) and non_negative(e.input):
        return e.input
    return e


def remove_redundant_distinct(expr):
    return transform_up(expr, _remove_distinct)


def remove_redundant_threshold(expr):
    return transform_up(expr, _remove_threshold)
