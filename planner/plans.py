"""The plans ``planner.plan_statement`` produces and the adapter's sequencer executes.

Owns one frozen dataclass per statement kind, each a ``Plan``, and the properties of each
plan *type* that decide how it is sequenced (``Plan.changes_catalog``, ``Plan.transaction``:
class attributes, so what is DDL is declared here, once, not guessed from a name).
Invariants: every relational expression in a plan is fully bound (``expr.relation`` /
``expr.scalar`` values, no SQL names left); ``columns`` are ``(name, type)`` pairs in output
order with PostgreSQL type short names; ``depends_on`` lists every catalog item the plan
reads (views are inlined, so it names tables and materialized views, plus the views
themselves for DROP bookkeeping).  A plan is valid for the parameter values it was planned
with, except an ``InsertPlan`` with ``param_types``, valid for every parameter set of those
types.  Deliberately not here: optimization, timestamp selection, execution.

NOT NULL: ``InsertPlan``/``UpdatePlan`` do *not* enforce NOT NULL; they carry
``not_null`` (the table's NOT NULL column indexes) and the adapter checks the rows it
is about to write (23502 ``null value in column "c" of relation "t" violates not-null
constraint``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

from expr.finishing import RowSetFinishing
from expr.scalar import ScalarExpr
from planner.catalog import ColumnDef
from repr.ids import GlobalId


class Plan:
    """The base of every plan.  Its class attributes say how the sequencer treats a plan type."""

    #: executing it changes the catalog (or, ``ALTER SYSTEM``, which indexes serve reads): the
    #: sequencer bumps the catalog version before and after it, so plans, parses and bulk
    #: templates cached against the old catalog are never used again, and ends the
    #: subscriptions whose dependencies it dropped
    changes_catalog: ClassVar[bool] = False
    #: where it may run in an explicit transaction block: ``"any"``; ``"idle"``, only while the
    #: transaction has neither read nor written (DDL); ``"never"``, not in a transaction
    #: block at all (UPDATE, DELETE: Materialize's write transactions are insert-only).  A
    #: refusal is 25001 ``<tag> cannot be run inside a transaction block``
    transaction: ClassVar[str] = "any"
    #: the command tag (``CREATE TABLE``, ``DROP INDEX``, ...) a transaction refusal names; a
    #: property where it depends on the plan (``CreateViewPlan``, ``DropPlan``)
    tag: ClassVar[str] = ""


class DdlPlan(Plan):
    """A plan that creates or drops catalog items."""
    changes_catalog = True
    transaction = "idle"


@dataclass(frozen=True)
class SelectPlan(Plan):
    expr: Any                        #: RelationExpr (hidden ORDER BY columns included)
    finishing: RowSetFinishing       #: ORDER BY / LIMIT / OFFSET and the projection to ``columns``
    columns: tuple[tuple[str, str], ...]
    as_of: Optional[ScalarExpr] = None
    as_of_at_least: bool = False
    depends_on: frozenset = frozenset()


@dataclass(frozen=True)
class CreateTablePlan(DdlPlan):
    name: str
    columns: tuple[ColumnDef, ...]
    if_not_exists: bool = False
    create_sql: str = ""
    unique_keys: tuple = ()   #: ``planner.catalog.UniqueKey``s, enforced by the adapter on every write
    checks: tuple = ()        #: ``planner.catalog.CheckConstraint``s, likewise
    retain_history: Optional[tuple] = None  #: ``WITH (RETAIN HISTORY FOR 'd')``: ``(text, ms)``
    tag: ClassVar[str] = "CREATE TABLE"


@dataclass(frozen=True)
class InsertPlan(Plan):
    """Complete table rows for ``table_id``, in table column order (defaults filled,
    assignment casts and column modifiers applied), in one of two forms:

    * ``rows`` (``expr`` None): one tuple of scalar expressions per ``VALUES`` row, over the
      statement's parameters (``Column(k)`` is parameter ``$k+1``); the plan is valid for
      every parameter set whose values bind as ``param_types`` (``planner.params``), so the
      adapter compiles the rows once and evaluates them for one parameter set or many;
    * ``expr`` (``rows`` and ``param_types`` None): a relation producing the rows (``INSERT
      ... SELECT``, ``VALUES`` with subqueries or ``mz_now()``), parameters bound as literals:
      valid for the one parameter set it was planned with.

    ``returning``: expressions over the inserted row followed by the parameters (``Column(
    arity + k)`` is parameter ``$k+1``, in the ``rows`` form only)."""
    table_id: GlobalId
    rows: Optional[tuple[tuple[ScalarExpr, ...], ...]] = None
    expr: Any = None
    param_types: Optional[tuple[str, ...]] = None
    #: the parameters (0-based) written only as whole VALUES items, nowhere else: a NULL
    #: there binds as NULL in its column whatever type the parameter is planned with
    bare_parameters: frozenset = frozenset()
    not_null: tuple[int, ...] = ()
    column_names: tuple[str, ...] = ()
    table_name: str = ""
    returning: tuple[ScalarExpr, ...] = ()
    returning_columns: tuple[tuple[str, str], ...] = ()
    depends_on: frozenset = frozenset()


@dataclass(frozen=True)
class UpdatePlan(Plan):
    """Rows of the table matching every predicate get ``assignments`` (column index,
    expression over the *old* row, already cast to the column type)."""
    table_id: GlobalId
    predicates: tuple[ScalarExpr, ...]
    assignments: tuple[tuple[int, ScalarExpr], ...]
    not_null: tuple[int, ...] = ()
    column_names: tuple[str, ...] = ()
    table_name: str = ""
    #: when the WHERE has subqueries: a RelationExpr over the table (Get) yielding the old
    #: rows to update (``predicates`` is then empty); None otherwise
    selection: Any = None
    depends_on: frozenset = frozenset()
    #: RETURNING: expressions over the *new* row, and their (name, type) columns
    returning: tuple[ScalarExpr, ...] = ()
    returning_columns: tuple[tuple[str, str], ...] = ()
    transaction: ClassVar[str] = "never"
    tag: ClassVar[str] = "UPDATE"


@dataclass(frozen=True)
class DeletePlan(Plan):
    table_id: GlobalId
    predicates: tuple[ScalarExpr, ...]
    table_name: str = ""
    selection: Any = None  #: as in UpdatePlan
    depends_on: frozenset = frozenset()
    #: RETURNING: expressions over the deleted row, and their (name, type) columns
    returning: tuple[ScalarExpr, ...] = ()
    returning_columns: tuple[tuple[str, str], ...] = ()
    transaction: ClassVar[str] = "never"
    tag: ClassVar[str] = "DELETE"


@dataclass(frozen=True)
class CreateViewPlan(DdlPlan):
    name: str
    expr: Any
    columns: tuple[tuple[str, str], ...]
    materialized: bool
    if_not_exists: bool = False
    or_replace: bool = False
    depends_on: frozenset = frozenset()
    create_sql: str = ""
    #: ids of the existing item ``or_replace`` replaces (None when nothing is replaced)
    replaces: Optional[GlobalId] = None
    in_cluster: Optional[str] = None  #: ``IN CLUSTER c`` (checked to exist); None: the session's
    retain_history: Optional[tuple] = None  #: ``WITH (RETAIN HISTORY FOR 'd')``: ``(text, ms)``

    @property
    def tag(self) -> str:
        return "CREATE MATERIALIZED VIEW" if self.materialized else "CREATE VIEW"


@dataclass(frozen=True)
class CreateIndexPlan(DdlPlan):
    name: Optional[str]        #: None: the coordinator picks ``<obj>_primary_idx`` style names
    on_id: GlobalId
    key: tuple[ScalarExpr, ...]
    key_sql: tuple[str, ...]
    default: bool = False
    if_not_exists: bool = False
    on_name: str = ""
    create_sql: str = ""
    #: a name derived as Materialize derives it when ``name`` is None
    suggested_name: str = ""
    in_cluster: Optional[str] = None  #: ``IN CLUSTER c`` (checked to exist); None: the session's
    retain_history: Optional[tuple] = None  #: ``WITH (RETAIN HISTORY FOR 'd')``: ``(text, ms)``
    tag: ClassVar[str] = "CREATE INDEX"


_DROP_TAGS = {"table": "DROP TABLE", "view": "DROP VIEW", "materialized_view": "DROP MATERIALIZED VIEW",
              "index": "DROP INDEX", "source": "DROP SOURCE", "secret": "DROP SECRET",
              "connection": "DROP CONNECTION"}


@dataclass(frozen=True)
class CreatePostgresSourcePlan(DdlPlan):
    """``CREATE SOURCE ... FROM POSTGRES CONNECTION c (PUBLICATION 'p')``: ``tables`` None for
    ``FOR ALL TABLES`` and ``FOR SCHEMAS``, else ``((schema or None, table), subsource name)``
    pairs."""
    name: str
    schema: str
    connection_id: GlobalId
    publication: str
    progress_name: str
    tables: Optional[tuple] = None
    if_not_exists: bool = False
    create_sql: str = ""
    in_cluster: Optional[str] = None
    #: ``FOR SCHEMAS (...)``: the PostgreSQL schemas whose tables in the publication are read
    #: (None: not given); never set together with ``tables``
    schemas: Optional[tuple] = None
    tag: ClassVar[str] = "CREATE SOURCE"


@dataclass(frozen=True)
class CreateWebhookSourcePlan(DdlPlan):
    """``CREATE SOURCE ... FROM WEBHOOK``: ``body_format`` json, text or bytes;
    ``header_columns`` ``(header name, column, bytes)``; ``check`` the CHECK expression's
    text and ``check_with`` its inputs ``(headers | body | secret, secret id or None, name in
    the expression, bytes)``."""
    name: str
    schema: str
    body_format: str
    include_headers: bool = False
    header_columns: tuple = ()
    check: Optional[str] = None
    check_with: tuple = ()
    if_not_exists: bool = False
    create_sql: str = ""
    in_cluster: Optional[str] = None
    tag: ClassVar[str] = "CREATE SOURCE"


@dataclass(frozen=True)
class CreateSecretPlan(DdlPlan):
    """``value``: the secret's bytes (never in ``create_sql``, which is redacted)."""
    name: str
    value: bytes = field(repr=False)
    if_not_exists: bool = False
    create_sql: str = ""
    tag: ClassVar[str] = "CREATE SECRET"


