"""One-shot scans at the speed of their data (issue 22): the mechanisms and a reference test.

Mechanisms, each with the sabotage that turned its test red:

* ``StorageCollection.snapshot_view``: a read of a loaded table is its stored dict, not a copy;
* ``Dataflow._plan_scan``: a one-shot read's input feeding only MFPs goes through them in
  ``SCAN_UNIT``-sized units from the input (no message and no step per ``CHUNK``);
* ``OneShotSpine``: a peek dataflow's index keeps its one time's collector dict, no batch;
* ``expand`` and ``Cursor.fetchall``: the peek's rows become the result list once and
  fetchall hands that list over.

The reference test runs random tables (inserts, updates, deletes, duplicate rows) and random
predicates and projections through mzlite with the interactive runtime on and off, against a
from-scratch evaluation in plain Python.
"""
from __future__ import annotations

import random

import pytest

import mzlite
from compute.arrangement import oneshot
from compute.arrangement.oneshot import OneShotSpine
from compute.arrangement.spine import Spine
from compute.dataflow import BuildDesc, DataflowDescription, IndexExport, SourceImport
from compute.render import dataflow as render
from compute.render.dataflow import Dataflow
from compute.render.mfp import MfpOp
from compute.render.operator import key_function
from expr.relation import Filter, Get, Project
from expr.scalar import Call, Column, Literal
from mzlite import reads
from repr.ids import transient, user
from storage.persist import StorageCollection

T = user(1)
VIEW, IDX = transient(1), transient(2)


def _point_filter_desc(as_of=0, single_time=True):
    plan = Project(Filter(Get(T, 3), (Call("lt", (Column(0), Literal(50, "int4")), "bool"),)), (2, 0))
    return DataflowDescription((SourceImport(T, 3),), (), (BuildDesc(VIEW, plan),),
                               (IndexExport(IDX, VIEW, (Column(0), Column(1)), 2),), (),
                               as_of=as_of, until=as_of + 1 if single_time else None)


def _loaded(n=5000):
    coll = StorageCollection(T, 3)
    coll.append({(i, i % 7, i % 5): 1 for i in range(n)}, 0, 1)  # a bulk insert: one dict entry
    return coll


# ------------------------------------------------------------------ snapshot_view


def test_snapshot_view_is_the_stored_dict_when_nothing_above_it_is_due(monkeypatch):
    """The stored base, or a table's one bulk-insert dict, is returned as it is; anything
    else is consolidated as ``snapshot`` does.  Sabotage: ``snapshot_view`` consolidating
    (a copy) instead of returning the entry, or instead of returning the base, failed the
    ``is`` checks."""
    from storage import persist
    monkeypatch.setattr(persist, "FOLD_MIN_UPDATES", 1)
    coll = _loaded(100)
    entry = coll._state[1][0][1]
    assert coll.snapshot_view(0) is entry
    assert coll.snapshot_view(0) == coll.snapshot(0)
    coll.append([((1, 1, 1), -1), ((200, 4, 0), 1)], 1, 2)
    assert coll.snapshot_view(0) is entry  # the later entry is not due at 0
    assert coll.snapshot_view(1) == coll.snapshot(1) and coll.snapshot_view(1) is not entry
    assert (1, 1, 1) not in coll.snapshot_view(1) and (1, 1, 1) in entry  # never mutated
    coll.compact(1)
    for _ in range(100):
        if not coll.fold_step():
            break
    base, log = coll._state
    assert not log and base  # folded
    assert coll.snapshot_view(1) is base
    assert coll.snapshot_view(1) == coll.snapshot(1)


