"""Answering a Peek off an arrangement: readiness, the read, MFP and RowSetFinishing.

Owns the pure function from (peek, oks reader, errs reader) to a peek result.  A reader is
anything with ``since``, ``upper``, ``snapshot(as_of)`` and ``lookup(key, as_of)``: a
maintenance ``Spine`` or a registry ``FrozenArrangement``.

Invariants: a peek is answered only when ``upper > timestamp`` (or upper is empty), and
answered with an error, never rows, once ``since`` has passed ``timestamp``; a data error
in the errs collection at the timestamp wins over rows; rows are ``(row, count)`` with
positive counts, finishing applied (ORDER BY with NULLS FIRST/LAST, then OFFSET and LIMIT
counted in rows with multiplicity, then the projection).

Deliberately not here: which runtime answers (the Multiplexer routes; the runtime waits and
retries) and compilation of expressions (``compute.compile``).
"""
from __future__ import annotations

import inspect
from operator import itemgetter
from typing import Any, Callable, Optional

from compute.errors import EvalError
from compute.mfp import MapFilterProject
from compute.protocol import Peek, PeekError, PeekRows, RowSetFinishing
from compute.timestamp import frontier_le

_COUNT = itemgetter(1)

#: SQLSTATE of an internal error (a bug or a broken protocol, never an answer to user input)
INTERNAL = "XX000"


def is_ready(peek: Peek, reader: Any) -> bool:
    """Whether ``peek`` can be answered off ``reader`` now (with rows or an error)."""
    if not frontier_le(reader.since, peek.timestamp):
        return True  # since passed: answer with an error now
    upper = reader.upper
    return upper is None or upper > peek.timestamp


def answer(peek: Peek, oks: Any, errs: Any, *, mfp_fn: Optional[Callable] = None):
    """The result of ``peek`` read off ``oks``/``errs``; ``None`` while not yet answerable."""
    ts = peek.timestamp
    since = oks.since if errs is None else _max_since(oks.since, errs.since)
    if not frontier_le(since, ts):
        return PeekError(INTERNAL, f"peek of {peek.target} at {ts} is not answerable: "
                                   f"the since {since} has passed the timestamp (compacted)")
    upper = oks.upper
    if errs is not None and not frontier_le(upper, errs.upper):
        upper = errs.upper
    if upper is not None and upper <= ts:
        return None
    if errs is not None:
        bad = {row: c for row, c in errs.snapshot(ts).items() if c != 0}
        if bad:
            row = min(bad)
            return PeekError(str(row[0]), str(row[1]))
    if peek.literal_constraints is None:
        data = oks.snapshot(ts)
    else:
        keys = peek.literal_constraints
        if set(map(type, keys)) != {tuple}:
            keys = [k if type(k) is tuple else tuple(k) for k in keys]
        pairs = getattr(oks, "lookup_pairs", None)
        if pairs is not None and len(keys) > 1:
            data = pairs(keys, ts)  # ``(row, count)`` pairs, each row once, no zero count
        else:
            data = {}
            for key in keys:
                for row, c in oks.lookup(key, ts).items():
                    data[row] = data.get(row, 0) + c
    try:
        rows = apply_mfp(data, peek.map_filter_project, ts, mfp_fn)
    except EvalError as e:
        return PeekError(e.sqlstate, e.message)
    if rows and min(map(_COUNT, rows)) < 0:
        row, c = next((row, c) for row, c in rows if c < 0)
        return PeekError(INTERNAL, f"Invalid data in source, saw retractions ({-c}) "
                                   f"for row that does not exist: {row!r}")
    return PeekRows(tuple(finish(rows, peek.finishing)))


def _max_since(a, b):
    return b if frontier_le(a, b) else a


def apply_mfp(data, mfp: MapFilterProject, ts: int, mfp_fn: Optional[Callable] = None
              ) -> list[tuple[tuple, int]]:
    """``[(row, count)]`` after the map/filter/project, consolidated, zero counts dropped;
    ``data`` is a ``row -> count`` dict or ``(row, count)`` pairs with each row once."""
    items = data.items() if data.__class__ is dict else data
    if mfp is None or mfp.is_identity():
        if data.__class__ is not dict and 0 not in map(_COUNT, data):
            return data
        return [(row, c) for row, c in items if c != 0]
    fn = mfp_fn if mfp_fn is not None else compile_peek_mfp(mfp)
    out: dict = {}
    for row, c in items:
        if c == 0:
            continue
        res = fn(row, ts)
        if res is not None:
            out[res] = out.get(res, 0) + c
    return [(row, c) for row, c in out.items() if c != 0]


def compile_peek_mfp(mfp: MapFilterProject) -> Callable[[tuple, int], Optional[tuple]]:
    """``(row, time) -> row | None`` via ``compute.compile.compile_mfp_row``."""
    from compute.compile import compile_mfp_row  # the expression engineer's module
    f = compile_mfp_row(mfp)
    try:
        takes_time = "time" in inspect.signature(f).parameters
    except (TypeError, ValueError):
        takes_time = False
    if takes_time:
        return lambda row, ts: f(row, time=ts)
    return lambda row, ts: f(row)


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
