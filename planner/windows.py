"""Binding window functions (``f(...) OVER (...)``, ``WINDOW w AS (...)``) to MIR.

Owns ``bind_windows`` (called by ``planner.bind_query`` after FROM/WHERE/GROUP BY/HAVING
and before the select list, DISTINCT, ORDER BY and LIMIT, PostgreSQL's order) and
``window_call`` (what ``planner.bind_expr`` answers for a ``FuncCall`` with ``over``).

Mechanism (as Materialize plans window functions): the window functions' arguments,
PARTITION BY and ORDER BY expressions are bound against the query's context and mapped
to columns; then, per distinct PARTITION BY key (the outer prefix leads it, so correlated
subqueries partition per outer row), one ``Reduce`` grouped by that key whose single
``expr.window.WindowAggregateExpr`` takes a record of the whole row and produces the
partition's list of ``row + values``; a ``FlatMap unnest_window`` turns the list back into
rows and a ``Project`` restores the row's columns (the PARTITION BY columns taken from the
Reduce's key, so predicates on them push below the Reduce) followed by the new values.
Invariant (``planner.bind_expr``'s): columns are only appended, never removed or
reordered, so expressions bound earlier stay valid.  Each call gets one column;
identical calls share it.

RANGE frames with offset PRECEDING/FOLLOWING take one numeric ORDER BY column (integer,
numeric or float, as PostgreSQL's in_range); over date/time columns they are refused with
0A000, as are DISTINCT and ORDER BY inside window aggregates (PostgreSQL refuses them
too).  Frame exclusion (``EXCLUDE CURRENT ROW | GROUP | TIES | NO OTHERS``) goes into the
``WindowFrame``.
Deliberately not here: the per-partition evaluation (``expr.window_eval``).
"""
from __future__ import annotations

from pglast import ast
from pglast.enums import parsenodes as PN

from expr.relation import AggregateExpr, ColumnOrder, FlatMap, Map, Project, Reduce
from expr.scalar import Call, Column, If, Literal
from expr.window import WindowAggregateExpr, WindowFrame, WindowFunc
from planner.bind_expr import find_calls
from sql import errors, functions as F, types as T
from sql.functions.aggregates import WINDOW_FUNCTIONS

__all__ = ["find_windows", "bind_windows", "window_call"]

WINDOW_DEF_CLAUSE = "window definitions"
WINDOW_ARG_CLAUSE = "window function arguments"


def find_windows(node, out: list) -> list:
    """Window function calls in ``node`` outside subqueries (not looking inside them)."""
    return find_calls(node, _is_window_call, out)


def _is_window_call(node) -> bool:
    return isinstance(node, ast.FuncCall) and node.over is not None


def window_call(ctx, node):
    """The column a window call was bound to, or PostgreSQL's error for its place."""
    cols = getattr(ctx, "windows", None)
    if cols is not None and id(node) in cols and ctx.clause not in (WINDOW_DEF_CLAUSE, WINDOW_ARG_CLAUSE):
        return Column(cols[id(node)])
    clause = ctx.clause or "this context"
    if clause == "aggregate function calls":
        raise ctx.binder.error(errors.GROUPING_ERROR, "aggregate function calls cannot contain window function calls",
                               node.location)
    if clause == WINDOW_ARG_CLAUSE:
        raise ctx.binder.error("42P20", "window function calls cannot be nested", node.location)
    clause = {"JOIN/ON": "JOIN conditions", "FROM": "functions in FROM", "DELETE": "WHERE"}.get(clause, clause)
    raise ctx.binder.error("42P20", f"window functions are not allowed in {clause}", node.location)


