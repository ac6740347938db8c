"""Binding of Materialize's list expression forms (the list type's part of ``planner.bind_expr``).

Owns: the constructors ``LIST[a, b]`` (with bare inner layers, ``LIST[[1,2],[3]]``) and
``LIST(subquery)``, which ``sql.syntax_lists`` hands over as a call of ``list`` on one
``ARRAY[...]`` / ``ARRAY(subquery)`` argument (``is_list_constructor``); ``LIST[]`` under a
cast to a list type (``cast_empty_list``); indexing and slicing (``l[2]``, ``l[1][2]``,
``l[2:3]``: ``bind_list_subscript``); and the ordered form that ``list_agg`` always takes
(``LIST_AGG_DEFAULT_ORDER``: Materialize aggregates in ascending value order unless the call
has its own ORDER BY).
``LIST(subquery)`` is bound as the scalar subquery ``(SELECT list_agg(v ORDER BY keys) FROM
(subquery) AS l(v, keys...))`` with the subquery's ORDER BY keys carried as extra columns (so
LIMIT still applies to the subquery), then ``coalesce``d with the empty list (no rows give
``{}``); correlation and the one-row guarantee come from the scalar-subquery machinery.
Invariant: like every binder, user mistakes raise ``sql.errors`` with a SQLSTATE and position.
Deliberately not here: signatures (``sql.functions.lists``) and evaluation
(``expr.functions.lists``).
"""
from __future__ import annotations

from pglast import ast

from expr.scalar import Call, Literal, ScalarExpr
from repr.lists import List
from sql import errors
from sql.types import lists as TL

#: the sort key and direction ``list_agg`` takes without its own ORDER BY (ties, i.e.
#: everything, then sort by value ascending, NULLs last: ``ordered_aggregate``)
LIST_AGG_DEFAULT_ORDER = ((False, True),)


def _enum_name(v) -> str:
    return getattr(v, "name", v)


def is_list_constructor(node) -> bool:
    """Whether the pglast ``FuncCall`` ``node`` is ``sql.syntax_lists``' rewritten constructor."""
    if not isinstance(node, ast.FuncCall) or len(node.funcname) != 1 or node.funcname[0].sval.lower() != "list":
        return False
    args = node.args or ()
    if len(args) != 1 or node.agg_star or node.agg_distinct or node.over is not None:
        return False
    a = args[0]
    return isinstance(a, ast.A_ArrayExpr) or (isinstance(a, ast.SubLink)
                                              and _enum_name(a.subLinkType) == "ARRAY_SUBLINK")


def _is_empty(node) -> bool:
    return is_list_constructor(node) and isinstance(node.args[0], ast.A_ArrayExpr) and not node.args[0].elements


def bind_list_constructor(ctx, node) -> ScalarExpr:
    arg = node.args[0]
    loc = node.location
    if isinstance(arg, ast.SubLink):
        return bind_list_subquery(ctx, node)
    elems = list(arg.elements or ())
    if not elems or all(_is_empty(e) for e in elems):
        raise ctx.binder.error("42P18", "cannot determine type of empty list", loc)
    bound = [None if _is_empty(e) else ctx.bind(e) for e in elems]
    t, coerced = ctx.common([b for b in bound if b is not None], "LIST", loc)
    if t == "record":
        raise ctx.binder.error(errors.FEATURE_NOT_SUPPORTED, "lists of records are not supported", loc)
    if any(b is None for b in bound) and not TL.is_list(t):
        raise ctx.binder.error("42P18", "cannot determine type of empty list", loc)
    it = iter(coerced)
    args = tuple(Literal(List(()), t) if b is None else next(it) for b in bound)
    return Call("list_create", args, TL.list_of(t))


def cast_empty_list(ctx, node, to: str):
    """``LIST[]::int list``: the empty list of ``to``; None when ``node`` is not ``LIST[]``."""
    if TL.is_list(to) and _is_empty(node):
        return Literal(List(()), to)
    return None


def bind_list_subscript(ctx, x: ScalarExpr, ind, loc) -> ScalarExpr:
    """``x[i]`` (one layer less; NULL out of range) or ``x[lo:hi]`` on the list ``x``."""
    t = ctx.typeof(x)
    if ind.is_slice:
        lo = ctx.coerce(ctx.bind(ind.lidx), "int8", "implicit", loc) if ind.lidx else Literal(None, "int8")
        hi = ctx.coerce(ctx.bind(ind.uidx), "int8", "implicit", loc) if ind.uidx else Literal(None, "int8")
        return Call("list_slice", (x, lo, hi), t)
    i = ctx.coerce(ctx.bind(ind.uidx), "int8", "implicit", loc)
    return Call("list_index", (x, i), TL.element_type(t))


# ------------------------------------------------------------------ LIST(subquery)


def subquery_colname(node, figure_colname) -> str:
    """The default output name of ``LIST(subquery)``: the subquery's column's (as Materialize
    names it); ``list`` when the constructor is not that form."""
    if not is_list_constructor(node) or not isinstance(node.args[0], ast.SubLink):
        return "list"
    sel = node.args[0].subselect
    while _enum_name(sel.op) not in (None, "SETOP_NONE", 0):
        sel = sel.larg
    tl = sel.targetList or ()
    return (tl[0].name or figure_colname(tl[0].val)) if tl else "list"


def _sort_key(ctx, sb, targets, setop: bool) -> bool:
    """Whether the subquery's sort key ``sb`` is the value column itself (else a key of its own)."""
    n = sb.node
    if isinstance(n, ast.A_Const) and isinstance(n.val, ast.Integer):
        if n.val.ival != 1:
            raise ctx.binder.error("42P10", f"ORDER BY position {n.val.ival} is not in select list",
                                   getattr(n, "location", None))
        return True
    if isinstance(n, ast.ColumnRef) and len(n.fields) == 1 and isinstance(n.fields[0], ast.String):
        name = n.fields[0].sval
        t = targets[0] if targets else None
        if t is not None and (t.name == name or (t.name is None and isinstance(t.val, ast.ColumnRef)
                                                 and t.val.fields[-1] == n.fields[0])):
            return True
    return setop


def bind_list_subquery(ctx, node) -> ScalarExpr:
    sub = node.args[0].subselect
    loc = node.location
    # a set operation's or VALUES' sort keys can only be its output column: the value
    setop = _enum_name(sub.op) not in (None, "SETOP_NONE", 0) or bool(sub.valuesLists)
    targets = list(sub.targetList or ()) if not setop else []
    if sub.valuesLists:
        one = all(len(row) == 1 for row in sub.valuesLists)
    else:
        one = setop or (len(targets) == 1 and not isinstance(getattr(targets[0].val, "fields", (None,))[-1],
                                                                ast.A_Star))
    if not one:
        raise ctx.binder.error(errors.SYNTAX_ERROR, "LIST subquery must return exactly one column", loc)
    from planner.bind_document import aggregate_subquery
    return aggregate_subquery(ctx, sub, targets, loc, "list_agg", List(()),
                              lambda sb: _sort_key(ctx, sb, targets, setop))
