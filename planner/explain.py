"""EXPLAIN: text renderings of plans, dataflow descriptions and peek decisions.

Owns the human-readable forms: ``explain_expr`` (an indented operator tree in the style
of Materialize's ``EXPLAIN``: ``#i`` columns, infix operators), ``explain_dataflow`` (what
a DataflowDescription imports, builds and exports, with ``is_single_time`` and
``is_peek_dataflow``), and ``explain_peek`` (fast path with the index and any key lookup,
or peek dataflow, and which runtime answers).  Invariant: the runtime named here is
decided by the same predicates the Multiplexer routes by (``desc.is_peek_dataflow()``
and, for fast-path peeks, whether the index is one maintenance publishes).
Deliberately not here: parsing EXPLAIN statements or choosing plans.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Optional

from compute.dataflow import DataflowDescription
from expr.relation import (ArrangeBy, Constant, Filter, FlatMap, Get, Join, Let, LetRec, Map, Negate, Project,
                           Reduce, Threshold, TopK, Union)
from expr.scalar import Call, CallMzNow, Column, If, Literal

INFIX = {
    "eq": "=", "neq": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">=",
    "add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%", "and": "AND", "or": "OR",
    "concat": "||",
}


def _value(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return "\"" + v.replace("\"", "\\\"") + "\""
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(_value(x) for x in v) + ")"
    return repr(v)


def explain_scalar(e) -> str:
    if isinstance(e, Column):
        return f"#{e.index}"
    if isinstance(e, Literal):
        return _value(e.value)
    if isinstance(e, CallMzNow):
        return "mz_now()"
    if isinstance(e, If):
        return (f"case when {explain_scalar(e.cond)} then {explain_scalar(e.then)} "
                f"else {explain_scalar(e.els)} end")
    if isinstance(e, Call):
        base = e.func
        for op in INFIX:
            if e.func == op or e.func.startswith(op + "_"):
                base = op
                break
        if base in INFIX and len(e.args) >= 2:
            return "(" + f" {INFIX[base]} ".join(explain_scalar(a) for a in e.args) + ")"
        if e.func == "not" and len(e.args) == 1:
            inner = e.args[0]
            if isinstance(inner, Call) and inner.func == "is_null":
                return f"({explain_scalar(inner.args[0])}) IS NOT NULL"
            return f"NOT({explain_scalar(inner)})"
        if e.func == "is_null" and len(e.args) == 1:
            return f"({explain_scalar(e.args[0])}) IS NULL"
        return f"{e.func}(" + ", ".join(explain_scalar(a) for a in e.args) + ")"
    return repr(e)


def _list(xs) -> str:
    return ", ".join(explain_scalar(x) for x in xs)


def _agg(a) -> str:
    inner = explain_scalar(a.expr)
    if a.func == "window":  # window functions: expr.window.WindowAggregateExpr
        return a.describe(inner)
    if a.func == "count" and isinstance(a.expr, Literal) and a.expr.value is True:
        inner = "*"
    return f"{a.func}({'distinct ' if a.distinct else ''}{inner})"


def _order(o) -> str:
    return f"#{o.column}{' desc' if o.desc else ' asc'}{' nulls_last' if o.nulls_last else ' nulls_first'}"


def _lines(e, depth: int, out: list) -> None:
    pad = "  " * depth

    def emit(s):
        out.append(pad + s)

    def child(x, d=1):
        _lines(x, depth + d, out)

    if isinstance(e, Constant):
        if e.error is not None:
            emit(f"Error {e.error[0]}: {e.error[1]}")
        elif not e.rows:
            emit("Constant <empty>")
        else:
            emit("Constant")
            for row, c in e.rows:
                emit(f"  - {_value(row)}" + (f" x {c}" if c != 1 else ""))
    elif isinstance(e, Get):
        emit(f"Get {e.id}")
    elif isinstance(e, Let):
        emit("With")
        emit(f"  cte {e.id} =")
        _lines(e.value, depth + 2, out)
        emit("Return")
        child(e.body)
    elif isinstance(e, LetRec):  # Materialize's rendering of recursive bindings
        emit("Return")
        child(e.body)
        lim = next((x for x in e.limits if x is not None), None)
        emit("With Mutually Recursive" + ("" if lim is None else
             f" [recursion_limit={lim.max_iters}{', return_at_limit' if lim.return_at else ''}]"))
        for i, v in zip(e.ids, e.values):
            emit(f"  cte {i} =")
            _lines(v, depth + 2, out)
    elif isinstance(e, Map):
        emit(f"Map ({_list(e.scalars)})")
        child(e.input)
    elif isinstance(e, Filter):
        emit("Filter " + " AND ".join(explain_scalar(p) for p in e.predicates))
        child(e.input)
    elif isinstance(e, Project):
        emit("Project (" + ", ".join(f"#{i}" for i in e.outputs) + ")")
        child(e.input)
    elif isinstance(e, FlatMap):
        emit(f"FlatMap {e.func}({_list(e.exprs)})")
        child(e.input)
    elif isinstance(e, Join):
        on = " AND ".join(" = ".join(explain_scalar(x) for x in cls) for cls in e.equivalences)
        emit("CrossJoin" if not on else f"Join on=({on})")
        for x in e.inputs:
            child(x)
    elif isinstance(e, Reduce):
        parts = []
        if e.group_key:
            parts.append(f"group_by=[{_list(e.group_key)}]")
        if e.aggregates:
            parts.append("aggregates=[" + ", ".join(_agg(a) for a in e.aggregates) + "]")
        if not e.aggregates:
            emit("Distinct " + " ".join(parts) if parts else "Distinct")
        else:
            emit("Reduce " + " ".join(parts) + (" global" if e.global_default else ""))
        child(e.input)
    elif isinstance(e, TopK):
        parts = []
        if e.group_key:
            parts.append("group_by=[" + ", ".join(f"#{i}" for i in e.group_key) + "]")
        if e.order_key:
            parts.append("order_by=[" + ", ".join(_order(o) for o in e.order_key) + "]")
        if e.limit is not None:
            parts.append(f"limit={e.limit}")
        if e.offset:
            parts.append(f"offset={e.offset}")
        emit("TopK " + " ".join(parts))
        child(e.input)
    elif isinstance(e, Negate):
        emit("Negate")
        child(e.input)
    elif isinstance(e, Threshold):
        emit("Threshold")
        child(e.input)
    elif isinstance(e, Union):
        emit("Union")
        for x in e.inputs:
            child(x)
    elif isinstance(e, ArrangeBy):
        emit("ArrangeBy keys=[" + ", ".join("[" + _list(k) + "]" for k in e.keys) + "]")
        child(e.input)
    else:
        emit(repr(e))


def explain_expr(expr) -> str:
    """The plan as an indented tree, one operator per line, inputs indented below it."""
    out: list = []
    _lines(expr, 0, out)
    return "\n".join(out) + "\n"


def _frontier(f) -> str:
    return "[]" if f is None else f"[{f}]"


def explain_dataflow(desc: DataflowDescription) -> str:
    """Imports, builds (with their plans), exports, times and the two predicates."""
    out = [f"Dataflow {desc.debug_name or '(unnamed)'}",
           f"  as_of={desc.as_of} until={_frontier(desc.until)} "
           f"single_time={'yes' if desc.is_single_time() else 'no'} "
           f"peek_dataflow={'yes' if desc.is_peek_dataflow() else 'no'}"]
    for s in desc.source_imports:
        out.append(f"  source import {s.id} (arity {s.arity})")
    for i in desc.index_imports:
        out.append(f"  index import {i.id} on {i.on_id} key=[{_list(i.key)}]")
    for b in desc.objects_to_build:
        out.append(f"  build {b.id}:")
        out.extend("    " + line for line in explain_expr(b.plan).splitlines())
    for x in desc.index_exports:
        out.append(f"  index export {x.id} on {x.on_id} key=[{_list(x.key)}]")
    for s in desc.sink_exports:
        opts = "".join(f" {k}={v}" for k, v in s.options)
        out.append(f"  sink export {s.id} from {s.from_id} kind={s.kind}{opts}")
    return "\n".join(out) + "\n"


def dataflow_runtime(desc: DataflowDescription, interactive_enabled: bool) -> str:
    """The runtime that hosts ``desc``, exactly as the Multiplexer routes CreateDataflow."""
    return "interactive" if interactive_enabled and desc.is_peek_dataflow() else "maintenance"


@dataclass(frozen=True)
class PeekExplanation:
    path: str      #: "constant" | "fast path" | "peek dataflow"
    runtime: str   #: "interactive" | "maintenance" | "" (constant: no runtime involved)
    text: str


def explain_peek(plan, *, interactive_enabled: bool, desc: Optional[DataflowDescription] = None,
                 index_published: bool = True) -> PeekExplanation:
    """Explain how a SELECT is answered.  ``plan`` is a ``planner.peek`` plan; for a slow
    path pass the lowered ``desc``.  ``index_published``: whether the fast path's index
    is one maintenance publishes to the shared registry (every non-transient index)."""
    from planner.peek import ConstantPeek, FastPathPeek, SlowPathPeek
    if isinstance(plan, ConstantPeek):
        text = "Explained Query (constant):\n" + explain_expr(
            Constant(plan.rows, len(plan.rows[0][0]) if plan.rows else 0, plan.error))
        return PeekExplanation("constant", "", text)
    if isinstance(plan, FastPathPeek):
        runtime = "interactive" if interactive_enabled and index_published else "maintenance"
        lines = [f"Explained Query (fast path): read index {plan.index_id} on {plan.on_id} "
                 f"key=[{_list(plan.key)}]"]
        if plan.literal_constraints is not None:
            lines.append("  lookup values=[" + ", ".join(_value(k) for k in plan.literal_constraints) + "]")
        else:
            lines.append("  full scan")
        m = plan.mfp
        if m.expressions:
            lines.append(f"  map=({_list(m.expressions)})")
        if m.predicates:
            lines.append("  filter=(" + " AND ".join(explain_scalar(p) for p in m.predicates) + ")")
        if m.output_projection() != tuple(range(m.input_arity)):
            lines.append("  project=(" + ", ".join(f"#{i}" for i in m.output_projection()) + ")")
        lines.append(f"  runtime: {runtime}")
        return PeekExplanation("fast path", runtime, "\n".join(lines) + "\n")
    if isinstance(plan, SlowPathPeek):
        runtime = dataflow_runtime(desc, interactive_enabled) if desc is not None else (
            "interactive" if interactive_enabled else "maintenance")
        text = "Explained Query (peek dataflow):\n" + explain_expr(plan.expr)
        if desc is not None:
            text += explain_dataflow(desc)
        text += f"runtime: {runtime}\n"
        return PeekExplanation("peek dataflow", runtime, text)
    raise TypeError(f"not a peek plan: {plan!r}")
