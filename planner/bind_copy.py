"""COPY and CREATE TABLE ... AS: their statements -> plans.

Owns ``bind_copy`` (``COPY t [(cols)] FROM/TO STDIN|STDOUT|'file'`` and ``COPY (query) TO
...``: the table and its columns resolved, the query bound, the options read into plain
values) and ``bind_create_table_as`` (the query bound; the table's columns are its output
columns).  Invariant: options are carried as written (``(name, value)``: a string, a bool,
a tuple of column names, or ``"*"``) and checked by the adapter's COPY engine
(``mzlite.copy``), which is also the wire protocol's; a plan names only resolved ids.
Deliberately not here: parsing COPY's data formats, executing anything.
"""
from __future__ import annotations

from pglast import ast

from expr.finishing import RowSetFinishing
from expr.relation import Get, Project
from planner import plans as P
from planner.bind_dml import _target_column
from planner.bind_query import TOP
from planner.catalog import ColumnDef
from sql import errors


#: an option argument's node type -> its value as the COPY engine reads it
_OPTION_VALUES = {ast.String: lambda a: a.sval, ast.Boolean: lambda a: bool(a.boolval),
                  ast.Integer: lambda a: str(a.ival), ast.Float: lambda a: a.fval, ast.A_Star: lambda a: "*"}


def _option_value(arg):
    """An option's value: True when bare, a tuple for a column list, else its text (or bool)."""
    if arg is None:
        return True
    if isinstance(arg, (tuple, list)):
        return tuple(map(_option_value, arg))
    fn = _OPTION_VALUES.get(type(arg))
    return fn(arg) if fn is not None else str(arg)


def bind_copy(b, stmt, node):
    options = tuple((o.defname.lower(), _option_value(o.arg)) for o in node.options or ())
    if node.is_program:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "COPY ... PROGRAM is not supported", None)
    target = node.filename  # None: STDIN / STDOUT
    if getattr(node, "whereClause", None) is not None:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "COPY FROM ... WHERE is not supported", None)
    if node.query is not None:
        if node.is_from:
            raise b.error(errors.SYNTAX_ERROR, "COPY (query) FROM is not possible", None)
        bq = b.bind_query(node.query, TOP)
        width = len(bq.names)
        finishing = RowSetFinishing(order_by=tuple(bq.order), limit=bq.limit, offset=bq.offset,
                                    project=tuple(range(width)) if bq.hidden else None)
        return P.CopyPlan(False, None, "", tuple(zip(bq.names, bq.types)), (), bq.expr, finishing, target, options,
                          depends_on=frozenset(b.depends_on))
    rv = node.relation
    parts = tuple(x for x in (rv.catalogname, rv.schemaname, rv.relname) if x)
    item = b.catalog.resolve(parts, position=b.pos(rv.location))
    if node.is_from and item.kind == "source":
        raise b.error(errors.WRONG_OBJECT_TYPE, f'cannot copy to source "{item.name}": a source\'s collections are '
                      f'written only by the source itself', rv.location)
    if node.is_from and item.kind != "table":
        raise b.error(errors.WRONG_OBJECT_TYPE, f'cannot copy to {item.kind_word()} "{item.name}"', rv.location)
    if item.kind not in ("table", "view", "materialized_view", "source"):
        raise b.error(errors.WRONG_OBJECT_TYPE, f'cannot copy from {item.kind_word()} "{item.name}"', rv.location)
    b.depends_on.add(item.id)
    if node.attlist:
        idx = []
        for a in node.attlist:
            rt = ast.ResTarget(name=a.sval, location=rv.location)
            i = _target_column(b, item, rt)
            if i in idx:
                raise b.error(errors.DUPLICATE_COLUMN, f'column "{a.sval}" specified more than once', None)
            idx.append(i)
    else:
        idx = list(range(item.arity()))
    columns = tuple((item.columns[i].name, item.columns[i].type) for i in idx)
    expr = None
    if not node.is_from:
        expr = Get(item.id, item.arity())
        if idx != list(range(item.arity())):
            expr = Project(expr, tuple(idx))
    return P.CopyPlan(bool(node.is_from), item.id, item.name, columns, tuple(idx), expr, RowSetFinishing(), target, options,
                      depends_on=frozenset(b.depends_on))


def bind_create_table_as(b, stmt, node):
    into = node.into
    name = into.rel.relname
    if b.catalog.try_resolve(name) is not None and not node.if_not_exists:
        raise b.error(errors.DUPLICATE_TABLE, f'relation "{name}" already exists', into.rel.location)
    if getattr(into, "skipData", False):
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "CREATE TABLE ... AS ... WITH NO DATA is not supported", None)
    bq = b.bind_query(node.query, TOP)
    names = list(bq.names)
    if into.colNames:
        aliases = [c.sval for c in into.colNames]
        if len(aliases) > len(names):
            raise b.error(errors.SYNTAX_ERROR, "too many column names were specified", None)
        names[:len(aliases)] = aliases
    seen = set()
    for n in names:
        if n in seen:
            raise b.error(errors.DUPLICATE_COLUMN, f'column "{n}" specified more than once', None)
        seen.add(n)
    types = list(bq.types)
    types = ["text" if t == "unknown" else t for t in types]  # as PostgreSQL types an unknown literal
    width = len(names)
    expr = bq.expr
    if bq.hidden:  # ORDER BY's hidden columns: the table gets the visible ones (its order is moot)
        expr = Project(expr, tuple(range(width)))
    columns = tuple(ColumnDef(n, t) for n, t in zip(names, types))
    create_sql = "CREATE TABLE " + _quote(name) + " (" + ", ".join(f"{_quote(c.name)} {c.type}" for c in columns) + ")"
    return P.CreateTableAsPlan(name, columns, expr, bool(node.if_not_exists), create_sql,
                               depends_on=frozenset(b.depends_on))


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
