"""Table functions: what a ``FlatMap`` applies to each row (generate_series, unnest, ...).

Owns ``TABLE_FUNCTIONS`` (the FlatMap function id -> implementation table, together with
the jsonb table functions of ``expr.functions.jsonb``) and ``resolve_table_function``,
which the maintained ``compute.render.flat_map.FlatMapOp`` and ``expr.interpret`` both use.
Invariant: an implementation takes the evaluated arguments and returns the rows (tuples)
to append to the input row, in order, as an iterable (``WITH ORDINALITY`` numbers them from 1); NULL
arguments give no rows, and bad arguments raise ``EvalError``.  Deliberately not here:
name resolution and typing (``sql``), and applying the rows to a collection.
"""
from __future__ import annotations

from typing import Callable, Optional

from expr.relation import ORDINALITY
from expr.window import unnest_window
from repr.arrays import unnest_zip
from repr.errors import EvalError

__all__ = ["TABLE_FUNCTIONS", "resolve_table_function", "generate_series", "unnest"]


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
        # lazy one-tuples, made in C as they are consumed (a caller may take them in pieces)
        if step > 0:
            return zip(range(start, stop + 1, step))
        return zip(range(start, stop - 1, step))
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
    "unnest_window": unnest_window,  # a window aggregate's list back to rows (expr.window_eval)
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
