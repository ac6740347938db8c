"""simplify_boolean_logic: three-valued boolean algebra on predicates and scalars.

Owns: flattening nested AND/OR, dropping their identity elements, short-circuiting on
their absorbing elements, removing double negation, choosing the branch of an ``If``
with a literal condition, and splitting a Filter's top-level ANDs into separate
predicates (a row is kept iff all are true, exactly as for the AND), unwrapping
``is_true`` at the top of a predicate, NOT over IS [NOT] NULL, and dropping
``is_not_null(x)`` from a Filter that also compares ``x`` with a strict comparison.  Invariant: every
rewrite is valid in SQL's three-valued logic (NULL is neither dropped nor invented).
Deliberately not here: evaluation of fully constant subtrees (``fold_constants``).
"""
from __future__ import annotations

import dataclasses

from expr.relation import Filter, FlatMap, Join, Map, Reduce
from expr.scalar import Call, If, Literal
from planner.optimize.names import (AND, IS_NOT_NULL, IS_NULL, IS_TRUE, OR, is_and, is_not, is_or, make_and,
                                    make_or)
from planner.optimize.util import transform_up

#: comparisons that are NULL when either side is NULL, so their being true implies both
#: sides are not NULL
STRICT_COMPARISONS = frozenset({"eq", "neq", "lt", "lte", "gt", "gte"})


def simplify_scalar(e):
    if isinstance(e, Call):
        args = tuple(simplify_scalar(a) for a in e.args)
        e = Call(e.func, args, e.type) if args != e.args else e
        if e.func in (AND, OR):
            is_conj = e.func == AND
            flat = []
            for a in e.args:
                if (is_and(a) if is_conj else is_or(a)):
                    flat.extend(a.args)
                else:
                    flat.append(a)
            out = []
            for a in flat:
                if isinstance(a, Literal) and a.value is (not is_conj):
                    return Literal(not is_conj, "bool")  # absorbing element
                if isinstance(a, Literal) and a.value is is_conj:
                    continue  # identity element
                if a not in out:
                    out.append(a)
            return make_and(out) if is_conj else make_or(out)
        if is_not(e):
            inner = e.args[0]
            if is_not(inner):
                return inner.args[0]
            if isinstance(inner, Call) and inner.func in (IS_NULL, IS_NOT_NULL) and len(inner.args) == 1:
                return Call(IS_NOT_NULL if inner.func == IS_NULL else IS_NULL, inner.args, "bool")
        return e
    if isinstance(e, If):
        cond, then, els = simplify_scalar(e.cond), simplify_scalar(e.then), simplify_scalar(e.els)
        if isinstance(cond, Literal):
            return then if cond.value is True else els
        return If(cond, then, els, e.type)
    return e


def simplify_predicates(preds) -> tuple:
    """Split conjunctions, drop TRUE, dedupe (order of first appearance kept)."""
    out: list = []
    for p in preds:
        p = simplify_scalar(p)
        while isinstance(p, Call) and p.func == IS_TRUE and len(p.args) == 1:
            p = p.args[0]  # a Filter keeps only TRUE rows: is_true is implied
        parts = p.args if is_and(p) else (p,)
        for q in parts:
            if isinstance(q, Literal) and q.value is True:
                continue
            if q not in out:
                out.append(q)
    implied = {a for q in out if isinstance(q, Call) and q.func in STRICT_COMPARISONS
               and len(q.args) == 2 for a in q.args}
    return tuple(q for q in out if not (isinstance(q, Call) and q.func == IS_NOT_NULL
                                        and q.args[0] in implied))


def _simplify_node(e):
    if isinstance(e, Filter):
        preds = simplify_predicates(e.predicates)
        if not preds:
            return e.input
        return e if preds == e.predicates else Filter(e.input, preds)
    if isinstance(e, Map):
        s = tuple(simplify_scalar(x) for x in e.scalars)
        return e if s == e.scalars else Map(e.input, s)
    if isinstance(e, FlatMap):
        s = tuple(simplify_scalar(x) for x in e.exprs)
        return e if s == e.exprs else dataclasses.replace(e, exprs=s)
    if isinstance(e, Reduce):
        k = tuple(simplify_scalar(x) for x in e.group_key)
        aggs = tuple(dataclasses.replace(a, expr=simplify_scalar(a.expr)) for a in e.aggregates)
        if k == e.group_key and aggs == e.aggregates:
            return e
        return dataclasses.replace(e, group_key=k, aggregates=aggs)
    if isinstance(e, Join):
        eq = tuple(tuple(simplify_scalar(x) for x in c) for c in e.equivalences)
        return e if eq == e.equivalences else dataclasses.replace(e, equivalences=eq)
    return e


def simplify_boolean_logic(expr):
    """Apply ``simplify_scalar`` to every scalar and ``simplify_predicates`` to every Filter."""
    return transform_up(expr, _simplify_node)
