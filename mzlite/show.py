"""SHOW, SHOW CREATE and EXPLAIN: results built from the catalog and the planner.

Owns the rows and column names of introspection statements, following Materialize's
output shapes (``SHOW TABLES`` -> name, comment; ``SHOW INDEXES`` -> name, on, cluster,
key, comment; ``SHOW COLUMNS`` -> name, nullable, type, comment).  Invariant: these
statements never change anything.  Deliberately not here: plan rendering itself
(``planner.explain``).
"""
from __future__ import annotations

import re

from mzlite.cursor import Result
from mzlite.reads import literal_timestamp
from planner import explain as X
from planner.lower import build_peek_dataflow
from planner.optimize import optimize
from planner.peek import FastPathPeek, SlowPathPeek, plan_peek
from planner.plans import CreateIndexPlan, CreateViewPlan, SelectPlan
from repr.ids import GlobalId
from sql import errors as E
from sql.statement_names import explained_name
from sql.types import format_type


def _rows(columns, rows) -> Result:
    return Result(f"SELECT {len(rows)}", [(c, "text") for c in columns], rows, len(rows))


def show_rows(db, plan):
    """``(column names, rows)`` of a SHOW plan that reads only the catalog (``SHOW CREATE``,
    the object lists), for ``(SHOW ...)`` as a table; None for the others."""
    from planner.plans import ShowCreatePlan, ShowObjectsPlan
    if isinstance(plan, ShowObjectsPlan):
        r = show_objects(db, None, plan, None, ())
    elif isinstance(plan, ShowCreatePlan):
        r = show_create(db, None, plan, None, ())
    else:
        return None
    return [c for c, _ in r.columns], r.rows


def show_objects(db, session, plan, stmt, params) -> Result:
    cat = db.catalog
    kind = plan.kind
    like = plan.like
    schema = plan.schema or "public"

    def keep(name):
        if plan.on is not None:  # the indexes (or columns) of one object, whatever its schema
            name = name.rsplit(".", 1)[-1]
        elif "." in name:  # an item of a user-created schema: listed under that schema, by its own name
            if not name.startswith(schema + "."):
                return False
            name = name[len(schema) + 1:]
        elif schema != "public":
            return False
        if like is None:
            return True
        pat = "^" + re.escape(like).replace("%", ".*").replace("_", ".") + "$"
        return re.match(pat, name) is not None

    def bare(name):
        return name.rsplit(".", 1)[-1]

    if kind == "tables":
        return _rows(("name", "comment"), [(bare(i.name), cat.comment(i.id)) for i in cat.items("table")
                                           if keep(i.name)])
    if kind == "views":
        return _rows(("name", "comment"), [(bare(i.name), cat.comment(i.id)) for i in cat.items("view")
                                           if keep(i.name)])
    if kind == "materialized_views":
        return _rows(("name", "cluster", "comment"),
                     [(bare(i.name), i.cluster or "quickstart", cat.comment(i.id)) for i in cat.items("materialized_view")
                      if keep(i.name) and (plan.cluster is None or i.cluster == plan.cluster)])
    if kind == "indexes":
        out = []
        for i in cat.items("index"):
            if plan.on is not None and i.on_id != plan.on:
                continue
            if not keep(i.name) or (plan.cluster is not None and i.cluster != plan.cluster):
                continue
            out.append((bare(i.name), bare(cat.get(i.on_id).name), i.cluster or "quickstart",
                        "{" + ",".join(i.key_sql) + "}", cat.comment(i.id)))
        return _rows(("name", "on", "cluster", "key", "comment"), out)
    if kind == "objects":
        # the objects of the current schema (public), as Materialize lists them
        out = [(bare(i.name), i.kind.replace("_", "-"), cat.comment(i.id)) for i in cat.items()
               if i.id.is_user() and keep(i.name)]
        out += [(bare(k), "type", "") for k in sorted(cat.types) if keep(k)]  # named types (CREATE TYPE)
        return _rows(("name", "type", "comment"), out)
    if kind == "columns":  # types with their declared modifiers
        item = cat.get(plan.on)
        out = [(c.name, "true" if c.nullable else "false", format_type(c.type, c.typmod), cat.comment(item.id, k))
               for k, c in enumerate(item.columns) if keep(c.name)]
        res = _rows(("name", "nullable", "type", "comment"), out)
        return res
    if kind == "secrets":
        return _rows(("name", "comment"), [(bare(i.name), cat.comment(i.id)) for i in cat.items("secret")
                                           if keep(i.name)])
    if kind == "connections":
        return _rows(("name", "type", "comment"), [(bare(i.name), i.connection[0], cat.comment(i.id))
                                                   for i in cat.items("connection") if keep(i.name)])
    if kind == "subsources":  # of one source (``on``), or of every source
        return _rows(("name", "type"), [(bare(i.name), i.source.type) for i in cat.items("source")
                                        if i.source is not None and i.source.parent is not None
                                        and (plan.on is None or i.source.parent == plan.on)])
    if kind == "sources":
        from mzlite.sources import source_rows
        return _rows(("name", "type", "cluster", "comment"),
                     [(bare(name), typ, cluster, cat.comment(gid)) for gid, name, typ, cluster in source_rows(db)
                      if keep(name) and (plan.cluster is None or cluster == plan.cluster)])
    # ---- the one database, its schemas, the one cluster
    if kind == "schemas":
        names = sorted(set(cat.schemas) | {"information_schema", "mz_catalog", "mz_internal", "pg_catalog"})
        return _rows(("name", "comment"), [(n, cat.schemas.get(n, "")) for n in names if _like(like, n)])
    if kind == "databases":
        return _rows(("name", "comment"), [(n, "") for n in ("materialize",) if _like(like, n)])
    if kind == "clusters":
        return _rows(("name", "replicas", "comment"),
                     [(c.name, ",".join(f"{r} ({size})" for r, size in c.replicas), "")
                      for c in sorted(cat.clusters.values(), key=lambda c: c.name) if _like(like, c.name)])
    if kind == "cluster_replicas":
        return _rows(("cluster", "replica", "size", "ready", "comment"),
                     [(c.name, r, size, "t", "") for c in sorted(cat.clusters.values(), key=lambda c: c.name)
                      for r, size in sorted(c.replicas) if _like(like, c.name)])
    # ---- end
    raise E.NotSupportedError(f"SHOW {kind} is not supported")


