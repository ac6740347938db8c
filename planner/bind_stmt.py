"""Statements -> plans: the dispatch behind ``planner.plan_statement``.

Owns the translation of each statement kind into a ``planner.plans`` dataclass: DDL
(CREATE TABLE / VIEW / MATERIALIZED VIEW / INDEX / DEFAULT INDEX, DROP with the catalog's
dependency check), session statements (SET/RESET/SHOW/transactions/ALTER SYSTEM), SHOW
introspection, EXPLAIN, SUBSCRIBE and cursors, and the dispatch to ``planner.bind_dml``
for INSERT, UPDATE and DELETE.  Invariant: planning never mutates the catalog (the
adapter applies plans), and every user error is a ``sql.errors`` error with a position
where the statement has one.
Deliberately not here: query binding (``planner.bind_query``), DML (``planner.bind_dml``),
execution, timestamps.

Over 600 lines: one binder per statement kind behind one dispatch table; the larger
families already have modules of their own (DML, COPY, schemas and clusters).
"""
from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Optional

from pglast import ast
from pglast.stream import RawStream

from expr.finishing import RowSetFinishing
from expr.relation import Get
from expr.scalar import Column, columns_referenced
from planner import bind_namespaces as N, ddl_options, plans as P
from planner.bind_dml import assignment_cast, bind_delete, bind_insert, bind_update, table_context
from planner.bind_copy import bind_copy, bind_create_table_as
from planner import bind_connections as BC
from planner import bind_alter as BA
from planner.bind_sources import create_source, drop_source, refused, show_subsources
from planner.bind_drop import article, drop_items
from planner.bind_prepared import bind_deallocate, bind_discard, bind_execute, bind_prepare
from planner.bind_expr import ExprContext, Scope, ScopeItem, enum_name, type_modifier
from planner.bind_query import TOP, UNIT, Binder
from planner.catalog import CheckConstraint, ColumnDef, UniqueKey
from repr.ids import GlobalId
from sql import errors, mzsyntax as mz
from sql.statement_names import alter_subcommand, statement_name


def plan_statement(stmt, catalog, params=()):
    """The plan for one parsed statement (``sql.parse.Statement``)."""
    b = Binder(catalog, stmt, params)
    kind = stmt.kind
    fn = _DISPATCH.get(kind)
    if fn is None:
        raise _unsupported(stmt)
    return fn(b, stmt, stmt.node)


def _unsupported(stmt):
    """The refusal of a statement kind mzlite has no plan for, in the user's words
    (``CREATE TRIGGER is not supported``, ``ALTER TABLE ... ADD CONSTRAINT is not supported``)."""
    name = statement_name(stmt.text)
    if stmt.kind == "alter_table":
        sub = alter_subcommand(stmt.text)
        name = f"{name} ... {sub}" if sub else name
    return errors.error_for(errors.FEATURE_NOT_SUPPORTED, f"{name} is not supported", position=stmt.position(0))


def describe_statement(stmt, catalog, declared=()):
    """``(parameter types, plan)`` of a statement whose parameters have no values yet (the
    wire protocol's Describe): each ``$k`` is planned as an untyped NULL, and its type is
    the first type binding coerces it to, else ``text`` (PostgreSQL's rule for a parameter
    nothing constrains); ``declared[k]``, when given, is parameter k's type and it binds as
    a NULL of that type.  The plan is for its columns only: never apply it."""
    n = stmt.param_count
    b = Binder(catalog, stmt, (None,) * n)
    b.inferring = {}
    b.declared = tuple(declared)
    fn = _DISPATCH.get(stmt.kind)
    if fn is None:
        raise _unsupported(stmt)
    plan = fn(b, stmt, stmt.node)
    types = [(b.declared[k] if k < len(b.declared) else None) or "text" for k in range(n)]
    for k, _, t in sorted(b.inferring.values(), key=lambda s: s[0]):
        if t is not None and types[k] == "text" and t != "unknown" and not (k < len(b.declared) and b.declared[k]):
            types[k] = t
    return tuple(types), plan


# ------------------------------------------------------------------ queries


def plan_query(b: Binder, node):
    """(expr, finishing, columns) of a top-level query: ORDER BY/LIMIT go to the finishing."""
    bq = b.bind_query(node, TOP)
    expr = bq.expr
    width = len(bq.names)
    finishing = RowSetFinishing(order_by=tuple(bq.order), limit=bq.limit, offset=bq.offset,
                                project=tuple(range(width)) if bq.hidden else None)
    return expr, finishing, tuple(zip(bq.names, bq.types))


