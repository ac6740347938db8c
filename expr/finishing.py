"""Row-set finishing: ORDER BY, OFFSET, LIMIT and the final projection of a read's rows.

Owns ``RowSetFinishing`` (the value a peek carries) and ``finish`` (applying it to
``(row, count)`` pairs).  Invariants: ORDER BY follows PostgreSQL's NULL placement (NULLS
LAST ascending, FIRST descending, unless told) and sorts NaN above every other float; ties,
and rows with no ORDER BY, are ordered by the whole row, so a finished result is a function
of the multiset; OFFSET and LIMIT count rows with their multiplicity.  Deliberately not
here: where the rows come from (``compute.peek``, the adapter's constant reads).
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Optional

from expr.relation import ColumnOrder


@dataclass(frozen=True)
class RowSetFinishing:
    """ORDER BY / LIMIT / OFFSET and the final projection, applied to a peek's rows."""
    order_by: tuple[ColumnOrder, ...] = ()
    limit: Optional[int] = None
    offset: int = 0
    project: Optional[tuple[int, ...]] = None

    def is_trivial(self) -> bool:
        return not self.order_by and self.limit is None and self.offset == 0 and self.project is None


def _val(v):
    """A value's sort key: NaN (float or numeric) sorts above every other number, as in
    PostgreSQL (``!=`` never signals, even for a numeric NaN)."""
    if v != v:
        return (1,)
    return (0, v)


def _null_key(nulls_high: bool):
    if nulls_high:
        return lambda v: (1,) if v is None else (0, _val(v))
    return lambda v: (0,) if v is None else (1, _val(v))


def _row_key(row: tuple) -> tuple:
    """A total order on rows with NULLs: NULL above every value, as Materialize orders
    datums (and as ascending ORDER BY places NULLs)."""
    return tuple((1,) if v is None else (0, _val(v)) for v in row)


_NAN_TYPES = (float, Decimal)


def _by_row(rows) -> list:
    """``(row, count)`` pairs in the order of the whole row (NULLs last, NaN above numbers).
    Rows are distinct, so comparing pairs compares rows; rows without NULLs or NaN compare
    natively (one C-level sort, the common case), and a TypeError (a NULL met a value) or a
    NaN in a float column (found by scanning only the columns whose first value is a
    float) falls back to keys."""
    out = list(rows)
    try:
        out.sort()
    except (TypeError, ArithmeticError):  # a NULL met a value, or a numeric NaN signalled
        out.sort(key=lambda rc: _row_key(rc[0]))
        return out
    first = out[0][0] if out else ()
    for i in [i for i, v in enumerate(first) if v.__class__ in _NAN_TYPES]:
        for row, _c in out:
            v = row[i]
            if v != v:  # NaN: native comparison gives no order
                out.sort(key=lambda rc: _row_key(rc[0]))
                return out
    return out


def sort_rows(rows: list, order_by) -> list:
    """Stable multi-pass sort of ``(row, count)`` pairs by ``order_by`` (ColumnOrders)."""
    rows = _by_row(rows)
    for order in reversed(order_by):
        nk = _null_key(order.nulls_last != order.desc)
        col = order.column
        rows.sort(key=lambda rc: nk(rc[0][col]), reverse=order.desc)
    return rows


def finish(rows: list, finishing: RowSetFinishing) -> list[tuple[tuple, int]]:
    """Apply ORDER BY, OFFSET, LIMIT (in rows with multiplicity) and the projection.  Rows
    come out in ORDER BY order with ties, and every row of a result without ORDER BY, in
    the order of the whole row (Materialize's ``RowSetFinishing::finish`` does the same, and
    Materialize's test files that do not say ``rowsort`` rely on it)."""
    if finishing is None:
        return rows
    if len(rows) > 1:
        rows = sort_rows(rows, finishing.order_by)
    if finishing.is_trivial():
        return rows
    offset, limit = finishing.offset or 0, finishing.limit
    if offset or limit is not None:
        out = []
        remaining = limit
        for row, c in rows:
            if offset >= c:
                offset -= c
                continue
            c -= offset
            offset = 0
            if remaining is not None:
                if remaining <= 0:
                    break
                c = min(c, remaining)
                remaining -= c
            out.append((row, c))
        rows = out
    if finishing.project is not None:
        proj = finishing.project
        rows = [(tuple(row[i] for i in proj), c) for row, c in rows]
    return rows
