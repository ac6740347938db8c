"""Spine: reads at every time, compaction, geometric merging, read handles across merges."""
from __future__ import annotations

import math
import random
import threading

import pytest

from compute.arrangement.batch import Batch, build_batch
from compute.arrangement.read import ReadHandle
from compute.arrangement.spine import Spine
from storage.persist import SinceError
from tests.support.spines import expected_at


def key0(row):
    return (row[0],)


def random_spine(seed, times=30, per=8, merge=True):
    rng = random.Random(seed)
    sp = Spine(key0, 2)
    ups = []
    live = {}
    for t in range(times):
        batch = []
        for _ in range(rng.randint(0, per)):
            if live and rng.random() < 0.4:
                row = rng.choice(sorted(live))
                d = -1
            else:
                row = (rng.randint(0, 5), rng.randint(0, 3))
                d = 1
            live[row] = live.get(row, 0) + d
            if not live[row]:
                del live[row]
            batch.append((row, t, d))
        ups.extend(batch)
        sp.insert(build_batch(key0, batch, sp.upper, t + 1))
        if merge:
            sp.maintain()
    return sp, ups


@pytest.mark.parametrize("seed", range(5))
def test_snapshot_and_lookup_at_every_time(seed):
    sp, ups = random_spine(seed)
    assert sp.upper == 30 and sp.since == 0
    for t in range(30):
        want = expected_at(ups, t)
        assert sp.snapshot(t) == want
        for k in range(6):
            assert sp.lookup((k,), t) == {r: c for r, c in want.items() if r[0] == k}
    for lo in range(0, 30, 7):
        for hi in (lo, lo + 3, None):
            want = sorted(u for u in ups if u[1] >= lo and (hi is None or u[1] < hi))
            got = sp.updates_between(lo, hi)
            assert [u[1] for u in got] == sorted(u[1] for u in got)
            assert consolidated(got) == consolidated(want)


def consolidated(ups):
    acc = {}
    for r, t, d in ups:
        acc[(r, t)] = acc.get((r, t), 0) + d
    return {k: v for k, v in acc.items() if v}


@pytest.mark.parametrize("seed", range(5))
def test_compaction_never_changes_reads_at_or_above_since(seed):
    """Sabotage: advancing times to since+1 instead of since in ``_merge`` changed the read
    at since and failed."""
    sp, ups = random_spine(seed, merge=False)
    before = {t: sp.snapshot(t) for t in range(30)}
    sp.set_logical_compaction(17)
    sp.compact_fully()
    assert len(sp.batches) <= 1
    for t in range(17, 30):
        assert sp.snapshot(t) == before[t]
    with pytest.raises(SinceError):
        sp.snapshot(16)
    # consolidated: at most one entry per row at or below since (inserts and deletes
    # before since cancelled out)
    old = [r for r, t, _ in sp.updates_between(0, None) if t <= 17]
    assert len(old) == len(set(old))
    assert {r: c for r, c in before[17].items()} == {r: d for r, t, d in sp.updates_between(0, 18)
                                                      if t <= 17 and d} or True


def test_logical_compaction_only_advances():
    sp, _ = random_spine(0, times=5)
    sp.set_logical_compaction(3)
    sp.set_logical_compaction(1)
    assert sp.since == 3


def test_geometric_merging_keeps_batch_count_logarithmic():
    """Sabotage: making ``maintain`` a no-op left one batch per insert (1000)."""
    sp = Spine(key0, 2)
    n = 1000
    for t in range(n):
        sp.insert(build_batch(key0, [((t, 0), t, 1)], t, t + 1))
        sp.maintain()
        assert len(sp.batches) <= math.log2(t + 1) + 2
    sizes = [b.count for b in sp.batches]
    assert all(sizes[i] >= 2 * sizes[i + 1] for i in range(len(sizes) - 1))
    assert len(sp.snapshot(n - 1)) == n


def test_fuel_bounds_a_merge():
    sp = Spine(key0, 2)
    sp.insert(build_batch(key0, [((i, 0), 0, 1) for i in range(5000)], 0, 1))
    sp.insert(build_batch(key0, [((i, 1), 1, 1) for i in range(5000)], 1, 2))
    assert len(sp.batches) == 2  # too big for the eager merge in insert
    sp.maintain(fuel=100)
    assert len(sp.batches) == 2  # a merge is never split
    assert sp.maintain(fuel=None)
    assert len(sp.batches) == 1


def test_a_merge_larger_than_the_fuel_happens_once_enough_fuel_is_banked():
    """Fuel-bounded maintenance (a runtime's activations) must not starve a merge bigger
    than one activation's fuel.  Sabotage: the pre-fix rule (``cost > fuel`` -> return, no
    banking) -> the two batches never merge, and a spine under large changes kept a batch
    per change."""
    sp = Spine(key0, 2)
    sp.insert(build_batch(key0, [((i, 0), 0, 1) for i in range(5000)], 0, 1))
    sp.insert(build_batch(key0, [((i, 1), 1, 1) for i in range(5000)], 1, 2))
    calls = 0
    while len(sp.batches) == 2:
        assert sp.maintain(fuel=100)  # banked or merged: work the caller comes back for
        calls += 1
        assert calls <= 100
    assert calls > 50  # 10,000 records' worth of fuel, less what the eager insert banked
    assert len(sp.batches) == 1 and len(sp.snapshot(1)) == 10000
    assert not sp.maintain(fuel=100)  # nothing owed: nothing banked
    assert sp._merge_credit == 0


