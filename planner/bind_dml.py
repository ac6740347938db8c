"""DML statements -> plans: INSERT (both forms of ``InsertPlan``), UPDATE and DELETE.

Owns the binding of the three write statements: the target table and column list,
assignment casts and column modifiers, defaults, RETURNING, WHERE (plain predicates, or a
selection relation when it has subqueries).  An INSERT has two plans (``planner.plans.
InsertPlan``): ``plan_insert`` binds a VALUES list once for every parameter set of given
types, each parameter a placeholder (``planner.params``) that is never folded, so the rows
are expressions over the parameters the adapter compiles once; ``plan_statement`` (``bind_insert``
here) binds the parameter values as literals, folded as PostgreSQL folds constants, and is
the form every other INSERT takes and the one whose errors a failing parameter set reports.
Invariant: for a parameter set both plans accept, evaluating the ``rows`` form gives the
rows the ``expr`` form gives; ``plan_insert`` returns None wherever that is not certain.
Deliberately not here: evaluation and NOT NULL checks (the adapter), queries
(``planner.bind_query``).
"""
from __future__ import annotations

import collections

from pglast import ast

from expr.relation import Filter, Get, Project
from expr.scalar import Column, Literal, contains_mz_now
from planner import plans as P
from planner.bind_expr import ExprContext, Scope, ScopeItem, enum_name, figure_colname, parse_nodes
from planner.bind_query import TOP, UNIT, Binder, map_project, values_relation
from planner.params import substitute_placeholders, unknown_input_casts
from sql import errors, types as T


def assignment_cast(ctx: ExprContext, e, to: str, colname: str, loc, typmod=None):
    """``e`` converted for a column of type ``to`` (and modifier ``typmod``: checked, 22001/22003)."""
    frm = ctx.typeof(e)
    if frm != to and frm != "unknown" and not T.can_cast(frm, to, "assignment"):
        raise ctx.binder.error(errors.DATATYPE_MISMATCH, f'column "{colname}" is of type {T.display_name(to)} but '
                               f"expression is of type {T.display_name(frm)}", loc)
    return ctx.apply_typmod(ctx.coerce(e, to, "assignment", loc), typmod, False, loc)


def _target_table(b: Binder, rv, verb: str):
    parts = tuple(x for x in (rv.catalogname, rv.schemaname, rv.relname) if x)
    item = b.catalog.resolve(parts, position=b.pos(rv.location))
    if item.kind == "source":
        raise b.error(errors.WRONG_OBJECT_TYPE, f'cannot {verb} source "{item.name}": a source\'s collections are '
                      f'written only by the source itself', rv.location)
    if item.kind != "table":
        raise b.error(errors.WRONG_OBJECT_TYPE, f'cannot {verb} {item.kind_word()} "{item.name}"', rv.location)
    b.depends_on.add(item.id)
    return item


def _returning(node):
    rl = getattr(node, "returningList", None)
    if rl:
        return rl
    rc = getattr(node, "returningClause", None)
    return rc.exprs if rc is not None else ()


def table_context(b: Binder, item, alias, clause: str):
    table = alias.aliasname if alias is not None else item.name
    items = [ScopeItem(table, c.name, i) for i, c in enumerate(item.columns)]
    return ExprContext(b, Get(item.id, item.arity()), list(item.column_types()), Scope(items), clause=clause)


def _target_column(b: Binder, item, rt) -> int:
    """The index of the column of ``item`` the target ``rt`` names (42703 when none does)."""
    idx = next((i for i, c in enumerate(item.columns) if c.name == rt.name), None)
    if idx is None:
        raise b.error(errors.UNDEFINED_COLUMN, f'column "{rt.name}" of relation "{item.name}" does not exist',
                      rt.location)
    return idx


