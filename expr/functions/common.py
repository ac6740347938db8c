"""What every family of ``expr.functions`` builds with: ``FuncImpl``, the table helper and the
few semantics several families share.

Owns ``FuncImpl`` (how one func id evaluates), ``add`` (how a family fills its own table),
PostgreSQL's shared errors (``division_by_zero``, ``float_overflow``, ``int_out_of_range``, ...), ``check_int`` (an
integer type's range check, used by integer arithmetic, casts and ``sum``) and the NaN-aware
comparisons of ``double precision``, ``real`` and ``numeric`` (``nan_aware_comparisons``:
NaN equals NaN and sorts after every other value, as in PostgreSQL).
Invariant: imports no family module (every family may import this one), so the families
form no import circle; the objects an inline template's ``env`` names are defined once here
or in one family, so one name means one object across the registry (the assembler checks).
Deliberately not here: any family's func ids and the registry itself (``expr.functions``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from repr.errors import EvalError
from repr.strconv import INT_RANGES

__all__ = ["FuncImpl", "add", "division_by_zero", "float_overflow", "float_underflow", "int_out_of_range", "check_int",
           "nan_aware_comparisons"]


@dataclass(frozen=True)
class FuncImpl:
    """How to evaluate one func id."""
    fn: Callable[..., Any]
    #: NULL in any argument gives NULL without calling ``fn``
    strict: bool = True
    #: Python expression over argument variables ``{0}, {1}, ...`` and a scratch variable
    #: ``{r}``, equivalent to ``fn`` on non-NULL arguments; may use names from ``env``
    inline: str | None = None
    env: dict = field(default_factory=dict)
    #: compiled by ``expr.compile`` with control flow (and, or, coalesce)
    lazy: bool = False
    #: ``fn`` over a list of non-NULL values (one-argument functions only): the same values,
    #: and the first error in list order, as ``[fn(v) for v in values]``; a column-at-a-time
    #: caller (``mzlite.bulk``) uses it where one C-level pass can serve the whole column
    many: Callable[[list], list] | None = None


def add(table: dict, name: str, fn, strict: bool = True, inline: str | None = None, env: dict | None = None,
        lazy: bool = False, many=None) -> None:
    """Put the implementation of ``name`` into a family's own ``table``; a func id defined
    twice in one family is a bug."""
    if name in table:
        raise AssertionError(f"expr.functions: {name} defined twice")
    table[name] = FuncImpl(fn, strict, inline, env or {}, lazy, many)


def division_by_zero() -> EvalError:
    return EvalError("22012", "division by zero")


def float_overflow() -> EvalError:
    return EvalError("22003", "value out of range: overflow")


def float_underflow() -> EvalError:
    return EvalError("22003", "value out of range: underflow")


def int_out_of_range(t: str) -> EvalError:
    return EvalError("22003", f"{INT_RANGES[t][2]} out of range")


def check_int(t: str):
    """The range check of integer type ``t``: the value itself, or 22003."""
    lo, hi, _ = INT_RANGES[t]

    def chk(v):
        if lo <= v <= hi:
            return v
        raise int_out_of_range(t)
    return chk


# ------------------------------------------------------------- NaN-aware comparisons

def _nan_lt(a, b):
    # NaN sorts after everything and equals itself (PostgreSQL)
    return a == a and b != b


def _nan_le(a, b):
    return b != b or (a == a and a <= b)


_NAN_ENV = {"_nan_lt": _nan_lt, "_nan_le": _nan_le}


def nan_aware_comparisons(t: str) -> dict[str, FuncImpl]:
    """``eq_<t>`` ... ``gte_<t>`` for a type whose values may be NaN (``float8``, ``numeric``)."""
    table: dict = {}
    add(table, f"eq_{t}", lambda a, b: a == b or (a != a and b != b),
        inline="({0} == {1} or ({0} != {0} and {1} != {1}))")
    add(table, f"neq_{t}", lambda a, b: a != b and (a == a or b == b),
        inline="({0} != {1} and ({0} == {0} or {1} == {1}))")
    add(table, f"lt_{t}", lambda a, b: a < b if a == a and b == b else _nan_lt(a, b),
        inline="(({0} < {1}) if ({0} == {0} and {1} == {1}) else _nan_lt({0}, {1}))", env=_NAN_ENV)
    add(table, f"lte_{t}", lambda a, b: a <= b if a == a and b == b else _nan_le(a, b),
        inline="(({0} <= {1}) if ({0} == {0} and {1} == {1}) else _nan_le({0}, {1}))", env=_NAN_ENV)
    add(table, f"gt_{t}", lambda a, b: a > b if a == a and b == b else _nan_lt(b, a),
        inline="(({0} > {1}) if ({0} == {0} and {1} == {1}) else _nan_lt({1}, {0}))", env=_NAN_ENV)
    add(table, f"gte_{t}", lambda a, b: a >= b if a == a and b == b else _nan_le(b, a),
        inline="(({0} >= {1}) if ({0} == {0} and {1} == {1}) else _nan_le({1}, {0}))", env=_NAN_ENV)
    return table
