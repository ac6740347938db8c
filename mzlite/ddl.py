"""DDL: creating and dropping tables, views, materialized views and indexes; ALTER SYSTEM.

Owns the effects of DDL plans on the catalog, table storage and the compute
controller (the sequencer's handlers of ``CreateTablePlan``, ``CreateViewPlan``,
``CreateIndexPlan``, ``DropPlan`` and ``AlterSystemSetPlan``).  Invariants: an object is
added to the catalog only after everything it needs exists (its storage collection, its
dataflow), and removed from the controller and storage when dropped, dependents first; a
dataflow's ``as_of`` is ``Reader.dataflow_as_of`` of its imports, so it is readable for every
input when the dataflow is created, and the inputs stay held at it until the dataflow's
frontier has passed it.  Deliberately not here: planning (the planner resolved names and
computed what to drop), how dataflows are rendered, bumping the catalog version and ending
subscriptions of dropped objects (the sequencer does both for every DDL plan).
"""
from __future__ import annotations

import dataclasses

from mzlite.catalog_store import note_alter_system
from mzlite import constraints
from mzlite.cursor import Result
from mzlite.temporal import check_maintainable, check_volatile, inlined
from planner import plans as P
from planner.catalog import CatalogItem, ColumnDef
from planner.lower import build_index_dataflow, build_materialized_view_dataflow
from planner.optimize import optimize
from repr.ids import GlobalId
from sql import errors as E


def create_table(db, session, plan, stmt, params) -> Result:
    existing = db.catalog.try_resolve(plan.name)
    if existing is not None:
        if plan.if_not_exists:
            return Result(plan.tag, None)
        raise E.error_for(E.DUPLICATE_TABLE, f"catalog item '{plan.name}' already exists")
    session.refuse_in_transaction(plan)
    id = db.allocate_user()
    item = CatalogItem(id, plan.name, "table", tuple(plan.columns), create_sql=plan.create_sql,
                       unique_keys=tuple(plan.unique_keys), checks=tuple(plan.checks),
                       retain_history=plan.retain_history)
    _retain(db, id, plan.retain_history)
    cons = constraints.for_table(item)
    db.storage.create_table(id, len(plan.columns))
    db.catalog.add(item)
    if cons is not None:
        db.writer.constraints[id] = cons
    return Result(plan.tag, None)


def create_table_as(db, session, plan, stmt, params) -> Result:
    """CREATE TABLE ... AS: the query's rows read first, then the table created and the rows
    written through the table write path (``Writer.apply``), as an INSERT's are.  The catalog
    persists the plain CREATE TABLE (``plan.create_sql``): the rows are data."""
    existing = db.catalog.try_resolve(plan.name)
    if existing is not None:
        if plan.if_not_exists:
            return Result("CREATE TABLE AS", None)
        raise E.error_for(E.DUPLICATE_TABLE, f'relation "{plan.name}" already exists')
    session.refuse_in_transaction(plan)
    rows = db.writer.evaluate(session, plan.expr)
    create_table(db, session, P.CreateTablePlan(plan.name, plan.columns, False, plan.create_sql), stmt, params)
    table = db.catalog.try_resolve(plan.name)
    counts: dict = {}
    for r in rows:
        counts[r] = counts.get(r, 0) + 1
    if counts:
        db.writer.apply(session, {table.id: counts}, consolidated=True)
    return Result(f"SELECT {len(rows)}", None, rowcount=len(rows))


def require_cluster(db, session, name=None) -> str:
    """The cluster a statement runs on (``IN CLUSTER`` or the session's), which must exist."""
    name = name or session.vars["cluster"]
    db.catalog.cluster(name)
    return name