def _insert_targets(b: Binder, node):
    """``(table item, target column indexes)`` of an INSERT."""
    item = _target_table(b, node.relation, "insert into")
    if node.onConflictClause is not None:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "INSERT ... ON CONFLICT is not supported", None)
    columns = item.columns
    if node.cols:
        targets = []
        for rt in node.cols:
            idx = _target_column(b, item, rt)
            if idx in targets:
                raise b.error(errors.DUPLICATE_COLUMN, f'column "{rt.name}" specified more than once', rt.location)
            targets.append(idx)
    else:
        # no column list: the leading columns, as many as the source provides
        targets = list(range(len(columns)))
        sel = node.selectStmt
        if sel is not None and sel.valuesLists and len(sel.valuesLists[0]) < len(columns):
            targets = targets[:len(sel.valuesLists[0])]
        elif sel is not None and not sel.valuesLists:
            width = len(b.bind_query(sel, TOP).names)
            targets = targets[:width] if width < len(columns) else targets
    return item, targets


def _plain_values(sel) -> bool:
    """``sel`` is a bare ``VALUES`` list (no set operation, ORDER BY, LIMIT or WITH)."""
    return bool(sel.valuesLists) and enum_name(sel.op) in ("SETOP_NONE", 0, None) and not sel.sortClause \
        and sel.limitCount is None and sel.limitOffset is None and sel.withClause is None


def _default_for(columns, i):
    d = columns[i].default
    return d if d is not None else Literal(None, columns[i].type)


def _values_rows(b: Binder, columns, targets, values_lists):
    """``(contexts, rows)``: each VALUES row bound (assignment casts, DEFAULT) in table column order."""
    ctxs, rows = [], []
    for vl in values_lists:
        if len(vl) > len(targets):
            raise b.error(errors.SYNTAX_ERROR, "INSERT has more expressions than target columns",
                          getattr(vl[len(targets)], "location", None))
        if len(vl) < len(targets):
            raise b.error(errors.SYNTAX_ERROR, "INSERT has more target columns than expressions",
                          getattr(vl[-1], "location", None) if vl else None)
        ctx = ExprContext(b, UNIT, [], Scope([]), clause="VALUES")
        full = {}
        for i, x in zip(targets, vl):
            if isinstance(x, ast.SetToDefault):
                full[i] = _default_for(columns, i)
            else:
                full[i] = assignment_cast(ctx, ctx.bind(x), columns[i].type, columns[i].name,
                                          getattr(x, "location", None), columns[i].typmod)
        rows.append([full[i] if i in full else _default_for(columns, i) for i in range(len(columns))])
        ctxs.append(ctx)
    return ctxs, rows


def _insert_returning(b: Binder, item, node):
    """``(expressions, columns)`` of the RETURNING clause over the inserted (updated,
    deleted) row."""
    if not _returning(node):
        return (), ()
    ctx = table_context(b, item, node.relation.alias, "RETURNING")
    return _bind_returning(b, ctx, _returning(node))


def _insert_plan(b: Binder, item, returning, **form) -> P.InsertPlan:
    return P.InsertPlan(item.id, not_null=tuple(i for i, c in enumerate(item.columns) if not c.nullable),
                        column_names=item.column_names(), table_name=item.name, returning=returning[0],
                        returning_columns=returning[1], depends_on=frozenset(b.depends_on), **form)


