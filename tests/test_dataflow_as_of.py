"""One as-of rule for every new dataflow: ``Reader.dataflow_as_of``.

An index, a materialized view (also when a restarted replica rebuilds one) and a SUBSCRIBE
take their ``as_of`` from it, and nowhere else.  Sabotage: ``ddl.create_index_dataflow``
choosing its own as_of (the oracle's read timestamp, the inputs' since ignored, as one of
the three copies did) failed ``test_every_new_dataflow_takes_the_one_rule`` and
``test_a_later_input_since_wins``.
"""
from __future__ import annotations

import mzlite
from mzlite.reads import Reader


def test_the_rule_without_a_session():
    """The oracle's read timestamp with every table's upper advanced past it, also for a
    dataflow reading tables."""
    con = mzlite.connect(clock=lambda: 5_000)
    db = con.database
    con.execute("CREATE TABLE t (a int)")
    tid = db.catalog.try_resolve("t").id
    t, holds = db.reader.dataflow_as_of({tid})
    assert t == db.oracle.peek_read_ts() >= 5_000
    assert holds[0] and db.storage_holds.min_hold(tid) == t  # held there
    db.reader.release(holds)
    assert db.storage.collections[tid].upper > t
    con.close()


def test_a_dataflow_of_constants_is_readable_from_0():
    """Materialize's as-of choice: nothing time-varying constrains a dataflow with no inputs,
    so it starts at 0 and ``AS OF 2`` reads it.  Sabotage: return the oracle's time for
    empty ``ids`` in ``Reader.dataflow_as_of`` and the read at 2 is refused (22000)."""
    con = mzlite.connect(clock=lambda: 5_000)
    db = con.database
    assert db.reader.dataflow_as_of(set())[0] == 0
    con.execute("CREATE MATERIALIZED VIEW mv AS SELECT 1 AS a")
    con.execute("CREATE VIEW v AS SELECT 1 AS a WHERE mz_now() > 3")
    con.execute("CREATE DEFAULT INDEX ON v")
    assert con.execute("SELECT * FROM mv AS OF 2").fetchall() == [(1,)]
    assert con.execute("SELECT * FROM v AS OF 2").fetchall() == []
    assert con.execute("SELECT * FROM v AS OF 4").fetchall() == [(1,)]
    con.close()


def test_a_later_input_since_wins(monkeypatch):
    now = [5_000]
    con = mzlite.connect(clock=lambda: now[0])
    db = con.database
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    tid = db.catalog.try_resolve("t").id
    later = db.oracle.peek_read_ts() + 1_000
    sinces = {tid: later}
    original = Reader.since_of
    monkeypatch.setattr(Reader, "since_of", lambda self, gid: sinces.get(gid, original(self, gid)))
    t, holds = db.reader.dataflow_as_of({tid})
    db.reader.release(holds)
    assert t == later
    con.execute("CREATE INDEX t_a ON t (a)")
    index = db.catalog.try_resolve("t_a").id
    assert db.controller.since(index) == later  # the index starts there
    sinces.clear()
    now[0] = later + 10
    db.tick()  # time passes: the table's upper moves past the index's as_of
    assert con.execute("SELECT a FROM t WHERE a = 1").fetchall() == [(1,)]
    con.close()


def test_every_new_dataflow_takes_the_one_rule(monkeypatch):
    calls = []
    original = Reader.dataflow_as_of

    def recording(self, ids, session=None, as_of=None, at_least=False):
        t, holds = original(self, ids, session, as_of, at_least)
        calls.append((frozenset(ids), session is not None, t))
        return t, holds
    monkeypatch.setattr(Reader, "dataflow_as_of", recording)
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": True})
    db = con.database
    con.execute("CREATE TABLE t (a int)")
    tid = db.catalog.try_resolve("t").id
    con.execute("CREATE INDEX t_a ON t (a)")
    assert calls[-1][:2] == ({tid}, False)
    con.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n FROM t")
    assert len(calls) == 2 and not calls[-1][1]
    m = db.catalog.try_resolve("m").id
    assert db.storage.collections[m].since == calls[-1][2]  # its output starts at the dataflow's as_of
    sub = con.subscribe("t", as_of=calls[-1][2])
    assert calls[-1][1] and sub.as_of == calls[-1][2]
    con.execute("ALTER SYSTEM SET enable_compute_interactive_runtime = false")  # rebuilds the index and m
    assert len(calls) == 5 and not any(s for _ids, s, _t in calls[3:])
    con.execute("INSERT INTO t VALUES (1)")
    assert con.execute("SELECT n FROM m").fetchall() == [(1,)]
    sub.close()
    con.close()