def bind_windows(binder, node, ctx, p: int) -> None:
    """Bind the window calls of SELECT ``node``'s target list, DISTINCT ON and ORDER BY into ``ctx``:
    ``ctx.rel`` gains one column per distinct call and ``ctx.windows`` maps
    ``id(call) -> column``."""
    calls: list = []
    for t in node.targetList or ():
        find_windows(t.val, calls)
    for s in node.sortClause or ():
        find_windows(s.node, calls)
    for d in node.distinctClause or ():  # DISTINCT ON (row_number() OVER ())
        if d is not None and not isinstance(d, ast.A_Const):
            find_windows(d, calls)
    named = _named_windows(binder, node.windowClause or ())
    if not calls:
        return
    saved = ctx.clause
    bound = []
    try:
        for call in calls:
            wd = _resolve_def(binder, call.over, named)
            bound.append(_bind_call(binder, ctx, call, wd))
    finally:
        ctx.clause = saved
    # map every non-column expression once, after all binding (subqueries append columns)
    n = len(ctx.types)
    extra: list = []

    def col(e) -> int:
        if isinstance(e, Column):
            return e.index
        if e not in extra:
            extra.append(e)
        return n + extra.index(e)
    specs = []
    for b in bound:
        pkey = tuple(range(p)) + tuple(dict.fromkeys(col(e) for e in b["partition"]))
        order = tuple(ColumnOrder(col(e), d, nl) for e, d, nl in b["order"])
        args = tuple(col(e) for e in b["args"])
        specs.append((pkey, WindowFunc(b["name"], args, order, b["frame"], b["type"], b["agg"])))
    if extra:
        ctx.rel = Map(ctx.rel, tuple(extra))
        ctx.types = ctx.types + [ctx.typeof(e) for e in extra]
    # one Reduce per partition key; identical calls share a column
    column_of: dict = {}
    stages: dict = {}
    for pkey, f in specs:
        stage = stages.setdefault(pkey, [])
        if (pkey, f) not in column_of:
            column_of[(pkey, f)] = None
            stage.append(f)
    for pkey, funcs in stages.items():
        base = len(ctx.types)
        ctx.rel = window_stage(ctx.rel, base, pkey, funcs)
        ctx.types = ctx.types + [f.output_type for f in funcs]
        for i, f in enumerate(funcs):
            column_of[(pkey, f)] = base + i
    ctx.windows = {id(call): column_of[spec] for call, spec in zip(calls, specs)}


def window_stage(rel, n: int, pkey: tuple, funcs: list):
    """``rel`` (arity ``n``) with one column appended per window function of ``funcs``,
    all partitioned by the columns ``pkey``."""
    rec = Call("record", tuple(Column(i) for i in range(n)), "record")
    agg = WindowAggregateExpr("window", rec, False, "record", "list", funcs=tuple(funcs))
    k = len(pkey)
    red = Reduce(rel, tuple(Column(c) for c in pkey), (agg,))
    flat = FlatMap(red, "unnest_window", (Column(k),), n + len(funcs))
    outs = [pkey.index(j) if j in pkey else k + 1 + j for j in range(n)]
    outs += [k + 1 + n + i for i in range(len(funcs))]
    return Project(flat, tuple(outs))


# ------------------------------------------------------------------ window definitions


def _named_windows(binder, defs) -> dict:
    named: dict = {}
    for wd in defs:
        if wd.name in named:
            raise binder.error("42P20", f'window "{wd.name}" is already defined', wd.location)
        named[wd.name] = _resolve_def(binder, wd, named, defining=True)
    return named


def _resolve_def(binder, wd, named: dict, defining: bool = False) -> dict:
    """A window definition as ``{partition, order, frame_options, start, end, location}``
    with a referenced window's clauses copied in (PostgreSQL's rules)."""
    if wd.name and not defining and not wd.refname and not wd.partitionClause and not wd.orderClause:
        if wd.name not in named:
            raise binder.error("42704", f'window "{wd.name}" does not exist', wd.location)
        return named[wd.name]
    own = {"partition": tuple(wd.partitionClause or ()), "order": tuple(wd.orderClause or ()),
           "frame_options": wd.frameOptions, "start": wd.startOffset, "end": wd.endOffset,
           "location": wd.location}
    if not wd.refname:
        return own
    ref = named.get(wd.refname)
    if ref is None:
        raise binder.error("42704", f'window "{wd.refname}" does not exist', wd.location)
    if own["partition"]:
        raise binder.error("42P20", f'cannot override PARTITION BY clause of window "{wd.refname}"', wd.location)
    if own["order"] and ref["order"]:
        raise binder.error("42P20", f'cannot override ORDER BY clause of window "{wd.refname}"', wd.location)
    if ref["frame_options"] & PN.FRAMEOPTION_NONDEFAULT:
        raise binder.error("42P20", f'cannot copy window "{wd.refname}" because it has a frame clause', wd.location)
    own["partition"] = ref["partition"]
    own["order"] = own["order"] or ref["order"]
    return own


#: RANGE offset frames: ORDER BY column type -> the offset's type (PostgreSQL's in_range)
_RANGE_OFFSET_TYPES = {"int2": "int8", "int4": "int8", "int8": "int8", "numeric": "numeric",
                       "float4": "float8", "float8": "float8"}


