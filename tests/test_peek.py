"""compute/peek.py: readiness, key lookup vs scan, MFP, errors and RowSetFinishing."""
from __future__ import annotations

from decimal import Decimal

import pytest

from compute.arrangement.spine import Spine
from compute.peek import answer, is_ready
from compute.protocol import Peek, PeekError, PeekRows
from expr.finishing import RowSetFinishing, finish, sort_rows
from expr.mfp import MapFilterProject
from expr.relation import ColumnOrder
from expr.scalar import Call, Column, Literal
from tests.support.standins import u


def spine(rows_at, upper, since=0):
    """A real arrangement keyed by column 0 with ``rows_at``: [(row, time, diff)]."""
    s = Spine(lambda r: (r[0],), 2, since=0, upper=0)
    s.insert_updates(rows_at, upper)
    if since:
        s.set_logical_compaction(since)
    e = Spine(lambda r: (), 2, since=0, upper=0)
    e.insert_updates([], upper)
    if since:
        e.set_logical_compaction(since)
    return s, e


def pk(ts, keys=None, finishing=RowSetFinishing(), mfp=None):
    return Peek("p", u(2), keys, ts, finishing, mfp or MapFilterProject.identity(2))


ROWS = [((1, "a"), 0, 1), ((2, None), 0, 1), ((3, "c"), 1, 2), ((1, "a"), 2, -1)]


def test_waits_while_upper_not_past_timestamp_and_errors_once_since_passed():
    oks, errs = spine(ROWS, 2)
    assert answer(pk(2), oks, errs) is None and not is_ready(pk(2), oks)
    assert answer(pk(1), oks, errs) == PeekRows((((1, "a"), 1), ((2, None), 1), ((3, "c"), 2)))
    oks2, errs2 = spine(ROWS, 3, since=2)
    r = answer(pk(1), oks2, errs2)
    assert isinstance(r, PeekError) and "since 2" in r.message and is_ready(pk(1), oks2)


def test_key_lookup_reads_only_the_keys():
    oks, errs = spine(ROWS, 3)
    r = answer(pk(2, keys=((1,), (3,))), oks, errs)
    assert r == PeekRows((((3, "c"), 2),))


def test_data_error_at_the_timestamp_surfaces_with_its_sqlstate():
    oks, errs = spine(ROWS, 3)
    errs2 = Spine(lambda r: (), 2)
    errs2.insert_updates([(("22012", "division by zero"), 1, 1)], 3)
    assert answer(pk(0), oks, errs2) == PeekRows((((1, "a"), 1), ((2, None), 1)))
    assert answer(pk(1), oks, errs2) == PeekError("22012", "division by zero")


def test_negative_multiplicity_is_an_internal_error():
    oks, errs = spine([((9, "z"), 0, -1)], 1)
    r = answer(pk(0), oks, errs)
    assert isinstance(r, PeekError) and r.sqlstate == "XX000" and "retractions" in r.message


def test_mfp_is_applied_with_real_compiled_expressions_and_eval_errors_surface():
    oks, errs = spine([((1, "a"), 0, 1), ((4, "d"), 0, 1), ((0, "z"), 0, 1)], 1)
    gt = Call("gt", (Column(0), Literal(1, "int4")), "bool")
    mfp = MapFilterProject(2, (Call("add_int4", (Column(0), Literal(10, "int4")), "int4"),), (gt,), (2, 1))
    assert answer(pk(0, mfp=mfp), oks, errs) == PeekRows((((14, "d"), 1),))
    div = MapFilterProject(2, (Call("div_int4", (Literal(10, "int4"), Column(0)), "int4"),), (), (2,))
    r = answer(pk(0, mfp=div), oks, errs)
    assert r == PeekError("22012", "division by zero")


def test_order_by_with_nulls_first_and_last_desc_and_ties():
    rows = [((1, None), 1), ((2, "b"), 1), ((3, "a"), 1), ((4, None), 1), ((5, "b"), 1)]
    asc_nulls_last = sort_rows(rows, (ColumnOrder(1),))
    assert [r[0] for r, _ in asc_nulls_last] == [3, 2, 5, 1, 4]
    asc_nulls_first = sort_rows(rows, (ColumnOrder(1, nulls_last=False),))
    assert [r[0] for r, _ in asc_nulls_first] == [1, 4, 3, 2, 5]
    desc_nulls_first = sort_rows(rows, (ColumnOrder(1, desc=True, nulls_last=False),))
    assert [r[0] for r, _ in desc_nulls_first] == [1, 4, 2, 5, 3]
    desc_nulls_last = sort_rows(rows, (ColumnOrder(1, desc=True),))
    assert [r[0] for r, _ in desc_nulls_last] == [2, 5, 3, 1, 4]
    two_keys = sort_rows(rows, (ColumnOrder(1, desc=True, nulls_last=False), ColumnOrder(0, desc=True)))
    assert [r[0] for r, _ in two_keys] == [4, 1, 5, 2, 3]


def test_limit_offset_count_multiplicities_then_project():
    rows = [((1, "a"), 3), ((2, "b"), 2), ((3, "c"), 1)]
    f = RowSetFinishing(order_by=(ColumnOrder(0),), limit=3, offset=2, project=(1,))
    assert finish(rows, f) == [(("a",), 1), (("b",), 2)]
    assert finish(rows, RowSetFinishing(limit=0)) == []
    assert finish(rows, RowSetFinishing(offset=10)) == []
    assert finish(rows, RowSetFinishing()) == rows


def test_mixed_numeric_types_sort():
    rows = [((Decimal("1.5"),), 1), ((1,), 1), ((2.5,), 1), ((None,), 1)]
    assert [r for (r,), _ in sort_rows(rows, (ColumnOrder(0),))] == [1, Decimal("1.5"), 2.5, None]


def test_answer_at_max_off_a_sealed_arrangement():
    from repr.timestamp import MAX
    oks, errs = spine([((1, "a"), 0, 1)], None)
    assert answer(pk(MAX), oks, errs) == PeekRows((((1, "a"), 1),))


def test_nan_sorts_above_every_float_and_below_null():
    nan = float("nan")
    rows = [((nan,), 1), ((1.0,), 1), ((None,), 1), ((float("inf"),), 1), ((-2.0,), 1)]
    got = [r[0] for r, _ in sort_rows(rows, (ColumnOrder(0),))]
    assert got[:3] == [-2.0, 1.0, float("inf")] and got[3] != got[3] and got[4] is None
    got = [r[0] for r, _ in sort_rows(rows, (ColumnOrder(0, desc=True, nulls_last=False),))]
    assert got[0] is None and got[1] != got[1] and got[2:] == [float("inf"), 1.0, -2.0]