#: functions whose value is not a constant of the statement: refused in AS OF / UP TO, as
#: Materialize refuses them (``now()``, ``mz_now()``, the session's database, the version)
_UNMATERIALIZABLE = frozenset({"now", "current_database", "current_schema", "version", "mz_version",
                               "mz_version_num"})


def _unmaterializable(e) -> bool:
    from expr.functions import VOLATILE
    from expr.scalar import Call, CallMzNow, If
    if isinstance(e, CallMzNow):
        return True
    if isinstance(e, Call):
        return e.func in _UNMATERIALIZABLE or e.func in VOLATILE or any(_unmaterializable(a) for a in e.args)
    if isinstance(e, If):
        return any(_unmaterializable(x) for x in (e.cond, e.then, e.els))
    return False


def _timestamp_expr(b: Binder, node):
    """An ``AS OF`` / ``UP TO`` expression bound and cast to mz_timestamp, with Materialize's
    refusals: an unmaterializable function (0A000) and a type with no cast (42846)."""
    if node is None:
        return None
    ctx = ExprContext(b, UNIT, [], Scope([]), clause="AS OF")
    e = ctx.bind(node)
    if _unmaterializable(e):
        raise b.error(errors.FEATURE_NOT_SUPPORTED,
                      "calling an unmaterializable function in AS OF or UP TO not yet supported",
                      getattr(node, "location", None))
    t = ctx.typeof(e)
    if t != "mz_timestamp":
        from sql.types import can_cast, display_name
        if not can_cast(t, "mz_timestamp", "explicit"):
            raise b.error("42846", f"AS OF or UP TO does not support casting from {display_name(t)} to mz_timestamp",
                          getattr(node, "location", None))
        try:
            e = ctx.coerce(e, "mz_timestamp", "explicit" if t in ("unknown", "text", "numeric", "int8", "int4", "int2")
                           else "implicit", getattr(node, "location", None))
        except errors.Error as ex:  # a constant that folds to a data error at plan time
            if not ex.sqlstate.startswith("22"):
                raise
            raise b.error(errors.INVALID_PARAMETER_VALUE,
                          "AS OF or UP TO should be castable to a (non-null) mz_timestamp value",
                          getattr(node, "location", None)) from None
    return e


def _select(b: Binder, stmt, node):
    expr, finishing, columns = plan_query(b, node)
    as_of = stmt.as_of
    return P.SelectPlan(expr, finishing, columns,
                        as_of=_timestamp_expr(b, as_of.expr) if as_of else None,
                        as_of_at_least=bool(as_of and as_of.at_least), depends_on=frozenset(b.depends_on))


# ------------------------------------------------------------------ CREATE TABLE


def _rv_parts(rv) -> tuple[str, ...]:
    return tuple(x for x in (rv.catalogname, rv.schemaname, rv.relname) if x)