def bind_insert(b: Binder, stmt, node):
    """The ``expr`` form of an InsertPlan, parameters bound as literals."""
    item, targets = _insert_targets(b, node)
    columns = item.columns
    sel = node.selectStmt
    if sel is None:  # DEFAULT VALUES
        ctx0 = ExprContext(b, UNIT, [], Scope([]), clause="INSERT")
        expr = values_relation(TOP, [ctx0], [[_default_for(columns, i) for i in range(len(columns))]])
    elif _plain_values(sel):
        ctxs, rows = _values_rows(b, columns, targets, sel.valuesLists)
        expr = values_relation(TOP, ctxs, rows)
    else:
        bq = b.bind_query(sel, TOP)
        if len(bq.names) > len(targets):
            raise b.error(errors.SYNTAX_ERROR, "INSERT has more expressions than target columns", None)
        if len(bq.names) < len(targets):
            raise b.error(errors.SYNTAX_ERROR, "INSERT has more target columns than expressions", None)
        src = bq.finished()
        ctx = ExprContext(b, src, list(bq.types), Scope([]), clause="INSERT")
        w = len(bq.types)
        full = {i: assignment_cast(ctx, Column(k), columns[i].type, columns[i].name, None, columns[i].typmod)
                for k, i in enumerate(targets)}
        exprs = [full[i] if i in full else _default_for(columns, i) for i in range(len(columns))]
        expr = map_project(src, w, exprs)
    return _insert_plan(b, item, _insert_returning(b, item, node), expr=expr)


#: the types an ``unknown`` (text or NULL) parameter may be converted to at evaluation time:
#: their runtime input functions (``cast_text_to_<t>``) are the literal parser binding folds
#: an unknown literal with (``sql.types.parse_literal``), value for value and error for error
#: (``tests/test_insert_path.py`` checks it), or the very function binding folds with
#: (``sql.types.runtime_input``)
PARSED_AT_EVALUATION = ("int2", "int4", "int8", "numeric", "float4", "float8", "bool", "date", "time",
                        "timestamp", "timestamptz", "interval", "bpchar")


def _unknown_input_ok(func: str) -> bool:
    if func == "cast_unknown_to_text":
        return True
    t = func.removeprefix("cast_text_to_")
    return t != func and (t in PARSED_AT_EVALUATION or T.runtime_input(t))


def plan_insert(stmt, catalog, param_types):
    """The ``rows`` form of an ``INSERT`` for every parameter set whose values bind as
    ``param_types`` (``planner.params``), or None when the statement must be planned with its
    parameter values (``plan_statement``): its source is a query, its VALUES read a
    subquery or ``mz_now()``, or a text parameter feeds an input function that is not the
    one binding would fold it with.  Raises what binding raises for these types."""
    b = Binder(catalog, stmt, parameter_types=tuple(param_types))
    node = stmt.node
    sel = node.selectStmt
    if (sel is not None and not _plain_values(sel)) or node.withClause is not None:
        return None
    item, targets = _insert_targets(b, node)
    columns = item.columns
    if sel is None:  # DEFAULT VALUES
        rows = [[_default_for(columns, i) for i in range(len(columns))]]
    else:
        ctxs, rows = _values_rows(b, columns, targets, sel.valuesLists)
        if any(c.rel is not UNIT for c in ctxs):  # a subquery joined the row's relation
            return None
    ret, ret_cols = _insert_returning(b, item, node)
    for e in (*(e for row in rows for e in row), *ret):
        if contains_mz_now(e) or not all(map(_unknown_input_ok, unknown_input_casts(e))):
            return None
    rows = tuple(tuple(substitute_placeholders(e) for e in row) for row in rows)
    ret = tuple(substitute_placeholders(e, item.arity()) for e in ret)
    return _insert_plan(b, item, (ret, ret_cols), rows=rows, param_types=tuple(param_types),
                        bare_parameters=_bare_parameters(node, sel) if param_types else frozenset())


def _bare_parameters(node, sel) -> frozenset:
    """The parameters every reference to which is a whole VALUES item (``VALUES ($1, ...)``)."""
    refs = collections.Counter(n.number - 1 for n in parse_nodes(node) if isinstance(n, ast.ParamRef))
    bare = collections.Counter(x.number - 1 for vl in (sel.valuesLists if sel is not None else ())
                               for x in vl if isinstance(x, ast.ParamRef))
    return frozenset(k for k, n in bare.items() if refs[k] == n)


