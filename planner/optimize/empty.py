"""propagate_empty_collections: remove what can only ever be empty.

Owns: a Filter with a literal FALSE/NULL predicate becomes an empty Constant; an empty
Constant input makes Map, Filter, Project, FlatMap, Negate, Threshold, TopK, ArrangeBy,
Join and non-global Reduce empty; empty Union inputs are dropped (a Union of one input
is that input; of none, an empty Constant).  Invariant: only provably empty
collections are replaced (an erroring Constant is not empty: it carries its error).
A global Reduce (``global_default``) over empty input still yields its default row and
is left alone.  Deliberately not here: folding non-empty constants (``fold_constants``).
"""
from __future__ import annotations

from expr.relation import (ArrangeBy, Filter, FlatMap, Join, Let, Map, Negate, Project, Reduce, Threshold,
                           TopK, Union)
from planner.optimize.names import is_false_or_null
from planner.optimize.util import empty_constant, is_empty_constant, transform_up

_UNARY = (Map, Filter, Project, FlatMap, Negate, Threshold, TopK, ArrangeBy)


def _empty(e):
    if isinstance(e, Filter) and any(is_false_or_null(p) for p in e.predicates):
        return empty_constant(e.arity())
    if isinstance(e, _UNARY) and is_empty_constant(e.input):
        return empty_constant(e.arity())
    if isinstance(e, TopK) and e.limit == 0:
        return empty_constant(e.arity())
    if isinstance(e, Reduce) and is_empty_constant(e.input) and not (
            e.global_default and not e.group_key):
        return empty_constant(e.arity())
    if isinstance(e, Join) and any(is_empty_constant(x) for x in e.inputs):
        return empty_constant(e.arity())
    if isinstance(e, Let) and is_empty_constant(e.body):
        return e.body
    if isinstance(e, Union):
        kept = tuple(x for x in e.inputs if not is_empty_constant(x))
        if not kept:
            return empty_constant(e.arity())
        if len(kept) == 1:
            return kept[0]
        if len(kept) != len(e.inputs):
            return Union(kept)
    return e


def propagate_empty_collections(expr):
    return transform_up(expr, _empty)
