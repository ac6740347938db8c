"""From-scratch window function semantics, for ``tests.support.reference``.

Owns ``reference_window``: a ``WindowAggregateExpr``'s value for one partition, computed
straight from the definitions (PostgreSQL's): for every row, its peers, rank and frame
are found by comparing it with every other row (frame exclusion too), and frame aggregates are
``tests.support.reference.apply_aggregate`` over the frame's values.  Quadratic on purpose:
it shares no mechanism with ``expr.window_eval`` (no pointers, no accumulators) except the
tie-break among peers (the whole row, ``tests.support.reference.cmp_by_order``), which both must
agree on for order-dependent functions such as ``row_number``.
Deliberately not here: speed.
"""
from __future__ import annotations

import functools

from repr.errors import EvalError

__all__ = ["reference_window"]


def reference_window(agg, rows: list) -> tuple:
    """``rows``: the partition's records, one entry per unit of multiplicity."""
    from tests.support.reference import cmp_by_order, cmp_rows
    if not rows:
        return None
    base = sorted(rows, key=functools.cmp_to_key(cmp_rows))
    cols = []
    for f in agg.funcs:
        cmp = cmp_by_order(f.order)
        order = sorted(range(len(base)), key=functools.cmp_to_key(lambda i, j: cmp(base[i], base[j])))
        pos = {r: i for i, r in enumerate(order)}
        srt = [base[r] for r in order]

        def peer(a, b, f=f):
            return all(_same(a[o.column], b[o.column]) for o in f.order)
        col = [None] * len(base)
        for r in range(len(base)):
            col[r] = _value(f, srt, pos[r], peer)
        cols.append(col)
    return tuple(row + tuple(c[i] for c in cols) for i, row in enumerate(base))


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if a != a and b != b:  # NaN is a peer of NaN
        return True
    return not (a < b or b < a)


def _value(f, srt, i, peer):
    n = len(srt)
    row = srt[i]
    name = f.name
    if name == "row_number":
        return i + 1
    before = [j for j in range(n) if j < i and not peer(srt[j], row)]
    peers = [j for j in range(n) if peer(srt[j], row)]
    if name == "rank":
        return len(before) + 1
    if name == "dense_rank":
        keys = []
        for j in before:
            if not any(peer(srt[j], srt[k]) for k in keys):
                keys.append(j)
        return len(keys) + 1
    if name == "percent_rank":
        return len(before) / (n - 1) if n > 1 else 0.0
    if name == "cume_dist":
        return (len(before) + len(peers)) / n
    if name == "ntile":
        k = srt[0][f.args[0]]
        if k is None:
            return None
        if k <= 0:
            raise EvalError("22014", "argument of ntile must be greater than zero")
        # bucket sizes differ by at most one, larger buckets first
        sizes = [n // k + (1 if b < n % k else 0) for b in range(k)]
        acc = 0
        for b, size in enumerate(sizes):
            acc += size
            if i < acc:
                return b + 1
    if name in ("lag", "lead"):
        off = row[f.args[1]] if len(f.args) > 1 else 1
        if off is None:
            return None
        j = i - off if name == "lag" else i + off
        if 0 <= j < n:
            return srt[j][f.args[0]]
        return row[f.args[2]] if len(f.args) > 2 else None
    frame = [j for j in range(n) if _in_frame(f.frame, srt, i, j, peer, f.order)]
    vals = [srt[j][f.args[0]] for j in frame]
    if name == "first_value":
        return vals[0] if vals else None
    if name == "last_value":
        return vals[-1] if vals else None
    if name == "nth_value":
        k = row[f.args[1]]
        if k is None:
            return None
        if k <= 0:
            raise EvalError("22016", "argument of nth_value must be greater than zero")
        return vals[k - 1] if k <= len(vals) else None
    from tests.support.reference import apply_aggregate
    a = f.agg
    if a.func in ("array_agg", "jsonb_agg", "jsonb_object_agg"):
        from expr.functions.aggregates import collect_finish
        if a.func != "jsonb_object_agg":  # record(value); NULL when FILTER drops the row
            vals = [v[0] for v in vals if v is not None]
        return collect_finish(a.func, vals) if vals else None
    if a.func == "string_agg":
        vals = [v for v in vals if v is not None and v[0] is not None]
        if not vals:
            return None
        return vals[0][0] + "".join((d or "") + v for v, d in vals[1:])
    return apply_aggregate(a.func, vals, False, a.output_type)


def _in_frame(fr, srt, i, j, peer, order) -> bool:
    """Is sorted position ``j`` in the frame of the row at sorted position ``i``, after the
    frame exclusion (the current row itself; its peers with or without it)?"""
    ex = getattr(fr, "exclude", "no_others")
    if ex == "current_row" and j == i:
        return False
    if ex == "group" and peer(srt[j], srt[i]):
        return False
    if ex == "ties" and j != i and peer(srt[j], srt[i]):
        return False
    return _in_bounds(fr, srt, i, j, peer, order)


def _in_bounds(fr, srt, i, j, peer, order) -> bool:
    """Is sorted position ``j`` between the frame bounds of the row at position ``i``?"""
    if fr.mode == "rows":
        lo = {"unbounded": -10**9, "current": i, "preceding": i - fr.start_offset,
              "following": i + fr.start_offset}[fr.start]
        hi = {"unbounded": 10**9, "current": i, "preceding": i - fr.end_offset,
              "following": i + fr.end_offset}[fr.end]
        return lo <= j <= hi
    if fr.mode == "range" and {fr.start, fr.end} & {"preceding", "following"}:
        return _in_range_frame(fr, srt, i, j, peer, order[0])
    # range without offsets and groups: compare peer-group numbers
    gi, gj = _group_no(srt, i, peer), _group_no(srt, j, peer)
    lo = {"unbounded": -10**9, "current": gi, "preceding": gi - fr.start_offset,
          "following": gi + fr.start_offset}[fr.start]
    hi = {"unbounded": 10**9, "current": gi, "preceding": gi - fr.end_offset,
          "following": gi + fr.end_offset}[fr.end]
    return lo <= gj <= hi


def _group_no(srt, i, peer) -> int:
    """How many distinct peer groups come before position ``i``."""
    g = 0
    for j in range(1, i + 1):
        if not peer(srt[j], srt[j - 1]):
            g += 1
    return g


def _in_range_frame(fr, srt, i, j, peer, o) -> bool:
    """RANGE with value offsets, bound by bound: a number ``x`` is within ``v - off`` /
    ``v + off`` of the current value ``v`` (DESC reverses the value axis); a NULL or NaN
    current row's offset bounds are its peers; a NULL/NaN row ``j`` is past every numeric
    lower bound when it sorts after the current row, and before every upper bound when it
    sorts before it."""
    v, x = srt[i][o.column], srt[j][o.column]

    def num(a):
        return a is not None and a == a
    if o.desc:
        v = -v if num(v) else v
        x = -x if num(x) else x

    def after_start():
        if fr.start == "unbounded":
            return True
        if fr.start == "current" or not num(v):
            return j >= i or peer(srt[j], srt[i])
        if not num(x):
            return j > i
        return x >= (v - fr.start_offset if fr.start == "preceding" else v + fr.start_offset)

    def before_end():
        if fr.end == "unbounded":
            return True
        if fr.end == "current" or not num(v):
            return j <= i or peer(srt[j], srt[i])
        if not num(x):
            return j < i
        return x <= (v - fr.end_offset if fr.end == "preceding" else v + fr.end_offset)
    return after_start() and before_end()
