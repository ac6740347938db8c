"""FlatMap: table functions applied to each row (``generate_series``, ``unnest``).

Owns ``FlatMapOp`` (linear: emits from ``push``): each input row ``r`` with diff ``d``
becomes ``r + extra`` with diff ``d`` for every row ``extra`` the function produces.
Invariant: a data error (NULL-free bad arguments such as a zero step) becomes an error
row with the input row's diff.  Bounded work: a push emits at most ``OUTPUT_LIMIT`` pairs
and the rest of its output is produced by the flushes of the same time (``flush_pending``),
so one input row with a huge series never makes one long call.  Deliberately not here: the table functions themselves
(``expr.table_functions``) and set-returning functions in the select list (the planner
lowers those to FlatMap).

Batches: when the flat map is ``generate_series`` feeding a count/sum/avg ``ReduceOp`` (its
only consumer, perhaps through a pure projection: ``fuse_reduce``), an integer series is
never materialised: each input row's series is one ``range``, and its count and sum
(closed form) go straight into the reduce's group; any other series (numeric, timestamps)
is still emitted as rows.
"""
from __future__ import annotations

import ast
from collections import deque
from itertools import islice
import re
from typing import Optional, Sequence

from compute.render.operator import EMPTY, Operator
from compute.render.reduce import row_evaluator
from expr.aggregate import Avg, Count, Sum, new_state
from expr.scalar import ScalarExpr
from expr.table_functions import resolve_table_function
from repr.errors import EvalError

__all__ = ["FlatMapOp"]

#: the most pairs one push or flush emits (a 5-million-row series is 600 bounded calls,
#: each a few milliseconds, between which the runtime may stop for a cancelation)
OUTPUT_LIMIT = 8192

_ROW_COLUMN = re.compile(r"row\[(\d+)\]")


class FlatMapOp(Operator):
    #: a push emits at most ``OUTPUT_LIMIT`` pairs; flushes emit the rest
    needs_flush = True

    def __init__(self, func: str, exprs: Sequence[ScalarExpr], input_arity: Optional[int] = None):
        f = resolve_table_function(func)
        if f is None:
            raise AssertionError(f"flat_map: unknown table function {func!r}")
        self.func = f
        self.func_name = func
        self.input_arity = input_arity
        self.args = row_evaluator(exprs)
        #: ``(reduce, key cols, [(agg, source)])`` when fused into a reduce (``fuse_reduce``)
        self._into = None
        #: the pushed chunks whose output is not all emitted yet (``_expand`` generators)
        self._pending: deque = deque()
        self._errs: list = []

    def fuse_reduce(self, reduce_op, project: Optional[Sequence[int]] = None) -> bool:
        """Feed ``reduce_op`` (the only consumer, through the pure projection ``project`` of
        this operator's output if given) integer series as whole batches: per input row one
        group update with the series' count and sum.  Whether that is possible: the function
        is ``generate_series``, the reduce has ``batch_spec`` (its inputs are columns and
        literals), its aggregates are counts, sums and averages, and its group key reads only
        the input row's columns."""
        spec = getattr(reduce_op, "batch_spec", None)
        input_arity = self.input_arity
        if self.func_name != "generate_series" or spec is None or input_arity is None:
            return False
        key_parts, agg_parts = spec
        aggs = reduce_op.aggs

        def source(part):
            """``('col', i)`` of the input row, ``('series',)``, or ``('lit', value)``."""
            m = _ROW_COLUMN.fullmatch(part)
            if m is None:
                try:
                    return ("lit", ast.literal_eval(part))
                except (ValueError, SyntaxError):
                    return None
            c = int(m.group(1))
            if project is not None:
                c = project[c]
            return ("col", c) if c < input_arity else ("series",)
        keys = [source(p) for p in key_parts]
        if any(k is None or k[0] != "col" for k in keys):
            return False
        sources = [(a, source(p)) for p, a in zip(agg_parts, aggs)]
        if any(s_ is None or type(a) not in (Count, Sum, Avg) for a, s_ in sources):
            return False
        self._into = (reduce_op, tuple(k[1] for k in keys), sources)
        return True

    def _fused_push(self, row, d, vals) -> bool:
        """One input row's integer series into the reduce's group; False when the series is
        not of integers (the caller emits its rows)."""
        if len(vals) not in (2, 3) or not all(type(v) is int for v in vals):
            return False
        start, stop = vals[0], vals[1]
        step = vals[2] if len(vals) > 2 else 1
        if step == 0:
            return False  # the error is the row path's
        r = range(start, stop + 1, step) if step > 0 else range(start, stop - 1, step)
        n = len(r)
        if not n:
            return True
        total = n * (r[0] + r[-1]) // 2
        reduce_op, key_cols, sources = self._into
        key = tuple(row[c] for c in key_cols)
        groups = reduce_op.groups
        G = groups.get(key)
        if G is None:
            G = groups[key] = new_state(reduce_op.aggs)
        reduce_op.touched.add(key)
        nd = n * d
        G[0] += nd
        for a, src in sources:
            o = a.off
            if src[0] == "series":
                v, per = total, True
            else:
                v, per = (row[src[1]] if src[0] == "col" else src[1]), False
            if type(a) is Count:
                if v is not None:
                    G[o] += nd
            elif v is not None:
                G[o] += v * d if per else v * nd
                G[o + 1] += nd
        return True

    def push(self, port: int, chunk: list, time: int):
        self._pending.append(self._expand(chunk))
        return self._drain()

    def flush(self, time: int, budget=None):
        """The rest of the pushed rows' output, ``OUTPUT_LIMIT`` pairs at a time."""
        return self._drain()

    def flush_pending(self) -> bool:
        return bool(self._pending)

    def _drain(self):
        out: list = []
        pending = self._pending
        lim = OUTPUT_LIMIT
        while pending and len(out) < lim:
            piece = next(pending[0], None)
            if piece is None:
                pending.popleft()
            elif out:
                out.extend(piece)
            else:
                out = piece
        errs, self._errs = self._errs, []
        return (out or EMPTY), (errs or EMPTY)

    def _expand(self, chunk):
        """The output of ``chunk`` as lists of at most ``OUTPUT_LIMIT`` pairs (errors to
        ``_errs``), produced as the lists are asked for."""
        f = self.func
        args = self.args
        into = self._into
        lim = OUTPUT_LIMIT
        for row, d in chunk:
            try:
                vals = args(row)
                if into is not None and (None in vals or self._fused_push(row, d, vals)):
                    continue
                extra = f(*vals)
            except EvalError as e:
                self._errs.append(((e.sqlstate, e.message), d))
                continue
            if extra.__class__ is list and len(extra) <= lim:
                if extra:
                    yield [(row + x, d) for x in extra]
                continue
            it = iter(extra)
            while True:
                piece = [(row + x, d) for x in islice(it, lim)]
                if not piece:
                    break
                yield piece
