"""Mechanisms that keep a read's round trip short while maintenance is busy.

- ``Multiplexer.deliver_peek_responses``: a peek's answer goes to the controller on the
  answering runtime's thread, not through the merged queue and its receiving thread.
- ``compute.replica.scheduling.Urgency``: the interactive runtime's queued commands and a woken
  reader make maintenance step aside (briefly) between its steps and shorten the switch
  interval, so the GIL goes to them.
- ``compute.replica.scheduling.BulkGC``: a long busy period raises the young GC threshold until
  idle.
- ``compute.replica.graveyard.Graveyard``: a dropped dataflow is freed a slice per step, and only
  what nobody else holds is taken apart.
- ``compute.replica.driver.deferred_wakes``: a writer's commit flags the runtimes' work without
  waking their threads; the writer assists, and announces what is left before it blocks.

Synchronisation is on events the code under test sets, never on sleeps.
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading

import pytest

from compute.arrangement.spine import Spine
from compute.multiplexer import Multiplexer
from compute.protocol import Frontiers, PeekResponse, PeekRows
from compute.replica.client import ReplicaClient
from compute.replica.driver import DriverPolicy, RuntimeDriver
from compute.replica.graveyard import Graveyard
from compute.replica.scheduling import GCThresholds, SwitchIntervals, Urgency
import mzlite
from repr.ids import GlobalId

WAIT = 10.0


class _Endpoint:
    def __init__(self):
        self.sink = None
        self.sent = []

    def attach(self, sink):
        self.sink = sink

    def send(self, command):
        self.sent.append(command)


def test_peek_responses_reach_the_sink_on_the_runtime_thread_and_frontiers_stay_queued():
    """Sabotage: ``_accept`` ignoring the peek sink (queueing everything) -> the sink sees
    nothing and the response is in the queue."""
    m, i = _Endpoint(), _Endpoint()
    mux = Multiplexer(m, i)
    got = []
    mux.deliver_peek_responses(got.append)
    resp = PeekResponse("p1", PeekRows(()), "interactive")
    i.sink(resp)
    m.sink(Frontiers(GlobalId("u", 1), 5, 5, 5))
    assert got == [resp]
    queued = mux.drain()
    assert [type(r).__name__ for r in queued] == ["Frontiers"]
    assert mux.drain() == []


def test_peek_responses_before_a_sink_is_set_are_queued_not_lost():
    m = _Endpoint()
    mux = Multiplexer(m, None)
    resp = PeekResponse("p1", PeekRows(()), "maintenance")
    m.sink(resp)
    mux.deliver_peek_responses(lambda r: None)
    assert mux.drain() == [resp]


# ----------------------------------------------------------------------------- urgency
class _RecordingUrgency(Urgency):
    def __init__(self):
        super().__init__()
        self.raised = 0
        self.lowered_total = 0
        self.lowered = threading.Event()
        self.yields = 0

    def raise_(self, n=1):
        self.raised += n
        super().raise_(n)

    def lower(self, n=1):
        self.lowered_total += n
        super().lower(n)
        self.lowered.set()

    def yield_while_pending(self):
        self.yields += 1
        return 0.0


class _FakeRuntime:
    role = "fake"

    def __init__(self, steps_with_work=0):
        self.handled = []
        self.steps_left = steps_with_work
        self.done = threading.Event()

    def set_waker(self, w):
        self.waker = w

    def handle(self, c):
        self.handled.append(c)

    def step(self, fuel=None):
        if self.steps_left:
            self.steps_left -= 1
            if not self.steps_left:
                self.done.set()
            return True
        return False

    def drain_responses(self):
        return []


def _run_until_done(rt, policy=DriverPolicy(), urgency=None) -> None:
    """Drive ``rt`` on a real driver thread until its last step with work, then stop it."""
    d = RuntimeDriver(rt, policy, start=False, urgency=urgency)
    d.wake()
    d.start()
    try:
        assert rt.done.wait(WAIT)
    finally:
        d.shutdown()


def test_commands_to_an_urgent_driver_raise_urgency_until_it_goes_idle():
    """Sabotage: ``send`` not raising -> ``pending`` is 0 right after the send."""
    urg = _RecordingUrgency()
    rt = _FakeRuntime()
    d = RuntimeDriver(rt, DriverPolicy(urgent_commands=True), urgency=urg, start=False)
    d.send("cmd")
    assert urg.pending == 1
    d.start()
    try:
        assert urg.lowered.wait(WAIT)
        assert urg.pending == 0 and urg.raised == urg.lowered_total == 1
        assert rt.handled == ["cmd"]
    finally:
        d.shutdown()


@pytest.mark.parametrize("yields", [True, False])
def test_a_yielding_driver_steps_aside_between_steps_while_urgency_is_pending(yields):
    """Only a driver whose policy ``yields_to_urgent`` steps aside.  Sabotage: the driver
    ignoring ``yields_to_urgent`` -> no yield is recorded."""
    urg = _RecordingUrgency()
    urg.raise_()
    try:
        _run_until_done(_FakeRuntime(steps_with_work=5), DriverPolicy(yields_to_urgent=yields), urg)
    finally:
        urg.lower()
    assert (urg.yields >= 4) if yields else urg.yields == 0


def test_yield_is_bounded_when_nothing_lowers_urgency():
    urg = Urgency(SwitchIntervals())
    urg.raise_()
    try:
        spent = urg.yield_while_pending()
    finally:
        urg.lower()
    assert spent < 1.0  # the budget (milliseconds) bounds a raise that is never lowered
    assert Urgency(SwitchIntervals()).yield_while_pending() == 0.0


class _AnsweringEndpoint(_Endpoint):
    """Answers every peek with no rows: inline (from ``send``, on the sender's thread, as an
    idle ``RuntimeDriver`` does) or from a thread of its own."""

    def __init__(self, inline: bool):
        super().__init__()
        self.inline = inline

    def send(self, command):
        from compute.protocol import Peek
        super().send(command)
        if isinstance(command, Peek):
            resp = PeekResponse(command.uuid, PeekRows(()), "interactive")
            if self.inline:
                self.sink(resp)
            else:
                threading.Thread(target=self.sink, args=(resp,)).start()


@pytest.mark.parametrize("inline", [False, True])
def test_an_answer_from_another_thread_raises_and_lowers_urgency_once(inline):
    """An answer delivered on another thread raises urgency once (the waiter must get the
    GIL) and the woken waiter lowers it; an answer delivered inline, on the waiter's own
    thread, raises nothing (a raise would hand the GIL to other threads while the waiter
    goes on).  Sabotage: ``ComputeController.peek`` not lowering -> pending stays above zero;
    the controller not raising -> ``raised`` stays 0 for the threaded answers; raising for
    inline answers too -> ``raised`` is 3 for them."""
    from expr.finishing import RowSetFinishing
    from expr.mfp import MapFilterProject
    import mzlite.controller as controller
    urg = _RecordingUrgency()
    ctl = controller.ComputeController(ReplicaClient(Multiplexer(_AnsweringEndpoint(inline)), urgency=urg))
    try:
        for _ in range(3):
            resp = ctl.peek(GlobalId("u", 1), None, 1, RowSetFinishing(), MapFilterProject.identity(1))
            assert resp.result == PeekRows(())
    finally:
        ctl.shutdown()
    assert urg.raised == (0 if inline else 3)
    assert urg.pending == 0


# ----------------------------------------------------------------------------- graveyard
def _drain(g: Graveyard, budget: int) -> int:
    calls = 0
    while g.work(budget):
        calls += 1
    return calls


def test_the_graveyard_empties_what_only_it_holds_a_slice_at_a_time():
    """Sabotage: ``work`` ignoring its budget (its loop running until the stack is empty) ->
    one call."""
    inner = [{j: (j, j) for j in range(10)} for _ in range(1000)]
    g = Graveyard()
    g.bury({"state": inner})
    watched = inner[0]
    del inner
    calls = _drain(g, 500)
    assert calls >= 10
    assert watched == {j: (j, j) for j in range(10)}  # we hold it: left alone
    assert len(g) == 0


def test_the_graveyard_never_takes_apart_what_someone_else_holds():
    """A reader's handle on a buried spine keeps its batches intact.  Sabotage: dropping the
    reference-count check -> the handle's snapshot comes back empty."""
    spine = Spine(lambda row: (row[0],), 2)
    spine.insert_at(1, [((i, i * 2), 1) for i in range(3000)], 2)
    handle = spine.read_handle()
    expected = handle.snapshot(1)
    shared = {"keep": [1, 2, 3]}
    g = Graveyard()
    g.bury({"spine": spine, "shared": shared, "big": [[k] for k in range(5000)]})
    del spine
    _drain(g, 100)
    assert handle.snapshot(1) == expected
    assert shared == {"keep": [1, 2, 3]}


