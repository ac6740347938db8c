"""The interactive runtime: answers one-shot reads off the arrangements maintenance publishes.

Owns ``InteractiveRuntime``: the ``RuntimeCore`` that hosts peek dataflows only and builds
no copy of a maintained index.  Its index imports are late-bound snapshots from the
``SharedArrangementRegistry``: a reader hold at ``as_of`` from arrival until the seal (the
published upper passing ``as_of``), then the published read handles bounded one step past
``as_of`` (immutable batches only; the hold is released).  A peek on a published index is
answered off the registry's read handles.  An ``AllowCompaction`` for an id it does not host
becomes its standing hold on the published collection, which bounds the publisher.

Invariants: a description that is not a peek dataflow, or imports a transient id, is
refused (``ComputeProtocolError``); an import the registry refuses (since past ``as_of``,
the index dropped) is loud, and the dataflow is failed so the peeks on it are answered, not
lost; a publisher's failure answers the waiting reads with an internal error; every seal
callback and hold is given up when the dataflow or peek is done with it.

Deliberately not here: what both runtimes share (``compute.replica.core``), publishing
(``compute.replica.maintenance``), routing (``compute.multiplexer``).
"""
from __future__ import annotations

from compute.errors import ComputeProtocolError
from compute.replica.core import RuntimeCore, _Hosted, _PendingPeek
from compute.replica.registry import PublisherFailed
from repr.ids import GlobalId
from repr.timestamp import Frontier


class InteractiveRuntime(RuntimeCore):
    role = "interactive"

    def __init__(self, storage, registry=None, **kw):
        super().__init__(storage, registry, **kw)
        self.registry.register_standing_holder(self.role)

    def _admit(self, desc) -> None:
        if not desc.is_peek_dataflow():
            raise ComputeProtocolError(f"interactive runtime: {desc.debug_name!r} is not a peek dataflow")
        bad = [i for i in desc.import_ids() if i.is_transient()]
        if bad:
            raise ComputeProtocolError(f"interactive runtime: peek dataflow imports transient {bad}")

    def _resolve_index_imports(self, h: _Hosted) -> None:
        """A reader hold at ``as_of`` on every index import (the imports bind at the seal)."""
        for imp in h.desc.index_imports:
            try:
                h.holds[imp.id] = self.registry.acquire_read_hold(imp.id, h.desc.as_of, self.role)
            except ComputeProtocolError as e:
                # loud, but keep the exports known so their peeks are answered, not lost
                self._install(h, {}, {})
                self._fail(h, str(e))
                raise
        return None

    def _bind(self, h: _Hosted, indexes) -> None:
        if not h.holds:
            self._build(h, {})
            return
        for iid in h.holds:
            self.registry.on_seal(iid, self._wake)
        self._try_build(h)

    def _try_build(self, h: _Hosted) -> bool:
        """Build once every index import has sealed past as_of."""
        got = {}
        for iid in h.holds:
            try:
                snap = self.registry.try_import_snapshot_at(iid, h.desc.as_of, self.role)
            except PublisherFailed as e:
                self._fail(h, str(e))
                return True
            except ComputeProtocolError as e:
                self._fail(h, str(e))
                raise
            if snap is None:
                return False
            got[iid] = snap
        for iid, hold in h.holds.items():
            hold.release()
            self.registry.remove_on_seal(iid, self._wake)
        h.holds = {}
        self._build(h, got)
        return True

    def _prepare_step(self) -> bool:
        did = False
        for h in list(self._dataflows):
            if h.df is None and h.failed is None and h.holds:
                did |= self._try_build(h)
        return did

    def _unbind(self, h: _Hosted) -> None:
        for hold in h.holds.values():
            hold.release()
        for iid in h.holds:
            self.registry.remove_on_seal(iid, self._wake)
        h.holds = {}

    def _on_failed(self, h: _Hosted, message: str) -> None:
        for hold in h.holds.values():
            hold.release()

    def _compaction_for_unhosted(self, id: GlobalId, frontier: Frontier) -> None:
        # a collection maintenance publishes: a standing hold on it (a stray transient id
        # from the peer has nothing importable: nothing to do)
        if not id.is_transient():
            self.registry.set_standing_hold(id, self.role, frontier)

    def _serves_unhosted(self, target: GlobalId) -> bool:
        return not target.is_transient()  # a published index: the fast path off its spines

    def _await_published(self, p: _PendingPeek) -> None:
        p.seal_cb = self._wake
        self.registry.on_seal(p.peek.target, p.seal_cb)

    def _published_readers(self, target: GlobalId):
        return self.registry.read_published(target)
