"""Binding of the array and jsonb expression forms and of ORDER BY inside aggregate calls
(the document types' part of ``planner.bind_expr``, split out to keep that module short).

Owns: ``ARRAY[...]`` constructors (``ARRAY[[1,2],[3,4]]``: sub-arrays make one more
dimension), ``ARRAY(SELECT ...)`` (planned as a scalar subquery around ``array_agg`` with the
subquery's ORDER BY, ``{}`` when it has no rows: ``bind_array_subquery``), subscripts and
slices (``a[1]``, ``a[1][2]``, ``a[1:2][2]``, jsonb ``j['k']``), ``x op ANY/ALL(array)``,
the sort keys of ``agg(... ORDER BY ...)`` and the
types of Python parameters of the document types (``document_literal``: bytes -> bytea,
UUID -> uuid, dict -> jsonb, list -> array or jsonb; docs/API.md).  Each binding function
takes the ``ExprContext`` it binds against as its first argument.
Invariant: like every binder, user mistakes raise ``sql.errors`` with a SQLSTATE.
Deliberately not here: the signatures (``sql.functions.arrays``/``sql.functions.jsonb``) and evaluation
(``expr.functions.arrays``/``expr.functions.jsonb``).
"""
from __future__ import annotations

from decimal import Decimal
from typing import Optional

from pglast import ast

from expr.scalar import Call, Literal, ScalarExpr
from repr.errors import EvalError
from sql import errors, functions as F, types as T
from sql.types import arrays as TD

#: aggregates whose value depends on input order (ORDER BY inside the call is kept)
ORDER_SENSITIVE = ("array_agg", "jsonb_agg", "jsonb_object_agg", "string_agg", "list_agg")


def _enum_name(v) -> str:
    return getattr(v, "name", v)


def document_literal(value) -> Optional[Literal]:
    """``bytes``/``bytearray``/``memoryview`` -> bytea, ``uuid.UUID`` -> uuid, ``dict`` -> jsonb,
    ``list``/``tuple`` of scalars -> an array of their common type (text when all are
    NULL), a list holding a dict or list -> jsonb."""
    import uuid

    from repr.arrays import Array
    from repr.jsonb import make
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Literal(bytes(value), "bytea")
    if isinstance(value, uuid.UUID):
        return Literal(value, "uuid")
    try:
        if isinstance(value, dict):
            return Literal(make(value), "jsonb")
        if isinstance(value, (list, tuple)):
            if any(isinstance(v, (dict, list, tuple)) for v in value):
                return Literal(make(list(value)), "jsonb")
            lits = [_python_literal(v) for v in value]
            t = T.common_type([x.type for x in lits if x.value is not None] or ["unknown"])
            if t is None or TD.is_array(t):
                raise errors.error_for(errors.DATATYPE_MISMATCH, "list parameter elements have no common type")
            conv = {"text": str, "numeric": Decimal, "float8": float}.get(t)
            vals = [None if x.value is None else (conv(x.value) if conv and x.type != t else x.value) for x in lits]
            return Literal(Array(vals), TD.array_of(t))
    except EvalError as ex:
        raise errors.error_for(ex.sqlstate, ex.message)
    return None


def _python_literal(v):
    from planner.bind_expr import python_literal
    return python_literal(v)


def bind_agg_order(ctx, inner, node, args) -> tuple:
    """The sort keys and ``(desc, nulls_last)`` of ``agg(... ORDER BY ...)``; none for
    aggregates whose value does not depend on input order (PostgreSQL accepts and
    ignores the clause there)."""
    name = node.funcname[-1].sval.lower()
    if not node.agg_order or name not in ORDER_SENSITIVE:
        return (), ()
    keys, dirs = [], []
    for sb in node.agg_order:
        if sb.useOp:
            raise ctx.binder.error(errors.FEATURE_NOT_SUPPORTED, "ORDER BY ... USING in aggregates is not "
                                   "supported", node.location)
        k = inner.bind(sb.node)
        if inner.typeof(k) == "unknown":
            k = inner.coerce(k, "text", "implicit", node.location)
        if node.agg_distinct and not any(k == a for a in args):
            raise ctx.binder.error("42P10", "in an aggregate with DISTINCT, ORDER BY expressions must appear "
                                   "in argument list", getattr(sb.node, "location", node.location))
        desc = _enum_name(sb.sortby_dir) == "SORTBY_DESC"
        nulls = _enum_name(sb.sortby_nulls)
        nulls_last = (not desc) if nulls == "SORTBY_NULLS_DEFAULT" else nulls == "SORTBY_NULLS_LAST"
        keys.append(k)
        dirs.append((desc, nulls_last))
    return tuple(keys), tuple(dirs)