def _create_table(b: Binder, stmt, node):
    loc = node.relation.location
    name = b.catalog.key_for(_rv_parts(node.relation), b.pos(loc))
    if b.catalog.try_resolve(name) is not None and not node.if_not_exists:
        raise b.error(errors.DUPLICATE_TABLE, f"catalog item '{name}' already exists", loc)
    ddl_options.check_create_table(b, node)
    cols: list[ColumnDef] = []
    #: (constraint node, its column names or None for a table constraint's own keys, column name)
    constraints: list = []
    for el in node.tableElts or ():
        if isinstance(el, ast.Constraint):
            constraints.append((el, None))
            continue
        if not isinstance(el, ast.ColumnDef):
            what = "LIKE" if isinstance(el, ast.TableLikeClause) else "this table element"
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{what} in CREATE TABLE is not supported",
                          getattr(el, "location", None) or loc)
        if any(c.name == el.colname for c in cols):
            raise b.error(errors.DUPLICATE_COLUMN, f'column "{el.colname}" specified more than once', el.location)
        ddl_options.check_column(b, el)
        tname = el.typeName.names[-1].sval.lower() if el.typeName.names else ""
        if tname in ("serial", "serial2", "serial4", "serial8", "smallserial", "bigserial"):
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{tname} columns are not supported (they need a sequence); "
                          f"give the key explicitly", el.location)
        t = b.type_name(el.typeName)
        mod = type_modifier(b, el.typeName, t)  # declared type modifier (sql.types.typmod_for)
        nullable, default = not el.is_not_null, None
        for c in el.constraints or ():
            ct = enum_name(c.contype)
            if ct in ("CONSTR_NOTNULL", "CONSTR_PRIMARY"):
                nullable = False
            elif ct == "CONSTR_NULL":
                nullable = True
            elif ct == "CONSTR_DEFAULT":
                ctx = ExprContext(b, UNIT, [], Scope([]), clause="DEFAULT expressions")
                e = ctx.bind(c.raw_expr)
                if ctx.rel is not UNIT:
                    raise b.error(errors.FEATURE_NOT_SUPPORTED, "cannot use subquery in DEFAULT expression",
                                  c.location)
                default = ctx.apply_typmod(assignment_cast(ctx, e, t, el.colname, c.location), mod, False,
                                           c.location, fold=False)
            if ct in ("CONSTR_PRIMARY", "CONSTR_UNIQUE", "CONSTR_CHECK", "CONSTR_FOREIGN", "CONSTR_EXCLUSION",
                      "CONSTR_IDENTITY", "CONSTR_GENERATED"):
                constraints.append((c, el.colname))
            elif ct not in ("CONSTR_NOTNULL", "CONSTR_NULL", "CONSTR_DEFAULT"):
                raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{ct[7:].lower()} column constraints are not supported",
                              c.location)
        cols.append(ColumnDef(el.colname, t, nullable, default, mod))
    if node.inhRelations or node.partspec is not None or node.ofTypename is not None:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "CREATE TABLE ... INHERITS / PARTITION BY / OF is not supported",
                      loc)
    uniques, checks = _table_constraints(b, name, cols, constraints)
    pk = {cols[i].name for u in uniques if u.primary for i in u.columns}
    if pk:
        cols = [ColumnDef(c.name, c.type, False if c.name in pk else c.nullable, c.default, c.typmod) for c in cols]
    return P.CreateTablePlan(name, tuple(cols), bool(node.if_not_exists), stmt.text, tuple(uniques), tuple(checks),
                             retain_history=_retain_history(b, stmt))


def _table_constraints(b: Binder, table: str, cols, constraints):
    """The ``UniqueKey``s and ``CheckConstraint``s of a CREATE TABLE, named as PostgreSQL names
    them; REFERENCES, EXCLUDE, identity and generated columns are refused (0A000), never
    accepted and ignored."""
    index = {c.name: i for i, c in enumerate(cols)}
    used: set = set()

    def choose(explicit, parts, suffix):
        if explicit:
            if explicit in used:
                raise b.error(errors.DUPLICATE_OBJECT, f'constraint "{explicit}" for relation "{table}" already exists',
                              None)
            used.add(explicit)
            return explicit
        base = "_".join([table, *parts, suffix])
        n, candidate = 0, base
        while candidate in used:
            n += 1
            candidate = f"{base}{n}"
        used.add(candidate)
        return candidate

    uniques, checks = [], []
    for c, colname in constraints:
        ct = enum_name(c.contype)
        if ct in ("CONSTR_PRIMARY", "CONSTR_UNIQUE"):
            keys = [colname] if colname is not None else [k.sval for k in c.keys or ()]
            for k in keys:
                if k not in index:
                    raise b.error(errors.UNDEFINED_COLUMN, f'column "{k}" named in key does not exist', c.location)
            if c.including or c.options or getattr(c, "nulls_not_distinct", False):
                raise b.error(errors.FEATURE_NOT_SUPPORTED, "key constraint options are not supported", c.location)
            primary = ct == "CONSTR_PRIMARY"
            if primary and any(u.primary for u in uniques):
                raise b.error(errors.INVALID_TABLE_DEFINITION,
                              f'multiple primary keys for table "{table}" are not allowed', c.location)
            columns = tuple(index[k] for k in keys)
            if any(u.columns == columns for u in uniques):
                continue  # PostgreSQL keeps one index for a repeated key
            uniques.append(UniqueKey(choose(c.conname, [] if primary else keys, "pkey" if primary else "key"),
                                     columns, primary))
        elif ct == "CONSTR_CHECK":
            if c.is_no_inherit:
                raise b.error(errors.FEATURE_NOT_SUPPORTED, "CHECK ... NO INHERIT is not supported", c.location)
            rel = Get(GlobalId("u", 0), len(cols))  # the table being created: only its columns are in scope
            ctx = ExprContext(b, rel, [c2.type for c2 in cols], Scope([ScopeItem(table, c2.name, i)
                                                                      for i, c2 in enumerate(cols)]),
                              clause="check constraints")
            e = ctx.coerce_bool(ctx.bind(c.raw_expr), "CHECK constraint", c.location)
            if ctx.rel is not rel:
                raise b.error(errors.FEATURE_NOT_SUPPORTED, "cannot use subquery in check constraint", c.location)
            referenced = sorted(columns_referenced(e))
            parts = [colname] if colname is not None else ([cols[referenced[0]].name] if len(referenced) == 1 else [])
            checks.append(CheckConstraint(choose(c.conname, parts, "check"), e))
        elif ct == "CONSTR_FOREIGN":
            raise b.error(errors.FEATURE_NOT_SUPPORTED,
                          "foreign key constraints (REFERENCES) are not supported: they would not be enforced",
                          c.location)
        else:
            what = {"CONSTR_EXCLUSION": "EXCLUDE constraints", "CONSTR_IDENTITY": "identity columns (GENERATED ... AS IDENTITY; SQLite's AUTOINCREMENT)",
                    "CONSTR_GENERATED": "generated columns"}.get(ct, f"{ct[7:].lower()} constraints")
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{what} are not supported", c.location)
    for c, _ in constraints:
        if getattr(c, "deferrable", False) or getattr(c, "initdeferred", False):
            raise b.error(errors.FEATURE_NOT_SUPPORTED, "deferrable constraints are not supported", c.location)
    return uniques, checks