def _bind_frame(binder, wd: dict, order_types: list) -> WindowFrame:
    opts = wd["frame_options"]
    loc = wd["location"]
    mode = "rows" if opts & PN.FRAMEOPTION_ROWS else "groups" if opts & PN.FRAMEOPTION_GROUPS else "range"
    exclude = ("current_row" if opts & PN.FRAMEOPTION_EXCLUDE_CURRENT_ROW else
               "group" if opts & PN.FRAMEOPTION_EXCLUDE_GROUP else
               "ties" if opts & PN.FRAMEOPTION_EXCLUDE_TIES else "no_others")
    if mode == "groups" and not wd["order"]:
        raise binder.error("42P20", "GROUPS mode requires an ORDER BY clause", loc)
    offset_type = "int8"
    if mode == "range" and opts & (PN.FRAMEOPTION_START_OFFSET_PRECEDING | PN.FRAMEOPTION_START_OFFSET_FOLLOWING |
                                   PN.FRAMEOPTION_END_OFFSET_PRECEDING | PN.FRAMEOPTION_END_OFFSET_FOLLOWING):
        if len(order_types) != 1:
            raise binder.error("42P20", "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
                               loc)
        offset_type = _RANGE_OFFSET_TYPES.get(order_types[0])
        if offset_type is None:
            raise binder.error(errors.FEATURE_NOT_SUPPORTED, "RANGE with offset PRECEDING/FOLLOWING is not supported "
                               f"for column type {T.display_name(order_types[0])}", loc)
    start, end = "unbounded", "unbounded"
    so = eo = 0
    if opts & PN.FRAMEOPTION_START_CURRENT_ROW:
        start = "current"
    elif opts & (PN.FRAMEOPTION_START_OFFSET_PRECEDING | PN.FRAMEOPTION_START_OFFSET_FOLLOWING):
        start = "preceding" if opts & PN.FRAMEOPTION_START_OFFSET_PRECEDING else "following"
        so = _offset(binder, wd["start"], mode, "starting", offset_type, order_types)
    if opts & PN.FRAMEOPTION_END_CURRENT_ROW:
        end = "current"
    elif opts & (PN.FRAMEOPTION_END_OFFSET_PRECEDING | PN.FRAMEOPTION_END_OFFSET_FOLLOWING):
        end = "preceding" if opts & PN.FRAMEOPTION_END_OFFSET_PRECEDING else "following"
        eo = _offset(binder, wd["end"], mode, "ending", offset_type, order_types)
    return WindowFrame(mode, start, so, end, eo, exclude)


def _offset(binder, x, mode: str, which: str, to: str, order_types: list):
    from planner.bind_expr import ExprContext, Scope
    from planner.bind_query import UNIT
    loc = getattr(x, "location", None)
    if _has_column_ref(x):
        raise binder.error("42P10", f"argument of {mode.upper()} must not contain variables", loc)
    ctx = ExprContext(binder, UNIT, [], Scope([]), clause=WINDOW_DEF_CLAUSE)
    e = ctx.bind(x)
    t = ctx.typeof(e)
    if mode == "range" and to == "int8" and t not in ("int2", "int4", "int8", "unknown"):
        raise binder.error(errors.FEATURE_NOT_SUPPORTED, "RANGE with offset PRECEDING/FOLLOWING is not supported "
                           f"for column type {T.display_name(order_types[0])} and offset type {T.display_name(t)}",
                           loc)
    e = ctx.coerce(e, to, "implicit", loc)
    if not isinstance(e, Literal):
        e = ctx.fold(e, loc)
    v = e.value
    if v is None:
        raise binder.error("22004", f"frame {which} offset must not be null", loc)
    if mode == "range" and (v < 0 or v != v):
        raise binder.error("22013", "invalid preceding or following size in window function", loc)
    if v < 0:
        raise binder.error("22013", f"frame {which} offset must not be negative", loc)
    return v


def _has_column_ref(node) -> bool:
    from planner.bind_expr import contains_node
    return contains_node(node, ast.ColumnRef)


# ------------------------------------------------------------------ calls


