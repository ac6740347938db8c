"""Decorrelation: subqueries, LATERAL and outer joins as join-based MIR constructions.

Owns the relational rewrites that give SQL's per-row constructs set semantics:
``EXISTS``, scalar subqueries, ``IN``/``op ANY``/``op ALL`` (with three-valued logic:
``x NOT IN (... NULL ...)`` is NULL, never true), LATERAL, correlated global aggregates
(one row per outer value even when the subquery is empty), and LEFT/RIGHT/FULL joins.
Invariant: a subquery is planned *once* against ``D``, the distinct values of the outer
columns it reads (found by a first binding pass), producing ``K``: exactly one row per
row of ``D`` (the subquery's value for it); ``K`` is joined back to the outer rows on
those columns with MIR's datum equality (NULL matches NULL, which is right for grouping
keys).  So every outer row gets exactly one value and nothing is evaluated per row.
Counts stay exact without Threshold where a relation is subtracted from a superset of
distinct rows (``D`` minus its matched subset).
Sharing (``Lets``): every relation a construction reads more than once (the outer rows,
``D``, the subquery's result, an outer join's sides) is bound once by a ``Let`` around
the construction and read through ``Get``, unless it is a bare Get/Constant under a few
Map/Filter/Project (cheap to repeat, and repeating it keeps predicate pushdown and
fast-path lookups).  So the plan grows linearly with the number of subqueries and outer
joins, never exponentially (a plan is walked as a tree, so a subtree referenced twice
costs twice in every pass).
Deliberately not here: name resolution and typing (``planner.bind_expr``), the query
binder (``planner.bind_query``).  A scalar subquery returning more than one row raises
21000 at run time through the scalar function ``raise_cardinality``.
"""
from __future__ import annotations

from typing import Optional

from pglast import ast

from expr.relation import AggregateExpr, Constant, Filter, Get, Join, Let, Map, Negate, Project, Reduce, Union
from expr.scalar import Call, Column, If, Literal
from planner.bind_expr import ExprContext, OuterRef, Scope, ScopeItem, enum_name
from planner.recursive import next_local_id
from sql import errors, types as T

TRUE = Literal(True, "bool")
FALSE = Literal(False, "bool")
CARDINALITY_FUNC = "raise_cardinality"


#: how many Map/Filter/Project nodes over a Get/Constant still count as cheap to repeat
CHEAP_DEPTH = 3


def _cheap(e) -> bool:
    for _ in range(CHEAP_DEPTH + 1):
        if isinstance(e, (Get, Constant)):
            return True
        if not isinstance(e, (Map, Filter, Project)):
            return False
        e = e.input
    return False


class Lets:
    """The bindings one construction shares (see the module docstring): ``share`` returns
    what to read instead of ``e``; ``wrap`` nests the bindings, in order, around the
    construction's result (later bindings may read earlier ones)."""

    def __init__(self):
        self.binds: list = []

    def share(self, e):
        if _cheap(e):
            return e
        lid = next_local_id()
        self.binds.append((lid, e))
        return Get(lid, e.arity())

    def wrap(self, body):
        for lid, value in reversed(self.binds):
            body = Let(lid, value, body)
        return body


def _distinct(rel, arity):
    return Reduce(rel, tuple(Column(i) for i in range(arity)), ())


def _minus_subset(sup, sub):
    """``sup - sub`` for distinct ``sup`` and distinct ``sub`` contained in it (exact counts)."""
    return Union((sup, Negate(sub)))


def _project(rel, cols):
    return Project(rel, tuple(cols))


def _join_on(left, right, left_cols, right_cols, left_arity):
    eqs = tuple((Column(a), Column(left_arity + b)) for a, b in zip(left_cols, right_cols))
    return Join((left, right), eqs)


# ------------------------------------------------------------------ planning a subquery