# ------------------------------------------------------------------ views and indexes


def _view(b: Binder, stmt, rv, loc, query, aliases, materialized, if_not_exists, or_replace):
    name = b.catalog.key_for(_rv_parts(rv), b.pos(loc))
    existing = b.catalog.try_resolve(name)
    replaces = None
    if existing is not None:
        want = "materialized_view" if materialized else "view"
        if or_replace and existing.kind == want:
            replaces = existing.id
        elif not if_not_exists:
            raise b.error(errors.DUPLICATE_TABLE, f"catalog item '{name}' already exists", loc)
    bq = b.bind_query(query, TOP)
    names = list(bq.names)
    if aliases:
        al = [a.sval for a in aliases]
        if len(al) > len(names):
            raise b.error(errors.SYNTAX_ERROR, "CREATE VIEW specifies more column names than columns", loc)
        names[:len(al)] = al
    for i, n in enumerate(names):
        if n in names[:i]:
            raise b.error(errors.DUPLICATE_COLUMN, f'column "{n}" specified more than once', loc)
    if replaces is not None and (replaces in b.depends_on):
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f'cannot replace view "{name}": it depends on itself', loc)
    return P.CreateViewPlan(name, bq.finished(), tuple(zip(names, bq.types)), materialized, bool(if_not_exists),
                            bool(or_replace), frozenset(b.depends_on), stmt.text, replaces,
                            in_cluster=_in_cluster(b, stmt), retain_history=_retain_history(b, stmt))


def _create_view(b, stmt, node):
    ddl_options.check_create_view(b, node)
    return _view(b, stmt, node.view, node.view.location, node.query, node.aliases, False,
                 getattr(stmt, "if_not_exists", False), node.replace)


def _create_mv(b, stmt, node):
    ddl_options.check_create_materialized_view(b, node)
    into = node.into
    return _view(b, stmt, into.rel, into.rel.location, node.query, into.colNames, True, node.if_not_exists,
                 getattr(stmt, "or_replace", False))


def _index_target(b: Binder, parts, loc):
    item = b.catalog.resolve(parts, position=b.pos(loc))
    if item.kind not in ("table", "view", "materialized_view", "source"):
        raise b.error(errors.WRONG_OBJECT_TYPE, f'cannot create index on {item.kind_word()} "{item.name}"', loc)
    return item


def _check_index_name(b, name, if_not_exists, loc):
    if name is not None and b.catalog.try_resolve(name) is not None and not if_not_exists:
        raise b.error(errors.DUPLICATE_TABLE, f"catalog item '{name}' already exists", loc)


