"""The plans ``planner.plan_statement`` produces and the coordinator executes.

Owns one frozen dataclass per statement kind.  Invariants: every relational expression in
a plan is fully bound (``expr.relation`` / ``expr.scalar`` values, no SQL names
left); ``columns`` are ``(name, type)`` pairs in output order with PostgreSQL type short
names; ``depends_on`` lists every catalog item the plan reads (views are inlined, so it
names tables and materialized views, plus the views themselves for DROP bookkeeping).
Deliberately not here: optimization, timestamp selection, execution.

NOT NULL: ``InsertPlan``/``UpdatePlan`` do *not* enforce NOT NULL; they carry
``not_null`` (the table's NOT NULL column indexes) and the coordinator checks the rows it
is about to write (23502 ``null value in column "c" of relation "t" violates not-null
constraint``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from expr.finishing import RowSetFinishing
from expr.scalar import ScalarExpr
from planner.catalog import ColumnDef  # noqa: F401  (re-exported)
from repr.ids import GlobalId


@dataclass(frozen=True)
class SelectPlan:
    expr: Any                        #: RelationExpr (hidden ORDER BY columns included)
    finishing: RowSetFinishing       #: ORDER BY / LIMIT / OFFSET and the projection to ``columns``
    columns: tuple[tuple[str, str], ...]
    as_of: Optional[ScalarExpr] = None
    as_of_at_least: bool = False
    depends_on: frozenset = frozenset()


@dataclass(frozen=True)
class CreateTablePlan:
    name: str
    columns: tuple[ColumnDef, ...]
    if_not_exists: bool = False
    create_sql: str = ""


@dataclass(frozen=True)
class InsertPlan:
    """``expr`` produces complete table rows in table column order (defaults filled,
    assignment casts applied).  ``returning``: expressions over the inserted row."""
    table_id: GlobalId
    expr: Any
    not_null: tuple[int, ...] = ()
    column_names: tuple[str, ...] = ()
    table_name: str = ""
    returning: tuple[ScalarExpr, ...] = ()
    returning_columns: tuple[tuple[str, str], ...] = ()
    depends_on: frozenset = frozenset()


@dataclass(frozen=True)
class UpdatePlan:
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


@dataclass(frozen=True)
class DeletePlan:
    table_id: GlobalId
    predicates: tuple[ScalarExpr, ...]
    table_name: str = ""
    selection: Any = None  #: as in UpdatePlan
    depends_on: frozenset = frozenset()


@dataclass(frozen=True)
class CreateViewPlan:
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
    in_cluster: Optional[str] = None


@dataclass(frozen=True)
class CreateIndexPlan:
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


@dataclass(frozen=True)
class DropPlan:
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


@dataclass(frozen=True)
class TransactionPlan:
    action: str  #: begin | commit | rollback


@dataclass(frozen=True)
class SetVariablePlan:
    name: str
    value: Optional[str]   #: None: SET x TO DEFAULT
    local: bool = False


@dataclass(frozen=True)
class ResetVariablePlan:
    name: str  #: "all" for RESET ALL


@dataclass(frozen=True)
class ShowVariablePlan:
    name: str  #: "all" for SHOW ALL


@dataclass(frozen=True)
class AlterSystemSetPlan:
    name: str
    value: Optional[str]  #: None for RESET / SET .. TO DEFAULT


@dataclass(frozen=True)
class ShowObjectsPlan:
    """``kind``: tables | views | materialized_views | indexes | objects | columns."""
    kind: str
    on: Optional[GlobalId] = None
    like: Optional[str] = None


@dataclass(frozen=True)
class ShowCreatePlan:
    kind: str
    id: GlobalId
    name: str


@dataclass(frozen=True)
class ExplainPlan:
    stage: str        #: raw | decorrelated | optimized | physical | timestamp
    plan: Any         #: the explained statement's plan
    format: str = "text"


@dataclass(frozen=True)
class SubscribePlan:
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
class DeclarePlan:
    name: str
    plan: Any   #: a SubscribePlan or SelectPlan
    sql: str = ""


@dataclass(frozen=True)
class FetchPlan:
    name: str
    count: Optional[int]         #: None: ALL
    timeout: Optional[float] = None  #: seconds


@dataclass(frozen=True)
class ClosePlan:
    name: Optional[str]  #: None: CLOSE ALL


Plan = Any
