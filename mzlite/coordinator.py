"""The coordinator: one ``Database``, its catalog, storage, replica and sessions.

Owns statement execution: parse, plan, then apply the plan to the catalog, table
storage and the compute controller.  Invariants: statements run one at a time
(``self.lock``; a read waiting for its peek does not hold it past the peek's
submission... it does hold it: mzlite serialises statements, as an embedded database
may); a failed statement changes nothing; the catalog, storage and controller agree on
which collections exist; ids are never reused (``u`` for user objects, ``t`` for
transient ones).  Deliberately not here: reads (``mzlite.reads``), writes
(``mzlite.writes``), SHOW/EXPLAIN rendering (``mzlite.show``), or anything below the
protocol.

Over 600 lines: the statement entry points, their locking and the fast paths share the
``Database`` state; statement kinds live in ``ddl.py``, ``reads.py``, ``writes.py``, ``show.py``.
"""
from __future__ import annotations

import collections
import contextlib
import itertools
from operator import itemgetter
import threading
import time
from typing import Any, Optional

from compute.replica.client import ReplicaClient
from mzlite.controller import ComputeController
from mzlite.cursor import Result
from mzlite.oracle import TICK_MS, TimestampOracle
from mzlite.reads import Reader
from mzlite.session import Session, SystemParameters, Transaction
from mzlite.writes import Writer
from planner.catalog import Catalog, CatalogItem, ColumnDef
from planner.peek import AvailableIndex
from repr.errors import EvalError
from repr.ids import GlobalId
from sql import errors as E
from storage.tables import TableStorage

TICK_SECONDS = TICK_MS / 1000 / 4  # reads use ticks once settled (TICK_MS / 2), and rarely catch up themselves
#: while a storage fold is in progress the ticker steps it this often (each step about
#: 10 ms of the GIL: ``storage.persist.FOLD_STEP_UPDATES``), between its ticks
FOLD_STEP_SECONDS = 0.025
#: how often a statement waiting for another connection's statement checks for an interrupt
LOCK_POLL_SECONDS = 0.05