def test_dropping_an_indexed_view_frees_it_through_the_graveyard():
    """The runtime buries a dropped dataflow and works it off over later steps.  Sabotage:
    ``_drop_dataflow`` not burying -> nothing is ever buried."""
    from compute.replica import graveyard as G
    buried = []
    orig = G.Graveyard.bury

    def bury(self, obj):
        buried.append(type(obj).__name__)
        orig(self, obj)
    G.Graveyard.bury = bury
    try:
        con = mzlite.connect()
        con.execute("CREATE TABLE t (a int, b int)")
        con.cursor().executemany("INSERT INTO t VALUES (?, ?)", [(i, i % 7) for i in range(20000)])
        con.execute("CREATE MATERIALIZED VIEW v AS SELECT b, count(*) AS n FROM t GROUP BY b")
        con.execute("CREATE DEFAULT INDEX ON v")
        assert len(con.execute("SELECT * FROM v").fetchall()) == 7
        con.execute("DROP MATERIALIZED VIEW v CASCADE")
        con.execute("CREATE DEFAULT INDEX ON t")
        assert con.execute("SELECT count(*) FROM t").fetchall() == [(20000,)]
        con.close()
    finally:
        G.Graveyard.bury = orig
    assert "Dataflow" in buried


def test_urgency_shortens_the_switch_interval_and_restores_the_programs_own():
    """Sabotage: ``raise_`` not touching the switch interval -> it stays at the program's
    value while something is urgent."""
    import sys
    before = sys.getswitchinterval()
    urg = Urgency(SwitchIntervals())
    try:
        sys.setswitchinterval(0.004)
        urg.raise_()
        urg.raise_()
        assert sys.getswitchinterval() == pytest.approx(Urgency.URGENT_SWITCH_S)
        urg.lower()
        assert sys.getswitchinterval() == pytest.approx(Urgency.URGENT_SWITCH_S)
        urg.lower()
        assert sys.getswitchinterval() == pytest.approx(0.004)
    finally:
        sys.setswitchinterval(before)


