"""The latest-state cache of read handles (``compute.arrangement.read._Latest``).

A read at or past a handle's last update returns the state after every update; the cache
keeps it per handle and derives a new handle's from its ancestor's plus the batches
inserted since.  Checked against a from-scratch recomputation over random +1/-1 updates,
with merges, compaction and old handles read after newer inserts.
"""
from __future__ import annotations

import random

import pytest

from compute.arrangement import read as arrangement
from compute.arrangement.spine import Spine
from tests.support.spines import expected_at as _scratch, expected_lookup, random_spine


@pytest.mark.parametrize("seed", range(12))
def test_latest_reads_equal_a_recomputation_over_random_updates(seed):
    """Sabotage: ``_Latest.then`` returning ``self`` (a new handle sharing its parent's
    cache) -> reads after an insert return the state before it."""
    rng = random.Random(seed)
    spine = Spine(lambda r: (r[0],), 2)
    log = []
    live = {}
    handles = []
    t = 0
    for _ in range(300):
        t += rng.randint(1, 3)
        ups = {}
        for _ in range(rng.randint(1, 6)):
            row = (rng.randint(0, 9), rng.randint(0, 3))
            if live.get(row, 0) > 0 and rng.random() < 0.5:
                d = -1
            else:
                d = 1
            live[row] = live.get(row, 0) + d
            ups[row] = ups.get(row, 0) + d
        ups = [(r, d) for r, d in ups.items() if d]
        spine.insert_at(t, ups, t + 1)
        log.extend((r, t, d) for r, d in ups)
        if rng.random() < 0.3:
            spine.set_logical_compaction(max(0, t - rng.randint(0, 20)))
        if rng.random() < 0.3:
            spine.maintain(None)
        if rng.random() < 0.6:  # read the latest state (often: the cache's case)
            h = spine.read_handle()
            got = h.snapshot(t)
            assert got == _scratch(log, t)
            got[("mutated",)] = 1  # the caller's copy: must not leak into later reads
        if rng.random() < 0.1:
            handles.append((spine.read_handle(), t, _scratch(log, t)))
    for h, at, expected in handles:  # old handles are unaffected by later inserts
        assert h.snapshot(at) == expected
    h = spine.read_handle()
    assert h.snapshot(t) == _scratch(log, t)
    since = h.since
    for as_of in range(since, t + 1, 7):  # earlier times still come from the batches
        assert h.snapshot(as_of) == _scratch(log, as_of)


def test_a_read_derives_the_latest_state_from_the_previous_one():
    """Sabotage: ``ReadHandle.snapshot`` without the latest-state branch -> no handle ever
    has ``latest.counts``."""
    spine = Spine(lambda r: (r[0],), 1)
    spine.insert_at(1, [((1,), 1), ((2,), 1)], 2)
    h1 = spine.read_handle()
    assert h1.snapshot(1) == {(1,): 1, (2,): 1}
    assert h1.latest.counts == {(1,): 1, (2,): 1}
    spine.insert_at(2, [((1,), -1)], 3)
    h2 = spine.read_handle()
    assert h2.latest.link is not None and h2.latest.link[0] is h1.latest  # derived, not re-summed
    assert h2.snapshot(2) == {(2,): 1}
    assert h2.latest.counts == {(2,): 1} and h2.latest.link is None
    spine.advance_upper(10)
    assert spine.read_handle().latest is h2.latest  # same updates: one cache


def test_large_arrangements_keep_no_latest_state(monkeypatch):
    """Sabotage: caching regardless of ``LATEST_MAX_ROWS`` -> ``counts`` is a dict."""
    monkeypatch.setattr(arrangement, "LATEST_MAX_ROWS", 3)
    spine = Spine(lambda r: (r[0],), 1)
    spine.insert_at(1, [((i,), 1) for i in range(5)], 2)
    h = spine.read_handle()
    assert h.snapshot(1) == {(i,): 1 for i in range(5)}
    assert h.latest.counts is False
    spine.insert_at(2, [((9,), 1)], 3)
    h = spine.read_handle()
    assert h.latest.counts is False
    assert h.snapshot(2) == {(i,): 1 for i in list(range(5)) + [9]}


@pytest.mark.parametrize("seed", range(6))
def test_lookup_many_equals_a_recomputation(seed):
    """``ReadHandle.lookup_many`` against a from-scratch sum over the update log, at times
    that see whole batches and times that cut through them, with keys absent, present and
    given twice.  Sabotage: skipping the entries of keys with several rows (the tuple branch
    in the C-level probe loop) -> counts missing."""
    rng = random.Random(seed)
    spine, log, t = random_spine(rng)
    h = spine.read_handle()
    for as_of in (t, t - 1, t // 2, t - 7):
        keys = [(k,) for k in rng.sample(range(25), 12)] + [(3,), (3,)]
        expect = expected_lookup(log, keys, as_of)
        assert h.lookup_many(keys, as_of) == expect
