"""Binding SQL queries (SELECT, VALUES, set operations, FROM, joins, grouping) to MIR.

Owns ``Binder`` (per-statement state: catalog, parameters, CTEs, the items a plan reads)
and ``BoundQuery``.  Invariant (the decorrelation contract): every query is bound against
an *outer relation* ``D`` (``Outer``): the distinct values of the enclosing query's
columns it may read, or the one-row unit relation at top level; every relation built at
that query level carries ``D``'s columns as a leading *prefix*, and outer references
resolve to prefix columns.  So a correlated subquery is an ordinary relation keyed by its
prefix, joined back to the outer rows on it (``planner.decorrelate``); nothing is ever
evaluated per row.  Views are inlined (their stored MIR), tables and materialized views
become ``Get``.  A WITH item is bound uncorrelated when it can be, else against the
enclosing subquery's outer relation (``planner.ctes``), like any relation of that level.
Deliberately not here: scalar expressions (``planner.bind_expr``), subquery and outer-join
constructions (``planner.decorrelate``), statements (``planner.bind_stmt``).
This module is over 600 lines because SELECT's clauses share one binding state.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from pglast import ast

from expr.relation import (ORDINALITY, ColumnOrder, Constant, Filter, FlatMap, Get, Join, Map, Negate,
                           Project, Reduce, Threshold, TopK, Union)
from expr.scalar import Call, Column, Literal
from planner import decorrelate as dc
from planner.bind_expr import (ExprContext, Grouping, GroupScope, OuterRef, Scope, ScopeItem, enum_name,
                               figure_colname, find_aggregates, parse_nodes, python_literal)
from planner.clauses import check_ctes, check_select_clauses
from planner.ctes import bind_cte, correlated_cte_below
from planner.params import placeholder
from sql import errors, types as T
from sql.statement_names import keyword_at
from sql.parse import SHOW_SUBQUERY

UNIT = Constant((((), 1),), 0)


@dataclass
class Outer:
    """The outer relation a query is bound against (see the module docstring)."""
    rel: object
    types: list
    ref: Optional[OuterRef] = None

    @property
    def arity(self) -> int:
        return len(self.types)


TOP = Outer(UNIT, [], None)


@dataclass
class BoundQuery:
    expr: object            #: columns: prefix, visible columns, hidden ORDER BY columns
    prefix: int
    names: list
    types: list
    hidden: int = 0
    order: tuple = ()       #: ColumnOrder over ``expr``'s columns
    limit: Optional[int] = None
    offset: int = 0
    #: exactly one row per prefix value (a global aggregate): scalar subqueries need no count
    one_row: bool = False

    def finished(self):
        """The query as a relation of ``prefix + visible`` columns (TopK applied)."""
        e = self.expr
        if self.limit is not None or self.offset:
            e = TopK(e, tuple(range(self.prefix)), tuple(self.order), self.limit, self.offset)
        width = self.prefix + len(self.names)
        if self.hidden:
            e = Project(e, tuple(range(width)))
        return e


def distinct(rel, arity: int):
    return Reduce(rel, tuple(Column(i) for i in range(arity)), ())


def join_on_prefix(left, right, p: int, left_arity: int):
    """``left`` joined with ``right`` on their first ``p`` columns; ``right``'s prefix dropped."""
    if p == 0:
        if left == UNIT:
            return right
        return Join((left, right), ())
    eqs = tuple((Column(i), Column(left_arity + i)) for i in range(p))
    ra = right.arity()
    keep = tuple(range(left_arity)) + tuple(left_arity + j for j in range(p, ra))
    return Project(Join((left, right), eqs), keep)


