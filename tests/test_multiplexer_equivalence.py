"""With the interactive runtime on or off, the replica answers every peek identically.

Random workloads (writes, fast-path peeks with and without key lookups, peek dataflows,
compaction) run through the real Multiplexer and runtimes with the real
``compute.render.dataflow.Dataflow``; every answer is checked against the table's own snapshot at
the peek's timestamp, and the two configurations' answer lists must be equal.  Endpoints
are stepped by hand in an order hypothesis chooses, then drained to quiescence.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from compute.multiplexer import Multiplexer, QueuedEndpoint
from compute.protocol import AllowCompaction, CreateDataflow, Frontiers, Peek, PeekResponse, PeekRows
from compute.replica.interactive import InteractiveRuntime
from compute.replica.maintenance import MaintenanceRuntime
from compute.replica.registry import SharedArrangementRegistry
from expr.finishing import RowSetFinishing
from expr.mfp import MapFilterProject
from repr.timestamp import frontier_le
from tests.support.standins import index_desc, peek_dataflow, t, table, u

ROW = st.tuples(st.integers(0, 4), st.sampled_from(["a", "b", None]))
OP = st.one_of(
    st.tuples(st.just("write"), st.lists(ROW, max_size=3), st.lists(st.integers(0, 9), max_size=2)),
    st.tuples(st.just("fast"), st.one_of(st.none(), st.integers(0, 4))),
    st.tuples(st.just("dataflow"), st.one_of(st.none(), st.integers(0, 4))),
    st.tuples(st.just("compact")),
)


def run(ops, order, interactive):
    from compute.render.dataflow import Dataflow
    reg = SharedArrangementRegistry()
    tb = table(u(1), [(0, "a")], 0, 1)
    storage = {u(1): tb}
    m = QueuedEndpoint(MaintenanceRuntime(storage, reg, dataflow_factory=Dataflow))
    i = QueuedEndpoint(InteractiveRuntime(storage, reg, dataflow_factory=Dataflow)) if interactive else None
    mux = Multiplexer(m, i)
    eps = [m] + ([i] if i else [])
    frontiers: dict = {}
    answers: list = []
    order = list(order)

    def settle():
        for _ in range(10_000):
            first = order.pop() if order else 0
            did = False
            for ep in (eps[first % len(eps):] + eps[:first % len(eps)]):
                did |= ep.process_one()
                did |= ep.step()
            for r in mux.drain():
                if isinstance(r, Frontiers):
                    assert frontier_le(frontiers.get(r.id, 0), r.write_frontier), r
                    frontiers[r.id] = r.write_frontier
                elif isinstance(r, PeekResponse):
                    answers.append(r)
            if not did:
                return
        raise AssertionError("did not quiesce")

    mux.send(CreateDataflow(index_desc(u(1), u(2))))
    settle()
    now, n = 1, 0
    for op in ops:
        ts = now - 1
        if op[0] == "write":
            snap = tb.snapshot(ts)
            dels = [r for k, r in enumerate(sorted(snap, key=repr)) if k in op[2]]
            tb.append([(r, 1) for r in op[1]] + [(r, -1) for r in dels], now, now + 1)
            now += 1
            continue
        if op[0] == "compact":
            mux.send(AllowCompaction(u(2), ts))
            settle()
            continue
        n += 1
        keys = None if op[1] is None else ((op[1],),)
        target = u(2)
        if op[0] == "dataflow":
            target = t(n)
            mux.send(CreateDataflow(peek_dataflow(u(2), target, ts)))
        before = len(answers)
        mux.send(Peek(f"p{n}", target, keys, ts, RowSetFinishing(), MapFilterProject.identity(2)))
        settle()
        assert len(answers) == before + 1
        got = answers[-1]
        expect = {r: c for r, c in tb.snapshot(ts).items() if keys is None or r[0] == op[1]}
        assert isinstance(got.result, PeekRows), got
        assert dict(got.result.rows) == expect, (op, ts, got)
        if op[0] == "dataflow":
            mux.send(AllowCompaction(target, None))
            settle()
            assert frontiers[target] is None
    settle()
    assert mux.try_recv() is None
    assert all(a.answered_by == ("interactive" if interactive else "maintenance") for a in answers)
    return [(a.uuid, sorted(a.result.rows, key=repr)) for a in answers]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OP, max_size=12), st.lists(st.integers(0, 1), max_size=40))
def test_interactive_on_and_off_answer_identically(ops, order):
    assert run(ops, order, interactive=True) == run(ops, order, interactive=False)