def _create_dataflow(db, desc, on_created=None, min_as_of=None):
    """Create ``desc`` at ``Reader.dataflow_as_of`` of its imports (or ``min_as_of``, when
    later: a restored output's upper), which stay held there until the dataflow's frontier
    passes it (a hold at the earlier time covers the later one); ``on_created(as_of)`` runs
    first (an MV's output)."""
    as_of, holds = db.reader.dataflow_as_of(desc.import_ids())
    if min_as_of is not None and min_as_of > as_of:
        as_of = min_as_of
    desc = dataclasses.replace(desc, as_of=as_of)
    try:
        if on_created is not None:
            on_created(as_of)
        db.controller.create_dataflow(desc)
    except Exception:
        db.reader.release(holds)
        raise
    db.controller.release_when_past(desc.export_ids()[0], as_of, lambda: db.reader.release(holds))


def create_materialized_view_dataflow(db, item_id: GlobalId, name: str, expr, arity: int) -> None:
    """The dataflow maintaining materialized view ``item_id`` and its storage output, both
    from ``Reader.dataflow_as_of`` (CREATE MATERIALIZED VIEW, and a restarted replica)."""
    desc = build_materialized_view_dataflow(optimize(expr), id=item_id, as_of=None, catalog=db.lowering,
                                            optimize_plan=False, debug_name=f"materialized view {name}")

    def create_output(as_of):
        db.storage.create_output(item_id, arity, as_of)
    try:
        # a restored output (a data directory, a restarted replica) continues from its upper
        _create_dataflow(db, desc, create_output, min_as_of=db.storage.restored_upper(item_id))
    except Exception:
        if item_id in db.storage.collections:
            db.storage.drop(item_id)
        raise


def create_index_dataflow(db, index: CatalogItem) -> None:
    """The dataflow maintaining ``index`` (CREATE INDEX, and a restarted replica)."""
    on = db.catalog.get(index.on_id)
    desc = build_index_dataflow(index.on_id, index_id=index.id, key=tuple(index.key), arity=on.arity(),
                                as_of=None, catalog=db.lowering, debug_name=f"index {index.name}")
    _create_dataflow(db, desc)


def create_view(db, session, plan, stmt, params) -> Result:
    kind = "materialized view" if plan.materialized else "view"
    if plan.materialized:
        check_volatile(plan.expr, f'materialized view "{plan.name}"')
        check_maintainable(inlined(db, plan.expr), f'materialized view "{plan.name}"')
    existing = db.catalog.try_resolve(plan.name)
    if existing is not None and not plan.or_replace:
        if plan.if_not_exists:
            return Result(plan.tag, None)
        raise E.error_for(E.DUPLICATE_TABLE, f"catalog item '{plan.name}' already exists")
    session.refuse_in_transaction(plan)
    if existing is not None and plan.or_replace:
        if existing.kind != ("materialized_view" if plan.materialized else "view"):
            raise E.error_for(E.WRONG_OBJECT_TYPE, f'"{plan.name}" is not a {kind}')
        if existing.id in plan.depends_on:
            raise E.error_for(E.DEPENDENT_OBJECTS_STILL_EXIST,
                              f"cannot replace {kind} {plan.name}: the new definition depends on it")
        for gid in db.catalog.check_drop(existing.id, cascade=False):
            drop_one(db, gid)
    columns = tuple(ColumnDef(n, t) for n, t in plan.columns)
    cluster = require_cluster(db, session, plan.in_cluster) if plan.materialized else None
    id = db.allocate_user()
    if plan.materialized:
        _retain(db, id, plan.retain_history)
        create_materialized_view_dataflow(db, id, plan.name, plan.expr, len(columns))
    db.catalog.add(CatalogItem(id, plan.name, "materialized_view" if plan.materialized else "view", columns,
                               expr=plan.expr, create_sql=plan.create_sql, depends_on=frozenset(plan.depends_on),
                               cluster=cluster, retain_history=plan.retain_history if plan.materialized else None))
    return Result(plan.tag, None)