@dataclass(frozen=True)
class AlterSecretPlan(DdlPlan):
    """``id`` None: ``ALTER SECRET IF EXISTS`` of a secret that does not exist."""
    id: Optional[GlobalId]
    value: bytes = field(repr=False)
    name: str = ""
    tag: ClassVar[str] = "ALTER SECRET"


@dataclass(frozen=True)
class CreateConnectionPlan(DdlPlan):
    """``options``: ``(NAME, value)``, a ``PASSWORD`` the ``GlobalId`` of its secret."""
    name: str
    type: str
    options: tuple = ()
    depends_on: frozenset = frozenset()
    if_not_exists: bool = False
    create_sql: str = ""
    validate: bool = False
    tag: ClassVar[str] = "CREATE CONNECTION"


@dataclass(frozen=True)
class ValidateConnectionPlan(Plan):
    id: GlobalId
    tag: ClassVar[str] = "VALIDATE CONNECTION"


@dataclass(frozen=True)
class CreateSourcePlan(DdlPlan):
    """``CREATE SOURCE ... FROM LOAD GENERATOR``: the source ``name`` (a catalog key), its
    progress collection ``progress_name`` and, for a multi-output generator, a subsource per
    output in ``schema`` (``tables``: ``(output, name)`` pairs; None: every output).  The
    options are normalised: ``tick_ms`` None means the generator writes its first tick only."""
    name: str
    schema: str
    generator: str                 #: lower case: counter, auction, marketing, tpch
    progress_name: str
    tick_ms: Optional[int] = 1000
    as_of: int = 0
    up_to: Optional[int] = None
    scale_factor: Optional[float] = None
    max_cardinality: Optional[int] = None
    tables: Optional[tuple[tuple[str, str], ...]] = None
    if_not_exists: bool = False
    create_sql: str = ""
    in_cluster: Optional[str] = None
    tag: ClassVar[str] = "CREATE SOURCE"


