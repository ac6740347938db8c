"""One-column keys stored as the value itself, and the pair-wise probe of many keys
(``compute.arrangement.batch.stored_key``, ``probe_key``, ``probe_batches``; ``ReadHandle.lookup_pairs``).

A spine whose key is one column stores each batch's keys as the column's value, not as a
1-tuple; every reader still looks up by the key tuple.  ``lookup_pairs`` answers a bulk
UPDATE/DELETE's thousands of keys as ``(row, count)`` pairs without hashing the rows it
finds.  Each is checked against a from-scratch recomputation over random +1/-1 updates,
with merges and reads that cut through batches.
"""
from __future__ import annotations

import random

import pytest

from compute.arrangement.batch import Batch, entries, merge_batches
from compute.arrangement.spine import Spine
from compute.render.operator import key_function
from expr.scalar import Column
from tests.support.spines import expected_lookup, random_spine


def test_a_one_column_key_is_stored_as_the_value_and_read_by_its_tuple():
    """Sabotage: ``stored_key`` returning ``key_fn`` (1-tuples stored) -> the stored keys
    are tuples; ``ReadHandle.lookup`` without the ``key[0]`` translation -> every lookup
    finds nothing."""
    raw = Spine(key_function([Column(0)]), 2)
    tupled = Spine(lambda r: (r[0],), 2)  # no ``key_column``: stored as returned
    for spine in (raw, tupled):
        spine.insert_at(1, [((7, 1), 1), ((7, 2), 1), ((8, 1), 1)], 2)
    (b_raw,), (b_tup,) = raw.batches, tupled.batches
    assert sorted(b_raw.updates) == [7, 8]
    assert sorted(b_tup.updates) == [(7,), (8,)]
    for spine in (raw, tupled):
        assert spine.read_handle().lookup((7,), 1) == {(7, 1): 1, (7, 2): 1}
        assert spine.lookup_many([(7,), (8,)], 1) == {(7, 1): 1, (7, 2): 1, (8, 1): 1}
        assert sorted(spine.lookup_pairs([(8,), (9,)], 1)) == [((8, 1), 1)]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("raw", [True, False])
def test_lookup_pairs_equals_a_recomputation(seed, raw):
    """Distinct keys, absent and present, at the last time (every batch whole: the C-level
    probe) and at times that cut through batches (the dict path); each row once, no zero.
    Sabotage: ``probe_batches`` taking a key held by several batches as if held by one
    (no ``shared`` pass) -> a row listed twice, or a cancelled row listed with its halves."""
    rng = random.Random(seed)
    key_fn = key_function([Column(0)]) if raw else (lambda r: (r[0],))
    spine, log, t = random_spine(rng, key_fn, compact=True)
    h = spine.read_handle()
    for as_of in (t, t, t - 1, max(t // 2, spine.since)):
        keys = [(k,) for k in rng.sample(range(25), 14)]
        got = h.lookup_pairs(keys, as_of)
        assert len({r for r, _c in got}) == len(got)
        assert all(c for _r, c in got)
        assert dict(got) == expected_lookup(log, keys, as_of)


@pytest.mark.parametrize("seed", range(8))
def test_a_merged_batch_is_single_exactly_when_every_value_is_one_entry(seed):
    """``Batch.single`` lets readers take values as entries in C; a merge keeps it when no
    key ends up with several entries.  Sabotage: ``merge_batches`` always passing
    ``single=True`` -> a value holding two entries is read as one row (first assertion);
    always ``False`` -> merged single batches lose the fast path (second assertion)."""
    rng = random.Random(seed)

    def batch(lo, keys, t):
        ents = {k: ((k, rng.randint(0, 2)), t, 1) for k in keys}
        return Batch(lo, lo + 1, ents, len(ents), t, t, True)

    for i in range(40):
        a = batch(0, rng.sample(range(30), 10), 0)
        b = batch(1, rng.sample(range(30, 60) if i % 4 == 0 else range(30), 10), 1)
        m = merge_batches(a, b, rng.choice([None, 0, 1, 2]))
        one_each = all(v[1].__class__ is int for v in m.updates.values())
        assert not m.single or one_each
        if not set(a.updates) & set(b.updates):
            assert m.single
        for k, v in m.updates.items():
            assert all(e[0][0] == k for e in entries(v))


@pytest.mark.parametrize("seed", range(6))
def test_updates_by_time_equals_the_log(seed):
    """``ReadHandle.updates_by_time`` (how a dataflow reads an imported index's new batches)
    against the update log, over batches at one time (single-entry values, read in one C
    pass, and keys with several rows) and merged ones.  Sabotage: the one-time path taking
    every batch's values as single entries -> a key's tuple of entries read as one row."""
    rng = random.Random(seed)
    spine, log, t = random_spine(rng, key_function([Column(0)]))
    # two more batches, each at one time, too unequal to merge: one with a key of two rows
    for rows in ([((k, j), 1) for k in range(100, 160) for j in (0, 1) if (k + j + seed) % 3], [((200, 0), 1), ((200, 1), 1)]):
        t += 1
        spine.insert_at(t, rows, t + 1)
        log.extend((r, t, d) for r, d in rows)
    assert not spine.batches[-1].single and spine.batches[-1].min_time == spine.batches[-1].max_time
    h = spine.read_handle()
    for lower, upper in ((1, t + 1), (t // 2, t), (t - 3, None)):
        got = {time: sorted(pairs) for time, pairs in h.updates_by_time(lower, upper)}
        want: dict = {}
        for row, time, d in log:
            if time >= lower and (upper is None or time < upper):
                want.setdefault(time, []).append((row, d))
        assert got == {time: sorted(p) for time, p in want.items()}