def plan_subquery(ctx: ExprContext, select, lets: Lets):
    """Bind ``select`` correlated with ``ctx``'s relation.

    Returns ``(bq, U, D)``: the bound query (prefix = ``len(U)`` columns), the columns of
    ``ctx.rel`` it reads (sorted), and ``D`` = distinct ``ctx.rel[U]``.  ``ctx.rel`` and
    ``D`` are shared through ``lets`` (the caller wraps its result in them)."""
    from planner.bind_query import TOP, UNIT, Outer
    b = ctx.binder
    n = len(ctx.types)
    ref = OuterRef(ctx.scope, None)
    first = Outer(_distinct(ctx.rel, n), list(ctx.types), ref)
    if b.discovering:
        # inside an enclosing first pass, whose plan is thrown away: one pass, keyed by every
        # column (still a valid plan), recording the outer references on the way; a second
        # pass per nesting level would make binding exponential in the nesting depth
        return b.bind_query(select, first), list(range(n)), first.rel
    b.discovering += 1
    try:
        b.bind_query(select, first)
    finally:
        b.discovering -= 1
    U = sorted(ref.used)
    if not U:
        D = UNIT
        outer = Outer(UNIT, [], OuterRef(ctx.scope, {}))
    else:
        ctx.rel = lets.share(ctx.rel)
        D = lets.share(_distinct(_project(ctx.rel, U), len(U)))
        outer = Outer(D, [ctx.types[u] for u in U], OuterRef(ctx.scope, {u: k for k, u in enumerate(U)}))
    bq = b.bind_query(select, outer)
    if sorted(outer.ref.used) != U:
        # the second pass must read exactly what the first pass found
        raise AssertionError("decorrelation passes disagree")
    return bq, U, D


def attach(ctx: ExprContext, U, K, vtype: str, lets: Lets) -> Column:
    """Join ``K`` (``len(U)`` key columns, then one value) to ``ctx.rel`` on ``U``; append the
    value; wrap the result in ``lets``."""
    n = len(ctx.types)
    k = len(U)
    joined = _join_on(ctx.rel, K, U, range(k), n)
    ctx.rel = lets.wrap(_project(joined, list(range(n)) + [n + k]))
    ctx.types = ctx.types + [vtype]
    return Column(n)


def bind_sublink(ctx: ExprContext, node):
    kind = enum_name(node.subLinkType)
    b = ctx.binder
    lets = Lets()
    if kind == "EXISTS_SUBLINK":
        bq, U, D = plan_subquery(ctx, node.subselect, lets)
        k = len(U)
        E = lets.share(_distinct(_project(bq.finished(), range(k)), k))
        K = Union((Map(E, (TRUE,)), Map(_minus_subset(D, E), (FALSE,))))
        return attach(ctx, U, K, "bool", lets)
    if kind == "EXPR_SUBLINK":
        bq, U, D = plan_subquery(ctx, node.subselect, lets)
        if len(bq.names) != 1:
            raise b.error(errors.SYNTAX_ERROR, "subquery must return only one column", node.location)
        return attach(ctx, U, scalar_relation(ctx, bq, len(U), D, lets), bq.types[0], lets)
    if kind in ("ANY_SUBLINK", "ALL_SUBLINK"):
        op = node.operName[-1].sval if node.operName else "="
        te = node.testexpr
        xs = [ctx.bind(a) for a in te.args] if isinstance(te, ast.RowExpr) else [ctx.bind(te)]
        return quantified(ctx, xs, op, node, all_=kind == "ALL_SUBLINK")
    raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{kind.replace('_SUBLINK', '')} subqueries are not supported",
                  node.location)


