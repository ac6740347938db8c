"""Reads: choosing a read timestamp (and a new dataflow's ``as_of``), holding inputs at it,
and peeking; the SELECT handler.

Owns the path of a one-shot read from a plan to rows: the timestamp choice
(``transaction_isolation``, ``AS OF``; ``literal_timestamp``), the as-of rule of every new
long-lived dataflow (``Reader.dataflow_as_of``, the one place it is written), the read
holds that keep compaction from passing a read in progress, peek planning (constant, fast
path off an existing index, or a transient peek dataflow), the conversion of the response
(``Reader.rows_of``), and the optimized expressions of cached SELECT plans.
Invariants: a read at ``t`` holds every collection it reads at ``t`` from before the
timestamp is checked until the response arrives (``choose_and_hold``: the holds are refused
when a since passed ``t`` meanwhile, and a freely chosen ``t`` is chosen again); an explicit
transaction holds its time domain at its read timestamp from its first read until it ends
(``end_transaction``); a read that depends on the time itself is at or after the clock
(``reads_the_clock``); a peek dataflow is dropped after its
one peek, whatever the outcome; strict serializable reads see every committed write.
Deliberately not here: SQL, planning rules (``planner.peek``), or answering a peek
(compute does that).
"""
from __future__ import annotations

from operator import itemgetter

from compute import protocol as P
from expr.compile import evaluate_constant
from expr.finishing import finish
from expr.mfp import MapFilterProject
from mzlite.controller import SinceError
from mzlite.cursor import Result
from mzlite.temporal import reads_mz_now
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

#: how often a read chooses its timestamp again when a since passed it before the holds
HOLD_ATTEMPTS = 8


_NOT_A_TIMESTAMP = "AS OF or UP TO should be castable to a (non-null) mz_timestamp value"


def literal_timestamp(expr) -> int:
    """The value of an ``AS OF`` / ``UP TO`` expression (a constant the planner cast to
    mz_timestamp, with no unmaterializable call) as a timestamp.  A value that is NULL or
    fails to evaluate (``7/0``, ``-1``, ``'xxx'``) is refused with Materialize's text."""
    try:
        v = evaluate_constant(expr)
    except EvalError:
        raise E.error_for(E.INVALID_PARAMETER_VALUE, _NOT_A_TIMESTAMP) from None
    if v is None or isinstance(v, bool) or not isinstance(v, int) or v < 0 or v > MAX:
        raise E.error_for(E.INVALID_PARAMETER_VALUE, _NOT_A_TIMESTAMP)
    return v


def select(db, session, plan, stmt, params) -> Result:
    """The sequencer's handler of a ``SelectPlan`` (and a ``DECLARE``'s query).  The statement
    lock stays held while a multi-statement string has committed writes it may yet undo
    (``session.undo``): no other session's write may land between them and their undo."""
    session.note_read()
    db.catalog.cluster(session.vars["cluster"])  # a read runs on the session's cluster, which must exist
    as_of = literal_timestamp(plan.as_of) if plan.as_of is not None else None
    system = [gid for gid in plan.depends_on if gid.is_system()]
    if system:
        db.introspection.refresh(system)
    primed = db.reader.primed_peek(plan)
    if primed is not None:  # a prepared point read (``mzlite.generic_plans``): planned already
        rows, _ = db.reader.read_fast(session, primed[0], primed[1], as_of, plan.as_of_at_least,
                                      not session.undo)
    else:
        rows, _ = db.reader.read(session, db.reader.optimized(plan, session), plan.finishing, as_of=as_of,
                                 at_least=plan.as_of_at_least, release_lock=not session.undo)
    limit = db.system["max_result_size"]
    if limit < DEFAULT_MAX_RESULT_SIZE:
        check_result_size(rows, limit)
    result = Result(f"SELECT {len(rows)}", [(n, display_name(t)) for n, t in plan.columns], rows, len(rows))
    result.owned = True  # a new list (``expand``'s): fetchall hands it over
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


_ROW = itemgetter(0)
_COUNT = itemgetter(1)


