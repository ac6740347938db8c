"""Aggregates: the production semantics of every aggregate function, as state over a group.

Owns the aggregate kinds (``make_aggregate``: one per ``AggregateExpr``), their group
state and the output of a group (``group_output``).  A group's state is one list ``G``:
``G[0]`` is the group's total multiplicity, then each aggregate's slots from its ``off``
(count: the count; sum/avg: total and non-NULL count; var/stddev: n, sum, sum of squares;
bool_and/or: true and false counts; min/max: a value multiset with a sorted index of
distinct values, so retracting the current minimum is O(log n); string_agg/array_agg: a
value multiset; DISTINCT variants: a value multiset in front of the inner aggregate, which
sees a value enter when its count becomes positive and leave when it drops to zero;
ordered forms and window partitions: a record multiset finished from scratch).

Invariants: ``update(Gs, values, diffs)`` takes a batch (one loop per aggregate, not a call
per row) and accepts retractions, so the same kinds serve the maintained
``compute.render.reduce.ReduceOp`` (updates over time), ``expr.interpret`` (a whole
constant collection at once) and window frames (``expr.window_eval``); a group whose total
multiplicity is negative outputs the error ``Non-positive multiplicity in Reduce`` instead
of a row, and an aggregate's data error (e.g. sum overflow) replaces the group's row with
the error row.  Deliberately not here: result types, scales and overflow rules (the
finishers of ``expr.functions``) and which groups changed (the operator's business).
"""
from __future__ import annotations

from decimal import Decimal
from typing import Optional, Sequence

from sortedcontainers import SortedList

from expr.functions.aggregates import avg_finish, sum_finish, variance_finish
from expr.relation import AggregateExpr
from repr.errors import EvalError

__all__ = ["Aggregate", "Count", "Sum", "make_aggregate", "make_aggregates", "new_state", "group_output",
           "default_row", "accumulate_counts", "NEG_MULT"]

NEG_MULT = ("XX000", "Non-positive multiplicity in Reduce")
#: the keys under which min/max count NaN inputs (and remember one NaN value to return)
_NAN = ("NaN",)
_NAN_VALUE = ("NaN value",)


def accumulate_counts(slot: int, Gs, vs, ds, skip_null: str = "") -> None:
    """Add each value ``vs[i]`` with diff ``ds[i]`` to the value -> count dict in slot ``slot``
    of its group state ``Gs[i]`` (created on first use), dropping counts that reach zero.
    ``skip_null``: ``"value"`` leaves NULL values out, ``"first"`` leaves out records whose
    first field is NULL (string_agg's (value, delimiter)); the test is inline, not a call per
    row.  The multiset behind every non-invertible aggregate (string_agg, array_agg, ordered
    aggregates, window partitions)."""
    for G, v, d in zip(Gs, vs, ds):
        if skip_null and (v is None or (skip_null == "first" and v[0] is None)):
            continue
        m = G[slot]
        if m is None:
            m = G[slot] = {}
        n = m.get(v, 0) + d
        if n:
            m[v] = n
        else:
            del m[v]


class Aggregate:
    slots = 1

    def __init__(self, agg: AggregateExpr, off: int):
        self.agg = agg
        self.off = off
        self.out_type = agg.output_type

    def init(self, G: list) -> None:
        G.extend([0] * self.slots)

    def default(self):
        return None


class Count(Aggregate):
    def update(self, Gs, vs, ds) -> None:
        o = self.off
        for G, v, d in zip(Gs, vs, ds):
            if v is not None:
                G[o] += d

    def finish(self, G):
        return G[self.off]

    def default(self):
        return 0


class Sum(Aggregate):
    slots = 2

    def update(self, Gs, vs, ds) -> None:
        o = self.off
        o1 = o + 1
        for G, v, d in zip(Gs, vs, ds):
            if v is not None:
                G[o] += v * d if d != 1 else v
                G[o1] += d

    def finish(self, G):
        return sum_finish(G[self.off] if G[self.off + 1] else None, self.out_type)