def test_a_long_busy_period_raises_the_young_gc_threshold_until_the_runtime_is_idle():
    """Sabotage: the driver never entering ``BULK_GC`` -> the threshold seen during the
    long busy period is the program's own; ``BulkGC`` not raising the oldest generation's
    threshold -> the third threshold is unchanged."""
    import gc

    from compute.replica import scheduling as S
    before = gc.get_threshold()
    seen = []

    class Busy(_FakeRuntime):
        def step(self, fuel=None):
            seen.append(gc.get_threshold())
            return super().step(fuel)

    _run_until_done(Busy(steps_with_work=S.BULK_AFTER_STEPS + 3))
    assert seen[0] == before  # a short burst of work leaves the collector alone
    assert seen[-1] == (max(before[0], S.BulkGC.BULK_THRESHOLD0), before[1],
                        max(before[2], S.BulkGC.BULK_THRESHOLD2))  # young and full collections rarer
    assert gc.get_threshold() == before  # idle (here: shut down): the program's own again


def test_bulk_gc_leaves_a_disabled_threshold_and_a_programs_later_change_alone():
    import gc

    from compute.replica.scheduling import BulkGC
    before = gc.get_threshold()
    try:
        g = BulkGC(GCThresholds(), SwitchIntervals())
        gc.set_threshold(700, 10, 10)
        g.enter()
        g.enter()
        assert gc.get_threshold() == (BulkGC.BULK_THRESHOLD0, 10, BulkGC.BULK_THRESHOLD2)
        g.exit()
        assert gc.get_threshold()[0] == BulkGC.BULK_THRESHOLD0
        g.exit()
        assert gc.get_threshold() == (700, 10, 10)
        g.enter()
        gc.set_threshold(1234, 10, 10)  # the program changes its mind meanwhile
        g.exit()
        assert gc.get_threshold() == (1234, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_the_switch_interval_is_the_least_requested_and_the_programs_own_afterwards():
    """Urgency (0.2 ms) and a busy runtime (1 ms) request intervals together.  Sabotage:
    ``release`` restoring the program's value while another request is active -> 4 ms
    while the busy request still stands."""
    import sys

    before = sys.getswitchinterval()
    si = SwitchIntervals()
    busy, urgent = object(), object()
    try:
        sys.setswitchinterval(0.004)
        si.request(busy, 0.001)
        assert sys.getswitchinterval() == pytest.approx(0.001)
        si.request(urgent, 0.0002)
        assert sys.getswitchinterval() == pytest.approx(0.0002)
        si.release(urgent)
        assert sys.getswitchinterval() == pytest.approx(0.001)
        si.release(busy)
        assert sys.getswitchinterval() == pytest.approx(0.004)
    finally:
        sys.setswitchinterval(before)


# ----------------------------------------------------------------------------- compaction steps
@pytest.mark.parametrize("window", [0, 1000])
def test_since_advances_in_steps_of_a_tenth_of_the_compaction_window(window):
    """A frontier report a millisecond moves since only once it has moved a tenth of the
    window (with no window, every time).  Sabotage: the step removed from ``_maybe_compact``
    -> an AllowCompaction per report (1000 instead of 10)."""
    from compute.protocol import AllowCompaction
    import mzlite.controller as controller
    end = _Endpoint()
    ctl = controller.ComputeController(ReplicaClient(Multiplexer(end)), window)
    try:
        gid = GlobalId("u", 7)
        ctl.collections[gid] = controller.CollectionState(gid, write_frontier=1, implied_since=0)
        for upper in range(2, 2 + window + 1000):
            ctl._handle_response(Frontiers(gid, upper))
        sent = [c.frontier for c in end.sent if isinstance(c, AllowCompaction)]
        assert len(sent) == (1000 if window == 0 else 10)
        assert sent == sorted(sent)
        # since trails the upper by the window, and by less than a step more
        last_upper = 1 + window + 1000
        assert last_upper - 1 - window - sent[-1] < max(1, window // controller.COMPACTION_STEPS)
    finally:
        ctl.shutdown()


# ----------------------------------------------------------------------------- young GC threshold
@pytest.mark.parametrize("program, expected", [(700, 10_000), (50_000, 50_000), (0, 0)])
def test_connect_raises_the_young_gc_threshold_only(program, expected):
    """While a database is open the young threshold is at least the baseline's (its own
    restoration at close is tests/test_scheduling.py's).  Sabotage: the baseline requesting
    no young threshold (``Baseline.request``) -> 700 while connected; lowering a program's
    higher threshold, or enabling a disabled collector, is caught by the other two cases."""
    import gc
    saved = gc.get_threshold()
    try:
        gc.set_threshold(program, saved[1], saved[2])
        con = mzlite.connect()
        assert gc.get_threshold()[0] == expected
        con.close()
    finally:
        gc.set_threshold(*saved)


def test_a_session_that_committed_a_write_assists_its_propagation():
    """After a statement that committed a write (a single INSERT, an ``executemany``, a
    COMMIT), the session calls ``assist_after_write`` once, so the write's propagation runs
    on its thread while the runtimes are parked, not after waking the maintenance thread;
    a read, a failed write and a write buffered in an open transaction do not.  Sabotage:
    ``Database.execute_sql`` without the call after a committed write -> no call recorded."""
    con = mzlite.connect()
    db = con.database
    calls = []
    real = db.controller.assist_after_write
    db.controller.assist_after_write = lambda: (calls.append(db.storage.commits), real())
    con.execute("CREATE TABLE t (a int NOT NULL)")
    con.execute("CREATE INDEX t_a ON t (a)")
    calls.clear()
    con.execute("INSERT INTO t VALUES (1)")
    assert len(calls) == 1
    con.cursor().executemany("INSERT INTO t VALUES (?)", [(2,), (3,)])
    assert len(calls) == 2
    con.execute("SELECT a FROM t").fetchall()
    with pytest.raises(mzlite.Error):
        con.execute("INSERT INTO t VALUES (NULL)")
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (4)")
    assert len(calls) == 2
    con.execute("COMMIT")
    assert len(calls) == 3
    assert sorted(con.execute("SELECT a FROM t").fetchall()) == [(1,), (2,), (3,), (4,)]


class _WatchedCondition(threading.Condition):
    """Counts ``notify`` calls and the times a waiter parked (``parks``)."""

    def __init__(self):
        super().__init__()
        self.notified = 0
        self.parks = 0
        self.parked = threading.Event()  # set at every park

    def notify(self, n=1):
        self.notified += 1
        super().notify(n)

    def wait(self, timeout=None):
        self.parks += 1  # (the waiter holds the lock here)
        self.parked.set()
        return super().wait(timeout)

    def wait_for_parks(self, n: int) -> bool:
        """Until the waiter has parked ``n`` times (it notifies nobody: poll the event)."""
        while True:
            with self:
                if self.parks >= n:
                    return True
            self.parked.clear()
            with self:
                if self.parks >= n:
                    return True
            if not self.parked.wait(WAIT):
                return False


@contextlib.contextmanager
def _parked_driver(rt):
    """``(driver, its _WatchedCondition)`` for ``rt`` with inline steps, its thread parked."""
    d = RuntimeDriver(rt, DriverPolicy(inline_steps=True), start=False)
    cond = d._cond = _WatchedCondition()
    d.start()
    try:
        assert cond.parked.wait(WAIT)
        yield d, cond
    finally:
        d.shutdown()


def test_wakes_deferred_by_a_writer_leave_the_runtime_thread_parked_while_it_assists():
    """Inside ``deferred_wakes``, once the thread has written (``defer_wakes``), a wake
    flags the runtime's work without notifying its parked thread; the writer's ``assist``
    does the work, and the block's end notifies only a runtime whose flagged work still
    waits.  Before the write, a wake notifies at once.  Sabotages: ``wake`` notifying
    inside the block -> a notification before the assist; ``flush_deferred_wakes``
    notifying nobody -> the work flagged in a block nobody assisted was never announced."""
    from compute.replica.driver import defer_wakes, deferred_wakes
    rt = _FakeRuntime(steps_with_work=2)
    with _parked_driver(rt) as (d, cond):
        with deferred_wakes():
            d.wake()  # before this thread's write: at once
            assert cond.notified == 1
            assert cond.wait_for_parks(2)
            defer_wakes()  # (what a commit does)
            d.wake()
            assert cond.notified == 1
            assert d.assist()  # the two steps with work run here, on this thread
        assert cond.notified == 1 and rt.done.is_set()
        d.wake()  # outside a block: at once
        assert cond.notified == 2
        assert cond.wait_for_parks(3)  # the thread took the (empty) work and parked again
        with deferred_wakes():
            defer_wakes()
            d.wake()
            assert cond.notified == 2
        assert cond.notified == 3  # not assisted: announced at the block's end


def test_a_writer_about_to_wait_for_a_peek_announces_the_wakes_it_deferred(monkeypatch):
    """A script that writes and then reads, in one call, runs inside one ``deferred_wakes``
    block; before its read blocks, ``ComputeController.peek`` announces the deferred wakes,
    so a runtime its assist could not do the work of (here maintenance, with inline steps
    off) still propagates the write the read waits for.  The clock is manual and the ticker
    stopped, so no tick wakes anything meanwhile.  Sabotage: no ``flush_deferred_wakes``
    before the wait -> the read waited for its statement timeout (57014)."""
    from mzlite.oracle import ManualClock
    con = mzlite.connect(clock=ManualClock(1), system_parameters={"enable_compute_interactive_runtime": True})
    try:
        db = con.database
        con.execute("CREATE TABLE t (a int)")
        con.execute("CREATE INDEX t_a ON t (a)")
        assert con.execute("SELECT a FROM t").fetchall() == []
        m = db.replica.maintenance_driver
        monkeypatch.setattr(m, "policy", dataclasses.replace(m.policy, inline_steps=False))
        con.execute("SET statement_timeout = 3000")
        db._tick_event.set()  # the ticker's advance of the tables would wake maintenance too
        db._ticker.join(WAIT)
        cur = con.cursor().executescript("INSERT INTO t VALUES (7); SELECT a FROM t")
        assert cur.fetchall() == [(7,)]
    finally:
        con.close()


class _SelfWakingRuntime(_FakeRuntime):
    """Each step with work wakes its own driver, as a view's output advancing the index on
    it does."""

    wake_during_idle_step = False

    def step(self, fuel=None):
        did = super().step(fuel)
        if did or self.wake_during_idle_step:
            self.wake_during_idle_step = False
            self.waker()
        return did


def test_an_idle_inline_step_spends_the_wakes_it_saw():
    """Wakes raised by the assisted work itself are seen by the idle step that ends it, so
    nothing is left to announce and the thread stays parked; a wake after that step still
    is announced, and so is one that arrives while the idle step runs.  Sabotages:
    ``_step_inline`` leaving ``_woken`` set after its idle step -> the block's end notified
    the thread for work already done; clearing it without comparing ``_wake_seq`` -> the
    wake that came during the idle step was lost."""
    from compute.replica.driver import defer_wakes, deferred_wakes
    rt = _SelfWakingRuntime(steps_with_work=3)
    with _parked_driver(rt) as (d, cond):
        with deferred_wakes():
            defer_wakes()
            d.wake()
            assert d.assist() and rt.done.is_set()
        assert cond.notified == 0
        with deferred_wakes():
            defer_wakes()
            d.wake()
            assert d.assist()  # an idle step: nothing to do
            d.wake()  # after it: still announced
        assert cond.notified == 1
        assert cond.wait_for_parks(2)  # the thread ran the announced (empty) work and parked
        rt.wake_during_idle_step = True  # a wake arriving while the idle step runs
        with deferred_wakes():
            defer_wakes()
            d.wake()
            assert d.assist()
        assert cond.notified >= 2  # (by the assist's release, and again at the block's end)


def test_a_commit_defers_the_wakes_of_its_block_and_a_read_does_not():
    """``TableStorage.commit`` starts deferring the wakes of the block it runs in (through the
    ``on_commit`` hook the adapter passes; a read's block defers none), and nothing outside a
    block.  Sabotage: ``commit`` without calling ``on_commit`` -> the write's block never
    deferred a wake."""
    from compute.replica import driver
    from compute.replica.driver import deferred_wakes
    from mzlite.oracle import TimestampOracle
    from repr.ids import GlobalId
    from storage.tables import TableStorage
    storage = TableStorage(TimestampOracle(), on_commit=ReplicaClient.on_commit)
    gid = GlobalId("u", 1)
    storage.create_table(gid, 1)
    storage.commit({gid: [((1,), 1)]})  # outside a block
    assert getattr(driver._DEFERRED, "drivers", None) is None
    with deferred_wakes():
        assert driver._DEFERRED.drivers is None  # a block that has not written
        storage.commit({gid: [((2,), 1)]})
        assert driver._DEFERRED.drivers == []
    assert driver._DEFERRED.drivers is None
