"""SUBSCRIBE: the coordinator's side of a streaming read, SQL cursors, and the Python API.

Owns ``Subscription`` (one running SUBSCRIBE: its subscribe-sink dataflow, the read holds on
its inputs, and the buffer between the controller's receive thread and the consumer),
``Subscriptions`` (the running subscriptions of one database, which it owns as
``Database.subscriptions``), the statement handlers for ``SUBSCRIBE``, ``DECLARE ... CURSOR
FOR``, ``FETCH`` and ``CLOSE``, and the lifecycle hooks the adapter calls (a dependency
dropped, the replica restarted, a session or the database closed).

Invariants:

* A subscribe is a dataflow with a subscribe sink and no index export, so it is never a peek
  dataflow and always runs on the maintenance runtime (the Multiplexer routes it by
  ``is_peek_dataflow()``; ``start`` asserts it).
* Output order: the snapshot is stamped with the ``AS OF`` time; then updates come in
  timestamp order, consolidated per ``(time, row)``; a timestamp is complete before anything
  later (an update or a progress row) is delivered, because the sink only ships batches of
  complete times ``[lower, upper)``.  ``AS OF`` is inclusive, ``UP TO`` exclusive; the stream
  ends by itself when the dataflow's frontier reaches ``UP TO`` (or empties: constant inputs).
* The inputs stay readable: the subscription holds every import at
  ``max(as_of, frontier - 1)`` and moves the hold forward (acquire the new one, then release
  the old one) as batches arrive, so compaction never folds away a time the dataflow has yet
  to read.
* A slow consumer never blocks anything: batches are appended to the subscription's buffer on
  the controller's receive thread, which never waits for the consumer, and ``FETCH`` releases
  the database lock while it waits.  The buffer is bounded: once it would hold more than
  ``max_buffered`` updates (default ``DEFAULT_MAX_BUFFERED``) the subscription fails with
  SQLSTATE 53000 naming the cap; updates already buffered stay readable (they are whole
  timestamps), then the error is raised.
* ``ENVELOPE UPSERT (KEY (k))`` turns each timestamp's diffs into one ``UpsertUpdate`` per
  changed key (``upsert`` with the new values, ``delete``, or ``key_violation`` when the key
  has several rows), from per-key state kept in the subscription; ``WITHIN TIMESTAMP ORDER BY``
  sorts the rows of each timestamp (only within it: time order always wins).
* A subscription ends exactly once (complete, failed or closed) and then releases its holds
  and drops its dataflow; a dependency dropped while it runs ends it with an error naming
  the dependency; a replica restart resumes it from its frontier without repeating updates.

Deliberately not here: rendering the sink (``compute.render.dataflow``), shipping batches
(``compute.replica.core``), the as-of rule (``Reader.dataflow_as_of``), parsing and planning
``Connection.subscribe``'s statement (``Database.subscribe``), ENVELOPE DEBEZIUM (not supported).

Over 600 lines: the subscription, its SQL cursor statements and its Python API share one
buffer and one ending protocol (complete, failed or closed, exactly once); split, each part
would reach into the others' locking.
"""
from __future__ import annotations

from collections import deque
from functools import cmp_to_key
import re
import threading
import time as _time
from typing import NamedTuple, Optional

from compute import protocol as P
from mzlite.cursor import Result
from mzlite.reads import literal_timestamp, select
from mzlite.temporal import check_maintainable
from mzlite.types import python_value
from planner.lower import build_subscribe_dataflow, resolve_imports
from planner.optimize import optimize
from planner.plans import SubscribePlan
from sql import errors as E
from sql.types import display_name

#: the default cap on buffered (unconsumed) updates of one subscription
DEFAULT_MAX_BUFFERED = 1_000_000
#: how often a waiting FETCH checks for an interrupt (``Connection.cancel``)
CANCEL_POLL_SECONDS = 0.05


class Update(NamedTuple):
    """One change: ``row`` gained ``diff`` copies at ``timestamp``."""
    timestamp: int
    diff: int
    row: tuple


