"""The reduce of a dataflow that reads one time only: one pass into a dict of accumulators.

Owns ``OneShotReduceOp``, the GROUP BY a peek's dataflow (``until`` is ``as_of + 1``) runs
when every aggregate is a ``count``, ``sum``, ``avg``, ``min`` or ``max`` (not DISTINCT) and
no other operator feeds the reduce's groups directly (a join's or a series' fused loop, the
count of an input's diffs).  Such a reduce sees its input once, at ``as_of``, and emits
once: it needs no per-group output memory (there is nothing to retract), no touched set
(every group is touched) and no multisets for ``min``/``max`` while every diff is positive.
So, as Materialize's accumulable reductions fold their updates, ``push`` runs one generated
loop per chunk that adds each ``(row, diff)`` to its group's accumulator list (a one-column
group key is the value itself, not a 1-tuple), and ``flush`` finishes the groups in pieces
of its budget, removing each group as it emits it, so the operator holds nothing after its
last flush (no graveyard work once the peek is dropped).

Invariants: the output is exactly ``ReduceOp``'s for the same input at one time: diffs
other than 1 are multiplied in, NULL inputs are skipped, ``count(*)`` is the group's
multiplicity, a zero-multiplicity group outputs nothing and a negative one the error
``Non-positive multiplicity in Reduce``, sums are exact Python numbers finished by
``expr.functions.aggregates`` (where an overflow becomes the group's error row), NaN is
above every number for ``min``/``max``.  A ``min``/``max`` cannot fold a retraction: the
first negative diff such a reduce sees replays every chunk it kept into a ``ReduceOp``,
which then does the work (so it keeps its chunks, only when it has a ``min``/``max``).
Aggregate inputs that are expressions are evaluated first (a row whose evaluation raises
becomes one error row); columns and literals are read in the loop itself.

Deliberately not here: choosing when to use this (``compute.render.dataflow``), maintained
reduces (``compute.render.reduce.ReduceOp``), the aggregates' finishers.
"""
from __future__ import annotations

import dataclasses
from decimal import Decimal
import re
from typing import Optional, Sequence

from compute.render.operator import EMPTY, Operator
from compute.render.reduce import ReduceOp, evaluate_rows, row_evaluator
from expr.aggregate import NEG_MULT
from expr.compile import compile_source
from expr.functions.aggregates import avg_finish, sum_finish
from expr.relation import AggregateExpr
from expr.scalar import Column, Literal, ScalarExpr, permute
from repr.errors import EvalError

__all__ = ["OneShotReduceOp", "one_shot_supported", "one_shot_reduce"]

_FUNCS = ("count", "sum", "avg", "min", "max")
_SIMPLE = (bool, int, str, type(None))
#: input types whose values may be NaN (``min``/``max`` keep NaN apart)
_NAN_TYPES = ("float4", "float8", "numeric")
_ROW_COLUMN = re.compile(r"row\[(\d+)\]")


class _Retraction(Exception):
    """A ``min``/``max`` reduce met a negative diff (``OneShotReduceOp`` falls back)."""


def one_shot_supported(aggregates: Sequence[AggregateExpr]) -> bool:
    """Whether ``OneShotReduceOp`` computes ``aggregates`` (else the render keeps ``ReduceOp``)."""
    return bool(aggregates) and all(a.func in _FUNCS and not a.distinct and not a.order_by
                                    and not a.is_ordered_form() for a in aggregates)


def one_shot_reduce(op: ReduceOp, project: Optional[Sequence[int]] = None) -> Optional["OneShotReduceOp"]:
    """The ``OneShotReduceOp`` computing what ``op`` does, or ``None`` when its aggregates are
    not all supported; ``project`` (output column -> input column of a pure projection in
    front of ``op``) makes it read the projection's input rows instead."""
    group_key, aggregates, global_default = op.plan
    if not one_shot_supported(aggregates):
        return None
    if project is not None:
        m = dict(enumerate(project))
        group_key = tuple(permute(e, m) for e in group_key)
        aggregates = tuple(dataclasses.replace(a, expr=permute(a.expr, m)) for a in aggregates)
    return OneShotReduceOp(group_key, aggregates, global_default)


def _part(e: ScalarExpr, j: int) -> str:
    """How the fold reads expression ``e``: a column of the row, a literal, or column ``j``
    of the evaluated tuple (``None`` from the caller marks which)."""
    if isinstance(e, Column):
        return f"row[{e.index}]"
    if isinstance(e, Literal) and type(e.value) in _SIMPLE:
        return repr(e.value)
    return f"row[{j}]"


