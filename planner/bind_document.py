"""Binding of the array and jsonb expression forms and of ORDER BY inside aggregate calls
(the document types' part of ``planner.bind_expr``, split out to keep that module short).

Owns: ``ARRAY[...]`` constructors, subscripts and slices (``a[1]``, ``a[1:2]``, jsonb
``j['k']``), ``x op ANY/ALL(array)``, the sort keys of ``agg(... ORDER BY ...)`` and the
types of Python parameters of the document types (``document_literal``: bytes -> bytea,
UUID -> uuid, dict -> jsonb, list -> array or jsonb; docs/API.md).  Each binding function
takes the ``ExprContext`` it binds against as its first argument.
Invariant: like every binder, user mistakes raise ``sql.errors`` with a SQLSTATE.
Deliberately not here: the signatures (``sql.functions_document``) and evaluation
(``compute.functions_arrays``/``compute.functions_jsonb``).
"""
from __future__ import annotations

from decimal import Decimal
from typing import Optional

from pglast import ast

from compute.errors import EvalError
from compute.scalar import Call, Literal, ScalarExpr
from sql import errors
from sql import functions as F
from sql import types as T
from sql import types_document as TD

#: aggregates whose value depends on input order (ORDER BY inside the call is kept)
ORDER_SENSITIVE = ("array_agg", "jsonb_agg", "jsonb_object_agg", "string_agg")


def _enum_name(v) -> str:
    return getattr(v, "name", v)


def document_literal(value) -> Optional[Literal]:
    """``bytes``/``bytearray``/``memoryview`` -> bytea, ``uuid.UUID`` -> uuid, ``dict`` -> jsonb,
    ``list``/``tuple`` of scalars -> an array of their common type (text when all are
    NULL), a list holding a dict or list -> jsonb."""
    import uuid
    from compute.arrays import Array
    from compute.jsonb import make
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
    if any(isinstance(e, ast.A_ArrayExpr) for e in elems):
        raise ctx.binder.error(errors.FEATURE_NOT_SUPPORTED, "multidimensional arrays are not supported", loc)
    bound = [ctx.bind(e) for e in elems]
    t, coerced = ctx.common(bound, "ARRAY", loc)
    if TD.is_array(t) or t in ("record", "unknown"):
        raise ctx.binder.error(errors.FEATURE_NOT_SUPPORTED, "multidimensional arrays are not supported", loc)
    return Call("array_create", tuple(coerced), TD.array_of(t))


def bind_indirection(ctx, node) -> ScalarExpr:
    x = ctx.bind(node.arg)
    loc = getattr(node.arg, "location", None)
    for ind in node.indirection:
        t = ctx.typeof(x)
        if isinstance(ind, ast.A_Indices) and TD.is_array(t):
            if ind.is_slice:
                lo = ctx.coerce(ctx.bind(ind.lidx), "int4", "implicit", loc) if ind.lidx else Literal(None, "int4")
                hi = ctx.coerce(ctx.bind(ind.uidx), "int4", "implicit", loc) if ind.uidx else Literal(None, "int4")
                x = Call("array_slice", (x, lo, hi), t)
            else:
                i = ctx.coerce(ctx.bind(ind.uidx), "int4", "implicit", loc)
                x = Call("array_index", (x, i), TD.element_type(t))
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
