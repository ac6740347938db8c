"""Reduce (GROUP BY with aggregates) and Distinct.

Owns ``ReduceOp`` and ``DistinctOp``.  State is one list per group ``G``: ``G[0]`` is
the group's total multiplicity, then each aggregate's slots (count: the count; sum/avg:
total and non-NULL count; var/stddev: n, sum, sum of squares; bool_and/or: true and
false counts; min/max: a value multiset with a sorted index of distinct values, so
retracting the current minimum is O(log n); string_agg/array_agg: a value multiset;
DISTINCT variants: a value multiset in front of the inner aggregate, which sees a value
enter when its count becomes positive and leave when it drops to zero).

Invariants: ``push`` only accumulates (aggregate slots are updated in batch loops per
aggregate, not per-row method calls) and records the touched groups; ``flush`` emits,
per touched group, the retraction of the last emitted output and the new one, only
when they differ.  ``outputs`` holds exactly what this operator has emitted and not
retracted.  A group whose total multiplicity is negative outputs the error
``Non-positive multiplicity in Reduce`` instead of a row; an aggregate's data error
(e.g. sum overflow) replaces the group's row with the error row.  ``global_default``
makes the empty group key produce the default row (count 0, others NULL) while the
input is empty.

Deliberately not here: ``avg`` scale and overflow rules (``expr.functions`` finishers).
"""
from __future__ import annotations

from decimal import Decimal
from operator import itemgetter
import re
from typing import Optional, Sequence

from sortedcontainers import SortedList

from compute.render.operator import EMPTY, Operator, accumulate_counts, take_touched
from expr.compile import compile_scalar, compile_source
from expr.functions.aggregates import avg_finish, sum_finish, variance_finish
from expr.relation import AggregateExpr
from expr.scalar import Call, Column, Literal, ScalarExpr
from repr.errors import EvalError

__all__ = ["ReduceOp", "DistinctOp", "make_aggregate", "row_evaluator"]

NEG_MULT = ("XX000", "Non-positive multiplicity in Reduce")
_SIMPLE = (bool, int, str, type(None))
#: the keys under which min/max count NaN inputs (and remember one NaN value to return)
_NAN = ("NaN",)
_NAN_VALUE = ("NaN value",)


def row_evaluator(exprs: Sequence[ScalarExpr]):
    """``row -> tuple`` of expression values; ``itemgetter`` when all are columns."""
    exprs = tuple(exprs)
    if not exprs:
        return lambda row: ()
    if all(isinstance(e, Column) for e in exprs):
        idx = [e.index for e in exprs]
        if len(idx) == 1:
            i = idx[0]
            return lambda row: (row[i],)
        return itemgetter(*idx)
    if all(isinstance(e, Column) or (isinstance(e, Literal) and type(e.value) in _SIMPLE)
           for e in exprs):
        # columns and simple literals (count(*)'s TRUE): one generated tuple display
        parts = [f"row[{e.index}]" if isinstance(e, Column) else repr(e.value) for e in exprs]
        f = eval(f"lambda row: ({', '.join(parts)},)")
        f.display = f"({', '.join(parts)},)"
        f.parts = parts
        return f
    f = compile_scalar(Call("record", exprs, "record"))
    return f


def fused_group_update(key_parts, agg_parts, aggs, width: int):
    """``f(chunk, groups, touched)`` for count/sum aggregates of plain columns and literals:
    each ``(row, diff)`` goes straight into its group's slots (what ``push`` does through the
    pre-consolidation dict and the per-aggregate passes, in one generated loop).  ``None``
    when some aggregate is of another kind."""
    body = group_update_body((key_parts, agg_parts, aggs, width))
    if body is None:
        return None
    lines = ["def _update(chunk, groups, touched):",
             "    gget = groups.get",
             "    add = touched.add",
             "    for row, d in chunk:"] + ["        " + line for line in body]
    src = "\n".join(lines) + "\n"
    return compile_source("reduce_groups:" + src, src, "_update")


_ROW_COLUMN = re.compile(r"row\[(\d+)\]")


def group_update_body(spec, columns: Optional[Sequence[str]] = None) -> Optional[list]:
    """The lines (unindented) that add one input row, with diff ``d``, to its group:
    ``spec`` is ``(key_parts, agg_parts, aggs, width)`` (``ReduceOp.direct_spec``), the
    parts written over ``row``; ``columns`` rewrites ``row[i]`` as ``columns[i]`` (a join
    that feeds the reduce from its own lookup loop: ``JoinOp.fuse_reduce``).  Expects
    ``gget``/``groups``/``add`` bound to the groups' ``get``, the groups and the touched
    set's ``add``.  ``None`` when some aggregate is not a count or sum."""
    key_parts, agg_parts, aggs, width = spec

    def col(part: str) -> str:
        m = _ROW_COLUMN.fullmatch(part)
        return part if m is None or columns is None else columns[int(m.group(1))]
    lines = [f"key = ({''.join(col(p) + ', ' for p in key_parts)})",
             "G = gget(key)",
             "if G is None:",
             f"    G = groups[key] = [0] * {width}",
             "add(key)",
             "G[0] += d"]
    for part, a in zip(agg_parts, aggs):
        o = a.off
        if type(a) is _Count:
            lines.append(f"if {col(part)} is not None:" if part not in ("True", "1") else "if True:")
            lines.append(f"    G[{o}] += d")
        elif type(a) is _Sum:
            lines.append(f"v = {col(part)}")
            lines.append("if v is not None:")
            lines.append(f"    G[{o}] += v * d if d != 1 else v")
            lines.append(f"    G[{o + 1}] += d")
        else:
            return None
    return lines


