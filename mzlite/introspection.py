"""System relations: the catalog and the replica described as relations SQL can read.

Owns the definitions and contents of ``mz_catalog`` relations (``mz_tables``,
``mz_views``, ``mz_materialized_views``, ``mz_indexes``, ``mz_sources``, ``mz_secrets``,
``mz_connections``, ``mz_columns``) and the
``mz_internal`` relations: ``mz_source_statuses (id, name, type, status, error)`` and
``mz_source_statistics (id, messages_received, updates_committed, snapshot_committed,
offset_known, offset_committed)`` (the lag is ``offset_known - offset_committed``), and the
introspection relations the two-runtime design asks for:
``mz_dataflows (id, name, runtime)``, the live dataflows with the runtime hosting each
(as the Multiplexer routed them),
and ``mz_peek_counts (runtime, kind, count)``, peeks received per runtime and kind
(``fast_path`` or ``dataflow``).  Each is a system table in storage, refreshed (as one
write of the difference) right before a statement that reads it, so a read sees the
state as of its own timestamp.  Invariant: system relations are written only here.
Deliberately not here: ``SHOW`` (``mzlite.show``), which reads the catalog directly.
"""
from __future__ import annotations

from mzlite.pg_catalog import RELATIONS, rows as pg_catalog_rows
from planner.catalog import CatalogItem, ColumnDef, system_schema

_SYSTEM = {
    "mz_dataflows": (("id", "text"), ("name", "text"), ("runtime", "text")),
    "mz_peek_counts": (("runtime", "text"), ("kind", "text"), ("count", "int8")),
    "mz_tables": (("id", "text"), ("name", "text")),
    "mz_views": (("id", "text"), ("name", "text"), ("definition", "text")),
    "mz_materialized_views": (("id", "text"), ("name", "text"), ("definition", "text")),
    "mz_indexes": (("id", "text"), ("name", "text"), ("on_id", "text"), ("key", "text")),
    "mz_sources": (("id", "text"), ("name", "text"), ("type", "text"), ("cluster", "text")),
    "mz_source_statuses": (("id", "text"), ("name", "text"), ("type", "text"), ("status", "text"),
                           ("error", "text")),
    "mz_source_statistics": (("id", "text"), ("messages_received", "int8"), ("updates_committed", "int8"),
                             ("snapshot_committed", "bool"), ("offset_known", "int8"), ("offset_committed", "int8")),
    "mz_secrets": (("id", "text"), ("name", "text")),
    "mz_connections": (("id", "text"), ("name", "text"), ("type", "text")),
    "mz_columns": (("id", "text"), ("name", "text"), ("position", "int8"), ("nullable", "bool"),
                   ("type", "text")),
    # information_schema, with PostgreSQL 15's columns in its order (a prefix of
    # columns; tables, schemata and views complete).  PostgreSQL's domains over name/varchar
    # (sql_identifier, character_data, yes_or_no) are text here, cardinal_number is int4.
    "information_schema.tables": tuple((c, "text") for c in (
        "table_catalog", "table_schema", "table_name", "table_type", "self_referencing_column_name",
        "reference_generation", "user_defined_type_catalog", "user_defined_type_schema",
        "user_defined_type_name", "is_insertable_into", "is_typed", "commit_action")),
    "information_schema.columns": (
        ("table_catalog", "text"), ("table_schema", "text"), ("table_name", "text"), ("column_name", "text"),
        ("ordinal_position", "int4"), ("column_default", "text"), ("is_nullable", "text"),
        ("data_type", "text"), ("character_maximum_length", "int4"), ("character_octet_length", "int4"),
        ("numeric_precision", "int4"), ("numeric_precision_radix", "int4"), ("numeric_scale", "int4"),
        ("datetime_precision", "int4"), ("interval_type", "text"), ("interval_precision", "int4"),
        ("character_set_catalog", "text"), ("character_set_schema", "text"), ("character_set_name", "text"),
        ("collation_catalog", "text"), ("collation_schema", "text"), ("collation_name", "text"),
        ("domain_catalog", "text"), ("domain_schema", "text"), ("domain_name", "text"),
        ("udt_catalog", "text"), ("udt_schema", "text"), ("udt_name", "text")),
    "information_schema.schemata": tuple((c, "text") for c in (
        "catalog_name", "schema_name", "schema_owner", "default_character_set_catalog",
        "default_character_set_schema", "default_character_set_name", "sql_path")),
    "information_schema.views": tuple((c, "text") for c in (
        "table_catalog", "table_schema", "table_name", "view_definition", "check_option", "is_updatable",
        "is_insertable_into", "is_trigger_updatable", "is_trigger_deletable", "is_trigger_insertable_into")),
    # ---- end
}
_SYSTEM.update({"pg_catalog." + name: cols for name, cols in RELATIONS.items()})