@dataclass(frozen=True)
class DropPlan(DdlPlan):
    """``kind``: table | view | materialized_view | index.  ``ids``: the resolved items
    that exist (names missing under IF EXISTS are skipped and listed in ``missing``);
    ``drop_ids``: everything to drop in drop order (dependents first) when ``cascade``."""
    kind: str
    names: tuple[str, ...]
    if_exists: bool = False
    cascade: bool = False
    ids: tuple[GlobalId, ...] = ()
    drop_ids: tuple[GlobalId, ...] = ()
    missing: tuple[str, ...] = ()

    @property
    def tag(self) -> str:
        return _DROP_TAGS.get(self.kind, "DROP")


@dataclass(frozen=True)
class TransactionPlan(Plan):
    action: str  #: begin | commit | rollback
    read_only: bool = False           #: BEGIN READ ONLY
    isolation: Optional[str] = None   #: BEGIN ISOLATION LEVEL ... (for this transaction only)


@dataclass(frozen=True)
class SetVariablePlan(Plan):
    name: str
    value: Optional[str]   #: None: SET x TO DEFAULT
    #: SET LOCAL / SET TRANSACTION: until the transaction block ends (no effect outside one)
    local: bool = False


@dataclass(frozen=True)
class ResetVariablePlan(Plan):
    name: str  #: "all" for RESET ALL


