"""C-level paths for large batches: each must give exactly what the per-row path gives.

- ``compute.batch.batch_at`` over a dict's items (an index export's collector);
- ``Batch.single`` (no key has two entries) and the reads that use it:
  ``ReadHandle.snapshot`` and ``ReadHandle.snapshot_pairs``;
- ``compute.render._Collector.add`` (one ``dict`` merge for a chunk of distinct new rows)
  and ``add_mapping`` (a whole snapshot dict).
"""
from __future__ import annotations

import random

import pytest

from compute.arrangement import Spine
from compute.batch import batch_at, entries
from compute.ids import GlobalId
from compute.render import _Collector


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

    from compute import batch as B
    monkeypatch.setattr(B, "UNTRACK_MIN_ENTRIES", 1000)
    counts = {(i, f"r{i % 7}", i * 3): 1 for i in range(5000)}
    b = batch_at(_key0, counts.items(), 5, 0, 6)
    assert b.single and not gc.is_tracked(b.updates)
    sp = Spine(_key0, 3)
    sp.insert(b)
    assert sp.read_handle().snapshot(5) == counts
