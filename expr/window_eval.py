"""Window functions: the per-partition evaluation of a window aggregate.

Owns ``PartitionEvaluator`` (a whole partition's values, compiled once per aggregate) and
``WindowAgg``, the aggregate kind ``expr.aggregate.make_aggregate`` gives for ``func ==
"window"`` (so the maintained ``compute.render.reduce.ReduceOp`` and ``expr.interpret``
evaluate windows alike; ``expr.window`` has the vocabulary).

Invariants: rows of a partition are ordered by the function's ORDER BY with PostgreSQL's
NULL placement and ties broken by the whole row (``expr.order.sort_key_function``),
so the output is a function of the partition's multiset.  The aggregate is *basic* (not
invertible): a changed partition is recomputed from its multiset, and nothing else is
touched.  Frame bounds are positions in the sorted partition (ROWS: offsets; GROUPS and
RANGE without offsets: peer groups; RANGE with offsets: binary search on the ORDER BY
value); they never move backwards, so frame aggregates use two monotone pointers, adding
and retracting rows of an incremental accumulator where retraction is exact (counts,
min/max, booleans, integer sums) and recomputing the frame otherwise (floats, numerics,
variances).  array_agg, string_agg, jsonb_agg and jsonb_object_agg over a frame take their
values in frame order.  Frame exclusion (``EXCLUDE CURRENT ROW | GROUP | TIES``) removes the
current row and/or its peers from the contiguous frame ``[s, e)``, leaving at most three
segments (``_segments``): exactly retracting accumulators retract the excluded rows for
that row's answer and add them back; the others aggregate the segments afresh.
Deliberately not here: binding (``planner.windows``) and a from-scratch evaluation (the
test oracle's ``tests.support.window_reference``).
"""
from __future__ import annotations

from expr.aggregate import accumulate_counts, make_aggregate
from expr.order import sort_key_function
from expr.relation import AggregateExpr
from expr.window import WindowAggregateExpr, WindowFrame, WindowFunc
from repr.errors import EvalError

#: aggregates whose accumulator retracts exactly (others recompute a frame whose start moves)
_EXACT_RETRACT = ("count", "min", "max", "bool_and", "bool_or")
_INT_TYPES = ("int2", "int4", "int8")
#: aggregates whose value is the frame's values in frame order
_SEQUENCE = ("array_agg", "string_agg", "jsonb_agg", "jsonb_object_agg")


class PartitionEvaluator:
    """``rows -> tuple of row + values``, for the functions of one window aggregate."""

    def __init__(self, funcs):
        self.funcs = tuple(funcs)
        self.keys = {}
        for f in self.funcs:
            if f.order not in self.keys:
                self.keys[f.order] = (sort_key_function(f.order), 3 * len(f.order))
        self.base_key = sort_key_function(())
        self.aggs = [_make_accumulator(f.agg) if f.agg is not None else None for f in self.funcs]

    def __call__(self, rows: list) -> tuple:
        rows.sort(key=self.base_key)
        n = len(rows)
        cols = []
        layouts: dict = {}
        for f, acc in zip(self.funcs, self.aggs):
            lay = layouts.get(f.order)
            if lay is None:
                lay = layouts[f.order] = _layout(rows, *self.keys[f.order])
            cols.append(_evaluate(f, acc, rows, lay, n))
        return tuple(r + tuple(c[i] for c in cols) for i, r in enumerate(rows))


def _layout(rows, key, width):
    """``(perm, peer_start, peer_end, group_no, group_starts)`` over sorted positions:
    ``perm[i]`` is the row index at sorted position ``i``."""
    keys = [key(r) for r in rows]
    keyed = sorted(range(len(rows)), key=keys.__getitem__)
    n = len(keyed)
    pstart = [0] * n
    pend = [0] * n
    gno = [0] * n
    gstarts = []
    prev = object()
    for i, r in enumerate(keyed):
        k = keys[r][:width]
        if i == 0 or k != prev:
            gstarts.append(i)
            prev = k
        pstart[i] = gstarts[-1]
        gno[i] = len(gstarts) - 1
    gstarts.append(n)
    for i in range(n):
        pend[i] = gstarts[gno[i] + 1]
    return keyed, pstart, pend, gno, gstarts


