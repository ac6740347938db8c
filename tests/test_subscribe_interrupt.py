"""A SUBSCRIBE cursor blocked in ``fetchmany`` can be stopped, as any statement can.

``con.interrupt()`` and ``statement_timeout`` end the wait with 57014 (and the cursor goes on
streaming afterwards); ``cur.close()`` from another thread ends it at once.  Each test waits
until the fetching thread is really blocked (a waiter on the subscription's condition: a state
the test reads, not a sleep) before it acts.  Sabotage seen red: ``SubscribeStream.fetch``
without ``should_cancel`` (the interrupt test failed: the fetch went on waiting).  Named but
not run: without the ``statement_timeout`` limit the fetch would wait for ever; ``Cursor.close``
closing the stream under the cursor's lock would wait for the blocked fetch.
"""
from __future__ import annotations

import threading
import time

import pytest

import mzlite

WAIT_S = 20.0


def _blocked_fetch(cur, sub_holder):
    """Run ``cur.fetchmany(10)`` on a thread; returns (thread, outcome list)."""
    outcome: list = []

    def run():
        try:
            outcome.append(cur.fetchmany(10))
        except BaseException as e:  # noqa: BLE001 - the test inspects it
            outcome.append(e)
    th = threading.Thread(target=run, daemon=True)
    th.start()
    deadline = time.monotonic() + WAIT_S
    while not sub_holder()._cond._waiters:  # the fetch is waiting on the subscription
        assert th.is_alive() and time.monotonic() < deadline, outcome
        time.sleep(0.001)
    return th, outcome


def _subscribed(con):
    con.execute("CREATE TABLE t (a int)")
    cur = con.cursor()
    cur.execute("SUBSCRIBE t")  # an empty snapshot: a fetch waits for the first change
    return cur, lambda: cur._result.stream.sub


def test_interrupt_stops_a_blocked_fetchmany(con):
    cur, sub = _subscribed(con)
    th, outcome = _blocked_fetch(cur, sub)
    con.interrupt()
    th.join(WAIT_S)
    assert not th.is_alive()
    assert isinstance(outcome[0], mzlite.OperationalError) and outcome[0].sqlstate == "57014"
    con.cursor().execute("INSERT INTO t VALUES (1)")  # the cursor still streams
    rows = cur.fetchmany(10)  # waits for the insert
    assert [r[2:] for r in rows] == [(1,)] and rows[0][1] == 1


def test_close_from_another_thread_ends_a_blocked_fetchmany(con):
    cur, sub = _subscribed(con)
    th, outcome = _blocked_fetch(cur, sub)
    cur.close()
    th.join(WAIT_S)
    assert not th.is_alive()
    assert isinstance(outcome[0], mzlite.InterfaceError) or outcome[0] == []
    assert cur.closed


def test_statement_timeout_ends_a_blocked_fetchmany(con):
    con.execute("SET statement_timeout = 100")
    cur, _sub = _subscribed(con)
    with pytest.raises(mzlite.OperationalError) as e:
        cur.fetchmany(10)
    assert e.value.sqlstate == "57014" and "statement timeout" in str(e.value)