class UpsertUpdate(NamedTuple):
    """``ENVELOPE UPSERT``: at ``timestamp`` the key (``row``'s first columns) now maps to
    ``row`` (``state`` "upsert"), to nothing ("delete", values NULL), or to several rows
    ("key_violation", values NULL)."""
    timestamp: int
    state: str
    row: tuple


class Progress(NamedTuple):
    """No update with a time below ``timestamp`` will follow (only ``WITH (PROGRESS)``)."""
    timestamp: int


class Subscription:
    """One running SUBSCRIBE.  Iterating yields ``Update`` (and, with ``progress``, ``Progress``)
    items in timestamp order and stops at ``UP TO``; ``fetch`` returns what is ready."""

    def __init__(self, db, session, *, expr, plan, as_of: int, up_to: Optional[int], columns,
                 depends_on: dict, max_buffered: Optional[int] = None):
        self._db = db
        self.session = session
        self._expr = expr
        self._plan = plan
        self.as_of = as_of
        self.up_to = up_to
        self.with_snapshot = plan.with_snapshot
        self.progress = plan.progress
        #: ``(name, display type)`` of the data columns
        self.columns = columns
        #: rows handed out hold the Python API's values (interval -> timedelta, jsonb ->
        #: dict/list/..., arrays -> list), as ``cursor`` returns them; ``Connection.subscribe``
        #: sets it, the SQL paths (``SUBSCRIBE``/``FETCH`` through a cursor) keep engine values
        self.python_values = False
        self._has_engine_values = any(t in ("interval", "jsonb") or t.endswith("[]") or t.endswith(" list")
                                       or t.startswith("map[") for _, t in columns)
        #: dependency id -> (kind word, name), for the error when one is dropped
        self._depends_on = depends_on
        self.max_buffered = DEFAULT_MAX_BUFFERED if max_buffered is None else max_buffered
        self._cond = threading.Condition()
        self._buf: deque = deque()
        self._n_updates = 0
        #: the received frontier (every update below it is in the buffer or consumed); None: complete
        self._received: Optional[int] = as_of
        self._error: Optional[E.Error] = None
        self._ended = False
        self._closed = False
        self.sink_id = None
        self._import_ids: tuple = ()
        self._holds = None
        self._hold_at: Optional[int] = None
        #: ENVELOPE UPSERT: the key's column indexes and, per key, the current rows (row -> count)
        self.upsert_key = getattr(plan, "upsert_key", None)
        self._upsert_state: dict = {}
        #: WITHIN TIMESTAMP ORDER BY: ``(column index | -1 for mz_diff, desc, nulls_last)``
        self.within_order = tuple(getattr(plan, "within_timestamp_order", ()) or ())
        #: data column index -> position in an item's row (ENVELOPE UPSERT puts the key first)
        self._row_position = list(range(len(columns)))
        if self.upsert_key is not None:
            order = list(self.upsert_key) + [i for i in range(len(columns)) if i not in self.upsert_key]
            self._row_position = [order.index(i) for i in range(len(columns))]
        #: the stream ends by itself: UP TO bounds it, or it reads no input (constants)
        self.bounded = up_to is not None
        if self.progress:
            self._buf.append(Progress(as_of))
        if up_to is not None and up_to == as_of:  # an empty interval: nothing to read, already complete
            self._received = None
            self._ended = True

    # ------------------------------------------------------------------ consumer side
    @property
    def frontier(self) -> Optional[int]:
        """The timestamp below which every update has been yielded; ``None`` once complete
        (every update yielded and the stream ended)."""
        with self._cond:
            for item in self._buf:
                if not isinstance(item, Progress):
                    return item.timestamp
            return self._received

    @property
    def done(self) -> bool:
        """The stream ended (UP TO reached, failed or closed) and nothing is left to read."""
        with self._cond:
            return self._ended and not self._buf

    def fetch(self, timeout: Optional[float] = 0.0, max_rows: Optional[int] = None, *,
              should_cancel=None) -> list:
        """The items ready within ``timeout`` seconds (``None``: wait for at least one, or
        the end), at most ``max_rows``.  Raises the subscription's error once its buffer is
        drained; ``[]`` when nothing arrived in time or the stream ended."""
        deadline = None if timeout is None else _time.monotonic() + timeout
        with self._cond:
            while not self._buf and not self._ended:
                wait = None if deadline is None else deadline - _time.monotonic()
                if should_cancel is not None:
                    wait = CANCEL_POLL_SECONDS if wait is None else min(wait, CANCEL_POLL_SECONDS)
                if wait is not None and wait <= 0:
                    break
                self._cond.wait(wait)
                if should_cancel is not None and should_cancel():
                    raise E.QueryCanceled("canceling statement due to user request", sqlstate=E.QUERY_CANCELED)
            if not self._buf:
                if self._error is not None:
                    raise self._error
                if self._closed:
                    raise E.InterfaceError("subscription already closed")
                return []
            n = len(self._buf) if max_rows is None else min(max_rows, len(self._buf))
            out = [self._buf.popleft() for _ in range(n)]
            self._n_updates -= sum(1 for x in out if not isinstance(x, Progress))
        if self.python_values and self._has_engine_values:
            out = [x if isinstance(x, Progress) else x._replace(row=_python_row(x.row)) for x in out]
        return out

    def __iter__(self):
        while True:
            items = self.fetch(timeout=None)
            if not items:
                return
            yield from items

    def close(self) -> None:
        """Stop the subscription: drop its dataflow and release its holds (idempotent)."""
        with self._cond:
            self._closed = True
            self._buf.clear()
            self._n_updates = 0
        self._end()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ------------------------------------------------------------------ producer side
    def _on_response(self, resp) -> None:
        """A ``SubscribeBatch``/``SubscribeDropped`` from the controller's receive thread."""
        if isinstance(resp, P.SubscribeDropped):
            self.fail(E.error_for(E.INTERNAL_ERROR, f"subscribe dropped by the replica: {resp.reason}"))
            return
        if resp.error is not None:
            self.fail(E.error_for(resp.error[0], resp.error[1]))
            return
        items = consolidate(resp.updates)
        if self.upsert_key is not None:
            items = self._upsert(items)
        if self.within_order:
            items = order_within_timestamps(items, self.within_order, self._row_position)
        final = resp.upper is None
        with self._cond:
            if self._ended:
                return
            if self._n_updates + len(items) > self.max_buffered:
                err = E.error_for("53000", f"subscribe buffer full: more than {self.max_buffered} updates are "
                                           f"waiting to be read (max_buffered); the consumer is too slow")
                overflow = True
            else:
                overflow = False
                self._buf.extend(items)
                self._n_updates += len(items)
                if final:
                    self._received = None
                elif resp.upper != self._received:
                    self._received = resp.upper
                    if self.progress:
                        self._buf.append(Progress(resp.upper))
                self._cond.notify_all()
        if overflow:
            self.fail(err)
        elif final:
            self._end()
        else:
            self._advance_holds(resp.upper)

    def _upsert(self, items: list) -> list:
        """Diffs (in time order) -> one ``UpsertUpdate`` per key that changed at each time."""
        key_idx = self.upsert_key
        val_idx = [i for i in range(len(self.columns)) if i not in key_idx]
        state = self._upsert_state
        out: list = []
        k = 0
        while k < len(items):
            t = items[k].timestamp
            touched: dict = {}
            while k < len(items) and items[k].timestamp == t:
                u = items[k]
                key = tuple(u.row[i] for i in key_idx)
                if key not in touched:
                    touched[key] = bool(state.get(key))
                rows = state.setdefault(key, {})
                c = rows.get(u.row, 0) + u.diff
                if c:
                    rows[u.row] = c
                else:
                    rows.pop(u.row, None)
                k += 1
            for key, existed in touched.items():
                rows = state.get(key) or {}
                n = sum(c for c in rows.values() if c > 0)
                if n == 1:
                    row = next(r for r, c in rows.items() if c > 0)
                    out.append(UpsertUpdate(t, "upsert", key + tuple(row[i] for i in val_idx)))
                elif n > 1:
                    out.append(UpsertUpdate(t, "key_violation", key + (None,) * len(val_idx)))
                else:
                    state.pop(key, None)
                    if existed:
                        out.append(UpsertUpdate(t, "delete", key + (None,) * len(val_idx)))
        return out

    def fail(self, error: E.Error) -> None:
        """End the subscription with ``error`` (raised once its buffer is drained); idempotent."""
        with self._cond:
            if self._ended:
                return
            self._error = error
        self._end()

    def _end(self) -> None:
        with self._cond:
            already = self._ended and self.sink_id is None
            self._ended = True
            self._cond.notify_all()
            sink, self.sink_id = self.sink_id, None
            holds, self._holds = self._holds, None
        if already:
            return
        db = self._db
        if sink is not None:
            try:
                db.controller.drop_collection(sink)
            except Exception:
                pass
        if holds is not None:
            db.reader.release(holds)
        db.subscriptions.remove(self)

    def dropped_dependency(self, catalog) -> Optional[tuple[str, str]]:
        """``(kind word, name)`` of a dependency no longer in ``catalog`` (the first by name), or None."""
        gone = [(kind, name) for gid, (kind, name) in self._depends_on.items() if gid not in catalog]
        return sorted(gone)[0] if gone else None

    def _advance_holds(self, upper: int) -> None:
        t = max(self.as_of, upper - 1)
        with self._cond:
            if self._ended or self._hold_at is None or t <= self._hold_at:
                return
        try:
            new = self._db.reader.hold(self._import_ids, t)
        except Exception:
            return  # keep the old (lower) hold: always safe
        with self._cond:
            if self._ended:
                old, self._holds = new, None
            else:
                old, self._holds, self._hold_at = self._holds, new, t
        if old is not None:
            self._db.reader.release(old)

    # ------------------------------------------------------------------ starting
    def start_dataflow(self, as_of: int, with_snapshot: bool) -> None:
        """Create the dataflow reading from ``as_of`` (holds on its imports at ``as_of``)."""
        db = self._db
        sink_id = db.allocate_transient()
        desc = build_subscribe_dataflow(self._expr, sink_id=sink_id, as_of=as_of, catalog=db.lowering,
                                        up_to=self.up_to, with_snapshot=with_snapshot, optimize_plan=False,
                                        debug_name=f"subscribe-{sink_id}")
        if desc.is_peek_dataflow():
            raise E.InternalError("a subscribe dataflow must never be a peek dataflow")
        import_ids = tuple(desc.import_ids())
        self.bounded = self.up_to is not None or not import_ids
        for gid in import_ids:
            since = db.reader.since_of(gid)
            if since is None or since > as_of:
                raise E.error_for("XX000" if since is None else "22000",
                                  f"subscribe cannot read its input {gid} at {as_of}: "
                                  f"{'it was dropped' if since is None else f'its since is {since}'}")
        holds = db.reader.hold(import_ids, as_of)
        with self._cond:
            self.sink_id, self._import_ids, self._holds, self._hold_at = sink_id, import_ids, holds, as_of
        try:
            db.controller.create_dataflow(desc, on_subscribe=self._on_response)
        except Exception:
            with self._cond:
                self.sink_id, self._holds = None, None
            db.reader.release(holds)
            raise

    def resume(self) -> None:
        """After a replica restart: rebuild the dataflow from the received frontier, without
        its snapshot when anything was received already, so no update repeats."""
        with self._cond:
            if self._ended:
                return
            received = self._received
            self.sink_id = None
            holds, self._holds = self._holds, None
        if received is None:
            return
        if received > self.as_of:
            as_of, snapshot = received - 1, False
        else:
            as_of, snapshot = self.as_of, self.with_snapshot
        try:
            self.start_dataflow(as_of, snapshot)
        except Exception as e:  # e.g. an index or materialized view rebuilt from a later time
            self.fail(E.error_for("57P01", f"subscribe has been terminated because the compute replica "
                                            f"restarted and it cannot resume from its frontier: {e}"))
        finally:
            if holds is not None:  # the old controller is gone with its holds: release storage's only
                self._db.storage_holds.release(holds[0])


