"""Schemas and clusters -> plans: CREATE/DROP SCHEMA, CREATE/DROP/ALTER CLUSTER and
CREATE/DROP CLUSTER REPLICA.

Owns the checks Materialize makes before such a statement runs, with its error texts:
a schema or cluster that exists is not created again, one that does not exist is not
dropped (unless IF EXISTS), a non-empty one is dropped only with CASCADE (and then with
everything in it, dependents first).  Invariant: planning never mutates the catalog; the
plans carry every id to drop.  Deliberately not here: applying the plans
(``mzlite.namespaces``), the grammar (``sql.mzclusters``; schemas are pglast's).
"""
from __future__ import annotations

from planner import plans as P
from planner.bind_expr import enum_name
from planner.bind_alter import rename_plan, resolve_for_alter
from planner.catalog import SYSTEM_SCHEMAS
from sql import errors
from sql.statement_names import alter_subcommand, statement_name


def _drop_order(catalog, roots) -> tuple:
    out: list = []
    for gid in roots:
        for d in catalog.check_drop(gid, True):
            if d not in out:
                out.append(d)
    return tuple(out)


def create_schema(b, stmt, node):
    name = node.schemaname
    if node.authrole is not None or node.schemaElts:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "CREATE SCHEMA with AUTHORIZATION or elements is not supported", 0)
    if name in b.catalog.schemas or name in SYSTEM_SCHEMAS:
        if not node.if_not_exists:
            raise b.error("42P06", f"schema '{name}' already exists", 0)
    return P.CreateSchemaPlan(name, bool(node.if_not_exists))


def drop_schema(b, stmt, node):
    cascade = enum_name(node.behavior) == "DROP_CASCADE"
    names, roots = [], []
    for obj in node.objects:
        name = obj.sval if hasattr(obj, "sval") else ".".join(s.sval for s in obj)
        name = name.split(".")[-1]
        if name in SYSTEM_SCHEMAS:
            raise b.error("42501", f"system schema '{name}' cannot be modified", 0)
        if name not in b.catalog.schemas:
            if node.missing_ok:
                continue
            raise b.error("3F000", f"unknown schema '{name}'", 0)
        if name == "public":
            raise b.error(errors.FEATURE_NOT_SUPPORTED, "DROP SCHEMA public is not supported: mzlite's "
                          "unqualified names always resolve in public", 0)
        items = [i.id for i in b.catalog.items() if i.id.is_user() and b.catalog.in_schema(i, name)]
        if items and not cascade:
            raise b.error(errors.DEPENDENT_OBJECTS_STILL_EXIST, f"schema 'materialize.{name}' cannot be dropped "
                          "without CASCADE while it contains objects", 0)
        names.append(name)
        roots.extend(items)
    return P.DropSchemaPlan(tuple(names), _drop_order(b.catalog, roots))


def _size(options, default="1") -> str:
    v = dict(options).get("size", default)
    return str(v)


def _managed_replicas(options) -> tuple:
    opts = dict(options)
    factor = opts.get("replication factor", 1)
    if not isinstance(factor, int) or isinstance(factor, bool) or factor < 0:
        raise errors.error_for(errors.INVALID_PARAMETER_VALUE, f"invalid REPLICATION FACTOR: {factor}")
    size = _size(options)
    return tuple((f"r{k + 1}", size) for k in range(factor))


def create_cluster(b, stmt, node):
    if node.name in b.catalog.clusters:
        raise b.error(errors.DUPLICATE_OBJECT, f"cluster '{node.name}' already exists", 0)
    if node.replicas is not None:
        replicas = tuple((r, _size(opts)) for r, opts in node.replicas)
        if len({r for r, _ in replicas}) != len(replicas):
            raise b.error(errors.DUPLICATE_OBJECT, "cluster replica names must be unique", 0)
    else:
        replicas = _managed_replicas(node.options)
    return P.CreateClusterPlan(node.name, replicas, node.options)


def _cluster_items(catalog, name):
    return [i.id for i in catalog.items() if i.cluster == name]


def drop_cluster(b, stmt, node):
    names, roots = [], []
    for name in node.names:
        if name not in b.catalog.clusters:
            if node.if_exists:
                continue
            raise b.error(errors.UNDEFINED_OBJECT, f"unknown cluster '{name}'", 0)
        items = _cluster_items(b.catalog, name)
        if items and not node.cascade:
            raise b.error(errors.DEPENDENT_OBJECTS_STILL_EXIST,
                          f'cannot drop cluster "{name}" because other objects depend on it', 0)
        names.append(name)
        roots.extend(items)
    return P.DropClusterPlan(tuple(names), _drop_order(b.catalog, roots))