def _like(like, name) -> bool:
    if like is None:
        return True
    pat = "^" + re.escape(like).replace("%", ".*").replace("_", ".") + "$"
    return re.match(pat, name) is not None


def show_create(db, session, plan, stmt, params) -> Result:
    """``SHOW CREATE ...``: (name, create_sql), Materialize's columns and format
    (``mzlite.show_create``)."""
    from mzlite.show_create import qualified, show_create_sql
    item = db.catalog.get(plan.id)
    return _rows(("name", "create_sql"), [(qualified(item.name).replace('"', ""), show_create_sql(db, item))])


def explain(db, session, plan, stmt, params) -> Result:
    inner = plan.plan
    interactive = bool(db.system["enable_compute_interactive_runtime"])
    if plan.item is not None:
        return _explain_item(db, plan)
    if plan.stage == "timestamp":
        return _explain_timestamp(db, session, inner)
    if isinstance(inner, SelectPlan):
        if plan.stage in ("raw", "decorrelated"):
            text = X.explain_expr(inner.expr)
        else:
            expr = optimize(inner.expr)
            peek = plan_peek(expr, inner.finishing, db.lowering.available_indexes(), optimized=True)
            desc = None
            if isinstance(peek, SlowPathPeek):
                t = db.oracle.peek_read_ts()
                desc = build_peek_dataflow(peek.expr, view_id=_placeholder(1), index_id=_placeholder(2), as_of=t,
                                           catalog=db.lowering, optimize_plan=False)
            text = X.explain_peek(peek, interactive_enabled=interactive, desc=desc).text
    elif isinstance(inner, CreateViewPlan):
        expr = optimize(inner.expr) if plan.stage not in ("raw", "decorrelated") else inner.expr
        text = X.explain_expr(expr)
        if inner.materialized:
            text += "runtime: maintenance\n"
    elif isinstance(inner, CreateIndexPlan):
        on = db.catalog.get(inner.on_id)
        text = f"Explained Index: on {on.name} key=[{', '.join(inner.key_sql)}]\nruntime: maintenance\n"
    else:
        raise E.error_for(E.FEATURE_NOT_SUPPORTED, f"EXPLAIN of {explained_name(stmt.text)} is not supported")
    return _rows(("Optimized Plan",), [(text,)])


def _explain_item(db, plan) -> Result:
    """``EXPLAIN MATERIALIZED VIEW | VIEW | INDEX name``: the plan of what the item maintains."""
    item = db.catalog.get(plan.item)
    if item.kind == "index":
        on = db.catalog.get(item.on_id)
        text = f"Explained Index: on {on.name} key=[{', '.join(item.key_sql)}]\nruntime: maintenance\n"
    else:
        text = X.explain_expr(item.expr if plan.stage in ("raw", "decorrelated") else optimize(item.expr))
        if item.kind == "materialized_view":
            text += "runtime: maintenance\n"
    return _rows(("Optimized Plan",), [(text,)])


def _placeholder(n):
    return GlobalId("t", 10 ** 9 + n)


def _explain_timestamp(db, session, inner) -> Result:
    expr = optimize(inner.expr)
    peek = plan_peek(expr, inner.finishing, db.lowering.available_indexes(), optimized=True)
    ids = {peek.index_id} if isinstance(peek, FastPathPeek) else (
        db.reader.input_ids(peek.expr) if hasattr(peek, "expr") else set())
    as_of = literal_timestamp(inner.as_of) if inner.as_of is not None else None
    t = db.reader.choose_timestamp(session, ids, as_of, inner.as_of_at_least)
    lines = [f"                query timestamp: {t:>13}",
             f"          oracle read timestamp: {db.oracle.peek_read_ts():>13}",
             f"isolation level: {session.vars['transaction_isolation']}", "", "source:"]
    for gid in sorted(ids):
        item_name = db.catalog.get(gid).name if gid in db.catalog else str(gid)
        since, upper = db.reader.since_of(gid), db.reader.upper_of(gid)
        lines.append(f"  {item_name} ({gid}): since [{since}] upper [{'' if upper is None else upper}]")
    return _rows(("Timestamp",), [("\n".join(lines) + "\n",)])
