"""FlatMap: table functions applied to each row (``generate_series``, ``unnest``).

Owns ``FlatMapOp`` (linear: emits from ``push``): each input row ``r`` with diff ``d``
becomes ``r + extra`` with diff ``d`` for every row ``extra`` the function produces.
Invariant: a data error (NULL-free bad arguments such as a zero step) becomes an error
row with the input row's diff.  Deliberately not here: set-returning functions in the
select list (the planner lowers those to FlatMap).
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from compute.render.operator import EMPTY, Operator
from compute.render.reduce import row_evaluator
from expr.relation import ORDINALITY
from expr.scalar import ScalarExpr
from expr.window import unnest_window
from repr.arrays import unnest_zip
from repr.errors import EvalError

__all__ = ["FlatMapOp", "TABLE_FUNCTIONS", "resolve_table_function"]


def generate_series(*args):
    if len(args) not in (2, 3):
        raise EvalError("42883", "generate_series expects 2 or 3 arguments")
    if any(a is None for a in args):
        return ()
    start, stop = args[0], args[1]
    step = args[2] if len(args) > 2 else 1
    if step == 0:
        raise EvalError("22023", "step size cannot equal zero")
    if all(isinstance(a, int) for a in (start, stop, step)):
        if step > 0:
            return [(v,) for v in range(start, stop + 1, step)]
        return [(v,) for v in range(start, stop - 1, step)]
    out = []
    v = start
    while (v <= stop) if step > 0 else (v >= stop):
        out.append((v,))
        v += step
    return out


def unnest(arr):
    if arr is None:
        return ()
    return [(v,) for v in arr]


TABLE_FUNCTIONS = {
    "generate_series": generate_series,
    "unnest": unnest,
    "unnest_array": unnest,
    "unnest_list": unnest,
    "unnest_window": unnest_window,  # a window aggregate's list back to rows (compute.render.window)
    "unnest_zip": unnest_zip,  # unnest(a, b, ...) in FROM (repr.arrays)
}


def resolve_table_function(func: str) -> Optional[Callable]:
    """The implementation of ``FlatMap`` function ``func`` (None when unknown)."""
    if func.endswith(ORDINALITY):
        f = resolve_table_function(func[:-len(ORDINALITY)])
        if f is None:
            return None

        def numbered(*args):
            return [tuple(x) + (i,) for i, x in enumerate(f(*args), 1)]
        return numbered
    f = TABLE_FUNCTIONS.get(func)
    if f is None:  # jsonb table functions
        from expr.functions import TABLE_FUNCTIONS as JSONB_TABLE_FUNCTIONS
        f = JSONB_TABLE_FUNCTIONS.get(func, (None,))[0]
    return f


class FlatMapOp(Operator):
    def __init__(self, func: str, exprs: Sequence[ScalarExpr]):
        f = resolve_table_function(func)
        if f is None:
            raise AssertionError(f"flat_map: unknown table function {func!r}")
        self.func = f
        self.args = row_evaluator(exprs)

    def push(self, port: int, chunk: list, time: int):
        f = self.func
        args = self.args
        out = []
        errs = []
        for row, d in chunk:
            try:
                extra = f(*args(row))
            except EvalError as e:
                errs.append(((e.sqlstate, e.message), d))
                continue
            out.extend([(row + x, d) for x in extra])
        return out, (errs or EMPTY)
