"""The coordinator: one ``Database``, its catalog, storage, replica and sessions, and the
statement entry points.

Owns the ``Database`` state and the path of every API call (``execute_sql``,
``execute_many``, ``subscribe``) from text to the sequencer: parsing (cached), planning
(``Database.plan``: SELECT plans and INSERTs' parameterised plans cached in ``PlanCache``),
the statement lock, cancelation, and turning every failure into an ``mzlite.Error``
(``guard``); also the ticker that moves time, and the registry of named in-memory
databases (``open_database``).  Invariants: statements run one at a time (``self.lock``:
mzlite serialises statements, as an embedded database may; a read waiting for its peek
releases it, ``unlocked``, its inputs held); a failed statement changes nothing; the catalog, storage and controller agree on which collections exist;
ids are never reused (``u`` for user objects, ``t`` for transient ones).  Deliberately not
here: applying plans (``mzlite.sequencer`` and its handlers), reads (``mzlite.reads``),
writes (``mzlite.writes``, ``mzlite.bulk``), anything below the protocol.

Over 600 lines: the database's life (open, restore from a data directory, close), its
statement entry points and its named-database registry share ``Database``'s state and its
locks; the parts that do not (statement handlers, reads, writes, COPY, subscriptions, the
catalog store) already live in their own modules.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import re
import threading
import time
from typing import Any, Callable, Mapping, Optional

from compute.replica.client import ReplicaClient
from mzlite import bulk, catalog_store, generic_plans, sequencer, subscribe
from mzlite.connection import Connection
from mzlite.controller import ComputeController
from mzlite.cursor import Result
from mzlite.ddl import create_index_dataflow, create_materialized_view_dataflow
from mzlite.dialect import parse_in_dialect
from mzlite.holds import StorageHolds
from mzlite.introspection import Introspection
from mzlite.oracle import TICK_MS, TimestampOracle
from mzlite.reads import Reader
from mzlite.show import show_rows
from mzlite.session import Session, SystemParameters
from mzlite.subscribe import (Subscription, Subscriptions, close_session, end_all, resume_all,
                              start as start_subscription)
from mzlite.writes import Writer
from planner import plan_statement
from planner.catalog import Catalog
from planner.peek import AvailableIndex
from repr.errors import EvalError
from repr.ids import GlobalId
from sql import errors as E
from sql.errors import InterfaceError
from sql.parse import parse_statements
from storage.tables import TableStorage

TICK_SECONDS = TICK_MS / 1000 / 4  # reads use ticks once settled (TICK_MS / 2), and rarely catch up themselves
#: while a storage fold is in progress the ticker steps it this often (each step about
#: 10 ms of the GIL: ``storage.persist.FOLD_STEP_UPDATES``), between its ticks
FOLD_STEP_SECONDS = 0.025
#: how often a statement waiting for another connection's statement checks for an interrupt
LOCK_POLL_SECONDS = 0.05


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


class PlanCache:
    """Plans, and what the adapter prepared from them, by a key that names the statement
    text and the catalog version (so DDL makes every entry unreachable) and, where the plan
    depends on them, the parameters' types: SELECT plans without parameters, INSERTs'
    ``PreparedInsert`` (``mzlite.bulk``), UPDATE/DELETE templates (``mzlite.bulk_modify``).
    Bounded: emptied when full."""

    def __init__(self, limit: int = 512):
        self._entries: dict = {}
        self._limit = limit

    def get(self, key, build: Callable[[], Any]):
        """The entry for ``key``, built (and kept) by ``build()`` when missing."""
        value = self._entries.get(key)
        if value is None:
            value = build()
            if len(self._entries) >= self._limit:
                self._entries.clear()
            self._entries[key] = value
        return value


class Database:
    """One database: its catalog, storage, replica, sessions and statement entry points."""

    def __init__(self, path: Optional[str] = None, *, system_parameters=None, clock=None,
                 durability: str = "full"):
        #: the data directory (None: in memory); see ``mzlite.catalog_store``
        self.path = path
        store = state = None
        if path is not None:
            store, state = catalog_store.open_store(path, durability)
        try:
            self._init(store, state, system_parameters, clock)
        except BaseException:
            if store is not None:
                self._shutdown_after_failed_open(store)
            raise

    def _init(self, store, state, system_parameters, clock) -> None:
        self.system = SystemParameters(system_parameters)
        #: ALTER SYSTEM values in force (``name -> text``), persisted in a data directory
        self.altered_system: dict = {}
        if state is not None:
            for name, value in catalog_store.system_overrides(state).items():
                self.system.set(name, value)  # ALTER SYSTEM outranks the defaults connect() was given
        self.oracle = TimestampOracle(clock) if store is None else TimestampOracle(
            clock, floor=catalog_store.oracle_floor(state) + 1, reserve=store.reserve_timestamps)
        # the replica's wake hook (per thread, not per replica: it outlives a restart)
        self.storage = TableStorage(self.oracle, on_commit=ReplicaClient.on_commit, store=store,
                                    restored=state.shards if state is not None else None,
                                    restored_meta=state.meta if state is not None else None)
        self.storage_holds = StorageHolds()
        self.catalog = Catalog()
        #: item id -> its RETAIN HISTORY window in ms (``mzlite.namespaces.alter_retain_history``):
        #: its storage collection and its compute collection compact behind it, not the default
        self.retain_history_ms: dict = {}
        self.catalog.system_vars = self.system.values  # the planner reads the feature flags (ALTER SYSTEM)
        self.catalog.show_rows = lambda plan: show_rows(self, plan)  # (SHOW ...) as a table
        #: secret id -> its value (``mzlite.connections``: kept beside the catalog, never in it)
        self.secrets: dict = {}
        self.lowering = LoweringCatalog(self)
        self.lock = threading.RLock()
        self._user_ids = itertools.count(1)
        self._last_user_id = 0
        #: the id the next ``allocate_user`` returns (replaying a data directory), else None
        self.forced_user_id: Optional[GlobalId] = None
        #: a data directory's catalog is being replayed (``catalog_store.replay``)
        self.replaying = False
        #: why the database must be reopened (a catalog write failed half-way), else None
        self.broken: Optional[str] = None
        self._transient_ids = itertools.count(1)
        self._conn_ids = itertools.count(1)
        # the replica, and the scheduling baseline it requests while the database is open
        # (compute.replica.scheduling)
        self.replica = ReplicaClient.start(self.storage.collections,
                                           interactive=bool(self.system["enable_compute_interactive_runtime"]))
        self.controller = ComputeController(self.replica, self.system["compaction_window_ms"],
                                            windows=self.retain_history_ms)
        self.reader = Reader(self)
        self.writer = Writer(self)
        self.sessions: dict[int, Session] = {}
        self._parse_cache: dict = {}
        #: bumped before and after every plan that changes the catalog (``Plan.changes_catalog``)
        self.catalog_version = 0
        self.plans = PlanCache()
        #: the running SUBSCRIBEs
        self.subscriptions = Subscriptions()
        self.introspection = Introspection(self)
        self._closed = False
        self._sessions_lock = threading.Lock()
        self._ticker = threading.Thread(target=self._tick_loop, name="mzlite-tick", daemon=True)
        self._tick_event = threading.Event()
        if state is not None:
            self.replaying = True
            try:
                with self.lock:
                    catalog_store.replay(self, state)
            finally:
                self.replaying = False
            catalog_store.sync(self)  # shards no item claimed are dropped with their batches
            store.delete_orphan_batches()
        self._ticker.start()

    def _shutdown_after_failed_open(self, store) -> None:
        """Opening a data directory failed: stop whatever started and release the directory."""
        self._closed = True
        for part in ("controller", "replica"):
            obj = getattr(self, part, None)
            if obj is not None:
                try:
                    obj.shutdown()
                except Exception:
                    pass
        store.close()

    def internal_session(self) -> Session:
        """A session for the adapter's own statements (replaying a data directory)."""
        return Session(0, self.system)

    # -------------------------------------------------------------- sessions
    def connect(self):
        """A new connection (session) on this database; ``InterfaceError`` once it is closed."""
        with self._sessions_lock:
            if self._closed:
                raise E.InterfaceError("the database is closed: its last connection was closed")
            session = Session(next(self._conn_ids), self.system)
            self.sessions[session.conn_id] = session
        return Connection(self, session)

    @property
    def closed(self) -> bool:
        """True once the database closed (with its last connection, or ``close()``)."""
        return self._closed

    def session_closed(self, session) -> None:
        """A connection closed ``session``: its cursors and subscriptions end; the database
        closes with its last session."""
        close_session(self, session)
        self.reader.end_transaction(session)
        with self._sessions_lock:
            self.sessions.pop(session.conn_id, None)
            last = not self.sessions
        if last:
            self.close()

    def close(self) -> None:
        """Shut the database down (idempotent): subscriptions end, the replica stops, and a
        named database leaves the registry."""
        with self._sessions_lock:
            if self._closed:
                return
            self._closed = True
        _forget(self)
        self._tick_event.set()
        end_all(self, E.InterfaceError("subscribe has been terminated because the database was closed"))
        self.controller.shutdown()
        self.replica.shutdown()
        if self.storage.store is not None:
            self._ticker.join()
            with self.lock:
                try:
                    self.storage.flush_uppers()
                except Exception:
                    pass  # best effort: an output's upper is corrected at the next open
                self.storage.store.close()

    def unlocked(self):
        """Release the statement lock (however deeply held) for the duration of a wait, so a
        read waiting for its peek does not block other sessions; restored afterwards."""
        return _Unlocked(self.lock)

    def allocate_user(self) -> GlobalId:
        gid = self.forced_user_id
        if gid is not None:  # a replayed item gets its persisted id
            self.forced_user_id = None
            return gid
        n = next(self._user_ids)
        self._last_user_id = n
        return GlobalId("u", n)

    def resume_user_ids(self, n: int) -> None:
        """User ids continue from ``n`` (a reopened data directory)."""
        self._user_ids = itertools.count(n)
        self._last_user_id = n - 1

    def peek_next_user_id(self) -> int:
        """The number the next user id gets (persisted: ids are never reused)."""
        return self._last_user_id + 1

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
        """Ingest the sources' due ticks, advance table uppers to now and compact storage
        behind the compaction window."""
        self.storage.sources.run(self.oracle.clock())
        t = self.oracle.tick()
        self.storage.advance_tables(t + 1)
        self.storage.flush_uppers()
        window = self.system["compaction_window_ms"]
        # Folding a table's log into its base copies the base (O(table) of the GIL); while a
        # runtime is in a bulk busy period (a hydration) that waits for a later tick, off the
        # critical path of the work a session is waiting for (and of its peak memory).  Since
        # advances regardless.
        fold = not self.replica.busy
        for coll in list(self.storage.collections.values()):
            if coll.upper is not None and coll.since is not None:
                w = self.retain_history_ms.get(coll.id, window)
                self.storage_holds.compact(coll, coll.upper - 1 - w, fold=fold)

    # -------------------------------------------------------------- statements
    def execute_sql(self, session: Session, sql: str, params, atomic: bool = True) -> Result:
        """Run ``sql`` (one or more statements) with ``params`` for ``session``; the last result.
        ``atomic``: several statements are one implicit transaction (``execute``); False for
        sqlite3's ``executescript``, where statements before a failing one stay applied."""
        return self._assisting_writes(lambda: self._execute_sql(session, sql, params, atomic))

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

    def run_statement(self, session: Session, fn):
        """``fn()`` as one statement of ``session`` (the statement lock held, failures as
        ``mzlite.Error``, a write propagated afterwards): a COPY's ``finish``."""
        def run():
            with self.statement_lock(session):
                self._check_transaction_not_failed_for(session)
                return self.guard(session, fn)
        return self._assisting_writes(run)

    def _check_transaction_not_failed_for(self, session) -> None:
        txn = session.txn
        if txn is not None and txn.failed:
            raise E.error_for(E.IN_FAILED_SQL_TRANSACTION,
                              "current transaction is aborted, commands ignored until end of transaction block")

    def parse(self, sql: str, session=None) -> list:
        """The statements of ``sql`` in ``session``'s SQL dialect (PostgreSQL's without one),
        from the parse cache the statement path reads: a caller that splits a text first (the
        wire protocol's simple query) does not make the engine parse it a second time."""
        return self._parse(sql, session)

    def parse_one(self, sql: str):
        """The one statement of ``sql`` (PostgreSQL text; cached)."""
        stmts = self._parse(sql)
        if len(stmts) != 1:
            raise E.ProgrammingError("expected one statement")
        return stmts[0]

    def _execute_sql(self, session: Session, sql: str, params, atomic: bool = True) -> Result:
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
        with self.statement_lock(session):
            stmts = parsed if parsed is not None else self.guard(session, lambda: _paramstyle_hint(
                sql, lambda: self._parse(sql, session)))
            if params:
                self.guard(session, lambda: _check_parameter_count(stmts, len(params)))
            result = Result("EMPTY QUERY", None)
            if params and len(stmts) == 1 and stmts[0].kind in ("update", "delete"):
                fast = self.guard(session, lambda: sequencer.modify_fast(self, session, stmts[0], [tuple(params)]),
                                  stmts[0])
                if fast is not None:
                    return fast
            if len(stmts) == 1:
                return self.guard(session, lambda: self.execute_statement(session, stmts[0], params), stmts[0])
            # Several statements outside a transaction block run as one implicit transaction, as
            # in PostgreSQL: on an error nothing of the string stays applied.  Each write still
            # commits when its statement runs (so a later statement of the string reads it); the
            # string's committed writes are logged (``session.undo``) and undone on an error
            # (``Writer.rollback_implicit``), and the objects it created are dropped
            # (``_drop_created``).  A transaction statement in the string ends the implicit
            # transaction (what ran before it stays).  Departure: a DROP is not undone.
            session.undo = None if session.in_transaction() or not atomic else []
            created_since = self._catalog_ids() if session.undo is not None else None
            try:
                for stmt in stmts:
                    if stmt.kind in ("begin", "commit", "rollback"):
                        session.undo, created_since = None, None
                    result = self.guard(session, lambda: self.execute_statement(session, stmt, params), stmt)
                    if atomic and not session.in_transaction() and stmt.kind in ("commit", "rollback"):
                        session.undo, created_since = [], self._catalog_ids()
            except BaseException:
                if session.undo:
                    self.guard(session, lambda: self.writer.rollback_implicit(session))
                if created_since is not None:
                    self.guard(session, lambda: self._drop_created(session, created_since))
                raise
            finally:
                session.undo = None
            return result

    def _catalog_ids(self) -> frozenset:
        return frozenset(item.id for item in self.catalog.items())

    def _drop_created(self, session, before: frozenset) -> None:
        """Drop what a failed multi-statement string created (newest first: a dependent was
        created after what it depends on), so the string leaves no object behind."""
        from mzlite import ddl
        created = [item.id for item in self.catalog.items() if item.id not in before]
        if not created:
            return
        self.catalog_version += 1
        for gid in sorted(created, reverse=True):
            if gid in self.catalog:
                ddl.drop_one(self, gid)
        self.catalog_version += 1
        subscribe.end_for_dropped(self)

    def execute_many(self, session: Session, sql: str, seq_of_params) -> Result:
        """Run the one statement ``sql`` once per parameter set (``mzlite.sequencer.sequence_many``)."""
        return self._assisting_writes(lambda: self._execute_many(session, sql, seq_of_params))

    def _execute_many(self, session: Session, sql: str, seq_of_params) -> Result:
        with self.statement_lock(session):
            stmts = self.guard(session, lambda: self._parse(sql, session))
            if len(stmts) != 1:
                raise E.ProgrammingError("executemany takes exactly one statement")
            stmt = stmts[0]
            param_sets = seq_of_params if type(seq_of_params) is list and set(map(type, seq_of_params)) == {tuple} \
                else [tuple(p) for p in seq_of_params]
            for n in sorted(set(map(len, param_sets))):  # one check per distinct width
                self.guard(session, lambda: _check_parameter_count(stmts, n))
            if not param_sets:
                return Result("INSERT 0 0" if stmt.kind == "insert" else "OK", None, rowcount=0)
            return self.guard(session, lambda: self._sequence_many(session, stmt, param_sets), stmt)

    def _sequence_many(self, session, stmt, param_sets) -> Result:
        self._check_transaction_not_failed(session, stmt)
        return sequencer.sequence_many(self, session, stmt, param_sets)

    def subscribe(self, session: Session, sql: str, *, max_buffered: Optional[int] = None) -> Subscription:
        """Parse, plan and start the one SUBSCRIBE statement ``sql`` (``Connection.subscribe``)."""
        with self.statement_lock(session):
            stmts = self.guard(session, lambda: self._parse(sql))
            if len(stmts) != 1 or stmts[0].kind != "subscribe":
                raise E.ProgrammingError("subscribe() takes one query or object name")
            stmt = stmts[0]
            plan = self.guard(session, lambda: plan_statement(stmt, self.catalog, ()), stmt)
            return self.guard(session, lambda: start_subscription(self, session, plan, max_buffered=max_buffered),
                              stmt)

    def describe(self, session: Session, sql: str, declared=()):
        """``(parameter types, result columns)`` of the one statement ``sql`` without running
        it (the wire protocol's Describe; ``mzlite.describe``)."""
        from mzlite.describe import describe
        with self.statement_lock(session):
            stmts = self.guard(session, lambda: self._parse(sql, session))
            return describe(self, session, stmts, declared)

    @contextlib.contextmanager
    def statement_lock(self, session):
        """Hold ``self.lock`` for one API call (``execute_sql``/``execute_many``).  The call
        first clears the session's cancel flag, so an interrupt cancels the call running when
        it arrives, never a later one; then waiting for the lock is itself interruptible (57014)
        while another connection's statement runs.  Sabotaged by resetting the flag per
        statement instead: an interrupt between a script's statements was lost."""
        session.cancel_requested = False
        while not self.lock.acquire(timeout=LOCK_POLL_SECONDS):
            self.check_canceled(session)
        try:
            if self.broken is not None:
                raise E.error_for("58030", f"the data directory could not be written ({self.broken}); close and "
                                           f"reopen the database")
            yield
        finally:
            self.lock.release()

    @staticmethod
    def check_canceled(session) -> None:
        """Raise 57014 when the session's running call was interrupted."""
        if session.cancel_requested:
            raise E.QueryCanceled("canceling statement due to user request", sqlstate=E.QUERY_CANCELED)

    def _parse(self, sql: str, session=None):
        dialect = session.vars["sql_dialect"] if session is not None else "postgres"
        # a translation may read the catalog (``* EXCLUDE``): it is valid for one catalog version
        key = sql if dialect == "postgres" else (dialect, sql, self.catalog_version)
        cached = self._parse_cache.get(key)
        if cached is None:
            # other dialects (mzlite.dialect) enter here, the one place text is parsed
            cached = parse_statements(sql) if dialect == "postgres" else parse_in_dialect(self.catalog, sql, dialect)
            if len(self._parse_cache) > 512:
                self._parse_cache.clear()
            self._parse_cache[key] = cached
        return cached

    def guard(self, session, fn, stmt=None):
        """Run ``fn`` converting every failure into an ``mzlite.Error`` (an escaping Python
        exception is a bug: it becomes an InternalError naming itself); a failure fails the
        session's explicit transaction (unless ``stmt`` ends it)."""
        try:
            return fn()
        except E.Error:
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

    @staticmethod
    def _check_transaction_not_failed(session, stmt) -> None:
        txn = session.txn
        if txn is not None and txn.failed and stmt.kind not in ("commit", "rollback"):
            raise E.error_for(E.IN_FAILED_SQL_TRANSACTION,
                              "current transaction is aborted, commands ignored until end of transaction block")

    def execute_statement(self, session: Session, stmt, params) -> Result:
        """Run one parsed statement in ``session`` with ``params`` (a statement of a string,
        or a prepared statement's at EXECUTE)."""
        self.check_canceled(session)
        self._check_transaction_not_failed(session, stmt)
        params = tuple(params) if params is not None else ()
        return sequencer.sequence(self, session, self.plan(stmt, params), stmt, [params])

    def plan(self, stmt, params: tuple):
        """The plan of ``stmt`` with ``params``: a SELECT without parameters from the plan
        cache; an INSERT in its parameterised form where it has one (``mzlite.bulk.plan_for``)."""
        if stmt.kind == "select" and not params:
            return self.plans.get(("select", stmt.text, self.catalog_version),
                                  lambda: plan_statement(stmt, self.catalog, ()))
        if stmt.kind == "select":
            plan = generic_plans.generic_select(self, stmt, params)
            if plan is not None:
                return plan
        if stmt.kind == "insert":
            return bulk.plan_for(self, stmt, params)
        return plan_statement(stmt, self.catalog, params)




