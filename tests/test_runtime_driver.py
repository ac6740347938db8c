"""RuntimeDriver threads behind the Multiplexer: wake-ups, failures reported, clean shutdown.

Waiting is only ever on the multiplexer's queue (``recv(timeout)`` returns as soon as a
response arrives; the timeout only bounds a failure), never on a sleep.
"""
from __future__ import annotations

import pytest

from compute.multiplexer import Multiplexer
from compute.protocol import (AllowCompaction, CreateDataflow, Frontiers, Peek, PeekError, PeekResponse,
                              PeekRows, Status)
from compute.replica.driver import DriverPolicy, RuntimeDriver
from compute.replica.interactive import InteractiveRuntime
from compute.replica.maintenance import MaintenanceRuntime
from compute.replica.registry import SharedArrangementRegistry
from expr.finishing import RowSetFinishing
from expr.mfp import MapFilterProject
from tests.support.standins import StandinDataflow, index_desc, peek_dataflow, t, table, u


def pk(uuid, target, ts, keys=None):
    return Peek(uuid, target, keys, ts, RowSetFinishing(), MapFilterProject.identity(2))


def until(mux, pred, timeout=10):
    """Receive until ``pred(response)``; returns everything received."""
    seen = []
    while True:
        r = mux.recv(timeout=timeout)
        assert r is not None, f"timed out; received {seen}"
        seen.append(r)
        if pred(r):
            return seen


@pytest.fixture
def replica():
    reg = SharedArrangementRegistry()
    coll = table(u(1), [(1, "a"), (2, "b")], 0, 1)
    storage = {u(1): coll}
    # plain drivers (no inline work, no urgency): every command crosses to the driver's thread
    m = RuntimeDriver(MaintenanceRuntime(storage, reg, dataflow_factory=StandinDataflow), DriverPolicy())
    i = RuntimeDriver(InteractiveRuntime(storage, reg, dataflow_factory=StandinDataflow), DriverPolicy())
    mux = Multiplexer(m, i)
    yield mux, coll, m, i
    m.shutdown()
    i.shutdown()
    assert not m.alive and not i.alive


def test_peeks_answered_across_threads_and_storage_advances_wake_the_drivers(replica):
    mux, coll, m, i = replica
    mux.send(CreateDataflow(index_desc(u(1), u(2))))
    mux.send(pk("fp", u(2), 0))
    got = until(mux, lambda r: isinstance(r, PeekResponse))
    assert got[-1].answered_by == "interactive" and sorted(got[-1].result.rows) == [((1, "a"), 1), ((2, "b"), 1)]
    # a peek in the future waits for the write; the write's upper advance wakes both threads
    mux.send(CreateDataflow(peek_dataflow(u(2), t(1), 3)))
    mux.send(pk("df", t(1), 3, keys=((7,),)))
    coll.append([((7, "z"), 1)], 2, 4)
    got = until(mux, lambda r: isinstance(r, PeekResponse))
    assert got[-1].uuid == "df" and got[-1].result == PeekRows((((7, "z"), 1),))
    mux.send(AllowCompaction(t(1), None))
    until(mux, lambda r: r == Frontiers(t(1), None, None, None))


def test_protocol_error_is_reported_as_status_and_the_driver_keeps_running(replica):
    mux, coll, m, i = replica
    mux.send(CreateDataflow(index_desc(u(9), u(2))))  # unknown source: maintenance refuses
    got = until(mux, lambda r: isinstance(r, Status))
    assert "protocol error" in got[-1].message and m.alive
    mux.send(CreateDataflow(index_desc(u(1), u(3))))
    mux.send(pk("p", u(3), 0))
    assert until(mux, lambda r: isinstance(r, PeekResponse))[-1].result.rows


def test_failing_dataflow_step_answers_its_peeks_with_an_internal_error(replica):
    """The peek waits on interactive for the published index, whose publisher failed.
    Sabotage checked: without ``registry.fail`` on the failed export the interactive
    runtime waited forever and the receive timed out (red), then restored."""
    mux, coll, m, i = replica
    mux.send(CreateDataflow(index_desc(u(1), u(2))))
    mux.send(pk("ok", u(2), 0))
    until(mux, lambda r: isinstance(r, PeekResponse))
    StandinDataflow.instances[-1].broken = True
    mux.send(pk("later", u(2), 5))
    coll.advance_upper(7)  # wake maintenance: its step now raises inside the dataflow
    got = until(mux, lambda r: isinstance(r, PeekResponse) and r.uuid == "later")
    assert any(isinstance(r, Status) and "failed" in r.message for r in got)
    assert isinstance(got[-1].result, PeekError) and got[-1].result.sqlstate == "XX000"


class ExplodingRuntime:
    """A runtime whose step raises a plain bug: the driver's last resort must settle peeks."""
    role = "maintenance"

    def __init__(self):
        self.failed_with = None
        self.responses = []

    def set_waker(self, fn):
        pass

    def handle(self, c):
        pass

    def step(self, fuel=None):
        raise KeyError("boom")

    def drain_responses(self):
        out, self.responses = self.responses, []
        return out

    def fail_pending_peeks(self, message):
        self.failed_with = message
        self.responses.append(PeekResponse("x", PeekError("XX000", message)))


def test_a_bug_escaping_step_becomes_status_and_internal_error_answers():
    """Sabotage checked: without the driver's except clause the thread died silently and
    the receive timed out (red), then restored."""
    rt = ExplodingRuntime()
    d = RuntimeDriver(rt, DriverPolicy())
    mux = Multiplexer(d, None)
    mux.send(pk("x", u(2), 0))
    got = until(mux, lambda r: isinstance(r, PeekResponse))
    assert any(isinstance(r, Status) and "internal error" in r.message for r in got)
    assert got[-1].result.sqlstate == "XX000" and "boom" in rt.failed_with
    d.shutdown()
    assert not d.alive
