"""DataflowDescription: what a dataflow reads, builds and exports, and over which times.

Owns the description value and the two predicates that routing, EXPLAIN and the
runtimes' tripwires all ask: ``is_single_time()`` and ``is_peek_dataflow()``.
Invariants: ``as_of`` is set before a description is sent (the controller chooses it);
``until`` is a frontier where ``None`` is the empty frontier (no upper bound on the
times the dataflow produces); export ids are unique.  Deliberately not here: which
runtime hosts the dataflow (the Multiplexer decides that from these predicates).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from expr.relation import RelationExpr
from expr.scalar import ScalarExpr
from repr.ids import GlobalId
from repr.timestamp import Frontier, try_step_forward


@dataclass(frozen=True)
class SourceImport:
    """A storage collection (a table, or a materialized view's output) read by the dataflow."""
    id: GlobalId
    arity: int


@dataclass(frozen=True)
class IndexImport:
    """An existing arrangement (index ``id`` on collection ``on_id`` by ``key``) read by the dataflow."""
    id: GlobalId
    on_id: GlobalId
    key: tuple[ScalarExpr, ...]
    arity: int


@dataclass(frozen=True)
class BuildDesc:
    """Build collection ``id`` from ``plan`` (its ``Get``s name imports or earlier builds)."""
    id: GlobalId
    plan: RelationExpr


@dataclass(frozen=True)
class IndexExport:
    """Export an arrangement ``id`` of the built collection ``on_id``, keyed by ``key``."""
    id: GlobalId
    on_id: GlobalId
    key: tuple[ScalarExpr, ...]
    arity: int


@dataclass(frozen=True)
class SinkExport:
    """Export collection ``from_id`` through a sink.

    ``kind``: ``"materialized_view"`` (writes the output into the storage collection
    named by the sink's id), ``"subscribe"`` (streams changes to the controller) or
    ``"copy_to"``.
    """
    id: GlobalId
    from_id: GlobalId
    kind: str
    arity: int
    #: sink-specific options (subscribe: with_snapshot, up_to, ...)
    options: tuple = ()


@dataclass(frozen=True)
class DataflowDescription:
    source_imports: tuple[SourceImport, ...]
    index_imports: tuple[IndexImport, ...]
    objects_to_build: tuple[BuildDesc, ...]
    index_exports: tuple[IndexExport, ...]
    sink_exports: tuple[SinkExport, ...]
    as_of: Optional[int]
    #: ``None`` is the empty frontier: the dataflow runs forever
    until: Frontier = None
    debug_name: str = ""

    def export_ids(self) -> tuple[GlobalId, ...]:
        return tuple(e.id for e in self.index_exports) + tuple(s.id for s in self.sink_exports)

    def import_ids(self) -> tuple[GlobalId, ...]:
        return tuple(s.id for s in self.source_imports) + tuple(i.id for i in self.index_imports)

    def is_single_time(self) -> bool:
        """The dataflow reads exactly one time: ``until == as_of + 1``, or ``as_of`` is MAX and
        ``until`` is empty (reading at MAX reads the final state of sealed inputs)."""
        if self.as_of is None:
            return False
        return self.until == try_step_forward(self.as_of)

    def is_peek_dataflow(self) -> bool:
        """Every export is transient, it reads a single time, and it drives no subscribe or
        copy-to sink.  Transience: only transient frontiers are forwarded from the
        interactive runtime.  Single time: a shared-index import is a snapshot bounded one
        step past ``as_of``.  No sink: nothing long-lived may run on the interactive runtime."""
        exports = self.export_ids()
        if not exports or not all(i.is_transient() for i in exports):
            return False
        if not self.is_single_time():
            return False
        return not any(s.kind in ("subscribe", "copy_to") for s in self.sink_exports)
