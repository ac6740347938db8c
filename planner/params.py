"""Parameters: the SQL type and engine value a Python parameter value binds as, and the
placeholder a parameter of an INSERT's parameterised rows binds as.

Owns the typing rule of a bound parameter (``bind_expr.python_literal``'s: ``None`` and
``str`` are ``unknown``, an ``int`` is int4, int8 or numeric by its magnitude, a naive
``datetime`` is a timestamp, an aware one a timestamptz in UTC, ...), applied to one
parameter set (``parameter_types``, ``engine_values``) or, column-wise with C-level passes,
to the parameters at one position of many sets (``column_type``); and ``placeholder``, the
expression ``$k`` binds as while the planner builds an ``InsertPlan``'s ``rows`` (a
``Call`` of ``PARAMETER``, typed as the parameter is typed, never folded), which
``substitute_placeholders`` turns into ``Column(base + k)`` once binding is done.

Invariants: ``parameter_types(v)`` equals ``tuple(python_literal(x).type for x in v)`` and
``engine_values(v)`` the literals' values, for every value ``python_literal`` accepts (it
raises what ``python_literal`` raises for the others); ``column_type`` agrees with them
value by value.  A placeholder never leaves the planner: every plan holds ``Column``s.
Deliberately not here: binding (``planner.bind_expr``), evaluating plans (the adapter).
"""
from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Callable, Optional
import uuid

from expr.scalar import Call, Column, If, Literal, ScalarExpr
from planner.bind_expr import python_literal
from repr.dates import Interval

#: the func of a placeholder ``Call``: no function has this name, so one that escaped the
#: planner would fail loudly in ``expr.compile``
PARAMETER = "$parameter"

_INT4 = (-2 ** 31, 2 ** 31 - 1)
_INT8 = (-2 ** 63, 2 ** 63 - 1)
#: Python types whose values bind as themselves, with their SQL type
_SAME_VALUE = {type(None): "unknown", bool: "bool", float: "float8", Decimal: "numeric", str: "unknown",
               datetime.date: "date", uuid.UUID: "uuid", bytes: "bytea", Interval: "interval"}
_NONE = type(None)


def parameter_type(value) -> str:
    """The SQL type ``value`` binds as (``python_literal(value).type``)."""
    t = _SAME_VALUE.get(type(value))
    if t is not None:
        return t
    if type(value) is int:
        if _INT4[0] <= value <= _INT4[1]:
            return "int4"
        return "int8" if _INT8[0] <= value <= _INT8[1] else "numeric"
    if type(value) is datetime.datetime:
        return "timestamp" if value.tzinfo is None else "timestamptz"
    return python_literal(value).type


def parameter_types(values) -> tuple[str, ...]:
    """The SQL types one parameter set binds as."""
    return tuple(map(parameter_type, values))


def _same_value(value) -> bool:
    k = type(value)
    return k in _SAME_VALUE or (k is int and _INT8[0] <= value <= _INT8[1]) or \
        (k is datetime.datetime and value.tzinfo is None)


def engine_value(value):
    """The engine's value of a parameter (``python_literal(value).value``)."""
    return value if _same_value(value) else python_literal(value).value


def engine_values(values) -> tuple:
    """One parameter set's values as the engine holds them (``values`` itself, usually)."""
    if all(map(_same_value, values)):
        return values if type(values) is tuple else tuple(values)
    return tuple(map(engine_value, values))


def column_type(column: list) -> tuple[Optional[str], bool, Optional[Callable]]:
    """``(type, has_null, convert)`` of the values at one parameter position of many sets:
    ``type`` the one SQL type of the non-NULL values (``unknown`` when all are NULL), or None
    when they bind as different types (type such sets one by one, ``parameter_types``);
    ``has_null`` whether some value is ``None`` (which binds as ``unknown``); ``convert`` the
    per-value conversion to engine values, or None when every value is its own."""
    kinds = set(map(type, column))
    has_null = _NONE in kinds
    kinds.discard(_NONE)
    if not kinds:
        return "unknown", has_null, None
    if len(kinds) > 1:
        return None, has_null, engine_value
    kind = kinds.pop()
    t = _SAME_VALUE.get(kind)
    if t is not None:
        return t, has_null, None
    present = [v for v in column if v is not None] if has_null else column
    if kind is int:
        if _INT4[0] <= min(present) and max(present) <= _INT4[1]:
            return "int4", has_null, None
        return None, has_null, engine_value
    if kind is datetime.datetime:
        zones = set(v.tzinfo is None for v in present)
        if zones == {True}:
            return "timestamp", has_null, None
        if zones == {False}:
            return "timestamptz", has_null, engine_value
    return None, has_null, engine_value


def placeholder(k: int, type_: str) -> Call:
    """The expression parameter ``$k+1`` binds as in an INSERT's parameterised rows."""
    return Call(PARAMETER, (Literal(k, "int4"),), type_)


def is_placeholder(e) -> bool:
    return isinstance(e, Call) and e.func == PARAMETER


def substitute_placeholders(e: ScalarExpr, base: int = 0) -> ScalarExpr:
    """``e`` with each placeholder of parameter ``k`` replaced by ``Column(base + k)``."""
    if isinstance(e, Call):
        if e.func == PARAMETER:
            return Column(base + e.args[0].value)
        return Call(e.func, tuple(substitute_placeholders(a, base) for a in e.args), e.type)
    if isinstance(e, If):
        return If(substitute_placeholders(e.cond, base), substitute_placeholders(e.then, base),
                  substitute_placeholders(e.els, base), e.type)
    return e


def unknown_input_casts(e: ScalarExpr) -> set[str]:
    """The func ids ``e`` applies directly to a placeholder of type ``unknown`` (a text or
    NULL parameter): the input functions that parse it at evaluation time."""
    out: set[str] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Call):
            if x.func != PARAMETER:
                out.update(x.func for a in x.args if is_placeholder(a) and a.type == "unknown")
                stack.extend(x.args)
        elif isinstance(x, If):
            stack.extend((x.cond, x.then, x.els))
    return out