def _frame_bounds(fr: WindowFrame, n, pstart, pend, gno, gstarts, keyvals=None):
    """Per sorted position ``i``, the frame as positions ``[s, e)`` (both monotone in ``i``).
    ``keyvals``: for RANGE offsets, the ORDER BY value at each sorted position, negated
    under DESC (so ascending outside the NULL/NaN peer groups)."""
    ng = len(gstarts) - 1
    if keyvals is not None:
        return _range_offset_bounds(fr, n, pstart, pend, keyvals)

    def start(i):
        k = fr.start
        if k == "unbounded":
            return 0
        if fr.mode == "rows":
            if k == "current":
                return i
            return max(0, i - fr.start_offset) if k == "preceding" else min(n, i + fr.start_offset)
        if k == "current":
            return pstart[i]
        g = gno[i] - fr.start_offset if k == "preceding" else gno[i] + fr.start_offset
        return gstarts[min(max(g, 0), ng)]

    def end(i):
        k = fr.end
        if k == "unbounded":
            return n
        if fr.mode == "rows":
            if k == "current":
                return i + 1
            return max(0, i - fr.end_offset + 1) if k == "preceding" else min(n, i + fr.end_offset + 1)
        if k == "current":
            return pend[i]
        g = gno[i] - fr.end_offset if k == "preceding" else gno[i] + fr.end_offset
        return 0 if g < 0 else gstarts[min(g + 1, ng)]

    return [start(i) for i in range(n)], [end(i) for i in range(n)]


def _range_offset_bounds(fr: WindowFrame, n, pstart, pend, keyvals):
    """RANGE ``v PRECEDING``/``FOLLOWING``: rows whose ORDER BY value is within the offset
    (PostgreSQL's in_range).  A NULL or NaN current row's offset bounds are its peer group;
    NULL and NaN rows are never within an offset of a number."""
    import bisect
    import decimal
    nums = [i for i, v in enumerate(keyvals) if v is not None and v == v]
    lo = nums[0] if nums else 0
    W = [keyvals[i] for i in nums]
    starts, ends = [], []
    with decimal.localcontext() as dctx:
        dctx.prec = 1000
        for i in range(n):
            v = keyvals[i]
            number = v is not None and v == v
            k = fr.start
            if k == "unbounded":
                s = 0
            elif k == "current" or not number:
                s = pstart[i]
            else:
                s = lo + bisect.bisect_left(W, v - fr.start_offset if k == "preceding" else v + fr.start_offset)
            k = fr.end
            if k == "unbounded":
                e = n
            elif k == "current" or not number:
                e = pend[i]
            else:
                e = lo + bisect.bisect_right(W, v - fr.end_offset if k == "preceding" else v + fr.end_offset)
            starts.append(s)
            ends.append(e)
    return starts, ends