@dataclass(frozen=True)
class ShowVariablePlan(Plan):
    name: str  #: "all" for SHOW ALL


@dataclass(frozen=True)
class AlterSystemSetPlan(Plan):
    name: str
    value: Optional[str]  #: None for RESET / SET .. TO DEFAULT
    #: toggling the interactive runtime restarts the replica, which changes the indexes reads can use
    changes_catalog: ClassVar[bool] = True
    tag: ClassVar[str] = "ALTER SYSTEM"


@dataclass(frozen=True)
class ShowObjectsPlan(Plan):
    """``kind``: tables | views | materialized_views | indexes | objects | columns."""
    kind: str
    on: Optional[GlobalId] = None
    like: Optional[str] = None
    schema: Optional[str] = None   #: ``FROM s`` / ``IN s``: the schema listed (None: public)
    cluster: Optional[str] = None  #: ``IN CLUSTER c``: only what cluster c maintains


@dataclass(frozen=True)
class ShowCreatePlan(Plan):
    kind: str
    id: GlobalId
    name: str


@dataclass(frozen=True)
class ExplainPlan(Plan):
    stage: str        #: raw | decorrelated | optimized | physical | timestamp
    plan: Any         #: the explained statement's plan (None when ``item`` is explained)
    format: str = "text"
    item: Optional[GlobalId] = None  #: ``EXPLAIN MATERIALIZED VIEW | VIEW | INDEX name``


