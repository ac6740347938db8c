"""RuntimeDriver: a thread that drives one runtime state machine.

Owns the thread, the runtime's command queue and the wake-up condition, and the two
drivers' policies (``DriverPolicy``, chosen by ``RuntimeDriver.for_maintenance`` and
``RuntimeDriver.for_interactive``).  The thread wakes on a command, on a storage upper
advance (the runtime's waker, fed by StorageCollection listeners and registry seal/hold
callbacks) and on shutdown; between wake-ups it steps the runtime with bounded fuel while
steps do work, checking for new commands between steps, and pushes every response to the
attached sink (the Multiplexer's merged queue).

Invariants: commands are handed to the runtime in arrival order, by one thread at a time:
the driver's, or a sender's while the driver's thread is parked (``send`` applies a read's
command inline, ``assist`` does pending work for a waiting reader; the thread waits while a
sender is inside); a wake-up is never lost (the flag is set and the condition notified
under the same lock the thread checks it under; a wake a writer defers, ``deferred_wakes``,
is notified at the end of its block or before it blocks, unless its own assist did the
work); an exception escaping ``handle`` or ``step`` is reported as a ``Status`` response
and every peek the runtime could not settle is answered with an internal error, so nothing
hangs silently; ``shutdown()`` stops the thread and joins it.

Deliberately not here: any logic of the runtime (tests step runtimes by hand without this),
and the process-wide settings urgency and busy periods request (``compute.replica.scheduling``).
"""
from __future__ import annotations

import collections
import contextlib
from dataclasses import dataclass
import threading
import time
from typing import Any, Callable, Optional

from compute.errors import ComputeProtocolError
from compute.protocol import AllowCompaction, CancelPeek, CreateDataflow, Peek, Schedule, Status
from compute.replica.scheduling import BULK_AFTER_STEPS, BULK_GC, URGENT, Urgency


@dataclass(frozen=True)
class DriverPolicy:
    """What differs between the drivers of the two runtimes (chosen by the named
    constructors of ``RuntimeDriver``; tests of the mechanisms build their own)."""

    #: command types a sender may apply itself, on its own thread, while the runtime is idle
    #: (thread parked, nothing queued, no wake-up pending): ``RuntimeDriver.send``
    inline_commands: tuple = ()
    #: after such a command the sender also steps the runtime while steps do work, for at
    #: most ``RuntimeDriver.INLINE_STEP_BUDGET_S`` (the rest is left to the thread), and
    #: ``RuntimeDriver.assist`` may step it
    inline_steps: bool = False
    #: each queued command raises the urgency until this driver has worked it off and gone
    #: idle (``compute.replica.scheduling.Urgency``)
    urgent_commands: bool = False
    #: step aside between steps while the urgency is pending
    yields_to_urgent: bool = False


#: Maintenance steps aside (briefly) for the interactive runtime and for readers being woken
#: with an answer.  A sender may apply a peek inline, never its other commands: those may
#: start long work (a hydration), which is its thread's.
MAINTENANCE_POLICY = DriverPolicy(inline_commands=(Peek, CancelPeek), inline_steps=True, yields_to_urgent=True)
#: The interactive runtime's commands are urgent, and a sender may apply everything a read
#: sends inline and step its peek dataflows briefly: a read then needs no thread hop.
INTERACTIVE_POLICY = DriverPolicy(inline_commands=(Peek, CancelPeek, CreateDataflow, Schedule, AllowCompaction),
                                  inline_steps=True, urgent_commands=True)


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

    @classmethod
    def for_maintenance(cls, runtime, **kw) -> "RuntimeDriver":
        """The maintenance runtime's driver (``MAINTENANCE_POLICY``)."""
        return cls(runtime, MAINTENANCE_POLICY, **kw)

    @classmethod
    def for_interactive(cls, runtime, **kw) -> "RuntimeDriver":
        """The interactive runtime's driver (``INTERACTIVE_POLICY``)."""
        return cls(runtime, INTERACTIVE_POLICY, **kw)

    def __init__(self, runtime, policy: DriverPolicy, *, fuel: Optional[int] = None, name: Optional[str] = None,
                 start: bool = True, urgency: Optional[Urgency] = None):
        """``policy``: see ``DriverPolicy``; ``urgency`` defaults to the process's ``URGENT``."""
        self.runtime = runtime
        self.policy = policy
        self.fuel = fuel
        self.urgency = URGENT if urgency is None else urgency
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
        if hasattr(runtime, "set_flusher"):  # a subscribe's batch leaves mid-step (``RuntimeCore.step``)
            runtime.set_flusher(lambda: self._emit(self.runtime.drain_responses()))
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
        or, for a type of the policy's ``inline_commands`` while the runtime is idle, apply it
        on the caller's thread.

        Waking a parked thread costs an OS wake-up and a GIL hand-off, and a read crosses to
        the runtime and back: most of a fast-path read's latency when the runtime has nothing
        else to do.  Applied inline, the answer reaches the waiting controller on the sender's
        own thread.  Order and exclusion are kept: a command is
        inlined only when nothing is queued, no wake-up is pending and the thread is parked;
        while it runs, later commands queue and the thread waits for the sender to finish
        (``_inline``).  A busy runtime never inlines, so a sender never waits for it."""
        with self._cond:
            if self._stopping:
                return
            policy = self.policy
            if (policy.inline_commands and isinstance(command, policy.inline_commands)
                    and not (self._running or self._inline or self._commands or self._woken)
                    and self._thread.is_alive()):
                self._inline = True
            else:
                self._commands.append(command)
                if policy.urgent_commands:
                    self.urgency.raise_()
                self._cond.notify()
                return
        self.inlined += 1
        self._work_inline((command,))

    def _work_inline(self, commands) -> None:
        """The runtime's work on this thread, which has claimed it (``_inline``): ``commands``
        in order, then bounded steps (the policy's ``inline_steps``), in the runtime thread's numeric
        context (``_run``); then the claim is released and the thread told of what came
        meanwhile."""
        import decimal

        from repr.numeric import NUMERIC_CONTEXT
        try:
            with decimal.localcontext(NUMERIC_CONTEXT):
                for c in commands:
                    self._handle_one(c)
                if self.policy.inline_steps:
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
        if not self.policy.inline_steps:  # assisting is stepping: only where inline steps are allowed
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
            if self.policy.urgent_commands and commands:
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
                    if self.policy.urgent_commands and self._commands:
                        self.urgency.lower(len(self._commands))
                    return
                commands = list(self._commands)
                self._commands.clear()
                self._woken = False
                if self.policy.urgent_commands:
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
                if self.policy.yields_to_urgent and self.urgency.pending:
                    self.urgency.yield_while_pending()
                    continue
                # Between bounded activations, hand the GIL to any thread that wants it (the
                # interactive runtime, the controller, a waiting session): without this a busy
                # runtime keeps it for a whole switch interval, and every hop of a read's
                # round trip waits that long.
                time.sleep(0)