def expand(rows) -> list[tuple]:
    """``(row, count)`` pairs to a list of rows, each repeated ``count`` times (every count
    1, the usual case: two C-level passes)."""
    if len(rows) > 16 and set(map(_COUNT, rows)) == {1}:
        return list(map(_ROW, rows))
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
        #: catalog id -> whether its definition calls ``mz_now()`` (ids are never reused)
        self._temporal: dict = {}
        #: id(plan) -> (plan, its fast-path peek, whether it reads the clock), for prepared point reads
        self._peeks: dict = {}

    def prime_optimized(self, plan, expr) -> None:
        """``expr`` is ``optimize(plan.expr)``, known without running the optimizer (a
        generic plan's optimized form with the values substituted: ``mzlite.generic_plans``)."""
        if len(self._optimized) > 256:
            self._optimized.clear()
        self._optimized[id(plan)] = (plan, expr)

    def prime_peek(self, plan, peek: FastPathPeek, clock: bool) -> None:
        """``plan``'s read is ``peek``, at the clock iff ``clock`` (``reads_the_clock``): a
        prepared point read's peek, instantiated from its template without the optimizer or
        peek planning (``mzlite.generic_plans``)."""
        if len(self._peeks) > 256:
            self._peeks.clear()
        self._peeks[id(plan)] = (plan, peek, clock)

    def primed_peek(self, plan):
        """``(peek, clock)`` primed for ``plan`` (``prime_peek``), or None."""
        entry = self._peeks.pop(id(plan), None)
        return entry[1:] if entry is not None and entry[0] is plan else None

    def optimized(self, plan, session=None):
        """``optimize(plan.expr)``, computed once per plan object; an interrupt of
        ``session`` stops the optimization between its rules (57014)."""
        entry = self._optimized.get(id(plan))
        if entry is None or entry[0] is not plan:
            check = None if session is None else (lambda: self.db.check_canceled(session))
            entry = (plan, optimize(plan.expr, check=check))
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

    def choose_timestamp(self, session, ids, as_of: int | None = None, at_least: bool = False,
                         at_clock: bool = False) -> int:
        """The read timestamp for a read of ``ids`` by ``session``.  Nothing holds it: take
        it with ``choose_and_hold`` unless something else already holds ``ids`` there."""
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
        return self._now_or_since(max_since, at_clock)

    def _now_or_since(self, since: int, at_clock: bool = False) -> int:
        """The oracle's read timestamp (``at_clock``: not before the clock), the sources' ticks
        due by the clock ingested before it is chosen (so it is at or after them), every table's
        upper first advanced past it (so a read or a dataflow there is answerable at once), or
        ``since`` when that is later."""
        self.db.storage.sources.run(self.db.oracle.clock(), external=False)  # ticks due by now are readable now
        t = self.db.oracle.read_ts(at_clock)
        self.db.storage.advance_tables(t + 1)
        return max(t, since)

    def dataflow_as_of(self, ids, session=None, as_of: int | None = None, at_least: bool = False):
        """``(as_of, holds)`` of a new dataflow reading ``ids``: an index, a materialized view
        (also when a restarted replica rebuilds one) or a SUBSCRIBE, its inputs held at
        ``as_of`` (release the holds once the dataflow holds its own).  The rule:

        * a SUBSCRIBE (``session`` given) is a read of its session: its as_of is the read
          timestamp ``choose_timestamp`` picks (``AS OF [AT LEAST]``, the transaction's read
          timestamp, the isolation level; by default the oracle's, as below);
        * an index or a materialized view: the oracle's read timestamp, every table's upper
          first advanced past it, or the latest ``since`` of the inputs when that is later
          (nothing earlier is readable; a dropped input, since None, is skipped);
        * a dataflow with no inputs at all (a materialized view or index over constants):
          time 0, as Materialize chooses it, so ``SELECT * FROM mv AS OF 2`` is answerable
          (nothing time-varying constrains it; its output is the same at every time)."""
        if session is not None:
            return self.choose_and_hold(session, ids, as_of, at_least)
        if not ids:
            return 0, self.hold((), 0)
        return self._held(ids, lambda: self._now_or_since(
            max((s for s in map(self.since_of, ids) if s is not None), default=0)), pinned=False)

    # -------------------------------------------------------------- holds
    def choose_and_hold(self, session, ids, as_of: int | None = None, at_least: bool = False,
                        at_clock: bool = False):
        """``(ts, holds)``: the read timestamp of a read of ``ids`` (``choose_timestamp``) and
        read holds on every id at it, taken together.

        A since may pass the chosen time before the holds are taken (the ticker compacts
        storage, the controller allows compaction as frontiers advance, on other threads):
        the holds are then refused (``SinceError``) and a time the reader chose freely is
        chosen again (later sinces give a later time).  A time the user pinned (``AS OF``
        without ``AT LEAST``) or the transaction's read timestamp is not moved: the read
        fails with 22000 instead.  A read in an explicit transaction first holds its whole
        time domain (``_begin_transaction_read``), so later reads of it are held already.
        ``at_clock``: the read's answer depends on the time itself (``reads_the_clock``), so a
        freely chosen time is not before the clock (the oracle's settled ticks trail it)."""
        txn = session.txn
        pinned = as_of is not None and not at_least
        if txn is not None and txn.explicit:
            if txn.read_ts is None:
                self._begin_transaction_read(session, ids, as_of, at_least, at_clock)
            if as_of is None:
                return self._held(ids, lambda: txn.read_ts, True,
                                  "it did not exist when the transaction chose its read timestamp")
        return self._held(ids, lambda: self.choose_timestamp(session, ids, as_of, at_least, at_clock), pinned)

    def _held(self, ids, choose, pinned: bool, why: str = ""):
        for _ in range(HOLD_ATTEMPTS):
            ts = choose()
            try:
                return ts, self.hold(ids, ts)
            except SinceError as e:
                if pinned:
                    raise E.error_for("22000", f"Timestamp ({ts}) is not valid for all inputs: " + (
                        why and f"{self._name(e.id)}: {why}" or
                        (f"{self._name(e.id)} was dropped" if e.since is None else
                         f"the earliest readable time of {self._name(e.id)} is {e.since}")))
        raise E.error_for("22000", f"no timestamp valid for all inputs after {HOLD_ATTEMPTS} attempts "
                                   f"(their sinces kept passing the chosen time)")

    def _name(self, gid) -> str:
        cat = self.db.catalog
        return f'"{cat.get(gid).name}"' if gid in cat else str(gid)

    def _begin_transaction_read(self, session, ids, as_of, at_least, at_clock=False) -> None:
        """The first read of an explicit transaction: choose its read timestamp for every
        collection it may read (its time domain: ``ids`` and every collection in the
        catalog, as Materialize holds every object of the schemas a transaction reads) and
        hold them all there until COMMIT, ROLLBACK or the session closes
        (``end_transaction``), so compaction never passes a live transaction.  A first
        read ``AS OF`` a time fixes the transaction at that time (refused, 22000, below an
        input's since)."""
        txn = session.txn
        domain = set(ids) | self.time_domain()
        if as_of is not None and not at_least:  # pinned: the domain is what is readable there
            domain = set(ids) | {i for i in domain if (s := self.since_of(i)) is not None and s <= as_of}
            ts, holds = self._held(domain, lambda: as_of, True)
        else:
            ts, holds = self._held(domain, lambda: max(
                [self.choose_timestamp(session, ids, as_of, at_least, at_clock)]
                + [s for s in map(self.since_of, domain) if s is not None]), False)
        txn.read_ts, txn.holds = ts, holds

    def time_domain(self) -> set:
        """Every collection a transaction may read: tables, materialized views' outputs and
        indexes (their compute collections)."""
        db = self.db
        out = set(db.storage.collections)
        for item in db.catalog.items():
            if item.kind == "index" and item.id in db.controller.collections:
                out.add(item.id)
        return out

    def reads_the_clock(self, expr, ids) -> bool:
        """Whether a read of ``expr`` (reading ``ids``) depends on the time itself: it calls
        ``mz_now()``, or reads (through indexes, views and materialized views) a definition
        that does, such as a temporal filter.  Such a read is at the clock, not at the last
        settled tick, or rows would outlive their temporal filter by up to a tick."""
        if reads_mz_now(expr):
            return True
        cat, stack, seen = self.db.catalog, list(ids), set()
        while stack:
            gid = stack.pop()
            if gid in seen or gid not in cat:
                continue
            seen.add(gid)
            temporal = self._temporal.get(gid)
            if temporal is None:
                item = cat.get(gid)
                temporal = self._temporal[gid] = item.expr is not None and reads_mz_now(item.expr)
            if temporal:
                return True
            stack.extend(cat.get(gid).depends_on)
        return False

    def end_transaction(self, session) -> None:
        """The session's transaction ends (COMMIT, ROLLBACK, close): its holds go."""
        txn, session.txn = session.txn, None
        if txn is not None and txn.holds is not None:
            holds, txn.holds = txn.holds, None
            self.release(holds)

    def hold(self, ids, t: int):
        """Read holds on every id at ``t``: storage holds and controller holds, all or
        nothing; ``SinceError`` when some since has passed ``t``."""
        db = self.db
        storage_ids = [i for i in ids if i in db.storage.collections]
        compute_ids = [i for i in ids if i not in db.storage.collections]
        sh = db.storage_holds.acquire(db.storage.collections, storage_ids, t)
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
            return self.read_fast(session, peek, self.reads_the_clock(expr, {peek.index_id}), as_of, at_least,
                                  release_lock)
        ids = self.input_ids(peek.expr)
        ts, holds = self.choose_and_hold(session, ids, as_of, at_least, self.reads_the_clock(expr, ids))
        try:
            resp = self._peek_dataflow(session, peek, ts, release_lock)
        finally:
            self.release(holds)
        return expand(self.rows_of(resp, session)), ts

    def read_fast(self, session, peek: FastPathPeek, clock: bool, as_of=None, at_least=False,
                  release_lock=False) -> tuple[list[tuple], int]:
        """``read`` of a fast-path peek (planned by ``read``, or primed for a prepared point
        read); ``clock``: the read depends on the time itself (``reads_the_clock``)."""
        db = self.db
        ts, holds = self.choose_and_hold(session, (peek.index_id,), as_of, at_least, clock)
        try:
            db.note_peek_target(peek.index_id)
            with (db.unlocked() if release_lock else _NoLock):
                resp = db.controller.peek(peek.index_id, peek.literal_constraints, ts, peek.finishing,
                                          peek.mfp, timeout=self._timeout(session),
                                          should_cancel=lambda: session.cancel_requested)
        finally:
            self.release(holds)
        return expand(self.rows_of(resp, session)), ts

    def _timeout(self, session) -> float | None:
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