#: psycopg's placeholders, ``%s`` and ``%(name)s``
_PSYCOPG_PLACEHOLDER = re.compile(r"%(\([A-Za-z_][A-Za-z0-9_]*\))?s")


def _paramstyle_hint(sql: str, parse):
    """``parse()``; a syntax error in text holding psycopg's ``%s`` / ``%(name)s`` gets a hint
    that mzlite's paramstyle is qmark (a ``%s`` is also PostgreSQL's modulo of a column ``s``,
    so it is never rewritten into a placeholder)."""
    try:
        return parse()
    except E.Error as e:
        if e.sqlstate == E.SYNTAX_ERROR and e.hint is None and _PSYCOPG_PLACEHOLDER.search(sql):
            e.hint = "mzlite.paramstyle is 'qmark': write ? (or $1, $2, ...) placeholders, not psycopg's %s or %(name)s"
        raise


def _check_parameter_count(stmts, given: int) -> None:
    """More parameters than any statement's placeholders use is a ``ProgrammingError`` (as in
    sqlite3 and psycopg: a silently ignored value is a bug in the caller).  Fewer is reported,
    with a position, when the missing ``$n`` is bound."""
    used = max((s.param_count for s in stmts), default=0)
    if given > used:
        raise E.ProgrammingError(f"the statement uses {used} parameter{'s' if used != 1 else ''} but {given} "
                                 f"were given", sqlstate="08P01")


