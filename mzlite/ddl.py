"""DDL: creating and dropping tables, views, materialized views and indexes; ALTER SYSTEM.

Owns the effects of DDL plans on the catalog, table storage and the compute
controller.  Invariants: an object is added to the catalog only after everything it
needs exists (its storage collection, its dataflow), and removed from the controller
and storage when dropped, dependents first; a dataflow's ``as_of`` is readable for
every input when it is created, and the inputs stay held at it until the dataflow's
frontier has passed it.  Deliberately not here: planning (the planner resolved names
and computed what to drop) or how dataflows are rendered.
"""
from __future__ import annotations

from mzlite.cursor import Result
from planner.catalog import CatalogItem, ColumnDef
from planner.lower import build_index_dataflow, build_materialized_view_dataflow, resolve_imports
from repr.ids import GlobalId
from sql import errors as E


def _notice_exists(kind: str, name: str) -> Result:
    return Result(f"CREATE {kind.upper()}", None)


def create_table(db, session, plan, stmt) -> Result:
    existing = db.catalog.try_resolve(plan.name)
    if existing is not None:
        if plan.if_not_exists:
            return _notice_exists("table", plan.name)
        raise E.error_for(E.DUPLICATE_TABLE, f'{existing.kind_word()} "{plan.name}" already exists')
    _no_transaction(session, "CREATE TABLE")
    id = db.allocate_user()
    db.storage.create_table(id, len(plan.columns))
    db.catalog.add(CatalogItem(id, plan.name, "table", tuple(plan.columns),
                               create_sql=plan.create_sql or (stmt.text if stmt else "")))
    return Result("CREATE TABLE", None)


def _dataflow_as_of(db, session, expr) -> tuple[int, set]:
    _, sources, index_imports = resolve_imports(expr, db.lowering)
    ids = {s.id for s in sources} | {i.id for i in index_imports}
    t = db.oracle.read_ts()
    db.storage.advance_tables(t + 1)
    sinces = [db.reader.since_of(i) for i in ids]
    return max([t] + [s for s in sinces if s is not None]), ids


def create_view(db, session, plan, stmt) -> Result:
    kind = "materialized view" if plan.materialized else "view"
    existing = db.catalog.try_resolve(plan.name)
    if existing is not None and not plan.or_replace:
        if plan.if_not_exists:
            return _notice_exists(kind, plan.name)
        raise E.error_for(E.DUPLICATE_TABLE, f'{existing.kind_word()} "{plan.name}" already exists')
    _no_transaction(session, f"CREATE {kind.upper()}")
    if existing is not None and plan.or_replace:
        if existing.kind != ("materialized_view" if plan.materialized else "view"):
            raise E.error_for(E.WRONG_OBJECT_TYPE, f'"{plan.name}" is not a {kind}')
        if existing.id in plan.depends_on:
            raise E.error_for(E.DEPENDENT_OBJECTS_STILL_EXIST,
                              f"cannot replace {kind} {plan.name}: the new definition depends on it")
        for gid in db.catalog.check_drop(existing.id, cascade=False):
            _drop_one(db, gid)
    columns = tuple(ColumnDef(n, t) for n, t in plan.columns)
    id = db.allocate_user()
    create_sql = plan.create_sql or (stmt.text if stmt else "")
    if not plan.materialized:
        db.catalog.add(CatalogItem(id, plan.name, "view", columns, expr=plan.expr, create_sql=create_sql,
                                   depends_on=frozenset(plan.depends_on)))
        return Result("CREATE VIEW", None)
    from planner.optimize import optimize
    expr = optimize(plan.expr)
    as_of, inputs = _dataflow_as_of(db, session, expr)
    # Hold the inputs at as_of before lowering (which can take a while for a large plan):
    # else the ticker may compact them past as_of and the dataflow is refused.
    holds = db.reader.hold(inputs, as_of)
    try:
        desc = build_materialized_view_dataflow(expr, id=id, as_of=as_of, catalog=db.lowering,
                                                optimize_plan=False, debug_name=f"materialized view {plan.name}")
    except Exception:
        db.reader.release(holds)
        raise
    db.storage.create_output(id, len(columns), as_of)
    try:
        db.controller.create_dataflow(desc)
    except Exception:
        db.reader.release(holds)
        db.storage.drop(id)
        raise
    db.controller.release_when_past(id, as_of, lambda: db.reader.release(holds))
    db.catalog.add(CatalogItem(id, plan.name, "materialized_view", columns, expr=plan.expr,
                               create_sql=create_sql, depends_on=frozenset(plan.depends_on)))
    return Result("CREATE MATERIALIZED VIEW", None)


