"""The shared-arrangement registry: how maintenance publishes arrangements to interactive.

Owns the *publication points* (slots): one per published index id, holding the
maintenance runtime's oks/errs spines, the published ``since`` and ``upper``, the
controller's compaction request as the publisher applied it, the standing holds of the
importing runtimes, and the live readers' holds.

Invariants protected here:

* **One slot per id, adopted in place.**  Whichever side touches an id first creates its
  slot (a placeholder).  ``publish`` adopts the placeholder; it never replaces a slot a
  reader already holds, and publishing twice is a ``ComputeProtocolError``.
* **The publisher never compacts past a hold.**  The published ``since`` only advances,
  and only to the meet of: the controller's request as applied by the publisher, every
  registered standing holder's applied hold (for non-transient ids; a holder that has
  applied nothing yet pins ``since`` where it is), and every live reader's hold.  A
  reader releasing with the empty frontier removes its hold; it never zeroes the meet.
* **No lost wake-ups.**  Every check of ``upper`` and every wait happens under one
  condition variable, and the publisher advances ``upper`` and notifies under it;
  ``on_seal`` callbacks are registered before the caller's check and fired after the
  advance, outside the lock.
* **A snapshot import holds only immutable batches.**  ``import_snapshot_at`` returns the
  spines' ``ReadHandle``s of the moment, bounded one step past ``as_of``
  (``compute.arrangement.read``); no hold survives it.

Threads: the publisher (maintenance runtime) is the only caller that mutates spines
(``set_logical_compaction``), always on its own thread; other threads only change holds
and then wake the publisher, which applies them in ``apply_compactions``.

Deliberately not here: deciding what to publish (the maintenance runtime publishes every
index export) and routing (the Multiplexer).  The ``standing_holds`` switch exists only so
tests can show what breaks without the mechanism.
"""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, Iterable, NamedTuple, Optional

from compute.arrangement.read import ReadHandle
from compute.errors import ComputeProtocolError
from repr.ids import GlobalId
from repr.timestamp import MIN, Frontier, frontier_le, frontier_min


class PublisherFailed(Exception):
    """The publisher's dataflow failed: the index will never advance again.  Not a protocol
    violation; readers answer their peeks with an internal error instead of waiting."""


class SharedImport(NamedTuple):
    """An imported index as a dataflow sees it (``ImportedIndex``): frozen oks and errs
    (``ReadHandle``s bounded one step past the import's ``as_of``)."""
    oks: ReadHandle
    errs: ReadHandle


# ---------------------------------------------------------------- publication points


class PublicationPoint:
    """One published index.  All fields are guarded by the registry's condition."""

    def __init__(self, id: GlobalId):
        self.id = id
        #: the publisher's spines; ``None`` while this is a placeholder
        self.oks: Any = None
        self.errs: Any = None
        #: set once by ``publish``; never reset (a slot is adopted once)
        self.adopted = False
        #: the publisher dropped the export; importers are refused from then on
        self.closed = False
        #: the publisher's dataflow failed with this message; readers stop waiting
        self.failed: Optional[str] = None
        #: published since (only advances); ``MIN`` for a placeholder
        self.since: Frontier = MIN
        #: published upper (only advances); ``MIN`` for a placeholder
        self.upper: Frontier = MIN
        #: the controller's AllowCompaction as the publisher applied it (only advances);
        #: ``MIN`` until the first one: the adopted spine's own since bounds it then
        self.requested: Frontier = MIN
        #: holder name -> the frontier that runtime's stream has applied (only advances)
        self.standing: dict[str, Frontier] = {}
        #: reader token -> held time (each only advances; released tokens are removed)
        self.readers: dict[int, int] = {}
        #: holds changed since the publisher last applied compaction
        self.dirty = False
        #: callbacks fired after ``upper`` advances, after adoption, and at close
        self.on_seal: list[Callable[[], None]] = []