def bind_array_expr(ctx, node) -> ScalarExpr:
    loc = node.location
    elems = list(node.elements or ())
    if not elems:
        raise ctx.binder.error("42P18", "cannot determine type of empty array", loc)
    bound = [ctx.bind(e) for e in elems]
    nested = any(isinstance(e, ast.A_ArrayExpr) for e in elems) or any(TD.is_array(ctx.typeof(b)) for b in bound)
    t, coerced = ctx.common(bound, "ARRAY", loc)
    if nested:  # sub-arrays: one more dimension (expr.functions.arrays.array_create_md)
        if not TD.is_array(t):
            raise ctx.binder.error(errors.DATATYPE_MISMATCH, f"ARRAY types {T.display_name(t)} and "
                                   "array are not compatible" if t != "unknown" else
                                   "cannot determine type of empty array", loc)
        return Call("array_create_md", tuple(coerced), t)
    if t in ("record", "unknown"):
        raise ctx.binder.error(errors.FEATURE_NOT_SUPPORTED, "arrays of records are not supported", loc)
    return Call("array_create", tuple(coerced), TD.array_of(t))


def _col(name: str):
    return ast.ColumnRef(fields=(ast.String(sval=name),))


def _is_the_value(sb, targets, setop: bool) -> bool:
    """Whether ORDER BY item ``sb`` of a one-column subquery sorts by that column itself
    (``ORDER BY 1``, its name or alias; a set operation can only sort by its columns)."""
    n = sb.node
    if isinstance(n, ast.A_Const) and isinstance(n.val, ast.Integer):
        return n.val.ival == 1
    if setop:
        return True
    if isinstance(n, ast.ColumnRef) and len(n.fields) == 1 and isinstance(n.fields[0], ast.String) and targets:
        t = targets[0]
        name = n.fields[0].sval
        return t.name == name or (t.name is None and isinstance(t.val, ast.ColumnRef)
                                  and isinstance(t.val.fields[-1], ast.String) and t.val.fields[-1].sval == name)
    return False


def bind_array_subquery(ctx, node) -> ScalarExpr:
    """``ARRAY(SELECT v FROM ... ORDER BY k)``: ``coalesce((SELECT array_agg(v ORDER BY k)
    FROM (SELECT v, k FROM ...)), '{}')``, bound (and decorrelated) as a scalar subquery."""
    from repr.arrays import Array
    sub = node.subselect
    loc = node.location
    setop = _enum_name(sub.op) not in (None, "SETOP_NONE", 0)
    first = sub
    while _enum_name(first.op) not in (None, "SETOP_NONE", 0):
        first = first.larg
    width = list(first.targetList or ())
    if len(width) != 1:
        raise ctx.binder.error(errors.SYNTAX_ERROR, "subquery must return only one column", loc)
    targets = [] if setop else list(sub.targetList)
    return aggregate_subquery(ctx, sub, targets, loc, "array_agg", Array(()),
                              lambda sb: _is_the_value(sb, targets, setop))


def aggregate_subquery(ctx, sub, targets: list, loc, agg_name: str, empty, is_value) -> ScalarExpr:
    """``coalesce((SELECT agg(v ORDER BY k) FROM (SELECT v, k FROM ...)), empty)`` for a
    one-column subquery ``sub`` (``ARRAY(SELECT ..)``, ``LIST(SELECT ..)``): the subquery's
    ORDER BY becomes the aggregate's, with sort keys other than the value (``is_value(sb)``
    False) carried as extra columns; bound, and decorrelated, as a scalar subquery."""
    names, order, extra = ["_mzlite_v"], [], []
    for sb in sub.sortClause or ():
        if sb.useOp:
            raise ctx.binder.error(errors.FEATURE_NOT_SUPPORTED, "ORDER BY ... USING is not supported", loc)
        if is_value(sb):
            key = "_mzlite_v"
        else:
            key = f"_mzlite_k{len(extra) + 1}"
            extra.append(ast.ResTarget(val=sb.node))
            names.append(key)
        order.append(ast.SortBy(node=_col(key), sortby_dir=sb.sortby_dir, sortby_nulls=sb.sortby_nulls,
                                location=-1))
    inner = sub
    if extra:
        inner = ast.SelectStmt(**{f: getattr(sub, f) for f in sub})
        inner.targetList = tuple(targets + extra)
    agg = ast.FuncCall(funcname=(ast.String(sval=agg_name),), args=(_col("_mzlite_v"),),
                       agg_order=tuple(order) or None, location=loc)
    outer = ast.SelectStmt(targetList=(ast.ResTarget(val=agg, location=loc),),
                           fromClause=(ast.RangeSubselect(subquery=inner, alias=ast.Alias(
                               aliasname="_mzlite_agg", colnames=tuple(ast.String(sval=n) for n in names))),))
    e = ctx.bind(ast.SubLink(subLinkType="EXPR_SUBLINK", subselect=outer, location=loc))
    t = ctx.typeof(e)
    return Call("coalesce", (e, Literal(empty, t)), t)


