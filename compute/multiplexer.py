"""The Multiplexer: one compute protocol endpoint over the replica's two runtimes.

Owns routing (commands fan out by collection identity, DESIGN.md's table) and merging
(responses of both runtimes into one queue, filtered so the controller sees one frontier
stream per collection).  The controller and the protocol never learn the replica is split;
with no interactive endpoint everything goes to maintenance.

Invariants:

* A ``CreateDataflow`` goes to interactive exactly when ``desc.is_peek_dataflow()``; one
  routed there that imports a transient id is refused loudly (``ComputeProtocolError``),
  never rerouted: its producer might sit on the other runtime.
* ``AllowCompaction`` goes to the owner, and also to interactive for a non-transient
  collection maintenance publishes (a standing hold there); never for a transient one.
* ``Frontiers`` are forwarded only from the owner: every one of maintenance's, and of
  interactive's only those for transient ids (the only collections it hosts; this filter
  does not depend on ownership state, so a dropped transient's trailing empty report still
  reaches the controller).  ``PeekResponse`` verbatim; ``SubscribeResponse`` from
  maintenance; ``Status`` from both.
* Receiving is cancel-safe: endpoints push into one merged queue and ``recv`` either takes
  one response and returns it or takes nothing; a timed-out or abandoned receive loses
  nothing.  ``recv`` never sends.

An endpoint is anything with ``send(command)`` and ``attach(sink)`` (``sink(response)`` is
called from the endpoint's thread, or from the sender's when the endpoint applies a command
inline): a ``RuntimeDriver``, a ``QueuedEndpoint`` stepped by hand, or a test's mock.  The ``broadcast_compaction`` switch exists only so tests can show
what breaks without the broadcast.
"""
from __future__ import annotations

import collections
import queue
import threading
import time as _time
from typing import Any, Optional

from compute.errors import ComputeProtocolError
from compute.protocol import (AllowCompaction, AllowWrites, CancelPeek, CreateDataflow, CreateInstance,
                              Frontiers, Hello, InitializationComplete, Peek, PeekResponse, Schedule, Status,
                              SubscribeResponse, UpdateConfiguration)
from repr.ids import GlobalId

MAINTENANCE = "maintenance"
INTERACTIVE = "interactive"
_LIFECYCLE = (Hello, CreateInstance, InitializationComplete, UpdateConfiguration)


