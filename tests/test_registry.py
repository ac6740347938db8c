"""The shared-arrangement registry: placeholders, seals and wake-ups, holds, refusals."""
from __future__ import annotations

import threading

import pytest

from compute.arrangement.read import ReadHandle
from compute.arrangement.spine import Spine
from compute.errors import ComputeProtocolError
from compute.replica.registry import SharedArrangementRegistry
from repr.timestamp import MAX
from storage.persist import SinceError
from tests.support.standins import t, u


def spines(rows=((1, "a"),), upper=1):
    oks = Spine(lambda r: (r[0],), 2)
    errs = Spine(lambda r: (), 2)
    oks.insert_updates([(r, 0, 1) for r in rows], upper)
    errs.insert_updates([], upper)
    return oks, errs


def advance(reg, id, oks, errs, rows, time, upper):
    oks.insert_updates([(r, time, 1) for r in rows], upper)
    errs.insert_updates([], upper)
    reg.note_upper(id)


def test_placeholder_is_adopted_in_place_and_never_overwritten():
    """A reader first: its slot (and the seal callback registered on it) is the one the
    publisher fills.  Sabotage checked: ``publish`` building a fresh slot instead of
    adopting left the reader's callback unfired and its hold unseen (red), restored."""
    reg = SharedArrangementRegistry()
    fired = []
    reg.on_seal(u(2), lambda: fired.append(1))
    hold = reg.acquire_read_hold(u(2), 0, "interactive")
    placeholder = reg.slot(u(2))
    assert not placeholder.adopted
    oks, errs = spines()
    reg.publish(u(2), oks, errs)
    assert reg.slot(u(2)) is placeholder and placeholder.adopted and fired
    assert reg.reader_holds(u(2)) == [0]
    with pytest.raises(ComputeProtocolError, match="already published"):
        reg.publish(u(2), *spines())
    hold.release()


def test_import_waits_for_the_seal_and_is_bounded_one_step_past_as_of():
    reg = SharedArrangementRegistry()
    oks, errs = spines(upper=1)
    reg.publish(u(2), oks, errs)
    assert reg.try_import_snapshot_at(u(2), 1, "interactive") is None  # upper 1 <= as_of 1
    advance(reg, u(2), oks, errs, [(2, "b")], 1, 2)
    advance(reg, u(2), oks, errs, [(3, "c")], 2, 3)
    imp = reg.try_import_snapshot_at(u(2), 1, "interactive")
    assert imp.oks.upper == 2 and imp.oks.snapshot(1) == {(1, "a"): 1, (2, "b"): 1}
    assert imp.oks.updates_between(0, None) == [((1, "a"), 0, 1), ((2, "b"), 1, 1)]


def test_blocking_import_is_woken_by_the_publisher_no_lost_wakeup():
    """The importer is asleep in wait() before the publisher advances; only the publisher's
    notify can wake it (the join bound is only there to fail rather than hang).  Sabotage
    checked: removing ``notify_all`` from ``note_upper`` left it asleep (red), restored."""
    reg = SharedArrangementRegistry()
    oks, errs = spines(upper=1)
    got = []
    started = threading.Event()

    def importer():
        started.set()
        got.append(reg.import_snapshot_at(u(2), 3, "interactive"))  # no timeout

    th = threading.Thread(target=importer, daemon=True)
    th.start()
    started.wait()
    reg.publish(u(2), oks, errs)       # adopts: not yet sealed past 3
    for _ in range(10_000_000):        # the precondition: the importer is asleep in wait()
        with reg._cond:
            if reg._cond._waiters:
                break
    for k in range(1, 4):
        advance(reg, u(2), oks, errs, [(k + 1, "x")], k, k + 1)
    th.join(5)
    assert not th.is_alive() and got[0] is not None and len(got[0].oks.snapshot(3)) == 4


def test_seal_callbacks_fire_after_the_upper_advanced():
    reg = SharedArrangementRegistry()
    oks, errs = spines(upper=1)
    reg.publish(u(2), oks, errs)
    seen = []
    reg.on_seal(u(2), lambda: seen.append(reg.upper(u(2))))
    advance(reg, u(2), oks, errs, [], 1, 5)
    assert seen == [5]


def test_standing_hold_pins_until_the_importing_runtime_applies():
    """Sabotage checked: with the standing-hold term removed from the meet, since jumped
    to 10 before interactive applied anything (red); see also test_interleavings."""
    reg = SharedArrangementRegistry()
    reg.register_standing_holder("interactive")
    oks, errs = spines(upper=20)
    reg.publish(u(2), oks, errs)
    reg.allow_compaction(u(2), 10)
    reg.apply_compactions()
    assert reg.since(u(2)) == 0 and oks.since == 0
    reg.set_standing_hold(u(2), "interactive", 7)
    reg.apply_compactions()
    assert reg.since(u(2)) == 7
    reg.set_standing_hold(u(2), "interactive", 12)
    reg.apply_compactions()
    assert reg.since(u(2)) == 10 and oks.since == 10 and errs.since == 10


