"""FlatMap: table functions applied to each row (``generate_series``, ``unnest``).

Owns ``FlatMapOp`` (linear: emits from ``push``): each input row ``r`` with diff ``d``
becomes ``r + extra`` with diff ``d`` for every row ``extra`` the function produces.
Invariant: a data error (NULL-free bad arguments such as a zero step) becomes an error
row with the input row's diff.  Deliberately not here: the table functions themselves
(``expr.table_functions``) and set-returning functions in the select list (the planner
lowers those to FlatMap).
"""
from __future__ import annotations

from typing import Sequence

from compute.render.operator import EMPTY, Operator
from compute.render.reduce import row_evaluator
from expr.scalar import ScalarExpr
from expr.table_functions import resolve_table_function
from repr.errors import EvalError

__all__ = ["FlatMapOp"]


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
