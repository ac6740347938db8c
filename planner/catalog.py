"""The in-memory catalog: named items (tables, views, materialized views, indexes) by id,
the schemas of the one database, the clusters and the named list and map types.

Owns name resolution and the dependency graph that DROP consults.  Invariants: item names
are unique across relations and indexes of a schema (one namespace per schema, as
PostgreSQL's ``pg_class``); an item of a user-created schema is keyed by its qualified name
``schema.name`` (public's items by their bare name), so every lookup is one dict probe; a
schema that does not exist is never written to (3F000); every cluster an index or
materialized view names exists (``Cluster``: a named scheduling domain over the one
replica, as Materialize's clusters are);
an item's ``depends_on`` names only items present in the catalog (enforced by ``add``);
names are stored as PostgreSQL folds them (unquoted identifiers lower-cased by the
parser), so lookups are exact on the folded name.  The coordinator owns an instance and
allocates ids; this module never invents an id.
Deliberately not here: persistence (the coordinator replays ``create_sql``), privileges,
databases other than ``materialize``, search paths other than ``public``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Union

from expr.scalar import ScalarExpr
from repr.ids import GlobalId
from sql import errors

KINDS = ("table", "view", "materialized_view", "index", "system", "source", "secret", "connection")
#: schemas every database has and no user writes to
SYSTEM_SCHEMAS = ("mz_catalog", "pg_catalog", "mz_internal", "information_schema", "mz_introspection")
DEFAULT_CLUSTER = "quickstart"
DATABASE = "materialize"

_KIND_WORDS = {"table": "table", "view": "view", "materialized_view": "materialized view",
               "index": "index", "system": "system object", "source": "source", "secret": "secret",
               "connection": "connection"}


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: str                             #: PostgreSQL short type name (``int4``, ``text``, ...)
    nullable: bool = True
    default: Optional[ScalarExpr] = None  #: column-free expression; None means NULL
    #: the declared type modifier, kept beside ``type`` (which stays the base type): ``("varchar", n)``
    #: (``type`` "text"; n None when unbounded), ``("bpchar", n)``, ``("numeric", precision, scale)``;
    #: None when the column has none.  Enforced by the binder's assignment casts (``sql.types.typmod_for``).
    typmod: Optional[tuple] = None


@dataclass(frozen=True)
class UniqueKey:
    """A table's PRIMARY KEY or UNIQUE constraint, enforced on every write (``mzlite.constraints``)."""
    name: str                      #: the constraint's name (PostgreSQL's: ``t_pkey``, ``t_a_key``)
    columns: tuple[int, ...]       #: the key's column indexes, in declaration order
    primary: bool = False


@dataclass(frozen=True)
class CheckConstraint:
    """A table's CHECK constraint: a written row whose ``predicate`` is false is refused (23514)."""
    name: str                      #: the constraint's name (PostgreSQL's: ``t_a_check``, ``t_check``)
    predicate: ScalarExpr          #: boolean, over the table's columns, no subqueries or aggregates


@dataclass(frozen=True)
class SourceInfo:
    """What a ``source`` item is: the source itself (``type`` ``load-generator`` or
    ``postgres``; ``parent`` None), one of its subsources (``subsource``; ``output`` the
    generator output or the upstream ``schema.table``) or its progress collection
    (``progress``), as Materialize's ``mz_sources.type`` names them.  A source's collections
    are written only by its ingestion, never by INSERT, UPDATE, DELETE or COPY."""
    type: str
    generator: str = ""                 #: the source's generator (``auction``, ...)
    parent: Optional[GlobalId] = None   #: subsources and progress: the source
    output: str = ""                    #: subsources: the generator output written into it


@dataclass(frozen=True)
class CatalogItem:
    id: GlobalId
    name: str
    kind: str                                  #: one of ``KINDS``
    columns: tuple[ColumnDef, ...] = ()        #: empty for an index (see ``on_id``)
    expr: Any = None                           #: views / MVs: the bound RelationExpr
    create_sql: str = ""
    on_id: Optional[GlobalId] = None           #: indexes: the indexed object
    key: tuple[ScalarExpr, ...] = ()           #: indexes: over the indexed object's columns
    key_sql: tuple[str, ...] = ()
    depends_on: frozenset = frozenset()        #: items this one reads (indexes: ``{on_id}``)
    #: indexes and materialized views: the cluster that maintains them (a key of ``Catalog.clusters``)
    cluster: Optional[str] = None
    unique_keys: tuple[UniqueKey, ...] = ()    #: tables: PRIMARY KEY and UNIQUE constraints
    checks: tuple[CheckConstraint, ...] = ()   #: tables: CHECK constraints
    source: Optional[SourceInfo] = None        #: sources (kind ``source``): which part of one
    #: connections: ``(type, ((NAME, value), ...))``, a secret named by its ``GlobalId``
    connection: Optional[tuple] = None
    #: tables, materialized views and indexes: ``RETAIN HISTORY FOR 'd'`` as ``(text, ms)``
    retain_history: Optional[tuple] = None

    def arity(self) -> int:
        return len(self.columns)

    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column_types(self) -> tuple[str, ...]:
        return tuple(c.type for c in self.columns)

    def kind_word(self) -> str:
        return _KIND_WORDS.get(self.kind, self.kind)


