"""Batches: the immutable pieces an arrangement (``compute.arrangement.spine.Spine``) is made of.

Owns ``Batch`` (updates with times in ``[lower, upper)``, keyed by the index key), the
representation of a key's entries, and the three ways batches come about: ``build_batch``
(timed updates), ``batch_at`` (a dataflow's consolidated output at one time) and
``merge_batches`` (two adjacent batches, times below since advanced to it).

A key's entries are a tuple, not a list: batches are immutable anyway, and a tuple of
tuples of plain values is untracked by Python's cyclic collector after the first collection
that sees it, so a large index stops costing every later full collection a walk over it.
A key with a single entry maps to the entry ``(row, time, diff)`` itself, not a 1-tuple
around it (most index keys are unique); ``entries(v)`` gives the sequence either way
(an entry's second field is its time, an int; a tuple of entries has an entry there).

Invariant: a batch is never mutated after construction (readers on other threads hold
them without locks).  Deliberately not here: spines and holds (``compute.arrangement.spine``),
reads (``compute.arrangement.read``).
"""
from __future__ import annotations

import gc
from itertools import compress, repeat
from operator import itemgetter, not_
from typing import Any, Callable, Iterable, Optional

from repr.timestamp import Frontier

__all__ = ["Batch", "entries", "count_of", "build_batch", "batch_at", "merge_batches", "stored_key", "probe_key",
           "probe_batches"]


class Batch:
    """Immutable updates with times in ``[lower, upper)`` (times below the spine's since
    at merge time are advanced to it, so ``min_time``/``max_time`` are the truth)."""

    __slots__ = ("lower", "upper", "updates", "count", "min_time", "max_time", "single", "revisited")

    def __init__(self, lower: int, upper: Frontier, updates: dict, count: int,
                 min_time: Optional[int], max_time: Optional[int], single: bool = False,
                 revisited: Optional[frozenset] = None):
        self.lower = lower
        #: ``None``: the empty frontier (the batch seals the spine)
        self.upper = upper
        #: stored key -> one entry ``(row, time, diff)`` or a tuple of them (``entries``);
        #: never mutated.  The stored key is ``stored_key(key_fn)(row)``: the value itself
        #: for a one-column key, else the key tuple (``ReadHandle`` translates lookups)
        self.updates = updates
        #: number of ``(row, time, diff)`` entries
        self.count = count
        #: least / greatest time present (``None`` when the batch is empty)
        self.min_time = min_time
        self.max_time = max_time
        #: every value is one entry (no key has two): reads may take the values as entries
        #: in C-level passes (``False`` is always safe)
        self.single = single
        #: the stored keys whose value may hold one row at several times -- the only values
        #: an advance of since can shrink -- or ``None``: any key may (always safe).  A
        #: one-time batch has none (it is consolidated per row).  ``merge_batches``
        #: re-consolidates just these instead of walking every value of the merged batch
        self.revisited = revisited

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return f"Batch([{self.lower}, {self.upper}), {self.count} updates)"


def entries(v) -> tuple:
    """The ``(row, time, diff)`` entries of a batch value (see the module docstring); a
    plain list of entries (a hand-built batch) is taken as it is."""
    if v.__class__ is list:
        return v
    return (v,) if v[1].__class__ is int else v


def count_of(v) -> int:
    """How many entries a batch value holds."""
    return 1 if v[1].__class__ is int else len(v)


def _pack(entries_list) -> Any:
    """A batch value for a non-empty list of entries."""
    return entries_list[0] if len(entries_list) == 1 else tuple(entries_list)


def stored_key(key_fn: Callable[[tuple], Any]) -> Callable[[tuple], Any]:
    """``row -> the key a batch stores``.  For a one-column key (``key_function`` marks it
    ``key_column``) the value itself, not the 1-tuple ``key_fn`` returns: a probe then
    hashes and compares one value, with no key tuple to build, hash or chase, and an index
    holds a tuple fewer a row.  Other keys are stored as
    ``key_fn`` returns them.  Every batch of one spine uses the same form, so merges
    match keys; readers translate a key tuple with ``probe_key``."""
    col = getattr(key_fn, "key_column", None)
    return key_fn if col is None else itemgetter(col)


def probe_key(key_fn: Callable[[tuple], Any]) -> Optional[Callable[[tuple], Any]]:
    """``key tuple -> stored key`` for batches built with ``stored_key(key_fn)``, or
    ``None`` when the two are the same (a key of several columns or of expressions)."""
    return None if getattr(key_fn, "key_column", None) is None else _FIRST