class Introspection:
    def __init__(self, db):
        self.db = db
        self.ids = {}
        self._contents: dict = {}
        n = 0
        for name, cols in _SYSTEM.items():
            n += 1
            from repr.ids import GlobalId
            gid = GlobalId("s", n)
            db.storage.create_table(gid, len(cols))
            db.catalog.add(CatalogItem(gid, name, "system", tuple(ColumnDef(c, t, True) for c, t in cols)))
            self.ids[gid] = name
            self._contents[gid] = {}

    def refresh(self, ids) -> None:
        """Bring the system relations among ``ids`` up to date (one write for all of them)."""
        writes = {}
        for gid in ids:
            name = self.ids.get(gid)
            if name is None:
                continue
            if name.startswith("pg_catalog."):
                rows = pg_catalog_rows(self.db, name[len("pg_catalog."):], schema_of)
            else:
                rows = getattr(self, "_rows_" + name.replace(".", "_"))()
            new: dict = {}
            for r in rows:
                new[r] = new.get(r, 0) + 1
            old = self._contents[gid]
            diff = [(r, c - old.get(r, 0)) for r, c in new.items() if c != old.get(r, 0)]
            diff += [(r, -c) for r, c in old.items() if r not in new]
            if diff:
                writes[gid] = diff
                self._contents[gid] = new
        if writes:
            self.db.storage.commit(writes)

    # ------------------------------------------------------------------ contents
    def _rows_mz_dataflows(self):
        # The controller's record, placed by the Multiplexer's routing decision: deterministic,
        # unlike asking the runtimes, which may not have processed CreateDataflow yet.
        return [(str(gid), name, runtime) for gid, name, runtime in self.db.controller.live_dataflows()]

    def _rows_mz_peek_counts(self):
        out = []
        for role, runtime in self.db.replica.runtimes():
            for kind, count in runtime.peek_counts.items():
                out.append((role, kind, count))
        return out

    def _user(self, kind):
        return [i for i in self.db.catalog.items(kind) if i.id.is_user()]

    def _rows_mz_tables(self):
        return [(str(i.id), i.name) for i in self._user("table")]

    def _rows_mz_views(self):
        return [(str(i.id), i.name, i.create_sql) for i in self._user("view")]

    def _rows_mz_materialized_views(self):
        return [(str(i.id), i.name, i.create_sql) for i in self._user("materialized_view")]

    def _rows_mz_indexes(self):
        return [(str(i.id), i.name, str(i.on_id), ", ".join(i.key_sql)) for i in self._user("index")]

    def _rows_mz_sources(self):
        from mzlite.sources import source_rows
        return [(str(gid), name, typ, cluster) for gid, name, typ, cluster in source_rows(self.db)]

    def _rows_mz_source_statuses(self):
        """Every source and subsource: a source's status; a subsource ``stalled`` with its
        error when it failed (a schema change, a TRUNCATE), else its source's."""
        out = []
        sources = self.db.storage.sources
        for item in self.db.catalog.items("source"):
            info = item.source
            if info is None or info.type == "progress":
                continue
            ing = sources.get(item.id if info.parent is None else info.parent)
            status, error = ing.status() if ing is not None else ("running", None)
            if info.parent is not None:
                failed = getattr(ing, "failed", {}).get(item.id)
                status, error = ("stalled", failed) if failed else (status, None)
            out.append((str(item.id), item.name, info.type, status, error))
        return out

    def _rows_mz_source_statistics(self):
        out = []
        for item in self.db.catalog.items("source"):
            ing = self.db.storage.sources.get(item.id) if item.source and item.source.parent is None else None
            if ing is not None:
                out.append((str(item.id),) + tuple(ing.statistics()))
        return out

    def _rows_mz_secrets(self):
        from mzlite.connections import secret_rows
        return [(str(gid), name) for gid, name in secret_rows(self.db)]

    def _rows_mz_connections(self):
        from mzlite.connections import connection_rows
        return [(str(gid), name, typ) for gid, name, typ in connection_rows(self.db)]

    def _rows_mz_columns(self):
        out = []
        for i in self.db.catalog.items():
            if i.id.is_user() and i.kind != "index":
                for pos, c in enumerate(i.columns, 1):
                    out.append((str(i.id), c.name, pos, c.nullable, c.type))
        return out

    # ------------------------------------------------------------------ information_schema
    def _relations(self):
        """(schema, item) for every relation SQL can name (user objects, then system ones)."""
        out = []
        for i in self.db.catalog.items():
            if i.kind in ("index", "secret", "connection"):
                continue
            out.append((schema_of(i), i))
        return out

    def _rows_information_schema_tables(self):
        types = {"table": "BASE TABLE", "view": "VIEW", "materialized_view": "MATERIALIZED VIEW", "source": "SOURCE"}
        out = []
        for schema, i in self._relations():
            ttype = types.get(i.kind) or ("VIEW" if schema == "information_schema" else "BASE TABLE")
            out.append((CATALOG_NAME, schema, bare_name(i), ttype, None, None, None, None, None,
                        "YES" if i.kind == "table" else "NO", "NO", None))
        return out

    def _rows_information_schema_columns(self):
        from sql.types import column_facts
        out = []
        for schema, i in self._relations():
            defaults = column_defaults(i) if i.kind == "table" else {}
            for pos, c in enumerate(i.columns, 1):
                f = column_facts(c.type, c.typmod)
                udt = "varchar" if c.typmod is not None and c.typmod[0] == "varchar" else c.type
                out.append((CATALOG_NAME, schema, bare_name(i), c.name, pos, defaults.get(c.name),
                            "YES" if c.nullable else "NO", f["data_type"], f["character_maximum_length"],
                            f["character_octet_length"], f["numeric_precision"], f["numeric_precision_radix"],
                            f["numeric_scale"], None, None, None, None, None, None, None, None, None, None, None,
                            None, CATALOG_NAME, "pg_catalog", udt))
        return out

    def _rows_information_schema_schemata(self):
        return [(CATALOG_NAME, s, "mz_system", None, None, None, None)
                for s in ("information_schema", "mz_catalog", "mz_internal", "pg_catalog", "public")]

    def _rows_information_schema_views(self):
        return [(CATALOG_NAME, "public", i.name, view_definition(i.create_sql), "NONE", "NO", "NO", "NO", "NO", "NO")
                for i in self._user("view")]


