"""System relations: the catalog and the replica described as relations SQL can read.

Owns the definitions and contents of ``mz_catalog`` relations (``mz_tables``,
``mz_views``, ``mz_materialized_views``, ``mz_indexes``, ``mz_columns``) and the
``mz_internal`` introspection relations the two-runtime design asks for:
``mz_dataflows (id, name, runtime)``, the live dataflows with the runtime hosting each
(as the Multiplexer routed them),
and ``mz_peek_counts (runtime, kind, count)``, peeks received per runtime and kind
(``fast_path`` or ``dataflow``).  Each is a system table in storage, refreshed (as one
write of the difference) right before a statement that reads it, so a read sees the
state as of its own timestamp.  Invariant: system relations are written only here.
Deliberately not here: ``SHOW`` (``mzlite.show``), which reads the catalog directly.
"""
from __future__ import annotations

from planner.catalog import CatalogItem, ColumnDef

_SYSTEM = {
    "mz_dataflows": (("id", "text"), ("name", "text"), ("runtime", "text")),
    "mz_peek_counts": (("runtime", "text"), ("kind", "text"), ("count", "int8")),
    "mz_tables": (("id", "text"), ("name", "text")),
    "mz_views": (("id", "text"), ("name", "text"), ("definition", "text")),
    "mz_materialized_views": (("id", "text"), ("name", "text"), ("definition", "text")),
    "mz_indexes": (("id", "text"), ("name", "text"), ("on_id", "text"), ("key", "text")),
    "mz_columns": (("id", "text"), ("name", "text"), ("position", "int8"), ("nullable", "bool"),
                   ("type", "text")),
}


class Introspection:
    def __init__(self, db):
        self.db = db
        self.ids = {}
        self._contents: dict = {}
        n = 0
        for name, cols in _SYSTEM.items():
            n += 1
            from compute.ids import GlobalId
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
            rows = getattr(self, "_rows_" + name)()
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

    def _rows_mz_columns(self):
        out = []
        for i in self.db.catalog.items():
            if i.id.is_user() and i.kind != "index":
                for pos, c in enumerate(i.columns, 1):
                    out.append((str(i.id), c.name, pos, c.nullable, c.type))
        return out