def _python_row(row: tuple) -> tuple:
    """``row`` with engine-only values (Interval, Jsonb, Array) as the Python API returns them."""
    out = []
    for v in row:
        if v is not None and type(v).__name__ == "Interval":
            v = v.to_timedelta()
        elif v is not None:
            v = python_value(v)
        out.append(v)
    return tuple(out)


def consolidate(updates) -> list[Update]:
    """``(row, time, diff)`` triples -> ``Update``s in time order, one per ``(time, row)``
    with a nonzero summed diff (first-seen order within a time)."""
    acc: dict = {}
    for row, t, d in updates:
        k = (t, row)
        acc[k] = acc.get(k, 0) + d
    out = [Update(t, d, row) for (t, row), d in acc.items() if d]
    out.sort(key=lambda u: u.timestamp)
    return out


def order_within_timestamps(items: list, order, positions) -> list:
    """``items`` (in time order) sorted within each timestamp by ``order``: ``(column, desc,
    nulls_last)`` with column -1 for mz_diff; NULLs compare per ``nulls_last``."""
    def value(item, col):
        return item.diff if col < 0 else item.row[positions[col]]

    def cmp(a, b):
        if a.timestamp != b.timestamp:
            return -1 if a.timestamp < b.timestamp else 1
        for col, desc, nulls_last in order:
            x, y = value(a, col), value(b, col)
            if x is None or y is None:
                if x is None and y is None:
                    continue
                return (1 if nulls_last else -1) if x is None else (-1 if nulls_last else 1)
            if x == y:
                continue
            r = -1 if x < y else 1
            return -r if desc else r
        return 0
    return sorted(items, key=cmp_to_key(cmp))