class Avg(Sum):
    def finish(self, G):
        n = G[self.off + 1]
        return avg_finish(G[self.off], n, self.out_type) if n else None


class Variance(Aggregate):
    slots = 3

    def update(self, Gs, vs, ds) -> None:
        o = self.off
        for G, v, d in zip(Gs, vs, ds):
            if v is not None:
                G[o] += d
                G[o + 1] += v * d
                G[o + 2] += v * v * d

    def finish(self, G):
        o = self.off
        return variance_finish(G[o], G[o + 1], G[o + 2], self.agg.func, self.out_type)


class BoolAggregate(Aggregate):
    slots = 2  # true count, false count

    def update(self, Gs, vs, ds) -> None:
        o = self.off
        for G, v, d in zip(Gs, vs, ds):
            if v is True:
                G[o] += d
            elif v is False:
                G[o + 1] += d

    def finish(self, G):
        t, f = G[self.off], G[self.off + 1]
        if t <= 0 and f <= 0:
            return None
        if self.agg.func == "bool_and":
            return f <= 0
        return t > 0


class MinMax(Aggregate):
    """Slot: ``[counts, sorted distinct values]`` (NULLs ignored).  NaN sorts above every
    number (PostgreSQL) and is kept out of the sorted index: it is counted under the
    single key ``_NAN`` (NaN objects are not equal to themselves, so never dict keys)."""

    def init(self, G: list) -> None:
        G.append(None)

    def update(self, Gs, vs, ds) -> None:
        o = self.off
        for G, v, d in zip(Gs, vs, ds):
            if v is None:
                continue
            s = G[o]
            if s is None:
                s = G[o] = ({}, SortedList())
            counts, order = s
            if v != v or (type(v) is Decimal and v.is_nan()):
                n = counts.get(_NAN, 0) + d
                if n:
                    counts[_NAN] = n
                    counts[_NAN_VALUE] = v
                else:
                    counts.pop(_NAN, None)
                    counts.pop(_NAN_VALUE, None)
                continue
            c = counts.get(v, 0)
            n = c + d
            if n:
                counts[v] = n
                if not c:
                    order.add(v)
            else:
                del counts[v]
                order.remove(v)

    def finish(self, G):
        s = G[self.off]
        if s is None:
            return None
        counts, order = s
        nan = counts.get(_NAN, 0) > 0
        if nan and self.agg.func == "max":
            return counts[_NAN_VALUE]
        it = order if self.agg.func == "min" else reversed(order)
        for v in it:
            if counts[v] > 0:
                return v
        return counts[_NAN_VALUE] if nan else None


class Multiset(Aggregate):
    """Slot: ``value -> count``; finishing sorts (string_agg, array_agg, jsonb_agg)."""

    def init(self, G: list) -> None:
        G.append(None)

    def update(self, Gs, vs, ds) -> None:
        accumulate_counts(self.off, Gs, vs, ds, "first" if self.agg.func == "string_agg" else "")

    def finish(self, G):
        m = G[self.off]
        if not m:
            return None
        if self.agg.func == "string_agg":
            vals = sorted(((v[0], v[1] is None, v[1] or ""), c) for v, c in m.items() if c > 0)
            parts = []
            for (val, isnull, delim), c in vals:
                for _ in range(c):
                    if parts:
                        parts.append("" if isnull else delim)
                    parts.append(val)
            return "".join(parts) if parts else None
        vals = sorted(((v is None, v if v is not None else 0), c) for v, c in m.items() if c > 0)
        out = []
        for (isnull, v), c in vals:
            out.extend([None if isnull else v] * c)
        from expr.functions.aggregates import collect_finish  # Array / Jsonb values
        return collect_finish(self.agg.func, out) if out else None


