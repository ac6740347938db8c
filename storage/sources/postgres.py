"""A PostgreSQL source: a replication slot, an initial snapshot consistent with it, then every
committed transaction of the publication's tables, decoded from ``pgoutput``.

Owns ``describe`` (the publication's tables and columns, checked: ``wal_level = logical``,
``REPLICA IDENTITY FULL``, column types mzlite can hold) and ``PostgresIngestion``: the slot
(created on a replication connection with ``SNAPSHOT 'export'``; the tables are then read in
one ``REPEATABLE READ`` transaction at that snapshot, so the snapshot is exactly the data
before the slot's first change), and ``run``, which reads the slot's changes with
``pg_logical_slot_peek_binary_changes`` and commits each PostgreSQL transaction as one
``TableStorage.commit`` -- its rows on every subsource together, the source's position
(the transaction's end LSN) in the same store transaction -- in commit order, then
advances the slot past what is durable (``pg_replication_slot_advance``).  Invariants: a
transaction is applied whole at one mzlite timestamp or not at all; a transaction whose end
LSN is at or below the persisted position is never applied again (a restart resumes from
the position, the slot having kept everything after it); the slot only advances past
committed positions.  A change mzlite cannot apply correctly -- a table's columns changed
(a Relation message that differs from the source's), a TRUNCATE -- fails that table's
subsource with an error, as Materialize's does, rather than writing wrong rows: reads of it
report the error, its changes are no longer applied (the failure is persisted with the
position, so a reopened source keeps it failed), and the source's other tables go on.
Deliberately not here: SQL (the adapter plans CREATE SOURCE and makes the catalog items),
when ``run`` is called (the coordinator's tick).
"""
from __future__ import annotations

import secrets as _secrets
import threading
from typing import Optional

from expr.functions import FUNCTIONS
from repr.errors import EvalError
from storage.sources.ingest import state_key
from storage.sources.pgoutput import UNCHANGED, decode, lsn_text, parse_lsn

#: PostgreSQL type name -> mzlite type (their text forms are read by mzlite's text input)
TYPES = {"int2": "int2", "int4": "int4", "int8": "int8", "float4": "float4", "float8": "float8",
         "numeric": "numeric", "bool": "bool", "text": "text", "varchar": "text", "bpchar": "text",
         "date": "date", "time": "time", "timestamp": "timestamp", "timestamptz": "timestamptz",
         "interval": "interval", "uuid": "uuid", "bytea": "bytea", "jsonb": "jsonb"}
#: the session settings whose text forms mzlite's input functions read
SESSION = "-c TimeZone=UTC -c DateStyle=ISO,MDY -c IntervalStyle=postgres -c extra_float_digits=3"
#: changes read per poll of the slot (a larger backlog is read over several polls)
PEEK_CHANGES = 20_000


class SourceError(Exception):
    """The source cannot continue (``sqlstate``, ``message``)."""

    def __init__(self, sqlstate: str, message: str):
        super().__init__(message)
        self.sqlstate, self.message = sqlstate, message


def _parser(mz_type: str):
    if mz_type == "text":
        return None
    return FUNCTIONS[f"cast_text_to_{mz_type}"].fn


def connect(conninfo: dict, **kw):
    import psycopg
    try:
        return psycopg.connect(**conninfo, options=SESSION, autocommit=True, **kw)
    except psycopg.Error as e:
        raise SourceError("08001", f"cannot connect to PostgreSQL: {str(e).strip().splitlines()[0]}") from None