# ---------------------------------------------------------------------- registry


class Subscriptions:
    """The running subscriptions of one database: added when started, removed when ended."""

    def __init__(self):
        self._lock = threading.Lock()
        self._live: dict[int, Subscription] = {}

    def add(self, sub: Subscription) -> None:
        with self._lock:
            self._live[id(sub)] = sub

    def remove(self, sub: Subscription) -> None:
        with self._lock:
            self._live.pop(id(sub), None)

    def live(self) -> list[Subscription]:
        with self._lock:
            return list(self._live.values())


def start(db, session, plan, *, max_buffered: Optional[int] = None) -> Subscription:
    """Start the SUBSCRIBE ``plan`` for ``session``: choose ``as_of``, hold the inputs, create
    the dataflow.  The caller holds ``db.lock``."""
    session.note_read()
    expr = optimize(plan.expr)
    check_maintainable(resolve_imports(expr, db.lowering)[0], "SUBSCRIBE")
    ids = db.reader.input_ids(expr)
    as_of = literal_timestamp(plan.as_of) if plan.as_of is not None else None
    t, holds = db.reader.dataflow_as_of(ids, session, as_of, plan.as_of_at_least)
    try:  # ids stay held at t until the dataflow holds its own imports there
        return _start_at(db, session, plan, expr, ids, t, max_buffered)
    finally:
        db.reader.release(holds)