class Binder:
    """Per-statement binding state."""

    def __init__(self, catalog, stmt=None, params=(), *, parameter_types=None):
        self.catalog = catalog
        self.stmt = stmt
        #: the parameter values, bound as literals (``$k`` is ``params[k - 1]``)
        self.params = tuple(params)
        #: instead of values, the parameters' types: each binds as a placeholder of its type
        #: (``planner.params.placeholder``: an INSERT's parameterised rows), never as a value
        self.parameter_types = parameter_types
        #: describing a statement (``planner.describe_statement``): parameter k binds as an
        #: untyped NULL recorded here by identity, ``id(literal) -> [k, literal, type]``; the
        #: first type ``ExprContext.coerce`` gives it is the parameter's inferred type
        self.inferring: Optional[dict] = None
        #: while describing, the parameter types the client declared (None: infer)
        self.declared: tuple = ()
        self.depends_on: set = set()
        self.ctes: list[dict] = []
        #: > 0 while binding a subquery's first pass (``decorrelate.plan_subquery``)
        self.discovering = 0

    def parameter_count(self) -> int:
        return len(self.params) if self.parameter_types is None else len(self.parameter_types)

    def parameter(self, k: int):
        """What parameter ``$k+1`` binds as: its value as a literal, or its placeholder."""
        if self.inferring is not None:
            if k < len(self.declared) and self.declared[k]:
                return Literal(None, self.declared[k])
            lit = Literal(None, "unknown")
            self.inferring[id(lit)] = [k, lit, None]
            return lit
        if self.parameter_types is None:
            return python_literal(self.params[k])
        return placeholder(k, self.parameter_types[k])

    def note_coerced(self, e, to: str) -> None:
        """``e`` (an untyped NULL) was coerced to ``to``: if it is a parameter being
        described, that is its type (the first coercion wins, as in PostgreSQL)."""
        if self.inferring is not None:
            slot = self.inferring.get(id(e))
            if slot is not None and slot[2] is None:
                slot[2] = to

    def pos(self, loc):
        if self.stmt is None or loc is None:
            return None
        return self.stmt.position(loc)

    def error(self, sqlstate: str, message: str, loc=None) -> errors.Error:
        return errors.error_for(sqlstate, message, position=self.pos(loc))

    def refuse(self, what: str, loc=None, fallback: str = "this expression") -> errors.Error:
        """0A000 naming the construct at node location ``loc`` in the user's words:
        ``what`` when given, else the keyword the user typed there, else ``fallback``."""
        if not what:
            at = self.pos(loc)
            word = keyword_at(self.stmt.text, at - 1 - self.stmt.origin) if at is not None else ""
            what = word or fallback
        return self.error(errors.FEATURE_NOT_SUPPORTED, f"{what} is not supported", loc)

    def type_name(self, tn) -> str:
        names = [n.sval for n in tn.names]
        if names[0] == "pg_catalog" and len(names) > 1:
            names = names[1:]
        elif self.catalog.types and (len(names) > 1 or names[0] not in T.SPELLINGS):
            from planner.bind_types import named_type  # CREATE TYPE ... AS LIST|MAP
            named = named_type(self.catalog, names)
            if named is not None:
                return named + "[]" if tn.arrayBounds else named
        if names == ["char"]:  # pglast spells only a quoted "char" (or pg_catalog.char) so
            return "char[]" if tn.arrayBounds else "char"
        text = ".".join(names)
        try:
            if tn.arrayBounds:  # one-dimensional arrays (declared bounds are ignored, as PostgreSQL)
                el = T.normalize_type_name(text)
                if el == "unknown" or el.endswith("[]"):
                    raise errors.ProgrammingError(f'type "{text}[]" does not exist', sqlstate="42704")
                return el + "[]"
            return T.normalize_type_name(text)
        except errors.Error as e:
            e.position = self.pos(tn.location)
            raise

    # ------------------------------------------------------------ queries
    def bind_query(self, node, outer: Outer = TOP) -> BoundQuery:
        pushed = False
        if getattr(node, "withClause", None) is not None:
            self.push_ctes(node.withClause, outer)
            pushed = True
        try:
            check_select_clauses(self, node)
            op = enum_name(node.op)
            if op not in (None, "SETOP_NONE", 0):
                return self.bind_setop(node, outer)
            if node.valuesLists:
                return self.order_limit(node, self.bind_values(node, outer), None)
            return self.bind_select(node, outer)
        finally:
            if pushed:
                self.ctes.pop()

    def push_ctes(self, wc, outer: Outer = TOP) -> None:
        check_ctes(self, wc)
        if wc.recursive:  # WITH RECURSIVE / WITH MUTUALLY RECURSIVE: planner.recursive
            from planner.recursive import push_recursive_ctes
            return push_recursive_ctes(self, wc, outer)
        from planner.recursive import cte_column_names
        frame: dict = {}
        self.ctes.append(frame)
        for cte in wc.ctes:
            bq, owner = bind_cte(self, lambda o: self.bind_query(cte.ctequery, o), outer)
            names = cte_column_names(self, cte, list(bq.names))
            if cte.ctename in frame:
                raise self.error("42712",
                                 f'WITH query name "{cte.ctename}" specified more than once', cte.location)
            frame[cte.ctename] = (bq.finished(), names, list(bq.types)) + ((owner,) if owner is not None else ())

    def lookup_cte(self, name: str):
        for frame in reversed(self.ctes):
            if name in frame:
                return frame[name]
        return None

    # ------------------------------------------------------------ VALUES
    def bind_values(self, node, outer: Outer) -> BoundQuery:
        rows = node.valuesLists
        width = len(rows[0])
        ctxs, bound = [], []
        for r in rows:
            if len(r) != width:
                raise self.error(errors.SYNTAX_ERROR, "VALUES lists must all be the same length",
                                 getattr(r[0], "location", None))
            ctx = ExprContext(self, outer.rel, outer.types, Scope([], outer.ref), clause="VALUES")
            bound.append([ctx.bind(x) for x in r])
            ctxs.append(ctx)
        types = []
        for c in range(width):
            col = [ctx.typeof(b[c]) for ctx, b in zip(ctxs, bound)]
            t = T.common_type(col)
            if t is None:
                known = [x for x in col if x != "unknown"]
                other = next(x for x in known if x != known[0])
                raise self.error(errors.DATATYPE_MISMATCH, f"VALUES types {T.display_name(known[0])} and "
                                 f"{T.display_name(other)} cannot be matched",
                                 getattr(rows[0][c], "location", None))
            types.append(t)
            for ctx, b, r in zip(ctxs, bound, rows):
                b[c] = ctx.coerce(b[c], t, "implicit", getattr(r[c], "location", None))
        expr = values_relation(outer, ctxs, bound)
        return BoundQuery(expr, outer.arity, [f"column{i + 1}" for i in range(width)], types)

    # ------------------------------------------------------------ set operations
    def bind_setop(self, node, outer: Outer) -> BoundQuery:
        op = enum_name(node.op)
        word = {"SETOP_UNION": "UNION", "SETOP_INTERSECT": "INTERSECT", "SETOP_EXCEPT": "EXCEPT"}[op]
        # A chain ``a UNION b UNION c ...`` (pglast's left-deep tree, one ALL flag, no clause
        # in between) is bound as one n-ary union, walking the spine in a loop: a long chain
        # never recurses deeper than one level (Materialize's recursion_limit.slt, 418 UNIONs)
        spine = [node]
        if op == "SETOP_UNION":
            while True:
                left = spine[-1].larg
                if enum_name(left.op) == op and left.all == node.all and not left.sortClause \
                        and left.limitCount is None and left.limitOffset is None and left.withClause is None:
                    spine.append(left)
                else:
                    break
        branches = [spine[-1].larg] + [n.rarg for n in reversed(spine)]
        bound = [self.bind_query(b, outer) for b in branches]
        left = bound[0]
        types = list(left.types)
        for k, right in enumerate(bound[1:], 1):
            if len(left.names) != len(right.names):
                raise self.error(errors.SYNTAX_ERROR, f"each {word} query must have the same number of columns",
                                 _first_loc(branches[k]))
            for i, (lt, rt) in enumerate(zip(types, right.types)):
                t = T.common_type([lt, rt])
                if t is None:
                    raise self.error(errors.DATATYPE_MISMATCH, f"{word} types {T.display_name(lt)} and "
                                     f"{T.display_name(rt)} cannot be matched", _first_loc(branches[k]))
                types[i] = t
        p = outer.arity
        exprs = [self.cast_columns(b.finished(), p, b.types, types) for b in bound]
        width = p + len(types)
        if op == "SETOP_UNION":
            e = Union(tuple(exprs))
            if not node.all:
                e = distinct(e, width)
        else:
            lexpr, rexpr = exprs
            if not node.all:
                lexpr, rexpr = distinct(lexpr, width), distinct(rexpr, width)
            if op == "SETOP_EXCEPT":
                e = Threshold(Union((lexpr, Negate(rexpr))))
            else:
                # a INTERSECT b = a - (a - b) names one input twice; name the one that is not
                # itself a set operation, so a chain of INTERSECTs stays linear in size (as
                # Materialize's plan_set_expr puts the cheaper input first)
                if enum_name(node.larg.op) not in (None, "SETOP_NONE", 0) and \
                        enum_name(node.rarg.op) in (None, "SETOP_NONE", 0):
                    lexpr, rexpr = rexpr, lexpr
                e = Threshold(Union((lexpr, Negate(Threshold(Union((lexpr, Negate(rexpr))))))))
        bq = BoundQuery(e, p, list(left.names), types)
        self.check_setop_order(node, bq.names)
        return self.order_limit(node, bq, None)

    def check_setop_order(self, node, names) -> None:
        """PostgreSQL: ORDER BY on UNION/INTERSECT/EXCEPT takes result column names and
        positions only; an expression is 0A000 once its columns resolve (42703 otherwise)."""
        for s in node.sortClause or ():
            x = s.node
            if isinstance(x, ast.ColumnRef) or (isinstance(x, ast.A_Const) and isinstance(x.val, ast.Integer)):
                continue
            for ref in _column_refs(x):
                name = _colname(ref)
                if name not in names:
                    raise self.error(errors.UNDEFINED_COLUMN, f'column "{name}" does not exist',
                                     getattr(ref, "location", None))
            raise self.error(errors.FEATURE_NOT_SUPPORTED, "invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
                             _leftmost_loc(x))

    def cast_columns(self, rel, p: int, frm: list, to: list):
        if frm == to:
            return rel
        width = p + len(frm)
        ctx = ExprContext(self, rel, [None] * p + list(frm), Scope([]))
        exprs = [ctx.coerce(Column(p + i), t, "implicit") for i, t in enumerate(to)]
        return Project(Map(rel, tuple(exprs)), tuple(range(p)) + tuple(width + i for i in range(len(to))))

    # ------------------------------------------------------------ SELECT
    def bind_select(self, node, outer: Outer) -> BoundQuery:
        p = outer.arity
        rel, types, items = self.bind_from(node.fromClause or (), outer)
        scope = Scope(items, outer.ref)
        n = len(types)
        if node.whereClause is not None:
            ctx = ExprContext(self, rel, types, scope, clause="WHERE")
            preds = []
            conjs = _conjuncts(node.whereClause)
            plain = [c for c in conjs if not _has_sublink(c)]
            if plain and len(plain) < len(conjs):
                # conjuncts without subqueries filter first (as PostgreSQL orders quals by cost):
                # the subqueries' outer relation is then the filtered one, and the filters stay
                # where predicate pushdown reaches (decorrelation reads that relation twice,
                # through a Let); on a binding error, bind in written order to report the first
                try:
                    first = [ctx.bind_bool(c, "WHERE") for c in plain]
                except errors.Error:
                    first = None
                if first is not None:
                    ctx.rel = Filter(ctx.rel, tuple(first))
                    conjs = [c for c in conjs if _has_sublink(c)]
            for conj in conjs:
                if not dc.filter_by_sublink(ctx, conj):
                    preds.append(ctx.bind_bool(conj, "WHERE"))
            rel = Filter(ctx.rel, tuple(preds)) if preds else ctx.rel
            if len(ctx.types) != n:
                rel = Project(rel, tuple(range(n)))
        targets = node.targetList or ()
        agg_nodes: list = []
        for t in targets:
            find_aggregates(t.val, agg_nodes)
        if node.havingClause is not None:
            find_aggregates(node.havingClause, agg_nodes)
        for s in node.sortClause or ():
            find_aggregates(s.node, agg_nodes)
        grouped = bool(node.groupClause) or node.havingClause is not None or bool(agg_nodes)
        one_row = False
        if grouped:
            ctx, one_row = self.bind_grouping(node, outer, rel, types, scope, agg_nodes)
        else:
            ctx = ExprContext(self, rel, types, scope, clause="SELECT")
        # --- window functions: after GROUP BY/HAVING, before the select list (planner.windows)
        from planner.windows import bind_windows
        bind_windows(self, node, ctx, p)
        # --- end window functions
        ctx.clause = "SELECT"
        # select list
        exprs, names = [], []
        srfs = [t.val for t in targets if _select_list_srf(t.val, True)]
        if len(srfs) > 1:  # PostgreSQL runs them in lockstep; FlatMaps in a row would cross them
            raise self.error(errors.FEATURE_NOT_SUPPORTED, "several set-returning functions in one select list "
                             "are not supported", srfs[1].location)
        for t in targets:
            v = t.val
            if isinstance(v, ast.ColumnRef) and isinstance(v.fields[-1], ast.A_Star):
                for idx, name in self.expand_star(ctx, v):
                    exprs.append(Column(idx))
                    names.append(name)
                continue
            if isinstance(v, ast.FuncCall) and (v.funcname[-1].sval.lower() == "generate_series" or
                                                _select_list_srf(v)):  # unnest, jsonb_array_elements...
                # a set-returning function in the select list: one output row per element
                fname, args, out_type = self.bind_table_function(ctx, v)
                if isinstance(out_type, tuple):  # (types, names) of a one-column function
                    out_type = out_type[0][0]
                ctx.rel = FlatMap(ctx.rel, fname, tuple(args), 1)
                ctx.types = ctx.types + [out_type]
                exprs.append(Column(len(ctx.types) - 1))
            else:
                exprs.append(ctx.bind(v))
            names.append(t.name if t.name is not None else figure_colname(v))
        is_distinct = node.distinctClause is not None
        distinct_on = is_distinct and node.distinctClause != (None,)
        # ORDER BY
        order, hidden = self.bind_order(node.sortClause or (), ctx, exprs, names,
                                        allow_hidden=not is_distinct or distinct_on)
        exprs = [ctx.coerce(e, "text") if ctx.typeof(e) == "unknown" else e for e in exprs]
        outs = exprs + hidden
        out_types = [ctx.typeof(e) for e in outs]
        rel = map_project(ctx.rel, len(ctx.types), outs, p)
        order = tuple(ColumnOrder(p + c, d, nl) for c, d, nl in order)
        width = p + len(outs)
        if distinct_on:
            keys = []
            for x in node.distinctClause:
                keys.append(self.distinct_on_key(x, ctx, exprs, names, outs))
            # DISTINCT ON: the first row of each key group under ORDER BY
            rel = TopK(rel, tuple(range(p)) + tuple(p + k for k in keys), order, 1, 0)
        elif is_distinct:
            rel = distinct(rel, width)
        bq = BoundQuery(rel, p, names, out_types[:len(exprs)], len(hidden), order, one_row=one_row)
        return self.order_limit(node, bq, "done")

    def distinct_on_key(self, x, ctx, exprs, names, outs) -> int:
        if isinstance(x, ast.A_Const) and isinstance(x.val, ast.Integer):
            k = x.val.ival
            if not 1 <= k <= len(exprs):
                raise self.error(errors.INVALID_COLUMN_REFERENCE, f"SELECT DISTINCT ON position {k} is not in "
                                 "select list", _first_loc(x))
            return k - 1
        e = ctx.bind(x)
        for i, o in enumerate(outs):
            if o == e:
                return i
        raise self.error(errors.INVALID_COLUMN_REFERENCE,
                         "SELECT DISTINCT ON expressions must match initial ORDER BY expressions", _first_loc(x))

    def expand_star(self, ctx: ExprContext, v) -> list:
        scope = ctx.scope
        if len(v.fields) == 1:
            items = [i for i in scope.items if i.in_star and i.name is not None]
            if not items and not scope.items:
                raise self.error(errors.SYNTAX_ERROR if False else "42601",
                                 "SELECT * with no tables specified is not valid", v.location)
        else:
            table = v.fields[-2].sval
            items = sorted((i for i in scope.items if i.table == table), key=lambda i: i.index)
            if not items:
                raise self.error(errors.UNDEFINED_TABLE, f'missing FROM-clause entry for table "{table}"', v.location)
        out = []
        for it in items:
            idx = it.index
            if isinstance(scope, GroupScope):
                if idx not in scope.keymap:
                    name = f"{it.table}.{it.name}" if it.table else it.name
                    raise self.error(errors.GROUPING_ERROR, f'column "{name}" must appear in the GROUP BY clause '
                                     "or be used in an aggregate function", v.location)
                idx = scope.keymap[idx]
            out.append((idx, it.name))
        return out

    def bind_grouping(self, node, outer: Outer, rel, types, scope, agg_nodes):
        p = outer.arity
        kctx = ExprContext(self, rel, types, scope, clause="GROUP BY")
        keys: list = []
        targets = node.targetList or ()
        for g in node.groupClause or ():
            if isinstance(g, (ast.GroupingSet,)):
                raise self.error(errors.FEATURE_NOT_SUPPORTED, "GROUPING SETS are not supported", _first_loc(g))
            target = g
            if isinstance(g, ast.A_Const) and isinstance(g.val, ast.Integer):
                k = g.val.ival
                if not 1 <= k <= len(targets):
                    raise self.error(errors.INVALID_COLUMN_REFERENCE, f"GROUP BY position {k} is not in select list",
                                     _first_loc(g))
                target = targets[k - 1].val
            elif isinstance(g, ast.ColumnRef) and len(g.fields) == 1 and isinstance(g.fields[0], ast.String):
                name = g.fields[0].sval
                if scope.lookup_local(kctx, (name,), _first_loc(g)) is None:
                    alias = [t.val for t in targets if t.name == name]
                    if alias:
                        target = alias[0]
            if find_aggregates(target, []):
                raise self.error(errors.GROUPING_ERROR, "aggregate functions are not allowed in GROUP BY",
                                 find_aggregates(target, [])[0].location)
            e = kctx.bind(target)
            if e not in keys:
                keys.append(e)
        aggs = []
        agg_cols: dict = {}
        for a in agg_nodes:
            kctx.clause = "aggregate function calls"
            agg = kctx.bind_aggregate(a)
            if agg in aggs:
                agg_cols[id(a)] = p + len(keys) + aggs.index(agg)
            else:
                agg_cols[id(a)] = p + len(keys) + len(aggs)
                aggs.append(agg)
        key_types = [kctx.typeof(k) for k in keys]
        group_key = tuple(Column(i) for i in range(p)) + tuple(keys)
        global_agg = not keys
        red = Reduce(kctx.rel, group_key, tuple(aggs), global_default=(global_agg and p == 0))
        if global_agg and p > 0:
            red = dc.with_global_defaults(red, outer.rel, p, aggs)
        out_types = list(types[:p]) + key_types + [a.output_type for a in aggs]
        keymap = {k.index: p + j for j, k in enumerate(keys) if isinstance(k, Column)}
        for j in range(p):
            keymap.setdefault(j, j)
        gscope = GroupScope(scope, keymap)
        grouping = Grouping(p, keys, agg_cols, kctx)
        ctx = ExprContext(self, red, out_types, gscope, clause="HAVING", grouping=grouping)
        if node.havingClause is not None:
            pred = ctx.bind_bool(node.havingClause, "HAVING")
            n = len(ctx.types)
            ctx.rel = Filter(ctx.rel, (pred,))
        return ctx, global_agg and node.havingClause is None

    def bind_order(self, sort, ctx: ExprContext, exprs, names, allow_hidden=True):
        order, hidden = [], []
        for s in sort:
            x = s.node
            col = None
            if isinstance(x, ast.A_Const) and isinstance(x.val, ast.Integer):
                k = x.val.ival
                if not 1 <= k <= len(exprs):
                    raise self.error(errors.INVALID_COLUMN_REFERENCE, f"ORDER BY position {k} is not in select list",
                                     _first_loc(x))
                col = k - 1
            elif isinstance(x, ast.ColumnRef) and len(x.fields) == 1 and isinstance(x.fields[0], ast.String):
                hits = [i for i, n in enumerate(names) if n == x.fields[0].sval]
                if len({exprs[i] for i in hits}) > 1:
                    raise self.error(errors.AMBIGUOUS_COLUMN, f'ORDER BY "{x.fields[0].sval}" is ambiguous', _first_loc(x))
                if hits:
                    col = hits[0]
            if col is None:
                if ctx is None:
                    raise self.error(errors.UNDEFINED_COLUMN, f'column "{_colname(x)}" does not exist',
                                     getattr(x, "location", None))
                ctx.clause = "ORDER BY"
                e = ctx.bind(x)
                for i, o in enumerate(exprs + hidden):
                    if o == e:
                        col = i
                        break
                else:
                    if not allow_hidden:
                        raise self.error(errors.INVALID_COLUMN_REFERENCE, "for SELECT DISTINCT, ORDER BY expressions "
                                         "must appear in select list", getattr(x, "location", None))
                    hidden.append(e)
                    col = len(exprs) + len(hidden) - 1
            d = enum_name(s.sortby_dir)
            desc = d == "SORTBY_DESC"
            nl = enum_name(s.sortby_nulls)
            nulls_last = (not desc) if nl == "SORTBY_NULLS_DEFAULT" else nl == "SORTBY_NULLS_LAST"
            if d == "SORTBY_USING":
                raise self.error(errors.FEATURE_NOT_SUPPORTED, "ORDER BY USING is not supported", _first_loc(x))
            order.append((col, desc, nulls_last))
        return order, hidden

    def order_limit(self, node, bq: BoundQuery, done) -> BoundQuery:
        if done is None and node.sortClause:
            order, _ = self.bind_order(node.sortClause, None, [Column(bq.prefix + i) for i in range(len(bq.names))],
                                       bq.names)
            bq.order = tuple(ColumnOrder(bq.prefix + c, d, nl) for c, d, nl in order)
        if enum_name(node.limitOption) in ("LIMIT_OPTION_WITH_TIES", 2):
            raise self.error(errors.FEATURE_NOT_SUPPORTED, "FETCH ... WITH TIES is not supported", None)
        if node.limitCount is not None:
            bq.limit = self.const_int(node.limitCount, "LIMIT")
        if node.limitOffset is not None:
            bq.offset = self.const_int(node.limitOffset, "OFFSET") or 0
        return bq

    def const_int(self, x, what: str) -> Optional[int]:
        ctx = ExprContext(self, UNIT, [], Scope([]), clause=what)
        e = ctx.bind(x)
        if isinstance(e, Literal) and e.type == "unknown" and e.value is None:
            return None
        e = ctx.coerce(e, "int8", "implicit", getattr(x, "location", None))
        if not isinstance(e, Literal):
            e2 = ctx.fold(e, getattr(x, "location", None)) if not _reads_columns(e) else None
            if e2 is None:
                raise self.error(errors.FEATURE_NOT_SUPPORTED, f"{what} must be a constant",
                                 getattr(x, "location", None))
            e = e2
        if e.value is None:
            return None
        if e.value < 0:
            raise self.error("2201W" if what == "LIMIT" else "2201X", f"{what} must not be negative",
                             getattr(x, "location", None))
        return e.value

    # ------------------------------------------------------------ FROM
    def bind_from(self, from_list, outer: Outer):
        rel, types, items = outer.rel, list(outer.types), []
        seen: set = set()
        for f in from_list:
            self.check_new_tables(seen, f)
            rel, types, items = self.add_from_item(rel, types, items, f, outer)
        return rel, types, items

    def check_new_tables(self, before: set, f) -> None:
        """PostgreSQL: a table name may appear once per FROM level (42712)."""
        for name in self.from_item_names(f):
            if name in before:
                raise self.error("42712", f'table name "{name}" specified more than once', _first_loc(f))
            before.add(name)

    def from_item_names(self, f) -> list:
        if isinstance(f, ast.JoinExpr):
            if f.alias is not None:
                return [f.alias.aliasname]
            left = self.from_item_names(f.larg)
            right = self.from_item_names(f.rarg)
            for n in right:
                if n in left:
                    raise self.error("42712", f'table name "{n}" specified more than once', _first_loc(f.rarg))
            return left + right
        if getattr(f, "alias", None) is not None:
            return [f.alias.aliasname]
        if isinstance(f, ast.RangeVar):
            return [f.relname]
        if isinstance(f, ast.RangeFunction):
            call = f.functions[0][0]
            return [call.funcname[-1].sval.lower()] if isinstance(call, ast.FuncCall) else []
        return []

    def add_from_item(self, rel, types, items, f, outer: Outer):
        p = outer.arity
        if isinstance(f, ast.RangeSubselect) and f.lateral:
            return dc.apply_lateral(self, rel, types, items, f, outer)
        if isinstance(f, ast.RangeFunction):
            return self.table_function(rel, types, items, f, outer)
        frel, ftypes, fitems = self.bind_from_item(f, outer)
        n = len(types)
        if not items and rel is outer.rel:
            return frel, ftypes, fitems
        shift = n - p
        new_items = items + [_shift(i, shift) for i in fitems]
        return join_on_prefix(rel, frel, p, n), types + ftypes[p:], new_items

    def bind_from_item(self, f, outer: Outer):
        """A FROM item as a relation carrying the outer prefix; scope items index into it."""
        p = outer.arity
        if isinstance(f, ast.RangeVar):
            rel, names, types, table = self.bind_relation(f, outer)
            if p and not self.is_correlated_cte(f):
                rel = Join((outer.rel, rel), ())
            names = self.apply_alias(f.alias, names, table, f.location)
            table = f.alias.aliasname if f.alias is not None else table
            items = [ScopeItem(table, n, p + i) for i, n in enumerate(names)]
            return rel, list(outer.types) + types, items
        if isinstance(f, ast.RangeSubselect):
            bq = self.bind_query(f.subquery, outer)
            table = f.alias.aliasname if f.alias is not None else None
            names = self.apply_alias(f.alias, list(bq.names), table, None)
            items = [ScopeItem(table, n, p + i) for i, n in enumerate(names)]
            return bq.finished(), list(outer.types) + list(bq.types), items
        if isinstance(f, ast.JoinExpr):
            return dc.bind_join(self, f, outer)
        if isinstance(f, ast.RangeFunction):
            return self.table_function(outer.rel, list(outer.types), [], f, outer)
        what = {"RangeTableSample": "TABLESAMPLE", "RangeTableFunc": "XMLTABLE"}.get(type(f).__name__)
        raise self.refuse(f"{what} in FROM" if what else "", getattr(f, "location", None), "this FROM item")

    def table_function(self, rel, types, items, f, outer: Outer):
        """``FROM ..., generate_series(a, b [, step]) [AS g(x)]``: a FlatMap over the FROM
        relation so far (table functions are implicitly LATERAL)."""
        if f.is_rowsfrom or len(f.functions) != 1:
            raise self.error(errors.FEATURE_NOT_SUPPORTED, "ROWS FROM is not supported", _first_loc(f))
        call = f.functions[0][0]
        ctx = ExprContext(self, rel, types, Scope(items, outer.ref), clause="FROM")
        name, exprs, out_type = self.bind_table_function(ctx, call)
        # a table function may return several columns (jsonb_each), named by its signature
        out_types, cols = (list(out_type[0]), list(out_type[1])) if isinstance(out_type, tuple) else ([out_type], [name])
        k = len(out_types)
        if k == 1 and f.alias is not None and not f.alias.colnames:
            cols = [f.alias.aliasname]  # PostgreSQL: a scalar function's column takes the table alias
        if f.ordinality:  # WITH ORDINALITY: each call's rows numbered from 1, a bigint column
            name, out_types, cols, k = name + ORDINALITY, out_types + ["int8"], cols + ["ordinality"], k + 1
        n = len(ctx.types)
        e = FlatMap(ctx.rel, name, tuple(exprs), k)
        if n != len(types):
            e = Project(e, tuple(range(len(types))) + tuple(range(n, n + k)))
        table = f.alias.aliasname if f.alias is not None else name
        names = self.apply_alias(f.alias, cols, table, _first_loc(f))
        return e, list(types) + out_types, items + [ScopeItem(table, nm, len(types) + i) for i, nm in enumerate(names)]

    def bind_table_function(self, ctx: ExprContext, call):
        if not isinstance(call, ast.FuncCall):
            raise self.error(errors.FEATURE_NOT_SUPPORTED, "unsupported table function", _first_loc(call))
        name = call.funcname[-1].sval.lower()
        if name in _DOC_TABLE_FUNCTIONS:  # unnest and the jsonb table functions
            return self.bind_document_table_function(ctx, call, name)
        if name != "generate_series":
            raise self.error(errors.FEATURE_NOT_SUPPORTED, f"table function {name} is not supported",
                             call.location)
        args = [ctx.bind(a) for a in call.args or ()]
        arg_types = [ctx.typeof(a) for a in args]
        if len(args) == 3 and T.category(arg_types[0]) == "D" or T.category(arg_types[-1]) == "T":
            # generate_series(timestamp[tz], timestamp[tz], interval)
            t = T.common_type(arg_types[:2])
            t = "timestamptz" if t in ("date", "unknown") else t
            if len(args) != 3 or t not in ("timestamp", "timestamptz") \
                    or not T.can_cast(arg_types[2], "interval", "implicit"):
                raise self.error(errors.UNDEFINED_FUNCTION, f"function generate_series("
                                 f"{', '.join(T.display_name(x) for x in arg_types)}) does not exist", call.location)
            return name, [ctx.coerce(args[0], t, "implicit", call.location),
                          ctx.coerce(args[1], t, "implicit", call.location),
                          ctx.coerce(args[2], "interval", "implicit", call.location)], t
        t = T.common_type(arg_types + ["int4"])
        if len(args) not in (2, 3) or t not in ("int4", "int8"):
            raise self.error(errors.UNDEFINED_FUNCTION, f"function generate_series("
                             f"{', '.join(T.display_name(x) for x in arg_types)}) does not exist", call.location)
        return name, [ctx.coerce(a, t, "implicit", call.location) for a in args], t

    # ---- table functions over arrays, lists and jsonb (sql.functions.resolve_table_function)
    def bind_document_table_function(self, ctx: ExprContext, call, name: str):
        """``(func id, argument exprs, out)``: ``out`` is the column type for one column,
        else ``(types, names)``."""
        from sql.functions import resolve_table_function
        args = [ctx.bind(a) for a in call.args or ()]
        try:
            fid, params, names, types = resolve_table_function(name, tuple(ctx.typeof(a) for a in args))
        except errors.Error as e:
            e.position = self.pos(call.location)
            raise
        exprs = [ctx.coerce(a, p, "implicit", call.location) for a, p in zip(args, params)]
        if len(types) == 1 and names[0] == name:
            return fid, exprs, types[0]
        return fid, exprs, (tuple(types), tuple(names))
    # ---- end

    def is_correlated_cte(self, rv) -> bool:
        cte = None if rv.schemaname or rv.catalogname else self.lookup_cte(rv.relname)
        return cte is not None and len(cte) == 4

    def bind_relation(self, rv, outer: Outer = TOP):
        """(relation, column names, types, default table name) for a named FROM item (a
        correlated CTE's relation carries ``outer``'s prefix: ``planner.ctes``)."""
        if rv.relname.startswith(SHOW_SUBQUERY) and not rv.schemaname:
            return self.bind_show_subquery(rv)
        if not rv.schemaname and not rv.catalogname:
            cte = self.lookup_cte(rv.relname)
            if cte is not None:
                expr, names, types = cte[:3]
                if len(cte) == 4 and cte[3] is not outer:
                    expr = correlated_cte_below(self, rv, expr, cte[3], outer)
                return expr, list(names), list(types), rv.relname
        parts = tuple(x for x in (rv.catalogname, rv.schemaname, rv.relname) if x)
        item = self.catalog.resolve(parts, position=self.pos(rv.location))
        if item.kind == "index":
            raise self.error(errors.WRONG_OBJECT_TYPE, f'cannot read from index "{item.name}"', rv.location)
        if item.kind in ("secret", "connection"):
            raise self.error(errors.WRONG_OBJECT_TYPE, f'{item.kind_word()} "{item.name}" is not a relation',
                             rv.location)
        if item.kind == "source" and not item.columns:
            raise self.error(errors.WRONG_OBJECT_TYPE, f'source "{item.name}" writes only its subsources and has no '
                             f'data of its own: read a subsource (SHOW SOURCES lists them)', rv.location)
        self.depends_on.add(item.id)
        if item.kind == "view" and not self.catalog.indexes_on(item.id):
            # Inline a plain view so optimization sees through it; an indexed view stays a
            # Get so a read can be served off its index (fast path, or an index import).
            rel = item.expr
            self.depends_on.update(item.depends_on)
        else:
            rel = Get(item.id, item.arity())
        return rel, list(item.column_names()), list(item.column_types()), item.name

    def bind_show_subquery(self, rv):
        """``(SHOW ...)`` as a table: the SHOW's rows, read off the catalog now
        (``Catalog.show_rows``, the adapter's SHOW), as a constant relation of text columns."""
        from planner.bind_stmt import bind_show
        if self.stmt.kind != "select":  # a view, SUBSCRIBE or INSERT would keep a stale copy
            raise self.error(errors.FEATURE_NOT_SUPPORTED, "(SHOW ...) is supported in a SELECT only: its rows are "
                             "read once from the catalog, never maintained", rv.location)
        node = self.stmt.show_subqueries[int(rv.relname[len(SHOW_SUBQUERY):])]
        plan = bind_show(self, self.stmt, node)
        out = self.catalog.show_rows(plan) if self.catalog.show_rows is not None else None
        if out is None:
            raise self.error(errors.FEATURE_NOT_SUPPORTED, "this SHOW is not supported as a subquery (SHOW CREATE "
                             "and the SHOW forms that list objects are)", rv.location)
        names, rows = out
        rel = Constant(tuple((tuple(r), 1) for r in rows), len(names))
        return rel, list(names), ["text"] * len(names), "show"

    def apply_alias(self, alias, names, table, loc):
        if alias is None or not alias.colnames:
            return names
        al = [c.sval for c in alias.colnames]
        if len(al) > len(names):
            raise self.error(errors.INVALID_COLUMN_REFERENCE, f'table "{alias.aliasname}" has {len(names)} columns '
                             f"available but {len(al)} columns specified", loc)
        return al + names[len(al):]


