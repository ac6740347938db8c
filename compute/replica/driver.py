"""RuntimeDriver: a thread that drives one runtime state machine.

Owns the thread, the runtime's command queue and the wake-up condition.  The thread wakes
on a command, on a storage upper advance (the runtime's waker, fed by StorageCollection
listeners and registry seal/hold callbacks) and on shutdown; between wake-ups it steps the
runtime with bounded fuel while steps do work, checking for new commands between steps,
and pushes every response to the attached sink (the Multiplexer's merged queue).

Invariants: commands are handed to the runtime in arrival order, by one thread at a time:
the driver's, or a sender's while the driver's thread is parked (``send`` applies a read's
command inline, ``assist`` does pending work for a waiting reader; the thread waits while a
sender is inside); a wake-up is never lost (the flag is set and the condition notified
under the same lock the thread checks it under; a wake a writer defers, ``deferred_wakes``,
is notified at the end of its block or before it blocks, unless its own assist did the
work); an exception escaping ``handle`` or ``step`` is reported as a ``Status`` response
and every peek the runtime could not settle is answered with an internal error, so nothing
hangs silently; ``shutdown()`` stops the thread and joins it.

Deliberately not here: any logic of the runtime (tests step runtimes by hand without this).
"""
from __future__ import annotations

import collections
import contextlib
import gc
import sys
import threading
import time
from typing import Any, Callable, Optional

from compute.errors import ComputeProtocolError
from compute.protocol import Status