def filter_by_sublink(ctx: ExprContext, node) -> bool:
    """A WHERE conjunct that is ``[NOT] EXISTS (...)`` or ``x IN (...)``: filter ``ctx.rel``
    by a semijoin / antijoin instead of computing a boolean column.  Returns False (and
    does nothing) for any other conjunct.  Only valid where the conjunct filters rows
    (``NOT IN`` is not handled here: its NULL semantics need the boolean)."""
    negated = False
    if isinstance(node, ast.BoolExpr) and enum_name(node.boolop) == "NOT_EXPR":
        node, negated = node.args[0], True
    if not isinstance(node, ast.SubLink):
        return False
    kind = enum_name(node.subLinkType)
    n = len(ctx.types)
    lets = Lets()
    if kind == "EXISTS_SUBLINK":
        bq, U, D = plan_subquery(ctx, node.subselect, lets)
        R = ctx.rel if U or not negated else lets.share(ctx.rel)
        k = len(U)
        E = _distinct(_project(bq.finished(), range(k)), k)
        matched = _project(_join_on(R, E, U, range(k), n), range(n))
        ctx.rel = lets.wrap(Union((R, Negate(matched))) if negated else matched)
        return True
    if kind == "ANY_SUBLINK" and not negated and not node.operName:
        te = node.testexpr
        xs = [ctx.bind(a) for a in te.args] if isinstance(te, ast.RowExpr) else [ctx.bind(te)]
        m = len(xs)
        n = len(ctx.types)
        bq, U, _ = plan_subquery(ctx, node.subselect, lets)
        if len(bq.names) != m:
            raise ctx.binder.error(errors.SYNTAX_ERROR, "subquery has too many columns" if len(bq.names) > m
                                   else "subquery has too few columns", node.location)
        k = len(U)
        S = bq.finished()
        # coerce each side to the comparison type; match on the coerced values (non-NULL)
        jtypes = list(ctx.types) + [ctx.typeof(x) for x in xs] + [ctx.types[u] for u in U] + list(bq.types)
        jctx = ExprContext(ctx.binder, None, jtypes, Scope([]))
        from expr.scalar import permute, substitute
        xcs, scs = [], []
        for i in range(m):
            cmp = jctx.call_operator("=", [Column(n + i), Column(n + m + k + i)], node.location)
            xc, sc = cmp.args
            xcs.append(substitute(xc, {n + i: xs[i]}))
            scs.append(permute(sc, {n + m + j: j for j in range(k + m)}))
        Rx = Map(ctx.rel, tuple(xcs))                   # n cols, then the coerced xs
        Sd = _distinct(_project(Map(S, tuple(scs)), list(range(k)) + list(range(k + m, k + 2 * m))), k + m)
        eqs = tuple((Column(u), Column(n + m + j)) for j, u in enumerate(U)) + \
            tuple((Column(n + i), Column(n + m + k + i)) for i in range(m))
        J = Filter(Join((Rx, Sd), eqs), tuple(Call("is_not_null", (Column(n + i),), "bool") for i in range(m)))
        ctx.rel = lets.wrap(_project(J, range(n)))
        return True
    return False


def scalar_relation(ctx: ExprContext, bq, k: int, D, lets: Lets):
    """K for a scalar subquery: its value per prefix, NULL when empty, an error when >1 row."""
    S = bq.finished()
    vtype = bq.types[0]
    if bq.one_row and bq.limit is None and not bq.offset:
        return S
    S = lets.share(S)
    counts = Reduce(S, tuple(Column(i) for i in range(k)),
                    (AggregateExpr("count", TRUE, False, "bool", "int8"),))
    joined = _join_on(S, counts, range(k), range(k), k + 1)
    cnt = Column(2 * k + 1)
    value = If(Call("gt", (cnt, Literal(1, "int8")), "bool"), Call(CARDINALITY_FUNC, (), vtype), Column(k), vtype)
    vals = _project(Map(joined, (value,)), list(range(k)) + [2 * k + 2])
    present = _distinct(_project(S, range(k)), k)
    missing = Map(_minus_subset(D, present), (Literal(None, vtype),))
    return Union((vals, missing))