class StorageHolds:
    """Read holds on storage collections (tables, MV outputs): compaction never passes one."""

    def __init__(self):
        self._holds: dict[GlobalId, dict[int, int]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def acquire(self, ids, t: int):
        out = []
        with self._lock:
            for gid in ids:
                h = next(self._ids)
                self._holds.setdefault(gid, {})[h] = t
                out.append((gid, h))
        return out

    def release(self, holds) -> None:
        with self._lock:
            for gid, h in holds:
                self._holds.get(gid, {}).pop(h, None)

    def min_hold(self, gid) -> Optional[int]:
        with self._lock:
            hs = self._holds.get(gid)
            return min(hs.values()) if hs else None


class _Unlocked:
    """Context manager: fully release an RLock held by this thread, then restore it."""

    def __init__(self, lock):
        self.lock = lock
        self.state = None

    def __enter__(self):
        try:
            self.state = self.lock._release_save()
        except RuntimeError:  # not held by this thread: nothing to release
            self.state = None
        return self

    def __exit__(self, *exc):
        if self.state is not None:
            self.lock._acquire_restore(self.state)
        return False


class LoweringCatalog:
    """The catalog as ``planner.lower`` and ``planner.peek`` see it."""

    def __init__(self, db: "Database"):
        self.db = db

    def is_storage_collection(self, gid: GlobalId) -> bool:
        return gid in self.db.storage.collections

    def indexes_on(self, gid: GlobalId) -> list[AvailableIndex]:
        db = self.db
        out = []
        for ix in db.catalog.indexes_on(gid) if gid in db.catalog else ():
            if ix.id in db.controller.collections:
                out.append(AvailableIndex(ix.id, tuple(ix.key), db.catalog.get(gid).arity(), gid))
        return out

    def view_expr(self, gid: GlobalId):
        if gid in self.db.catalog:
            item = self.db.catalog.get(gid)
            if item.kind == "view":
                return item.expr
        return None

    def available_indexes(self) -> dict:
        db = self.db
        out: dict = {}
        for ix in db.catalog.items("index"):
            if ix.id in db.controller.collections and ix.on_id in db.catalog:
                out.setdefault(ix.on_id, []).append(
                    AvailableIndex(ix.id, tuple(ix.key), db.catalog.get(ix.on_id).arity(), ix.on_id))
        return out


class Database:
    def __init__(self, path: Optional[str] = None, *, system_parameters=None, clock=None):
        if path is not None:
            raise E.NotSupportedError("durable data directories are not supported yet; use connect() for an "
                                      "in-memory database")
        self.system = SystemParameters(system_parameters)
        self.oracle = TimestampOracle(clock)
        # the replica's wake hook (per thread, not per replica: it outlives a restart)
        self.storage = TableStorage(self.oracle, on_commit=ReplicaClient.on_commit)
        self.storage_holds = StorageHolds()
        self.catalog = Catalog()
        self.lowering = LoweringCatalog(self)
        self.lock = threading.RLock()
        self._user_ids = itertools.count(1)
        self._transient_ids = itertools.count(1)
        self._conn_ids = itertools.count(1)
        # the replica, and the scheduling baseline it requests while the database is open
        # (compute.replica.scheduling)
        self.replica = ReplicaClient.start(self.storage.collections,
                                           interactive=bool(self.system["enable_compute_interactive_runtime"]))
        self.controller = ComputeController(self.replica, self.system["compaction_window_ms"])
        self.reader = Reader(self)
        self.writer = Writer(self)
        self.sessions: dict[int, Session] = {}
        self._parse_cache: dict = {}
        #: (statement text, catalog_version) -> plan, for parameterless SELECTs
        self._plan_cache: dict = {}
        self.catalog_version = 0
        #: id(plan) -> (plan, optimized expression)
        self._optimized: dict = {}
        from mzlite.introspection import Introspection
        self.introspection = Introspection(self)
        self._closed = False
        self._sessions_lock = threading.Lock()
        self._ticker = threading.Thread(target=self._tick_loop, name="mzlite-tick", daemon=True)
        self._tick_event = threading.Event()
        self._ticker.start()

    # -------------------------------------------------------------- sessions
    def connect(self):
        """A new connection (session) on this database; ``InterfaceError`` once it is closed."""
        from mzlite.connection import Connection
        with self._sessions_lock:
            if self._closed:
                raise E.InterfaceError("the database is closed: its last connection was closed")
            session = Session(next(self._conn_ids), self.system)
            self.sessions[session.conn_id] = session
        return Connection(self, session)

    def _session_closed(self, session) -> None:
        from mzlite.subscribe import close_session
        close_session(self, session)
        with self._sessions_lock:
            self.sessions.pop(session.conn_id, None)
            last = not self.sessions
        if last:
            self.close()

    def close(self) -> None:
        with self._sessions_lock:
            if self._closed:
                return
            self._closed = True
        self._tick_event.set()
        from mzlite.subscribe import end_all
        end_all(self, E.InterfaceError("subscribe has been terminated because the database was closed"))
        self.controller.shutdown()
        self.replica.shutdown()

    def unlocked(self):
        """Release the statement lock (however deeply held) for the duration of a wait, so a
        read waiting for its peek does not block other sessions; restored afterwards."""
        return _Unlocked(self.lock)

    def allocate_user(self) -> GlobalId:
        return GlobalId("u", next(self._user_ids))

    def allocate_transient(self) -> GlobalId:
        return GlobalId("t", next(self._transient_ids))

    def note_peek_target(self, index_id) -> None:
        pass

    # -------------------------------------------------------------- time passes
    def _tick_loop(self) -> None:
        next_tick = time.monotonic() + TICK_SECONDS
        while True:
            folding = self.storage.folding()
            wait = FOLD_STEP_SECONDS if folding else TICK_SECONDS
            if self._tick_event.wait(max(0.0, min(wait, next_tick - time.monotonic()))):
                return
            try:
                if time.monotonic() >= next_tick:
                    next_tick = time.monotonic() + TICK_SECONDS
                    self.tick()
                elif folding:
                    self._fold_steps()
            except Exception:  # the ticker must never die; the next tick retries
                pass

    def _fold_steps(self) -> None:
        """One step of every storage fold in progress (``StorageCollection.fold_step``),
        unless a runtime is in a bulk busy period (see ``tick``)."""
        if not self.replica.busy:
            self.storage.fold_steps()

    def tick(self) -> None:
        """Advance table uppers to now and compact storage behind the compaction window."""
        t = self.oracle.tick()
        self.storage.advance_tables(t + 1)
        window = self.system["compaction_window_ms"]
        # Folding a table's log into its base copies the base (a million-row table: 0.2 s
        # of the GIL); while a runtime is in a bulk busy period (a hydration) that waits for
        # a later tick, off the critical path of the work a session is waiting for (and of
        # its peak memory).  Since advances regardless.
        fold = not self.replica.busy
        for gid, coll in list(self.storage.collections.items()):
            if coll.upper is None or coll.since is None:
                continue
            target = coll.upper - 1 - window
            h = self.storage_holds.min_hold(gid)
            if h is not None:
                target = min(target, h)
            if target > coll.since:
                coll.compact(target, fold=fold)

    # -------------------------------------------------------------- statements
    def execute_sql(self, session: Session, sql: str, params) -> Result:
        return self._assisting_writes(lambda: self._execute_sql(session, sql, params))

    def _assisting_writes(self, run):
        """``run()``; if it committed a write, the session then helps propagate it
        (``ComputeController.assist_after_write``), outside the statement lock."""
        commits = self.storage.commits
        with self.replica.deferred_wakes():  # the runtimes' threads stay parked while this thread assists
            try:
                return run()
            finally:
                if self.storage.commits != commits:
                    self.controller.assist_after_write()

    def _execute_sql(self, session: Session, sql: str, params) -> Result:
        from sql.parse import parse_statements
        if not isinstance(sql, str):
            raise E.ProgrammingError("the query must be a string")
        # PostgreSQL text parses without the catalog: do it before taking the statement lock,
        # so one session's parse (a DDL's takes milliseconds) does not hold up another's read.
        # A failure is raised under the lock, as before; other dialects read the catalog.
        parsed = None
        if session.vars["sql_dialect"] == "postgres":
            try:
                parsed = self._parse(sql, session)
            except Exception:
                parsed = None
        with self._statement_lock(session):
            stmts = parsed if parsed is not None else self._guard(session, lambda: self._parse(sql, session))
            if params:
                self._guard(session, lambda: _check_parameter_count(stmts, len(params)))
            result = Result("EMPTY QUERY", None)
            if params and len(stmts) == 1 and stmts[0].kind in ("insert", "update", "delete"):
                one = [tuple(params)]
                bulk = self._bulk_insert if stmts[0].kind == "insert" else self._bulk_modify
                fast = self._guard(session, lambda: bulk(session, stmts[0], one), stmts[0])
                if fast is not None:
                    return fast
            for stmt in stmts:
                result = self._guard(session, lambda: self._execute_statement(session, stmt, params), stmt)
            return result

    def execute_many(self, session: Session, sql: str, seq_of_params) -> Result:
        return self._assisting_writes(lambda: self._execute_many(session, sql, seq_of_params))

    def _execute_many(self, session: Session, sql: str, seq_of_params) -> Result:
        from planner import plan_statement
        from planner.plans import InsertPlan
        from sql.parse import parse_statements
        with self._statement_lock(session):
            stmts = self._guard(session, lambda: self._parse(sql, session))
            if len(stmts) != 1:
                raise E.ProgrammingError("executemany takes exactly one statement")
            stmt = stmts[0]
            param_sets = seq_of_params if type(seq_of_params) is list and set(map(type, seq_of_params)) == {tuple} \
                else [tuple(p) for p in seq_of_params]
            for n in sorted(set(map(len, param_sets))):  # one check per distinct width
                self._guard(session, lambda: _check_parameter_count(stmts, n))
            if not param_sets:
                return Result("INSERT 0 0" if stmt.kind == "insert" else "OK", None, rowcount=0)
            fast = self._guard(session, lambda: self._bulk_insert(session, stmt, param_sets), stmt)
            if fast is not None:
                return fast
            fast = self._guard(session, lambda: self._bulk_modify(session, stmt, param_sets), stmt)
            if fast is not None:
                return fast
            plans = self._guard(session, lambda: [plan_statement(stmt, self.catalog, p) for p in param_sets], stmt)
            if all(isinstance(p, InsertPlan) for p in plans):
                n = self._guard(session, lambda: self.writer.insert_many(session, plans), stmt)
                return Result(f"INSERT 0 {n}", None, rowcount=n)
            from planner.plans import DeletePlan, UpdatePlan
            if all(isinstance(p, (UpdatePlan, DeletePlan)) for p in plans):
                n = self._guard(session, lambda: self.writer.modify_many(session, plans), stmt)
                if n is not None:
                    tag = "UPDATE" if isinstance(plans[0], UpdatePlan) else "DELETE"
                    return Result(f"{tag} {n}", None, rowcount=n)
            total = 0
            result = Result("OK", None)
            for p in plans:
                self._guard(session, lambda: self._check_canceled(session), stmt)
                result = self._guard(session, lambda: self._execute_plan(session, p, stmt), stmt)
                total += max(result.rowcount, 0)
            result.rowcount = total
            return result

    def _bulk_insert(self, session, stmt, param_sets) -> Optional[Result]:
        """The fast path for many parameter sets of a plain parameterised INSERT (see
        ``mzlite.bulk``); ``None`` when the general path must run."""
        from mzlite.bulk import plan_bulk_insert
        if stmt.kind != "insert":
            return None
        txn = session.txn
        if txn is not None and txn.failed:
            return None
        shape = plan_bulk_insert(self.catalog, stmt)
        if shape is None:
            return None
        item, build = shape
        rows = build(param_sets)
        if rows is None:
            return None
        not_null = [i for i, c in enumerate(item.columns) if not c.nullable]
        for i in not_null:
            if None in map(itemgetter(i), rows):  # one C-level pass a column
                raise E.error_for(E.NOT_NULL_VIOLATION,
                                  f'null value in column "{item.columns[i].name}" of relation "{item.name}" '
                                  f'violates not-null constraint')
        # each row once with its count: distinct rows (the common case) in one C-level
        # pass, no (row, 1) pair per row; storage keeps the dict as the write's log entry
        counts = dict.fromkeys(rows, 1)
        if len(counts) != len(rows):
            counts = dict(collections.Counter(rows))
        self.writer._apply(session, {item.id: counts}, consolidated=True)
        # No gc.freeze() after a bulk load: frozen objects leave the collector's long-lived
        # count near zero, so every tenth gen-1 collection became a full one, each walking
        # the structures the next index build was filling (30 full collections, 1.6 s of a
        # 1M-row index build, against 9 without the freeze).
        return Result(f"INSERT 0 {len(rows)}", None, rowcount=len(rows))

    @contextlib.contextmanager
    def _statement_lock(self, session):
        """Hold ``self.lock`` for one API call (``execute_sql``/``execute_many``).  The call
        first clears the session's cancel flag, so an interrupt cancels the call running when
        it arrives, never a later one; then waiting for the lock is itself interruptible (57014)
        while another connection's statement runs.  Sabotaged by resetting the flag per
        statement instead: an interrupt between a script's statements was lost."""
        session.cancel_requested = False
        while not self.lock.acquire(timeout=LOCK_POLL_SECONDS):
            self._check_canceled(session)
        try:
            yield
        finally:
            self.lock.release()

    @staticmethod
    def _check_canceled(session) -> None:
        """Raise 57014 when the session's running call was interrupted."""
        if session.cancel_requested:
            raise E.QueryCanceled("canceling statement due to user request", sqlstate=E.QUERY_CANCELED)

    def _bulk_modify(self, session, stmt, param_sets) -> Optional[Result]:
        """executemany of an UPDATE/DELETE keyed by an index: one read, one write."""
        from mzlite.bulk import plan_bulk_modify
        txn = session.txn
        if txn is not None and (txn.explicit or txn.failed):
            return None
        out = plan_bulk_modify(self, stmt, param_sets)
        if out is None:
            return None
        plan, updates, matched = out
        from planner.plans import UpdatePlan
        if isinstance(plan, UpdatePlan):
            self.writer._check_not_null(plan, [r for r, d in updates if d > 0])
        self.writer._apply(session, {plan.table_id: updates}, consolidated=True)
        tag = "UPDATE" if isinstance(plan, UpdatePlan) else "DELETE"
        return Result(f"{tag} {matched}", None, rowcount=matched)

    def _parse(self, sql: str, session=None):
        from sql.parse import parse_statements
        dialect = session.vars["sql_dialect"] if session is not None else "postgres"
        # a translation may read the catalog (``* EXCLUDE``): it is valid for one catalog version
        key = sql if dialect == "postgres" else (dialect, sql, self.catalog_version)
        cached = self._parse_cache.get(key)
        if cached is None:
            cached = parse_statements(sql) if dialect == "postgres" else self._parse_dialect(sql, dialect)
            if len(self._parse_cache) > 512:
                self._parse_cache.clear()
            self._parse_cache[key] = cached
        return cached

    # ---- other dialects (mzlite.dialect) enter here, the one place text is parsed
    def _parse_dialect(self, sql: str, dialect: str):
        from mzlite.dialect import parse_in_dialect
        return parse_in_dialect(self.catalog, sql, dialect)
    # ---- end

    def _guard(self, session, fn, stmt=None):
        """Run ``fn`` converting every failure into an ``mzlite.Error`` (an escaping Python
        exception is a bug: it becomes an InternalError naming itself)."""
        try:
            return fn()
        except E.Error as e:
            # positions are already into the whole text (``Statement.position``)
            self._fail_transaction(session, stmt)
            raise
        except EvalError as e:
            self._fail_transaction(session, stmt)
            raise E.error_for(e.sqlstate, e.message, detail=getattr(e, "detail", None)) from None
        except RecursionError:
            self._fail_transaction(session, stmt)
            raise E.error_for("54001", "statement too complex (stack depth limit exceeded)") from None
        except Exception as e:
            self._fail_transaction(session, stmt)
            raise E.InternalError(f"internal error: {type(e).__name__}: {e}") from e

    def _fail_transaction(self, session, stmt) -> None:
        txn = session.txn
        if txn is not None and txn.explicit and (stmt is None or stmt.kind not in ("commit", "rollback")):
            txn.failed = True

    def _execute_statement(self, session: Session, stmt, params) -> Result:
        from planner import plan_statement
        self._check_canceled(session)
        txn = session.txn
        if txn is not None and txn.failed and stmt.kind not in ("commit", "rollback"):
            raise E.error_for(E.IN_FAILED_SQL_TRANSACTION,
                              "current transaction is aborted, commands ignored until end of transaction block")
        if not params and stmt.kind == "select":
            key = (stmt.text, self.catalog_version)
            plan = self._plan_cache.get(key)
            if plan is None:
                plan = plan_statement(stmt, self.catalog, ())
                if len(self._plan_cache) > 256:
                    self._plan_cache.clear()
                self._plan_cache[key] = plan
        else:
            plan = plan_statement(stmt, self.catalog, tuple(params) if params is not None else ())
        return self._execute_plan(session, plan, stmt)

    def _execute_plan(self, session: Session, plan, stmt) -> Result:
        from mzlite import ddl, show
        name = type(plan).__name__
        handler = _HANDLERS.get(name)
        if handler is None:
            raise E.NotSupportedError(f"{name} is not supported yet")
        if name.startswith(("Create", "Drop", "AlterSystem")):
            # plans cached against the old catalog (and their index choices) are stale
            self.catalog_version += 1
            try:
                return handler(self, session, plan, stmt)
            finally:
                self.catalog_version += 1
        return handler(self, session, plan, stmt)


def _check_parameter_count(stmts, given: int) -> None:
    """More parameters than any statement's placeholders use is a ``ProgrammingError`` (as in
    sqlite3 and psycopg: a silently ignored value is a bug in the caller).  Fewer is reported,
    with a position, when the missing ``$n`` is bound."""
    used = max((s.param_count for s in stmts), default=0)
    if given > used:
        raise E.ProgrammingError(f"the statement uses {used} parameter{'s' if used != 1 else ''} but {given} "
                                 f"were given", sqlstate="08P01")


def _select(db: Database, session, plan, stmt) -> Result:
    from mzlite.show import literal_timestamp
    from planner.optimize import optimize
    txn = session.txn
    if txn is not None and txn.explicit:
        if txn.kind == "write":
            raise E.error_for(E.INVALID_TRANSACTION_STATE,
                              "transaction in write-only mode: reads cannot follow writes in a transaction")
        txn.kind = "read"
    as_of = literal_timestamp(plan.as_of) if plan.as_of is not None else None
    system = [gid for gid in plan.depends_on if gid.is_system()]
    if system:
        db.introspection.refresh(system)
    expr = db._optimized.get(id(plan))
    if expr is None or expr[0] is not plan:
        expr = (plan, optimize(plan.expr))
        if len(db._optimized) > 256:
            db._optimized.clear()
        db._optimized[id(plan)] = expr
    expr = expr[1]
    rows, _ = db.reader.read(session, expr, plan.finishing, as_of=as_of, at_least=plan.as_of_at_least,
                             release_lock=True)
    from sql.types import display_name
    result = Result(f"SELECT {len(rows)}", [(n, display_name(t)) for n, t in plan.columns], rows, len(rows))
    from planner.output_typmods import output_typmods  # cursor.description's sizes, computed when read
    result.typmods = lambda: output_typmods(plan.expr, plan.finishing.project, db.catalog)
    return result


def _insert(db, session, plan, stmt) -> Result:
    n, rows = db.writer.insert(session, plan)
    if plan.returning:
        from expr.compile import compile_scalar
        from sql.types import display_name
        fns = [compile_scalar(e) for e in plan.returning]
        out = [tuple(f(r) for f in fns) for r in rows]
        return Result(f"INSERT 0 {n}", [(c, display_name(t)) for c, t in plan.returning_columns], out, n)
    return Result(f"INSERT 0 {n}", None, rowcount=n)


def _no_read_then_write_in_transaction(session, what: str) -> None:
    """Materialize's write transactions are insert-only: an UPDATE or DELETE reads the table
    and would apply its retractions at COMMIT against rows another connection may have changed
    meanwhile (a lost update that corrupts the table), so it is refused, 25001."""
    if session.in_transaction():
        raise E.error_for(E.ACTIVE_SQL_TRANSACTION, f"{what} cannot be run inside a transaction block")


def _update(db, session, plan, stmt) -> Result:
    _no_read_then_write_in_transaction(session, "UPDATE")
    n = db.writer.update(session, plan)
    return Result(f"UPDATE {n}", None, rowcount=n)


def _delete(db, session, plan, stmt) -> Result:
    _no_read_then_write_in_transaction(session, "DELETE")
    n = db.writer.delete(session, plan)
    return Result(f"DELETE {n}", None, rowcount=n)


def _transaction(db, session, plan, stmt) -> Result:
    action = plan.action
    if action == "begin":
        if session.in_transaction():
            # PostgreSQL warns and carries on
            return Result("BEGIN", None)
        session.txn = Transaction(explicit=True)
        return Result("BEGIN", None)
    from mzlite.subscribe import close_portals
    close_portals(session)  # COMMIT and ROLLBACK close the transaction's cursors
    if action == "commit":
        failed = session.txn is not None and session.txn.failed
        db.writer.commit(session)
        return Result("ROLLBACK" if failed else "COMMIT", None)
    session.txn = None
    return Result("ROLLBACK", None)


def _set_var(db, session, plan, stmt) -> Result:
    session.set_var(plan.name, plan.value)
    return Result("SET", None)


def _reset_var(db, session, plan, stmt) -> Result:
    if plan.name.lower() == "all":
        for n in list(session.vars):
            session.set_var(n, None)
    else:
        session.set_var(plan.name, None)
    return Result("RESET", None)


def _show_var(db, session, plan, stmt) -> Result:
    if plan.name.lower() == "all":
        rows = session.all_vars()
        return Result(f"SELECT {len(rows)}", [("name", "text"), ("setting", "text"), ("description", "text")],
                      rows, len(rows))
    value = session.show_var(plan.name)
    return Result("SELECT 1", [(plan.name.lower(), "text")], [(value,)], 1)


def _alter_system(db, session, plan, stmt) -> Result:
    from mzlite import ddl
    ddl.alter_system_set(db, plan.name, plan.value)
    return Result("ALTER SYSTEM", None)


def _handlers():
    from mzlite import ddl, show, subscribe, temporal
    return {
        "SubscribePlan": subscribe.subscribe,
        "DeclarePlan": subscribe.declare,
        "FetchPlan": subscribe.fetch,
        "ClosePlan": subscribe.close_cursor,
        "SelectPlan": _select,
        "InsertPlan": _insert,
        "UpdatePlan": _update,
        "DeletePlan": _delete,
        "TransactionPlan": _transaction,
        "SetVariablePlan": _set_var,
        "ResetVariablePlan": _reset_var,
        "ShowVariablePlan": _show_var,
        "AlterSystemSetPlan": _alter_system,
        "CreateTablePlan": ddl.create_table,
        "CreateViewPlan": subscribe.ending_dropped(temporal.checked(ddl.create_view)),
        "CreateIndexPlan": temporal.checked(ddl.create_index),
        "DropPlan": subscribe.ending_dropped(ddl.drop),
        "ShowObjectsPlan": show.show_objects,
        "ShowCreatePlan": show.show_create,
        "ExplainPlan": show.explain,
    }


class _LazyHandlers(dict):
    def get(self, key, default=None):
        if not self:
            self.update(_handlers())
        return super().get(key, default)


_HANDLERS = _LazyHandlers()


def _restart_replica(self: Database) -> None:
    """Replace the replica (e.g. after ``enable_compute_interactive_runtime`` changed) and
    rehydrate every index and materialized view on the new one, as a restarted replica
    would be rehydrated by its controller.  Materialized views' outputs are rebuilt from
    scratch at a fresh ``as_of``: reads of them wait until the new dataflow catches up."""
    from expr.relation import Get
    from planner.lower import build_index_dataflow, build_materialized_view_dataflow
    from planner.optimize import optimize
    self.controller.shutdown()
    old = self.replica
    # the new replica first: the scheduling baseline is never released in between
    self.replica = ReplicaClient.start(self.storage.collections,
                                       interactive=bool(self.system["enable_compute_interactive_runtime"]))
    old.shutdown()
    self.controller = ComputeController(self.replica, self.system["compaction_window_ms"])
    for item in self.catalog.items():
        if item.kind == "materialized_view":
            expr = optimize(item.expr)
            self.storage.drop(item.id)
            t = self.oracle.read_ts()
            self.storage.advance_tables(t + 1)
            desc = build_materialized_view_dataflow(expr, id=item.id, as_of=t, catalog=self.lowering,
                                                    optimize_plan=False, debug_name=f"materialized view {item.name}")
            as_of = max([t] + [s for s in (self.reader.since_of(i) for i in desc.import_ids()) if s is not None])
            if as_of != t:
                desc = build_materialized_view_dataflow(expr, id=item.id, as_of=as_of, catalog=self.lowering,
                                                        optimize_plan=False,
                                                        debug_name=f"materialized view {item.name}")
            self.storage.create_output(item.id, item.arity(), as_of)
            self.controller.create_dataflow(desc)
        elif item.kind == "index":
            on = self.catalog.get(item.on_id)
            t = self.oracle.read_ts()
            self.storage.advance_tables(t + 1)
            desc = build_index_dataflow(item.on_id, index_id=item.id, key=tuple(item.key), arity=on.arity(),
                                        as_of=t, catalog=self.lowering, debug_name=f"index {item.name}")
            as_of = max([t] + [s for s in (self.reader.since_of(i) for i in desc.import_ids()) if s is not None])
            if as_of != t:
                desc = build_index_dataflow(item.on_id, index_id=item.id, key=tuple(item.key), arity=on.arity(),
                                            as_of=as_of, catalog=self.lowering, debug_name=f"index {item.name}")
            self.controller.create_dataflow(desc)
    from mzlite.subscribe import resume_all
    resume_all(self)  # running SUBSCRIBEs continue on the new replica from their frontiers


Database.restart_replica = _restart_replica
