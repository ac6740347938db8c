"""C-level paths for large batches: each must give exactly what the per-row path gives.

- ``compute.arrangement.batch.batch_at`` over a dict's items (an index export's collector);
- ``Batch.single`` (no key has two entries) and the reads that use it:
  ``ReadHandle.snapshot`` and ``ReadHandle.snapshot_pairs``;
- ``compute.render.dataflow._Collector.add`` (one ``dict`` merge for a chunk of distinct new rows),
  ``add_mapping`` (a whole snapshot dict) and ``add_whole`` (a table's write taken as its
  log entry by an index on the table);
- ``compute.arrangement.batch._grouped_flag``'s pairing of keys whose two entries are adjacent;
- ``compute.arrangement.batch.merge_batches``: one C-level copy and update, and re-consolidation of
  only the keys ``Batch.revisited`` names.
"""
from __future__ import annotations

import random

import pytest

from compute.arrangement.batch import batch_at, entries
from compute.arrangement.spine import Spine
from compute.render.dataflow import _Collector
from repr.ids import GlobalId


def _key0(row):
    return (row[0],)


_key0.key_column = 0


def _pairs(rng, n, dup_keys: bool):
    rows = {}
    for i in range(n):
        k = rng.randrange(n // 3) if dup_keys else i
        rows[(k, rng.randrange(5))] = rng.choice([-2, -1, 0, 1, 3])
    return rows


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dup_keys", [False, True])
def test_batch_at_over_dict_items_equals_the_list_path(seed, dup_keys):
    """Sabotage: the dict-items path keeping zero diffs (no ``0 in diffs`` filter) -> extra
    entries with diff 0."""
    rng = random.Random(seed)
    counts = _pairs(rng, 300, dup_keys)
    a = batch_at(_key0, counts.items(), 7, 7, 8)
    b = batch_at(_key0, list(counts.items()), 7, 7, 8)
    norm = lambda batch: {k: sorted(entries(v)) for k, v in batch.updates.items()}
    assert norm(a) == norm(b)
    assert a.count == b.count == sum(1 for d in counts.values() if d)
    assert a.single == b.single == (not dup_keys or all(len(entries(v)) == 1 for v in a.updates.values()))


@pytest.mark.parametrize("dup_keys", [False, True])
def test_snapshots_of_a_single_batch_equal_the_general_read(dup_keys):
    """Sabotage: ``_grouped_flag`` calling every batch ``single`` -> with two rows under one
    key, ``snapshot``/``snapshot_pairs`` read a tuple of entries as one entry (wrong rows)."""
    rng = random.Random(1)
    counts = {r: d for r, d in _pairs(rng, 300, dup_keys).items() if d}
    sp = Spine(_key0, 2)
    sp.insert_at(5, counts.items(), 6)
    h = sp.read_handle()
    assert h.snapshot(5) == counts
    assert dict(h.snapshot_pairs(5)) == counts
    assert len(h.snapshot_pairs(5)) == len(counts)
    assert h.batches[0].single == (not dup_keys)


def test_collector_merges_distinct_chunks_in_one_pass_and_sums_the_rest():
    """Sabotage: ``_Collector.add`` without the distinct/disjoint check (``update`` for every
    large chunk) -> repeated rows overwrite instead of summing."""
    col = _Collector("index", GlobalId("t", 1))
    first = [((i,), 1) for i in range(100)]
    col.add(first)
    col.add([((i,), 1) for i in range(50, 150)])          # overlaps what is collected
    col.add([((7,), 1)] * 70)                              # one row many times
    col.add([((i,), -1) for i in range(200, 300)] * 1)     # new distinct rows
    expect = {}
    for chunk in (first, [((i,), 1) for i in range(50, 150)], [((7,), 1)] * 70,
                  [((i,), -1) for i in range(200, 300)]):
        for r, d in chunk:
            expect[r] = expect.get(r, 0) + d
    assert col.oks == expect


def test_collector_takes_a_whole_snapshot_and_then_sums():
    """Sabotage: ``add_mapping`` always ``update``-ing -> a second snapshot overwrites."""
    col = _Collector("index", GlobalId("t", 1))
    snap = {(i,): 1 for i in range(10)}
    col.add_mapping(snap)
    col.add_mapping({(1,): 2, (20,): 1})
    assert col.oks == {**{(i,): 1 for i in range(10)}, (1,): 3, (20,): 1}
    assert snap == {(i,): 1 for i in range(10)}  # the caller's dict is not kept or changed


def test_a_large_batch_of_plain_rows_is_not_tracked_by_the_cyclic_collector(monkeypatch):
    """Sabotage: no young collection before the dict build in ``_grouped_flag`` -> the
    batch's dict is tracked (its fresh tuples were), and every collection of its
    generation walks it."""
    import gc

    from compute.arrangement import batch as B
    monkeypatch.setattr(B, "UNTRACK_MIN_ENTRIES", 1000)
    counts = {(i, f"r{i % 7}", i * 3): 1 for i in range(5000)}
    b = batch_at(_key0, counts.items(), 5, 0, 6)
    assert b.single and not gc.is_tracked(b.updates)
    sp = Spine(_key0, 3)
    sp.insert(b)
    assert sp.read_handle().snapshot(5) == counts


@pytest.mark.parametrize("case", ["adjacent", "scattered", "four_adjacent"])
def test_keys_in_adjacent_pairs_group_as_the_general_path(case):
    """``_grouped_flag`` pairs keys whose two entries are adjacent (a bulk UPDATE's log
    entry: each row's new and old version side by side) in C; anything else takes the
    general ``_grouped``, with the same result, entries in input order.  Sabotage: pairing
    ``(ents[1::2], ents[0::2])`` -> the entries of each key in the wrong order; without the
    ``len(by_key) * 2 == n`` check -> a key listed four times keeps only two entries."""
    from compute.arrangement.batch import _grouped, _grouped_flag
    if case == "four_adjacent":
        keys = [1, 1, 1, 1, 2, 2]
    else:
        keys = [k for i in range(50) for k in (i, i)]
        if case == "scattered":
            keys = keys[1:] + keys[:1]
    ents = [((k, j), 5, 1 if j % 2 else -1) for j, k in enumerate(keys)]
    by_key, single = _grouped_flag(keys, ents)
    assert by_key == _grouped(keys, ents) and not single


def test_an_index_on_a_table_takes_each_write_whole(monkeypatch):
    """A table's write reaches an index on it as the storage log entry itself
    (``_Collector.add_whole``): no ``row -> count`` dict of the changed rows is built.
    Sabotage: ``Dataflow._queue_input`` without its whole-entry branch -> the write's pairs
    go through ``_Collector.add``."""
    from compute.render import dataflow as render
    import mzlite
    added = []
    real_add = render._Collector.add
    monkeypatch.setattr(render._Collector, "add",
                        lambda self, pairs, errs=False: (added.append(len(pairs)), real_add(self, pairs, errs)))
    con = mzlite.connect()
    con.execute("CREATE TABLE t (a int NOT NULL, b int)")
    con.execute("CREATE INDEX t_a ON t (a)")
    con.cursor().executemany("INSERT INTO t VALUES (?, ?)", [(i, i) for i in range(300)])
    con.cursor().executemany("UPDATE t SET b = ? WHERE a = ?", [(i + 1, i) for i in range(0, 300, 2)])
    con.execute("DELETE FROM t WHERE a < 10")
    assert sorted(con.execute("SELECT a, b FROM t WHERE a IN (10, 11, 299)").fetchall()) == \
        [(10, 11), (11, 11), (299, 299)]
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(290,)]
    assert not [n for n in added if n >= 100]