def fused_accumulator(display: str):
    """``f(chunk, acc)``: for each ``(row, diff)`` add the diff to ``acc[<display>]``, where
    ``display`` is a ``row_evaluator``'s tuple display (columns and plain literals, which
    cannot raise): the evaluation and the pre-consolidation in one generated loop."""
    src = (f"def _accumulate(chunk, acc):\n"
           f"    get = acc.get\n"
           f"    for row, d in chunk:\n"
           f"        kv = {display}\n"
           f"        acc[kv] = get(kv, 0) + d\n")
    return compile_source("reduce_acc:" + display, src, "_accumulate")


def evaluate_rows(fn, chunk, errs: list):
    """``[(value_tuple, row, diff)]`` for the rows ``fn`` evaluates; errors to ``errs``."""
    try:
        vals = [fn(r) for r, _ in chunk]
        return vals, chunk
    except EvalError:
        pass
    vals = []
    kept = []
    for r, d in chunk:
        try:
            vals.append(fn(r))
            kept.append((r, d))
        except EvalError as e:
            errs.append(((e.sqlstate, e.message), d))
    return vals, kept


class _PairList(list):
    def items(self):
        return self


# ------------------------------------------------------------------ aggregates


class _Agg:
    slots = 1

    def __init__(self, agg: AggregateExpr, off: int):
        self.agg = agg
        self.off = off
        self.out_type = agg.output_type

    def init(self, G: list) -> None:
        G.extend([0] * self.slots)

    def default(self):
        return None


class _Count(_Agg):
    def update(self, Gs, vs, ds) -> None:
        o = self.off
        for G, v, d in zip(Gs, vs, ds):
            if v is not None:
                G[o] += d

    def finish(self, G):
        return G[self.off]

    def default(self):
        return 0


class _Sum(_Agg):
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


class _Avg(_Sum):
    def finish(self, G):
        n = G[self.off + 1]
        return avg_finish(G[self.off], n, self.out_type) if n else None


class _Var(_Agg):
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


class _Bool(_Agg):
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


def _is_nan(v) -> bool:
    return v != v if isinstance(v, float) else isinstance(v, Decimal) and v.is_nan()


class _MinMax(_Agg):
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


class _Multiset(_Agg):
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


class _Distinct(_Agg):
    """DISTINCT: a value multiset in front of ``inner``."""

    def __init__(self, agg: AggregateExpr, off: int, inner: _Agg):
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


class _Ordered(_Agg):
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

_KINDS = {
    "count": _Count, "sum": _Sum, "avg": _Avg, "min": _MinMax, "max": _MinMax,
    "bool_and": _Bool, "bool_or": _Bool, "string_agg": _Multiset, "array_agg": _Multiset,
    "jsonb_agg": _Multiset, "var_samp": _Var, "var_pop": _Var, "stddev_samp": _Var,
    "stddev_pop": _Var, "variance": _Var, "stddev": _Var,
}


def make_aggregate(agg: AggregateExpr, off: int) -> _Agg:
    # --- window functions (compute.render.window): one basic aggregate per partition
    if agg.func == "window":
        from compute.render.window import WindowAgg
        return WindowAgg(agg, off)  # type: ignore[arg-type, return-value]
    # --- end window functions
    cls = _Ordered if agg.is_ordered_form() else _KINDS.get(agg.func)
    if cls is None:
        raise AssertionError(f"reduce: unknown aggregate {agg.func!r}")
    if agg.distinct:
        return _Distinct(agg, off, cls(agg, off + 1))
    return cls(agg, off)


# ------------------------------------------------------------------ operators


