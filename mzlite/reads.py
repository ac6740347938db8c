"""Reads: choosing a read timestamp (and a new dataflow's ``as_of``), holding inputs at it,
and peeking; the SELECT handler.

Owns the path of a one-shot read from a plan to rows: the timestamp choice
(``transaction_isolation``, ``AS OF``; ``literal_timestamp``), the as-of rule of every new
long-lived dataflow (``Reader.dataflow_as_of``, the one place it is written), the read
holds that keep compaction from passing a read in progress, peek planning (constant, fast
path off an existing index, or a transient peek dataflow), the conversion of the response
(``Reader.rows_of``), and the optimized expressions of cached SELECT plans.
Invariants: a read at ``t`` holds every collection it reads at ``t`` from before the
timestamp is checked until the response arrives; a peek dataflow is dropped after its
one peek, whatever the outcome; strict serializable reads see every committed write.
Deliberately not here: SQL, planning rules (``planner.peek``), or answering a peek
(compute does that).
"""
from __future__ import annotations

from typing import Optional

from compute import protocol as P
from expr.compile import evaluate_constant
from expr.finishing import finish
from expr.mfp import MapFilterProject
from mzlite.cursor import Result
from mzlite.session import DEFAULT_MAX_RESULT_SIZE
from planner.lower import build_peek_dataflow, resolve_imports
from planner.optimize import optimize
from planner.output_typmods import output_typmods
from planner.peek import ConstantPeek, FastPathPeek, SlowPathPeek, plan_peek
from repr.errors import EvalError
from repr.ids import GlobalId
from repr.timestamp import MAX
from sql import errors as E
from sql.types import display_name


def literal_timestamp(expr) -> int:
    """The value of an ``AS OF`` / ``UP TO`` expression (a constant) as a timestamp."""
    try:
        v = evaluate_constant(expr)
    except EvalError as e:
        raise E.error_for(e.sqlstate, e.message)
    except Exception:
        raise E.error_for(E.FEATURE_NOT_SUPPORTED, "AS OF must be a constant expression")
    try:
        t = int(v)
    except (TypeError, ValueError):
        raise E.error_for(E.DATATYPE_MISMATCH, f"AS OF must be a timestamp, not {v!r}")
    if t < 0 or t > MAX:
        raise E.error_for(E.NUMERIC_VALUE_OUT_OF_RANGE, f"timestamp out of range: {t}")
    return t


def select(db, session, plan, stmt, params) -> Result:
    """The sequencer's handler of a ``SelectPlan`` (and a ``DECLARE``'s query).  The statement
    lock stays held while a multi-statement string has committed writes it may yet undo
    (``session.undo``): no other session's write may land between them and their undo."""
    session.note_read()
    as_of = literal_timestamp(plan.as_of) if plan.as_of is not None else None
    system = [gid for gid in plan.depends_on if gid.is_system()]
    if system:
        db.introspection.refresh(system)
    rows, _ = db.reader.read(session, db.reader.optimized(plan), plan.finishing, as_of=as_of,
                             at_least=plan.as_of_at_least, release_lock=not session.undo)
    limit = db.system["max_result_size"]
    if limit < DEFAULT_MAX_RESULT_SIZE:
        check_result_size(rows, limit)
    result = Result(f"SELECT {len(rows)}", [(n, display_name(t)) for n, t in plan.columns], rows, len(rows))
    # cursor.description's sizes, computed when it is read
    result.typmods = lambda: output_typmods(plan.expr, plan.finishing.project, db.catalog)
    return result


def check_result_size(rows, limit: int) -> None:
    """54000 when ``rows`` exceed ``max_result_size`` (a string or bytes value counts its
    length, any other value 8 bytes), as Materialize refuses such a result."""
    size = 0
    for row in rows:
        for v in row:
            size += len(v) if v.__class__ in (str, bytes) else 8
        if size > limit:
            raise E.error_for("54000", f"result exceeds max size of {limit} B")


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
        #: id(plan) -> (plan, its optimized expression), for the cached plans SELECTs reuse
        self._optimized: dict = {}

    def optimized(self, plan):
        """``optimize(plan.expr)``, computed once per plan object."""
        entry = self._optimized.get(id(plan))
        if entry is None or entry[0] is not plan:
            entry = (plan, optimize(plan.expr))
            if len(self._optimized) > 256:
                self._optimized.clear()
            self._optimized[id(plan)] = entry
        return entry[1]

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
        return self._now_or_since(max_since)

    def _now_or_since(self, since: int) -> int:
        """The oracle's read timestamp, every table's upper first advanced past it (so a read
        or a dataflow there is answerable at once), or ``since`` when that is later."""
        t = self.db.oracle.read_ts()
        self.db.storage.advance_tables(t + 1)
        return max(t, since)

    def dataflow_as_of(self, ids, session=None, as_of: Optional[int] = None, at_least: bool = False) -> int:
        """The ``as_of`` of a new dataflow reading ``ids``: an index, a materialized view (also
        when a restarted replica rebuilds one) or a SUBSCRIBE.  The rule, as it is today:

        * a SUBSCRIBE (``session`` given) is a read of its session: its as_of is the read
          timestamp ``choose_timestamp`` picks (``AS OF [AT LEAST]``, the transaction's read
          timestamp, the isolation level; by default the oracle's, as below);
        * an index or a materialized view: the oracle's read timestamp, every table's upper
          first advanced past it, or the latest ``since`` of the inputs when that is later
          (nothing earlier is readable; a dropped input, since None, is skipped).  A dataflow
          of constants alone therefore starts at the oracle's read timestamp too, not at 0.

        Hold the inputs at the result before anything else (``hold``): until then the ticker
        may compact them past it."""
        if session is not None:
            return self.choose_timestamp(session, ids, as_of, at_least)
        return self._now_or_since(max((s for s in map(self.since_of, ids) if s is not None), default=0))

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
        return expand(self.rows_of(resp, session)), ts

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

    def rows_of(self, resp: P.PeekResponse, session):
        """The ``(row, count)`` pairs of a peek response; its error or cancelation raised."""
        r = resp.result
        if isinstance(r, P.PeekRows):
            return r.rows
        if isinstance(r, P.PeekError):
            raise E.error_for(r.sqlstate, r.message)
        why = "user request" if session.cancel_requested else "statement timeout"
        raise E.QueryCanceled(f"canceling statement due to {why}", sqlstate=E.QUERY_CANCELED)
