"""Incremental operators: delta in, delta out, one timestamp at a time.

Owns the operator protocol every module of this package implements, and the small
helpers they share.  The dataflow (``compute.render.dataflow``) processes all updates at time
``t`` before any update at a later time; within ``t`` it feeds each operator chunks of
consolidated-or-not ``(row, diff)`` pairs through ``push(port, chunk, time)`` and, once
every input of an operator has delivered everything for ``t``, calls ``flush(time, budget)``
(only for operators whose ``needs_flush`` is set; the render calls flush in topological
order, again while ``flush_pending()``).  Both return ``(oks, errs)``: lists of ``(row, diff)`` and of
``(error_row, diff)`` where an error row is ``(sqlstate, message)``.

Invariants: operator state is consolidated "as of the time being processed" (no times
inside), so an update costs work proportional to the change; a *linear* operator
(MFP, Negate, Union, FlatMap, Join in each input) emits from ``push``; a non-linear
one (Reduce, TopK, Threshold, Distinct) only accumulates in ``push`` and emits the net
change of its output for the time in ``flush``, so downstream never sees intermediate
states of one time.  A data error (``EvalError``) becomes an error row; a Python
exception escaping an operator is a bug.

Deliberately not here: scheduling and fuel (``compute.render.dataflow``), expression compilation
(``expr.compile``).
"""
from __future__ import annotations

from operator import itemgetter
from typing import Callable, Optional, Sequence

from expr.scalar import Column, ScalarExpr
from repr.errors import EvalError

__all__ = ["Operator", "EMPTY", "take_touched", "consolidate_pairs", "key_function", "split_by_diff", "err_rows"]

#: the shared empty output (never mutated)
EMPTY: tuple = ()


class Operator:
    """Base class.  ``n_inputs`` ports; ``needs_flush``: whether ``flush`` must run at the
    end of every time in which the operator received input."""

    n_inputs = 1
    needs_flush = False

    def push(self, port: int, chunk: list, time: int):
        raise NotImplementedError

    def flush(self, time: int, budget: Optional[int] = None):
        """Emit the net change of the time; ``budget`` bounds the work (touched keys) of
        one call, and ``flush_pending()`` says whether another call is needed."""
        return EMPTY, EMPTY

    def flush_pending(self) -> bool:
        return False

    def hydrate_only(self) -> bool:  # pragma: no cover - informational
        return False


def take_touched(touched, budget: Optional[int]):
    """The touched keys (a set) or ``(key, value)`` pairs (a dict) to flush now, removed
    from ``touched``: all of them, or ``budget`` of them."""
    if budget is None or len(touched) <= budget:
        out = list(touched.items()) if isinstance(touched, dict) else list(touched)
        touched.clear()
        return out
    pop = touched.popitem if isinstance(touched, dict) else touched.pop
    return [pop() for _ in range(max(1, budget))]


def consolidate_pairs(pairs) -> list:
    """``(row, diff)`` pairs summed per row, zeros dropped."""
    acc: dict = {}
    get = acc.get
    for row, d in pairs:
        acc[row] = get(row, 0) + d
    return [(r, d) for r, d in acc.items() if d]


def split_by_diff(chunk) -> dict:
    """``diff -> [row, ...]`` (typically one or two groups: +1 and -1)."""
    groups: dict = {}
    for row, d in chunk:
        lst = groups.get(d)
        if lst is None:
            groups[d] = [row]
        else:
            lst.append(row)
    return groups


def err_rows(errors: Sequence[EvalError], diff: int) -> list:
    return [((e.sqlstate, e.message), diff) for e in errors]


def key_function(exprs: Sequence[ScalarExpr]) -> Callable[..., tuple]:
    """``row -> tuple`` of the expressions' values.  Column-only keys use ``itemgetter``;
    others are compiled (and may raise ``EvalError``).  Always returns a tuple."""
    exprs = tuple(exprs)
    if not exprs:
        return lambda row, time=None: ()
    if all(isinstance(e, Column) for e in exprs):
        idx = [e.index for e in exprs]
        if len(idx) == 1:
            i = idx[0]
            f = lambda row, time=None: (row[i],)  # noqa: E731
            f.key_column = i  # lets batch builders inline the key (compute.arrangement.spine)
            return f
        g = itemgetter(*idx)
        return lambda row, time=None: g(row)
    from expr.compile import compile_scalar
    from expr.scalar import Call
    f = compile_scalar(Call("record", exprs, "record"))
    return f


def column_getter(indexes: Sequence[int]) -> Callable[[tuple], tuple]:
    """``row -> tuple(row[i] for i in indexes)`` as fast as Python allows."""
    idx = tuple(indexes)
    if not idx:
        return lambda row: ()
    if len(idx) == 1:
        i = idx[0]
        return lambda row: (row[i],)
    return itemgetter(*idx)