def _bind_returning(b, ctx, targets):
    exprs, cols = [], []
    for t in targets:
        v = t.val
        if isinstance(v, ast.ColumnRef) and isinstance(v.fields[-1], ast.A_Star):
            for it in ctx.scope.items:
                exprs.append(Column(it.index))
                cols.append((it.name, ctx.types[it.index]))
            continue
        n = len(ctx.types)
        e = ctx.bind(v)
        if len(ctx.types) != n:
            raise b.error(errors.FEATURE_NOT_SUPPORTED, "subqueries in RETURNING are not supported", None)
        exprs.append(e)
        cols.append((t.name or figure_colname(v), ctx.typeof(e)))
    return tuple(exprs), tuple(cols)


def _where(b, ctx, where):
    """(predicates, selection) for UPDATE/DELETE: plain predicates, or a relation when the
    WHERE needs subqueries."""
    if where is None:
        return (), None
    n = len(ctx.types)
    pred = ctx.bind_bool(where, "WHERE")
    if len(ctx.types) == n:
        return (pred,), None
    return (), Project(Filter(ctx.rel, (pred,)), tuple(range(n)))


def bind_update(b: Binder, stmt, node):
    item = _target_table(b, node.relation, "update")
    if node.fromClause:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "UPDATE ... FROM is not supported", None)
    ctx = table_context(b, item, node.relation.alias, "UPDATE")
    assigns = []
    seen = set()
    for rt in node.targetList:
        idx = _target_column(b, item, rt)
        if idx in seen:
            raise b.error(errors.SYNTAX_ERROR, f'multiple assignments to same column "{rt.name}"', rt.location)
        seen.add(idx)
        if rt.indirection:
            raise b.error(errors.FEATURE_NOT_SUPPORTED, "assignment to a field or element is not supported",
                          rt.location)
        val = _multi_assignment(b, rt)
        if isinstance(val, ast.SetToDefault):
            d = item.columns[idx].default
            e = d if d is not None else Literal(None, item.columns[idx].type)
        else:
            n = len(ctx.types)
            e = assignment_cast(ctx, ctx.bind(val), item.columns[idx].type, rt.name, val.location
                                if hasattr(val, "location") else None, item.columns[idx].typmod)
            if len(ctx.types) != n:
                raise b.error(errors.FEATURE_NOT_SUPPORTED, "subqueries in UPDATE ... SET are not supported",
                              rt.location)
        assigns.append((idx, e))
    preds, selection = _where(b, ctx, node.whereClause)
    ret, ret_cols = _insert_returning(b, item, node)
    return P.UpdatePlan(item.id, preds, tuple(assigns), tuple(i for i, c in enumerate(item.columns) if not c.nullable),
                        item.column_names(), item.name, selection, frozenset(b.depends_on), ret, ret_cols)


def _multi_assignment(b: Binder, rt):
    """The value assigned to ``rt``'s column: in ``SET (a, b) = (x, y)`` (or ``ROW(x, y)``)
    the element for this column; ``SET (a, b) = (SELECT ...)`` is refused."""
    val = rt.val
    if not isinstance(val, ast.MultiAssignRef):
        return val
    src = val.source
    if not isinstance(src, ast.RowExpr):
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "UPDATE ... SET (columns) = (SELECT ...) is not supported",
                      rt.location)
    if len(src.args or ()) != val.ncolumns:
        raise b.error(errors.SYNTAX_ERROR, "number of columns does not match number of values",
                      getattr(src, "location", None))
    return src.args[val.colno - 1]


def bind_delete(b: Binder, stmt, node):
    item = _target_table(b, node.relation, "delete from")
    if node.usingClause:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "DELETE ... USING is not supported", None)
    ctx = table_context(b, item, node.relation.alias, "DELETE")
    preds, selection = _where(b, ctx, node.whereClause)
    ret, ret_cols = _insert_returning(b, item, node)
    return P.DeletePlan(item.id, preds, item.name, selection, frozenset(b.depends_on), ret, ret_cols)
