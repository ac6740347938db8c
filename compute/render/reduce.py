"""Reduce (GROUP BY with aggregates) and Distinct.

Owns ``ReduceOp`` and ``DistinctOp``.  State is one list per group ``G``, laid out and
finished by the aggregate kinds of ``expr.aggregate`` (``G[0]`` is the group's total
multiplicity, then each aggregate's slots).

Invariants: ``push`` only accumulates (aggregate slots are updated in batch loops per
aggregate, not per-row method calls) and records the touched groups; ``flush`` emits,
per touched group, the retraction of the last emitted output and the new one, only
when they differ.  ``outputs`` holds exactly what this operator has emitted and not
retracted.  What a group outputs (its row, the error ``Non-positive multiplicity in
Reduce`` while its multiplicity is negative, or an aggregate's data error) is
``expr.aggregate.group_output``.  ``global_default`` makes the empty group key produce
the default row (count 0, others NULL) while the input is empty.

Deliberately not here: the aggregates' semantics (``expr.aggregate``) and ``avg`` scale
and overflow rules (``expr.functions`` finishers).
"""
from __future__ import annotations

from operator import itemgetter
import re
from typing import Optional, Sequence

from compute.render.operator import EMPTY, Operator, take_touched
from expr.aggregate import NEG_MULT, Count, Sum, default_row, group_output, make_aggregates, new_state
from expr.compile import compile_scalar, compile_source
from expr.relation import AggregateExpr
from expr.scalar import Call, Column, Literal, ScalarExpr
from repr.errors import EvalError

__all__ = ["ReduceOp", "DistinctOp", "row_evaluator"]

_SIMPLE = (bool, int, str, type(None))


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
        if type(a) is Count:
            lines.append(f"if {col(part)} is not None:" if part not in ("True", "1") else "if True:")
            lines.append(f"    G[{o}] += d")
        elif type(a) is Sum:
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


# ------------------------------------------------------------------ operators


class ReduceOp(Operator):
    needs_flush = True

    def __init__(self, group_key: Sequence[ScalarExpr], aggregates: Sequence[AggregateExpr],
                 global_default: bool = False):
        #: the plan's group key, aggregates and global default (what a one-shot reduce is
        #: built from: ``compute.render.reduce_oneshot.one_shot_reduce``)
        self.plan = (tuple(group_key), tuple(aggregates), global_default)
        self.nkey = len(group_key)
        self.eval = row_evaluator(tuple(group_key) + tuple(a.expr for a in aggregates))
        display = getattr(self.eval, "display", None)
        #: evaluation fused with pre-consolidation when the inputs are columns/literals
        self._fused = fused_accumulator(display) if display is not None else None
        self.aggs, off = make_aggregates(aggregates)
        self.global_default = global_default and not group_key
        parts = getattr(self.eval, "parts", None)
        #: count/sum of columns: rows update their groups directly (``fused_group_update``)
        self._direct = None if parts is None or not self.aggs else fused_group_update(
            parts[:self.nkey], parts[self.nkey:], self.aggs, off)
        #: what ``_direct`` is generated from, for a join that feeds this reduce directly
        #: (``group_update_body``); ``None`` without ``_direct``
        self.direct_spec = None if self._direct is None else (
            parts[:self.nkey], parts[self.nkey:], self.aggs, off)
        #: ``(key parts, aggregate input parts)`` written over ``row`` (``row[i]`` or a
        #: literal's repr) when the group key and the aggregate inputs are columns and
        #: simple literals: what an operator feeding the groups in batches reads
        #: (``compute.render.flat_map.FlatMapOp.fuse_reduce``); else ``None``
        exprs = tuple(group_key) + tuple(a.expr for a in aggregates)
        if parts is None and all(isinstance(e, Column) for e in exprs):
            parts = [f"row[{e.index}]" for e in exprs]
        self.batch_spec = None if parts is None else (parts[:self.nkey], parts[self.nkey:])
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
                G = groups[key] = new_state(aggs)
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
                new = group_output(aggs, key, G)
                if new is None:  # its multiplicity is zero
                    del groups[key]
            if new is None and self.global_default:
                new = (False, default_row(aggs))
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