def _start_at(db, session, plan, expr, ids, t, max_buffered):
    up_to = literal_timestamp(plan.up_to) if plan.up_to is not None else None
    if up_to is not None and up_to < t:
        raise E.error_for(E.INVALID_PARAMETER_VALUE,
                          f"UP TO ({up_to}) must be greater than or equal to AS OF ({t})")
    depends = {}
    for gid in _closure(db, set(plan.depends_on) | set(ids)):
        if gid in db.catalog:
            item = db.catalog.get(gid)
            depends[gid] = ("index" if item.kind == "index" else "relation", item.name)
    columns = [(n, display_name(ty)) for n, ty in plan.columns]
    sub = Subscription(db, session, expr=expr, plan=plan, as_of=t, up_to=up_to, columns=columns,
                       depends_on=depends, max_buffered=max_buffered)
    if sub.done:  # an empty interval (UP TO = AS OF): complete already
        return sub
    db.subscriptions.add(sub)
    try:
        sub.start_dataflow(t, plan.with_snapshot)
    except Exception:
        db.subscriptions.remove(sub)
        raise
    return sub


def _closure(db, ids: set) -> set:
    out, stack = set(), list(ids)
    while stack:
        gid = stack.pop()
        if gid in out:
            continue
        out.add(gid)
        if gid in db.catalog:
            stack.extend(db.catalog.get(gid).depends_on)
    return out


