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
    """A value's sort key: NaN sorts above every other float, as in PostgreSQL."""
    if v.__class__ is float and v != v:
        return (1,)
    return (0, v)


def _null_key(nulls_high: bool):
    if nulls_high:
        return lambda v: (1,) if v is None else (0, _val(v))
    return lambda v: (0,) if v is None else (1, _val(v))


def _row_key(row: tuple) -> tuple:
    """A total order on rows with NULLs (ties broken deterministically by the whole row)."""
    return tuple((0,) if v is None else (1, _val(v)) for v in row)


def sort_rows(rows: list, order_by) -> list:
    """Stable multi-pass sort of ``(row, count)`` pairs by ``order_by`` (ColumnOrders)."""
    rows = sorted(rows, key=lambda rc: _row_key(rc[0]))
    for order in reversed(order_by):
        nk = _null_key(order.nulls_last != order.desc)
        col = order.column
        rows.sort(key=lambda rc: nk(rc[0][col]), reverse=order.desc)
    return rows


def finish(rows: list, finishing: RowSetFinishing) -> list[tuple[tuple, int]]:
    """Apply ORDER BY, OFFSET, LIMIT (in rows with multiplicity) and the projection."""
    if finishing is None or finishing.is_trivial():
        return rows
    if finishing.order_by or finishing.limit is not None or finishing.offset:
        rows = sort_rows(rows, finishing.order_by)
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
