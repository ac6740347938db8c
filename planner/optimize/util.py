"""Generic plumbing for optimizer rules: rebuilding a node with new children and
bottom-up / top-down rewriting.

Owns only tree traversal; invariant: ``with_children(e, children(e)) == e``.  Rules
are pure functions ``RelationExpr -> RelationExpr`` built on these helpers.
Deliberately not here: any rewrite decision.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from expr.relation import (Constant, Filter, Get, Join, Let, LetRec, LocalId, Map, Negate, Project, Reduce,
                           Threshold, Union, children)
from expr.scalar import Call, CallMzNow, Column, If, Literal


def kids(expr) -> tuple:
    """``expr.relation.children`` by exact type (the optimizer's hot path)."""
    t = type(expr)
    if t is Join or t is Union:
        return expr.inputs
    if t is Constant or t is Get:
        return ()
    if t is Let:
        return (expr.value, expr.body)
    if t is LetRec:
        return tuple(expr.values) + (expr.body,)
    return (expr.input,)


def with_children(expr, new_children):
    """``expr`` with its relational inputs replaced (same order as ``children``)."""
    t = type(expr)
    if t is Map:
        return Map(new_children[0], expr.scalars)
    if t is Filter:
        return Filter(new_children[0], expr.predicates)
    if t is Project:
        return Project(new_children[0], expr.outputs)
    if t is Join:
        return Join(tuple(new_children), expr.equivalences)
    if t is Union:
        return Union(tuple(new_children))
    if t is Negate or t is Threshold:
        return t(new_children[0])
    if t is Reduce:
        return Reduce(new_children[0], expr.group_key, expr.aggregates, expr.global_default)
    if t is Constant or t is Get:
        return expr
    if t is Let:
        return Let(expr.id, new_children[0], new_children[1])
    if t is LetRec:
        return LetRec(expr.ids, tuple(new_children[:-1]), expr.limits, new_children[-1])
    return dataclasses.replace(expr, input=new_children[0])


def transform_up(expr, f: Callable):
    """Apply ``f`` to every node, children first (a node whose children ``f`` left alone
    is passed to ``f`` as the very same object)."""
    ks = kids(expr)
    if ks:
        new = [transform_up(k, f) for k in ks]
        for a, b in zip(new, ks):
            if a is not b:
                expr = with_children(expr, new)
                break
    return f(expr)


def is_literal(e) -> bool:
    return isinstance(e, Literal)


def is_constant_scalar(e) -> bool:
    """No column reference and no ``mz_now()``: the value is the same for every row."""
    if isinstance(e, Literal):
        return True
    if isinstance(e, (Column, CallMzNow)):
        return False
    if isinstance(e, Call):
        if e.func in _VOLATILE:  # gen_random_uuid() differs per call
            return False
        return all(is_constant_scalar(a) for a in e.args)
    if isinstance(e, If):
        return all(is_constant_scalar(x) for x in (e.cond, e.then, e.els))
    return False


from expr.functions import VOLATILE as _VOLATILE  # noqa: E402


def empty_constant(arity: int) -> Constant:
    return Constant((), arity)


def is_empty_constant(e) -> bool:
    return isinstance(e, Constant) and not e.rows and e.error is None


def local_uses(expr, lid: LocalId) -> int:
    """How many ``Get(lid)`` nodes ``expr`` contains."""
    n = 0
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Get) and e.id == lid:
            n += 1
        stack.extend(children(e))
    return n


def replace_local(expr, lid: LocalId, value):
    """``expr`` with every ``Get(lid)`` replaced by ``value``."""
    return transform_up(expr, lambda e: value if isinstance(e, Get) and e.id == lid else e)


def count_nodes(expr) -> int:
    return 1 + sum(count_nodes(k) for k in children(expr))
