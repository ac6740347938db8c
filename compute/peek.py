"""Answering a Peek off an arrangement: readiness, the read, MFP and RowSetFinishing.

Owns the pure function from (peek, oks reader, errs reader) to a peek result.  A reader is
anything with ``since``, ``upper``, ``snapshot(as_of)`` and ``lookup(key, as_of)``: a
maintenance ``Spine`` or a ``ReadHandle`` of one (``compute.arrangement.read``; the
registry's published and imported snapshots are those).

Invariants: a peek is answered only when ``upper > timestamp`` (or upper is empty), and
answered with an error, never rows, once ``since`` has passed ``timestamp``; a data error
in the errs collection at the timestamp wins over rows; rows are ``(row, count)`` with
positive counts, finishing applied (ORDER BY with NULLS FIRST/LAST, then OFFSET and LIMIT
counted in rows with multiplicity, then the projection).

Deliberately not here: which runtime answers (the Multiplexer routes; the runtime waits and
retries) and compilation of expressions (``expr.compile``).
"""
from __future__ import annotations

import inspect
from operator import itemgetter
from typing import Any, Callable, Optional

from compute.protocol import Peek, PeekError, PeekRows
from expr.finishing import finish
from expr.mfp import MapFilterProject
from repr.errors import EvalError
from repr.timestamp import frontier_le

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
        if data.__class__ is dict and 0 not in data.values():
            return list(items)  # one C-level pass (a peek dataflow's whole result)
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


def takes_time(f) -> bool:
    """Whether the compiled row function ``f`` has a ``time`` parameter: read from a plain
    function's code (``inspect.signature`` costs more than the rest of a point read's peek),
    else from its signature."""
    code = getattr(f, "__code__", None)
    if code is not None:
        return "time" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    try:
        return "time" in inspect.signature(f).parameters
    except (TypeError, ValueError):
        return False


def compile_peek_mfp(mfp: MapFilterProject) -> Callable[[tuple, int], Optional[tuple]]:
    """``(row, time) -> row | None`` via ``expr.compile.compile_mfp_row``."""
    from expr.compile import compile_mfp_row  # the expression engineer's module
    f = compile_mfp_row(mfp)
    if takes_time(f):
        return lambda row, ts: f(row, time=ts)
    return lambda row, ts: f(row)
