"""Where ``mz_now()`` may appear in a maintained dataflow (materialized view, index, SUBSCRIBE).

Owns the rule Materialize enforces: a dataflow that runs over time may use ``mz_now()`` only
in a *temporal filter*, a ``WHERE`` conjunct of the form ``mz_now() <op> expr`` (or mirrored,
``BETWEEN`` included) where ``<op>`` is one of ``< <= = >= >`` and ``expr`` reads only the row.
Those predicates become validity intervals in the render's temporal MFP
(``compute.render.mfp.split_temporal``), which schedules each row's future insertion and
retraction, so rows appear and disappear as time passes without any write.  Anything else
(``mz_now()`` in the select list, under ``OR``, in an aggregate, a join condition, ...)
would be evaluated once, when the row is processed, and silently go stale: it is refused
with 0A000 instead.  A one-shot ``SELECT`` is not checked: it reads a single time, where
``mz_now()`` is simply the read timestamp.

Invariant: ``check_maintainable(expr)`` accepts exactly the predicates the temporal MFP
turns into intervals (it asks the same ``split_temporal``).  Deliberately not here: the
interval arithmetic (``compute.render.mfp``) and binding ``mz_now()`` (``planner``).
"""
from __future__ import annotations

import dataclasses

from compute.render.mfp import split_temporal
from expr.functions import VOLATILE
from expr.mfp import MapFilterProject
from expr.relation import AggregateExpr, Filter, children
from expr.scalar import Call, CallMzNow, Column, If, Literal, contains_mz_now
from planner.lower import resolve_imports
from planner.optimize import optimize
from sql import errors as E

_SCALARS = (Call, CallMzNow, Column, If, Literal)


def _is_temporal_filter(pred, arity: int) -> bool:
    split = split_temporal(MapFilterProject(arity, (), (pred,), tuple(range(arity))))
    return split is not None and not split[0].predicates


def _scalars(value):
    if isinstance(value, _SCALARS):
        yield value
    elif isinstance(value, AggregateExpr):
        yield value.expr
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _scalars(v)


def _volatile_call(e):
    """The name of a volatile function ``e`` calls (``expr.functions.VOLATILE``), or None."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Call):
            if x.func in VOLATILE:
                return x.func
            stack.extend(x.args)
        elif isinstance(x, If):
            stack.extend((x.cond, x.then, x.els))
    return None


def check_volatile(expr, what: str) -> None:
    """Raise 0A000 when ``expr`` (before optimization, which could fold the call into a
    constant) calls a volatile function anywhere."""
    for _node, _name, value in _own_fields(expr):
        for s in _scalars(value):
            vol = _volatile_call(s)
            if vol is not None:
                raise E.error_for(E.FEATURE_NOT_SUPPORTED,
                                  f"cannot materialize call to {vol} in {what}: its value changes on every call")


def _own_fields(expr):
    """(node, field name, value) for every field of every node of ``expr`` that is not a
    child relation: the places scalar expressions live."""
    stack = [expr]
    while stack:
        node = stack.pop()
        kids = set(map(id, children(node)))
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if id(value) in kids or (isinstance(value, tuple) and value and id(value[0]) in kids):
                continue
            yield node, f.name, value
        stack.extend(children(node))


def check_maintainable(expr, what: str) -> None:
    """Raise 0A000 when ``expr`` (a relation expression, views inlined) uses ``mz_now()``
    anywhere but in a temporal filter; ``what`` names the object for the message."""
    for node, name, value in _own_fields(expr):
        for s in _scalars(value):  # now()/current_timestamp can never be maintained
            _refuse_wall_clock(s)
        if isinstance(node, Filter) and name == "predicates":
            for p in value:
                if contains_mz_now(p) and not _is_temporal_filter(p, node.input.arity()):
                    raise E.error_for(
                        E.FEATURE_NOT_SUPPORTED,
                        f"unsupported temporal predicate in {what}: mz_now() must be directly compared "
                        f"to an expression of the row (mz_now() <op> expr, <op> one of < <= = >= >, "
                        f"or BETWEEN), in a conjunct of WHERE")
            continue
        for s in _scalars(value):
            if contains_mz_now(s):
                raise E.error_for(E.FEATURE_NOT_SUPPORTED,
                                  f"cannot materialize call to mz_now in {what}: outside a temporal "
                                  f"filter in WHERE, its value would never change")


def reads_mz_now(expr) -> bool:
    """Whether some scalar expression of relation ``expr`` calls ``mz_now()`` (a temporal
    filter or a one-shot read of the read timestamp)."""
    return any(contains_mz_now(s) for _node, _name, value in _own_fields(expr) for s in _scalars(value))


def _refuse_wall_clock(expr) -> None:
    """0A000 for ``now()`` (``current_timestamp``, ``current_date``, ``localtimestamp``, ...):
    Materialize's unmaterializable function; its value is the statement's wall clock."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Call):
            if e.func == "now":
                raise E.error_for(E.FEATURE_NOT_SUPPORTED, "cannot materialize call to current_timestamp")
            stack.extend(e.args)
        elif isinstance(e, If):
            stack.extend((e.cond, e.then, e.els))


def inlined(db, expr):
    """``expr`` optimized with its views inlined, as its dataflow would read it."""
    return resolve_imports(optimize(expr), db.lowering)[0]