def quantified(ctx: ExprContext, xs: list, op: str, node, all_: bool) -> Column:
    """``x op ANY (subquery)`` / ``x op ALL (subquery)`` with three-valued logic; ``xs`` has
    one expression, or several for a row ``(a, b) IN (SELECT x, y ...)`` (``=``/``<>`` only:
    a row equality is the AND of the column equalities, which is PostgreSQL's 3VL for rows)."""
    b = ctx.binder
    lets = Lets()
    bq, U, _ = plan_subquery(ctx, node.subselect, lets)
    m = len(xs)
    if len(bq.names) != m:
        raise b.error(errors.SYNTAX_ERROR, "subquery has too many columns" if len(bq.names) > m
                      else "subquery has too few columns", node.location)
    if m > 1 and op not in ("=", "<>"):
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"row comparison with {op} is not supported", node.location)
    k = len(U)
    n = len(ctx.types)
    w = k + m
    # the tested values become columns of the outer relation: K is keyed by (U, xs)
    xts = [ctx.typeof(x) for x in xs]
    ctx.rel = lets.share(Map(ctx.rel, tuple(xs)))
    ctx.types = ctx.types + xts
    keys = list(U) + list(range(n, n + m))
    DX = lets.share(_distinct(_project(ctx.rel, keys), w))
    S = lets.share(bq.finished())
    # compare xs (DX columns k..) with the subquery's columns (S columns k..) over DX ++ S
    jtypes = [ctx.types[u] for u in U] + xts + [ctx.types[u] for u in U] + list(bq.types)
    jctx = ExprContext(b, None, jtypes, Scope([]))
    cmps = [jctx.call_operator(op if m == 1 else "=", [Column(k + i), Column(w + k + i)], node.location)
            for i in range(m)]
    cmp = cmps[0] if m == 1 else Call("and", tuple(cmps), "bool")
    if m > 1 and op == "<>":
        cmp = Call("not", (cmp,), "bool")
    if all_:
        cmp = Call("not", (cmp,), "bool")
    if op == "=" and not all_ and m == 1 and isinstance(cmp, Call) and len(cmp.args) == 2:
        K = _any_equal(DX, S, k, cmp, lets)
    else:
        K = _any_general(DX, S, k, w, cmp, lets)
    col = attach(ctx, keys, K, "bool", lets)
    if all_:
        ctx.rel = Map(ctx.rel, (Call("not", (col,), "bool"),))
        ctx.types = ctx.types + ["bool"]
        return Column(len(ctx.types) - 1)
    return col


def _any_general(DX, S, k, w, cmp, lets: Lets):
    """K over (U, xs): true if some row compares true, else NULL if some compares NULL, else false."""
    J = _join_on(DX, S, range(k), range(k), w)
    J = Map(J, (cmp,))
    c = Column(2 * w)
    agg = lets.share(Reduce(J, tuple(Column(i) for i in range(w)),
                            (AggregateExpr("bool_or", c, False, "bool", "bool"),
                             AggregateExpr("bool_or", Call("is_null", (c,), "bool"), False, "bool", "bool"))))
    anyt, anyn = Column(w), Column(w + 1)
    res = If(Call("is_true", (anyt,), "bool"), TRUE, If(Call("is_true", (anyn,), "bool"), Literal(None, "bool"),
                                                         FALSE, "bool"), "bool")
    matched = _project(Map(agg, (res,)), list(range(w)) + [w + 2])
    present = _distinct(_project(agg, range(w)), w)
    empty = Map(_minus_subset(DX, present), (FALSE,))
    return Union((matched, empty))


def _any_equal(DX, S, k, cmp, lets: Lets):
    """``x IN (S)`` by equi-joins: true on a match; else NULL if S has a NULL or x is NULL
    and S is non-empty; else false."""
    xa, sa = cmp.args  # x and s coerced to the comparison type, over DX ++ S
    from expr.scalar import permute
    w = k + 1
    xc = xa
    sc = permute(sa, {i: i - w for i in range(w, 2 * w)} | {i: i for i in range(w)})
    DXc = Map(DX, (xc,))                     # (U, x, xc)
    Sc = Map(S, (sc,))                       # (U, s, sc)
    eqs = tuple((Column(i), Column(w + 1 + i)) for i in range(k)) + ((Column(w), Column(w + 1 + w)),)
    J = Filter(Join((DXc, Sc), eqs), (Call("is_not_null", (Column(w),), "bool"),))
    matched = lets.share(_distinct(_project(J, range(w)), w))
    rest = lets.share(_minus_subset(DX, matched))
    s_null = _distinct(_project(Filter(S, (Call("is_null", (Column(k),), "bool"),)), range(k)), k)
    s_any = _distinct(_project(S, range(k)), k)
    n1 = _project(_join_on(rest, s_null, range(k), range(k), w), range(w))
    x_null = Filter(rest, (Call("is_null", (Column(k),), "bool"),))
    n2 = _project(_join_on(x_null, s_any, range(k), range(k), w), range(w))
    nulls = lets.share(_distinct(Union((n1, n2)), w))
    falses = _minus_subset(rest, nulls)
    return Union((Map(matched, (TRUE,)), Map(nulls, (Literal(None, "bool"),)), Map(falses, (FALSE,))))


