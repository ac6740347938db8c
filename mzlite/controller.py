"""The compute controller: the coordinator's side of the compute protocol.

Owns: the conversation with the replica through its one client
(``compute.replica.client.ReplicaClient``: one protocol endpoint over its runtimes), the
controller's view of every compute collection (its write frontier as reported, the
since it has allowed), read holds, pending peeks and subscriptions, and the thread
that receives responses.  Invariants: ``AllowCompaction`` frontiers never regress and
never pass a live read hold (a hold at ``t`` keeps ``since <= t``); exactly one
``PeekResponse`` completes each peek; a collection's reported frontier never regresses
(a regression from the replica is a protocol error).  Deliberately not here: SQL,
timestamp selection (the coordinator chooses; the controller only holds), and which
runtime does what (the Multiplexer decides from the description).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import itertools
import threading
from typing import Callable, Optional

from compute import protocol as P
from compute.dataflow import DataflowDescription
from compute.errors import ComputeProtocolError
from repr.ids import GlobalId
from repr.timestamp import Frontier, frontier_le

#: Materialize keeps one second of history on indexes and materialized views by default.
DEFAULT_COMPACTION_WINDOW_MS = 1000


#: since advances in steps of ``compaction window / COMPACTION_STEPS`` (``_maybe_compact``)
COMPACTION_STEPS = 10
#: how many times a waiting peek lets idle runtimes work on its thread before blocking
#: (each a bounded ``ReplicaClient.assist``: one for maintenance's propagation, one for the
#: interactive answer, one spare)
ASSIST_ROUNDS = 3


@dataclass
class CollectionState:
    id: GlobalId
    #: the upper last reported by the owning runtime (``None``: closed)
    write_frontier: Frontier
    #: the since the controller has allowed; only advances
    implied_since: Frontier
    #: read holds: hold id -> time; since never passes the minimum
    holds: dict = field(default_factory=dict)
    #: the dataflow's as_of: nothing below it is readable
    as_of: int = 0
    dropped: bool = False


class PeekHandle:
    def __init__(self, uuid: str):
        self.uuid = uuid
        self.event = threading.Event()
        self.response: Optional[P.PeekResponse] = None
        #: the waiting thread: an answer delivered on it (inline) wakes nobody
        self.waiter = threading.get_ident()
        #: the answer raised the urgency for a waiter on another thread (lowered once awake)
        self.raised = False


class ComputeController:
    def __init__(self, replica, compaction_window_ms: int = DEFAULT_COMPACTION_WINDOW_MS,
                 windows: Optional[dict] = None):
        #: the replica's client (``compute.replica.client.ReplicaClient``)
        self.replica = replica
        self.compaction_window = compaction_window_ms
        #: collection id -> its own compaction window in ms (``RETAIN HISTORY``), else the default
        self.windows = {} if windows is None else windows
        self.collections: dict[GlobalId, CollectionState] = {}
        self._peeks: dict[str, PeekHandle] = {}
        self._subscribes: dict[GlobalId, Callable] = {}
        self._lock = threading.RLock()
        self._frontier_changed = threading.Condition(self._lock)
        self._hold_ids = itertools.count(1)
        self._stopped = False
        self._statuses: list[str] = []
        #: first export id -> (debug name, live export ids): the dataflows this controller created
        self.dataflows: dict = {}
        #: export id -> [(as_of, callback)]: run once the export's frontier passes as_of
        self._on_past: dict = {}
        # peek answers skip the receiving thread (one GIL hand-off fewer per read)
        self.replica.deliver_peek_responses(self._handle_response)
        self._thread = threading.Thread(target=self._receive_loop, name="mzlite-controller", daemon=True)
        self._thread.start()
        self.replica.send(P.Hello(nonce=P.new_uuid()))
        self.replica.send(P.CreateInstance())
        self.replica.send(P.InitializationComplete())

    # ------------------------------------------------------------------ responses
    def _receive_loop(self) -> None:
        while not self._stopped:
            resp = self.replica.recv(timeout=0.2)
            if resp is None:
                continue
            try:
                self._handle_response(resp)
            except Exception as e:  # a protocol violation: keep it visible, keep going
                self._statuses.append(f"controller error: {e!r}")

    def _handle_response(self, resp) -> None:
        if isinstance(resp, P.PeekResponse):
            with self._lock:
                handle = self._peeks.pop(resp.uuid, None)
            if handle is not None:
                handle.response = resp
                if handle.waiter != threading.get_ident():
                    # a waiter to wake on another thread: hurry the GIL to it; lowered by the
                    # waiter once awake (``peek``).  Answered inline, it is awake already, and
                    # a raise would only hand the GIL to other threads meanwhile.
                    handle.raised = True
                    self.replica.raise_urgency()
                handle.event.set()
        elif isinstance(resp, P.Frontiers):
            with self._lock:
                st = self.collections.get(resp.id)
                if st is None:
                    return
                if not frontier_le(st.write_frontier, resp.write_frontier):
                    raise ComputeProtocolError(
                        f"frontier of {resp.id} regressed from {st.write_frontier} to {resp.write_frontier}")
                st.write_frontier = resp.write_frontier
                self._maybe_compact(st)
                self._frontier_changed.notify_all()
                due = self._due_callbacks(resp.id, resp.write_frontier)
            for cb in due:
                cb()
        elif isinstance(resp, P.SubscribeResponse):
            cb = self._subscribes.get(resp.id)
            if cb is not None:
                cb(resp.response)
        elif isinstance(resp, P.Status):
            self._statuses.append(resp.message)

    # ------------------------------------------------------------------ dataflows
    def create_dataflow(self, desc: DataflowDescription, on_subscribe: Optional[Callable] = None) -> None:
        with self._lock:
            for export_id in desc.export_ids():
                if export_id in self.collections:
                    raise ComputeProtocolError(f"export id {export_id} reused")
                self.collections[export_id] = CollectionState(
                    export_id, write_frontier=desc.as_of, implied_since=desc.as_of, as_of=desc.as_of or 0)
            if on_subscribe is not None:
                for s in desc.sink_exports:
                    self._subscribes[s.id] = on_subscribe
        with self._lock:
            self.dataflows[desc.export_ids()[0]] = (desc.debug_name, set(desc.export_ids()))
        self.replica.send(P.CreateDataflow(desc))
        for export_id in desc.export_ids():
            self.replica.send(P.Schedule(export_id))
        for s in desc.sink_exports:
            if s.kind == "materialized_view":
                self.replica.send(P.AllowWrites(s.id))

    def drop_collection(self, id: GlobalId) -> None:
        with self._lock:
            st = self.collections.get(id)
            if st is None or st.dropped:
                return
            st.dropped = True
            st.implied_since = None
            self._subscribes.pop(id, None)
        self.replica.send(P.AllowCompaction(id, None))
        with self._lock:
            self.collections.pop(id, None)
            for first, (_, exports) in list(self.dataflows.items()):
                exports.discard(id)
                if not exports:
                    del self.dataflows[first]
            due = [cb for _, cb in self._on_past.pop(id, [])]
        for cb in due:
            cb()

    def release_when_past(self, id: GlobalId, as_of: int, callback: Callable[[], None]) -> None:
        """Call ``callback`` once ``id``'s write frontier passes ``as_of`` (or it is dropped):
        how the input holds of a new dataflow end once it has read its snapshot."""
        with self._lock:
            st = self.collections.get(id)
            done = st is None or st.write_frontier is None or st.write_frontier > as_of
            if not done:
                self._on_past.setdefault(id, []).append((as_of, callback))
        if done:
            callback()

    def _due_callbacks(self, id: GlobalId, frontier: Frontier) -> list:
        pending = self._on_past.get(id)
        if not pending:
            return []
        due = [cb for t, cb in pending if frontier is None or frontier > t]
        keep = [(t, cb) for t, cb in pending if not (frontier is None or frontier > t)]
        if keep:
            self._on_past[id] = keep
        else:
            self._on_past.pop(id, None)
        return due

    def live_dataflows(self) -> list[tuple[GlobalId, str, str]]:
        """``(id, name, runtime)`` for every live dataflow, the runtime as routing placed it."""
        with self._lock:
            items = list(self.dataflows.items())
        return [(first, name, self.replica.owner_of(first)) for first, (name, _) in items]

    def since(self, id: GlobalId) -> Frontier:
        st = self.collections.get(id)
        return None if st is None else st.implied_since

    def upper(self, id: GlobalId) -> Frontier:
        st = self.collections.get(id)
        return None if st is None else st.write_frontier

    # ------------------------------------------------------------------ read holds and compaction
    def acquire_hold(self, ids, t: int) -> list[tuple[GlobalId, int]]:
        """Hold every id at ``t``; raises if some since already passed ``t``."""
        out = []
        with self._lock:
            for id in ids:
                st = self.collections.get(id)
                if st is None:
                    continue
                if st.implied_since is None or st.implied_since > t:
                    for oid, hid in out:
                        self.collections[oid].holds.pop(hid, None)
                    raise SinceError(id, st.implied_since, t)
                hid = next(self._hold_ids)
                st.holds[hid] = t
                out.append((id, hid))
        return out

    def release_holds(self, holds) -> None:
        with self._lock:
            for id, hid in holds:
                st = self.collections.get(id)
                if st is not None:
                    st.holds.pop(hid, None)
                    self._maybe_compact(st)

    def _maybe_compact(self, st: CollectionState) -> None:
        if st.dropped or st.write_frontier is None or st.implied_since is None:
            return
        window = self.windows.get(st.id, self.compaction_window)
        target = st.write_frontier - 1 - window
        if st.holds:
            target = min(target, min(st.holds.values()))
        # since trails the upper by the window anyway: moving it in steps of a tenth of the
        # window keeps at most 10% more history and spares both runtimes a command (and a
        # thread wake-up) per frontier advance, which under a stream of small writes is a
        # command every millisecond per collection
        if target - st.implied_since >= max(1, window // COMPACTION_STEPS):
            st.implied_since = target
            self.replica.send(P.AllowCompaction(st.id, target))

    # ------------------------------------------------------------------ peeks
    def assist_after_write(self) -> None:
        """A session that has just committed a write does its propagation now, bounded, if
        the runtimes are parked (``ReplicaClient.assist``)."""
        self.replica.assist()

    def peek(self, target: GlobalId, literal_constraints, timestamp: int, finishing, mfp,
             timeout: Optional[float] = None, should_cancel: Optional[Callable[[], bool]] = None
             ) -> P.PeekResponse:
        """Send a peek and wait for its one response.  After ``timeout`` seconds, or once
        ``should_cancel()`` says so (checked every 50 ms), send ``CancelPeek``; the runtime
        then answers ``canceled`` (or the answer it had already sent)."""
        import time as _time
        uuid = P.new_uuid()
        handle = PeekHandle(uuid)
        with self._lock:
            self._peeks[uuid] = handle
        self.replica.send(P.Peek(uuid, target, literal_constraints, timestamp, finishing, mfp))
        # an idle runtime's pending work (a write propagating, the parked peek) is done
        # right here, bounded, rather than after waking two threads (ReplicaClient.assist)
        for _ in range(ASSIST_ROUNDS):
            if handle.event.is_set() or not self.replica.assist():
                break
        deadline = None if timeout is None else _time.monotonic() + timeout
        if not handle.event.is_set():
            self.replica.flush_deferred_wakes()  # about to block: runtimes this thread woke must run
        while not handle.event.is_set():
            wait = 0.05 if should_cancel is not None else None
            if deadline is not None:
                left = deadline - _time.monotonic()
                wait = left if wait is None else min(wait, left)
                if left <= 0:
                    break
            if handle.event.wait(wait):
                break
            if should_cancel is not None and should_cancel():
                break
        if not handle.event.is_set():
            self.replica.send(P.CancelPeek(uuid))
            handle.event.wait()
        if handle.raised:
            self.replica.lower_urgency()  # awake: maintenance may have the GIL back
        return handle.response

    def cancel_peek(self, uuid: str) -> None:
        self.replica.send(P.CancelPeek(uuid))

    def wait_for_upper(self, id: GlobalId, beyond: int, timeout: Optional[float] = None) -> bool:
        """Block until ``id``'s upper passes ``beyond`` (or it closes)."""
        with self._lock:
            return self._frontier_changed.wait_for(
                lambda: (st := self.collections.get(id)) is None or st.write_frontier is None
                or st.write_frontier > beyond, timeout)

    def update_configuration(self, params: dict) -> None:
        self.replica.send(P.UpdateConfiguration(tuple(params.items())))

    def shutdown(self) -> None:
        self._stopped = True
        self._thread.join(timeout=2)


class SinceError(Exception):
    def __init__(self, id, since, t):
        super().__init__(f"{id}: since {since} has passed {t}")
        self.id, self.since, self.t = id, since, t