def _conjuncts(node) -> list:
    if isinstance(node, ast.BoolExpr) and enum_name(node.boolop) == "AND_EXPR":
        out = []
        for a in node.args:
            out.extend(_conjuncts(a))
        return out
    return [node]


def _has_sublink(node) -> bool:
    return any(isinstance(n, ast.SubLink) for n in parse_nodes(node))


def _shift(item: ScopeItem, by: int) -> ScopeItem:
    return ScopeItem(item.table, item.name, item.index + by, item.in_star, item.qualified_only)


def _first_loc(node):
    if isinstance(node, ast.Node):
        loc = getattr(node, "location", None)
        if loc is not None and loc >= 0:
            return loc
        for n in node:
            r = _first_loc(getattr(node, n))
            if r is not None:
                return r
    elif isinstance(node, tuple):
        for x in node:
            r = _first_loc(x)
            if r is not None:
                return r
    return None


def _colname(x) -> str:
    if isinstance(x, ast.ColumnRef):
        return ".".join(f.sval for f in x.fields if isinstance(f, ast.String))
    return "?column?"


def _reads_columns(e) -> bool:
    from expr.scalar import columns_referenced, contains_mz_now
    return bool(columns_referenced(e)) or contains_mz_now(e)


def map_project(rel, arity: int, exprs, p: int = 0):
    """``rel``'s first ``p`` columns followed by ``exprs`` (Map only what is not a column)."""
    computed = [e for e in exprs if not isinstance(e, Column)]
    out, k = list(range(p)), 0
    for e in exprs:
        if isinstance(e, Column):
            out.append(e.index)
        else:
            out.append(arity + k)
            k += 1
    if computed:
        rel = Map(rel, tuple(computed))
    if out == list(range(arity + k)):
        return rel
    return Project(rel, tuple(out))