def _schema_prefix(item) -> str:
    """An index lives in the schema of the object it indexes (as in PostgreSQL)."""
    return item.name.rsplit(".", 1)[0] + "." if "." in item.name else ""


def _create_index(b: Binder, stmt, node):
    rv = node.relation
    ddl_options.check_create_index(b, node)
    item = _index_target(b, _rv_parts(rv), rv.location)
    idxname = _schema_prefix(item) + node.idxname if node.idxname else None
    _check_index_name(b, idxname, node.if_not_exists, rv.location)
    if node.whereClause is not None:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "partial indexes are not supported", rv.location)
    ctx = table_context(b, item, rv.alias, "index expressions")
    keys, sqls, names = [], [], []
    for el in node.indexParams:
        if el.name is not None:
            keys.append(ctx.bind(ast.ColumnRef(fields=(ast.String(sval=el.name),), location=rv.location)))
            sqls.append(_quote(el.name))
            names.append(el.name)
        else:
            keys.append(ctx.bind(el.expr))
            sqls.append(RawStream()(el.expr))
            names.append("expr")
    suggested = f"{item.name}_{'_'.join(names)}_idx"
    return P.CreateIndexPlan(idxname, item.id, tuple(keys), tuple(sqls), False, bool(node.if_not_exists),
                             item.name, stmt.text, suggested, in_cluster=_in_cluster(b, stmt),
                             retain_history=_retain_history(b, stmt))


def _create_default_index(b: Binder, stmt, node: mz.CreateDefaultIndex):
    item = _index_target(b, node.on, node.location)
    keys = tuple(Column(i) for i in range(item.arity()))
    sqls = tuple(_quote(c) for c in item.column_names())
    return P.CreateIndexPlan(None, item.id, keys, sqls, True, node.if_not_exists, item.name, stmt.text,
                             f"{item.name}_primary_idx", in_cluster=_in_cluster(b, stmt, node.in_cluster))


def _retain_history(b: Binder, stmt):
    """``WITH (RETAIN HISTORY FOR 'd')`` of a CREATE as ``(text, ms)``, or None."""
    text = getattr(stmt, "retain_history", None)
    return None if text is None else BA.retain_history(b, text, 0)


def _in_cluster(b: Binder, stmt, name: Optional[str] = None) -> Optional[str]:
    """The cluster an index or materialized view names (``IN CLUSTER c``), checked to
    exist; None means the session's ``cluster`` (checked when the plan is applied)."""
    name = name or getattr(stmt, "in_cluster", None)
    if name is not None:
        b.catalog.cluster(name, stmt.position(0))
    return name


def _quote(name: str) -> str:
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", name):
        return name
    return '"' + name.replace('"', '""') + '"'


# ------------------------------------------------------------------ DROP

_DROP_KINDS = {"OBJECT_TABLE": "table", "OBJECT_VIEW": "view", "OBJECT_MATVIEW": "materialized_view",
               "OBJECT_INDEX": "index"}


def _create_named_type(b: Binder, stmt, node):
    from planner.bind_types import create_named_type
    return create_named_type(b, stmt, node)


def _drop(b: Binder, stmt, node):
    if enum_name(node.removeType) == "OBJECT_SCHEMA":
        return N.drop_schema(b, stmt, node)
    if enum_name(node.removeType) == "OBJECT_TYPE":
        from planner.bind_types import drop_named_type
        return drop_named_type(b, stmt, node)
    kind = _DROP_KINDS.get(enum_name(node.removeType))
    if kind is None:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{statement_name(stmt.text)} is not supported", 0)
    word = {"table": "table", "view": "view", "materialized_view": "materialized view", "index": "index"}[kind]
    names = SimpleNamespace(names=[tuple(s.sval for s in obj) for obj in node.objects],
                            if_exists=bool(node.missing_ok), location=0,
                            cascade=enum_name(node.behavior) == "DROP_CASCADE")
    return drop_items(b, stmt, names, kind,
                      errors.UNDEFINED_OBJECT if kind == "index" else errors.UNDEFINED_TABLE, word=word)


# ------------------------------------------------------------------ session statements