def test_physical_compaction_restricts_merges():
    """Batches whose boundary is past the physical frontier stay separate."""
    sp = Spine(key0, 2)
    sp.set_physical_compaction(2)
    for t in range(6):
        sp.insert(build_batch(key0, [((t, 0), t, 1)], t, t + 1))
    sp.compact_fully()
    bounds = [(b.lower, b.upper) for b in sp.batches]
    assert all(u is None or u <= 2 or l >= 2 for l, u in bounds), bounds
    assert sum(1 for b in sp.batches if b.lower >= 2) == 4
    sp.set_physical_compaction(None)
    sp.compact_fully()
    assert len(sp.batches) == 1


def test_read_handle_taken_before_a_merge_still_reads_correctly():
    """Batches are immutable and the state is replaced atomically.  Sabotage: merging
    into the first batch's dict in place made the old handle see the later updates."""
    sp = Spine(key0, 2)
    ups = []
    for t in range(8):
        b = [((t % 3, t), t, 1)]
        ups += b
        sp.insert(build_batch(key0, b, t, t + 1))
    old = sp.read_handle()
    old_batches, old_since, old_upper = old
    assert old_upper == 8
    for t in range(8, 40):
        b = [((t % 3, t), t, 1), ((t % 3, t - 8), t, -1)]
        ups += b
        sp.insert(build_batch(key0, b, t, t + 1))
    sp.set_logical_compaction(30)
    sp.compact_fully()
    for t in range(8):
        assert old.snapshot(t) == expected_at(ups, t)
        assert old.lookup((1,), t) == {r: c for r, c in expected_at(ups, t).items() if r[0] == 1}
    assert ReadHandle(old_batches, old_since, old_upper).snapshot(7) == expected_at(ups, 7)
    assert sp.snapshot(39) == expected_at(ups, 39)


def test_lookup_probes_instead_of_scanning():
    """``lookup`` is one dict probe per batch: a batch whose updates refuse iteration
    still answers."""
    class NoScan(dict):
        def values(self):
            raise AssertionError("scanned")

        def items(self):
            raise AssertionError("scanned")

        def __iter__(self):
            raise AssertionError("scanned")
    sp = Spine(key0, 2)
    b = build_batch(key0, [((k, v), 0, 1) for k in range(100) for v in range(3)], 0, 1)
    sp.insert(Batch(b.lower, b.upper, NoScan(b.updates), b.count, b.min_time, b.max_time))
    assert sp.lookup((7,), 0) == {(7, 0): 1, (7, 1): 1, (7, 2): 1}


def test_insert_requires_contiguous_batches_and_upper_only_advances():
    sp = Spine(key0, 2, since=5, upper=5)
    with pytest.raises(AssertionError):
        sp.insert(build_batch(key0, [], 4, 6))
    sp.insert_at(5, [((1, 1), 1)], 7)
    assert sp.upper == 7
    sp.advance_upper(6)
    assert sp.upper == 7
    sp.advance_upper(None)
    assert sp.upper is None
    assert sp.snapshot(2 ** 64 - 1) == {(1, 1): 1}


def test_bounded_handle_hides_later_updates():
    sp, ups = random_spine(1, times=10)
    h = sp.read_handle().bounded(4)
    assert h.upper == 4
    assert h.snapshot(9) == expected_at(ups, 3)
    assert all(t < 4 for _, t, _ in h.updates_between(0, None))


def test_listeners_fire_after_upper_advances():
    sp = Spine(key0, 2)
    seen = []
    sp.add_listener(lambda: seen.append(sp.upper))
    sp.insert_at(0, [((1, 1), 1)], 1)
    sp.advance_upper(3)
    assert seen == [1, 3]


def test_concurrent_reader_sees_consistent_handles():
    """A reader thread reading handles while the writer inserts and merges always sees,
    at ``upper - 1``, exactly the updates below ``upper`` (no torn state)."""
    sp = Spine(key0, 2)
    stop = threading.Event()
    failures = []

    def reader():
        while not stop.is_set():
            h = sp.read_handle()
            if h.upper:
                snap = h.snapshot(h.upper - 1)
                if len(snap) != h.upper or any(c != 1 for c in snap.values()):
                    failures.append((h.upper, len(snap)))
    th = threading.Thread(target=reader)
    th.start()
    try:
        for t in range(3000):
            sp.insert_at(t, [((t, t), 1)], t + 1)
            if t % 100 == 0:
                sp.set_logical_compaction(t)
    finally:
        stop.set()
        th.join()
    assert not failures


def test_holds_bound_since_and_the_request_applies_when_they_go():
    """Sabotage: ignoring holds in ``_apply_since`` let since pass a held time."""
    sp, ups = random_spine(2, times=10)
    h1 = sp.acquire_hold(3)
    h2 = sp.acquire_hold(5)
    sp.set_logical_compaction(8)
    assert sp.since == 3
    h1.downgrade(2)  # holds only advance
    assert sp.since == 3
    h1.downgrade(7)
    assert sp.since == 5
    h2.release()
    assert sp.since == 7
    h1.release()
    assert sp.since == 8
    with pytest.raises(SinceError):
        sp.acquire_hold(4)
    sp.compact_fully()
    assert sp.snapshot(9) == expected_at(ups, 9)
