"""Multiplexer routing and response filtering, with mock runtimes on one shared timeline.

Deterministic: mocks push responses into the multiplexer's merged queue synchronously, the
test drains it completely and then asserts nothing further arrives.
"""
from __future__ import annotations

import threading

import pytest

from compute.dataflow import DataflowDescription, IndexExport, SinkExport
from compute.errors import ComputeProtocolError
from compute.multiplexer import Multiplexer
from compute.protocol import (AllowCompaction, AllowWrites, CancelPeek, CreateDataflow, CreateInstance,
                              Frontiers, Hello, InitializationComplete, Peek, PeekResponse, PeekRows,
                              Schedule, Status, SubscribeBatch, SubscribeResponse, UpdateConfiguration)
from expr.finishing import RowSetFinishing
from expr.mfp import MapFilterProject
from expr.scalar import Column
from repr.timestamp import MAX
from tests.support.standins import index_desc, peek_dataflow, sink_desc, t, u


class Mock:
    """A runtime endpoint that records commands on a timeline shared by both mocks."""

    def __init__(self, name, timeline):
        self.name = name
        self.timeline = timeline
        self.sink = None

    def attach(self, sink):
        self.sink = sink

    def send(self, command):
        self.timeline.append((self.name, command))

    def emit(self, response):
        self.sink(response)


def harness(interactive=True, **kw):
    timeline = []
    m = Mock("maintenance", timeline)
    i = Mock("interactive", timeline) if interactive else None
    return Multiplexer(m, i, **kw), m, i, timeline


def where(timeline, command):
    return [name for name, c in timeline if c == command]


def transient_index(export, as_of, until):
    """A transient index export (not a sink) over u1 with the given times."""
    return DataflowDescription((), (), (), (IndexExport(export, export, (Column(0),), 2),), (),
                               as_of=as_of, until=until, debug_name=f"transient-{export}")


def pk(uuid, target, ts=5):
    return Peek(uuid, target, None, ts, RowSetFinishing(), MapFilterProject.identity(2))


def test_lifecycle_commands_go_to_both():
    mux, m, i, tl = harness()
    cmds = [Hello("n"), CreateInstance(), InitializationComplete(), UpdateConfiguration((("x", 1),))]
    for c in cmds:
        mux.send(c)
    assert tl == [(n, c) for c in cmds for n in ("maintenance", "interactive")]


def test_create_dataflow_routing_by_is_peek_dataflow():
    """Sabotage checked: routing every transient dataflow to interactive (ignoring
    is_single_time) sent the unbounded transient index and the empty-until finite as_of to
    interactive (red), then restored."""
    mux, m, i, tl = harness()
    cases = [
        (peek_dataflow(u(2), t(1), 5), "interactive"),
        (transient_index(t(2), MAX, None), "interactive"),       # MAX, empty until: final state
        (index_desc(u(1), u(3)), "maintenance"),                 # an index
        (sink_desc(u(1), u(4), "materialized_view"), "maintenance"),
        (sink_desc(u(1), t(5), "subscribe", as_of=5, until=6), "maintenance"),  # a sink
        (transient_index(t(6), 5, None), "maintenance"),         # finite as_of, empty until
        (transient_index(t(7), 5, 9), "maintenance"),            # until beyond as_of + 1
    ]
    for desc, _ in cases:
        mux.send(CreateDataflow(desc))
    assert [n for n, _ in tl] == [w for _, w in cases]


def test_peek_dataflow_importing_a_transient_id_fails_loudly_and_is_not_rerouted():
    """Sabotage checked: without the assertion the create went to interactive (red)."""
    mux, m, i, tl = harness()
    mux.send(CreateDataflow(transient_index(t(6), 5, None)))
    bad = peek_dataflow(t(6), t(8), 5)
    with pytest.raises(ComputeProtocolError, match="transient"):
        mux.send(CreateDataflow(bad))
    assert where(tl, CreateDataflow(bad)) == []


def test_allow_compaction_broadcast_only_for_non_transient_published_ids():
    """Sabotage checked: routing AllowCompaction to the owner alone dropped the
    interactive copy for u3 (red); broadcasting for every maintenance id sent the
    subscribe's and the MV's to interactive (red); both restored."""
    mux, m, i, tl = harness()
    mux.send(CreateDataflow(index_desc(u(1), u(3))))
    mux.send(CreateDataflow(sink_desc(u(1), u(4), "materialized_view")))
    mux.send(CreateDataflow(sink_desc(u(1), t(5), "subscribe")))
    mux.send(CreateDataflow(transient_index(t(6), 5, None)))
    mux.send(CreateDataflow(peek_dataflow(u(3), t(1), 5)))
    tl.clear()
    for c in [AllowCompaction(u(3), 7), AllowCompaction(u(4), 7), AllowCompaction(t(5), 7),
              AllowCompaction(t(6), 7), AllowCompaction(t(1), None), AllowCompaction(u(3), None)]:
        mux.send(c)
    assert tl == [
        ("maintenance", AllowCompaction(u(3), 7)), ("interactive", AllowCompaction(u(3), 7)),
        ("maintenance", AllowCompaction(u(4), 7)),
        ("maintenance", AllowCompaction(t(5), 7)),
        ("maintenance", AllowCompaction(t(6), 7)),
        ("interactive", AllowCompaction(t(1), None)),
        ("maintenance", AllowCompaction(u(3), None)), ("interactive", AllowCompaction(u(3), None)),
    ]