def _transaction(b, stmt, node):
    read_only, isolation = False, None
    for opt in getattr(node, "options", None) or ():  # BEGIN's transaction modes
        if opt.defname == "transaction_read_only":
            read_only = _const_text(opt.arg) in ("1", "on", "true")
        elif opt.defname == "transaction_isolation":
            isolation = _const_text(opt.arg)
        elif opt.defname != "transaction_deferrable":  # DEFERRABLE: PostgreSQL ignores it too unless
            raise errors.error_for(errors.FEATURE_NOT_SUPPORTED,  # SERIALIZABLE READ ONLY, which never waits here
                                   f"transaction mode {opt.defname} is not supported")
    if enum_name(getattr(node, "kind", None)) in ("TRANS_STMT_SAVEPOINT", "TRANS_STMT_RELEASE",
                                                  "TRANS_STMT_ROLLBACK_TO", "TRANS_STMT_PREPARE",
                                                  "TRANS_STMT_COMMIT_PREPARED", "TRANS_STMT_ROLLBACK_PREPARED"):
        raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, "savepoints and prepared transactions are not supported")
    if getattr(node, "chain", False):
        raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, "AND CHAIN is not supported")
    return P.TransactionPlan(stmt.kind, read_only, isolation)


def _const_text(node) -> str:
    if isinstance(node, ast.A_Const):
        v = node.val
        if node.isnull:
            return "NULL"
        if isinstance(v, ast.String):
            return v.sval
        if isinstance(v, ast.Integer):
            return str(v.ival)
        if isinstance(v, ast.Float):
            return v.fval
        if isinstance(v, ast.Boolean):
            return "on" if v.boolval else "off"
    if isinstance(node, ast.TypeCast):
        return _const_text(node.arg)
    if isinstance(node, ast.DefElem):
        return _const_text(node.arg)
    if isinstance(node, ast.ColumnRef):
        return ".".join(f.sval for f in node.fields)
    return RawStream()(node)


def _set_value(node) -> tuple[str, Optional[str]]:
    k = enum_name(node.kind)
    name = (node.name or "").lower()
    if k == "VAR_SET_MULTI" and name == "transaction":
        d = node.args[0]
        if len(node.args) > 1 or d.defname != "transaction_isolation":
            raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, "SET TRANSACTION supports only ISOLATION LEVEL")
        return d.defname, _const_text(d.arg)
    if k == "VAR_SET_DEFAULT":
        return name, None
    if k != "VAR_SET_VALUE":
        form = "FROM CURRENT" if k == "VAR_SET_CURRENT" else "in this form"
        raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, f"SET {name} {form} is not supported")
    return name, ", ".join(_const_text(a) for a in node.args or ())


def _set(b, stmt, node):
    name, value = _set_value(node)
    # SET TRANSACTION is SET LOCAL of the transaction's variable (PostgreSQL's meaning)
    local = bool(node.is_local) or (enum_name(node.kind) == "VAR_SET_MULTI" and (node.name or "").lower() == "transaction")
    return P.SetVariablePlan(name, value, local)


def _reset(b, stmt, node):
    return P.ResetVariablePlan("all" if enum_name(node.kind) == "VAR_RESET_ALL" else node.name.lower())


def _alter_system(b, stmt, node):
    s = node.setstmt
    if enum_name(s.kind) in ("VAR_RESET", "VAR_RESET_ALL"):
        return P.AlterSystemSetPlan("all" if enum_name(s.kind) == "VAR_RESET_ALL" else s.name.lower(), None)
    name, value = _set_value(s)
    return P.AlterSystemSetPlan(name, value)


def _show_variable(b, stmt, node):
    return P.ShowVariablePlan(node.name.lower())


def bind_show(b: Binder, stmt, node: mz.Show):
    """The plan of a SHOW (also of a ``(SHOW ...)`` subquery: ``Binder.bind_show_subquery``)."""
    return _show(b, stmt, node)