class Multiplexer:
    def __init__(self, maintenance: Any, interactive: Optional[Any] = None, *,
                 broadcast_compaction: bool = True):
        self._ends = {MAINTENANCE: maintenance}
        if interactive is not None:
            self._ends[INTERACTIVE] = interactive
        #: test-only switch: ``False`` routes AllowCompaction to the owner alone
        self.broadcast_compaction = broadcast_compaction
        self._lock = threading.Lock()
        #: export id -> the runtime hosting it (until its AllowCompaction(None))
        self._owner: dict[GlobalId, str] = {}
        #: non-transient index exports maintenance publishes (while live)
        self._published: set[GlobalId] = set()
        #: peek uuid -> the runtime it went to (until its response is delivered)
        self._peek_route: dict[str, str] = {}
        self._incoming: "queue.Queue[Any]" = queue.Queue()
        #: when set, ``PeekResponse``s are handed to it on the answering runtime's thread
        #: instead of queued (see ``deliver_peek_responses``)
        self._peek_sink: Optional[Any] = None
        maintenance.attach(lambda r: self._accept(MAINTENANCE, r))
        if interactive is not None:
            interactive.attach(lambda r: self._accept(INTERACTIVE, r))

    @property
    def has_interactive(self) -> bool:
        return INTERACTIVE in self._ends

    # ------------------------------------------------------------ commands
    def owner_of(self, id: GlobalId) -> str:
        """The runtime hosting export ``id`` as routing decided it (maintenance by default)."""
        with self._lock:
            return self._owner.get(id, MAINTENANCE)

    def route(self, command) -> tuple[str, ...]:
        """The runtimes ``command`` goes to (updates routing state; does not send)."""
        if not self.has_interactive:
            if isinstance(command, Peek):
                self._peek_route[command.uuid] = MAINTENANCE
            return (MAINTENANCE,)
        if isinstance(command, _LIFECYCLE):
            return (MAINTENANCE, INTERACTIVE)
        if isinstance(command, CreateDataflow):
            desc = command.desc
            if desc.is_peek_dataflow():
                bad = [i for i in desc.import_ids() if i.is_transient()]
                if bad:
                    # TODO: the control plane should name the runtime in the description.
                    raise ComputeProtocolError(
                        f"peek dataflow {desc.debug_name!r} routed to interactive imports "
                        f"transient {bad}, whose producer may live on the other runtime")
                for eid in desc.export_ids():
                    self._owner[eid] = INTERACTIVE
                return (INTERACTIVE,)
            for eid in desc.export_ids():
                self._owner[eid] = MAINTENANCE
            for e in desc.index_exports:
                if not e.id.is_transient():
                    self._published.add(e.id)
            return (MAINTENANCE,)
        if isinstance(command, (Schedule, AllowWrites)):
            return (self._owner.get(command.id, MAINTENANCE),)
        if isinstance(command, AllowCompaction):
            owner = self._owner.get(command.id, MAINTENANCE)
            to = (owner,)
            if (owner == MAINTENANCE and command.id in self._published and self.broadcast_compaction
                    and not command.id.is_transient()):
                to = (MAINTENANCE, INTERACTIVE)
            if command.frontier is None:
                self._owner.pop(command.id, None)
                self._published.discard(command.id)
            return to
        if isinstance(command, Peek):
            t = command.target
            where = INTERACTIVE if (self._owner.get(t) == INTERACTIVE or t in self._published) else MAINTENANCE
            self._peek_route[command.uuid] = where
            return (where,)
        if isinstance(command, CancelPeek):
            where = self._peek_route.get(command.uuid)
            return () if where is None else (where,)
        raise ComputeProtocolError(f"multiplexer: unknown command {command!r}")

    def send(self, command) -> None:
        with self._lock:
            targets = self.route(command)
        for name in targets:
            self._ends[name].send(command)

    def assist(self) -> bool:
        """Let each endpoint that can (``RuntimeDriver.assist``) do its pending work on the
        caller's thread, maintenance first (a write propagating), then interactive (a peek
        it unblocks); whether any did.  Not a protocol message: who runs a runtime's steps
        is the drivers' business, and an endpoint without ``assist`` is skipped."""
        did = False
        for name in (MAINTENANCE, INTERACTIVE):
            end = self._ends.get(name)
            fn = getattr(end, "assist", None)
            if fn is not None and fn():
                did = True
        return did

    # ------------------------------------------------------------ responses
    def _forward(self, source: str, response) -> bool:
        if isinstance(response, Frontiers):
            return source == MAINTENANCE or response.id.is_transient()
        if isinstance(response, SubscribeResponse):
            return source == MAINTENANCE
        return isinstance(response, (PeekResponse, Status))

    def deliver_peek_responses(self, sink) -> None:
        """Hand every later ``PeekResponse`` to ``sink(response)`` on the answering runtime's
        thread, not through the merged queue.  A peek's answer then reaches its waiter
        without a hop through the receiving thread and without queueing behind frontier
        reports (one GIL hand-off fewer per read).  Nothing is lost: the response is either
        given to the sink or, before this is called, queued.  ``sink`` must not block on the
        runtime (it runs on the runtime's thread).  Peek responses carry no ordering
        obligation towards ``Frontiers``: a reader's timestamp never comes from them."""
        self._peek_sink = sink

    def _accept(self, source: str, response) -> None:
        """Called from an endpoint's thread: filter, then enqueue (one queue, no loss)."""
        if self._forward(source, response):
            sink = self._peek_sink
            if sink is not None and isinstance(response, PeekResponse):
                sink(self._delivered(response))
                return
            self._incoming.put(response)

    def _delivered(self, response) -> Any:
        if isinstance(response, PeekResponse):
            with self._lock:
                self._peek_route.pop(response.uuid, None)
        return response

    def try_recv(self) -> Optional[Any]:
        try:
            return self._delivered(self._incoming.get_nowait())
        except queue.Empty:
            return None

    def recv(self, timeout: Optional[float] = None) -> Optional[Any]:
        """The next response, or ``None`` after ``timeout`` seconds (cancel-safe)."""
        try:
            return self._delivered(self._incoming.get(timeout=timeout))
        except queue.Empty:
            return None

    def drain(self) -> list:
        out = []
        while True:
            r = self.try_recv()
            if r is None:
                return out
            out.append(r)


class QueuedEndpoint:
    """A runtime behind a command queue, stepped by hand (tests, the interleaving checker).

    ``process_one()`` applies the next queued command; ``step()`` steps the runtime; both
    forward the runtime's responses to the attached sink.
    """

    def __init__(self, runtime):
        self.runtime = runtime
        self.commands: collections.deque = collections.deque()
        self._sink = None

    def attach(self, sink) -> None:
        self._sink = sink

    def send(self, command) -> None:
        self.commands.append(command)

    def _flush(self) -> None:
        for r in self.runtime.drain_responses():
            if self._sink is not None:
                self._sink(r)

    def process_one(self) -> bool:
        if not self.commands:
            return False
        self.runtime.handle(self.commands.popleft())
        self._flush()
        return True

    def step(self, fuel: Optional[int] = None) -> bool:
        did = self.runtime.step(fuel)
        self._flush()
        return did

    def run_until_quiet(self, max_rounds: int = 10_000) -> None:
        for _ in range(max_rounds):
            did = self.process_one()
            did |= self.step()
            if not did and not self.commands:
                return
        raise AssertionError("runtime did not quiesce")