class ReduceOp(Operator):
    needs_flush = True

    def __init__(self, group_key: Sequence[ScalarExpr], aggregates: Sequence[AggregateExpr],
                 global_default: bool = False):
        self.nkey = len(group_key)
        self.eval = row_evaluator(tuple(group_key) + tuple(a.expr for a in aggregates))
        display = getattr(self.eval, "display", None)
        #: evaluation fused with pre-consolidation when the inputs are columns/literals
        self._fused = fused_accumulator(display) if display is not None else None
        self.aggs: list[_Agg] = []
        off = 1
        for a in aggregates:
            agg = make_aggregate(a, off)
            self.aggs.append(agg)
            off += agg.slots
        self.global_default = global_default and not group_key
        parts = getattr(self.eval, "parts", None)
        #: count/sum of columns: rows update their groups directly (``fused_group_update``)
        self._direct = None if parts is None or not self.aggs else fused_group_update(
            parts[:self.nkey], parts[self.nkey:], self.aggs, off)
        #: what ``_direct`` is generated from, for a join that feeds this reduce directly
        #: (``group_update_body``); ``None`` without ``_direct``
        self.direct_spec = None if self._direct is None else (
            parts[:self.nkey], parts[self.nkey:], self.aggs, off)
        #: key -> G (see module docstring); a group is removed when its count is zero
        self.groups: dict = {}
        #: key -> ``(is_error, row)`` last emitted
        self.outputs: dict = {}
        #: groups touched in the time being processed
        self.touched: set = set()
        self._flushed_once = False

    def push(self, port: int, chunk: list, time: int):
        if self._direct is not None:
            self._direct(chunk, self.groups, self.touched)
            return EMPTY, EMPTY
        errs: list = []
        acc: dict = {}
        if self._fused is not None:
            try:
                self._fused(chunk, acc)
            except TypeError:  # an unhashable aggregate input: no pre-consolidation
                acc = _PairList((self.eval(r), d) for r, d in chunk)
        else:
            vals, chunk = evaluate_rows(self.eval, chunk, errs)
            # consolidate (key, aggregate inputs) first: many rows usually share them
            get = acc.get
            try:
                for kv, (_row, d) in zip(vals, chunk):
                    acc[kv] = get(kv, 0) + d
            except TypeError:  # an unhashable aggregate input: no pre-consolidation
                acc = _PairList(zip(vals, (d for _r, d in chunk)))
        nk = self.nkey
        groups = self.groups
        touched = self.touched
        aggs = self.aggs
        Gs = []
        ds = []
        vals = []
        for kv, d in acc.items():
            if not d:
                continue
            vals.append(kv)
            key = kv[:nk] if nk else ()
            G = groups.get(key)
            if G is None:
                G = [0]
                for a in aggs:
                    a.init(G)
                groups[key] = G
                touched.add(key)
            elif key not in touched:
                touched.add(key)
            G[0] += d
            Gs.append(G)
            ds.append(d)
        for i, a in enumerate(aggs):
            j = nk + i
            a.update(Gs, [kv[j] for kv in vals], ds)
        return EMPTY, (errs or EMPTY)

    def flush_pending(self) -> bool:
        return bool(self.touched)

    def flush(self, time: int, budget=None):
        touched = self.touched
        if self.global_default and not self._flushed_once:
            touched.add(())
        self._flushed_once = True
        if not touched:
            return EMPTY, EMPTY
        groups = self.groups
        outputs = self.outputs
        aggs = self.aggs
        oks: list = []
        errs: list = []
        for key in take_touched(touched, budget):
            G = groups.get(key)
            new = None
            if G is not None:
                n = G[0]
                if n == 0:
                    del groups[key]
                elif n < 0:
                    new = (True, NEG_MULT)
                else:
                    try:
                        new = (False, key + tuple(a.finish(G) for a in aggs))
                    except EvalError as e:
                        new = (True, (e.sqlstate, e.message))
            if new is None and self.global_default:
                new = (False, tuple(a.default() for a in aggs))
            old = outputs.get(key)
            if old == new:
                continue
            if old is not None:
                (errs if old[0] else oks).append((old[1], -1))
            if new is not None:
                (errs if new[0] else oks).append((new[1], 1))
                outputs[key] = new
            else:
                del outputs[key]
        return oks, errs


class DistinctOp(Operator):
    """Reduce with no aggregates: the distinct group-key rows of positive multiplicity."""

    needs_flush = True

    def __init__(self, group_key: Sequence[ScalarExpr]):
        self.eval = row_evaluator(group_key)
        self.counts: dict = {}
        #: key -> count before the time being processed (first touch)
        self.touched: dict = {}

    def push(self, port: int, chunk: list, time: int):
        errs: list = []
        keys, chunk = evaluate_rows(self.eval, chunk, errs)
        counts = self.counts
        touched = self.touched
        get = counts.get
        for key, (_r, d) in zip(keys, chunk):
            c = get(key, 0)
            if key not in touched:
                touched[key] = c
            n = c + d
            if n:
                counts[key] = n
            else:
                del counts[key]
        return EMPTY, (errs or EMPTY)

    def flush_pending(self) -> bool:
        return bool(self.touched)

    def flush(self, time: int, budget=None):
        oks: list = []
        errs: list = []
        get = self.counts.get
        for key, old in take_touched(self.touched, budget):
            new = get(key, 0)
            if (old > 0) != (new > 0):
                oks.append((key, 1 if new > 0 else -1))
            if (old < 0) != (new < 0):
                errs.append((NEG_MULT, 1 if new < 0 else -1))
        return oks, (errs or EMPTY)
