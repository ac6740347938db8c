"""Generic SELECT plans: a parameterised SELECT planned once per parameter types, its
parameters' values substituted per execution (PostgreSQL's generic plan of a prepared
statement, in miniature).

Owns ``plan_generic_select`` (the ``SelectPlan`` of a SELECT whose ``$k`` bind as
placeholders of their types, ``planner.params.placeholder``), ``bind_generic`` (that
plan with each placeholder replaced by its value's literal, and the calls applied directly
to a substituted value folded, as binding a value folds them) and ``bind_slots`` (the plan
with each placeholder a ``Slot`` literal and nothing folded: a template that says where each
value goes).
Invariant: a generic plan is only ever used where it was seen to equal the plan bound with
values (the adapter compares the two for the first parameter set; any difference, or a
SELECT the planner cannot bind with placeholders such as ``LIMIT $1``, means values are
bound every time): it is an optimisation that never changes a plan.
Deliberately not here: which parameter types qualify and the cache (the adapter's
``Database.plan``), optimisation (``planner.optimize``, per execution as before).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from expr.scalar import Call, Literal
from planner.params import PARAMETER


def plan_generic_select(stmt, catalog, types: tuple):
    """The SELECT ``stmt``'s plan with placeholders for parameters of ``types``."""
    from planner.bind_query import Binder
    from planner.bind_stmt import _DISPATCH
    b = Binder(catalog, stmt, parameter_types=tuple(types))
    return _DISPATCH["select"](b, stmt, stmt.node)


#: dataclass type -> its init fields' names (``dataclasses.fields`` per node is slow)
_FIELDS: dict = {}


class Slot:
    """Parameter ``k``'s place in a template plan (``bind_slots``): the value of a literal
    that no parameter value is (compared by identity)."""
    __slots__ = ("k",)

    def __init__(self, k: int):
        self.k = k

    def __repr__(self) -> str:
        return f"Slot({self.k})"


def bind_slots(plan):
    """``plan`` with placeholder k replaced by ``Literal(Slot(k), its type)`` and nothing
    folded: a template whose literals say where each parameter's value goes
    (``mzlite.generic_plans``' prepared fast-path peek)."""
    return _substitute(plan, lambda k: Slot(k), False, set())


def has_slot(x) -> bool:
    """Whether ``x`` (an expression, an MFP, a tuple of them) holds a ``Slot`` literal."""
    if isinstance(x, Literal):
        return isinstance(x.value, Slot)
    if isinstance(x, Call):
        return any(has_slot(a) for a in x.args)
    if isinstance(x, (tuple, list)):
        return any(has_slot(v) for v in x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return any(has_slot(getattr(x, f.name)) for f in dataclasses.fields(x))
    return isinstance(x, Slot)


def bind_generic(plan, values: tuple, free: Optional[set] = None):
    """``plan`` with placeholder k replaced by ``Literal(values[k], its type)``.  ``free``:
    the ids of ``plan``'s subtrees known to hold no placeholder (filled in as found; pass
    the same set for the same long-lived plan, so later bindings skip them)."""
    return _substitute(plan, values.__getitem__, True, set() if free is None else free)


def _substitute(plan, value_of, fold: bool, free: set):
    from expr.functions import FUNCTIONS

    def walk(x):
        if id(x) in free:
            return x
        if isinstance(x, Call):
            if x.func == PARAMETER:
                return Literal(value_of(x.args[0].value), x.type)
            args = tuple(walk(a) for a in x.args)
            if all(a is b for a, b in zip(args, x.args)):
                free.add(id(x))
                return x
            impl = FUNCTIONS.get(x.func) if fold else None
            if impl is not None and not impl.lazy and all(isinstance(a, Literal) for a in args) \
                    and any(a is not b and isinstance(b, Call) and b.func == PARAMETER for a, b in zip(args, x.args)):
                vals = [a.value for a in args]
                if impl.strict and any(v is None for v in vals):
                    return Literal(None, x.type)
                return Literal(impl.fn(*vals), x.type)
            return Call(x.func, args, x.type)
        t = type(x)
        if t is tuple or t is list:
            out = [walk(v) for v in x]
            if all(a is b for a, b in zip(out, x)):
                free.add(id(x))
                return x
            return t(out)
        names = _FIELDS.get(t)
        if names is None:
            names = _FIELDS[t] = tuple(f.name for f in dataclasses.fields(x) if f.init) \
                if dataclasses.is_dataclass(x) and not isinstance(x, type) and t is not Literal else ()
        if not names:
            return x
        changes = {}
        for name in names:
            v = getattr(x, name)
            w = walk(v)
            if w is not v:
                changes[name] = w
        if not changes:
            free.add(id(x))
            return x
        return dataclasses.replace(x, **changes)
    return walk(plan)