class SwitchIntervals:
    """The interpreter's switch interval as the minimum of the intervals requested by
    this module's mechanisms (``Urgency``, ``BulkGC``), and the program's own value when
    none is requested.  The program's value is read when the first request arrives; if the
    program changes the interval while requests are active, its change is kept when they end
    (``release`` restores only what this module set)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._requests: dict = {}
        self._saved: Optional[float] = None
        self._set: Optional[float] = None

    def request(self, owner, interval: float) -> None:
        with self._lock:
            if not self._requests:
                self._saved = sys.getswitchinterval()
            self._requests[owner] = interval
            self._apply()

    def release(self, owner) -> None:
        with self._lock:
            if self._requests.pop(owner, None) is not None:
                self._apply()

    def _apply(self) -> None:
        if self._set is not None and sys.getswitchinterval() != self._set:
            self._saved = sys.getswitchinterval()  # the program changed it meanwhile: keep that
        target = min([self._saved] + list(self._requests.values())) if self._requests else self._saved
        if target is not None:
            sys.setswitchinterval(target)
            self._set = sys.getswitchinterval()
        if not self._requests:
            self._saved = self._set = None


#: the process's one ``SwitchIntervals``
SWITCH_INTERVAL = SwitchIntervals()


class Urgency:
    """How many latency-sensitive hand-offs are in flight in this process: commands queued
    for the interactive runtime and not yet worked off, and peek answers delivered to a
    waiting session that has not woken yet.

    All runtimes of the process share one GIL.  A thread that wants it waits up to the
    switch interval (5 ms) while a busy runtime keeps it, and a read crosses threads two or
    three times, so without this a read behind a hydrating dataflow pays tens of
    milliseconds of hand-offs for well under a millisecond of work.  A driver made with
    ``yields_to_urgent`` (maintenance) checks ``pending`` after every bounded step and, while
    it is set, sleeps in short slices (so the GIL is surely released) for at most
    ``YIELD_BUDGET_S``: the interactive work and the woken reader run first, maintenance
    resumes right after.  The budget bounds the cost of a raise that is never lowered.  While
    anything is pending the interpreter's switch interval is ``URGENT_SWITCH_S`` (restored to
    the program's own value when the count returns to zero), so even a thread in the middle
    of a long step hands the GIL over within a fraction of a millisecond.  Process-wide on
    purpose: the GIL is.  Tests: tests/test_latency_mechanisms.py."""

    YIELD_BUDGET_S = 0.003
    SLICE_S = 0.00005
    URGENT_SWITCH_S = 0.0002

    def __init__(self):
        self._lock = threading.Lock()
        self._n = 0

    @property
    def pending(self) -> int:
        return self._n

    def raise_(self, n: int = 1) -> None:
        with self._lock:
            if not self._n and n > 0:
                # while anything is urgent, a thread holding the GIL gives it up after
                # URGENT_SWITCH_S instead of the interpreter's interval (5 ms): the waiting
                # interactive runtime or reader gets in within a fraction of a millisecond
                # even in the middle of a maintenance step
                SWITCH_INTERVAL.request(self, self.URGENT_SWITCH_S)
            self._n += n

    def lower(self, n: int = 1) -> None:
        with self._lock:
            was = self._n
            self._n = max(0, self._n - n)
            if was and not self._n:
                SWITCH_INTERVAL.release(self)  # the program's own setting again, unless busy

    def yield_while_pending(self) -> float:
        """Sleep in slices while anything is pending (bounded); returns the seconds yielded."""
        if not self._n:
            return 0.0
        start = time.perf_counter()
        deadline = start + self.YIELD_BUDGET_S
        while self._n and time.perf_counter() < deadline:
            time.sleep(self.SLICE_S)
        return time.perf_counter() - start


#: the process's one ``Urgency`` (see there)
URGENT = Urgency()


class BulkGC:
    """While any runtime is in a long busy period (a hydration, a large batch), Python's
    cyclic collector runs its young generation every ``BULK_THRESHOLD0`` (10,000) allocations
    instead of every 700.  Building a million-row arrangement allocates millions of tuples; at the
    default threshold every tenth young collection promotes enough of them to trigger a
    full collection, and each full collection walks every structure being built (1M-row
    index: 9 full collections, ~0.7 s of a 2 s build).  The rows are acyclic, so collecting
    them later loses nothing; the process's own thresholds come back when the last busy
    runtime goes idle.  10,000 rather than more: a young collection cannot be interrupted,
    and at 50,000 the middle generation's collections paused every thread for 15-20 ms.
    The oldest generation's threshold goes to ``BULK_THRESHOLD2`` (100 middle-generation
    collections instead of 10) as well: a full collection walks everything being built and
    stops every thread for tens of milliseconds (1M orders: ~0.1 s of load and hydration, and
    most of a busy period's worst read latencies); deferred, it runs after the busy period.
    While busy, the switch interval is also lowered to ``BUSY_SWITCH_S`` (``SwitchIntervals``).
    Process-wide on purpose: the collector is."""

    BULK_THRESHOLD0 = 10_000
    BULK_THRESHOLD2 = 100
    #: while a runtime is busy, threads hand the GIL over after this long: a session waking
    #: to issue a read waits about this long for its turn, not the interpreter's 5 ms
    BUSY_SWITCH_S = 0.001

    def __init__(self):
        self._lock = threading.Lock()
        self._n = 0
        self._saved: Optional[tuple] = None

    def enter(self) -> None:
        with self._lock:
            if not self._n:
                self._saved = gc.get_threshold()
                t0, t1, t2 = self._saved
                if t0:  # 0: the program disabled automatic collection; leave it so
                    gc.set_threshold(*self._bulk(self._saved))
                SWITCH_INTERVAL.request(self, self.BUSY_SWITCH_S)
            self._n += 1

    def _bulk(self, saved: tuple) -> tuple:
        t0, t1, t2 = saved
        return (max(t0, self.BULK_THRESHOLD0), t1, max(t2, self.BULK_THRESHOLD2))

    @property
    def active(self) -> bool:
        """Some runtime is in a long busy period (background work may wait)."""
        return self._n > 0

    def exit(self) -> None:
        with self._lock:
            self._n = max(0, self._n - 1)
            if not self._n and self._saved is not None:
                if self._saved[0] and gc.get_threshold() == self._bulk(self._saved):
                    gc.set_threshold(*self._saved)  # unless the program changed it meanwhile
                self._saved = None
                SWITCH_INTERVAL.release(self)


#: the process's one ``BulkGC``
BULK_GC = BulkGC()
#: consecutive steps with work after which a runtime counts as busy with bulk work (about
#: 20 ms of work: a single change never gets there)
BULK_AFTER_STEPS = 8


_DEFERRED = threading.local()


@contextlib.contextmanager
def deferred_wakes():
    """A block in which wakes may be deferred: once this thread has committed a write in it
    (``defer_wakes``), the wakes runtimes then receive from this thread (``RuntimeDriver.wake``:
    the commit advancing a table's upper, say) flag their work without notifying their
    parked threads; at the end -- or at ``flush_deferred_wakes``, which a caller about to
    block must call first -- every runtime whose flagged work is still waiting is notified.

    A session that commits a write then propagates it itself (``assist``): notified at
    once, the runtime thread woke (an OS wake-up), found the GIL held by the session and
    either lost the work to its ``assist`` or took it first and made the session's read
    wait for a hand-off.  A block that writes nothing defers nothing: a read gains nothing
    from it.  Nested blocks are one block."""
    if getattr(_DEFERRED, "block", False):
        yield
        return
    _DEFERRED.block = True
    _DEFERRED.drivers = None
    try:
        yield
    finally:
        flush_deferred_wakes(end=True)


def defer_wakes() -> None:
    """This thread is committing a write: inside a ``deferred_wakes`` block, defer the wakes
    from now on (outside one, nothing changes)."""
    if getattr(_DEFERRED, "block", False) and _DEFERRED.drivers is None:
        _DEFERRED.drivers = []


def flush_deferred_wakes(end: bool = False) -> None:
    """Notify the runtimes whose wakes this thread deferred and whose work still waits
    (``deferred_wakes``); ``end``: the block is over."""
    drivers = getattr(_DEFERRED, "drivers", None)
    if end:
        _DEFERRED.block = False
        _DEFERRED.drivers = None
    elif drivers is not None:
        _DEFERRED.drivers = []
    for d in drivers or ():
        d._notify_if_woken()


class RuntimeDriver:
    #: seconds of inline stepping a sender may spend before handing the rest to the thread
    INLINE_STEP_BUDGET_S = 0.002

    def __init__(self, runtime, *, fuel: Optional[int] = None, name: Optional[str] = None,
                 start: bool = True, urgent_commands: bool = False, yields_to_urgent: bool = False,
                 urgency: Optional[Urgency] = None, inline_commands: tuple = (),
                 inline_steps: bool = False):
        """``urgent_commands``: each command raises ``urgency`` until this driver has worked
        it off and gone idle (the interactive runtime).  ``yields_to_urgent``: step aside
        while ``urgency`` is pending (maintenance).  ``urgency`` defaults to ``URGENT``.

        ``inline_commands``: command types a sender may apply itself, on its own thread,
        when the runtime is idle (thread parked, nothing queued, no wake-up pending): see
        ``send``.  ``inline_steps``: after such a command the sender also steps the runtime
        while steps do work, for at most ``INLINE_STEP_BUDGET_S`` (the rest is left to the
        thread), and ``assist`` may step it."""
        self.runtime = runtime
        self.fuel = fuel
        self.urgency = URGENT if urgency is None else urgency
        self.urgent_commands = urgent_commands
        self.yields_to_urgent = yields_to_urgent
        self.inline_commands = tuple(inline_commands)
        self.inline_steps = inline_steps
        #: the driver thread owns the runtime (from leaving its wait with work until it
        #: parks again); a sender may apply a command inline only while this is False
        self._running = False
        #: a sender owns the runtime (applying a command inline); the thread waits for it
        self._inline = False
        #: commands applied inline, and ``assist`` calls that stepped (introspection and tests)
        self.inlined = 0
        self.assisted = 0
        #: commands taken whose urgency is lowered when the thread next goes idle
        self._urgent_taken = 0
        #: steps with work since the thread was last idle (``BULK_AFTER_STEPS``)
        self._busy_steps = 0
        self._cond = threading.Condition()
        self._commands: collections.deque = collections.deque()
        self._woken = False
        #: wakes so far (``_step_inline`` tells a wake its own last step saw from a later one)
        self._wake_seq = 0
        self._stopping = False
        self._sink: Optional[Callable[[Any], None]] = None
        self._early: list = []
        #: exceptions seen (for introspection and tests)
        self.errors: list[BaseException] = []
        runtime.set_waker(self.wake)
        self._thread = threading.Thread(target=self._run, name=name or f"mzlite-{runtime.role}",
                                        daemon=True)
        if start:
            self._thread.start()

    # ------------------------------------------------------------ endpoint interface
    def attach(self, sink: Callable[[Any], None]) -> None:
        with self._cond:
            self._sink = sink
            early, self._early = self._early, []
        for r in early:
            sink(r)

    def send(self, command) -> None:
        """Queue ``command`` for the thread (dropped after ``shutdown``: nothing runs then),
        or, for an ``inline_commands`` type while the runtime is idle, apply it on the
        caller's thread.

        Waking a parked thread costs an OS wake-up and a GIL hand-off (100-200 us each here),
        and a read crosses to the runtime and back: most of a fast-path read's latency when
        the runtime has nothing else to do.  Applied inline, the answer reaches the waiting
        controller on the sender's own thread.  Order and exclusion are kept: a command is
        inlined only when nothing is queued, no wake-up is pending and the thread is parked;
        while it runs, later commands queue and the thread waits for the sender to finish
        (``_inline``).  A busy runtime never inlines, so a sender never waits for it."""
        with self._cond:
            if self._stopping:
                return
            if (self.inline_commands and isinstance(command, self.inline_commands)
                    and not (self._running or self._inline or self._commands or self._woken)
                    and self._thread.is_alive()):
                self._inline = True
            else:
                self._commands.append(command)
                if self.urgent_commands:
                    self.urgency.raise_()
                self._cond.notify()
                return
        self.inlined += 1
        self._work_inline((command,))

    def _work_inline(self, commands) -> None:
        """The runtime's work on this thread, which has claimed it (``_inline``): ``commands``
        in order, then bounded steps (``inline_steps``), in the runtime thread's numeric
        context (``_run``); then the claim is released and the thread told of what came
        meanwhile."""
        import decimal

        from repr.numeric import NUMERIC_CONTEXT
        try:
            with decimal.localcontext(NUMERIC_CONTEXT):
                for c in commands:
                    self._handle_one(c)
                if self.inline_steps:
                    self._step_inline()
        finally:
            with self._cond:
                self._inline = False
                if self._commands or self._woken or self._stopping:
                    self._cond.notify()

    def _handle_one(self, command) -> None:
        """``handle(command)``, a failure reported (``_failed``), the responses emitted."""
        try:
            self.runtime.handle(command)
        except Exception as e:
            self._failed(f"handling {type(command).__name__}", e)
        self._emit(self.runtime.drain_responses())

    def _step_once(self) -> bool:
        """One bounded ``step``, a failure reported, the responses emitted; whether it did work."""
        try:
            did = self.runtime.step(self.fuel)
        except Exception as e:
            self._failed("step", e)
            did = False
        self._emit(self.runtime.drain_responses())
        return did

    def _step_inline(self) -> None:
        """Step while steps do work, for at most ``INLINE_STEP_BUDGET_S``; what is left is
        the thread's (``_woken`` is set; the caller's release notifies the thread)."""
        deadline = time.perf_counter() + self.INLINE_STEP_BUDGET_S
        while True:
            with self._cond:
                seq = self._wake_seq
            if not self._step_once():
                # A step that found nothing to do saw every wake that came before it (those
                # its own work raised, say: a view's output advancing the index on it), so
                # they are spent; only a wake since then still needs the thread.
                with self._cond:
                    if self._wake_seq == seq:
                        self._woken = False
                return
            if time.perf_counter() >= deadline:
                with self._cond:
                    self._woken = True
                return

    def assist(self) -> bool:
        """Do the runtime's pending work on the caller's thread if its thread is parked with
        work waiting (queued commands, a wake-up): the commands in order, then steps for at
        most ``INLINE_STEP_BUDGET_S``; whether anything was done.  A reader waiting for its
        answer calls this: the work its answer waits for (a write propagating through
        maintenance, a parked peek) then runs at once on the reader's thread instead of after
        two thread wake-ups.  A runtime whose thread is on it is left alone."""
        if not self.inline_steps:  # assisting is stepping: only where inline steps are allowed
            return False
        with self._cond:
            if (self._running or self._inline or self._stopping or not (self._commands or self._woken)
                    or not self._thread.is_alive()):
                return False
            self._inline = True
            self._woken = False
            commands = list(self._commands)
            self._commands.clear()
        self.assisted += 1
        try:
            self._work_inline(commands)
        finally:
            if self.urgent_commands and commands:
                self.urgency.lower(len(commands))  # raised by ``send`` when they were queued
        return True

    def wake(self) -> None:
        """Called from any thread when external progress may enable a step.  Inside
        ``deferred_wakes`` on the calling thread the work is flagged but the parked thread
        is not notified until the block ends (by then the caller has usually done the work
        itself: ``assist``)."""
        pending = getattr(_DEFERRED, "drivers", None)
        with self._cond:
            self._woken = True
            self._wake_seq += 1
            if pending is None:
                self._cond.notify()
                return
        if self not in pending:
            pending.append(self)

    def _notify_if_woken(self) -> None:
        """A deferred wake's notification, if the work it flagged is still waiting."""
        with self._cond:
            if self._woken or self._commands:
                self._cond.notify()

    def start(self) -> None:
        self._thread.start()

    def shutdown(self, timeout: Optional[float] = 5.0) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.runtime.set_waker(None)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # ------------------------------------------------------------ the thread
    def _end_busy_period(self) -> None:
        if self._busy_steps >= BULK_AFTER_STEPS:
            BULK_GC.exit()
        self._busy_steps = 0

    def _emit(self, responses: list) -> None:
        if not responses:
            return
        with self._cond:
            sink = self._sink
            if sink is None:
                self._early.extend(responses)
                return
        for r in responses:
            sink(r)

    def _failed(self, where: str, exc: BaseException) -> None:
        self.errors.append(exc)
        kind = "protocol error" if isinstance(exc, ComputeProtocolError) else "internal error"
        msg = f"{self.runtime.role} runtime: {kind} in {where}: {exc}"
        out = self.runtime.drain_responses()
        out.append(Status(msg))
        self._emit(out)
        if not isinstance(exc, ComputeProtocolError):
            # a bug: the runtime's state is suspect; settle every peek rather than hang
            try:
                self.runtime.fail_pending_peeks(msg)
            except Exception as e2:  # pragma: no cover - last resort
                self.errors.append(e2)
            self._emit(self.runtime.drain_responses())

    def _run(self) -> None:
        # Aggregates add Decimals with plain ``+``, which uses the thread's context: give the
        # runtime thread numeric's working precision, not Python's default 28 digits.
        import decimal

        from repr.numeric import NUMERIC_CONTEXT
        decimal.setcontext(NUMERIC_CONTEXT.copy())
        while True:
            with self._cond:
                while self._inline or (not self._commands and not self._woken and not self._stopping):
                    self._running = False  # parked: a sender may apply a command inline
                    if self._urgent_taken:  # idle: what was urgent is worked off
                        self.urgency.lower(self._urgent_taken)
                        self._urgent_taken = 0
                    self._end_busy_period()
                    self._cond.wait()
                self._running = True
                if self._stopping:
                    self._end_busy_period()
                    if self._urgent_taken:
                        self.urgency.lower(self._urgent_taken)
                        self._urgent_taken = 0
                    if self.urgent_commands and self._commands:
                        self.urgency.lower(len(self._commands))
                    return
                commands = list(self._commands)
                self._commands.clear()
                self._woken = False
                if self.urgent_commands:
                    self._urgent_taken += len(commands)
            for c in commands:
                self._handle_one(c)
            # step while there is work, yielding to new commands between steps
            while True:
                self._busy_steps += 1
                if self._busy_steps == BULK_AFTER_STEPS:
                    BULK_GC.enter()  # left when the thread next goes idle
                did = self._step_once()
                with self._cond:
                    if self._commands or self._stopping:
                        break
                if not did:
                    break
                if self.yields_to_urgent and self.urgency.pending:
                    self.urgency.yield_while_pending()
                    continue
                # Between bounded activations, hand the GIL to any thread that wants it (the
                # interactive runtime, the controller, a waiting session): without this a busy
                # runtime keeps it for a whole switch interval, and every hop of a read's
                # round trip waits that long.
                time.sleep(0)
