"""Storage collections: reads at or above since are unchanged by compaction, whatever was folded."""
import contextlib
import random

from hypothesis import given, settings, strategies as st

from storage import persist
from storage.persist import StorageCollection


def _reference(history, as_of):
    acc = {}
    for row, t, d in history:
        if t <= as_of:
            acc[row] = acc.get(row, 0) + d
    return {r: c for r, c in acc.items() if c}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), fold_min=st.sampled_from([1, 3, 4096]),
       fold_step=st.sampled_from([1, 2, 16_384]))
def test_snapshots_at_or_above_since_survive_compaction(seed, fold_min, fold_step):
    """Reads at or above since are the same before, during and after a fold, however it is
    split into steps.  Sabotages: folding the log entry one step *above* since into the
    base (``<= since`` -> ``<= since + 1`` in ``_foldable``) changed a snapshot at since;
    publishing a fold with the whole log after it instead of ``log[len(entries):]``
    counted the folded entries twice (both seen red)."""
    rng = random.Random(seed)
    old = persist.FOLD_MIN_UPDATES, persist.FOLD_STEP_UPDATES
    persist.FOLD_MIN_UPDATES, persist.FOLD_STEP_UPDATES = fold_min, fold_step
    try:
        coll = StorageCollection("t", 1, since=0, upper=1)
        history = []
        t = 1
        for _ in range(30):
            ups = [((rng.randint(0, 5),), rng.choice([1, -1])) for _ in range(rng.randint(0, 4))]
            coll.append(ups, t, t + 1)
            history.extend((r, t, d) for r, d in ups)
            if rng.random() < 0.3:
                coll.compact(rng.randint(0, t))
            if rng.random() < 0.5:
                coll.fold_step()
            t += 1
            since = coll.since
            for as_of in range(since, t):
                assert coll.snapshot(as_of) == _reference(history, as_of)
            assert coll.updates_between(since + 1, None) == [u for u in history if u[1] >= since + 1]
        while coll.fold_step():
            pass
        for as_of in range(coll.since, t):
            assert coll.snapshot(as_of) == _reference(history, as_of)
    finally:
        persist.FOLD_MIN_UPDATES, persist.FOLD_STEP_UPDATES = old


def test_a_large_fold_runs_in_bounded_steps():
    """A fold larger than one step's budget leaves the base in place until its last step,
    then replaces the base and the folded prefix of the log in one piece; appends and
    compactions in between are kept.  Sabotage: ``_FoldJob.step`` ignoring its budget (the
    whole fold in one call, as before) -> no fold in progress after the first compaction."""
    coll = StorageCollection("t", 1, since=0, upper=1)
    coll.append([((i,), 1) for i in range(1000)], 1, 2)
    coll.compact(1)  # the first fold: one C-level build
    base0 = coll._state[0]
    coll.append([((i,), -1) for i in range(0, 1000, 2)] + [((i,), 1) for i in range(1000, 1300)], 2, 3)
    coll.append([((1,), 1)], 3, 4)
    old = persist.FOLD_MIN_UPDATES, persist.FOLD_STEP_UPDATES
    persist.FOLD_MIN_UPDATES, persist.FOLD_STEP_UPDATES = 1, 100
    try:
        coll.compact(3)
        assert coll.folding() and coll._state[0] is base0
        expect = {(i,): 1 for i in range(1, 1300, 2)} | {(i,): 1 for i in range(1000, 1300)}
        expect[(1,)] = 2
        assert coll.snapshot(3) == expect
        coll.append([((5000,), 1)], 4, 5)
        coll.compact(4)  # since moves on while the fold goes on
        steps = 0
        while coll.fold_step():
            steps += 1
            assert coll._state[0] is base0 and coll.snapshot(4) == expect | {(5000,): 1}
        assert steps >= 5 and not coll.folding()
        base, log = coll._state
        assert base == expect and [t for t, _ in log] == [4]
        assert coll.snapshot(4) == expect | {(5000,): 1}
    finally:
        persist.FOLD_MIN_UPDATES, persist.FOLD_STEP_UPDATES = old