class OneShotReduceOp(Operator):
    needs_flush = True

    def __init__(self, group_key: Sequence[ScalarExpr], aggregates: Sequence[AggregateExpr],
                 global_default: bool = False):
        if not one_shot_supported(aggregates):
            raise AssertionError("one-shot reduce: unsupported aggregates")
        self.group_key = tuple(group_key)
        self.aggregates = tuple(aggregates)
        self.nkey = nk = len(group_key)
        self.global_default = global_default and not group_key
        exprs = self.group_key + tuple(a.expr for a in aggregates)
        direct = all(isinstance(e, Column) or (isinstance(e, Literal) and type(e.value) in _SIMPLE)
                     for e in exprs)
        #: ``None`` when the fold reads the input rows; else the evaluator whose tuples it reads
        self.eval = None if direct else row_evaluator(exprs)
        parts = [_part(e, j) if direct else f"row[{j}]" for j, e in enumerate(exprs)]
        key_parts = parts[:nk]
        #: whether some aggregate is ``min``/``max`` (positive diffs only; ``_Retraction``)
        self.has_minmax = any(a.func in ("min", "max") for a in aggregates)
        #: chunks pushed so far, kept for the fallback only when ``has_minmax``
        self._kept: Optional[list] = [] if self.has_minmax else None
        self._fallback: Optional[ReduceOp] = None
        self._key, self._init, self._aggs_lines, self._finishers = self._layout(key_parts, parts[nk:])
        #: generated at the first push, for the width of the rows it reads (unpacked)
        self._fold = None
        self._finish = self._compile_finish()
        #: key (the value itself for a one-column key) -> accumulator list, ``[0]`` the
        #: group's multiplicity
        self.groups: dict = {}
        self._flushed_once = False

    # ------------------------------------------------------------ code generation
    def _layout(self, key_parts, agg_parts):
        """The key expression, the initial accumulator list, ``one -> lines`` updating a
        group's accumulators (``one``: the diff is 1, written as a constant) and the
        finishing expressions.  ``count(col)``, ``sum`` and ``avg`` count NULL inputs (the
        non-NULL count is the multiplicity minus those), so a NULL-free input pays nothing
        for them."""
        nk = self.nkey
        if nk == 0:
            key = "()"
        elif nk == 1:
            key = key_parts[0]
        else:
            key = "(" + "".join(p + ", " for p in key_parts) + ")"
        init = ["0"]
        specs = []
        finishers = []
        for part, a in zip(agg_parts, self.aggregates):
            o = len(init)
            if a.func == "count":
                if part in ("True", "1"):  # count(*): the group's multiplicity
                    finishers.append("n")
                    continue
                init.append("0")
                specs.append(("nulls", part, o, a))
                finishers.append(f"(n - G[{o}])")
            elif a.func in ("sum", "avg"):
                init += ["0", "0"]
                specs.append(("sum", part, o, a))
                nonnull = f"(n - G[{o + 1}])"
                if a.func == "sum":
                    finishers.append(f"sum_finish(G[{o}] if {nonnull} else None, {a.output_type!r})")
                else:
                    finishers.append(f"(avg_finish(G[{o}], {nonnull}, {a.output_type!r}) if {nonnull} else None)")
            else:  # min / max: the running value; NaN (numbers only) apart in the next slot
                init += ["None", "None"]
                specs.append(("minmax", part, o, a))
                if a.func == "min":
                    finishers.append(f"(G[{o}] if G[{o}] is not None else G[{o + 1}])")
                else:
                    finishers.append(f"(G[{o + 1}] if G[{o + 1}] is not None else G[{o}])")

        def lines(one: bool) -> list:
            d = "1" if one else "d"
            out = [f"G[0] += {d}"]
            for kind, part, o, a in specs:
                if kind == "nulls":
                    if part == "None":
                        out.append(f"G[{o}] += {d}")
                    elif part.startswith("row["):  # another literal is never NULL
                        out += [f"if {part} is None:", f"    G[{o}] += {d}"]
                elif kind == "sum":
                    out += [f"v = {part}", "if v is not None:",
                            f"    G[{o}] += v" if one else f"    G[{o}] += v * d",
                            "else:", f"    G[{o + 1}] += {d}"]
                else:
                    cmp = "<" if a.func == "min" else ">"
                    out += [f"v = {part}", "if v is not None:"]
                    if not one:
                        out += ["    if d < 0:", "        raise _Retraction"]
                    out.append(f"    c = G[{o}]")
                    if a.input_type in _NAN_TYPES:
                        nan = ("v != v" if a.input_type != "numeric"
                               else "(v != v or (type(v) is Decimal and v.is_nan()))")
                        out += [f"    if {nan}:", f"        G[{o + 1}] = v",
                                f"    elif c is None or v {cmp} c:", f"        G[{o}] = v"]
                    else:
                        out += [f"    if c is None or v {cmp} c:", f"        G[{o}] = v"]
            return out
        return key, "[" + ", ".join(init) + "]", lines, finishers

    def _group_lines(self) -> list:
        return [f"key = {self._key}", "G = gget(key)", "if G is None:",
                f"    G = groups[key] = {self._init}"]

    def fold_body(self, columns: Optional[Sequence[str]] = None) -> Optional[list]:
        """The lines (unindented) that add one row with diff ``d`` to its group, with
        ``gget``/``groups`` bound; ``columns`` rewrites ``row[i]`` as ``columns[i]`` (a join
        that folds its matches here: ``OneShotJoinOp``).  ``None`` when the fold needs the
        evaluated tuple or may raise ``_Retraction`` (a ``min``/``max``)."""
        if self.eval is not None or self.has_minmax:
            return None
        body = self._group_lines() + self._aggs_lines(False)
        if columns is None:
            return body
        return [_ROW_COLUMN.sub(lambda m: columns[int(m.group(1))], ln) for ln in body]

    def _compile(self, width: int):
        """The fold over rows of ``width`` columns, unpacked in the loop's target; a branch
        for diff 1 (a snapshot's usual diff) with the diff as a constant."""
        cols = [f"_c{i}" for i in range(width)]

        def sub(lines):
            return [_ROW_COLUMN.sub(lambda m: cols[int(m.group(1))], ln) for ln in lines]
        target = "(" + "".join(c + ", " for c in cols) + ")"
        src = "\n".join(["def _make(_Retraction, Decimal):", " def _fold(chunk, groups):",
                         "    gget = groups.get", f"    for {target}, d in chunk:"]
                        + ["        " + ln for ln in sub(self._group_lines())]
                        + ["        if d == 1:"] + ["            " + ln for ln in sub(self._aggs_lines(True))]
                        + ["        else:"] + ["            " + ln for ln in sub(self._aggs_lines(False))]
                        + [" return _fold"]) + "\n"
        return compile_source("oneshot_reduce:" + src, src, "_make")(_Retraction, Decimal)

    def _compile_finish(self):
        nk = self.nkey
        if nk == 0:
            keyt = ""
        elif nk == 1:
            keyt = "key, "
        else:
            keyt = "*key, "
        row = "(" + keyt + "".join(f + ", " for f in self._finishers) + ")"
        src = "\n".join([
            "def _make(EvalError, NEG_MULT, sum_finish, avg_finish):",
            " def _finish(items, oks, errs):",
            "    for key, G in items:",
            "        n = G[0]",
            "        if n > 0:",
            "            try:",
            f"                oks.append(({row}, 1))",
            "            except EvalError as e:",
            "                errs.append(((e.sqlstate, e.message), 1))",
            "        elif n < 0:",
            "            errs.append((NEG_MULT, 1))",
            " return _finish"]) + "\n"
        return compile_source("oneshot_finish:" + src, src, "_make")(EvalError, NEG_MULT, sum_finish,
                                                                      avg_finish)

    # ------------------------------------------------------------ operator protocol
    def push(self, port: int, chunk: list, time: int):
        if self._fallback is not None:
            return self._fallback.push(port, chunk, time)
        errs: list = []
        rows = chunk
        if self.eval is not None:
            vals, kept = evaluate_rows(self.eval, chunk, errs)
            rows = [(v, d) for v, (_r, d) in zip(vals, kept)]
        if self._kept is not None:
            self._kept.append(chunk)
        if not rows:
            return EMPTY, (errs or EMPTY)
        fold = self._fold
        if fold is None:
            fold = self._fold = self._compile(len(rows[0][0]))
        try:
            fold(rows, self.groups)
        except _Retraction:
            self._fall_back(time)
        return EMPTY, (errs or EMPTY)

    def _fall_back(self, time: int) -> None:
        """Replay every chunk pushed so far into a ``ReduceOp``, which takes over."""
        red = ReduceOp(self.group_key, self.aggregates, self.global_default)
        kept, self._kept = self._kept, None
        self.groups = {}
        for c in kept:
            red.push(0, c, time)  # its evaluation errors were reported by our own push
        self._fallback = red

    def flush_pending(self) -> bool:
        if self._fallback is not None:
            return self._fallback.flush_pending()
        return bool(self.groups)

    def flush(self, time: int, budget=None):
        if self._fallback is not None:
            return self._fallback.flush(time, budget)
        self._kept = None  # the input is complete: no retraction can follow
        groups = self.groups
        oks: list = []
        errs: list = []
        if self.global_default and not self._flushed_once:
            G = groups.get(())
            if G is None or G[0] == 0:
                groups.clear()
                oks.append((tuple(0 if a.func == "count" else None for a in self.aggregates), 1))
        self._flushed_once = True
        if not groups:
            return (oks or EMPTY), EMPTY
        if budget is None or len(groups) <= budget:
            items = groups.items()
            self.groups = {}
        else:
            pop = groups.popitem
            items = [pop() for _ in range(max(1, budget))]
        self._finish(items, oks, errs)
        return (oks or EMPTY), (errs or EMPTY)
