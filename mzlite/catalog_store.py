"""The catalog's persistence: opening a data directory, replaying it, keeping it current.

Owns the adapter's side of a durable database, shaped after Materialize's: every user
catalog item is persisted with its id, kind, name and ``create_sql`` (the schemas and clusters
items name beside them); on open the items are
replayed in id order through the ordinary planner and sequencer with their persisted ids
(and an index's persisted name), so each comes back exactly as it was defined, its table's
or output's persisted collection claimed by its CREATE (``storage.tables``); ALTER SYSTEM
values, the next user id and the oracle's high-water mark are persisted beside them.

Invariants: the stored catalog changes only in ``sync`` (one store transaction after a
catalog-changing plan), which also creates and deletes shards, so a DDL statement is
durable all or nothing: a crash before ``sync`` commits forgets the statement (its
collections are orphans, removed at the next open), a crash after keeps it.  Replay
changes nothing in the store except the deletion of orphans.
Deliberately not here: the store (``storage.durable``), table data (``storage.tables``),
planning and applying DDL (``planner``, ``mzlite.ddl``).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from mzlite.connections import secret_key
from planner import plan_statement, plans as P
from repr.ids import GlobalId
from sql import errors as E
from sql.parse import parse_statements
from storage.durable import DurableError, DurableStore

#: meta keys
NEXT_USER_ID = "next_user_id"
ALTER_SYSTEM = "alter_system"
ORACLE_HWM = "oracle_hwm"
#: the user's schemas (name -> comment) and clusters (name, replicas, options): an item names
#: them, so they come back before the items do
SCHEMAS = "schemas"
CLUSTERS = "clusters"
#: item number -> its RETAIN HISTORY text (``ALTER ... SET (RETAIN HISTORY FOR 'd')``)
RETAIN_HISTORY = "retain_history"
_RETAINING = ("table", "materialized_view", "index")


def open_store(path: str, durability: str):
    """``(store, state)`` of the data directory ``path``; an ``mzlite.Error`` when it cannot open."""
    try:
        store = DurableStore(path, durability)
    except DurableError as e:
        raise E.error_for(e.sqlstate, e.message) from None
    try:
        return store, store.load()
    except DurableError as e:
        store.close()
        raise E.error_for(e.sqlstate, e.message) from None


def system_overrides(state) -> dict:
    """The persisted ALTER SYSTEM values (``name -> text``)."""
    return dict(state.meta.get(ALTER_SYSTEM) or {})


def oracle_floor(state) -> int:
    return int(state.meta.get(ORACLE_HWM, 0))


class ReplayError(Exception):
    pass


def replay(db, state) -> None:
    """Recreate every persisted item in id order with its id (see the module docstring)."""
    from planner.catalog import Cluster
    if SCHEMAS in state.meta:  # a directory written before schemas were kept has the defaults
        db.catalog.schemas.clear()
        db.catalog.schemas.update(state.meta[SCHEMAS])
    if CLUSTERS in state.meta:
        db.catalog.clusters.clear()
        for name, replicas, options in state.meta[CLUSTERS]:
            db.catalog.clusters[name] = Cluster(name, tuple(tuple(r) for r in replicas),
                                                tuple(tuple(o) for o in options))
    session = db.internal_session()
    for n, kind, name, create_sql in state.items:
        gid = GlobalId("u", n)
        if kind == "source" and not create_sql:  # a subsource or progress collection: its source's CREATE made it
            if gid not in db.catalog:
                raise E.error_for("XX001", f"data directory {db.path!r}: {name!r} ({gid}) was not restored with its "
                                           f"source")
            made = db.catalog.get(gid)
            if made.name != name:  # its source was renamed since (ALTER SOURCE ... RENAME keeps subsources' names)
                db.catalog.replace(dataclasses.replace(made, name=name))
            continue
        try:
            stmts = parse_statements(create_sql)
            if len(stmts) != 1:
                raise ReplayError("not one statement")
            stmt = stmts[0]
            plan = plan_statement(stmt, db.catalog, ())
            if isinstance(plan, P.CreateIndexPlan):
                plan = dataclasses.replace(plan, name=name)
            db.forced_user_id = gid
            from mzlite import sequencer
            sequencer.sequence(db, session, plan, stmt, [()])
        except (E.Error, ReplayError) as e:
            raise E.error_for("XX001", f"data directory {db.path!r}: cannot restore {kind} {name!r} ({gid}): "
                                       f"{e}") from None
        finally:
            db.forced_user_id = None
        if gid not in db.catalog:
            raise E.error_for("XX001", f"data directory {db.path!r}: {kind} {name!r} ({gid}) was not restored")
    top = max((n for n, *_ in state.items), default=0)
    db.resume_user_ids(max(top + 1, int(state.meta.get(NEXT_USER_ID, 1))))
    db.storage.restored.clear()  # shards no item claimed: orphans, deleted by the next sync
    db.altered_system = system_overrides(state)
    from planner.bind_alter import retain_history_ms
    for n, text in (state.meta.get(RETAIN_HISTORY) or {}).items():  # ALTER's values outrank CREATE's text
        gid = GlobalId("u", int(n))
        ms = None if text is None else retain_history_ms(text)
        if gid in db.catalog:
            db.catalog.replace(dataclasses.replace(db.catalog.get(gid), retain_history=None if ms is None else (text, ms)))
            if ms is None:
                db.retain_history_ms.pop(gid, None)
            else:
                db.retain_history_ms[gid] = ms


def sync(db) -> None:
    """Persist the catalog as it is now (after a catalog-changing plan); raises what the store
    raises (the statement then fails: 53100 on a full disk)."""
    store = db.storage.store
    if store is None:
        return
    items, shards = [], []
    for item in db.catalog.items():
        if not item.id.is_user():
            continue
        items.append((item.id.n, item.kind, item.name, item.create_sql))
        coll = db.storage.collections.get(item.id) if item.kind in ("table", "materialized_view", "source") else None
        if coll is not None:
            shards.append((str(item.id), "output" if item.kind == "materialized_view" else "table", coll.arity,
                           coll.since if coll.since is not None else 0, coll.upper))
    meta = {NEXT_USER_ID: db.peek_next_user_id(), ALTER_SYSTEM: dict(db.altered_system),
            SCHEMAS: dict(db.catalog.schemas),
            CLUSTERS: [[c.name, [list(r) for r in c.replicas], [list(o) for o in c.options]]
                       for c in db.catalog.clusters.values()],
            RETAIN_HISTORY: {str(i.id.n): None if i.retain_history is None else i.retain_history[0]
                             for i in db.catalog.items() if i.id.is_user() and i.kind in _RETAINING}}
    for gid, value in db.secrets.items():  # secret values: beside the catalog, never in its text
        meta[secret_key(gid)] = value
    store.sync_catalog(items, shards, meta, owned_prefix="secret:")


def persist_after(db) -> None:
    """After a catalog-changing plan succeeded: ``sync``.  If the store refuses (disk full),
    the change already made in memory cannot be acknowledged or kept: the statement fails and
    the database refuses every later statement until it is reopened (``Database.broken``),
    when the store's state, the one before the statement, comes back."""
    if db.storage.store is None or db.replaying:
        return
    try:
        sync(db)
    except DurableError as e:
        db.broken = e.message
        raise E.error_for(e.sqlstate, f"{e.message}; the database must be closed and reopened") from None


def note_alter_system(db, name: str, value: Optional[str]) -> None:
    """Remember an ALTER SYSTEM value (None: RESET) for the next ``sync``."""
    if value is None:
        db.altered_system.pop(name, None)
    else:
        db.altered_system[name] = db.system.show(name)