def build_batch(key_fn: Callable[[tuple], Any], updates: Iterable[tuple], lower: int,
                upper: Frontier) -> Batch:
    """A batch of ``(row, time, diff)`` updates keyed by ``stored_key(key_fn)(row)``,
    consolidated."""
    acc: dict = {}
    for row, t, d in updates:
        k = (row, t)
        acc[k] = acc.get(k, 0) + d
    ents = [(row, t, d) for (row, t), d in acc.items() if d]
    if not ents:
        return Batch(lower, upper, {}, 0, None, None, revisited=frozenset())
    times = [e[1] for e in ents]
    key = stored_key(key_fn)
    lo, hi = min(times), max(times)
    return Batch(lower, upper, _grouped([key(e[0]) for e in ents], ents), len(ents),
                 lo, hi, revisited=frozenset() if lo == hi else None)


def batch_at(key_fn, updates: Iterable[tuple], time: int, lower: int, upper: Frontier) -> Batch:
    """A batch of consolidated ``(row, diff)`` updates all at ``time`` (the dataflow's
    per-time output; zero diffs skipped); skips the time-keyed consolidation of
    ``build_batch``.  ``updates`` may be a dict's items (an index export's collector): then
    the entries and single-column keys are built in C-level passes.  Keys are stored as
    ``stored_key(key_fn)`` gives them."""
    key = stored_key(key_fn)
    if updates.__class__ is _DICT_ITEMS:
        rows = list(map(_FIRST, updates))
        diffs = list(map(_SECOND, updates))
        if 0 in diffs:
            rows = [r for r, d in zip(rows, diffs) if d]
            diffs = [d for d in diffs if d]
        ents = list(zip(rows, repeat(time), diffs))
        keys = list(map(key, rows))
    else:
        ents = [(row, time, d) for row, d in updates if d]
        keys = list(map(key, map(_FIRST, ents)))
    n = len(ents)
    by_key, single = _grouped_flag(keys, ents)
    return Batch(lower, upper, by_key, n, time if n else None, time if n else None, single,
                 frozenset())


_DICT_ITEMS = type({}.items())
_FIRST = itemgetter(0)
_SECOND = itemgetter(1)


#: batches at least this large are built from entries the cyclic collector has untracked
UNTRACK_MIN_ENTRIES = 20_000


def _grouped_flag(keys: list, ents: list) -> tuple:
    """``(_grouped(keys, ents), every key unique)``; unique keys (most indexes) take one
    C-level ``dict`` build, and keys in adjacent pairs a few more.

    A large batch's entries and keys are fresh tuples, tracked by the cyclic collector until
    a collection finds they hold only plain values.  A dict that receives a tracked value
    is tracked, and every later collection of its generation walks all of it (a 200,000-row
    batch: milliseconds per young collection, every thread stopped).  So a young collection
    runs first, here, while the young generation is small: it untracks the new tuples, and
    the dict built from them is never tracked at all (unless some row holds a container).
    Skipped when the program disabled the collector."""
    if len(ents) >= UNTRACK_MIN_ENTRIES and gc.isenabled():
        gc.collect(0)
    by_key = dict(zip(keys, ents))
    if len(by_key) == len(ents):
        return by_key, True
    n = len(ents)
    if len(by_key) * 2 == n and keys[0::2] == keys[1::2]:
        # every key holds two adjacent entries (a bulk UPDATE's log entry lists each row's
        # new and old versions side by side): paired in C
        return dict(zip(keys[0::2], zip(ents[0::2], ents[1::2]))), False
    return _grouped(keys, ents), False


def _grouped(keys: list, ents: list) -> dict:
    """``key -> value`` (an entry, or a tuple of the key's entries in order)."""
    by_key: dict = {}
    multi: dict = {}
    get = by_key.get
    for key, e in zip(keys, ents):
        got = get(key)
        if got is None:
            by_key[key] = e
        else:
            lst = multi.get(key)
            if lst is None:
                multi[key] = [got, e]
            else:
                lst.append(e)
    for key, lst in multi.items():
        by_key[key] = tuple(lst)
    return by_key