def _restart_replica(self: Database) -> None:
    """Replace the replica (e.g. after ``enable_compute_interactive_runtime`` changed) and
    rehydrate every index and materialized view on the new one, as a restarted replica
    would be rehydrated by its controller.  Materialized views' outputs are rebuilt from
    scratch at a fresh ``as_of``: reads of them wait until the new dataflow catches up."""
    self.controller.shutdown()
    old = self.replica
    # the new replica first: the scheduling baseline is never released in between
    self.replica = ReplicaClient.start(self.storage.collections,
                                       interactive=bool(self.system["enable_compute_interactive_runtime"]))
    old.shutdown()
    self.controller = ComputeController(self.replica, self.system["compaction_window_ms"],
                                        windows=self.retain_history_ms)
    for item in self.catalog.items():
        if item.kind == "materialized_view":
            if self.storage.store is not None:
                self.storage.keep_output(item.id)  # its history is persisted: corrected, not rebuilt
            else:
                self.storage.drop(item.id)
            create_materialized_view_dataflow(self, item.id, item.name, item.expr, item.arity())
        elif item.kind == "index":
            create_index_dataflow(self, item)
    resume_all(self)  # running SUBSCRIBEs continue on the new replica from their frontiers


Database.restart_replica = _restart_replica


# ---------------------------------------------------------------- finding the database