#: the one database mzlite has (Materialize's default)
CATALOG_NAME = "materialize"


def schema_of(item) -> str:
    """The schema an item lives in: ``public`` for user objects, else its system schema."""
    return system_schema(item)


def bare_name(item) -> str:
    return item.name.rsplit(".", 1)[-1]


def view_definition(create_sql: str) -> str:
    """The query of a ``CREATE [MATERIALIZED] VIEW ... AS query`` text."""
    import re
    m = re.search(r"\bAS\b\s*(.*)$", create_sql, re.I | re.S)
    return m.group(1).strip().rstrip(";") if m else create_sql


def column_defaults(item) -> dict:
    """column name -> the DEFAULT expression's text, as PostgreSQL's column_default shows a
    literal: numbers as written, strings with a cast to the column's type (``'x'::text``,
    also when the user wrote that cast, so a shown default replays to the same text)."""
    from pglast import ast
    from pglast.stream import RawStream

    from sql.types import format_type
    from sql.parse import parse_statements
    try:  # mzlite's parser: Materialize's types (``int list``) included, which pglast alone refuses
        node = parse_statements(item.create_sql)[0].node
    except Exception:  # another dialect's text: no defaults shown
        return {}
    types = {c.name: c for c in item.columns}
    out = {}
    for el in getattr(node, "tableElts", None) or ():
        if not isinstance(el, ast.ColumnDef):
            continue
        for c in el.constraints or ():
            if c.raw_expr is None or getattr(c.contype, "name", "") != "CONSTR_DEFAULT":
                continue
            e = c.raw_expr
            text = RawStream()(e)
            col = types.get(el.colname)
            base = format_type(col.type, col.typmod).split("(")[0] if col is not None else None
            if isinstance(e, ast.A_Const) and isinstance(e.val, ast.String) and col is not None:
                text = f"{text}::{base}"
            elif isinstance(e, ast.TypeCast) and isinstance(e.arg, ast.A_Const) and \
                    isinstance(e.arg.val, ast.String) and RawStream()(e.typeName).split("(")[0] == base:
                text = f"{RawStream()(e.arg)}::{base}"  # as PostgreSQL shows it (and as it was shown)
            out[el.colname] = text
    return out
