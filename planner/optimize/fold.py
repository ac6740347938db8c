"""fold_constants: evaluate what does not depend on data at plan time.

Owns constant folding of scalar subtrees (no column, no ``mz_now()``) and of relational
subtrees whose every leaf is an error-free ``Constant``.  Invariant: folding never turns
a run-time data error into a plan-time one: a constant subtree whose evaluation raises
keeps its expression, so the error surfaces when the plan runs.  Folding evaluates with the
code compute runs: scalars with ``expr.compile.evaluate_constant``, relations with
``expr.interpret``.  Deliberately not here: boolean algebra on partly-constant expressions
(``simplify_boolean_logic``).
"""
from __future__ import annotations

import dataclasses

from expr.compile import evaluate_constant
from expr.interpret import evaluate
from expr.relation import Constant, Filter, FlatMap, Join, Let, LetRec, Map, Reduce, children, node_scalars
from expr.scalar import Call, CallMzNow, Column, If, Literal, contains_mz_now
from planner.optimize.util import is_constant_scalar, transform_up
from repr.errors import EvalError

#: joins of constants are folded only when the cross product stays this small
MAX_FOLDED_ROWS = 10_000


def fold_scalar(e):
    """``e`` with every constant subtree replaced by its value as a ``Literal``."""
    if isinstance(e, (Column, Literal, CallMzNow)):
        return e
    if isinstance(e, Call):
        args = tuple(fold_scalar(a) for a in e.args)
        e = Call(e.func, args, e.type) if args != e.args else e
    elif isinstance(e, If):
        cond, then, els = fold_scalar(e.cond), fold_scalar(e.then), fold_scalar(e.els)
        if isinstance(cond, Literal):
            chosen = then if cond.value is True else els
            if not isinstance(chosen, Literal) or chosen.type == e.type:
                return chosen
        e = If(cond, then, els, e.type)
    if is_constant_scalar(e):
        try:
            value = evaluate_constant(e)
        except EvalError:
            return e
        except Exception:  # noqa: BLE001 - an unfoldable expression stays as it is
            return e
        return Literal(value, e.type)
    return e


def _node_scalars_fold(expr):
    if isinstance(expr, Map):
        s = tuple(fold_scalar(x) for x in expr.scalars)
        return expr if s == expr.scalars else dataclasses.replace(expr, scalars=s)
    if isinstance(expr, Filter):
        s = tuple(fold_scalar(x) for x in expr.predicates)
        return expr if s == expr.predicates else dataclasses.replace(expr, predicates=s)
    if isinstance(expr, FlatMap):
        s = tuple(fold_scalar(x) for x in expr.exprs)
        return expr if s == expr.exprs else dataclasses.replace(expr, exprs=s)
    if isinstance(expr, Join):
        eq = tuple(tuple(fold_scalar(x) for x in cls) for cls in expr.equivalences)
        return expr if eq == expr.equivalences else dataclasses.replace(expr, equivalences=eq)
    if isinstance(expr, Reduce):
        k = tuple(fold_scalar(x) for x in expr.group_key)
        aggs = tuple(dataclasses.replace(a, expr=fold_scalar(a.expr)) for a in expr.aggregates)
        if k == expr.group_key and aggs == expr.aggregates:
            return expr
        return dataclasses.replace(expr, group_key=k, aggregates=aggs)
    return expr


def _fold_relation(expr):
    kids = children(expr)
    if not kids or isinstance(expr, (Let, LetRec, FlatMap)):  # LetRec: iteration may not end
        return expr
    if not all(isinstance(k, Constant) and k.error is None for k in kids):
        return expr
    if any(contains_mz_now(s) for s in node_scalars(expr)):
        return expr
    if isinstance(expr, Join):
        size = 1
        for k in kids:
            size *= max(1, len(k.rows))
        if size > MAX_FOLDED_ROWS:
            return expr
    try:
        oks, errs = evaluate(expr)
    except Exception:  # noqa: BLE001 - leave it for run time
        return expr
    if errs:
        return expr
    rows = tuple(sorted(oks.items(), key=lambda rc: repr(rc)))
    return Constant(rows, expr.arity())


def _fold_node(e):
    return _fold_relation(_node_scalars_fold(e))


def fold_constants(expr):
    """Fold constant scalar subtrees everywhere, then relational subtrees over constants."""
    return transform_up(expr, _fold_node)