def test_schedule_allow_writes_peek_and_cancel_go_to_the_owner():
    mux, m, i, tl = harness()
    mux.send(CreateDataflow(index_desc(u(1), u(3))))
    mux.send(CreateDataflow(transient_index(t(6), 5, None)))
    mux.send(CreateDataflow(peek_dataflow(u(3), t(1), 5)))
    tl.clear()
    cmds = [Schedule(u(3)), Schedule(t(1)), AllowWrites(u(3)),
            pk("a", u(3)), pk("b", t(1)), pk("c", t(6)),
            CancelPeek("a"), CancelPeek("b"), CancelPeek("c")]
    for c in cmds:
        mux.send(c)
    assert [n for n, _ in tl] == ["maintenance", "interactive", "maintenance",
                                  "interactive", "interactive", "maintenance",
                                  "interactive", "interactive", "maintenance"]


def test_without_interactive_everything_goes_to_maintenance():
    mux, m, i, tl = harness(interactive=False)
    cmds = [Hello("n"), CreateDataflow(index_desc(u(1), u(3))),
            CreateDataflow(peek_dataflow(u(3), t(1), 5)), AllowCompaction(u(3), 4),
            pk("a", u(3)), pk("b", t(1)), CancelPeek("a")]
    for c in cmds:
        mux.send(c)
    assert tl == [("maintenance", c) for c in cmds]


def test_frontiers_only_from_the_owner_deterministically():
    """Queue a report on both runtimes, drain both: exactly maintenance's reaches the
    controller, and nothing further.  Sabotage checked: with the filter removed
    (interactive's reports always forwarded) the drain returned two reports (red)."""
    mux, m, i, tl = harness()
    mux.send(CreateDataflow(index_desc(u(1), u(3))))
    i.emit(Frontiers(u(3), None, None, None))   # interactive's empty local copy: must drop
    m.emit(Frontiers(u(3), 100, 100, 100))
    assert mux.drain() == [Frontiers(u(3), 100, 100, 100)]
    assert mux.try_recv() is None


def test_interactive_transient_frontiers_forwarded_even_after_drop():
    """The filter is on id.is_transient(), not ownership: a dropped peek dataflow's
    trailing empty report still reaches the controller."""
    mux, m, i, tl = harness()
    mux.send(CreateDataflow(peek_dataflow(u(3), t(1), 5)))
    mux.send(AllowCompaction(t(1), None))
    i.emit(Frontiers(t(1), None, None, None))
    assert mux.drain() == [Frontiers(t(1), None, None, None)]
    assert mux.try_recv() is None


def test_peek_and_subscribe_responses():
    mux, m, i, tl = harness()
    r1 = PeekResponse("a", PeekRows((((1,), 1),)), "interactive", "fast_path")
    r2 = PeekResponse("b", PeekRows(()), "maintenance", "fast_path")
    s = SubscribeResponse(t(5), SubscribeBatch(0, 1, ()))
    i.emit(r1)
    m.emit(r2)
    m.emit(s)
    i.emit(SubscribeResponse(t(9), SubscribeBatch(0, 1, ())))  # never from interactive
    m.emit(Status("x"))
    got = mux.drain()
    assert sorted(map(repr, got)) == sorted(map(repr, [r1, r2, s, Status("x")]))
    assert mux.try_recv() is None


def test_recv_timeout_loses_nothing_and_recv_is_safe_across_threads():
    """An abandoned receive (timeout) takes nothing; a later one gets every response."""
    mux, m, i, tl = harness()
    assert mux.recv(timeout=0.01) is None
    got = []
    done = threading.Event()

    def receiver():
        while len(got) < 200:
            r = mux.recv(timeout=0.001)  # most of these time out: none may lose a response
            if r is not None:
                got.append(r)
        done.set()

    th = threading.Thread(target=receiver)
    th.start()
    for k in range(100):
        m.emit(PeekResponse(f"m{k}", PeekRows(())))
        i.emit(PeekResponse(f"i{k}", PeekRows(())))
    assert done.wait(10)
    th.join()
    assert sorted(r.uuid for r in got) == sorted([f"m{k}" for k in range(100)] + [f"i{k}" for k in range(100)])
    assert mux.try_recv() is None


def test_cancel_after_the_response_was_delivered_goes_nowhere():
    mux, m, i, tl = harness()
    mux.send(CreateDataflow(index_desc(u(1), u(3))))
    mux.send(pk("a", u(3)))
    i.emit(PeekResponse("a", PeekRows(())))
    assert mux.recv(timeout=1).uuid == "a"
    tl.clear()
    mux.send(CancelPeek("a"))
    assert tl == []