def with_global_defaults(red, D, p: int, aggs):
    """A correlated global aggregate: add the empty-input row for prefix values with no input."""
    lets = Lets()
    red = lets.share(red)
    present = _distinct(_project(red, range(p)), p)
    defaults = tuple(Literal(0, "int8") if a.func == "count" else Literal(None, a.output_type) for a in aggs)
    return lets.wrap(Union((red, Map(_minus_subset(D, present), defaults))))


# ------------------------------------------------------------------ LATERAL


def apply_lateral(b, rel, types, items, f, outer):
    """``FROM ..., LATERAL (subquery)``: the subquery correlated with the FROM items so far."""
    ctx = ExprContext(b, rel, types, Scope(items, outer.ref), clause="FROM")
    lets = Lets()
    bq, U, D = plan_subquery(ctx, f.subquery, lets)
    k = len(U)
    n = len(types)
    S = bq.finished()
    joined = lets.wrap(_project(_join_on(ctx.rel, S, U, range(k), n),
                                list(range(n)) + [n + k + i for i in range(len(bq.names))]))
    table = f.alias.aliasname if f.alias is not None else None
    names = b.apply_alias(f.alias, list(bq.names), table, None)
    new_items = items + [ScopeItem(table, nm, n + i) for i, nm in enumerate(names)]
    return joined, types + list(bq.types), new_items


# ------------------------------------------------------------------ joins


def bind_join(b, j, outer):
    """A JoinExpr as (relation with the outer prefix, types, scope items)."""
    from planner.bind_query import join_on_prefix
    p = outer.arity
    jt = enum_name(j.jointype)
    # a table function on the right is implicitly LATERAL (PostgreSQL): ``t JOIN
    # generate_series(1, t.a) g ON ...`` reads the left side's columns, as in a FROM list
    function = (isinstance(j.rarg, ast.RangeFunction) and jt in ("JOIN_INNER", "JOIN_LEFT")
                and not j.usingClause and not j.isNatural)
    if function or (isinstance(j.rarg, ast.RangeSubselect) and j.rarg.lateral):
        if jt not in ("JOIN_INNER", "JOIN_LEFT"):
            raise b.error(errors.FEATURE_NOT_SUPPORTED, "RIGHT and FULL joins with LATERAL are not supported",
                          None)
        lets = Lets()
        lrel, ltypes, litems = b.bind_from_item(j.larg, outer)
        if jt == "JOIN_LEFT":
            lrel = lets.share(lrel)
        if function:
            rel, types, items = b.table_function(lrel, ltypes, litems, j.rarg, outer)
        else:
            rel, types, items = apply_lateral(b, lrel, ltypes, litems, j.rarg, outer)
        inner, types, items = _finish_inner(b, j, outer, rel, types, items, len(ltypes))
        if jt == "JOIN_LEFT":
            nl = len(ltypes)
            inner = lets.share(inner)
            inner = Union((inner, _unmatched(inner, lrel, range(nl), nl, len(types), types, left=True, p=p)))
        return lets.wrap(inner), types, items
    lets = Lets()
    lrel, ltypes, litems = b.bind_from_item(j.larg, outer)
    rrel, rtypes, ritems = b.bind_from_item(j.rarg, outer)
    if jt in ("JOIN_LEFT", "JOIN_RIGHT", "JOIN_FULL"):  # each side is read again for its unmatched rows
        lrel, rrel = lets.share(lrel), lets.share(rrel)
    nl = len(ltypes)
    nr = len(rtypes) - p
    X = join_on_prefix(lrel, rrel, p, nl)
    types = ltypes + rtypes[p:]
    ritems = [ScopeItem(i.table, i.name, i.index - p + nl, i.in_star, i.qualified_only) for i in ritems]
    items = litems + ritems
    scope = Scope(items, outer.ref)
    ctx = ExprContext(b, X, types, scope, clause="JOIN/ON")
    preds = []
    using_names: list = []
    if j.isNatural:
        lnames = [i.name for i in litems if not i.qualified_only]
        rnames = {i.name for i in ritems if not i.qualified_only}
        using_names = [n for n in dict.fromkeys(lnames) if n in rnames]
    elif j.usingClause:
        using_names = [s.sval for s in j.usingClause]
    pairs = []
    for name in using_names:
        lh = [i for i in litems if i.name == name and not i.qualified_only]
        rh = [i for i in ritems if i.name == name and not i.qualified_only]
        for side, hits in (("left", lh), ("right", rh)):
            if not hits:
                raise b.error(errors.UNDEFINED_COLUMN, f'column "{name}" specified in USING clause does not exist '
                              f"in {side} table", None)
            if len({h.index for h in hits}) > 1:
                raise b.error(errors.AMBIGUOUS_COLUMN, f'common column name "{name}" appears more than once in '
                              f"{side} table", None)
        pairs.append((name, lh[0], rh[0]))
        preds.append(ctx.call_operator("=", [Column(lh[0].index), Column(rh[0].index)], None))
    if j.quals is not None:
        preds.append(ctx.bind_bool(j.quals, "JOIN/ON"))
    width = len(types)
    inner = Filter(ctx.rel, tuple(preds)) if preds else ctx.rel
    if len(ctx.types) != width:
        inner = _project(inner, range(width))
    if jt == "JOIN_INNER":
        rel = inner
    elif jt in ("JOIN_LEFT", "JOIN_RIGHT", "JOIN_FULL"):
        inner = lets.share(inner)
        parts = [inner]
        if jt in ("JOIN_LEFT", "JOIN_FULL"):
            parts.append(_unmatched(inner, lrel, range(nl), nl, width, types, left=True, p=p))
        if jt in ("JOIN_RIGHT", "JOIN_FULL"):
            rcols = list(range(p)) + list(range(nl, width))
            parts.append(_unmatched(inner, rrel, rcols, nl, width, types, left=False, p=p))
        rel = Union(tuple(parts))
    else:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{jt} is not supported", None)
    rel = lets.wrap(rel)
    # scope: USING columns merge into one visible column
    if pairs:
        merged, hide = [], set()
        for name, li, ri in pairs:
            if jt == "JOIN_FULL":
                t = types[li.index]
                e = ExprContext(b, rel, types, Scope([])).call_function("coalesce", [Column(li.index), Column(ri.index)],
                                                                       None)
                rel = Map(rel, (e,))
                types = types + [e.type]
                idx = len(types) - 1
            else:
                idx = (ri if jt == "JOIN_RIGHT" else li).index
            merged.append(ScopeItem(None, name, idx))
            hide.update((li.index, ri.index))
        rest = [ScopeItem(i.table, i.name, i.index, i.in_star and i.index not in hide,
                          i.qualified_only or i.index in hide) for i in items]
        items = merged + rest
    if j.alias is not None:
        items = [ScopeItem(j.alias.aliasname, i.name, i.index, i.in_star, False) for i in items
                 if not i.qualified_only]
        if j.alias.colnames:
            al = [c.sval for c in j.alias.colnames]
            vis = [i for i in items if i.in_star]
            for i, a in zip(vis, al):
                i.name = a
    return rel, types, items