def bind_indirection(ctx, node) -> ScalarExpr:
    x = ctx.bind(node.arg)
    loc = getattr(node.arg, "location", None)
    pending = list(node.indirection)
    while pending:
        ind = pending.pop(0)
        t = ctx.typeof(x)
        if isinstance(ind, ast.A_Indices) and t.endswith(" list"):  # lists (planner.bind_lists)
            from planner.bind_lists import bind_list_subscript
            x = bind_list_subscript(ctx, x, ind, loc)
            continue
        if isinstance(ind, ast.A_Indices) and TD.is_array(t):
            run = [ind]  # consecutive subscripts address one element or slice (a[1][2], a[1:2][2])
            while pending and isinstance(pending[0], ast.A_Indices):
                run.append(pending.pop(0))
            if any(r.is_slice for r in run):
                args = [x]
                for r in run:
                    if r.is_slice:
                        args.append(ctx.coerce(ctx.bind(r.lidx), "int4", "implicit", loc) if r.lidx
                                    else Literal(None, "int4"))
                    else:  # a plain subscript among slices means 1:i
                        args.append(Literal(1, "int4"))
                    args.append(ctx.coerce(ctx.bind(r.uidx), "int4", "implicit", loc) if r.uidx
                                else Literal(None, "int4"))
                x = Call("array_slice", tuple(args), t)
            else:
                idx = tuple(ctx.coerce(ctx.bind(r.uidx), "int4", "implicit", loc) for r in run)
                x = Call("array_index", (x,) + idx, TD.element_type(t))
        elif isinstance(ind, ast.A_Indices) and t == "jsonb" and not ind.is_slice:
            k = ctx.bind(ind.uidx)
            kt = "int4" if ctx.typeof(k) in T.INTEGER_TYPES else "text"
            x = Call("jsonb_get", (x, ctx.coerce(k, kt, "implicit", loc)), "jsonb")
        elif isinstance(ind, ast.A_Indices):
            raise ctx.binder.error(errors.DATATYPE_MISMATCH, f"cannot subscript type {T.display_name(t)} "
                                   "because it does not support subscripting", loc)
        else:
            raise ctx.binder.error(errors.FEATURE_NOT_SUPPORTED, "field selection is not supported", loc)
    return x


def array_compare(ctx, want_all: bool, op: str, node, loc) -> ScalarExpr:
    """``x op ANY(array)`` / ``x op ALL(array)``."""
    x = ctx.bind(node.lexpr)
    arr = ctx.bind(node.rexpr)
    at = ctx.typeof(arr)
    what = "ALL" if want_all else "ANY"
    if at == "unknown":
        xt = ctx.typeof(x)
        at = TD.array_of("text" if xt == "unknown" else xt)
        arr = ctx.coerce(arr, at, "implicit", loc)
    if not TD.is_array(at):
        raise ctx.binder.error("42809", f"op {what} (array) requires array on right side", loc)
    try:
        res = F.resolve_operator(op, ctx.typeof(x), TD.element_type(at))
    except errors.Error as ex:
        if getattr(ex, "position", None) is None:
            ex.position = ctx.binder.pos(loc)
        raise
    if res.return_type != "bool":
        raise ctx.binder.error("42809", "op ANY/ALL (array) requires operator to yield boolean", loc)
    x = ctx.coerce(x, res.arg_types[0], "implicit", loc)
    arr = ctx.coerce(arr, TD.array_of(res.arg_types[1]), "implicit", loc)
    return Call("array_all" if want_all else "array_any", (x, arr, Literal(res.func_id, "text")), "bool")