# ---------------------------------------------------------------------- lifecycle hooks


def end_for_dropped(db) -> None:
    """End every subscription one of whose dependencies left the catalog."""
    for sub in db.subscriptions.live():
        gone = sub.dropped_dependency(db.catalog)
        if gone is not None:
            kind, name = gone
            code = E.UNDEFINED_OBJECT if kind == "index" else E.UNDEFINED_TABLE
            sub.fail(E.error_for(code, f'subscribe has been terminated because underlying {kind} "{name}" '
                                       f'was dropped'))


def resume_all(db) -> None:
    """The replica was replaced: rebuild every live subscription's dataflow on the new one."""
    for sub in db.subscriptions.live():
        sub.resume()


def end_all(db, error: E.Error) -> None:
    """The database is closing: end every subscription with ``error``."""
    for sub in db.subscriptions.live():
        sub.fail(error)


def close_session(db, session) -> None:
    """A session closed: close its cursors and its subscriptions."""
    close_portals(session)
    for sub in db.subscriptions.live():
        if sub.session is session:
            sub.close()


# ---------------------------------------------------------------------- statements

_TAG = "SUBSCRIBE"


def output_columns(sub: Subscription) -> list[tuple[str, str]]:
    cols = [("mz_timestamp", "mz_timestamp")]
    if sub.progress:
        cols.append(("mz_progressed", "boolean"))
    if sub.upsert_key is not None:  # mz_state, then the key columns, then the others
        cols.append(("mz_state", "text"))
        key = list(sub.upsert_key)
        return cols + [sub.columns[i] for i in key] + [c for i, c in enumerate(sub.columns) if i not in key]
    cols.append(("mz_diff", "bigint"))
    return cols + list(sub.columns)


def flat_row(sub: Subscription, item) -> tuple:
    """An ``Update``/``Progress`` as SUBSCRIBE's output row."""
    if isinstance(item, Progress):
        return (item.timestamp, True, None) + (None,) * len(sub.columns)
    middle = item.state if isinstance(item, UpsertUpdate) else item.diff
    if sub.progress:
        return (item.timestamp, False, middle) + tuple(item.row)
    return (item.timestamp, middle) + tuple(item.row)


class SubscribeStream:
    """What a ``Cursor`` reads for ``SUBSCRIBE``: flat rows from a subscription.

    A fetch that waits is a statement of ``session``: ``con.interrupt()`` (its cancel flag,
    cleared as the fetch begins, so an earlier interrupt does not cancel it) and the session's
    ``statement_timeout`` end the wait with 57014, and closing the stream (the cursor closed
    from another thread) ends it at once; the subscription goes on after a cancel."""

    def __init__(self, sub: Subscription, session=None):
        self.sub = sub
        self.session = session

    def fetch(self, n: Optional[int], timeout: Optional[float] = None) -> list:
        session = self.session
        if session is None:
            return [flat_row(self.sub, x) for x in self.sub.fetch(timeout=timeout, max_rows=n)]
        session.cancel_requested = False
        ms = session.vars.get("statement_timeout") or 0
        limit = ms / 1000.0 if ms and (timeout is None or timeout > ms / 1000.0) else None
        items = self.sub.fetch(timeout=timeout if limit is None else limit, max_rows=n,
                               should_cancel=lambda: session.cancel_requested)
        if not items and limit is not None and n != 0 and not self.sub.done:
            raise E.QueryCanceled("canceling statement due to statement timeout", sqlstate=E.QUERY_CANCELED)
        return [flat_row(self.sub, x) for x in items]

    @property
    def bounded(self) -> bool:
        return self.sub.bounded

    def close(self) -> None:
        self.sub.close()


def subscribe(db, session, plan, stmt, params) -> Result:
    """``SUBSCRIBE ...`` as a statement: a streaming result read through the cursor."""
    sub = start(db, session, plan)
    res = Result(_TAG, output_columns(sub), None, -1)
    res.stream = SubscribeStream(sub, session)
    return res