def _show(b: Binder, stmt, node: mz.Show):
    if node.what == "variable":
        return P.ShowVariablePlan(node.name.lower())
    if node.what == "all":
        return P.ShowVariablePlan("all")
    if node.what == "create":
        item = b.catalog.resolve(node.on, position=b.pos(node.location))
        if item.kind != node.create_kind:
            w = node.create_kind.replace('_', ' ')
            raise b.error(errors.WRONG_OBJECT_TYPE, f"{item.name} is not {article(w)} {w}",
                          node.location)
        return P.ShowCreatePlan(node.create_kind, item.id, item.name)
    on = None
    if node.what == "indexes" and node.on is not None and len(node.on) == 1 and node.on[0] in b.catalog.schemas \
            and b.catalog.try_resolve(node.on) is None:  # SHOW INDEXES FROM schema
        node = mz.Show(node.what, like=node.like, location=node.location, schema=node.on[0], cluster=node.cluster)
    if node.on is not None:
        on = b.catalog.resolve(node.on, position=b.pos(node.location)).id
    if node.what not in ("tables", "views", "materialized_views", "indexes", "objects", "columns",
                         "schemas", "databases", "clusters", "cluster_replicas", "sources", "secrets",
                         "connections"):
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"SHOW {node.what.upper()} is not supported", 0)
    schema = getattr(node, "schema", None)
    if schema is not None:
        schema = b.catalog.schema_of((schema, "x"), b.pos(node.location))
    cluster = getattr(node, "cluster", None)
    if cluster is not None:
        b.catalog.cluster(cluster, b.pos(node.location))
    return P.ShowObjectsPlan(node.what, on, node.like, schema=schema, cluster=cluster)


def _explain(b: Binder, stmt, node: mz.Explain):
    if node.format != "text":
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"EXPLAIN ... AS {node.format.upper()} is not supported: "
                      "mzlite prints its plans as text (EXPLAIN ... AS TEXT)", 0)
    if getattr(node, "target", None) is not None:
        kind, name = node.target
        item = b.catalog.resolve(name, position=b.pos(node.location))
        w = kind.replace("_", " ")
        if item.kind != kind:
            raise b.error(errors.WRONG_OBJECT_TYPE, f"{item.name} is not {article(w)} {w}", node.location)
        if node.stage == "timestamp":
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"EXPLAIN TIMESTAMP FOR {w.upper()} is not supported", 0)
        return P.ExplainPlan(node.stage, None, node.format, item=item.id)
    inner = plan_statement(node.statement, b.catalog, b.params)
    return P.ExplainPlan(node.stage, inner, node.format)


# ------------------------------------------------------------------ SUBSCRIBE and cursors


def _subscribe_plan(b: Binder, node: mz.Subscribe):
    rel_id = None
    if node.relation is not None:
        item = b.catalog.resolve(node.relation, position=b.pos(node.location))
        if item.kind not in ("table", "view", "materialized_view", "source"):
            raise b.error(errors.WRONG_OBJECT_TYPE, f'cannot subscribe to {item.kind_word()} "{item.name}"',
                          node.location)
        b.depends_on.add(item.id)
        if item.kind == "view":
            expr = item.expr
            b.depends_on.update(item.depends_on)
        else:
            expr = Get(item.id, item.arity())
        columns = tuple(zip(item.column_names(), item.column_types()))
        rel_id = item.id
    else:
        bq = b.bind_query(node.query, TOP)
        expr = bq.finished()
        columns = tuple(zip(bq.names, bq.types))
    opts = dict(node.options)
    for k in opts:
        if k not in ("snapshot", "progress"):
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"SUBSCRIBE option {k.upper()} is not supported", 0)
    upsert_key = None
    if getattr(node, "envelope_upsert", None) is not None:
        names = [n for n, _ in columns]
        for k in node.envelope_upsert:
            if k not in names:
                raise b.error(errors.UNDEFINED_COLUMN, f'column "{k}" does not exist', node.location)
        upsert_key = tuple(names.index(k) for k in node.envelope_upsert)
    within = []
    for col, desc, nulls in getattr(node, "within_timestamp_order_by", ()):
        names = [n for n, _ in columns]
        if col == "mz_diff" and upsert_key is None:
            idx = -1
        elif col in names:
            idx = names.index(col)
        else:
            raise b.error(errors.UNDEFINED_COLUMN, f'column "{col}" does not exist', node.location)
        within.append((idx, desc, (not desc) if nulls is None else nulls == "last"))
    return P.SubscribePlan(expr, columns, frozenset(b.depends_on),
                           as_of=_timestamp_expr(b, node.as_of.expr) if node.as_of else None,
                           as_of_at_least=bool(node.as_of and node.as_of.at_least),
                           up_to=_timestamp_expr(b, node.up_to), with_snapshot=bool(opts.get("snapshot", True)),
                           progress=bool(opts.get("progress", False)), relation_id=rel_id,
                           upsert_key=upsert_key, within_timestamp_order=tuple(within))