def describe(conninfo: dict, publication: str, wanted: Optional[list], schemas: Optional[tuple] = None) -> list:
    """``[(schema, table, oid, [(column, pg type, mz type, nullable, type oid)])]`` of the
    publication's tables (``wanted``: ``[(schema or None, table)]``, None for all; ``schemas``:
    only the tables in those schemas, each of which must hold one)."""
    with connect(conninfo) as pg:
        if pg.execute("SHOW wal_level").fetchone()[0] != "logical":
            raise SourceError("55000", "PostgreSQL's wal_level must be logical for a source (it is "
                              f"{pg.execute('SHOW wal_level').fetchone()[0]})")
        if pg.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (publication,)).fetchone() is None:
            raise SourceError("42704", f"publication {publication!r} does not exist in PostgreSQL")
        tables = pg.execute("SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = %s "
                            "ORDER BY schemaname, tablename", (publication,)).fetchall()
        if schemas is not None:
            for schema in schemas:
                if not any(t[0] == schema for t in tables):
                    raise SourceError("42704", f"schema {schema!r} has no tables in publication {publication!r}")
            tables = [t for t in tables if t[0] in schemas]
        if wanted is not None:
            pick = []
            for schema, name in wanted:
                hit = [t for t in tables if t[1] == name and (schema is None or t[0] == schema)]
                if len(hit) != 1:
                    raise SourceError("42704", f"reference to {name} not found in publication {publication!r}"
                                      if not hit else f"table {name} is ambiguous in publication {publication!r}")
                pick.append(hit[0])
            tables = pick
        if not tables:
            raise SourceError("22023", f"publication {publication!r} has no tables")
        out = []
        for schema, name in tables:
            oid, ident = pg.execute("SELECT c.oid, c.relreplident FROM pg_class c JOIN pg_namespace n ON "
                                    "n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s",
                                    (schema, name)).fetchone()
            if ident != "f":
                raise SourceError("55000", f"table {schema}.{name} must have REPLICA IDENTITY FULL for a source "
                                  f"(ALTER TABLE {schema}.{name} REPLICA IDENTITY FULL)")
            cols = []
            for col, typ, notnull, typoid in pg.execute(
                    "SELECT a.attname, t.typname, a.attnotnull, a.atttypid FROM pg_attribute a JOIN pg_type t ON "
                    "t.oid = a.atttypid WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped "
                    "ORDER BY a.attnum", (oid,)).fetchall():
                if typ not in TYPES:
                    raise SourceError("0A000", f"column {schema}.{name}.{col} has type {typ}, which a source cannot "
                                      f"read (mzlite reads {', '.join(sorted(TYPES))})")
                cols.append((col, typ, TYPES[typ], not notnull, typoid))
            out.append((schema, name, oid, cols))
        return out


