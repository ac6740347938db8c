"""Exhaustive schedules of real code on real threads: a small deterministic model checker.

``explore(make, check)`` runs a scenario again and again, each time under a different
schedule, until every schedule has been tried.  A scenario (``make()``) builds fresh
objects and returns its actors (name -> callable); each actor runs on its own thread, but
only one runs at a time.  An actor stops at every *point*: where the code under test takes
a ``SchedLock`` (the scenario puts them in place of the objects' ``threading`` locks) or
calls ``Scheduler.point`` (the scenario wraps the operations whose order matters, such as a
collection's ``append`` and ``advance_upper``).  At each point the schedule decides which
runnable actor goes next; an actor waiting for a lock another actor holds is not runnable.
Exploration is depth-first over those decisions, so the schedules tried are exactly the
distinct interleavings of the actors' steps between points.

Owns the scheduler, the lock stand-in and the exploration.  Invariant: at most one actor
thread runs at any moment, and which one is a function of the schedule alone, so a schedule
replays exactly.  Deliberately not here: what the scenario checks (``check`` runs after each
schedule with the scenario's objects and the actors' exceptions).
"""
from __future__ import annotations

import threading
from typing import Callable, Optional

#: how long the scheduler waits for an actor to reach its next point (a hang is a bug)
STEP_TIMEOUT_S = 10.0


class Deadlock(AssertionError):
    """Every unfinished actor waits for a lock: the code under test can deadlock."""


class Scheduler:
    def __init__(self, choices: list[int]):
        #: the decisions to replay (an index into the runnable actors, in name order)
        self.choices = list(choices)
        #: at each decision taken: how many actors were runnable (the exploration's fan-out)
        self.fanout: list[int] = []
        self.trace: list[tuple[str, str]] = []
        self._cv = threading.Condition()
        self._running: Optional[str] = None
        self._done: set[str] = set()
        self._blocked: dict[str, "SchedLock"] = {}
        self._local = threading.local()
        self.errors: dict[str, BaseException] = {}

    # ---------------------------------------------------------------- called by actors
    def point(self, label: str = "") -> None:
        """Stop here; go on when the schedule picks this actor again."""
        me = getattr(self._local, "name", None)
        if me is None:  # not an actor thread (set-up code): no scheduling
            return
        with self._cv:
            self.trace.append((me, label))
            self._running = None
            self._cv.notify_all()
            self._cv.wait_for(lambda: self._running == me)

    def _block(self, lock: "SchedLock") -> None:
        me = self._local.name
        with self._cv:
            self._blocked[me] = lock
            self._running = None
            self._cv.notify_all()
            self._cv.wait_for(lambda: self._running == me)

    def _unblock_waiters(self, lock: "SchedLock") -> None:
        with self._cv:
            for name in [n for n, lk in self._blocked.items() if lk is lock]:
                del self._blocked[name]

    # ---------------------------------------------------------------- the run
    def run(self, actors: dict[str, Callable[[], None]]) -> None:
        names = sorted(actors)

        def body(name):
            self._local.name = name
            with self._cv:
                self._cv.wait_for(lambda: self._running == name)
            try:
                actors[name]()
            except BaseException as e:  # noqa: BLE001 - reported to the check
                self.errors[name] = e
            finally:
                with self._cv:
                    self._done.add(name)
                    self._running = None
                    self._cv.notify_all()

        threads = [threading.Thread(target=body, args=(n,), daemon=True) for n in names]
        for th in threads:
            th.start()
        step = 0
        while True:
            with self._cv:
                if len(self._done) == len(names):
                    break
                runnable = [n for n in names if n not in self._done and n not in self._blocked]
                if not runnable:
                    raise Deadlock(f"every actor waits for a lock: {sorted(self._blocked)}")
                pick = self.choices[step] if step < len(self.choices) else 0
                self.fanout.append(len(runnable))
                step += 1
                self._running = runnable[pick]
                self._cv.notify_all()
                if not self._cv.wait_for(lambda: self._running is None, timeout=STEP_TIMEOUT_S):
                    raise AssertionError(f"actor {self._running} did not reach a point in {STEP_TIMEOUT_S} s")
        for th in threads:
            th.join(STEP_TIMEOUT_S)


class SchedLock:
    """A ``threading.Lock``/``RLock`` stand-in whose acquisition is a scheduling point."""

    def __init__(self, sched: Scheduler, name: str = "lock", reentrant: bool = False, point: bool = True):
        self._sched = sched
        self.name = name
        self._reentrant = reentrant
        #: whether acquiring is a scheduling point; False: the acquirer goes straight on when
        #: the lock is free (fewer schedules, for locks whose acquisition order is already
        #: decided by an explicit point just before), and still waits when it is held
        self._point = point
        self._owner: Optional[str] = None
        self._depth = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        s = self._sched
        me = getattr(s._local, "name", None)
        if self._point:
            s.point(f"acquire {self.name}")
        while True:
            if self._owner is None or (self._reentrant and self._owner == me):
                self._owner = me
                self._depth += 1
                return True
            if not blocking or me is None:
                return False
            s._block(self)

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
            self._sched._unblock_waiters(self)

    __enter__ = acquire

    def __exit__(self, *exc) -> None:
        self.release()


def explore(make: Callable[[Scheduler], tuple[dict[str, Callable[[], None]], object]],
            check: Callable[[object, Scheduler], None], *, limit: int = 100_000) -> int:
    """Run ``make(sched)`` under every schedule and ``check(state, sched)`` after each;
    returns how many schedules were tried.  ``make`` returns ``(actors, state)``."""
    pending: list[list[int]] = [[]]
    tried = 0
    while pending:
        prefix = pending.pop()
        sched = Scheduler(prefix)
        actors, state = make(sched)
        sched.run(actors)
        check(state, sched)
        tried += 1
        if tried > limit:
            raise AssertionError(f"more than {limit} schedules: make the scenario smaller")
        # every decision past the prefix took choice 0; its siblings are new schedules
        taken = prefix + [0] * (len(sched.fanout) - len(prefix))
        for i in range(len(prefix), len(sched.fanout)):
            for alt in range(1, sched.fanout[i]):
                pending.append(taken[:i] + [alt])
    return tried