def merge_batches(a: Batch, b: Batch, since: Frontier) -> Batch:
    """``a`` then ``b`` as one batch; keys present in both are consolidated with times
    advanced to ``since`` (keys in one batch only are shared as-is: their values are
    immutable).

    The work is proportional to the smaller batch plus the keys held by both, not to the
    merged batch: the dicts are joined by one C-level copy and ``update``, the shared keys
    found by a C-level intersection, and when since has advanced past some time only the
    one-sided values that may hold a row at several times (``Batch.revisited``) are
    re-consolidated, not every value."""
    ua, ub = a.updates, b.updates
    shared = ua.keys() & ub.keys()  # iterates the smaller side
    if len(ua) >= len(ub):
        out = ua.copy()  # (a clone even with deleted slots; ``dict(ua)`` is not then)
        out.update(ub)
    else:
        out = ub.copy()
        out.update(ua)
    n = a.count + b.count
    s = since if since is not None else 0
    # every value one entry if so on both sides and no shared key keeps several rows/times
    single = (a.single or not a.count) and (b.single or not b.count)
    revisited = None if a.revisited is None or b.revisited is None else set(a.revisited | b.revisited)
    for key in shared:
        acc: dict = {}
        for row, t, d in entries(ua[key]):
            k = (row, t if t > s else s)
            acc[k] = acc.get(k, 0) + d
        for row, t, d in entries(ub[key]):
            k = (row, t if t > s else s)
            acc[k] = acc.get(k, 0) + d
        merged = [(row, t, d) for (row, t), d in acc.items() if d]
        n += len(merged) - count_of(ua[key]) - count_of(ub[key])
        if merged:
            out[key] = _pack(merged)
            if len(merged) > 1:
                single = False
                if revisited is not None:
                    revisited.add(key)
        else:
            del out[key]
    if since is not None and any(x is not None and x < since for x in (a.min_time, b.min_time)):
        # one-sided values holding several entries: an insert and a later delete of one row
        # cancel once both are advanced to since; single entries keep their time, which
        # reads at or above since cannot tell apart
        if revisited is None:
            candidates = [k for k, v in out.items() if v[1].__class__ is not int]
        else:
            candidates = [k for k in revisited if k in out]
        for key in candidates:
            if key in shared:
                continue  # consolidated above
            lst = out[key]
            if lst[1].__class__ is int:
                continue
            acc = {}
            for row, t, d in lst:
                kk = (row, t if t > s else s)
                acc[kk] = acc.get(kk, 0) + d
            if len(acc) == len(lst):
                continue
            merged = [(row, t, d) for (row, t), d in acc.items() if d]
            n += len(merged) - len(lst)
            if merged:
                out[key] = _pack(merged)
            else:
                del out[key]
    if revisited is not None:
        # keep only keys still holding several entries (a superset of the true ones is fine)
        revisited = frozenset(k for k in revisited if k in out and out[k][1].__class__ is not int)
    times = [x for x in (a.min_time, b.min_time) if x is not None]
    lo = min(times) if times else None
    times = [x for x in (a.max_time, b.max_time) if x is not None]
    hi = max(times) if times else None
    if lo is not None and since is not None and lo < since:
        # advanced times may now sit at since; min/max remain valid bounds
        hi = max(hi, since)
    return Batch(a.lower, b.upper, out, n, lo, hi, single, revisited)


def probe_batches(batches, keys: list, as_of: int, upper: Frontier) -> list:
    """``[(row, count)]`` (each row once, no zero count) for the stored ``keys`` (distinct)
    over ``batches``, every update of which is at or before ``as_of`` and below ``upper``
    (the caller checks).  A bulk UPDATE/DELETE probes thousands of keys of a million-row
    index; the work per key is kept to C-level passes where it can be:

    * each batch is probed once for every key (``map``); the keys held by several batches
      are found from the hits of all but the largest batch, and set aside with ``compress``;
    * a key held by one batch only has its entries taken as they are: one entry is one row
      (batches consolidate per row and time, and drop zeros), so no row is hashed;
    * only a key held by several batches, or a value holding several entries (a row at
      several times), is consolidated in a dict."""
    shared: set = set()
    if len(batches) == 1:
        hits = [list(filter(None, map(batches[0].updates.get, keys)))]
    else:
        probed = [list(map(b.updates.get, keys)) for b in batches]
        # keys held by several batches, found from the hits of all but the largest batch
        # (a recent batch holds few of the keys; the large one most)
        big = max(range(len(batches)), key=lambda i: len(batches[i].updates))
        held_by: dict = {}
        for i, vals in enumerate(probed):
            if i != big:
                for k in compress(keys, vals):
                    held_by[k] = held_by.get(k, 0) + 1
        in_big = batches[big].updates.__contains__
        shared = {k for k, n in held_by.items() if n > 1 or in_big(k)}
        if shared:
            alone = list(map(not_, map(shared.__contains__, keys)))
            hits = [list(filter(None, compress(vals, alone))) for vals in probed]
        else:
            hits = [list(filter(None, vals)) for vals in probed]
    pairs: list = []
    append = pairs.append
    for b, vals in zip(batches, hits):
        if b.single:
            pairs.extend(map(_ROW_DIFF, vals))
            continue
        for v in vals:
            if v[1].__class__ is int:
                append((v[0], v[2]))
            else:
                _consolidated_into(append, v)
    for key in shared:
        _consolidated_into(append, [e for b in batches for v in (b.updates.get(key),) if v is not None
                                    for e in entries(v)])
    return pairs


def _consolidated_into(append, ents) -> None:
    """Append ``(row, count)`` for the rows of ``ents`` (entries of one key), summed, zeros
    dropped."""
    acc: dict = {}
    for row, _t, d in ents:
        acc[row] = acc.get(row, 0) + d
    for row, c in acc.items():
        if c:
            append((row, c))


_ROW_DIFF = itemgetter(0, 2)
