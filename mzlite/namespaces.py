"""Schemas and clusters: the sequencer's handlers of ``CreateSchemaPlan``,
``DropSchemaPlan``, ``CreateClusterPlan``, ``DropClusterPlan``, ``ClusterReplicasPlan`` and
``AlterClusterPlan``; and ``RenamePlan`` (ALTER ... RENAME TO), the other name change.

Owns the catalog's ``schemas`` and ``clusters`` tables (``planner.catalog``) and their
changes.  A cluster is a named scheduling domain over the one replica: its indexes and
materialized views run where every dataflow runs, so creating or dropping a replica
changes what ``SHOW CLUSTER REPLICAS`` lists and nothing else.  Invariants: an item is
dropped through ``mzlite.ddl`` (dataflow, storage, catalog, dependents first) before the
schema or cluster holding it goes; the session's ``cluster`` may name a cluster that does
not exist (Materialize accepts ``SET cluster``), and then every statement that needs a
cluster fails with ``unknown cluster`` (``require_cluster``).
Deliberately not here: parsing and the checks made at planning
(``planner.bind_namespaces``).
"""
from __future__ import annotations

import dataclasses
import re

from mzlite.cursor import Result
from mzlite.ddl import drop_ids
from planner.catalog import Cluster
from sql import errors as E


def create_schema(db, session, plan, stmt, params) -> Result:
    session.refuse_in_transaction(plan)
    db.catalog.schemas.setdefault(plan.name, "")
    return Result(plan.tag, None)


def _drop_named(db, session, plan, table: dict, names=None) -> Result:
    """Drop what ``plan`` drops (dependents first), then its names (``names`` or
    ``plan.names``) from ``table``."""
    session.refuse_in_transaction(plan)
    drop_ids(db, plan.drop_ids)
    for name in plan.names if names is None else names:
        table.pop(name, None)
    return Result(plan.tag, None)


def drop_schema(db, session, plan, stmt, params) -> Result:
    return _drop_named(db, session, plan, db.catalog.schemas)


def create_named_type(db, session, plan, stmt, params) -> Result:
    """``CREATE TYPE ... AS LIST|MAP``: a name for a structural type, in memory only (a
    durable database refuses it: named types are not persisted, and a table's stored
    ``create_sql`` naming one could not be replayed)."""
    session.refuse_in_transaction(plan)
    if db.path is not None:
        raise E.NotSupportedError("CREATE TYPE is not supported in a durable database (named types are not persisted)")
    db.catalog.types[plan.key] = plan.type_
    return Result(plan.tag, None)


def drop_named_type(db, session, plan, stmt, params) -> Result:
    """DROP TYPE: the items naming the type first (CASCADE), then the type's name."""
    return _drop_named(db, session, plan, db.catalog.types, plan.keys)


def create_cluster(db, session, plan, stmt, params) -> Result:
    session.refuse_in_transaction(plan)
    db.catalog.clusters[plan.name] = Cluster(plan.name, plan.replicas, plan.options)
    return Result(plan.tag, None)


def drop_cluster(db, session, plan, stmt, params) -> Result:
    return _drop_named(db, session, plan, db.catalog.clusters)


def cluster_replicas(db, session, plan, stmt, params) -> Result:
    session.refuse_in_transaction(plan)
    clusters = db.catalog.clusters
    for cname, rname, size in plan.replicas:
        c = clusters[cname]
        reps = tuple(r for r in c.replicas if r[0] != rname)
        clusters[cname] = dataclasses.replace(c, replicas=reps + (((rname, size),) if plan.add else ()))
    return Result(plan.tag, None)


def alter_cluster(db, session, plan, stmt, params) -> Result:
    session.refuse_in_transaction(plan)
    clusters = db.catalog.clusters
    c = clusters.get(plan.name)
    if c is None:  # ALTER CLUSTER IF EXISTS of a cluster that does not exist
        return Result(plan.tag, None)
    if plan.rename_to is not None:
        del clusters[plan.name]
        clusters[plan.rename_to] = dataclasses.replace(c, name=plan.rename_to)
        db.catalog.rename_cluster(plan.name, plan.rename_to)
        return Result(plan.tag, None)
    clusters[plan.name] = dataclasses.replace(c, options=plan.options,
                                              replicas=c.replicas if plan.replicas is None else plan.replicas)
    return Result(plan.tag, None)


def rename(db, session, plan, stmt, params) -> Result:
    """Rename a catalog item.  Its ``create_sql`` names it anew (the first occurrence of the
    old name after the object keyword); the create_sql of dependents still shows the old
    name (they are bound by id, so they go on working)."""
    session.refuse_in_transaction(plan)
    if plan.id is None:
        return Result(plan.tag, None)
    item = db.catalog.get(plan.id)
    if db.storage.store is not None:  # a data directory replays each dependent's text, which names the old name
        named_by = [d for d in db.catalog.direct_dependents(plan.id) if d.create_sql]
        if named_by:
            d = named_by[0]
            raise E.error_for(E.FEATURE_NOT_SUPPORTED, f"renaming {item.name} in a data directory is not supported "
                              f"while {d.kind_word()} {d.name} depends on it (its definition names "
                              f"{item.name}, and a data directory replays definitions as written)")
    old_bare, new_bare = plan.old.rsplit(".", 1)[-1], plan.new.rsplit(".", 1)[-1]
    sql = re.sub(r'(?i)((?:TABLE|VIEW|INDEX|SOURCE|CONNECTION|SECRET)\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:[\w"]+\.)*)"?' + re.escape(old_bare) + r'"?',
                 lambda m: m.group(1) + new_bare, item.create_sql, count=1)
    db.catalog.replace(dataclasses.replace(item, name=plan.new, create_sql=sql))
    return Result(plan.tag, None)


def alter_set_cluster(db, session, plan, stmt, params) -> Result:
    """The materialized view already is in the cluster named (planning refused a move)."""
    session.refuse_in_transaction(plan)
    return Result(plan.tag, None)


def alter_retain_history(db, session, plan, stmt, params) -> Result:
    """Set or reset an item's RETAIN HISTORY: its collections compact behind that window
    from now on (``Database.retain_history_ms``, read by the ticker's storage compaction and
    the compute controller); history already compacted does not come back."""
    session.refuse_in_transaction(plan)
    if plan.id is None:
        return Result(plan.tag, None)
    item = db.catalog.get(plan.id)
    db.catalog.replace(dataclasses.replace(item, retain_history=plan.retain))
    if plan.retain is None:
        db.retain_history_ms.pop(plan.id, None)
    else:
        db.retain_history_ms[plan.id] = plan.retain[1]
    return Result(plan.tag, None)


def comment(db, session, plan, stmt, params) -> Result:
    """Set or remove a comment (``Catalog.comments``; a schema's lives in ``schemas``)."""
    session.refuse_in_transaction(plan)
    if plan.target[0] == "schema":
        db.catalog.schemas[plan.target[1]] = plan.text or ""
    elif plan.text is None:
        db.catalog.comments.pop(plan.target, None)
    else:
        db.catalog.comments[plan.target] = plan.text
    return Result(plan.tag, None)