class ReadHold:
    """A live reader's hold on a publication point; ``release()`` gives it up."""

    def __init__(self, registry: "SharedArrangementRegistry", id: GlobalId, token: int, time: int):
        self.registry = registry
        self.id = id
        self.token = token
        self.time: Frontier = time

    def downgrade(self, frontier: Frontier) -> None:
        self.registry._downgrade(self, frontier)

    def release(self) -> None:
        self.registry._downgrade(self, None)

    @property
    def released(self) -> bool:
        return self.time is None


class SharedArrangementRegistry:
    """Publication points keyed by index id, shared by the two runtimes of a replica."""

    def __init__(self, *, standing_holds: bool = True):
        #: test-only switch: ``False`` lets the publisher ignore standing holds
        self.standing_holds_enabled = standing_holds
        self._cond = threading.Condition(threading.RLock())
        self._slots: dict[GlobalId, PublicationPoint] = {}
        #: ids the publisher has dropped; never reused (the controller never reuses ids)
        self._retired: set[GlobalId] = set()
        #: runtimes whose applied AllowCompaction bounds the publisher
        self._holders: list[str] = []
        self._publisher_wakers: list[Callable[[], None]] = []
        self._tokens = itertools.count(1)

    # ------------------------------------------------------------ registration
    def register_standing_holder(self, holder: str) -> None:
        with self._cond:
            if holder not in self._holders:
                self._holders.append(holder)

    def add_publisher_waker(self, fn: Callable[[], None]) -> None:
        with self._cond:
            self._publisher_wakers.append(fn)

    def _slot(self, id: GlobalId) -> PublicationPoint:
        """Get or create the slot (a placeholder when the reader is first).  Lock held."""
        slot = self._slots.get(id)
        if slot is None:
            slot = PublicationPoint(id)
            self._slots[id] = slot
        return slot

    # ------------------------------------------------------------ the publisher
    def publish(self, id: GlobalId, oks: Any, errs: Any) -> None:
        """Adopt ``id``'s slot (creating it if no reader came first) with these spines."""
        with self._cond:
            if id in self._retired:
                raise ComputeProtocolError(f"publish of {id}: the id was already dropped")
            slot = self._slot(id)
            if slot.adopted:
                raise ComputeProtocolError(f"publish of {id}: already published; a slot is adopted once")
            slot.oks, slot.errs = oks, errs
            slot.adopted = True
            slot.failed = None  # an id refused before (``fail(create=True)``) and hosted now
            slot.since = oks.since
            slot.upper = oks.upper
            slot.dirty = True
            callbacks = list(slot.on_seal)
            self._cond.notify_all()
        self._fire(callbacks)

    def note_upper(self, id: GlobalId) -> bool:
        """The publisher advanced ``id``'s spines: publish the new upper and wake waiters."""
        with self._cond:
            slot = self._slots.get(id)
            if slot is None or not slot.adopted:
                return False
            upper = frontier_min(slot.oks.upper, slot.errs.upper)
            if upper == slot.upper or frontier_le(upper, slot.upper):
                return False
            slot.upper = upper
            callbacks = list(slot.on_seal)
            self._cond.notify_all()
        self._fire(callbacks)
        return True

    def allow_compaction(self, id: GlobalId, frontier: Frontier) -> None:
        """The publisher applied the controller's ``AllowCompaction(id, frontier)``."""
        with self._cond:
            slot = self._slots.get(id)
            if slot is None:
                return
            if frontier_le(slot.requested, frontier):
                slot.requested = frontier
                slot.dirty = True

    def apply_compactions(self) -> bool:
        """Advance every dirty slot's since to its compaction target; returns True on change."""
        changed = False
        with self._cond:
            for slot in self._slots.values():
                if slot.dirty and slot.adopted and not slot.closed:
                    slot.dirty = False
                    target = self._target(slot)
                    if target is not None and frontier_le(slot.since, target) and target != slot.since:
                        slot.since = target
                        slot.oks.set_logical_compaction(target)
                        slot.errs.set_logical_compaction(target)
                        changed = True
        return changed

    def _target(self, slot: PublicationPoint) -> Frontier:
        """The meet of the request and every hold, never below the current since.  Lock held."""
        t: Frontier = slot.requested
        if self.standing_holds_enabled and not slot.id.is_transient():
            for holder in self._holders:
                t = frontier_min(t, slot.standing.get(holder, MIN))
        for held in slot.readers.values():
            t = frontier_min(t, held)
        if t is None:  # everything released: the drop (unpublish) ends the slot, not compaction
            return None
        return t if frontier_le(slot.since, t) else slot.since

    def compaction_target(self, id: GlobalId) -> Frontier:
        with self._cond:
            slot = self._slots.get(id)
            return None if slot is None else self._target(slot)

    def unpublish(self, id: GlobalId) -> None:
        """The publisher dropped the export: close the slot, wake and refuse importers."""
        with self._cond:
            slot = self._slots.pop(id, None)
            self._retired.add(id)
            if slot is None:
                return
            slot.closed = True
            callbacks = list(slot.on_seal)
            self._cond.notify_all()
        self._fire(callbacks)

    def fail(self, id: GlobalId, message: str, create: bool = False) -> None:
        """The publisher's dataflow failed: wake every waiter so it answers, not hangs.
        ``create``: also when nothing was published or awaited yet (a refused dataflow's
        export: a reader that comes later must find the failure, not wait for a publisher)."""
        with self._cond:
            slot = self._slot(id) if create else self._slots.get(id)
            if slot is None:
                return
            slot.failed = message
            callbacks = list(slot.on_seal)
            self._cond.notify_all()
        self._fire(callbacks)

    # ------------------------------------------------------------ holders and readers
    def set_standing_hold(self, id: GlobalId, holder: str, frontier: Frontier) -> None:
        """Runtime ``holder`` applied ``AllowCompaction(id, frontier)`` on its own stream."""
        with self._cond:
            if id in self._retired:
                return
            slot = self._slot(id)
            current = slot.standing.get(holder, MIN)
            if frontier_le(current, frontier):
                slot.standing[holder] = frontier
                slot.dirty = True
            wakers = list(self._publisher_wakers)
        self._fire(wakers)

    def standing_hold(self, id: GlobalId, holder: str) -> Frontier:
        with self._cond:
            slot = self._slots.get(id)
            return MIN if slot is None else slot.standing.get(holder, MIN)

    def acquire_read_hold(self, id: GlobalId, time: int, holder: str) -> ReadHold:
        """Hold ``id`` at ``time`` for a reader of runtime ``holder``; refuses loudly if the
        published since has already passed ``time``."""
        with self._cond:
            if id in self._retired:
                raise ComputeProtocolError(f"cannot hold {id} at {time}: the index was dropped")
            slot = self._slot(id)
            if slot.adopted and not frontier_le(slot.since, time):
                raise ComputeProtocolError(self._refusal(slot, time, holder))
            token = next(self._tokens)
            slot.readers[token] = time
            return ReadHold(self, id, token, time)

    def _downgrade(self, hold: ReadHold, frontier: Frontier) -> None:
        with self._cond:
            if hold.time is None:
                return
            if not frontier_le(hold.time, frontier):
                raise ComputeProtocolError(f"read hold on {hold.id} regressed {hold.time} -> {frontier}")
            slot = self._slots.get(hold.id)
            hold.time = frontier
            if slot is not None:
                if frontier is None:  # release: give the hold up, never zero the meet
                    slot.readers.pop(hold.token, None)
                else:
                    slot.readers[hold.token] = frontier
                slot.dirty = True
            wakers = list(self._publisher_wakers)
        self._fire(wakers)

    def on_seal(self, id: GlobalId, callback: Callable[[], None]) -> None:
        """Call ``callback`` after every upper advance of ``id`` (register before checking)."""
        with self._cond:
            if id in self._retired:
                pass
            else:
                self._slot(id).on_seal.append(callback)
                return
        callback()

    def remove_on_seal(self, id: GlobalId, callback: Callable[[], None]) -> None:
        with self._cond:
            slot = self._slots.get(id)
            if slot is not None:
                try:
                    slot.on_seal.remove(callback)
                except ValueError:
                    pass

    def _refusal(self, slot: PublicationPoint, as_of: int, holder: str) -> str:
        head = f"cannot import {slot.id} at as_of {as_of}: its since {slot.since} has passed as_of"
        if holder not in self._holders:
            return head + f"; runtime {holder!r} holds no standing hold on it"
        h = slot.standing.get(holder, MIN)
        if h == slot.since:
            return (head + f"; the {holder} runtime's standing hold is {h}, equal to the refusing"
                    " since: it applied that compaction before building, so the arrangement was"
                    " legitimately compacted (the controller released its read hold too early)")
        return (head + f"; the {holder} runtime's standing hold is {h}, below the refusing since:"
                " the publisher escaped its bound (a defect)")

    # ------------------------------------------------------------ importing and reading
    def try_import_snapshot_at(self, id: GlobalId, as_of: int, holder: str) -> Optional[SharedImport]:
        """The snapshot of ``id`` at ``as_of`` once sealed (upper past as_of), else ``None``.
        Refuses loudly when since has passed ``as_of`` or the index was dropped."""
        with self._cond:
            return self._try_import(id, as_of, holder)

    def _readable(self, id: GlobalId, what: str) -> Optional[PublicationPoint]:
        """``id``'s slot once adopted (``None`` while a placeholder); refuses a dropped id
        (``what`` names the refused read) and a failed publisher.  Lock held."""
        if id in self._retired:
            raise ComputeProtocolError(f"{what}: the index was dropped")
        slot = self._slot(id)
        if slot.failed is not None:
            raise PublisherFailed(slot.failed)  # names the dataflow that failed (``RuntimeCore._fail``)
        return slot if slot.adopted else None

    def _try_import(self, id: GlobalId, as_of: int, holder: str) -> Optional[SharedImport]:
        slot = self._readable(id, f"cannot import {id} at as_of {as_of}")
        if slot is None:
            return None
        if not frontier_le(slot.since, as_of):
            raise ComputeProtocolError(self._refusal(slot, as_of, holder))
        if slot.upper is not None and slot.upper <= as_of:
            return None
        return SharedImport(slot.oks.read_handle().frozen_at(as_of), slot.errs.read_handle().frozen_at(as_of))

    def import_snapshot_at(self, id: GlobalId, as_of: int, holder: str = "interactive",
                           timeout: Optional[float] = None) -> Optional[SharedImport]:
        """Blocking form: wait (under the condition) for the seal; ``None`` on timeout."""
        with self._cond:
            got = self._try_import(id, as_of, holder)
            if got is not None:
                return got
            self._cond.wait_for(lambda: (id in self._retired or self._slot(id).failed is not None
                                         or self._try_import(id, as_of, holder) is not None), timeout)
            return self._try_import(id, as_of, holder)

    def read_published(self, id: GlobalId) -> Optional[tuple[ReadHandle, ReadHandle]]:
        """The current (unbounded) read handles of an adopted slot's oks/errs, else ``None``."""
        with self._cond:
            slot = self._readable(id, f"read of {id}")
            return None if slot is None else (slot.oks.read_handle(), slot.errs.read_handle())

    # ------------------------------------------------------------ introspection
    def since(self, id: GlobalId) -> Frontier:
        with self._cond:
            slot = self._slots.get(id)
            return None if slot is None else slot.since

    def upper(self, id: GlobalId) -> Frontier:
        with self._cond:
            slot = self._slots.get(id)
            return None if slot is None else slot.upper

    def slot(self, id: GlobalId) -> Optional[PublicationPoint]:
        with self._cond:
            return self._slots.get(id)

    def ids(self) -> list[GlobalId]:
        with self._cond:
            return sorted(self._slots)

    def reader_holds(self, id: GlobalId) -> list[int]:
        with self._cond:
            slot = self._slots.get(id)
            return [] if slot is None else sorted(slot.readers.values())

    @staticmethod
    def _fire(callbacks: Iterable[Callable[[], None]]) -> None:
        for fn in callbacks:
            fn()