class _Portal:
    def __init__(self, columns, rows=None, stream: Optional[SubscribeStream] = None):
        self.columns = columns
        self.rows = deque(rows or ())
        self.stream = stream

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()


def declare(db, session, plan, stmt, params) -> Result:
    if not session.in_transaction():
        raise E.error_for(E.NO_ACTIVE_SQL_TRANSACTION, "DECLARE CURSOR can only be used in transaction blocks")
    if plan.name in session.portals:
        raise E.error_for("42P03", f'cursor "{plan.name}" already exists')
    inner = plan.plan
    if isinstance(inner, SubscribePlan):
        sub = start(db, session, inner)
        portal = _Portal(output_columns(sub), stream=SubscribeStream(sub))
    else:
        res = select(db, session, inner, stmt, params)
        portal = _Portal(res.columns, res.rows)
    session.portals[plan.name] = portal
    return Result("DECLARE CURSOR", None)


def _portal(session, name):
    p = session.portals.get(name)
    if p is None:
        raise E.error_for("34000", f'cursor "{name}" does not exist')
    return p


def fetch(db, session, plan, stmt, params) -> Result:
    """``FETCH [n | ALL] c [WITH (timeout = ...)]``: what is ready, waiting up to the timeout
    (forever without one) for at least one row; the database lock is released meanwhile.
    ``FETCH 0`` returns no rows at once (its result is the cursor's columns): it never waits."""
    p = _portal(session, plan.name)
    if plan.count == 0:
        rows = []
    elif p.stream is None:
        n = len(p.rows) if plan.count is None else min(plan.count, len(p.rows))
        rows = [p.rows.popleft() for _ in range(n)]
    else:
        with db.unlocked():  # never hold the database while waiting for a stream
            rows = p.stream.sub.fetch(timeout=plan.timeout, max_rows=plan.count,
                                      should_cancel=lambda: session.cancel_requested)
        rows = [flat_row(p.stream.sub, x) for x in rows]
    if plan.move:
        return Result(f"MOVE {len(rows)}", None, None, len(rows))
    return Result(f"FETCH {len(rows)}", p.columns, rows, len(rows))


def close_cursor(db, session, plan, stmt, params) -> Result:
    if plan.name is None:
        close_portals(session)
    else:
        _portal(session, plan.name).close()
        session.portals.pop(plan.name, None)
    return Result("CLOSE CURSOR", None)


def close_portals(session) -> None:
    """Close every cursor of ``session`` (COMMIT, ROLLBACK, CLOSE ALL, session end)."""
    portals = list(session.portals.values())
    session.portals.clear()
    for p in portals:
        try:
            p.close()
        except Exception:
            pass


# ---------------------------------------------------------------------- Python API

_NAME = re.compile(r'^\s*(?:[A-Za-z_][\w$]*|"(?:[^"]|"")+")(?:\s*\.\s*(?:[A-Za-z_][\w$]*|"(?:[^"]|"")+"))*\s*$')


def subscribe_sql(query_or_name: str, *, snapshot: bool = True, progress: bool = False,
                  as_of: Optional[int] = None, up_to: Optional[int] = None) -> str:
    """The SUBSCRIBE statement ``Connection.subscribe`` runs."""
    if not isinstance(query_or_name, str):
        raise E.ProgrammingError("subscribe() takes a query or the name of a table, view or materialized view")
    text = query_or_name.strip().rstrip(";").strip()
    if _NAME.match(text):
        target = text
    else:
        target = f"({text})"
    opts = []
    if not snapshot:
        opts.append("SNAPSHOT = false")
    if progress:
        opts.append("PROGRESS")
    sql = f"SUBSCRIBE TO {target}"
    if opts:
        sql += f" WITH ({', '.join(opts)})"
    for kw, v in (("AS OF", as_of), ("UP TO", up_to)):
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, int):
                raise E.ProgrammingError(f"{kw.lower().replace(' ', '_')} must be an int timestamp, not {v!r}")
            sql += f" {kw} {v}"
    return sql