@dataclass(frozen=True)
class SubscribePlan(Plan):
    expr: Any
    columns: tuple[tuple[str, str], ...]
    depends_on: frozenset = frozenset()
    as_of: Optional[ScalarExpr] = None
    as_of_at_least: bool = False
    up_to: Optional[ScalarExpr] = None
    with_snapshot: bool = True
    progress: bool = False
    #: the subscribed object when SUBSCRIBE names one (None for a query)
    relation_id: Optional[GlobalId] = None
    #: ``ENVELOPE UPSERT (KEY (...))``: the key's column indexes (None: the default envelope)
    upsert_key: Optional[tuple[int, ...]] = None
    #: ``WITHIN TIMESTAMP ORDER BY``: ``(column index, desc, nulls_last)``; index -1 is mz_diff
    within_timestamp_order: tuple[tuple[int, bool, bool], ...] = ()


@dataclass(frozen=True)
class DeclarePlan(Plan):
    name: str
    plan: Any   #: a SubscribePlan or SelectPlan
    sql: str = ""


@dataclass(frozen=True)
class FetchPlan(Plan):
    name: str
    count: Optional[int]         #: None: ALL
    timeout: Optional[float] = None  #: seconds
    move: bool = False           #: MOVE: skip the rows, return none (tag ``MOVE n``)


@dataclass(frozen=True)
class ClosePlan(Plan):
    name: Optional[str]  #: None: CLOSE ALL


@dataclass(frozen=True)
class PreparePlan(Plan):
    """``PREPARE name [(types)] AS stmt``: ``sql`` is the inner statement's text, blank-padded
    to its offset in the PREPARE; ``declared`` the given parameter types."""
    name: str
    sql: str
    declared: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExecutePlan(Plan):
    """``EXECUTE name [(args)]``: ``bind_arguments(name, types)`` binds the ``nargs`` arguments
    as literals of the prepared statement's parameter types."""
    name: str
    nargs: int
    bind_arguments: Any


@dataclass(frozen=True)
class DeallocatePlan(Plan):
    name: Optional[str]  #: None: DEALLOCATE ALL


@dataclass(frozen=True)
class DiscardAllPlan(Plan):
    """``DISCARD ALL``: the session's cursors, prepared statements and variables reset."""
    transaction: ClassVar[str] = "never"
    tag: ClassVar[str] = "DISCARD ALL"


@dataclass(frozen=True)
class DiscardPlan(Plan):
    """``DISCARD PLANS | TEMP | SEQUENCES``: nothing to discard in mzlite (no per-session
    plans, temporary objects or sequences exist), so only the tag is answered."""
    what: str


@dataclass(frozen=True)
class CopyPlan(Plan):
    """``COPY``: into ``table_id``'s ``column_indexes`` (``is_from``) or out of ``expr`` (a
    table's columns, or a query's rows after ``finishing``).  ``columns``: the ``(name, type)``
    pairs copied, in order; ``target``: a server-side file name, or None for STDIN/STDOUT;
    ``options``: ``(name, value)`` as written, checked by ``mzlite.copy``."""
    is_from: bool
    table_id: Optional[GlobalId]
    table_name: str
    columns: tuple[tuple[str, str], ...]
    column_indexes: tuple[int, ...]
    expr: Any
    finishing: RowSetFinishing
    target: Optional[str]
    options: tuple
    depends_on: frozenset = frozenset()
    tag: ClassVar[str] = "COPY"


@dataclass(frozen=True)
class CreateTableAsPlan(DdlPlan):
    """``CREATE TABLE name AS query``: a table of ``columns`` filled with ``expr``'s rows.
    ``create_sql`` is the plain ``CREATE TABLE`` the catalog persists (the rows are data)."""
    name: str
    columns: tuple[ColumnDef, ...]
    expr: Any
    if_not_exists: bool = False
    create_sql: str = ""
    depends_on: frozenset = frozenset()
    tag: ClassVar[str] = "CREATE TABLE AS"


# ---- schemas and clusters (planner.bind_namespaces; applied by mzlite.namespaces)
@dataclass(frozen=True)
class CreateSchemaPlan(DdlPlan):
    name: str
    if_not_exists: bool = False
    tag: ClassVar[str] = "CREATE SCHEMA"


