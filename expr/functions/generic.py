"""The functions defined once for values of every type (PostgreSQL's ``anyelement`` forms).

Owns the func ids ``sql.functions.generic`` names and the comparisons every type family's
signatures share: ``eq``/``neq``/``lt``/``lte``/``gt``/``gte`` (the values' own Python order;
float and numeric have NaN-aware twins in their families), ``is_null``/``is_not_null``,
``is_distinct_from``/``is_not_distinct_from`` (NULL equals NULL, NaN equals NaN),
``nullif``, ``greatest``/``least`` (NULLs ignored, NaN greatest), ``coalesce`` (lazy),
``record`` (a row value), ``identity`` (unary plus) and ``raise_cardinality`` (the guard the
binder puts on a scalar subquery: ``If(count > 1, raise_cardinality(), value)``).
Invariant: raises only ``EvalError``; the comparisons' inline templates are what their
functions compute.
Deliberately not here: the type-specific functions (their families) and NULL propagation
(``expr.compile``).
"""
from __future__ import annotations

import functools

from expr.functions.common import add
from repr.errors import EvalError

FUNCTIONS: dict = {}
_add = functools.partial(add, FUNCTIONS)

_add("eq", lambda a, b: a == b, inline="({0} == {1})")
_add("neq", lambda a, b: a != b, inline="({0} != {1})")
_add("lt", lambda a, b: a < b, inline="({0} < {1})")
_add("lte", lambda a, b: a <= b, inline="({0} <= {1})")
_add("gt", lambda a, b: a > b, inline="({0} > {1})")
_add("gte", lambda a, b: a >= b, inline="({0} >= {1})")


def _distinct(a, b):
    """IS DISTINCT FROM: NULL equals NULL, NaN equals NaN."""
    if a is None or b is None:
        return (a is None) != (b is None)
    return a != b and (a == a or b == b)


def _coalesce(*args):
    for a in args:
        if a is not None:
            return a
    return None


def _sort_key(v):
    # NaN (float8 or numeric) sorts after every other value, as in PostgreSQL
    return (1, 0) if v != v else (0, v)


def _greatest(*args):
    vals = [a for a in args if a is not None]
    return max(vals, key=_sort_key) if vals else None


def _least(*args):
    vals = [a for a in args if a is not None]
    return min(vals, key=_sort_key) if vals else None


def _raise_cardinality():
    raise EvalError("21000", "more than one row returned by a subquery used as an expression")


_add("is_null", lambda a: a is None, strict=False, inline="({0} is None)")
_add("is_not_null", lambda a: a is not None, strict=False, inline="({0} is not None)")
_add("is_distinct_from", _distinct, strict=False)
_add("is_not_distinct_from", lambda a, b: not _distinct(a, b), strict=False)
_add("nullif", lambda a, b: None if (a is not None and b is not None and not _distinct(a, b)) else a, strict=False)
_add("coalesce", _coalesce, strict=False, lazy=True)
_add("greatest", _greatest, strict=False)
_add("least", _least, strict=False)
_add("record", lambda *args: tuple(args), strict=False)
_add("identity", lambda a: a, inline="{0}")
_add("raise_cardinality", _raise_cardinality, strict=False)
