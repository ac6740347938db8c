"""Signatures of the aggregate and window functions.

Owns which aggregate a call resolves to and its input and output types (``AGGREGATES``, as
PostgreSQL's pg_aggregate: ``sum`` over an integer is ``bigint`` (``numeric`` over
``bigint``), ``avg`` and the variances are ``numeric`` except over ``double precision``
(``real``'s are double's, its input converted exactly), ``min``/``max`` over the orderable
types, ``bool_and``/``bool_or``, ``string_agg``, and ``sum``/``avg`` of ``interval``),
``ALIASES`` (``stddev``, ``variance``, ``every``), the polymorphic aggregates
(``resolve_aggregate``: ``array_agg(x) -> x[]``, ``jsonb_agg``, ``jsonb_object_agg``,
``list_agg(x) -> x list``), and the window functions' signatures (``WINDOW_FUNCTIONS``,
bound by ``planner.windows``).  ``count`` is ``sql.functions.resolve_aggregate``'s own.
Invariant: every aggregate named here is one ``expr.relation.AggregateExpr`` knows; the
finishers of those that need one are ``expr.functions.aggregates``'.
Deliberately not here: the scalar functions (the type families).
"""
from __future__ import annotations

from sql.functions.common import AggResolution, no_function, sigs
from sql.types import TYPES
from sql.types.arrays import array_of, is_array
from sql.types.lists import list_of

_NUMBERS = ("int2", "int4", "int8", "numeric", "float4", "float8")
#: the types ``min``/``max`` take (PostgreSQL's btree-orderable types mzlite has)
_ORDERED = ("int2", "int4", "int8", "numeric", "float4", "float8", "text", "mz_timestamp",
            "date", "time", "timestamp", "timestamptz", "interval")
_SUM = {"int2": "int8", "int4": "int8", "int8": "numeric", "numeric": "numeric", "float8": "float8",
        "float4": "float4", "interval": "interval"}

AGGREGATES = sigs(
    *(("sum", (t,), ret, "sum") for t, ret in _SUM.items()),
    *(("avg", (t,), "float8" if t == "float8" else "numeric", "avg") for t in _NUMBERS if t != "float4"),
    ("avg", ("interval",), "interval", "avg"),
    *((n, (t,), t, n) for n in ("min", "max") for t in _ORDERED),
    ("bool_and", ("bool",), "bool", "bool_and"), ("bool_or", ("bool",), "bool", "bool_or"),
    ("string_agg", ("text", "text"), "text", "string_agg"),
    *((n, (t,), "float8" if t == "float8" else "numeric", n) for n in ("stddev_samp", "stddev_pop", "var_samp",
                                                                        "var_pop") for t in _NUMBERS if t != "float4"))
ALIASES = {"stddev": "stddev_samp", "variance": "var_samp", "every": "bool_and"}
#: the aggregates ``resolve_aggregate`` resolves (any argument type)
POLYMORPHIC = ("array_agg", "jsonb_agg", "jsonb_object_agg", "list_agg")
#: aggregates that take no unknown argument (PostgreSQL: not unique among the numeric ones)
NUMERIC_ONLY = frozenset({"sum", "avg", "stddev_samp", "stddev_pop", "var_samp", "var_pop"})


def resolve_aggregate(n: str, args: tuple):
    """``array_agg(x) -> x[]``, ``jsonb_agg(x) -> jsonb``, ``jsonb_object_agg(k, v) -> jsonb``,
    ``list_agg(x) -> x list`` (an unknown argument is text); None for other names."""
    if n not in POLYMORPHIC:
        return None
    if len(args) != (2 if n == "jsonb_object_agg" else 1):
        raise no_function(n, args)
    if n == "jsonb_object_agg":
        return AggResolution("jsonb_object_agg", "record", "jsonb")
    t = "text" if args[0] == "unknown" else args[0]
    if n == "jsonb_agg":
        return AggResolution("jsonb_agg", t, "jsonb")
    if n == "list_agg":
        if t == "record":
            raise no_function(n, args)
        return AggResolution("list_agg", t, list_of(t))
    if is_array(t):  # array_agg(anyarray): one more dimension (expr.functions.aggregates)
        return AggResolution("array_agg", t, t)
    if t not in TYPES:
        raise no_function(n, args)
    return AggResolution("array_agg", t, array_of(t))


# ---- window functions (bound by planner.windows) ----
#: name -> (argument types, result type); "any" takes the argument's type, "anycompatible"
#: the common type of the value and the default (lag/lead); optional arguments trail
WINDOW_FUNCTIONS: dict[str, tuple[tuple[tuple[str, ...], ...], str]] = {
    "row_number": (((),), "int8"),
    "rank": (((),), "int8"),
    "dense_rank": (((),), "int8"),
    "percent_rank": (((),), "float8"),
    "cume_dist": (((),), "float8"),
    "ntile": ((("int4",),), "int4"),
    "lag": ((("any",), ("any", "int4"), ("anycompatible", "int4", "anycompatible")), "anycompatible"),
    "lead": ((("any",), ("any", "int4"), ("anycompatible", "int4", "anycompatible")), "anycompatible"),
    "first_value": ((("any",),), "any"),
    "last_value": ((("any",),), "any"),
    "nth_value": ((("any", "int4"),), "any"),
}
