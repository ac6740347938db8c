"""The maintenance runtime: hosts every dataflow that is not a peek dataflow.

Owns ``MaintenanceRuntime``: the ``RuntimeCore`` that hosts indexes, materialized views and
subscribes, reads index imports in place (the live exports of dataflows it hosts),
publishes every index export (oks and errs) in the ``SharedArrangementRegistry`` and
applies compaction through the registry.

Invariants: an index import reads a live export hosted here whose since has not passed
the importer's ``as_of`` (else ``ComputeProtocolError``); every index export is published
when its dataflow is built, its upper announced after every step of its dataflow, and it
is unpublished when dropped (failed, when its dataflow fails, so readers stop waiting);
the published since is advanced only by the registry (``apply_compactions``), so it never
passes a standing or a reader hold.  The registry's publisher is this runtime alone.

Deliberately not here: what both runtimes share (``compute.replica.core``), reading
published arrangements (``compute.replica.interactive``), routing (``compute.multiplexer``).
"""
from __future__ import annotations

from compute.errors import ComputeProtocolError
from compute.replica.core import RuntimeCore, _Hosted
from repr.ids import GlobalId
from repr.timestamp import Frontier, frontier_le


class MaintenanceRuntime(RuntimeCore):
    role = "maintenance"

    def __init__(self, storage, registry=None, **kw):
        super().__init__(storage, registry, **kw)
        self.registry.add_publisher_waker(self._wake)

    def _resolve_index_imports(self, h: _Hosted) -> dict:
        desc = h.desc
        indexes = {}
        for imp in desc.index_imports:
            prod = self._export_of.get(imp.id)
            if prod is None or prod.df is None:
                raise ComputeProtocolError(f"maintenance: index import {imp.id} is not a live index")
            exp = prod.df.exports[imp.id]
            if not frontier_le(exp.oks.since, desc.as_of):
                raise ComputeProtocolError(f"maintenance: index {imp.id} since {exp.oks.since} has "
                                           f"passed as_of {desc.as_of} of {desc.debug_name!r}")
            indexes[imp.id] = exp
        return indexes

    def _built(self, h: _Hosted) -> None:
        for e in h.desc.index_exports:
            exp = h.df.exports[e.id]
            self.registry.publish(e.id, exp.oks, exp.errs)

    def _compaction_for_unhosted(self, id: GlobalId, frontier: Frontier) -> None:
        raise ComputeProtocolError(f"maintenance: AllowCompaction for unknown id {id}")

    def _compact_export(self, id: GlobalId, exp, frontier: Frontier) -> None:
        self.registry.allow_compaction(id, frontier)
        self.registry.apply_compactions()

    def _retire_export(self, h: _Hosted, id: GlobalId) -> None:
        if any(e.id == id for e in h.desc.index_exports):
            self.registry.unpublish(id)

    def _on_refused(self, desc, message: str) -> None:
        for e in desc.index_exports:
            self.registry.fail(e.id, message, create=True)  # readers elsewhere answer, not wait

    def _forget_refused(self, id: GlobalId) -> None:
        self.registry.unpublish(id)

    def _on_failed(self, h: _Hosted, message: str) -> None:
        for e in h.desc.index_exports:
            if e.id in h.live:
                # not built (rendering raised): nothing was published, the slot is made
                # failed so a reader that comes later finds the failure, not a wait
                self.registry.fail(e.id, message, create=h.df is None)

    def _progressed(self, h: _Hosted) -> None:
        for e in h.desc.index_exports:
            if e.id in h.live:
                self.registry.note_upper(e.id)

    def _after_dataflows(self, built: list) -> bool:
        for h in built:
            self._progressed(h)
        return self.registry.apply_compactions()