def test_a_peek_of_a_loaded_table_copies_no_snapshot(monkeypatch):
    """A point filter over a bulk-loaded table never consolidates a snapshot.  Sabotage:
    ``_SourceInput.hydrate`` calling ``snapshot`` (not ``snapshot_view``) failed."""
    con = mzlite.connect()
    con.execute("CREATE TABLE t (id int, g int, v int)")
    con.cursor().executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, i % 10, i % 3) for i in range(3000)])
    assert con.execute("SELECT id, v FROM t WHERE id = 42").fetchall() == [(42, 0)]
    calls = []
    real = StorageCollection._consolidated
    monkeypatch.setattr(StorageCollection, "_consolidated", lambda self, state, as_of: calls.append(
        (self.id, state is self._state)) or real(self, state, as_of))
    assert con.execute("SELECT id, v FROM t WHERE id = 42").fetchall() == [(42, 0)]
    assert [c for c in calls if c[1]] == []  # (the error log, empty, is consolidated: nothing to copy)
    con.close()


# ------------------------------------------------------------------ scan units


def test_one_shot_scan_pushes_units_straight_through_the_mfp(monkeypatch):
    """A single-time dataflow's source feeding only an MFP is cut into scan units, each
    pushed through the MFP from the input; a maintained dataflow keeps ``CHUNK`` messages;
    both give the same rows.  Sabotage: ``_plan_scan`` returning at once (no scan) made the
    one-shot dataflow push 5000 / 16 chunks and failed."""
    monkeypatch.setattr(render, "CHUNK", 16)
    monkeypatch.setattr(render, "SCAN_UNIT", 1024)
    pushes = []
    real = MfpOp.push

    def push(self, port, chunk, t):
        chunk = list(chunk)  # (a scan unit is an iterator read once)
        pushes.append(len(chunk))
        return real(self, port, chunk, t)
    monkeypatch.setattr(MfpOp, "push", push)
    results = {}
    for single in (True, False):
        pushes.clear()
        df = Dataflow(_point_filter_desc(single_time=single), sources={T: _loaded()})
        steps = 0
        while df.step(fuel=1) and df.frontier() == 0:
            steps += 1
        results[single] = df.exports[IDX].oks.snapshot(0)
        if single:
            # one call in the MFP: units of SCAN_UNIT // 2 rows
            assert max(pushes) == 512 and len(pushes) == -(-5000 // 512), pushes[:5]
            assert steps <= len(pushes) + 3
        else:
            assert max(pushes) == 16
    assert results[True] == results[False] == {(i % 5, i): 1 for i in range(50)}


def test_scan_unit_shrinks_with_the_mfps_calls():
    """Each call in the MFP divides the unit (a unit stays a few milliseconds of work, so an
    interrupt is seen promptly).  Sabotage: a unit of ``SCAN_UNIT`` whatever the MFP failed."""
    df = Dataflow(_point_filter_desc(), sources={T: _loaded(10)})
    node = next(n for n in df._inputs if n.scan is not None)
    assert node.scan[1] == render.SCAN_UNIT // 2
    heavy = Project(Filter(Get(T, 3), tuple(Call("lt", (Call("add_int4", (Column(0), Column(1)), "int4"),
                                                                Literal(i, "int4")), "bool") for i in range(20))),
                    (0, 1))
    desc = DataflowDescription((SourceImport(T, 3),), (), (BuildDesc(VIEW, heavy),),
                               (IndexExport(IDX, VIEW, (Column(0), Column(1)), 2),), (), as_of=0, until=1)
    node = next(n for n in Dataflow(desc, sources={T: _loaded(10)})._inputs if n.scan is not None)
    assert node.scan[1] == render.CHUNK


# ------------------------------------------------------------------ OneShotSpine


def test_peek_dataflow_index_keeps_the_collector_dict(monkeypatch):
    """A peek dataflow's export is a ``OneShotSpine``: its rows stay the collector's dict
    and a snapshot builds no batch.  Sabotage: rendering every export as a ``Spine`` failed
    the isinstance check (and built a batch)."""
    df = Dataflow(_point_filter_desc(), sources={T: _loaded()})
    exp = df.exports[IDX]
    assert isinstance(exp.oks, OneShotSpine)
    monkeypatch.setattr(oneshot, "batch_at", lambda *a: pytest.fail("built a batch"))
    df.run_to_completion()
    assert exp.oks.upper == 1
    assert exp.oks.snapshot(0) == {(i % 5, i): 1 for i in range(50)}
    maintained = Dataflow(_point_filter_desc(single_time=False), sources={T: _loaded(10)})
    assert type(maintained.exports[IDX].oks) is Spine


def test_one_shot_spine_reads_as_a_spine_would():
    """Every read of a ``OneShotSpine`` (snapshot, lookups, handles, updates, a later insert,
    compaction) equals an ordinary ``Spine`` fed the same updates.  Sabotage: dropping the
    ``_materialize`` before ``lookup`` returned no rows and failed."""
    rng = random.Random(7)
    for _ in range(30):
        key = key_function((Column(0),))
        a = OneShotSpine(key, 2, since=3, upper=3)
        b = Spine(key, 2, since=3, upper=3)
        first = {(rng.randint(0, 5), rng.randint(0, 3)): rng.choice([1, 1, 2, 0, -1]) for _ in range(12)}
        a.insert_at(3, dict(first), 4)
        b.insert_at(3, first.items(), 4)
        assert a.snapshot(3) == b.snapshot(3)
        assert a.upper == b.upper == 4
        if rng.random() < 0.5:
            later = [((rng.randint(0, 5), 9), rng.choice([1, -1]))]
            a.insert_at(5, later, 6)
            b.insert_at(5, later, 6)
        if rng.random() < 0.5:
            a.set_logical_compaction(4)
            b.set_logical_compaction(4)
        lo = a.since
        for t in range(lo, 7):
            assert a.snapshot(t) == b.snapshot(t)
        k = rng.randint(0, 5)
        assert a.lookup((k,), lo) == b.lookup((k,), lo)
        assert sorted(a.updates_between(0, None)) == sorted(b.updates_between(0, None))
        assert a.read_handle().snapshot(lo) == b.read_handle().snapshot(lo)
        assert len(a) == len(b)


# ------------------------------------------------------------------ the result, once


def test_expand_and_fetchall_hand_the_rows_over():
    """The peek's pairs become the result list in C-level passes, and ``fetchall`` of a whole
    result hands that list over (no copy); a partly fetched result still slices.
    Sabotage: ``fetchall`` slicing ``rows[self._pos:]`` always failed the ``is`` check."""
    assert reads.expand([((i,), 1) for i in range(40)]) == [(i,) for i in range(40)]
    assert reads.expand([((1,), 2)] + [((i,), 1) for i in range(2, 40)]) == [(1,), (1,)] + [
        (i,) for i in range(2, 40)]
    con = mzlite.connect()
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t SELECT generate_series(1, 100)")
    cur = con.execute("SELECT a FROM t")
    held = cur._result.rows
    out = cur.fetchall()
    assert out is held and out == [(i,) for i in range(1, 101)]
    assert cur.fetchall() == [] and cur.fetchone() is None and cur.rowcount == 100
    cur = con.execute("SELECT a FROM t")
    assert cur.fetchmany(3) == [(1,), (2,), (3,)]
    assert cur.fetchall() == [(i,) for i in range(4, 101)]
    assert cur.fetchall() == []
    con.close()


# ------------------------------------------------------------------ semantics


@pytest.mark.parametrize("runtime", ["true", "false"])
def test_scan_semantics_diffs_errors_and_an_older_read_time(runtime):
    """A row stored twice comes back twice; a division by zero on one row raises (and stops
    raising once that row is deleted); a transaction's read keeps reading its time while
    another session writes."""
    name = f":memory:oneshot-{runtime}"
    con = mzlite.connect(name, system_parameters={"enable_compute_interactive_runtime": runtime})
    con.execute("CREATE TABLE t (a int, b text)")
    con.cursor().executemany("INSERT INTO t VALUES (?, ?)", [(i, f"s{i % 4}") for i in range(2000)])
    con.execute("INSERT INTO t VALUES (7, 's3')")
    assert con.execute("SELECT a, b FROM t WHERE a = 7").fetchall() == [(7, "s3"), (7, "s3")]
    assert con.execute("SELECT b FROM t WHERE a < 3").fetchall() == [("s0",), ("s1",), ("s2",)]
    with pytest.raises(mzlite.DataError) as e:
        con.execute("SELECT a FROM t WHERE 10 / (a - 1500) > 100").fetchall()
    assert e.value.sqlstate == "22012"
    con.execute("DELETE FROM t WHERE a = 1500")
    assert con.execute("SELECT a FROM t WHERE 10 / (a - 1500) < -5").fetchall() == [(1499,)]
    other = mzlite.connect(name)
    con.execute("BEGIN")
    before = con.execute("SELECT a FROM t WHERE a >= 1990").fetchall()
    other.execute("DELETE FROM t WHERE a = 1995")
    other.execute("INSERT INTO t VALUES (5000, 'x')")
    assert con.execute("SELECT a FROM t WHERE a >= 1990").fetchall() == before
    con.execute("COMMIT")
    now = con.execute("SELECT a FROM t WHERE a >= 1990").fetchall()
    assert now == [(a,) for a in range(1990, 2000) if a != 1995] + [(5000,)]
    other.close()
    con.close()


def _pred(rng):
    """A random predicate as (SQL, Python function of the row (a, b, c))."""
    col = rng.choice(["a", "b", "c"])
    k = rng.randint(-2, 12)
    op = rng.choice(["=", "<", ">=", "<>"])
    py = {"=": lambda x, y: x == y, "<": lambda x, y: x < y, ">=": lambda x, y: x >= y,
          "<>": lambda x, y: x != y}[op]
    i = "abc".index(col)

    def f(r, i=i, k=k, py=py):
        return r[i] is not None and py(r[i], k)
    return f"{col} {op} {k}", f


@pytest.mark.parametrize("runtime", ["true", "false"])
def test_random_scans_match_a_from_scratch_evaluation(runtime):
    """Random tables under inserts, updates and deletes (duplicate rows included), read by
    random filters (AND/OR of comparisons, NULLs) and projections, against a plain-Python
    evaluation of the model multiset."""
    rng = random.Random(2200 + (runtime == "true"))
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": runtime})
    con.execute("CREATE TABLE r (a int, b int, c int)")
    model: list = []

    def val():
        return None if rng.random() < 0.1 else rng.randint(0, 10)
    first = [(val(), val(), val()) for _ in range(rng.randint(1500, 3000))]
    con.cursor().executemany("INSERT INTO r VALUES (?, ?, ?)", first)
    model.extend(first)
    for _round in range(12):
        kind = rng.random()
        if kind < 0.4:
            rows = [(val(), val(), val()) for _ in range(rng.randint(1, 40))]
            if rng.random() < 0.3:
                rows += rows[:3]  # duplicates: diff 2
            con.cursor().executemany("INSERT INTO r VALUES (?, ?, ?)", rows)
            model.extend(rows)
        elif kind < 0.7:
            k = rng.randint(0, 10)
            con.execute(f"DELETE FROM r WHERE b = {k}")
            model = [r for r in model if r[1] != k]
        else:
            k, d = rng.randint(0, 10), rng.randint(1, 3)
            con.execute(f"UPDATE r SET c = c + {d} WHERE a = {k}")
            model = [(a, b, c + d if c is not None else None) if a == k else (a, b, c) for a, b, c in model]
        for _q in range(4):
            (s1, f1), (s2, f2) = _pred(rng), _pred(rng)
            join = rng.choice(["AND", "OR"])
            cols = rng.choice([("a", "b", "c"), ("c", "a"), ("b",)])
            idx = ["abc".index(x) for x in cols]
            sql = f"SELECT {', '.join(cols)} FROM r WHERE {s1} {join} {s2}"
            keep = (lambda r: f1(r) and f2(r)) if join == "AND" else (lambda r: f1(r) or f2(r))
            want = sorted((tuple(r[i] for i in idx) for r in model if keep(r)),
                          key=lambda row: tuple((v is None, v or 0) for v in row))
            got = con.execute(sql).fetchall()
            assert got == want, sql
        assert sorted(con.execute("SELECT a, b, c FROM r").fetchall(),
                      key=lambda row: tuple((v is None, v or 0) for v in row)) == sorted(
            model, key=lambda row: tuple((v is None, v or 0) for v in row))
    con.close()
