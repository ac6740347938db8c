"""Map/Filter/Project (fused), including temporal filters over ``mz_now()``.

Owns ``MfpOp``: applies a compiled ``MapFilterProject`` to each chunk of updates.  It
is linear, so it emits from ``push``.  A pure projection is applied by ``itemgetter``
keeping each row's diff; otherwise rows are grouped by diff (almost always +1 and
-1) so the compiled batch function runs over plain row lists; errors carry the diff
of the row that raised them, so a retracted bad row retracts its error.

Temporal filters: predicates of the form ``mz_now() <op> expr`` (or mirrored) with
``<op>`` one of ``< <= = >= >`` are taken out of the MFP and turned into a validity
interval ``[lower, upper)`` per row, as Materialize does: an update ``(row, t, d)``
becomes ``(row, max(t, lower), d)`` and, for a finite upper, ``(row, max(t, upper), -d)``.
Updates at times after the current one are handed to the dataflow through
``self.future`` (``(row, time, diff)``), which schedules them at their time.
Invariant: an update is emitted at a time ``>= `` the time being processed.

Deliberately not here: compilation (``expr.compile``), scheduling future times
(``compute.render.dataflow``).
"""
from __future__ import annotations

from decimal import Decimal
import math
from operator import itemgetter
from typing import Optional

from compute.render.operator import EMPTY, Operator, split_by_diff
from expr.compile import compile_mfp, compile_mfp_pairs
from expr.mfp import MapFilterProject
from expr.scalar import Call, CallMzNow, If, contains_mz_now
from repr.errors import EvalError
from repr.timestamp import MAX

__all__ = ["MfpOp", "split_temporal"]

_FLIP = {"lt": "gt", "lte": "gte", "gt": "lt", "gte": "lte", "eq": "eq"}


def _base_cmp(func: str) -> Optional[str]:
    base = func.split("_", 1)[0]
    return base if base in _FLIP else None


def _is_now(e) -> bool:
    while isinstance(e, Call) and e.func.startswith("cast_") and len(e.args) == 1:
        e = e.args[0]
    return isinstance(e, CallMzNow)


def split_temporal(mfp: MapFilterProject):
    """``(mfp', bounds)`` where ``mfp'`` drops the temporal predicates and appends one
    output column per bound expression, and ``bounds`` is a list of ``(op, position)``
    (``op`` relative to ``mz_now() op expr``); ``None`` when there are none."""
    temporal = []
    rest = []
    for p in mfp.predicates:
        if isinstance(p, Call) and len(p.args) == 2 and _base_cmp(p.func):
            a, b = p.args
            op = _base_cmp(p.func)
            if _is_now(a) and not contains_mz_now(b):
                temporal.append((op, b))
                continue
            if _is_now(b) and not contains_mz_now(a):
                temporal.append((_FLIP[op], a))
                continue
        rest.append(p)
    if not temporal:
        return None
    width = mfp.input_arity + len(mfp.expressions)
    exprs = tuple(mfp.expressions) + tuple(e for _, e in temporal)
    proj = tuple(mfp.output_projection())
    out_arity = len(proj)
    new = MapFilterProject(mfp.input_arity, exprs, tuple(rest),
                           proj + tuple(range(width, width + len(temporal))))
    bounds = [(op, out_arity + i) for i, (op, _) in enumerate(temporal)]
    return new, bounds, out_arity


def _as_time(v) -> Optional[int]:
    """A bound value as an integer time (``None``: NULL); fractional values round up
    for lower bounds in the caller's formulas via ceil."""
    if v is None:
        return None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, (float, Decimal)):
        if v != v:
            return None
        return math.ceil(v) if not isinstance(v, float) or math.isfinite(v) else (MAX if v > 0 else 0)
    raise EvalError("22023", f"mz_now() compared with a non-numeric value {v!r}")


class MfpOp(Operator):
    """Map/Filter/Project; with temporal predicates, emits future retractions."""

    def __init__(self, mfp: MapFilterProject):
        self.mfp = mfp
        split = split_temporal(mfp)
        self.temporal = split is not None
        #: future updates ``(row, time, diff)`` produced by the last push (temporal only)
        self.future: list = []
        #: a pure projection: rows are re-tupled by ``itemgetter``, diffs kept as they are
        self.project = None
        if not mfp.expressions and not mfp.predicates:
            idx = mfp.output_projection()
            if len(idx) == 1:
                i = idx[0]
                self.project = lambda r: (r[i],)
            elif idx:
                self.project = itemgetter(*idx)
            else:
                self.project = lambda r: ()
        if split is None:
            self.fn = compile_mfp(mfp)
            #: the same MFP over ``(row, diff)`` pairs (the non-temporal hot path)
            self.pairs_fn = compile_mfp_pairs(mfp)
            self.uses_time = any(contains_mz_now(e) for e in mfp.expressions + mfp.predicates)
        else:
            m2, self.bounds, self.out_arity = split
            self.fn = compile_mfp(m2)
            self.uses_time = True

    def calls(self) -> int:
        """How many calls (and CASEs) the MFP evaluates per row at most: the measure of a
        one-shot scan unit's cost (``compute.render.dataflow``)."""
        n = 0
        stack = list(self.mfp.expressions) + list(self.mfp.predicates)
        while stack:
            e = stack.pop()
            if e.__class__ is Call:
                n += 1
                stack.extend(e.args)
            elif e.__class__ is If:
                n += 1
                stack.extend((e.cond, e.then, e.els))
        return n

    def push(self, port: int, chunk: list, time: int):
        """``chunk``: a list of ``(row, diff)`` pairs, or (a one-shot scan unit) an
        iterator over them, read once."""
        g = self.project
        if g is not None:
            return [(g(r), d) for r, d in chunk], EMPTY
        if not self.temporal:
            out, es = self.pairs_fn(chunk, time=time) if self.uses_time else self.pairs_fn(chunk)
            if es:
                return out, [((e.sqlstate, e.message), d) for e, d in es]
            return out, EMPTY
        fn = self.fn
        out: list = []
        errs: list = []
        for d, rows in split_by_diff(chunk).items():
            if self.uses_time:
                res, es = fn(rows, time=time)
            else:
                res, es = fn(rows)
            if es:
                errs.extend(((e.sqlstate, e.message), d) for e in es)
            if not self.temporal:
                out.extend([(r, d) for r in res])
            else:
                self._temporal(res, d, time, out, errs)
        return out, (errs or EMPTY)

    def _temporal(self, res, d, time, out, errs) -> None:
        bounds = self.bounds
        n = self.out_arity
        future = self.future
        for full in res:
            lower = 0
            upper = None  # empty: unbounded
            try:
                dead = False
                for op, pos in bounds:
                    v = _as_time(full[pos])
                    if v is None:
                        dead = True
                        break
                    if op == "gte":
                        lower = max(lower, v)
                    elif op == "gt":
                        lower = max(lower, v + 1)
                    elif op == "lte":
                        upper = v + 1 if upper is None else min(upper, v + 1)
                    elif op == "lt":
                        upper = v if upper is None else min(upper, v)
                    else:  # eq
                        lower = max(lower, v)
                        upper = v + 1 if upper is None else min(upper, v + 1)
            except EvalError as e:
                errs.append(((e.sqlstate, e.message), d))
                continue
            if dead:
                continue
            start = time if time > lower else lower
            if upper is not None and start >= upper:
                continue
            row = full[:n]
            if start == time:
                out.append((row, d))
            elif start <= MAX:
                future.append((row, start, d))
            if upper is not None and upper <= MAX:
                future.append((row, upper, -d))
