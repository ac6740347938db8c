"""SHOW CREATE output in Materialize's format.

Owns the text ``SHOW CREATE TABLE | VIEW | MATERIALIZED VIEW | INDEX`` returns, in the
shape Materialize prints its catalog's create_sql: every name quoted and qualified
(``"materialize"."public"."t"``), column types qualified (``"pg_catalog"."int4"``), an
index or materialized view naming its cluster (``IN CLUSTER "quickstart"``), a
materialized view's ``WITH (REFRESH = ON COMMIT)`` (which mzlite's parser takes: the text
replays), a view's column list when its definition gave one.  Invariant: the output is derived from
the catalog item (its columns, constraints, key, cluster), never from what the user typed,
except a view's query, a column default and a CHECK constraint's expression, which keep the
user's text (Materialize prints them
normalized by its own SQL printer; for the common ``SELECT 1`` and literal defaults the
two agree).  Deliberately not here: listing objects (``mzlite.show``).
"""
from __future__ import annotations

import re

from planner.catalog import DATABASE

#: mzlite's type names -> Materialize's catalog names (``pg_catalog``'s)
_TYPE_NAMES = {"bpchar": "bpchar", "text": "text", "int2": "int2", "int4": "int4", "int8": "int8",
               "float4": "float4", "float8": "float8", "numeric": "numeric", "bool": "bool", "date": "date",
               "time": "time", "timestamp": "timestamp", "timestamptz": "timestamptz", "interval": "interval",
               "jsonb": "jsonb", "bytea": "bytea", "uuid": "uuid", "mz_timestamp": "mz_timestamp"}


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def qualified(name: str) -> str:
    schema, bare = name.rsplit(".", 1) if "." in name else ("public", name)
    return f"{quote(DATABASE)}.{quote(schema)}.{quote(bare)}"


def type_sql(col) -> str:
    base, mod = col.type, col.typmod
    if mod is not None and mod[0] == "varchar":
        return '"pg_catalog"."varchar"' + (f"({mod[1]})" if mod[1] is not None else "")
    if mod is not None and mod[0] == "bpchar":
        return f'"pg_catalog"."bpchar"({mod[1]})'
    if mod is not None and mod[0] == "numeric":
        return f'"pg_catalog"."numeric"({mod[1]}, {mod[2]})'
    if base.endswith("[]"):
        return type_sql(type(col)(col.name, base[:-2])) + "[]"
    name = _TYPE_NAMES.get(base)
    if name is None:  # lists, maps and records: Materialize's own spelling
        return base
    return f'"pg_catalog".{quote(name)}'


def _body(create_sql: str) -> str:
    """The query of a CREATE [MATERIALIZED] VIEW as the user wrote it (after the top-level AS)."""
    m = re.search(r"\bAS\b\s*(.*)$", create_sql, re.I | re.S)
    return (m.group(1) if m else create_sql).strip().rstrip(";").strip()


def _columns(create_sql: str) -> str:
    """A view's column list as the user gave it (`` ("a", "b")``), or nothing."""
    from sql.parse import parse_one
    try:
        node = parse_one(create_sql).node
    except Exception:  # noqa: BLE001 - another dialect's text: no column list
        return ""
    names = getattr(node, "aliases", None) or getattr(getattr(node, "into", None), "colNames", None)
    return f" ({', '.join(quote(n.sval) for n in names)})" if names else ""


def _constraints(item) -> list[str]:
    """The table's PRIMARY KEY, UNIQUE and CHECK constraints as table constraints, named as the
    catalog names them (so a replay enforces the same ones under the same names)."""
    names = item.column_names()
    out = [f"CONSTRAINT {quote(k.name)} {'PRIMARY KEY' if k.primary else 'UNIQUE'} "
           f"({', '.join(quote(names[i]) for i in k.columns)})" for k in item.unique_keys]
    if item.checks:
        texts = _check_texts(item.create_sql)
        if len(texts) != len(item.checks):  # not PostgreSQL's text (another dialect): name them at least
            texts = [None] * len(item.checks)
        for c, text in zip(item.checks, texts):
            out.append(f"CONSTRAINT {quote(c.name)} CHECK ({text})" if text is not None else
                       f"/* CHECK constraint {quote(c.name)}: its text is not kept */")
    return out