def test_transient_published_ids_are_not_pinned_by_standing_holds():
    """AllowCompaction for transient ids never reaches interactive, so pinning them would
    stall them forever."""
    reg = SharedArrangementRegistry()
    reg.register_standing_holder("interactive")
    reg.publish(t(3), *spines(upper=20))
    reg.allow_compaction(t(3), 10)
    reg.apply_compactions()
    assert reg.since(t(3)) == 10


def test_reader_hold_bounds_the_publisher_and_release_never_zeroes_the_capability():
    """Sabotage checked: keeping a released reader's empty frontier in the hold table with
    the meet treating it as absorbing (``if held is None: return None`` in ``_target``,
    the Rust join bug) froze since at 6 for good instead of reaching 10 (red), restored."""
    reg = SharedArrangementRegistry()
    oks, errs = spines(upper=20)
    reg.publish(u(2), oks, errs)
    hold = reg.acquire_read_hold(u(2), 4, "interactive")
    reg.allow_compaction(u(2), 10)
    reg.apply_compactions()
    assert reg.since(u(2)) == 4
    hold.downgrade(6)
    reg.apply_compactions()
    assert reg.since(u(2)) == 6
    hold.release()
    hold.release()  # idempotent
    reg.apply_compactions()
    assert reg.since(u(2)) == 10 and reg.reader_holds(u(2)) == []
    assert reg.try_import_snapshot_at(u(2), 10, "interactive") is not None
    with pytest.raises(ComputeProtocolError):
        hold2 = reg.acquire_read_hold(u(2), 12, "interactive")
        hold2.downgrade(11)


def test_refusal_says_whether_the_standing_hold_equals_or_lies_below_since():
    reg = SharedArrangementRegistry()
    reg.register_standing_holder("interactive")
    oks, errs = spines(upper=20)
    reg.publish(u(2), oks, errs)
    reg.allow_compaction(u(2), 10)
    reg.set_standing_hold(u(2), "interactive", 10)
    reg.apply_compactions()
    with pytest.raises(ComputeProtocolError, match="equal to the refusing since.*legitimately"):
        reg.try_import_snapshot_at(u(2), 5, "interactive")
    reg2 = SharedArrangementRegistry(standing_holds=False)  # a publisher that escapes its bound
    reg2.register_standing_holder("interactive")
    reg2.publish(u(2), *spines(upper=20))
    reg2.set_standing_hold(u(2), "interactive", 3)
    reg2.allow_compaction(u(2), 10)
    reg2.apply_compactions()
    with pytest.raises(ComputeProtocolError, match="below the refusing since.*defect"):
        reg2.acquire_read_hold(u(2), 5, "interactive")


def test_snapshot_holds_only_immutable_batches_across_compaction():
    reg = SharedArrangementRegistry()
    oks, errs = spines(upper=1)
    reg.publish(u(2), oks, errs)
    advance(reg, u(2), oks, errs, [(2, "b")], 1, 2)
    imp = reg.try_import_snapshot_at(u(2), 0, "interactive")
    before = imp.oks.snapshot(0)
    reg.allow_compaction(u(2), 2)
    reg.apply_compactions()
    oks.compact_fully()  # new batches, times advanced to since 2
    assert oks.since == 2 and len(oks.batches) == 1
    assert imp.oks.snapshot(0) == before == {(1, "a"): 1}
    assert reg.reader_holds(u(2)) == []


def test_read_at_max_needs_the_empty_upper():
    reg = SharedArrangementRegistry()
    oks, errs = spines(upper=1)
    reg.publish(u(2), oks, errs)
    assert reg.try_import_snapshot_at(u(2), MAX, "interactive") is None
    oks.insert_updates([], None)
    errs.insert_updates([], None)
    reg.note_upper(u(2))
    imp = reg.try_import_snapshot_at(u(2), MAX, "interactive")
    assert imp.oks.upper is None and imp.oks.snapshot(MAX) == {(1, "a"): 1}


def test_dropped_index_refuses_importers_and_ignores_late_standing_holds():
    reg = SharedArrangementRegistry()
    reg.register_standing_holder("interactive")
    reg.publish(u(2), *spines())
    reg.unpublish(u(2))
    reg.set_standing_hold(u(2), "interactive", None)  # a late broadcast: no placeholder leak
    assert reg.ids() == []
    with pytest.raises(ComputeProtocolError, match="dropped"):
        reg.try_import_snapshot_at(u(2), 0, "interactive")


def test_a_frozen_import_is_a_read_handle_bounded_one_step_past_as_of():
    """What the registry hands an importer is the spine's own read handle, bounded
    (``ReadHandle.frozen_at``): the one read path, refusing reads below its since."""
    oks, _ = spines(rows=((1, "a"), (2, "b")), upper=3)
    f = oks.read_handle().frozen_at(1)
    assert f.upper == 2 and f.lookup((2,), 1) == {(2, "b"): 1} and f.key_fn((5, "z")) == (5,)
    with pytest.raises(SinceError):
        ReadHandle(f.batches, 2, 3).snapshot(1)