def test_a_collector_merges_pairs_taken_whole_with_anything_added_later():
    """Sabotage: ``add_whole`` overwriting the pairs already taken -> the first write lost."""
    col = _Collector("index", GlobalId("t", 1))
    first = (((1,), 1), ((2,), 1))
    col.add_whole(first)
    oks, _errs = col.take_items()
    assert oks is first
    col.add_whole(first)
    col.add_whole((((2,), 1), ((3,), -1)))
    col.add([((4,), 1)])
    oks, _errs = col.take_items()
    assert dict(oks) == {(1,): 1, (2,): 2, (3,): -1, (4,): 1}


def _consolidated(batches, since):
    """From scratch: ``{(key, row, max(t, since)): diff}`` over ``batches``, zeros dropped."""
    acc: dict = {}
    for b in batches:
        for key, v in b.updates.items():
            for row, t, d in entries(v):
                k = (key, row, max(t, since))
                acc[k] = acc.get(k, 0) + d
    return {k: d for k, d in acc.items() if d}


@pytest.mark.parametrize("seed", range(8))
def test_merges_reconsolidate_revisited_keys_against_a_recomputation(seed):
    """Random one-time batches (rows inserted, deleted and re-inserted across times) merged
    in random adjacent pairs while since advances: every merged batch equals a from-scratch
    consolidation at since, its count is its number of entries, and no key that still holds
    one row at two times is missing from ``Batch.revisited``.  Sabotage: ``merge_batches``
    taking no candidates from ``revisited`` -- an insert and a later delete of one row,
    brought together by an earlier merge, stayed in the batch after since passed both."""
    from compute.arrangement.batch import merge_batches
    rng = random.Random(seed)
    batches = []
    for t in range(12):
        ups = {}
        for _ in range(rng.randrange(1, 12)):
            row = (rng.randrange(6), rng.randrange(2))
            ups[row] = ups.get(row, 0) + rng.choice([-1, 1])
        batches.append(batch_at(_key0, list(ups.items()), t, t, t + 1))
    since = 0
    while len(batches) > 1:
        since += rng.randrange(3)
        j = rng.randrange(len(batches) - 1)
        expected = _consolidated(batches[j:j + 2], since)
        merged = merge_batches(batches[j], batches[j + 1], since)
        assert _consolidated([merged], since) == expected
        got = {}
        for key, v in merged.updates.items():
            for row, t, d in entries(v):
                assert d != 0
                got[(key, row, t if t > since else since)] = got.get((key, row, t if t > since else since), 0) + d
            rows = [e[0] for e in entries(v)]
            if len(rows) != len(set(rows)):
                assert key in merged.revisited
        assert merged.count == sum(len(entries(v)) for v in merged.updates.values())
        batches[j:j + 2] = [merged]
    # at the end, since past every time: each row appears at most once per key
    final = merge_batches(batches[0], batch_at(_key0, [], 99, 99, 100), 100)
    for key, v in final.updates.items():
        rows = [e[0] for e in entries(v)]
        assert len(rows) == len(set(rows)), (key, v)