def _finish_inner(b, j, outer, rel, types, items, nl):
    if j.quals is not None:
        ctx = ExprContext(b, rel, types, Scope(items, outer.ref), clause="JOIN/ON")
        pred = ctx.bind_bool(j.quals, "JOIN/ON")
        width = len(types)
        rel = Filter(ctx.rel, (pred,))
        if len(ctx.types) != width:
            rel = _project(rel, range(width))
    return rel, types, items


def _unmatched(inner, side, side_cols, nl, width, types, left: bool, p: int):
    """Rows of ``side`` with no partner in ``inner``, padded with NULLs to the join's columns."""
    side_cols = list(side_cols)
    m = len(side_cols)
    keys = _distinct(_project(inner, side_cols), m)
    matched = _project(_join_on(side, keys, range(m), range(m), m), range(m))
    missing = Union((side, Negate(matched)))  # side is read twice: the caller shares it
    if left:
        nulls = tuple(Literal(None, types[c]) for c in range(nl, width))
        return Map(missing, nulls)
    # right side: (prefix, right cols) -> (prefix, NULLs for left, right cols)
    nulls = tuple(Literal(None, types[c]) for c in range(p, nl))
    padded = Map(missing, nulls)
    order = list(range(p)) + [m + i for i in range(nl - p)] + list(range(p, m))
    return _project(padded, order)