def _bind_call(binder, ctx, call, wd: dict) -> dict:
    from planner.bind_expr import enum_name, with_position
    name = call.funcname[-1].sval.lower()
    loc = call.location
    ctx.clause = WINDOW_DEF_CLAUSE
    partition = []
    for x in wd["partition"]:
        e = ctx.bind(x)
        if ctx.typeof(e) == "unknown":
            e = ctx.coerce(e, "text")
        partition.append(e)
    order = []
    for s in wd["order"]:
        e = ctx.bind(s.node)
        if ctx.typeof(e) == "unknown":
            e = ctx.coerce(e, "text")
        d = enum_name(s.sortby_dir)
        if d == "SORTBY_USING":
            raise binder.error(errors.FEATURE_NOT_SUPPORTED, "ORDER BY USING is not supported", loc)
        desc = d == "SORTBY_DESC"
        nl = enum_name(s.sortby_nulls)
        order.append((e, desc, (not desc) if nl == "SORTBY_NULLS_DEFAULT" else nl == "SORTBY_NULLS_LAST"))
    frame = _bind_frame(binder, wd, list(dict.fromkeys(ctx.typeof(e) for e, _, _ in order))
                        if len({e for e, _, _ in order}) == 1 else [ctx.typeof(e) for e, _, _ in order])
    ctx.clause = WINDOW_ARG_CLAUSE
    is_agg = name in F.aggregate_names()
    if call.agg_distinct and is_agg:
        raise binder.error(errors.FEATURE_NOT_SUPPORTED, "DISTINCT is not implemented for window functions", loc)
    if call.agg_order and is_agg:
        raise binder.error(errors.FEATURE_NOT_SUPPORTED,
                           "aggregate ORDER BY is not implemented for window functions", loc)
    args = [] if call.agg_star else [ctx.bind(a) for a in call.args or ()]
    out = {"partition": partition, "order": order, "frame": frame, "agg": None}
    if is_agg:
        types = [ctx.typeof(a) for a in args]
        try:
            res = F.resolve_aggregate(name, types)
        except errors.Error as ex:
            raise with_position(ex, binder.pos(loc))
        if res.func == "list_agg":  # lists (planner.bind_lists): not as a window function
            raise binder.error(errors.FEATURE_NOT_SUPPORTED, "list_agg is not implemented for window functions", loc)
        if res.func == "count" and not args:
            expr = Literal(True, "bool")
        elif res.func == "jsonb_object_agg":
            v = ctx.coerce(args[1], "text", "implicit", loc) if types[1] == "unknown" else args[1]
            expr = Call("record", (ctx.coerce(args[0], "text", "implicit", loc), v), "record")
        elif res.func == "string_agg":
            expr = Call("record", (ctx.coerce(args[0], res.input_type, "implicit", loc),
                                   ctx.coerce(args[1], "text", "implicit", loc)), "record")
        else:
            expr = ctx.coerce(args[0], res.input_type, "implicit", loc)
        if res.func in ("array_agg", "jsonb_agg"):  # keep NULL values apart from rows FILTER drops
            expr = Call("record", (expr,), "record")
        if call.agg_filter is not None:
            ctx.clause = "FILTER"
            cond = ctx.bind_bool(call.agg_filter, "FILTER")
            t = "record" if res.func in ("string_agg", "jsonb_object_agg", "array_agg", "jsonb_agg") \
                else res.input_type
            expr = If(cond, expr, Literal(None, t), t)
        out.update(name="aggregate", args=[expr], type=res.output_type,
                   agg=AggregateExpr(res.func, Column(0), False, res.input_type, res.output_type))
        return out
    sig = WINDOW_FUNCTIONS.get(name)
    if sig is None:
        raise binder.error("42809", f"OVER specified, but {name} is not a window function nor an aggregate function",
                           loc)
    if call.agg_filter is not None:
        raise binder.error(errors.FEATURE_NOT_SUPPORTED, "FILTER is not implemented for non-aggregate window functions",
                           loc)
    forms, result = sig
    form = next((f for f in forms if len(f) == len(args)), None)
    if form is None or call.agg_star or call.agg_distinct:
        shown = ", ".join(T.display_name(ctx.typeof(a)) for a in args)
        raise binder.error(errors.UNDEFINED_FUNCTION, f"function {name}({shown}) does not exist", loc)
    if "anycompatible" in form:
        t, (v, d) = ctx.common([args[0], args[2]], name, loc)
        t = "text" if t == "unknown" else t
        args = [ctx.coerce(v, t, "implicit", loc), args[1], ctx.coerce(d, t, "implicit", loc)]
    bound = []
    for a, want in zip(args, form):
        if want == "any" and ctx.typeof(a) == "unknown":
            raise binder.error("42804",
                               "could not determine polymorphic type because input has type unknown", loc)
        if want in ("any", "anycompatible"):
            bound.append(a)
        else:
            bound.append(ctx.coerce(a, want, "implicit", loc))
    if result in ("any", "anycompatible"):
        result = ctx.typeof(bound[0]) if bound else "text"
    out.update(name=name, args=bound, type=result)
    return out