def _evaluate(f: WindowFunc, acc, rows, lay, n):
    """The column of ``f``'s values, indexed like ``rows``."""
    perm, pstart, pend, gno, gstarts = lay
    out = [None] * n
    name = f.name
    if name == "row_number":
        for i, r in enumerate(perm):
            out[r] = i + 1
    elif name == "rank":
        for i, r in enumerate(perm):
            out[r] = pstart[i] + 1
    elif name == "dense_rank":
        for i, r in enumerate(perm):
            out[r] = gno[i] + 1
    elif name == "percent_rank":
        for i, r in enumerate(perm):
            out[r] = pstart[i] / (n - 1) if n > 1 else 0.0
    elif name == "cume_dist":
        for i, r in enumerate(perm):
            out[r] = pend[i] / n
    elif name == "ntile":
        buckets = rows[perm[0]][f.args[0]]  # PostgreSQL reads the argument once per partition
        if buckets is not None:
            if buckets <= 0:
                raise EvalError("22014", "argument of ntile must be greater than zero")
            small, rem = divmod(n, buckets)
            edge = rem * (small + 1)
            for i, r in enumerate(perm):
                out[r] = i // (small + 1) + 1 if i < edge else rem + (i - edge) // small + 1
    elif name in ("lag", "lead"):
        a = f.args
        for i, r in enumerate(perm):
            row = rows[r]
            off = row[a[1]] if len(a) > 1 else 1
            if off is None:
                continue
            j = i - off if name == "lag" else i + off
            if 0 <= j < n:
                out[r] = rows[perm[j]][a[0]]
            elif len(a) > 2:
                out[r] = row[a[2]]
    else:
        keyvals = None
        fr = f.frame
        if fr.mode == "range" and {fr.start, fr.end} & {"preceding", "following"}:
            o = f.order[0]
            keyvals = [rows[r][o.column] for r in perm]
            if o.desc:
                keyvals = [None if v is None else -v for v in keyvals]
        starts, ends = _frame_bounds(fr, n, pstart, pend, gno, gstarts, keyvals)
        excl = None if fr.exclude == "no_others" else (fr.exclude, pstart, pend)
        if acc is not None:
            acc.run(f, rows, perm, starts, ends, out, excl)
        else:
            a0 = f.args[0]
            for i, r in enumerate(perm):
                s, e = starts[i], ends[i]
                segs = ((s, e),) if excl is None else _segments(i, s, e, excl)
                if name == "nth_value":
                    k = rows[r][f.args[1]]
                    if k is None:
                        continue
                    if k <= 0:
                        raise EvalError("22016", "argument of nth_value must be greater than zero")
                    for a, b in segs:
                        if k <= b - a:
                            out[r] = rows[perm[a + k - 1]][a0]
                            break
                        k -= b - a
                else:
                    segs = [(a, b) for a, b in segs if a < b]
                    if segs:
                        out[r] = rows[perm[segs[0][0] if name == "first_value" else segs[-1][1] - 1]][a0]
    return out


def _excluded(i, excl):
    """The sorted positions ``[xs, xe)`` removed from row ``i``'s frame, and whether ``i``
    itself stays (EXCLUDE TIES keeps the current row and removes its peers)."""
    kind, pstart, pend = excl
    if kind == "current_row":
        return i, i + 1, False
    return pstart[i], pend[i], kind == "ties"


def _segments(i, s, e, excl):
    """Row ``i``'s frame ``[s, e)`` after exclusion, as ordered position ranges."""
    xs, xe, keep = _excluded(i, excl)
    segs = [(s, min(e, xs))]
    if keep and s <= i < e:
        segs.append((i, i + 1))
    segs.append((max(s, xe), e))
    return tuple((a, b) for a, b in segs if a < b)


# ------------------------------------------------------------------ aggregates over frames


class _Accumulator:
    """An aggregate over frames, reusing the Reduce aggregate kinds (``update``/``finish``
    on a state list) with two monotone pointers."""

    def __init__(self, agg: AggregateExpr):
        self.kind = make_aggregate(agg, 1)
        self.exact = agg.func in _EXACT_RETRACT or (agg.func in ("sum", "avg") and agg.input_type in _INT_TYPES)

    def fresh(self):
        G = [0]
        self.kind.init(G)
        return G

    def run(self, f, rows, perm, starts, ends, out, excl=None):
        kind = self.kind
        a0 = f.args[0]
        vals = [rows[r][a0] for r in perm]
        empty = kind.finish(self.fresh())
        if excl is not None:
            return self._run_excluding(vals, perm, starts, ends, out, excl, empty)
        G = self.fresh()
        lo = hi = 0
        last = None
        for i, r in enumerate(perm):
            s, e = starts[i], ends[i]
            if s >= e:
                out[r] = empty
                continue
            if (s, e) == last:
                out[r] = out[perm[i - 1]]
                continue
            last = (s, e)
            if s > lo and not self.exact:
                G = self.fresh()
                lo = hi = s
            lo, hi = _slide(kind, G, vals, lo, hi, s, e)
            out[r] = kind.finish(G)

    def _run_excluding(self, vals, perm, starts, ends, out, excl, empty):
        """Frames with exclusion: an exact accumulator keeps ``[s, e)`` with the two
        pointers and retracts the excluded rows inside it just for this row's answer;
        others aggregate the remaining segments from a fresh state."""
        kind = self.kind
        G = self.fresh()
        lo = hi = 0
        for i, r in enumerate(perm):
            s, e = starts[i], ends[i]
            segs = _segments(i, s, e, excl)
            if not segs:
                out[r] = empty
                continue
            if not self.exact:
                H = self.fresh()
                for a, b in segs:
                    kind.update([H] * (b - a), vals[a:b], [1] * (b - a))
                out[r] = kind.finish(H)
                continue
            lo, hi = _slide(kind, G, vals, lo, hi, s, e)
            xs, xe, keep = _excluded(i, excl)
            gone = [j for j in range(max(s, xs), min(e, xe)) if not (keep and j == i)]
            if gone:
                kind.update([G] * len(gone), [vals[j] for j in gone], [-1] * len(gone))
            out[r] = kind.finish(G)
            if gone:
                kind.update([G] * len(gone), [vals[j] for j in gone], [1] * len(gone))


