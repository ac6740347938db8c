"""The inline hand-off: an idle runtime's work done on the thread that waits for it.

- ``RuntimeDriver.send``: a command of the policy's ``inline_commands`` sent while the
  runtime's thread is parked (nothing queued, no wake-up pending) is applied on the sender's
  thread;
- ``RuntimeDriver.assist``: a reader waiting for an answer does a parked runtime's pending
  work (queued commands, a wake-up) on its own thread, within a budget;
- both keep the runtime's one-owner-at-a-time rule and its command order.

Every test synchronises on events the code under test sets, never on timed sleeps: one
``time.sleep`` stands for a step's work, and one bounded ``time.sleep(0)`` spin waits for a
state the condition exposes (the thread registered as waiting), not for time to pass.
"""
from __future__ import annotations

import dataclasses
import decimal
import threading
import time

from compute.replica.driver import DriverPolicy, RuntimeDriver

WAIT = 10.0


class _Runtime:
    """Records which thread handled each command and ran each step; checks exclusion."""

    role = "fake"

    def __init__(self, steps_with_work: int = 0, step_gate: threading.Event | None = None,
                 handle_gate: threading.Event | None = None, step_seconds: float = 0.0):
        self.handled: list[tuple[object, int]] = []
        self.stepped: list[int] = []
        self.precisions: list[int] = []
        self.steps_left = steps_with_work
        self.step_gate = step_gate
        self.handle_gate = handle_gate
        self.step_seconds = step_seconds
        self.in_step = threading.Event()
        self.in_handle = threading.Event()
        self.all_steps_done = threading.Event()
        self.overlaps = 0
        self._busy = threading.Lock()
        self.waker = None

    def set_waker(self, w):
        self.waker = w

    def _enter(self):
        if not self._busy.acquire(blocking=False):
            self.overlaps += 1  # two threads inside the runtime at once
            return False
        return True

    def handle(self, c):
        owned = self._enter()
        try:
            self.handled.append((c, threading.get_ident()))
            self.precisions.append(decimal.getcontext().prec)
            self.in_handle.set()
            if self.handle_gate is not None:
                assert self.handle_gate.wait(WAIT)
        finally:
            if owned:
                self._busy.release()

    def step(self, fuel=None):
        owned = self._enter()
        try:
            self.in_step.set()
            if self.step_gate is not None and self.steps_left:
                assert self.step_gate.wait(WAIT)
            if not self.steps_left:
                return False
            if self.step_seconds:
                time.sleep(self.step_seconds)  # the step's work, not a synchronisation
            self.stepped.append(threading.get_ident())
            self.steps_left -= 1
            if not self.steps_left:
                self.all_steps_done.set()
            return True
        finally:
            if owned:
                self._busy.release()

    def drain_responses(self):
        return []


def _driver(rt, *, inline_steps: bool = False) -> RuntimeDriver:
    return RuntimeDriver(rt, DriverPolicy(inline_commands=(str,), inline_steps=inline_steps))


def _settle(d: RuntimeDriver) -> None:
    """Wait until the driver's thread has worked off everything and parked."""
    done = threading.Event()

    class _Marker(str):
        pass

    # a command that is not inline-eligible goes through the thread's queue; once handled,
    # everything queued before it is handled too
    rt = d.runtime
    orig = rt.handle

    def handle(c):
        orig(c)
        if isinstance(c, _Marker):
            done.set()
    rt.handle = handle
    d.policy, saved = dataclasses.replace(d.policy, inline_commands=()), d.policy
    try:
        d.send(_Marker("marker"))
        assert done.wait(WAIT)
    finally:
        d.policy = saved
        rt.handle = orig


def _start_a_gated_step(d: RuntimeDriver, rt: _Runtime, steps: int) -> None:
    """Give the runtime ``steps`` steps of work and wait until its thread is inside the
    first (held there by ``rt.step_gate``)."""
    _settle(d)
    rt.steps_left = steps
    rt.in_step.clear()
    d.wake()
    assert rt.in_step.wait(WAIT)


def test_an_idle_runtime_handles_the_command_on_the_senders_thread():
    """Sabotage: ``send`` always queueing (the inline branch removed) -> the command is
    handled on the driver's thread and ``inlined`` stays 0."""
    rt = _Runtime()
    d = _driver(rt)
    try:
        _settle(d)
        d.send("peek")
        assert rt.handled[-1] == ("peek", threading.get_ident())
        assert d.inlined == 1
    finally:
        d.shutdown()


def test_inline_work_runs_with_the_numeric_context_of_the_runtime_thread():
    """Sabotage: ``_work_inline`` without ``decimal.localcontext(NUMERIC_CONTEXT)`` -> the
    sender's 28-digit default context is seen."""
    from repr.numeric import NUMERIC_CONTEXT
    rt = _Runtime()
    d = _driver(rt)
    try:
        _settle(d)
        d.send("peek")
        assert rt.precisions[-1] == NUMERIC_CONTEXT.prec != decimal.getcontext().prec
    finally:
        d.shutdown()