@dataclass(frozen=True)
class Cluster:
    """A named scheduling domain.  mzlite has one replica process, so every cluster's
    dataflows run there; the replicas are the names and sizes the user gave."""
    name: str
    replicas: tuple[tuple[str, str], ...] = (("r1", "1"),)  #: (replica name, size)
    options: tuple[tuple[str, Any], ...] = ()


def _parts(name: Union[str, tuple, list]) -> tuple[str, ...]:
    if isinstance(name, str):
        return tuple(name.split(".")) if "." in name else (name,)
    return tuple(name)


def system_schema(item) -> str:
    """The schema a system item lives in (``mz_catalog``, ``mz_internal``, ``pg_catalog``,
    ``information_schema``); ``public`` for a user item."""
    if item.id.is_user():
        return "public"
    if item.name.startswith("information_schema."):
        return "information_schema"
    if item.name.startswith("pg_catalog."):
        return "pg_catalog"
    return "mz_internal" if item.name in ("mz_dataflows", "mz_peek_counts", "mz_source_statuses",
                                          "mz_source_statistics") else "mz_catalog"


class Catalog:
    """Items by id and by name.  Mutated only by the coordinator (add / remove)."""

    def __init__(self, items: Iterable[CatalogItem] = ()):
        self._by_id: dict[GlobalId, CatalogItem] = {}
        self._by_name: dict[str, GlobalId] = {}
        self.schemas: dict[str, str] = {"public": ""}   #: user-writable schemas -> comment
        self.clusters: dict[str, Cluster] = {DEFAULT_CLUSTER: Cluster(DEFAULT_CLUSTER)}
        #: COMMENT ON: (item id, column index or None) -> text; dropped with the item
        self.comments: dict[tuple, str] = {}
        #: named types (CREATE TYPE ... AS LIST|MAP): catalog key (as ``key_for``) -> the
        #: structural type it names (``int4 list``, ``map[text=>int4]``)
        self.types: dict[str, str] = {}
        #: the system parameters in force (name -> value; the adapter's ``SystemParameters``),
        #: for the feature flags that gate a statement, as Materialize's planner reads them
        self.system_vars: dict = {}
        #: a SHOW plan -> ``(column names, rows)`` (the adapter's SHOW; None: no adapter), for
        #: ``(SHOW ...)`` used as a table
        self.show_rows = None
        for it in items:
            self.add(it)

    # ---- mutation
    def add(self, item: CatalogItem) -> None:
        if item.id in self._by_id:
            raise ValueError(f"catalog id {item.id} already present")
        if item.name in self._by_name:
            raise errors.error_for(errors.DUPLICATE_TABLE, f"catalog item '{item.name}' already exists")
        missing = [d for d in item.depends_on if d not in self._by_id]
        if missing:
            raise ValueError(f"{item.name} depends on unknown ids {missing}")
        self._by_id[item.id] = item
        self._by_name[item.name] = item.id

    def remove(self, id: GlobalId) -> CatalogItem:
        item = self._by_id.pop(id)
        for k in [k for k in self.comments if k[0] == id]:
            del self.comments[k]
        self._by_name.pop(item.name, None)
        return item

    def replace(self, item: CatalogItem) -> None:
        """Swap the item with the same id (e.g. CREATE OR REPLACE keeps nothing else)."""
        old = self._by_id[item.id]
        self._by_name.pop(old.name, None)
        self._by_id[item.id] = item
        self._by_name[item.name] = item.id

    # ---- schemas and clusters (mutated only by the coordinator)
    def schema_of(self, parts, position: Optional[int] = None, *, write: bool = False) -> str:
        """The schema a (possibly qualified) name lives in: ``public`` when unqualified;
        3F000 ``unknown schema`` for one that does not exist; with ``write``, 42501 for a
        system schema (``CREATE TABLE mz_catalog.t`` is refused, as Materialize refuses it)."""
        parts = _parts(parts)
        if len(parts) == 3 and parts[0] != DATABASE:
            raise errors.error_for("3D000", f"unknown database '{parts[0]}'", position=position)
        if len(parts) > 3:
            raise errors.error_for(errors.SYNTAX_ERROR, f"qualified name did not have between 1 and 3 "
                                   f"components: {'.'.join(parts)}", position=position)
        schema = parts[-2] if len(parts) >= 2 else "public"
        if schema in self.schemas:
            return schema
        if schema in SYSTEM_SCHEMAS:
            if write:
                raise errors.error_for("42501", f"system schema '{schema}' cannot be modified", position=position)
            return schema
        raise errors.error_for("3F000", f"unknown schema '{schema}'", position=position)

    def key_for(self, parts, position: Optional[int] = None) -> str:
        """The catalog key of a name being created (``x`` in public, ``s.x`` in schema s)."""
        parts = _parts(parts)
        schema = self.schema_of(parts, position, write=True)
        return parts[-1] if schema == "public" else f"{schema}.{parts[-1]}"

    def cluster(self, name: str, position: Optional[int] = None) -> Cluster:
        c = self.clusters.get(name)
        if c is None:
            raise errors.error_for(errors.UNDEFINED_OBJECT, f"unknown cluster '{name}'", position=position)
        return c

    def comment(self, id: GlobalId, column: Optional[int] = None) -> str:
        return self.comments.get((id, column), "")

    def rename_cluster(self, old: str, new: str) -> None:
        """Point the items maintained by cluster ``old`` at ``new``."""
        for id, item in list(self._by_id.items()):
            if item.cluster == old:
                self._by_id[id] = dataclasses.replace(item, cluster=new)

    def in_schema(self, item: CatalogItem, schema: str) -> bool:
        if schema == "public":
            return "." not in item.name
        return item.name.startswith(schema + ".")

    # ---- lookup
    def get(self, id: GlobalId) -> CatalogItem:
        return self._by_id[id]

    def __contains__(self, id: GlobalId) -> bool:
        return id in self._by_id

    def try_resolve(self, name) -> Optional[CatalogItem]:
        parts = _parts(name)
        if len(parts) == 3 and parts[0] != "materialize":
            return None
        if len(parts) in (2, 3) and parts[-2] == "information_schema":
            # information_schema relations are catalogued under their qualified name,
            # so they never collide with (or shadow) a user's "tables" or "columns"
            id = self._by_name.get("information_schema." + parts[-1])
            return None if id is None else self._by_id[id]
        if len(parts) > 3 or not parts:
            return None
        if len(parts) >= 2 and parts[-2] != "public" and parts[-2] in self.schemas:
            id = self._by_name.get(f"{parts[-2]}.{parts[-1]}")
            return None if id is None else self._by_id[id]
        if len(parts) >= 2 and parts[-2] not in ("public", "mz_catalog", "pg_catalog", "mz_internal"):
            return None
        id = self._by_name.get(parts[-1])
        if id is None and (len(parts) == 1 or parts[-2] == "pg_catalog"):
            # pg_catalog relations are catalogued under their qualified name too (a user's
            # "pg_class" shadows the unqualified name; PostgreSQL searches pg_catalog first)
            id = self._by_name.get("pg_catalog." + parts[-1])
        return None if id is None else self._by_id[id]

    def resolve(self, name, position: Optional[int] = None) -> CatalogItem:
        """The item called ``name`` (``x``, ``public.x``, ``materialize.public.x``, ``s.x``);
        42P01 ``unknown catalog item`` (Materialize's text) if none, 3F000 for a schema that
        does not exist."""
        item = self.try_resolve(name)
        if item is None:
            parts = _parts(name)
            if len(parts) >= 2:
                self.schema_of(parts, position)
            raise errors.error_for(errors.UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(parts)}'",
                                   position=position)
        return item

    def items(self, kind: Optional[str] = None) -> list[CatalogItem]:
        """Items of ``kind`` (all when None) in id order."""
        return sorted((i for i in self._by_id.values() if kind is None or i.kind == kind), key=lambda i: i.id)

    def indexes_on(self, id: GlobalId) -> list[CatalogItem]:
        return [i for i in self.items("index") if i.on_id == id]

    def direct_dependents(self, id: GlobalId) -> list[CatalogItem]:
        return [i for i in self.items() if id in i.depends_on or i.on_id == id]

    def dependents(self, id: GlobalId) -> list[GlobalId]:
        """Every item that (transitively) depends on ``id``, in drop order: an item comes
        before everything it depends on.  ``id`` itself is not included."""
        order: list[GlobalId] = []
        seen: set[GlobalId] = set()

        def visit(x: GlobalId) -> None:
            for d in self.direct_dependents(x):
                if d.id not in seen:
                    seen.add(d.id)
                    visit(d.id)
                    order.append(d.id)
        visit(id)
        # post-order puts deeper dependents first; a diamond may still list an item before
        # one of its dependents, so sort by "depth below" to be safe
        pos = {x: k for k, x in enumerate(order)}
        changed = True
        while changed:
            changed = False
            for x in list(order):
                for d in self.direct_dependents(x):
                    if d.id in pos and pos[d.id] > pos[x]:
                        order.remove(d.id)
                        order.insert(order.index(x), d.id)
                        pos = {y: k for k, y in enumerate(order)}
                        changed = True
        return order

    def check_drop(self, id: GlobalId, cascade: bool, position: Optional[int] = None) -> list[GlobalId]:
        """The ids to drop for DROP of ``id`` (dependents first, then ``id``).  Without
        CASCADE, a dependent other than an index on ``id`` raises 2BP01."""
        item = self.get(id)
        deps = self.dependents(id)
        if not cascade:
            for d in self.direct_dependents(id):
                if d.kind == "index" and d.on_id == id:
                    continue
                raise errors.error_for(
                    errors.DEPENDENT_OBJECTS_STILL_EXIST,
                    f"cannot drop {item.kind_word()} {item.name}: still depended upon by {d.kind_word()} {d.name}",
                    position=position)
            # indexes on the item go with it
            deps = [d for d in deps if self.get(d).kind == "index" and self.get(d).on_id == id]
        return deps + [id]