def values_relation(outer: Outer, ctxs, rows):
    """The relation of VALUES rows (bound per row against ``outer``), with the prefix."""
    p = outer.arity
    if p == 0 and all(isinstance(x, Literal) for r in rows for x in r) and all(c.rel is outer.rel for c in ctxs):
        counts: dict = {}
        for r in rows:
            t = tuple(x.value for x in r)
            counts[t] = counts.get(t, 0) + 1
        return Constant(tuple(counts.items()), len(rows[0]) if rows else 0)
    parts = []
    for ctx, r in zip(ctxs, rows):
        parts.append(map_project(ctx.rel, len(ctx.types), r, p))
    return parts[0] if len(parts) == 1 else Union(tuple(parts))


# ---- table functions over arrays and jsonb
_DOC_TABLE_FUNCTIONS = ("unnest", "jsonb_each", "jsonb_each_text", "jsonb_array_elements",
                        "jsonb_array_elements_text", "jsonb_object_keys", "regexp_split_to_table")


def _select_list_srf(v, or_generate_series: bool = False) -> bool:
    """A one-column set-returning function of (or ``generate_series``) in a select list."""
    names = ("unnest", "jsonb_array_elements", "jsonb_array_elements_text", "jsonb_object_keys",
             "regexp_split_to_table")
    return isinstance(v, ast.FuncCall) and v.over is None and (
        v.funcname[-1].sval.lower() in names or (or_generate_series and v.funcname[-1].sval.lower() == "generate_series"))
# ---- end


def _column_refs(node) -> list:
    """Every ColumnRef in the parse tree ``node``, left to right."""
    return [n for n in parse_nodes(node) if isinstance(n, ast.ColumnRef)]


def _leftmost_loc(node):
    """The least token location in the parse tree ``node`` (PostgreSQL's exprLocation
    reports the leftmost of an operator and its arguments)."""
    locs = [loc for n in parse_nodes(node) if (loc := getattr(n, "location", None)) is not None and loc >= 0]
    return min(locs) if locs else None