def test_a_busy_runtime_never_runs_a_command_on_the_senders_thread():
    """Sabotage: dropping ``self._running`` from the inline condition -> the command runs on
    the test's thread while the driver's thread is inside ``step`` (an overlap)."""
    gate = threading.Event()
    rt = _Runtime(step_gate=gate)
    d = _driver(rt)
    try:
        _start_a_gated_step(d, rt, steps=1)
        d.send("peek")
        assert d.inlined == 0 and rt.handled[-1][0] != "peek"
        gate.set()
        _settle(d)
        assert rt.handled[-2][0] == "peek" and rt.handled[-2][1] != threading.get_ident()
        assert rt.overlaps == 0
    finally:
        gate.set()
        d.shutdown()


def test_a_command_is_never_inlined_ahead_of_a_queued_one():
    """Sabotage: dropping ``self._commands`` from the inline condition -> "second" is
    handled (inline) before "first", which was queued before it."""
    rt = _Runtime()
    d = _driver(rt)
    try:
        _settle(d)
        with d._cond:  # queued, the thread not yet told: the state between notify and wake-up
            d._commands.append("first")
        d.send("second")
        _settle(d)
        order = [c for c, _ in rt.handled if c in ("first", "second")]
        assert order == ["first", "second"]
    finally:
        d.shutdown()


def test_the_thread_waits_while_a_sender_owns_the_runtime():
    """Sabotage: dropping ``self._inline`` from the thread's wait condition -> the thread
    steps (woken meanwhile) while the inline ``handle`` is still running: an overlap; the
    sender's release not notifying the thread -> the thread, parked again behind the sender,
    never takes the wake-up that came meanwhile (a lost wake-up: the step never runs)."""
    gate = threading.Event()
    rt = _Runtime()
    d = _driver(rt)
    try:
        _settle(d)
        rt.steps_left = 1
        rt.in_step.clear()
        rt.handle_gate = gate
        sender = threading.Thread(target=d.send, args=("peek",))
        sender.start()
        assert rt.in_handle.wait(WAIT)
        d.wake()  # work for the thread while the sender is inside the runtime
        # the thread must not step before the sender is out; give it every chance to try
        # by releasing the sender only after the wake-up was delivered
        with d._cond:
            assert d._woken
        # the thread, told of the wake-up, finds the sender inside and parks again: wait
        # for it to be back in its condition wait (a waiter registered once more)
        deadline = time.monotonic() + WAIT
        while not d._cond._waiters and time.monotonic() < deadline:
            time.sleep(0)
        assert d._cond._waiters
        gate.set()
        sender.join(WAIT)
        assert rt.all_steps_done.wait(WAIT)
        assert rt.overlaps == 0
    finally:
        gate.set()
        d.shutdown()


def test_inline_steps_stop_at_the_budget_and_the_thread_does_the_rest():
    """Sabotage: ``_step_inline`` ignoring its deadline -> every step runs on the sender's
    thread."""
    rt = _Runtime(step_seconds=0.001)
    d = _driver(rt, inline_steps=True)
    try:
        _settle(d)
        rt.steps_left = 40
        rt.in_step.clear()
        d.send("create")
        assert rt.all_steps_done.wait(WAIT)
        me = threading.get_ident()
        inline = sum(1 for t in rt.stepped if t == me)
        assert 1 <= inline < 40
        assert any(t != me for t in rt.stepped)
        assert rt.overlaps == 0
    finally:
        d.shutdown()


def test_assist_does_a_parked_runtimes_pending_work_on_the_callers_thread():
    """Sabotage: ``assist`` returning at once -> the queued command and the step run on the
    driver's thread (``assisted`` stays 0)."""
    rt = _Runtime()
    d = _driver(rt, inline_steps=True)
    try:
        _settle(d)
        rt.steps_left = 1
        rt.in_step.clear()
        with d._cond:  # queued and woken, the thread not yet told
            d._commands.append("compaction")
            d._woken = True
        assert d.assist()
        me = threading.get_ident()
        assert rt.handled[-1] == ("compaction", me)
        assert rt.stepped == [me]
        assert d.assisted == 1
        assert not d.assist()  # nothing pending any more
    finally:
        d.shutdown()


def test_assist_leaves_a_running_runtime_to_its_thread():
    """Sabotage: dropping ``self._running`` from ``assist``'s condition -> the caller steps
    while the thread is inside ``step``: an overlap."""
    gate = threading.Event()
    rt = _Runtime(step_gate=gate)
    d = _driver(rt, inline_steps=True)
    try:
        _start_a_gated_step(d, rt, steps=2)
        with d._cond:
            d._woken = True
        assert not d.assist()
        gate.set()
        assert rt.all_steps_done.wait(WAIT)
        assert rt.overlaps == 0
    finally:
        gate.set()
        d.shutdown()
