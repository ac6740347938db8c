"""Materialize's ALTER forms -> plans: ``ALTER <object> RENAME TO`` for its own objects
(sources, connections, secrets), ``ALTER ... SET CLUSTER`` and ``ALTER ... SET | RESET
(RETAIN HISTORY ...)``.

Owns the checks Materialize makes before such a statement runs, in its order and with its
error texts: a feature flag that is off refuses the form before any name is resolved
(``enable_alter_set_cluster``), then the object kind (``ALTER VIEW SET CLUSTER is not
supported``), the item (``unknown catalog item``, ``v is a view not a materialized view``),
the cluster (``unknown cluster``).  Invariant: planning never mutates the catalog; what mzlite
cannot honour is refused here, never planned as a no-op (moving a materialized view to
another cluster is refused, as Materialize refuses it; naming the cluster it is in changes
nothing and is accepted).  Deliberately not here: the grammar (``sql.mzalter``), applying
the plans (``mzlite.namespaces``), PostgreSQL's ALTER ... RENAME (``planner.bind_namespaces``).
"""
from __future__ import annotations

from planner import plans as P
from planner.catalog import DEFAULT_CLUSTER, SYSTEM_SCHEMAS, system_schema
from repr.dates import parse_interval
from repr.errors import EvalError
from sql import errors

_WORDS = {"materialized_view": "MATERIALIZED VIEW", "view": "VIEW", "table": "TABLE", "index": "INDEX",
          "source": "SOURCE", "sink": "SINK", "connection": "CONNECTION", "secret": "SECRET"}


def _article(w: str) -> str:
    return f"a{'n' if w[0] in 'aeiou' else ''} {w}"


def resolve_for_alter(b, kind: str, parts: tuple, if_exists: bool, location: int):
    """The item ``ALTER <kind> parts`` names, checked as Materialize checks it: a system
    schema cannot be modified, the item must exist (None under IF EXISTS) and be a ``kind``."""
    if len(parts) >= 2 and parts[-2] in SYSTEM_SCHEMAS:
        raise b.error("42501", f"system schema '{parts[-2]}' cannot be modified", location)
    item = b.catalog.try_resolve(parts)
    if item is None:
        if if_exists:
            return None
        b.catalog.resolve(parts, position=b.pos(location))
    if item.kind == "system":
        raise b.error("42501", f"system schema '{system_schema(item)}' cannot be modified", location)
    if item.kind != kind:
        w = kind.replace("_", " ")
        raise b.error(errors.WRONG_OBJECT_TYPE, f"{item.name} is {_article(item.kind_word())} not {_article(w)}",
                      location)
    return item


def rename_plan(b, item, new_name: str, location: int):
    if item is None:
        return P.RenamePlan(None, "", "")
    new = item.name.rsplit(".", 1)[0] + "." + new_name if "." in item.name else new_name
    if b.catalog.try_resolve(new) is not None:
        raise b.error(errors.DUPLICATE_TABLE, f"catalog item '{new_name}' already exists", location)
    return P.RenamePlan(item.id, item.name, new)


def alter_rename(b, stmt, node):
    """``ALTER SOURCE | CONNECTION | SECRET [IF EXISTS] x RENAME TO y``."""
    if node.kind == "sink":
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "ALTER SINK is not supported: mzlite has no sinks", node.location)
    if node.kind == "source":
        item = b.catalog.try_resolve(node.name)
        if item is not None and item.source is not None and item.source.parent is not None:
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{item.name} is a subsource: ALTER SOURCE ... RENAME "
                          "renames a source, whose subsources keep their names", node.location)
    item = resolve_for_alter(b, node.kind, node.name, node.if_exists, node.location)
    return rename_plan(b, item, node.new_name, node.location)


def alter_set_cluster(b, stmt, node):
    """``ALTER MATERIALIZED VIEW mv SET CLUSTER c``: accepted when ``c`` is the cluster ``mv``
    is in; moving it is refused (Materialize refuses it too)."""
    if not b.catalog.system_vars.get("enable_alter_set_cluster", False):
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "ALTER ... SET CLUSTER syntax is not supported", 0)
    if node.kind == "view":
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "ALTER VIEW SET CLUSTER is not supported, for more information "
                      "consult the documentation at https://materialize.com/docs/sql/alter-set-cluster/", 0)
    if node.kind == "sink":
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "ALTER SINK SET CLUSTER not yet supported, see "
                      "https://github.com/MaterializeInc/materialize/issues/20841 for more details", 0)
    if node.kind != "materialized_view":
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"ALTER {_WORDS[node.kind]} SET CLUSTER is not supported", 0)
    item = resolve_for_alter(b, node.kind, node.name, node.if_exists, node.location)
    if node.cluster not in b.catalog.clusters:
        raise b.error(errors.UNDEFINED_OBJECT, f"unknown cluster '{node.cluster}'", 0)
    if item is not None and node.cluster != (item.cluster or DEFAULT_CLUSTER):
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "ALTER SET CLUSTER are not supported", 0)
    return P.AlterSetClusterPlan(None if item is None else item.id, node.cluster)


#: the kinds whose history ``RETAIN HISTORY`` sets (a source's: Materialize refuses it for
#: load generators, and mzlite's sources are load generators, PostgreSQL and webhooks)
_RETAINING = ("table", "materialized_view", "index")


def alter_options(b, stmt, node):
    """``ALTER TABLE | MATERIALIZED VIEW | INDEX x SET (RETAIN HISTORY [=] FOR 'd')`` and
    ``RESET (RETAIN HISTORY)``."""
    if node.kind == "source":
        item = resolve_for_alter(b, "source", node.name, node.if_exists, node.location)
        if item is None:
            return P.AlterRetainHistoryPlan(None, None)
        if item.source is not None and item.source.type == "load-generator":  # Materialize's words
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{item.name} is a load-generator source, which does not "
                          "support ALTER SOURCE.", node.location)
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "ALTER SOURCE ... SET/RESET (...) is not supported: a source's "
                      "history follows compaction_window_ms", node.location)
    if node.kind not in _RETAINING:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"ALTER {_WORDS[node.kind]} ... SET/RESET (...) is not supported",
                      node.location)
    names = [n for n, _ in node.options] + list(node.reset)
    other = [n for n in names if n != "RETAIN HISTORY"]
    if other:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"ALTER {_WORDS[node.kind]} ... {'RESET' if node.reset else 'SET'} "
                      f"({other[0]}) is not supported (mzlite's option here is RETAIN HISTORY)", node.location)
    item = resolve_for_alter(b, node.kind, node.name, node.if_exists, node.location)
    if node.reset:
        return P.AlterRetainHistoryPlan(None if item is None else item.id, None)
    value = node.options[-1][1]
    return P.AlterRetainHistoryPlan(None if item is None else item.id, retain_history(b, value, node.location))


def retain_history(b, value, location: int):
    """``RETAIN HISTORY FOR 'd'``'s value: ``(text, milliseconds)``."""
    if not isinstance(value, str):
        raise b.error(errors.INVALID_PARAMETER_VALUE, "RETAIN HISTORY takes FOR '<interval>' (e.g. FOR '1h')",
                      location)
    ms = retain_history_ms(value)
    if ms is None:
        raise b.error(errors.INVALID_PARAMETER_VALUE, f"invalid RETAIN HISTORY interval: '{value}'", location)
    return (value, ms)


def retain_history_ms(text: str):
    """The milliseconds of ``RETAIN HISTORY FOR 'text'``; None when it is no interval or negative."""
    try:
        ms = parse_interval(text)._span // 1000
    except EvalError:
        return None
    return ms if ms >= 0 else None