class Distinct(Aggregate):
    """DISTINCT: a value multiset in front of ``inner``."""

    def __init__(self, agg: AggregateExpr, off: int, inner: Aggregate):
        super().__init__(agg, off)
        self.inner = inner
        self.slots = 1 + inner.slots
        self.keep_null = agg.func in ("array_agg", "jsonb_agg") and not agg.is_ordered_form()

    def init(self, G: list) -> None:
        G.append(None)
        self.inner.init(G)

    def update(self, Gs, vs, ds) -> None:
        o = self.off
        keep_null = self.keep_null
        iG, iv, id_ = [], [], []
        for G, v, d in zip(Gs, vs, ds):
            if v is None and not keep_null:
                continue
            m = G[o]
            if m is None:
                m = G[o] = {}
            c = m.get(v, 0)
            n = c + d
            if n:
                m[v] = n
            else:
                del m[v]
            if (c > 0) != (n > 0):
                iG.append(G)
                iv.append(v)
                id_.append(1 if n > 0 else -1)
        if iG:
            self.inner.update(iG, iv, id_)

    def finish(self, G):
        return self.inner.finish(G)

    def default(self):
        return self.inner.default()


# --- ordered-form aggregates: array_agg, jsonb_agg, jsonb_object_agg, ORDER BY


class Ordered(Aggregate):
    """Slot: ``record -> count`` of ``record(value, sort keys...)`` (NULL records, rows a
    FILTER rejected, are skipped).  Non-invertible: finishing re-sorts the group's multiset
    (``expr.functions.aggregates.ordered_aggregate``), work proportional to the group."""

    def init(self, G: list) -> None:
        G.append(None)

    def update(self, Gs, vs, ds) -> None:
        accumulate_counts(self.off, Gs, vs, ds, "value")

    def finish(self, G):
        from expr.functions.aggregates import ordered_aggregate
        m = G[self.off]
        if not m:
            return None
        return ordered_aggregate(self.agg.func, [(r, c) for r, c in m.items() if c > 0], self.agg.order_by)


# --- end ordered-form aggregates

KINDS = {
    "count": Count, "sum": Sum, "avg": Avg, "min": MinMax, "max": MinMax,
    "bool_and": BoolAggregate, "bool_or": BoolAggregate, "string_agg": Multiset, "array_agg": Multiset,
    "jsonb_agg": Multiset, "var_samp": Variance, "var_pop": Variance, "stddev_samp": Variance,
    "stddev_pop": Variance, "variance": Variance, "stddev": Variance,
}


def make_aggregate(agg: AggregateExpr, off: int) -> Aggregate:
    if agg.func == "window":  # one basic aggregate per partition (expr.window_eval)
        from expr.window_eval import WindowAgg
        return WindowAgg(agg, off)  # type: ignore[arg-type, return-value]
    cls = Ordered if agg.is_ordered_form() else KINDS.get(agg.func)
    if cls is None:
        raise AssertionError(f"reduce: unknown aggregate {agg.func!r}")
    if agg.distinct:
        return Distinct(agg, off, cls(agg, off + 1))
    return cls(agg, off)


def make_aggregates(aggregates: Sequence[AggregateExpr]) -> tuple[list, int]:
    """The kinds of ``aggregates`` laid out one after another from slot 1, and the width of
    a group's state list."""
    kinds = []
    off = 1
    for a in aggregates:
        kind = make_aggregate(a, off)
        kinds.append(kind)
        off += kind.slots
    return kinds, off


def new_state(kinds) -> list:
    """A fresh group state for ``kinds`` (total multiplicity 0)."""
    G = [0]
    for a in kinds:
        a.init(G)
    return G


def group_output(kinds, key: tuple, G: list) -> Optional[tuple[bool, tuple]]:
    """What the group ``key`` with state ``G`` outputs: ``None`` (no row: its multiplicity is
    zero), ``(False, key + aggregate values)`` or ``(True, error row)``."""
    n = G[0]
    if n == 0:
        return None
    if n < 0:
        return True, NEG_MULT
    try:
        return False, key + tuple(a.finish(G) for a in kinds)
    except EvalError as e:
        return True, (e.sqlstate, e.message)


def default_row(kinds) -> tuple:
    """The row a global aggregate (no group key) outputs over empty input: count 0, others
    NULL."""
    return tuple(a.default() for a in kinds)
