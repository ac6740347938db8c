"""The state machine both compute runtimes share: hosted dataflows, peeks, frontier reports.

Owns ``RuntimeCore``: the dataflows a runtime hosts, its pending peeks, the frontier stream
it reports and the graveyard its dropped dataflows are freed through.  The two runtimes are
subclasses that fill in the hooks below (``compute.replica.maintenance``,
``compute.replica.interactive``); ``role`` names the runtime in reports and errors only.

Invariants: commands are applied in arrival order; every protocol "must" is checked here,
at the receiving boundary (``ComputeProtocolError``); frontier reports per id never regress
and end with the empty frontier when the collection is dropped; every peek is answered
exactly once (a dataflow whose rendering or stepping raised is failed, and its readers
are answered with the exception); stepping is fuel-bounded and every built dataflow gets
its fuel in every step, in creation order, so one hydrating dataflow does not starve the
others.

The hooks (each documented where it is defined; the base does nothing or refuses):
``_admit`` (a runtime's own checks of a description), ``_resolve_index_imports`` (what an
index import reads), ``_bind`` (build now or later), ``_built``, ``_unbind``, ``_on_failed``,
``_on_refused`` / ``_forget_refused`` (a refused description's exports: their reads answer
with the refusal),
``_compaction_for_unhosted``, ``_compact_export``, ``_retire_export``, ``_serves_unhosted``
/ ``_await_published`` / ``_published_readers`` (peeks on collections hosted elsewhere),
``_prepare_step``, ``_progressed`` and ``_after_dataflows`` (stepping).

A runtime is only a state machine (``handle``, ``step``, ``drain_responses``); it never
blocks and owns no thread (``compute.replica.driver`` drives it).  Deliberately not here:
routing (``compute.multiplexer``), operators (``compute.render.dataflow``), the read of a
peek (``compute.peek``), and anything that differs between the two runtimes.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from compute import peek as peeks
from compute.errors import ComputeProtocolError
from compute.protocol import (AllowCompaction, AllowWrites, CancelPeek, CreateDataflow, CreateInstance,
                              Frontiers, Hello, InitializationComplete, Peek, PeekCanceled, PeekError,
                              PeekResponse, Schedule, Status, SubscribeBatch, SubscribeDropped,
                              SubscribeResponse, UpdateConfiguration)
from compute.replica.graveyard import Graveyard
from compute.replica.registry import PublisherFailed, ReadHold, SharedArrangementRegistry
from repr.ids import GlobalId
from repr.timestamp import Frontier, frontier_le


class _Hosted:
    """One dataflow hosted by this runtime."""

    def __init__(self, desc):
        self.desc = desc
        #: the built dataflow; ``None`` while a late-bound import waits for its seal
        self.df: Any = None
        #: reader holds at ``as_of`` on late-bound index imports (interactive; released at build)
        self.holds: dict[GlobalId, ReadHold] = {}
        #: export ids not yet dropped; once empty the dataflow is dropped, unless another
        #: dataflow still imports one of its arrangements (then it runs on, unreported)
        self.live: set[GlobalId] = set(desc.export_ids())
        #: a failure message once a step raised; a failed dataflow is never stepped again
        self.failed: Optional[str] = None
        self.scheduled = False
        #: storage listeners to remove at drop: (collection, fn)
        self.listeners: list = []
        #: the storage collections it reads (sources) and writes (materialized views)
        self.sources: dict = {}
        self.sinks: dict = {}

    @property
    def name(self) -> str:
        return self.desc.debug_name or str(self.desc.export_ids()[0])


class _PendingPeek:
    def __init__(self, peek: Peek, kind: str):
        self.peek = peek
        self.kind = kind
        self.mfp_fn = None
        #: a seal callback registered with the registry (a peek on a published index)
        self.seal_cb: Optional[Callable[[], None]] = None


class RuntimeCore:
    """The shared state machine (see the module doc); instantiate a subclass."""

    #: the runtime's name in reports, ``PeekResponse.answered_by`` and error messages
    role = "runtime"

    def __init__(self, storage, registry: Optional[SharedArrangementRegistry] = None, *,
                 dataflow_factory: Optional[Callable] = None, fuel: int = 10_000):
        #: GlobalId -> StorageCollection (tables, MV outputs); filled by the coordinator
        self.storage = storage
        self.registry = registry if registry is not None else SharedArrangementRegistry()
        self._factory = dataflow_factory
        self.fuel = fuel
        self._dataflows: list[_Hosted] = []
        #: dropped dataflows being freed a slice per step
        self._graveyard = Graveyard()
        #: export id -> why its dataflow failed (importers fail too instead of waiting)
        self._failed_exports: dict[GlobalId, str] = {}
        #: live export id -> its dataflow
        self._export_of: dict[GlobalId, _Hosted] = {}
        #: every export id ever created here (the controller must never reuse one)
        self._ever: set[GlobalId] = set()
        #: id -> last reported write frontier (never regresses)
        self._reported: dict[GlobalId, Frontier] = {}
        self._peeks: dict[str, _PendingPeek] = {}
        self._responses: list = []
        self._waker: Optional[Callable[[], None]] = None
        #: called mid-step when responses should leave now (a subscribe's batch: its driver
        #: emits them rather than after every other dataflow's activation); None: at the end
        self._flusher: Optional[Callable[[], None]] = None
        self.config: dict = {}
        #: kind -> number of peeks received ("fast_path" | "dataflow")
        self.peek_counts: dict[str, int] = {"fast_path": 0, "dataflow": 0}

    # ------------------------------------------------------------ driving
    def set_waker(self, fn: Optional[Callable[[], None]]) -> None:
        """``fn`` is called (from any thread) when external progress may enable a step."""
        self._waker = fn

    def set_flusher(self, fn: Optional[Callable[[], None]]) -> None:
        """``fn`` drains and delivers the responses so far; called from within ``step`` on
        the stepping thread once a subscribe's batch is ready (``_drain_subscribes``)."""
        self._flusher = fn

    def _wake(self) -> None:
        w = self._waker
        if w is not None:
            w()

    def drain_responses(self) -> list:
        out, self._responses = self._responses, []
        return out

    def dataflows(self) -> list[tuple[GlobalId, str]]:
        return [(h.desc.export_ids()[0], h.name) for h in self._dataflows]

    def pending_peeks(self) -> list[str]:
        return list(self._peeks)

    # ------------------------------------------------------------ commands
    def handle(self, command) -> None:
        if isinstance(command, CreateDataflow):
            self._create(command.desc)
        elif isinstance(command, AllowCompaction):
            self._allow_compaction(command.id, command.frontier)
        elif isinstance(command, Peek):
            self._peek(command)
        elif isinstance(command, CancelPeek):
            p = self._peeks.get(command.uuid)
            if p is not None:
                self._respond(p, PeekCanceled())
        elif isinstance(command, (Schedule, AllowWrites)):
            h = self._export_of.get(command.id)
            if h is None:
                raise ComputeProtocolError(f"{self.role}: {type(command).__name__} for unknown id {command.id}")
            h.scheduled = True
            if isinstance(command, AllowWrites) and h.df is not None and hasattr(h.df, "allow_writes"):
                h.df.allow_writes(command.id)
        elif isinstance(command, UpdateConfiguration):
            for name, value in command.params:
                self.config[name] = value
        elif isinstance(command, CreateInstance):
            self.config.update(dict(command.config))
        elif isinstance(command, (Hello, InitializationComplete)):
            pass  # no per-connection state: nothing durable is forgotten at a reconnection
        else:
            raise ComputeProtocolError(f"{self.role}: unknown command {command!r}")

    def _create(self, desc) -> None:
        if desc.as_of is None:
            raise ComputeProtocolError(f"{self.role}: CreateDataflow {desc.debug_name!r} without an as_of")
        for eid in desc.export_ids():
            if eid in self._ever:
                raise ComputeProtocolError(f"{self.role}: export id {eid} reused")
        refused_before = [eid for eid in desc.export_ids() if eid in self._failed_exports]
        try:
            self._create_admitted(desc)
        except ComputeProtocolError as e:
            self._refuse(desc, f"dataflow {desc.debug_name!r} was refused: {e}")
            raise
        for eid in refused_before:  # hosted now (unless it failed already while building)
            h = self._export_of.get(eid)
            if h is not None and h.failed is None:
                del self._failed_exports[eid]

    def _refuse(self, desc, message: str) -> None:
        """``desc`` was refused: its exports will never exist.  Every read of one (a peek on
        an index, a read of a materialized view's storage, a dataflow importing either)
        answers with ``message`` instead of waiting for ever; the refusal stays loud (the
        caller re-raises)."""
        for eid in desc.export_ids():
            self._failed_exports[eid] = message
        for s in desc.sink_exports:
            coll = self.storage.get(s.id) if self.storage is not None else None
            if coll is not None and hasattr(coll, "fail"):
                coll.fail(message)
        self._on_refused(desc, message)
        for p in list(self._peeks.values()):
            if p.peek.target in self._failed_exports and p.peek.target not in self._export_of:
                self._respond(p, PeekError(peeks.INTERNAL, message))

    def _on_refused(self, desc, message: str) -> None:
        """Hook: ``desc`` was refused with ``message`` (its exports are never hosted here)."""

    def _forget_refused(self, id: GlobalId) -> None:
        """Hook: the refused export ``id`` was dropped."""

    def _create_admitted(self, desc) -> None:
        self._admit(desc)
        h = _Hosted(desc)
        sources = {}
        for s in desc.source_imports:
            coll = self.storage.get(s.id) if self.storage is not None else None
            if coll is None:
                raise ComputeProtocolError(f"{self.role}: source {s.id} is not a storage collection")
            if not frontier_le(coll.since, desc.as_of):
                raise ComputeProtocolError(f"{self.role}: source {s.id} since {coll.since} has passed "
                                           f"as_of {desc.as_of} of {desc.debug_name!r}")
            sources[s.id] = coll
        indexes = self._resolve_index_imports(h)
        sinks = {}
        for s in desc.sink_exports:
            if s.kind == "materialized_view":
                coll = self.storage.get(s.id) if self.storage is not None else None
                if coll is None:
                    raise ComputeProtocolError(f"{self.role}: sink target {s.id} is not a storage collection")
                sinks[s.id] = coll
        self._install(h, sources, sinks)
        self._bind(h, indexes)

    def _admit(self, desc) -> None:
        """Hook: refuse (``ComputeProtocolError``) a description this runtime must not host."""

    def _resolve_index_imports(self, h: _Hosted) -> Any:
        """Hook: what ``h``'s index imports read (checked; refusing loudly), for ``_bind``."""
        raise NotImplementedError

    def _bind(self, h: _Hosted, indexes: Any) -> None:
        """Hook: build ``h`` over ``indexes`` now (the default) or once they are importable."""
        self._build(h, indexes)

    def _install(self, h: _Hosted, sources, sinks) -> None:
        for coll in sources.values():
            fn = self._wake
            coll.add_listener(fn)
            h.listeners.append((coll, fn))
        for eid in h.desc.export_ids():
            self._ever.add(eid)
            self._export_of[eid] = h
        self._dataflows.append(h)
        h.sources, h.sinks = sources, sinks

    def _factory_fn(self):
        if self._factory is None:
            from compute.render.dataflow import Dataflow  # the dataflow engineer's module
            self._factory = Dataflow
        return self._factory

    def _build(self, h: _Hosted, indexes) -> None:
        """Render ``h`` over ``indexes``.  An exception while rendering is a bug, not the
        user's: ``h`` fails with it (its peeks, its materialized view's readers and its
        importers are answered with it) and the runtime goes on hosting the others."""
        try:
            h.df = self._factory_fn()(h.desc, sources=h.sources, indexes=indexes, sinks=h.sinks)
            self._built(h)
        except ComputeProtocolError:
            raise
        except Exception as e:
            df, h.df = h.df, None  # never stepped, frontier never reported
            if df is not None and hasattr(df, "close"):
                df.close()
            self._fail(h, f"rendering raised {e!r}")

    def _built(self, h: _Hosted) -> None:
        """Hook: ``h.df`` was just built."""

    def _allow_compaction(self, id: GlobalId, frontier: Frontier) -> None:
        h = self._export_of.get(id)
        if h is None and id in self._failed_exports and id not in self._ever:
            if frontier is None:  # a refused export dropped: nothing was ever hosted
                del self._failed_exports[id]
                self._forget_refused(id)
            return
        if h is None:
            if id in self._ever:
                raise ComputeProtocolError(f"{self.role}: AllowCompaction for dropped {id}")
            self._compaction_for_unhosted(id, frontier)
            return
        if frontier is None:
            self._drop_export(h, id)
            return
        if h.df is None:
            return
        exp = h.df.exports.get(id) if hasattr(h.df, "exports") else None
        if exp is None:
            return  # a sink: its storage output's compaction is the coordinator's
        self._compact_export(id, exp, frontier)

    def _compaction_for_unhosted(self, id: GlobalId, frontier: Frontier) -> None:
        """Hook: ``AllowCompaction`` for an id this runtime never hosted."""
        raise NotImplementedError

    def _compact_export(self, id: GlobalId, exp, frontier: Frontier) -> None:
        """Hook: apply ``AllowCompaction(id, frontier)`` to a live index export (by default
        to its own spines directly)."""
        if frontier_le(exp.oks.since, frontier):
            exp.oks.set_logical_compaction(frontier)
            exp.errs.set_logical_compaction(frontier)

    def _drop_export(self, h: _Hosted, id: GlobalId) -> None:
        h.live.discard(id)
        del self._export_of[id]
        self._retire_export(h, id)
        for p in list(self._peeks.values()):
            if p.peek.target == id:
                self._respond(p, PeekError(peeks.INTERNAL, f"peek target {id} was dropped while the peek was pending"))
        if self._reported.get(id, 0) is not None:
            self._report(id, None)
        self._reported.pop(id, None)
        if not h.live:
            self._collect_dropped()

    def _retire_export(self, h: _Hosted, id: GlobalId) -> None:
        """Hook: export ``id`` of ``h`` was just dropped."""

    def _imported_by_live(self, h: _Hosted) -> bool:
        """Another hosted dataflow still reads one of ``h``'s arrangements in place."""
        mine = {e.id for e in h.desc.index_exports}
        return any(g is not h and any(i.id in mine for i in g.desc.index_imports)
                   for g in self._dataflows)

    def _collect_dropped(self) -> None:
        """Drop every dataflow whose exports are all dropped and whose arrangements no other
        dataflow imports.  One still imported keeps running (no reports, no publication) so
        its importer stays current; it goes once its last importer goes."""
        changed = True
        while changed:
            changed = False
            for h in list(self._dataflows):
                if not h.live and not self._imported_by_live(h):
                    self._drop_dataflow(h)
                    changed = True

    def _drop_dataflow(self, h: _Hosted) -> None:
        self._unbind(h)
        for coll, fn in h.listeners:
            coll.remove_listener(fn)
        h.listeners = []
        for eid in list(h.live):
            self._export_of.pop(eid, None)
        self._dataflows.remove(h)
        if h.df is not None:
            # freed a slice per step, not in one GIL-holding cascade (compute.replica.graveyard)
            close = getattr(h.df, "close", None)
            if close is not None:
                close()
            self._graveyard.bury(h.df)
            h.df = None

    def _unbind(self, h: _Hosted) -> None:
        """Hook: ``h`` is being dropped; give up what ``_resolve_index_imports`` acquired."""

    # ------------------------------------------------------------ peeks
    def _peek(self, peek: Peek) -> None:
        if peek.uuid in self._peeks:
            raise ComputeProtocolError(f"{self.role}: peek {peek.uuid} already pending")
        h = self._export_of.get(peek.target)
        kind = "dataflow" if peek.target.is_transient() else "fast_path"
        refused = self._failed_exports.get(peek.target) if h is None else None
        if refused is not None:  # its dataflow was refused here: the cause, not "unknown index"
            p = _PendingPeek(peek, kind)
            self._peeks[peek.uuid] = p
            self._respond(p, PeekError(peeks.INTERNAL, refused))
            return
        if h is None and not self._serves_unhosted(peek.target):
            # A protocol violation, and loud; but every peek gets its one answer, or the
            # controller waits for it forever (e.g. after a dataflow it created was refused).
            msg = f"{self.role}: peek {peek.uuid} targets unknown index {peek.target}"
            p = _PendingPeek(peek, kind)
            self._peeks[peek.uuid] = p
            self._respond(p, PeekError(peeks.INTERNAL, msg))
            raise ComputeProtocolError(msg)
        self.peek_counts[kind] = self.peek_counts.get(kind, 0) + 1
        p = _PendingPeek(peek, kind)
        self._peeks[peek.uuid] = p
        if h is not None and h.failed is not None:
            self._respond(p, PeekError(peeks.INTERNAL, h.failed))
            return
        if h is None:
            self._await_published(p)
        self._try_answer(p)

    def _serves_unhosted(self, target: GlobalId) -> bool:
        """Hook: whether a peek may target ``target`` though no dataflow here exports it."""
        return False

    def _await_published(self, p: _PendingPeek) -> None:
        """Hook: ``p`` targets a collection hosted elsewhere (``_serves_unhosted``): arrange
        to be woken when it may become answerable."""

    def _published_readers(self, target: GlobalId):
        """Hook: ``(oks, errs)`` readers of a collection hosted elsewhere, or ``None`` (not yet)."""
        return None

    def _readers(self, p: _PendingPeek):
        h = self._export_of.get(p.peek.target)
        if h is not None:
            if h.df is None:
                return None
            exp = h.df.exports[p.peek.target]
            return exp.oks, exp.errs
        return self._published_readers(p.peek.target)

    def _try_answer(self, p: _PendingPeek) -> bool:
        try:
            readers = self._readers(p)
            if readers is None:
                return False
            if p.mfp_fn is None and not p.peek.map_filter_project.is_identity():
                p.mfp_fn = peeks.compile_peek_mfp(p.peek.map_filter_project)
            result = peeks.answer(p.peek, readers[0], readers[1], mfp_fn=p.mfp_fn)
        except (ComputeProtocolError, PublisherFailed) as e:
            result = PeekError(peeks.INTERNAL, str(e))
        except Exception as e:  # a bug: answer, never hang
            result = PeekError(peeks.INTERNAL, f"internal error answering peek: {e!r}")
            self._responses.append(Status(f"{self.role}: internal error answering peek {p.peek.uuid}: {e!r}"))
        if result is None:
            return False
        self._respond(p, result)
        return True

    def _respond(self, p: _PendingPeek, result) -> None:
        del self._peeks[p.peek.uuid]
        if p.seal_cb is not None:
            self.registry.remove_on_seal(p.peek.target, p.seal_cb)
        self._responses.append(PeekResponse(p.peek.uuid, result, answered_by=self.role, kind=p.kind))

    def fail_pending_peeks(self, message: str) -> None:
        """Answer every pending peek with an internal error (the driver's last resort)."""
        for p in list(self._peeks.values()):
            self._respond(p, PeekError(peeks.INTERNAL, message))

    def _failed_input(self, h: _Hosted) -> Optional[str]:
        """Why ``h`` can never make progress: a storage collection it reads was written by a
        dataflow that failed, or an index it imports here belongs to one; else ``None``."""
        for sid, coll in h.sources.items():
            m = getattr(coll, "failed", None)
            if m is not None:
                return m  # names the dataflow it started in (``_fail``): the cause, not the chain
        if self._failed_exports:
            for imp in h.desc.index_imports:
                m = self._failed_exports.get(imp.id)
                if m is not None:
                    return m
        return None

    def _fail(self, h: _Hosted, message: str) -> None:
        """``h`` failed with ``message``.  What its readers are told names the dataflow the
        failure started in (``dataflow 'index i' failed: ...``, or the refusal): a failure
        that came from an input is passed on as it is, without the ids it went through."""
        detail = message
        if not message.startswith("dataflow "):
            message = f"dataflow {h.name!r} failed: {message}"
        h.failed = message
        for eid in h.desc.export_ids():
            self._failed_exports[eid] = message
        for s in h.desc.sink_exports:
            coll = h.sinks.get(s.id)
            if coll is not None and hasattr(coll, "fail"):
                coll.fail(message)  # readers of the materialized view see it, not a stall
        self._on_failed(h, message)
        self._responses.append(Status(f"{self.role}: dataflow {h.name!r} failed: {detail}"))
        for s in h.desc.sink_exports:
            if s.kind == "subscribe" and s.id in h.live:  # its subscriber ends with the error
                end = SubscribeBatch(h.desc.as_of, None, (), (peeks.INTERNAL, message))
                self._responses.append(SubscribeResponse(s.id, end))
        for p in list(self._peeks.values()):
            if p.peek.target in h.live:
                self._respond(p, PeekError(peeks.INTERNAL, message))

    def _on_failed(self, h: _Hosted, message: str) -> None:
        """Hook: ``h`` just failed with ``message`` (its own peeks are answered next)."""

    # ------------------------------------------------------------ stepping
    def step(self, fuel: Optional[int] = None) -> bool:
        """Do a bounded amount of work; True when anything happened."""
        fuel = self.fuel if fuel is None else fuel
        did = self._prepare_step()
        built = [h for h in self._dataflows if h.df is not None and h.failed is None]
        for h in built:
            msg = self._failed_input(h)
            if msg is not None:
                self._fail(h, msg)  # it could only wait for ever: answer its readers
                did = True
        built = [h for h in built if h.failed is None]
        for h in built:
            # creation order, which is dependency order (an importer is created after what
            # it imports): a change flows from a table's index through a view into the
            # index on it within one step.  Every dataflow gets its fuel in every step, so
            # no rotation is needed for fairness.
            if h.df is None:
                continue  # dropped by a callback during this step
            try:
                did |= bool(h.df.step(fuel=fuel))
            except Exception as e:
                self._fail(h, f"{e!r}")
                did = True
                continue
            # Announce this dataflow's progress and answer the peeks it unblocks now, not
            # after every other dataflow's activation: a cheap index's readers (on either
            # runtime) must not wait behind a hydrating neighbour.
            self._progressed(h)
            if self._peeks:
                for p in list(self._peeks.values()):
                    did |= self._try_answer(p)
            # A subscribe's batch leaves now too, with its frontiers: a one-row write must
            # not wait behind a hydrating neighbour's activation to reach its subscriber.
            if h.df is not None and h.desc.sink_exports and self._drain_subscribes(h):
                did = True
                if self._flusher is not None:
                    self._flusher()
        did |= self._after_dataflows(built)
        for h in built:
            if h.df is None:
                continue
            did |= self._drain_subscribes(h)
        for p in list(self._peeks.values()):
            did |= self._try_answer(p)
        if self._graveyard:
            did |= self._graveyard.work()
        return did

    def _drain_subscribes(self, h: _Hosted) -> bool:
        """Report ``h``'s frontiers, then queue its subscribes' batches; whether anything was."""
        did = self._report_frontiers(h)
        for s in h.desc.sink_exports:
            if s.kind == "subscribe" and s.id in h.live and hasattr(h.df, "drain_subscribe"):
                for item in h.df.drain_subscribe(s.id) or ():
                    if isinstance(item, (SubscribeBatch, SubscribeDropped)):
                        item = SubscribeResponse(s.id, item)
                    self._responses.append(item)
                    did = True
        return did

    def _prepare_step(self) -> bool:
        """Hook: work at the start of every step; whether it did any."""
        return False

    def _progressed(self, h: _Hosted) -> None:
        """Hook: ``h`` was just stepped (its exports may have advanced)."""

    def _after_dataflows(self, built: list) -> bool:
        """Hook: every built dataflow was stepped; whether this did any work."""
        return False

    def _report_frontiers(self, h: _Hosted) -> bool:
        did = False
        for eid in h.desc.export_ids():
            if eid not in h.live:
                continue
            exp = h.df.exports.get(eid) if eid in getattr(h.df, "exports", {}) else None
            upper = exp.oks.upper if exp is not None else h.df.frontier()
            last = self._reported.get(eid, h.desc.as_of)
            if upper != last and frontier_le(last, upper):
                self._report(eid, upper)
                did = True
        return did

    def _report(self, id: GlobalId, upper: Frontier) -> None:
        last = self._reported.get(id)
        if id in self._reported and not frontier_le(last, upper):
            raise ComputeProtocolError(f"{self.role}: frontier of {id} would regress {last} -> {upper}")
        self._reported[id] = upper
        self._responses.append(Frontiers(id, upper, upper, upper))