@dataclass(frozen=True)
class DropSchemaPlan(DdlPlan):
    """``names``: the schemas that exist; ``drop_ids``: their items (and, with CASCADE,
    everything depending on them) in drop order."""
    names: tuple[str, ...]
    drop_ids: tuple[GlobalId, ...] = ()
    tag: ClassVar[str] = "DROP SCHEMA"


@dataclass(frozen=True)
class CreateClusterPlan(DdlPlan):
    name: str
    replicas: tuple[tuple[str, str], ...]   #: (replica name, size)
    options: tuple[tuple[str, Any], ...] = ()
    tag: ClassVar[str] = "CREATE CLUSTER"


@dataclass(frozen=True)
class CreateNamedTypePlan(DdlPlan):
    """``CREATE TYPE name AS LIST|MAP``: ``key`` (the catalog key) names ``type_``."""
    key: str
    type_: str
    tag: ClassVar[str] = "CREATE TYPE"


@dataclass(frozen=True)
class DropNamedTypePlan(DdlPlan):
    """``keys``: the named types to drop; ``drop_ids``: with CASCADE, the items whose
    definition names one of them and their dependents, in drop order."""
    keys: tuple[str, ...]
    drop_ids: tuple[GlobalId, ...] = ()
    tag: ClassVar[str] = "DROP TYPE"


@dataclass(frozen=True)
class DropClusterPlan(DdlPlan):
    """``names``: the clusters that exist; ``drop_ids``: with CASCADE, the indexes and
    materialized views they maintain and their dependents, in drop order."""
    names: tuple[str, ...]
    drop_ids: tuple[GlobalId, ...] = ()
    tag: ClassVar[str] = "DROP CLUSTER"


@dataclass(frozen=True)
class ClusterReplicasPlan(DdlPlan):
    """CREATE CLUSTER REPLICA (``add``) or DROP CLUSTER REPLICA: ``(cluster, replica, size)``."""
    replicas: tuple[tuple[str, str, str], ...]
    add: bool = True

    @property
    def tag(self) -> str:
        return "CREATE CLUSTER REPLICA" if self.add else "DROP CLUSTER REPLICA"


@dataclass(frozen=True)
class AlterClusterPlan(DdlPlan):
    name: str
    rename_to: Optional[str] = None
    replicas: Optional[tuple[tuple[str, str], ...]] = None  #: a new size or replication factor
    options: tuple[tuple[str, Any], ...] = ()
    tag: ClassVar[str] = "ALTER CLUSTER"


@dataclass(frozen=True)
class RenamePlan(DdlPlan):
    """ALTER ... RENAME TO: ``id`` None when IF EXISTS found nothing."""
    id: Optional[GlobalId]
    old: str
    new: str
    tag: ClassVar[str] = "ALTER OBJECT"


@dataclass(frozen=True)
class AlterSetClusterPlan(DdlPlan):
    """ALTER MATERIALIZED VIEW ... SET CLUSTER naming the cluster the view is in (moving it
    is refused at planning): nothing changes."""
    id: Optional[GlobalId]
    cluster: str
    tag: ClassVar[str] = "ALTER MATERIALIZED VIEW"


@dataclass(frozen=True)
class AlterRetainHistoryPlan(DdlPlan):
    """ALTER TABLE | MATERIALIZED VIEW | INDEX ... SET (RETAIN HISTORY FOR 'd') (``retain``:
    ``(text, milliseconds)``) or RESET (RETAIN HISTORY) (``retain`` None); ``id`` None when
    IF EXISTS found nothing."""
    id: Optional[GlobalId]
    retain: Optional[tuple[str, int]]
    tag: ClassVar[str] = "ALTER OBJECT"


@dataclass(frozen=True)
class CommentPlan(DdlPlan):
    """COMMENT ON: ``target`` is ``(item id, column index or None)`` or ``("schema", name)``;
    ``text`` None removes the comment."""
    target: tuple
    text: Optional[str]
    tag: ClassVar[str] = "COMMENT"
