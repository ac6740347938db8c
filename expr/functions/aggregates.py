"""The aggregate finishers: an aggregate's SQL value from what the Reduce operator keeps.

Owns, for the aggregates ``sql.functions.aggregates`` resolves, the parts that give an
accumulated state its SQL value, shared by the Reduce and window operators and the
reference evaluator: ``sum_finish`` (PostgreSQL's result type: a bigint sum raises 22003),
``avg_finish`` and ``variance_finish`` (numeric results at PostgreSQL's scales; double
precision by PostgreSQL <= 11's formulas; interval ``avg``), ``collect_finish``
(``array_agg``, ``jsonb_agg``, ``jsonb_object_agg``, ``list_agg`` over the values in
aggregation order), ``ordered_aggregate`` (the aggregates with ``ORDER BY`` inside the call)
and ``string_agg_join``.
Invariant: raises only ``EvalError``; a finisher of no input gives NULL (None).
Deliberately not here: accumulating (``compute.render.reduce``), ``count``/``min``/``max``/
``bool_and``/``bool_or`` (the operator's own, nothing to finish) and the signatures.
"""
from __future__ import annotations

from decimal import Decimal
import math
from typing import Optional

from expr.functions.arrays import array_create_md
from expr.functions.common import check_int
from expr.functions.floats import float8_to_float4
from expr.functions.jsonb import to_jsonb_value
from expr.functions.numeric import numeric_div, select_div_scale, sqrt_at
from repr.arrays import Array
from repr.dates import interval_div
from repr.errors import EvalError
from repr.jsonb import Jsonb, sort_pairs
from repr.lists import List
from repr.numeric import NUMERIC_CONTEXT as _C

_CHECK_INT = {t: check_int(t) for t in ("int2", "int4", "int8")}

# ------------------------------------------------------------------ sum, avg, variance


def sum_finish(total, output_type: str):
    """The SQL value of ``sum`` from an accumulated total (None when there were no rows)."""
    if total is None:
        return None
    if output_type in _CHECK_INT:
        return _CHECK_INT[output_type](total)
    if output_type == "numeric":
        return total if isinstance(total, Decimal) else Decimal(total)
    if output_type == "float8":
        return float(total)
    if output_type == "float4":  # a real sum, rounded once to real
        return float8_to_float4(float(total))
    return total


def avg_finish(total, count: int, output_type: str):
    """``avg`` from the sum and the count of non-NULL inputs, with PostgreSQL's scale."""
    if not count or total is None:
        return None
    if output_type == "interval":  # PostgreSQL's interval_div of the sum
        return interval_div(total, float(count))
    if output_type == "float8":
        return float(total) / count
    t = total if isinstance(total, Decimal) else Decimal(total)
    return numeric_div(t, Decimal(count))


def variance_finish(count: int, total, total_sq, func: str, output_type: str):
    """``var_samp``/``var_pop``/``stddev_samp``/``stddev_pop`` from the count, the sum
    and the sum of squares of the non-NULL inputs, as PostgreSQL computes them."""
    sample = func in ("var_samp", "stddev_samp", "variance", "stddev")
    if count == 0 or (sample and count == 1):
        return None
    stddev = func.startswith("stddev")
    if output_type == "float8":
        n = float(count)
        sx, sxx = float(total), float(total_sq)
        num = n * sxx - sx * sx  # PostgreSQL <= 11's float8 formula (it keeps no running mean)
        if num <= 0.0:
            return 0.0
        var = num / (n * (n - 1.0 if sample else n))
        return math.sqrt(var) if stddev else var
    sx = total if isinstance(total, Decimal) else Decimal(total)
    sxx = total_sq if isinstance(total_sq, Decimal) else Decimal(total_sq)
    n = Decimal(count)
    num = _C.subtract(_C.multiply(n, sxx), _C.multiply(sx, sx))
    if num <= 0:
        return Decimal(0)
    den = n * (n - 1 if sample else n)
    var = numeric_div(num, den)
    if stddev:
        var = sqrt_at(var, select_div_scale(num, den))
    return var


# ------------------------------------------------------------------ collecting aggregates


def collect_finish(func: str, values: list):
    """The value of ``array_agg``/``jsonb_agg``/``jsonb_object_agg`` over ``values`` (in
    aggregation order; NULLs kept); None for no values."""
    if not values:
        return None
    if func == "array_agg":
        if any(isinstance(v, Array) for v in values):
            return _accumulate_arrays(values)
        return Array(values)
    if func == "list_agg":  # Materialize's list_agg (always the ordered form: planner.bind_lists)
        return List(values)
    if func == "jsonb_agg":
        return Jsonb(tuple(to_jsonb_value(v) for v in values))
    if func == "jsonb_object_agg":
        pairs = []
        for kv in values:
            if kv is None:
                continue
            k, v = kv
            if k is None:
                raise EvalError("22023", "field name must not be null")
            pairs.append((k, to_jsonb_value(v)))
        return Jsonb(sort_pairs(pairs))
    raise EvalError("XX000", f"unknown collecting aggregate {func}")


def _accumulate_arrays(values: list):
    """``array_agg`` over arrays: one more dimension (PostgreSQL's errors otherwise)."""
    for v in values:
        if v is None:
            raise EvalError("22004", "cannot accumulate null arrays")
        if not v:
            raise EvalError("2202E", "cannot accumulate empty arrays")
    if len({v.dims for v in values}) != 1:
        raise EvalError("2202E", "cannot accumulate arrays of different dimensionality")
    return array_create_md(*values)


# ------------------------------------------------------------------ ORDER BY inside aggregates


def _safe(v):
    """A sort key for any value (records with NULL fields included): NULL last."""
    if v is None:
        return (1,)
    if type(v) is tuple:
        return (0, tuple(_safe(x) for x in v))
    return (0, v)


def ordered_aggregate(func: str, records, order_by: tuple):
    """The value of an ordered-form aggregate (``expr.relation.AggregateExpr.order_by``)
    over ``records``: ``(record(value, key1..keyN), count)`` pairs with positive counts.
    Rows sort by the keys (each ``(desc, nulls_last)``), ties by the value, so the result
    is deterministic (PostgreSQL leaves ties in input order)."""
    items = [r for r, c in records for _ in range(c)]
    if not items:
        return None
    items.sort(key=lambda r: _safe(r[0]))
    for i in reversed(range(len(order_by))):
        desc, nulls_last = order_by[i]
        j = i + 1
        if nulls_last != desc:
            items.sort(key=lambda r: (r[j] is None, r[j]), reverse=desc)
        else:
            items.sort(key=lambda r: (r[j] is not None, r[j]), reverse=desc)
    values = [r[0] for r in items]
    if func == "string_agg":
        return string_agg_join(values)
    return collect_finish(func, values)


def string_agg_join(values) -> Optional[str]:
    """string_agg over ``(value, delimiter)`` records in order: NULL values skipped, each
    later value preceded by its own delimiter (NULL as empty); NULL when nothing is left."""
    parts: list = []
    for v in values:
        if v is None or v[0] is None:
            continue
        if parts:
            parts.append(v[1] or "")
        parts.append(v[0])
    return "".join(parts) if parts else None