def _index_name(db, plan) -> str:
    if plan.name:
        return plan.name
    base = plan.suggested_name or f"{plan.on_name}_primary_idx"
    name, n = base, 0
    while db.catalog.try_resolve(name) is not None:
        n += 1
        name = f"{base}{n}"
    return name


def create_index(db, session, plan, stmt, params) -> Result:
    if plan.on_id in db.catalog:
        on = db.catalog.get(plan.on_id)
        if on.kind == "view" and on.expr is not None:
            check_volatile(on.expr, f'index on view "{on.name}"')
            check_maintainable(inlined(db, on.expr), f'index on view "{on.name}"')
    name = _index_name(db, plan)
    existing = db.catalog.try_resolve(name)
    if existing is not None:
        if plan.if_not_exists:
            return Result(plan.tag, None)
        raise E.error_for(E.DUPLICATE_TABLE, f"catalog item '{name}' already exists")
    session.refuse_in_transaction(plan)
    cluster = require_cluster(db, session, plan.in_cluster)
    on = db.catalog.get(plan.on_id)
    if on.kind not in ("table", "view", "materialized_view", "source"):
        raise E.error_for(E.WRONG_OBJECT_TYPE, f'"{on.name}" is not a table, view or materialized view')
    index = CatalogItem(db.allocate_user(), name, "index", (), create_sql=plan.create_sql, on_id=plan.on_id,
                        key=tuple(plan.key), key_sql=tuple(plan.key_sql), depends_on=frozenset({plan.on_id}),
                        cluster=cluster, retain_history=plan.retain_history)
    _retain(db, index.id, plan.retain_history)
    create_index_dataflow(db, index)
    db.catalog.add(index)
    return Result(plan.tag, None)


def _retain(db, gid, retain_history) -> None:
    """``RETAIN HISTORY``: the item's collections compact behind its own window (set before
    its dataflow starts, so its first compaction already keeps it)."""
    if retain_history is not None:
        db.retain_history_ms[gid] = retain_history[1]


def drop(db, session, plan, stmt, params) -> Result:
    session.refuse_in_transaction(plan)
    ids = list(plan.drop_ids)
    if not ids:
        for gid in plan.ids:
            ids.extend(x for x in db.catalog.check_drop(gid, plan.cascade) if x not in ids)
    drop_ids(db, ids)
    return Result(plan.tag, None)


def drop_ids(db, ids) -> None:
    """Drop every item of ``ids`` (in drop order: dependents first) still in the catalog."""
    for gid in ids:
        if gid in db.catalog:
            drop_one(db, gid)


def drop_one(db, gid: GlobalId) -> None:
    item = db.catalog.get(gid)
    if item.kind == "system":
        raise E.error_for("42501", f'system item "{item.name}" cannot be modified')
    if item.kind in ("index", "materialized_view"):
        db.controller.drop_collection(gid)
    if item.kind == "secret":
        db.secrets.pop(gid, None)
    if item.kind == "source":
        from mzlite.sources import drop_source_item
        drop_source_item(db, item)
    if item.kind in ("table", "materialized_view", "source"):
        db.storage.drop(gid)
        db.writer.constraints.pop(gid, None)
    db.catalog.remove(gid)
    db.retain_history_ms.pop(gid, None)


def alter_system(db, session, plan, stmt, params) -> Result:
    name = plan.name.lower()
    before = dict(db.system.values)
    # ALTER SYSTEM RESET ALL: every parameter back to the value the database was opened with
    names = list(db.system.values) if name == "all" and plan.value is None else [name]
    for n in names:
        db.system.set(n, plan.value)
        note_alter_system(db, n, plan.value)  # persisted with the catalog (a data directory)
    changed = {n: db.system[n] for n in names if before[n] != db.system[n]} if name == "all" else \
        {name: db.system[name]}
    key = "enable_compute_interactive_runtime"
    if key in changed and bool(before[key]) != bool(db.system[key]):
        db.restart_replica()
    if changed:
        db.controller.update_configuration(changed)
    return Result(plan.tag, None)