MEMORY = ":memory:"
#: name -> the named in-memory database of that name (``open_database``)
_named: dict = {}
_named_lock = threading.RLock()  # reentrant: a close inside open_database (tests force one) forgets


def open_database(database: Optional[str], *, system_parameters: Optional[Mapping[str, Any]] = None,
                  clock: Optional[Callable[[], int]] = None, durability: Optional[str] = None) -> Connection:
    """A connection to the database ``database`` names: ``None``, ``""`` or ``":memory:"``
    is a new private in-memory database; ``":memory:NAME"`` is the named in-memory database
    NAME, created by its first connection and shared by later ones until its last connection
    closes (DuckDB's spelling).  Anything else is a data directory, created when missing
    (``mzlite.catalog_store``); ``durability`` is ``"full"`` (the default) or ``"normal"``.

    ``system_parameters`` and ``clock`` configure a database when it is created; given again
    for an existing named database they must agree with it (``ProgrammingError`` otherwise;
    use ``ALTER SYSTEM SET`` to change a running database)."""
    if database is not None and not isinstance(database, (str, os.PathLike)):
        raise E.ProgrammingError(f"database must be a string, not {type(database).__name__}")
    name = os.fspath(database) if database is not None else MEMORY
    if isinstance(name, str) and re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", name):
        # a URL is no path: taken as one it would create a directory named "postgres:"
        raise E.error_for(E.FEATURE_NOT_SUPPORTED, f"connecting to a server ({name.split('://')[0]}://...) is "
                          "not supported: mzlite.connect opens an embedded database",
                          hint="use a PostgreSQL driver (psycopg) to reach `mzlite serve`")
    if durability is not None and (name == "" or name.startswith(MEMORY)):
        raise E.ProgrammingError("durability applies to a data directory, not an in-memory database")
    if name in ("", MEMORY):
        return Database(None, system_parameters=system_parameters, clock=clock).connect()
    path = None
    if not name.startswith(MEMORY):
        # a data directory: one Database per directory in this process (another process
        # opening it meets its lock), shared by every connection to it, as a named one is
        path = os.path.realpath(name)
        name = "dir:" + path
    with _named_lock:
        db = _named.get(name)
        if db is not None and not db.closed:
            _check_same_configuration(db, name, system_parameters, clock)
            if durability is not None and durability != db.storage.store.durability:
                raise E.ProgrammingError(f"data directory {path!r} is already open with durability "
                                         f"{db.storage.store.durability!r}")
            try:
                return db.connect()
            except InterfaceError:  # its last connection closed it just now
                pass
        db = Database(path, system_parameters=system_parameters, clock=clock, durability=durability or "full")
        _named[name] = db
        return db.connect()


def _forget(db) -> None:
    """Drop a closed database from the registry, so its memory goes with it."""
    with _named_lock:
        for name in [n for n, d in _named.items() if d is db]:
            del _named[name]


def _check_same_configuration(db, name: str, system_parameters, clock) -> None:
    if clock is not None and clock is not db.oracle.clock:
        raise E.ProgrammingError(f"database {name!r} is already open with another clock")
    if system_parameters:
        wanted = SystemParameters(system_parameters)
        for key in system_parameters:
            k = key.lower()
            if wanted[k] != db.system[k]:
                raise E.ProgrammingError(
                    f"database {name!r} is already open with {k} = {db.system.show(k)}; use ALTER SYSTEM SET "
                    f"to change it")
