"""Reads: choosing a read timestamp, holding inputs at it, and peeking.

Owns the path of a one-shot read from an optimized relational expression to rows: the
timestamp choice (``transaction_isolation``, ``AS OF``), the read holds that keep
compaction from passing a read in progress, peek planning (constant, fast path off an
existing index, or a transient peek dataflow) and the conversion of the response.
Invariants: a read at ``t`` holds every collection it reads at ``t`` from before the
timestamp is checked until the response arrives; a peek dataflow is dropped after its
one peek, whatever the outcome; strict serializable reads see every committed write.
Deliberately not here: SQL, planning rules (``planner.peek``), or answering a peek
(compute does that).
"""
from __future__ import annotations

from typing import Optional

from compute import protocol as P
from expr.finishing import finish
from expr.mfp import MapFilterProject
from expr.relation import depends_on
from planner.lower import build_peek_dataflow, resolve_imports
from planner.peek import ConstantPeek, FastPathPeek, SlowPathPeek, plan_peek
from repr.errors import EvalError
from repr.ids import GlobalId
from repr.timestamp import MAX
from sql import errors as E


def expand(rows) -> list[tuple]:
    """``(row, count)`` pairs to a list of rows, each repeated ``count`` times."""
    out = []
    for row, c in rows:
        if c == 1:
            out.append(row)
        elif c > 1:
            out.extend([row] * c)
        elif c < 0:
            raise E.InternalError(f"negative multiplicity {c} for row {row!r} in a read")
    return out


class _NoLockContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NoLock = _NoLockContext()


class Reader:
    """The read machinery of one ``Database`` (see the module docstring)."""

    def __init__(self, db):
        self.db = db

    # -------------------------------------------------------------- timestamps
    def input_ids(self, expr) -> set[GlobalId]:
        """The collections a read of ``expr`` depends on (views resolved to what serves them)."""
        _, sources, index_imports = resolve_imports(expr, self.db.lowering)
        return {s.id for s in sources} | {i.id for i in index_imports}

    def since_of(self, gid: GlobalId):
        db = self.db
        if gid in db.storage.collections:
            return db.storage.collections[gid].since
        return db.controller.since(gid)

    def upper_of(self, gid: GlobalId):
        db = self.db
        if gid in db.storage.collections:
            return db.storage.collections[gid].upper
        return db.controller.upper(gid)

    def choose_timestamp(self, session, ids, as_of: Optional[int] = None, at_least: bool = False) -> int:
        """The read timestamp for a read of ``ids`` by ``session``."""
        db = self.db
        sinces = [self.since_of(i) for i in ids]
        if any(s is None for s in sinces):
            raise E.error_for("XX000", "a read input has been dropped")
        max_since = max(sinces, default=0)
        if as_of is not None and not at_least:
            if as_of < max_since:
                raise E.error_for(
                    "22000", f"Timestamp ({as_of}) is not valid for all inputs: the earliest readable "
                             f"time is {max_since} (the inputs' since)")
            if as_of > MAX or as_of < 0:
                raise E.error_for(E.INVALID_PARAMETER_VALUE, f"timestamp out of range: {as_of}")
            return as_of
        if as_of is not None:
            return max(as_of, max_since)
        txn = session.txn
        if txn is not None and txn.explicit and txn.read_ts is not None:
            return txn.read_ts
        if session.vars["transaction_isolation"] == "serializable" and ids:
            uppers = [self.upper_of(i) for i in ids]
            finite = [u for u in uppers if u is not None]
            t = (min(finite) - 1) if finite else MAX
            if t >= max_since:
                return t
        t = db.oracle.read_ts()
        db.storage.advance_tables(t + 1)
        return max(t, max_since)

    # -------------------------------------------------------------- holds
    def hold(self, ids, t: int):
        """Read holds on every id at ``t``: storage holds and controller holds."""
        db = self.db
        storage_ids = [i for i in ids if i in db.storage.collections]
        compute_ids = [i for i in ids if i not in db.storage.collections]
        sh = db.storage_holds.acquire(storage_ids, t)
        try:
            ch = db.controller.acquire_hold(compute_ids, t)
        except Exception:
            db.storage_holds.release(sh)
            raise
        return (sh, ch)

    def release(self, holds) -> None:
        sh, ch = holds
        self.db.storage_holds.release(sh)
        self.db.controller.release_holds(ch)

    # -------------------------------------------------------------- peeks
    def read(self, session, expr, finishing: P.RowSetFinishing, as_of=None, at_least=False,
             optimized=True, release_lock=False) -> tuple[list[tuple], int]:
        """Rows of ``expr`` with ``finishing`` applied, and the timestamp they were read at.

        ``release_lock``: a read-only statement waits for its peek without holding the
        statement lock, so other sessions go on; its read holds (taken under the lock)
        keep what it reads readable.  Reads inside a write keep the lock, so nothing
        commits between the read and the write."""
        db = self.db
        peek = plan_peek(expr, finishing, db.lowering.available_indexes(), optimized=optimized)
        if isinstance(peek, ConstantPeek):
            if peek.error is not None:
                raise E.error_for(peek.error[0], peek.error[1])
            ts = as_of if as_of is not None else db.oracle.peek_read_ts()
            return expand(finish(list(peek.rows), peek.finishing)), ts
        if isinstance(peek, FastPathPeek):
            ids = {peek.index_id}
        else:
            ids = self.input_ids(peek.expr)
        ts = self.choose_timestamp(session, ids, as_of, at_least)
        holds = self.hold(ids, ts)
        try:
            if session.txn is not None and session.txn.explicit and session.txn.read_ts is None:
                session.txn.read_ts = ts
            if isinstance(peek, FastPathPeek):
                db.note_peek_target(peek.index_id)
                with (db.unlocked() if release_lock else _NoLock):
                    resp = db.controller.peek(peek.index_id, peek.literal_constraints, ts, peek.finishing,
                                              peek.mfp, timeout=self._timeout(session),
                                              should_cancel=lambda: session.cancel_requested)
            else:
                resp = self._peek_dataflow(session, peek, ts, release_lock)
        finally:
            self.release(holds)
        return expand(self._rows(resp, session)), ts

    def _timeout(self, session) -> Optional[float]:
        ms = session.vars.get("statement_timeout") or 0
        return ms / 1000.0 if ms else None

    def _peek_dataflow(self, session, peek: SlowPathPeek, ts: int, release_lock: bool = False) -> P.PeekResponse:
        db = self.db
        view_id, index_id = db.allocate_transient(), db.allocate_transient()
        desc = build_peek_dataflow(peek.expr, view_id=view_id, index_id=index_id, as_of=ts,
                                   catalog=db.lowering, optimize_plan=False,
                                   debug_name=f"peek-{index_id}")
        arity = desc.index_exports[0].arity
        db.controller.create_dataflow(desc)
        try:
            with (db.unlocked() if release_lock else _NoLock):
                return db.controller.peek(index_id, None, ts, peek.finishing, MapFilterProject.identity(arity),
                                          timeout=self._timeout(session),
                                          should_cancel=lambda: session.cancel_requested)
        finally:
            db.controller.drop_collection(index_id)

    def _rows(self, resp: P.PeekResponse, session):
        r = resp.result
        if isinstance(r, P.PeekRows):
            return r.rows
        if isinstance(r, P.PeekError):
            raise E.error_for(r.sqlstate, r.message)
        why = "user request" if session.cancel_requested else "statement timeout"
        raise E.QueryCanceled(f"canceling statement due to {why}", sqlstate=E.QUERY_CANCELED)