class _Sequence:
    """array_agg/string_agg/jsonb_agg/jsonb_object_agg over a frame: the frame's values in
    frame order (PostgreSQL's: the window ORDER BY)."""

    def __init__(self, agg: AggregateExpr):
        self.func = agg.func

    def run(self, f, rows, perm, starts, ends, out, excl=None):
        a0 = f.args[0]
        vals = [rows[r][a0] for r in perm]
        for i, r in enumerate(perm):
            if excl is None:
                frame = vals[starts[i]:ends[i]]
            else:
                frame = [v for a, b in _segments(i, starts[i], ends[i], excl) for v in vals[a:b]]
            if self.func == "string_agg":
                from expr.functions.aggregates import string_agg_join
                out[r] = string_agg_join(frame)
            elif self.func == "jsonb_object_agg":
                out[r] = _collect(self.func, frame)
            else:  # array_agg/jsonb_agg values come as record(value), NULL when FILTER drops them
                out[r] = _collect(self.func, [v[0] for v in frame if v is not None])


def _collect(func: str, values: list):
    """array_agg/jsonb_agg/jsonb_object_agg of ``values`` in order (compute's value types)."""
    if not values:
        return None
    from expr.functions.aggregates import collect_finish
    return collect_finish(func, values)


def _make_accumulator(agg: AggregateExpr):
    if agg.func in _SEQUENCE:
        return _Sequence(agg)
    return _Accumulator(agg)


# ------------------------------------------------------------------ the Reduce aggregate kind


class WindowAgg:
    """``ReduceOp``'s aggregate kind for ``func == "window"``.  Slot: the partition's
    ``record -> count`` multiset; ``finish`` evaluates the whole partition."""

    slots = 1

    def __init__(self, agg: WindowAggregateExpr, off: int):
        self.agg = agg
        self.off = off
        self.out_type = agg.output_type
        self.evaluate = PartitionEvaluator(agg.funcs)

    def init(self, G: list) -> None:
        G.append(None)

    def update(self, Gs, vs, ds) -> None:
        accumulate_counts(self.off, Gs, vs, ds)

    def finish(self, G):
        m = G[self.off]
        rows = []
        for v, c in (m or {}).items():
            if c > 0:
                rows.extend([v] * c)
        if not rows:
            return None
        return self.evaluate(rows)

    def default(self):
        return None


def _slide(kind, G, vals, lo: int, hi: int, s: int, e: int) -> tuple[int, int]:
    """Move the accumulated frame ``[lo, hi)`` of state ``G`` to ``[s, e)`` (both ends only
    advance): add the rows entering at the end, retract those leaving at the start."""
    if hi < e:
        kind.update([G] * (e - hi), vals[hi:e], [1] * (e - hi))
        hi = e
    if lo < s:
        kind.update([G] * (s - lo), vals[lo:s], [-1] * (s - lo))
        lo = s
    return lo, hi