def _index_name(db, plan) -> str:
    if plan.name:
        return plan.name
    base = plan.suggested_name or f"{plan.on_name}_primary_idx"
    name, n = base, 0
    while db.catalog.try_resolve(name) is not None:
        n += 1
        name = f"{base}{n}"
    return name


def create_index(db, session, plan, stmt) -> Result:
    name = _index_name(db, plan)
    existing = db.catalog.try_resolve(name)
    if existing is not None:
        if plan.if_not_exists:
            return _notice_exists("index", name)
        raise E.error_for(E.DUPLICATE_TABLE, f'{existing.kind_word()} "{name}" already exists')
    _no_transaction(session, "CREATE INDEX")
    on = db.catalog.get(plan.on_id)
    if on.kind not in ("table", "view", "materialized_view"):
        raise E.error_for(E.WRONG_OBJECT_TYPE, f'"{on.name}" is not a table, view or materialized view')
    id = db.allocate_user()
    from expr.relation import Get
    probe = Get(plan.on_id, on.arity()) if plan.on_id in db.storage.collections else (on.expr or Get(plan.on_id, on.arity()))
    as_of, inputs = _dataflow_as_of(db, session, probe)
    # Hold the inputs at as_of while the view's plan is optimized and lowered (slow for a large
    # plan): else the ticker may compact them past as_of and the dataflow is refused.
    early = db.reader.hold(inputs, as_of)
    try:
        desc = build_index_dataflow(plan.on_id, index_id=id, key=tuple(plan.key), arity=on.arity(), as_of=as_of,
                                    catalog=db.lowering, debug_name=f"index {name}")
        inputs = set(desc.import_ids())
        holds = db.reader.hold(inputs, as_of)
    finally:
        db.reader.release(early)
    try:
        db.controller.create_dataflow(desc)
    except Exception:
        db.reader.release(holds)
        raise
    db.controller.release_when_past(id, as_of, lambda: db.reader.release(holds))
    db.catalog.add(CatalogItem(id, name, "index", (), create_sql=plan.create_sql or (stmt.text if stmt else ""),
                               on_id=plan.on_id, key=tuple(plan.key), key_sql=tuple(plan.key_sql),
                               depends_on=frozenset({plan.on_id})))
    return Result("CREATE INDEX", None)


_DROP_TAGS = {"table": "DROP TABLE", "view": "DROP VIEW", "materialized_view": "DROP MATERIALIZED VIEW",
              "index": "DROP INDEX"}


def drop(db, session, plan, stmt) -> Result:
    _no_transaction(session, _DROP_TAGS.get(plan.kind, "DROP"))
    ids = list(plan.drop_ids)
    if not ids:
        for gid in plan.ids:
            ids.extend(x for x in db.catalog.check_drop(gid, plan.cascade) if x not in ids)
    for gid in ids:
        if gid in db.catalog:
            _drop_one(db, gid)
    return Result(_DROP_TAGS.get(plan.kind, "DROP"), None)


def _drop_one(db, gid: GlobalId) -> None:
    item = db.catalog.get(gid)
    if item.kind == "system":
        raise E.error_for("42501", f'system item "{item.name}" cannot be modified')
    if item.kind in ("index", "materialized_view"):
        db.controller.drop_collection(gid)
    if item.kind in ("table", "materialized_view"):
        db.storage.drop(gid)
    db.catalog.remove(gid)


def _no_transaction(session, what: str) -> None:
    txn = session.txn
    if txn is not None and txn.explicit and (txn.kind is not None or txn.writes):
        raise E.error_for(E.ACTIVE_SQL_TRANSACTION, f"{what} cannot be run inside a transaction block")


def alter_system_set(db, name: str, value) -> None:
    name = name.lower()
    before = dict(db.system.values)
    db.system.set(name, value)
    if name == "enable_compute_interactive_runtime" and bool(before[name]) != bool(db.system[name]):
        db.restart_replica()
    db.controller.update_configuration({name: db.system[name]})