def _check_texts(create_sql: str) -> list:
    """The CHECK expressions of a CREATE TABLE text, in declaration order (pglast's printer)."""
    from pglast import enums
    from pglast.stream import RawStream

    from sql.parse import parse_statements
    try:  # mzlite's parser: Materialize's types (``int list``) included, which pglast alone refuses
        stmt = parse_statements(create_sql)[0].node
    except Exception:  # noqa: BLE001 - another dialect's text: no texts
        return []
    out = []
    for elt in stmt.tableElts or ():
        constraints = elt.constraints if type(elt).__name__ == "ColumnDef" else [elt]
        for cn in constraints or ():
            if getattr(cn, "contype", None) == enums.ConstrType.CONSTR_CHECK:
                out.append(RawStream()(cn.raw_expr))
    return out


def _retain(item) -> str:
    return f"RETAIN HISTORY = FOR {_literal(item.retain_history[0])}"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def show_create_sql(db, item) -> str:
    if item.kind == "table":
        from mzlite.introspection import column_defaults
        defaults = column_defaults(item)
        cols = []
        for c in item.columns:
            s = f"{quote(c.name)} {type_sql(c)}"
            if not c.nullable:
                s += " NOT NULL"
            if c.name in defaults:
                s += f" DEFAULT {defaults[c.name]}"
            cols.append(s)
        return f"CREATE TABLE {qualified(item.name)} ({', '.join(cols + _constraints(item))})" + \
            (f" WITH ({_retain(item)})" if item.retain_history else "")
    if item.kind == "view":
        return f"CREATE VIEW {qualified(item.name)}{_columns(item.create_sql)} AS {_body(item.create_sql)}"
    if item.kind == "materialized_view":
        return (f"CREATE MATERIALIZED VIEW {qualified(item.name)}{_columns(item.create_sql)} "
                f"IN CLUSTER {quote(item.cluster or 'quickstart')} "
                f"WITH (REFRESH = ON COMMIT{', ' + _retain(item) if item.retain_history else ''}) "
                f"AS {_body(item.create_sql)}")
    if item.kind == "index":
        on = db.catalog.get(item.on_id)
        bare = item.name.rsplit(".", 1)[-1]
        keys = [quote(k) if re.fullmatch(r"[a-z_][a-z0-9_$]*", k) else k for k in item.key_sql]
        return (f"CREATE INDEX {quote(bare)} IN CLUSTER {quote(item.cluster or 'quickstart')} ON {qualified(on.name)} "
                f"({', '.join(keys)})" + (f" WITH ({_retain(item)})" if item.retain_history else ""))
    if item.kind == "source" and item.source is not None and item.source.parent is not None:
        parent = db.catalog.get(item.source.parent)
        cols = ", ".join(f"{quote(c.name)} {type_sql(c)}" + ("" if c.nullable else " NOT NULL") for c in item.columns)
        if item.source.type == "progress":
            return f"CREATE SUBSOURCE {qualified(item.name)} ({cols}) WITH (PROGRESS = true)"
        if item.source.generator == "postgres":  # output: the upstream schema.table
            ref = ".".join(quote(p) for p in item.source.output.split(".", 1))
        else:
            ref = f"{quote('mz_load_generators')}.{quote(item.source.generator)}.{quote(item.source.output)}"
        return f"CREATE SUBSOURCE {qualified(item.name)} ({cols}) OF SOURCE {qualified(parent.name)} WITH " \
               f"(EXTERNAL REFERENCE = {ref})"
    return item.create_sql