def test_dropping_a_collection_abandons_its_fold():
    """Sabotage: ``compact(None)`` keeping ``_folding`` -> the finished fold published the
    dropped collection's rows again."""
    coll = StorageCollection("t", 1, since=0, upper=1)
    coll.append([((i,), 1) for i in range(50)], 1, 2)
    coll.append([((i,), 1) for i in range(50, 90)], 2, 3)
    old = persist.FOLD_MIN_UPDATES, persist.FOLD_STEP_UPDATES
    persist.FOLD_MIN_UPDATES, persist.FOLD_STEP_UPDATES = 1, 10
    try:
        coll.compact(2)
        assert coll.folding()
        coll.compact(None)
        while coll.fold_step():
            pass
        assert coll._state == ({}, []) and coll.since is None
    finally:
        persist.FOLD_MIN_UPDATES, persist.FOLD_STEP_UPDATES = old


def test_folding_waits_for_enough_updates():
    """Physical folding is amortised: a small tail of updates advances since without copying
    the base.  Sabotage: folding on every compaction made the base object change (seen red)."""
    coll = StorageCollection("t", 1, since=0, upper=1)
    coll.append([((i,), 1) for i in range(10_000)], 1, 2)
    coll.compact(1)
    base_before = coll._state[0]
    coll.append([((1,), 1)], 2, 3)
    coll.compact(2)
    assert coll.since == 2
    assert coll._state[0] is base_before
    assert coll.snapshot(2)[(1,)] == 2


def test_folding_one_bulk_write_into_an_empty_base():
    """The first fold of a bulk load is one ``dict`` build; unconsolidated updates (a row
    twice, a zero diff) still fold by summing.  Sabotage: ``_fold_into`` taking the
    ``dict(updates)`` shortcut without checking -> the row written twice counts once and the
    zero diff is kept."""
    from storage.persist import _fold_into
    bulk = [((i,), 1) for i in range(10)]
    assert _fold_into({}, [(5, bulk)]) == {(i,): 1 for i in range(10)}
    assert _fold_into({}, [(5, [((1,), 1), ((1,), 1), ((2,), 0)])]) == {(1,): 2}
    assert _fold_into({(1,): 1}, [(5, [((1,), -1), ((3,), 2)])]) == {(3,): 2}
    assert _fold_into({}, [(5, [((1,), 1)]), (6, [((1,), -1)])]) == {}


def test_a_deferred_fold_advances_since_and_leaves_the_log():
    """Sabotage: ``compact`` ignoring ``fold=False`` -> the log is folded into the base."""
    coll = StorageCollection("t", 1, since=0, upper=1)
    coll.append([((i,), 1) for i in range(5000)], 1, 2)
    coll.advance_upper(10)
    coll.compact(5, fold=False)
    assert coll.since == 5
    base, log = coll._state
    assert base == {} and len(log) == 1
    assert coll.snapshot(5) == {(i,): 1 for i in range(5000)}
    coll.compact(6)
    base, log = coll._state
    assert len(base) == 5000 and log == []


@contextlib.contextmanager
def _table_of(n: int):
    """``(connection, its database, the table's collection, the manual clock)`` for a table
    ``t (a int)`` holding ``0 .. n-1``; the clock then stands 5 s later."""
    import mzlite
    from mzlite.oracle import ManualClock
    clock = ManualClock(1)
    con = mzlite.connect(clock=clock)
    try:
        con.execute("CREATE TABLE t (a int)")
        con.cursor().executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(n)])
        db = con.database
        coll = next(c for c in db.storage.collections.values() if len(c) == n)
        clock.advance(5000)
        yield con, db, coll, clock
    finally:
        con.close()


def test_the_ticker_defers_folds_while_a_runtime_is_busy():
    """Sabotage: ``Database.tick`` folding regardless of ``BULK_GC.active`` -> the table's
    log is folded during the busy period."""
    from compute.replica.scheduling import BULK_GC
    with _table_of(5000) as (con, db, coll, clock):
        BULK_GC.enter()
        try:
            db.tick()
        finally:
            BULK_GC.exit()
        assert coll._state[0] == {} and coll.since > 1  # since moved, nothing folded
        clock.advance(10)
        db.tick()
        assert len(coll._state[0]) == 5000


