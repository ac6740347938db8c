"""Scalar expressions (MIR-like) over rows, the vocabulary shared with the planner.

Owns the expression *values*: ``Column``, ``Literal``, ``Call``, ``If``, ``CallMzNow``.
Invariant: an expression is immutable and fully resolved: every ``Call.func`` names
an implementation in ``expr.functions`` and carries its SQL return type name, so
evaluation never looks anything up by SQL name.  Type names are PostgreSQL's
internal short names as strings: ``bool, int2, int4, int8, numeric, float8, text``
(later issues add more); ``unknown`` is the type of an untyped NULL literal.
Deliberately not here: compilation to Python functions (``expr.compile``) and
function implementations (``expr.functions``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union


@dataclass(frozen=True)
class Column:
    """The value of input column ``index`` (0-based)."""
    index: int


@dataclass(frozen=True)
class Literal:
    """A constant.  ``value`` is a Python value of the type (None is SQL NULL)."""
    value: Any
    type: str


@dataclass(frozen=True)
class Call:
    """A call of the implementation named ``func`` (a key of ``expr.functions``).

    ``type`` is the SQL type name of the result.  NULL handling, errors and
    short-circuiting (``and``, ``or``) are the implementation's business.
    """
    func: str
    args: tuple["ScalarExpr", ...]
    type: str


@dataclass(frozen=True)
class If:
    """``CASE WHEN cond THEN then ELSE els END``; ``els`` is evaluated only when cond is not true."""
    cond: "ScalarExpr"
    then: "ScalarExpr"
    els: "ScalarExpr"
    type: str


@dataclass(frozen=True)
class CallMzNow:
    """``mz_now()``: the logical time at which the row is evaluated (temporal filters)."""
    type: str = "mz_timestamp"


ScalarExpr = Union[Column, Literal, Call, If, CallMzNow]


def columns_referenced(expr: ScalarExpr) -> set[int]:
    """The input column indexes ``expr`` reads."""
    out: set[int] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Column):
            out.add(e.index)
        elif isinstance(e, Call):
            stack.extend(e.args)
        elif isinstance(e, If):
            stack.extend((e.cond, e.then, e.els))
    return out


def permute(expr: ScalarExpr, mapping) -> ScalarExpr:
    """``expr`` with every ``Column(i)`` replaced by ``Column(mapping[i])``."""
    if isinstance(expr, Column):
        return Column(mapping[expr.index])
    if isinstance(expr, Call):
        return Call(expr.func, tuple(permute(a, mapping) for a in expr.args), expr.type)
    if isinstance(expr, If):
        return If(permute(expr.cond, mapping), permute(expr.then, mapping), permute(expr.els, mapping), expr.type)
    return expr


def substitute(expr: ScalarExpr, replacements) -> ScalarExpr:
    """``expr`` with every ``Column(i)`` replaced by the expression ``replacements[i]``."""
    if isinstance(expr, Column):
        return replacements[expr.index]
    if isinstance(expr, Call):
        return Call(expr.func, tuple(substitute(a, replacements) for a in expr.args), expr.type)
    if isinstance(expr, If):
        return If(substitute(expr.cond, replacements), substitute(expr.then, replacements),
                  substitute(expr.els, replacements), expr.type)
    return expr


def contains_mz_now(expr: ScalarExpr) -> bool:
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, CallMzNow):
            return True
        if isinstance(e, Call):
            stack.extend(e.args)
        elif isinstance(e, If):
            stack.extend((e.cond, e.then, e.els))
    return False


def expr_type(expr: ScalarExpr, input_types=None) -> str:
    """The SQL type name of ``expr`` (column types come from ``input_types``)."""
    if isinstance(expr, Column):
        return input_types[expr.index] if input_types is not None else "unknown"
    return expr.type


TRUE = Literal(True, "bool")
FALSE = Literal(False, "bool")
