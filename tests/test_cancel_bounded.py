"""Cancelation between bounded units of work: an interrupt stops a statement part-way.

A statement spends its time in units each of which is bounded: a flat map emits at most
``OUTPUT_LIMIT`` pairs a call, a peek's join streams its driver in pieces sized to their
output, the optimizer checks between rules, COPY FROM checks at every push of data.  Each
test interrupts the statement while it is inside its first unit (a spy on that unit waits
until ``con.interrupt()`` has been called: an event, not a sleep) and checks that it raised
57014 having done a fraction of its work, and that the next statement answers.  A blocked
SUBSCRIBE ``fetchmany`` woken by an interrupt: ``tests/test_subscribe_interrupt.py``.
Sabotage runs (each made once, saw red, restored):
- ``OUTPUT_LIMIT`` set to 10**9 (a flat map's output in one call):
  ``test_an_interrupt_stops_a_large_table_function`` red (all 5M pairs emitted);
- ``OneShotJoinOp`` taking its driver chunk whole: ``test_an_interrupt_stops_a_cross_product``
  red (all 1024 x 3000 pairs of the first chunk emitted);
- ``optimize`` without its ``check`` calls: ``test_an_interrupt_stops_planning`` red;
- ``CopyIn._check`` without the cancelation test: ``test_an_interrupt_ends_copy_from`` red.
"""
from __future__ import annotations

import threading

import pytest

import mzlite
from compute.render.flat_map import FlatMapOp
from compute.render.join_oneshot import OneShotJoinOp

WAIT_S = 60.0


def _interrupt_inside(con, monkeypatch, cls, name, sql):
    """Run ``sql`` on a thread; when it first enters ``cls.name``, interrupt it.  Returns
    (the statement's outcome, the pairs ``cls.name`` produced in all)."""
    entered, interrupted = threading.Event(), threading.Event()
    produced = [0]
    real = getattr(cls, name)

    def spy(self, *args):
        if not entered.is_set():
            entered.set()
            assert interrupted.wait(WAIT_S)
        out = real(self, *args)
        produced[0] += len(out[0] if isinstance(out, tuple) else out)
        return out
    monkeypatch.setattr(cls, name, spy)
    outcome: list = []

    def run():
        try:
            outcome.append(con.execute(sql).fetchall())
        except BaseException as e:  # noqa: BLE001 - the test inspects it
            outcome.append(e)
    th = threading.Thread(target=run, daemon=True)
    th.start()
    assert entered.wait(WAIT_S)
    con.interrupt()
    interrupted.set()
    th.join(WAIT_S)
    assert not th.is_alive()
    monkeypatch.setattr(cls, name, real)
    return outcome[0], produced[0]


def _canceled(outcome) -> bool:
    return isinstance(outcome, mzlite.QueryCanceled) and outcome.sqlstate == "57014"


def test_an_interrupt_stops_a_large_table_function(con, monkeypatch):
    n = 5_000_000
    outcome, produced = _interrupt_inside(
        con, monkeypatch, FlatMapOp, "_drain",
        f"SELECT x % 1000, count(*) FROM generate_series(1, {n}) x GROUP BY 1")
    assert _canceled(outcome), outcome
    assert produced < n // 2
    assert con.execute("SELECT 1").fetchall() == [(1,)]


def test_an_interrupt_stops_a_cross_product(con, monkeypatch):
    n = 3000
    for t in ("a", "b"):
        con.execute(f"CREATE TABLE {t} (x int)")
        con.execute(f"INSERT INTO {t} SELECT * FROM generate_series(1, {n})")
    outcome, produced = _interrupt_inside(
        con, monkeypatch, OneShotJoinOp, "_delta",
        "SELECT count(*) FROM a, b WHERE a.x + b.x = 17")
    assert _canceled(outcome), outcome
    assert produced < 1024 * n // 2
    assert con.execute("SELECT 1").fetchall() == [(1,)]


def test_an_interrupt_stops_planning(con, monkeypatch):
    """An interrupt arriving while the optimizer runs (here: from within its first rule)
    stops it before the next rule."""
    import mzlite.reads as reads
    from planner.optimize import RULES, optimize
    ran = []

    def interrupting_rule(expr):
        con.interrupt()
        return expr

    def counting(rule):
        def run(expr):
            ran.append(rule.__name__)
            return rule(expr)
        return run
    monkeypatch.setattr(reads, "optimize", lambda expr, check=None: optimize(
        expr, rules=(interrupting_rule,) + tuple(counting(r) for r in RULES), check=check))
    with pytest.raises(mzlite.QueryCanceled):
        con.execute("SELECT count(*) FROM generate_series(1, 10) a, generate_series(1, 10) b WHERE a = b")
    assert ran == []
    monkeypatch.undo()
    assert con.execute("SELECT 1").fetchall() == [(1,)]


def test_an_interrupt_ends_copy_from(con):
    """Between pushes of COPY data, and before the load: 57014, nothing loaded."""
    con.execute("CREATE TABLE t (a int)")
    cur = con.cursor()
    with pytest.raises(mzlite.QueryCanceled):
        with cur.copy("COPY t FROM STDIN") as copy:
            copy.write(b"1\n2\n")
            con.interrupt()
            copy.write(b"3\n")
    with pytest.raises(mzlite.QueryCanceled):
        with cur.copy("COPY t FROM STDIN") as copy:
            copy.write(b"1\n2\n")
            con.interrupt()
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]
    with cur.copy("COPY t FROM STDIN") as copy:
        copy.write(b"4\n")
    assert con.execute("SELECT a FROM t").fetchall() == [(4,)]