class PostgresIngestion:
    """One PostgreSQL source (see the module docstring).  ``tables``: ``[(schema, table, oid,
    columns, collection id)]``; ``state``: a restored position (``slot``, ``lsn``)."""

    def __init__(self, source_id, conninfo: dict, publication: str, tables: list, progress_id,
                 state: Optional[dict] = None):
        self.source_id = source_id
        self.conninfo = conninfo
        self.publication = publication
        self.progress_id = progress_id
        self.tables = {oid: (schema, name, cols, gid) for schema, name, oid, cols, gid in tables}
        self.described = [[schema, name, oid, [list(c) for c in cols]] for schema, name, oid, cols, _g in tables]
        self.parsers = {oid: [_parser(c[2]) for c in cols] for oid, (_s, _n, cols, _g) in self.tables.items()}
        self.slot = state["slot"] if state else f"mzlite_{str(source_id).lower()}_{_secrets.token_hex(4)}"
        self.lsn = int(state["lsn"]) if state else 0
        self.error: Optional[SourceError] = None
        #: collection id -> why its table's subsource stopped (a schema change, a TRUNCATE)
        self.failed: dict = {}
        for g, m in (state or {}).get("failed", ()):  # restored: those subsources stay failed
            gid = next((t[3] for t in self.tables.values() if str(t[3]) == g), None)
            if gid is not None:
                self.failed[gid] = m
                self.tables = {oid: t for oid, t in self.tables.items() if t[3] != gid}
        self._pg = None
        #: held while the slot is polled (``Ingestions.run``) and by whoever stops the source
        self.lock = threading.Lock()
        #: statistics (``mz_source_statistics``): changes read, updates committed, the upstream
        #: position last seen (PostgreSQL's current WAL LSN) and whether the snapshot is in
        self.messages_received = 0
        self.updates_committed = 0
        self.offset_known = self.lsn
        self.snapshot_committed = state is not None

    def meta(self) -> dict:
        return {state_key(self.source_id): {"slot": self.slot, "lsn": self.lsn, "tables": self.described,
                                            "failed": [[str(g), m] for g, m in self.failed.items()]}}

    # ------------------------------------------------------------------ the snapshot
    def snapshot(self, storage) -> None:
        """Create the slot, read every table at its exported snapshot and commit the rows at
        one timestamp (with the slot's consistent point as the position)."""
        import psycopg
        repl = connect(self.conninfo, replication="database")
        try:
            res = repl.pgconn.exec_(f"CREATE_REPLICATION_SLOT {self.slot} LOGICAL pgoutput "
                                    f"(SNAPSHOT 'export')".encode())
            if res.status != 2:  # TUPLES_OK
                raise SourceError("55000", f"cannot create replication slot {self.slot}: "
                                  f"{(res.error_message or b'').decode().strip()}")
            point, snap = res.get_value(0, 1).decode(), res.get_value(0, 2).decode()
            writes = {}
            with connect(self.conninfo) as pg:
                pg.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                pg.execute(f"SET TRANSACTION SNAPSHOT '{snap}'")
                for oid, (schema, name, cols, gid) in self.tables.items():
                    select = ", ".join(f"{_ident(c[0])}::text" for c in cols)
                    rows = pg.execute(f"SELECT {select} FROM {_ident(schema)}.{_ident(name)}").fetchall()
                    writes[gid] = [(self._row(oid, r), 1) for r in rows]
                pg.execute("COMMIT")
        except psycopg.Error as e:
            raise SourceError("XX000", f"PostgreSQL snapshot failed: {str(e).strip().splitlines()[0]}") from None
        finally:
            repl.close()
        self.lsn = parse_lsn(point)
        if self.progress_id is not None:
            writes[self.progress_id] = [((self.lsn,), 1)]
        storage.commit({g: _consolidate(u) for g, u in writes.items()}, meta=self.meta())
        self.snapshot_committed = True
        self.updates_committed += sum(len(u) for g, u in writes.items() if g != self.progress_id)
        self.offset_known = max(self.offset_known, self.lsn)

    def statistics(self) -> tuple:
        """``(messages_received, updates_committed, snapshot_committed, offset_known,
        offset_committed)``: offsets are LSNs; ``offset_known - offset_committed`` is the lag
        in WAL bytes."""
        return (self.messages_received, self.updates_committed, self.snapshot_committed, self.offset_known,
                self.lsn)

    def status(self) -> tuple:
        """``(status, error)`` as ``mz_source_statuses`` shows them."""
        if self.error is not None:
            return "stalled", self.error.message
        if self.failed:
            return "running", "; ".join(self.failed.values())
        return "running", None

    def drop_slot(self) -> None:
        """Drop the replication slot (best effort: a server that is gone keeps it)."""
        self.close()
        try:
            with connect(self.conninfo) as pg:
                pg.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                           "WHERE slot_name = %s", (self.slot,))
        except Exception:
            pass

    def forget(self, gid) -> None:
        """Collection ``gid`` is dropped: its table's changes are no longer applied."""
        self.tables = {oid: t for oid, t in self.tables.items() if t[3] != gid}
        if self.progress_id == gid:
            self.progress_id = None

    def close(self) -> None:
        if self._pg is not None:
            try:
                self._pg.close()
            except Exception:
                pass
            self._pg = None

    # ------------------------------------------------------------------ streaming
    def _row(self, oid, values) -> tuple:
        return tuple(v if p is None or v is None else p(v) for p, v in zip(self.parsers[oid], values))

    def run(self, storage) -> int:
        """Apply every transaction the slot holds past the persisted position; the number applied."""
        if self.error is not None:
            return 0
        import psycopg
        try:
            if self._pg is None:
                self._pg = connect(self.conninfo)
            known = self._pg.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]
            changes = self._pg.execute(
                "SELECT lsn::text, data FROM pg_logical_slot_peek_binary_changes(%s, NULL, %s, 'proto_version', "
                "'1', 'publication_names', %s)", (self.slot, PEEK_CHANGES, self.publication)).fetchall()
            self.offset_known = max(self.offset_known, parse_lsn(known))
        except (psycopg.Error, SourceError):
            self.close()  # PostgreSQL unreachable: the next poll tries again
            return 0
        applied, txn, relations = 0, None, {}
        try:
            for _lsn, data in changes:
                self.messages_received += 1
                msg = decode(data)
                tag = msg[0]
                if tag == "B":
                    txn = {}
                elif tag == "R":
                    relations[msg[1]] = msg
                    problem = self._check_relation(msg)
                    if problem is not None:
                        self.fail_table(storage, msg[1], problem)
                elif tag in ("I", "U", "D"):
                    oid = msg[1]
                    if oid not in self.tables or txn is None:
                        continue
                    gid = self.tables[oid][3]
                    ups = txn.setdefault(gid, [])
                    if tag == "I":
                        ups.append((self._row(oid, msg[2]), 1))
                    elif tag == "D":
                        ups.append((self._row(oid, msg[2]), -1))
                    else:
                        old, new = msg[2], msg[3]
                        new = tuple(o if n is UNCHANGED else n for o, n in zip(old, new))
                        ups.append((self._row(oid, old), -1))
                        ups.append((self._row(oid, new), 1))
                elif tag == "T":
                    for o in [o for o in msg[1] if o in self.tables]:
                        s, n = self.tables[o][:2]
                        if txn is not None:
                            txn.pop(self.tables[o][3], None)
                        self.fail_table(storage, o, SourceError("XX000", f"table {s}.{n} was truncated: its subsource "
                                                                "must be dropped and created again"))
                elif tag == "C":
                    end = msg[2]
                    if txn is not None and end > self.lsn:
                        writes = {g: _consolidate(u) for g, u in txn.items()}
                        if self.progress_id is not None:
                            writes[self.progress_id] = [((self.lsn,), -1), ((end,), 1)]
                        old = self.lsn
                        self.lsn = end
                        try:
                            storage.commit(writes, meta=self.meta())
                        except BaseException:
                            self.lsn = old
                            raise
                        applied += 1
                        self.updates_committed += sum(len(u) for g, u in writes.items() if g != self.progress_id)
                    txn = None
        except SourceError as e:
            self.fail(storage, e)
        except ValueError as e:
            self.fail(storage, SourceError("XX000", f"cannot decode the replication stream: {e}"))
        except EvalError as e:  # a value mzlite's input function refuses: never skipped silently
            self.fail(storage, SourceError(e.sqlstate, f"cannot read a replicated value: {e.message}"))
        if applied:
            self._advance_slot()
        return applied

    def _advance_slot(self) -> None:
        """Let the slot free what is durable here (a failure keeps it: a restart skips it by position)."""
        import psycopg
        try:
            self._pg.execute("SELECT pg_replication_slot_advance(%s, %s::pg_lsn)", (self.slot, lsn_text(self.lsn)))
        except psycopg.Error:
            self.close()

    def _check_relation(self, msg) -> Optional[SourceError]:
        _tag, oid, schema, name, ident, cols = msg
        if oid not in self.tables:
            return None
        want = [(c[0], c[4]) for c in self.tables[oid][2]]
        got = [(c[0], c[1]) for c in cols]
        if got != want:
            return SourceError("XX000", f"incompatible schema change: table {schema}.{name} now has columns "
                               f"{[c for c, _ in got]} of types {[t for _, t in got]} (the source read "
                               f"{[c for c, _ in want]}): its subsource must be dropped and created again")
        if ident != "f":
            return SourceError("XX000", f"table {schema}.{name} no longer has REPLICA IDENTITY FULL")
        return None

    def fail_table(self, storage, oid, error: SourceError) -> None:
        """Table ``oid``'s subsource fails with ``error`` (reads of it report it) and its changes
        are no longer applied; the source's other tables go on."""
        gid = self.tables.pop(oid)[3]
        self.failed[gid] = error.message
        storage.fail_collections([gid], error.message)

    def fail(self, storage, error: SourceError) -> None:
        """Stop the source: its subsources fail with ``error`` (reads of them report it)."""
        self.error = error
        for oid in list(self.tables):
            self.fail_table(storage, oid, error)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _consolidate(ups: list) -> list:
    acc: dict = {}
    for row, d in ups:
        acc[row] = acc.get(row, 0) + d
    return [(r, d) for r, d in acc.items() if d]