def test_the_ticker_steps_a_fold_in_progress():
    """A fold started by a tick goes on in ``Database._fold_steps`` (which the ticker runs
    between ticks while a fold is in progress) and, finished, replaces the table's base.
    Sabotage: ``_fold_steps`` doing nothing -> the fold stayed in progress."""
    old = persist.FOLD_STEP_UPDATES
    try:
        with _table_of(10000) as (con, db, coll, clock):
            db.tick()  # the first fold: one C-level build
            con.execute("DELETE FROM t WHERE a % 2 = 0")  # one statement: 5,000 peeks of 10,000 rows took minutes under load
            persist.FOLD_STEP_UPDATES = 100
            clock.advance(5000)
            db.tick()
            assert coll.folding()
            for _ in range(100):
                if not coll.folding():
                    break
                db._fold_steps()
            assert not coll.folding()
            base, log = coll._state
            assert base == {(i,): 1 for i in range(1, 10000, 2)} and log == []
            assert con.execute("SELECT count(*) FROM t").fetchall() == [(5000,)]
    finally:
        persist.FOLD_STEP_UPDATES = old


def test_a_bulk_write_kept_as_a_dict_reads_like_pairs():
    """A bulk insert's log entry is its ``row -> diff`` dict.  Sabotage: ``_pairs`` handing
    out the dict itself -> reads iterate rows, not ``(row, diff)`` pairs, and fail."""
    coll = StorageCollection("t", 2, since=0, upper=1)
    counts = {(i, i % 3): 1 for i in range(3000)}
    coll.append(counts, 1, 2)
    coll.append([((0, 0), -1), ((5000, 1), 2)], 2, 3)
    expect = dict(counts)
    del expect[(0, 0)]
    expect[(5000, 1)] = 2
    assert coll.snapshot(2) == expect and coll.snapshot(1) == counts
    assert sorted(coll.updates_between(0, 3))[:2] == [((0, 0), 1, 1), ((0, 0), 2, -1)]
    (t1, first), (t2, second) = coll.batches_between(0, 3)
    assert (t1, dict(first), t2, list(second)) == (1, counts, 2, [((0, 0), -1), ((5000, 1), 2)])
    coll.compact(1)  # the first fold: the dict becomes the base
    coll.compact(2)
    assert coll.snapshot(2) == expect


def test_a_bulk_insert_inside_a_transaction_commits_its_rows():
    """The dict a bulk insert hands to the writer is added to an open transaction as pairs.
    Sabotage: ``Writer._apply`` extending the transaction's list with the dict -> its keys
    (rows, not pairs) are committed and the commit fails."""
    import mzlite
    con = mzlite.connect()
    try:
        con.execute("CREATE TABLE t (a int, b text)")
        con.execute("BEGIN")
        con.cursor().executemany("INSERT INTO t VALUES (?, ?)", [(i, "x") for i in range(200)] + [(1, "x")])
        con.execute("COMMIT")
        assert con.execute("SELECT count(*), count(DISTINCT a) FROM t").fetchall() == [(201, 200)]
    finally:
        con.close()


def test_a_log_entry_of_plain_pairs_stops_being_tracked_by_the_collector():
    """An appended list of ``(row, diff)`` pairs is kept as a tuple, which the cyclic
    collector stops tracking once it finds only plain values inside (one level of tuples
    per collection: rows, then pairs, then the entry), so long-lived log entries cost later
    full collections nothing.  Sabotage: keeping the entry as a list -> still tracked after
    three full collections."""
    import gc
    coll = StorageCollection(None, 2, since=0, upper=0)
    coll.append([((i, i + 1), 1) for i in range(100)], 0, 1)
    for _ in range(3):
        gc.collect()
    (_t, entry), = coll.batches_between(0, None)
    assert len(entry) == 100 and not gc.is_tracked(entry)