def _subscribe(b, stmt, node):
    return _subscribe_plan(b, node)


def _declare(b: Binder, stmt, node):
    if isinstance(node, mz.DeclareSubscribe):
        return P.DeclarePlan(node.name, _subscribe_plan(b, node.subscribe), stmt.text)
    opts = node.options or 0
    for bit, what in ((1, "BINARY cursors"), (2, "SCROLL cursors (FETCH moves forward only)"),
                      (32, "WITH HOLD cursors (COMMIT closes every cursor)")):
        if opts & bit:
            raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, f"{what} are not supported")
    expr, finishing, columns = plan_query(b, node.query)
    return P.DeclarePlan(node.portalname, P.SelectPlan(expr, finishing, columns,
                                                       depends_on=frozenset(b.depends_on)), stmt.text)


_DURATION = re.compile(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|h|us)?\s*$", re.I)


def parse_duration(v) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    m = _DURATION.match(str(v))
    if not m:
        raise errors.error_for(errors.INVALID_PARAMETER_VALUE, f'invalid timeout "{v}"')
    unit = (m.group(2) or "s").lower()
    return float(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}[unit]


def _fetch(b, stmt, node):
    """FETCH and MOVE: always parsed by ``sql.parse`` (``mz.Fetch``), which keeps a backward or
    absolute form as the user typed it so it can be refused here in their words."""
    if node.refused_form is not None:
        # Buffered cursors are consumed as read (a deque popped from the front) and
        # SUBSCRIBE cursors are streams: no backward or absolute moves; refused, never ignored.
        raise errors.error_for(errors.FEATURE_NOT_SUPPORTED,
                               f"{node.refused_form} is not supported (cursors move forward "
                               f"only; use FETCH/MOVE [FORWARD] n or ALL)")
    opts = dict(node.options)
    timeout = parse_duration(opts["timeout"]) if "timeout" in opts else None
    return P.FetchPlan(node.cursor, node.count, timeout, move=node.move)


def _close(b, stmt, node):
    return P.ClosePlan(node.portalname)


def _with_ctes(bind):
    """``bind`` for an INSERT, UPDATE or DELETE whose ``WITH`` queries its source, WHERE
    and RETURNING may read (they were dropped: a reference was 42P01)."""
    def run(b: Binder, stmt, node):
        if node.withClause is None:
            return bind(b, stmt, node)
        b.push_ctes(node.withClause)
        try:
            return bind(b, stmt, node)
        finally:
            b.ctes.pop()
    return run


_DISPATCH = {
    "select": _select, "create_table": _create_table, "insert": _with_ctes(bind_insert),
    "update": _with_ctes(bind_update), "delete": _with_ctes(bind_delete),
    "create_view": _create_view, "create_materialized_view": _create_mv, "create_index": _create_index,
    "create_default_index": _create_default_index, "drop": _drop, "begin": _transaction,
    "commit": _transaction, "rollback": _transaction, "set": _set, "reset": _reset,
    "alter_system_set": _alter_system, "alter_system_reset": _alter_system, "show_variable": _show_variable,
    "show": _show, "explain": _explain, "subscribe": _subscribe, "declare": _declare, "fetch": _fetch,
    "prepare": bind_prepare, "execute": bind_execute, "deallocate": bind_deallocate, "discard": bind_discard,
    "close": _close, "copy": bind_copy, "create_table_as": bind_create_table_as,
    "create_schema": N.create_schema, "create_cluster": N.create_cluster,
    "drop_cluster": N.drop_cluster, "create_cluster_replica": N.create_cluster_replica,
    "drop_cluster_replica": N.drop_cluster_replica, "alter_cluster": N.alter_cluster, "rename": N.rename,
    "comment": N.comment, "create_source": create_source, "drop_source": drop_source, "refused": refused,
    "show_subsources": show_subsources,
    "create_secret": BC.create_secret, "alter_secret": BC.alter_secret, "drop_secret": BC.drop_objects,
    "create_connection": BC.create_connection, "drop_connection": BC.drop_objects,
    "validate_connection": BC.validate_connection,
    "create_named_type": _create_named_type,
    "alter_rename": BA.alter_rename, "alter_set_cluster": BA.alter_set_cluster, "alter_options": BA.alter_options,
}