def create_cluster_replica(b, stmt, node):
    cluster = b.catalog.cluster(node.cluster, stmt.position(0))
    if any(r == node.name for r, _ in cluster.replicas):
        raise b.error(errors.DUPLICATE_OBJECT, f"cluster replica '{node.cluster}.{node.name}' already exists", 0)
    return P.ClusterReplicasPlan(((node.cluster, node.name, _size(node.options)),), True)


def drop_cluster_replica(b, stmt, node):
    out = []
    for cname, rname in node.replicas:
        cluster = b.catalog.clusters.get(cname)
        if cluster is None:
            if node.if_exists:
                continue
            raise b.error(errors.UNDEFINED_OBJECT, f"unknown cluster '{cname}'", 0)
        if not any(r == rname for r, _ in cluster.replicas):
            if node.if_exists:
                continue
            raise b.error(errors.UNDEFINED_OBJECT, f"unknown cluster replica '{cname}.{rname}'", 0)
        out.append((cname, rname, ""))
    return P.ClusterReplicasPlan(tuple(out), False)


def alter_cluster(b, stmt, node):
    if node.name not in b.catalog.clusters:
        if node.if_exists:
            return P.AlterClusterPlan(node.name)
        raise b.error(errors.UNDEFINED_OBJECT, f"unknown cluster '{node.name}'", 0)
    if node.rename_to is not None:
        if node.rename_to in b.catalog.clusters:
            raise b.error(errors.DUPLICATE_OBJECT, f"cluster '{node.rename_to}' already exists", 0)
        return P.AlterClusterPlan(node.name, rename_to=node.rename_to)
    cluster = b.catalog.clusters[node.name]
    opts = dict(cluster.options)
    opts.update(dict(node.options))
    for k in node.reset:
        opts.pop(k, None)
    replicas = None
    if any(k in ("size", "replication factor") for k, _ in node.options) or node.reset:
        replicas = _managed_replicas(tuple(opts.items()))
    return P.AlterClusterPlan(node.name, replicas=replicas, options=tuple(opts.items()))


_RENAME_KINDS = {"OBJECT_TABLE": "table", "OBJECT_VIEW": "view", "OBJECT_MATVIEW": "materialized_view",
                 "OBJECT_INDEX": "index"}


def rename(b, stmt, node):
    """``ALTER TABLE | VIEW | MATERIALIZED VIEW | INDEX [IF EXISTS] x RENAME TO y``.  The new
    name stays in the item's schema; dependents are bound by id and follow the rename."""
    kind = _RENAME_KINDS.get(enum_name(node.renameType))
    if kind is None:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{statement_name(stmt.text)} ... {alter_subcommand(stmt.text)} is not supported", 0)
    rv = node.relation
    parts = tuple(x for x in (rv.catalogname, rv.schemaname, rv.relname) if x)
    item = resolve_for_alter(b, kind, parts, node.missing_ok, rv.location)
    return rename_plan(b, item, node.newname, rv.location)


_COMMENT_KINDS = {"OBJECT_TABLE": "table", "OBJECT_VIEW": "view", "OBJECT_MATVIEW": "materialized_view",
                  "OBJECT_INDEX": "index", "OBJECT_COLUMN": "column", "OBJECT_SCHEMA": "schema"}


def comment(b, stmt, node):
    """``COMMENT ON TABLE | VIEW | MATERIALIZED VIEW | INDEX | COLUMN | SCHEMA x IS 'text' | NULL``."""
    kind = _COMMENT_KINDS.get(enum_name(node.objtype))
    if kind is None:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{statement_name(stmt.text)} is not supported", 0)
    if kind == "schema":
        name = node.object.sval
        if name not in b.catalog.schemas:
            raise b.error("3F000", f"unknown schema '{name}'", 0)
        return P.CommentPlan(("schema", name), node.comment)
    parts = tuple(s.sval for s in node.object)
    column = None
    if kind == "column":
        if len(parts) < 2:
            raise b.error(errors.SYNTAX_ERROR, "column name must be qualified", 0)
        parts, column = parts[:-1], parts[-1]
    item = b.catalog.resolve(parts, position=stmt.position(0))
    if kind == "column":
        if column not in item.column_names():
            raise b.error(errors.UNDEFINED_COLUMN, f'column "{column}" does not exist', 0)
        return P.CommentPlan((item.id, item.column_names().index(column)), node.comment)
    if item.kind != kind:
        w = kind.replace("_", " ")
        raise b.error(errors.WRONG_OBJECT_TYPE, f"{item.name} is a {item.kind_word()} not a{'n' if w[0] in 'aeiou' else ''} {w}", 0)
    return P.CommentPlan((item.id, None), node.comment)
