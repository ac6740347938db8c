"""The durable store: a data directory's persist shards, catalog and metadata on SQLite.

Owns a data directory (``DIR/mzlite.sqlite`` and its WAL, ``DIR/LOCK``): one SQLite
database in WAL mode holding, shaped after Materialize's persist, per shard a small state
record (``shards``: kind, arity, since, upper) and a log of immutable batches (``batches``:
one ``(shard, time, kind)`` entry per append, rows encoded by ``storage.codec``), plus the
catalog's items (``items``: id, kind, name, create_sql) and small metadata (``meta``: the
format version, the oracle's high-water mark, ALTER SYSTEM values, the next user id).

Invariants: every mutating call is one SQLite transaction, committed before it returns
(``durability="full"``: ``synchronous=FULL``, the WAL is fsynced at every commit and a
commit survives power loss; ``"normal"``: ``synchronous=NORMAL``, a commit survives a crash
of the process but the last commits before a power loss may be lost), so a caller that
acknowledges after the call returns acknowledges only what is durable, and a failed call
(disk full, I/O error) leaves the store as it was.  One process holds a directory at a time
(an exclusive ``flock`` on ``LOCK``, held while open).  A directory written with another
``FORMAT_VERSION`` or codec version refuses to open; a garbled file, a truncated one or
bytes that do not decode raise ``DurableError`` (SQLSTATE XX001 data_corrupted), and
nothing is written to a store that failed to open.  Physical compaction
(``compact_shard``) replaces a shard's batches at or below a time by one consolidated
batch, so the file stays proportional to the live data plus the compaction window.

Deliberately not here: choosing timestamps or when to compact (the adapter and
``storage.tables``), what the catalog's SQL means (the adapter replays it), in-memory
state (``storage.persist``).  Why SQLite rather than LMDB: docs/PERFORMANCE.md
("Durable storage").
"""
from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Iterable, Optional

from repr.errors import EvalError
from storage.codec import CODEC_VERSION, CodecError, decode_updates, decode_value, encode_updates, encode_value

#: the layout of the SQLite schema below (bump it with any change to the tables)
FORMAT_VERSION = 1
DB_FILE = "mzlite.sqlite"
LOCK_FILE = "LOCK"
DURABILITY = ("full", "normal")
#: bytes the WAL file keeps after a checkpoint
WAL_SIZE_LIMIT = 8 << 20

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE items (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, create_sql TEXT NOT NULL);
CREATE TABLE shards (shard TEXT PRIMARY KEY, kind TEXT NOT NULL, arity INTEGER NOT NULL,
                     since INTEGER NOT NULL, upper INTEGER NOT NULL);
CREATE TABLE batches (seq INTEGER PRIMARY KEY, shard TEXT NOT NULL, time INTEGER NOT NULL,
                      errors INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX batches_by_shard ON batches (shard, time);
"""


class DurableError(EvalError):
    """A durable store that cannot be opened or written (an ``mzlite.Error`` at the API)."""


def _corrupt(path: str, what) -> DurableError:
    return DurableError("XX001", f"data directory {path!r} is damaged and cannot be opened: {what}")


def _io_error(e: Exception) -> DurableError:
    msg = str(e)
    if isinstance(e, sqlite3.OperationalError) and "full" in msg:
        return DurableError("53100", f"could not write to the data directory: disk full ({msg}); "
                                     f"nothing of this statement was written")
    return DurableError("58030", f"could not write to the data directory: {msg}; nothing of this statement "
                                 f"was written")


@dataclass
class StoredShard:
    """A shard as the store holds it: its state record and its batches, decoded."""
    shard: str
    kind: str           #: "table" or "output" (a materialized view's)
    arity: int
    since: int
    upper: int
    #: ``(time, [(row, diff)])`` in time order (several entries may share a time)
    batches: list = field(default_factory=list)
    #: the error log's batches, shaped like ``batches`` (outputs only)
    errors: list = field(default_factory=list)


@dataclass
class StoredState:
    meta: dict                   #: key -> decoded value
    items: list                  #: ``(id number, kind, name, create_sql)`` in id order
    shards: dict                 #: shard name -> ``StoredShard``


class DurableStore:
    """One open data directory (see the module docstring)."""

    def __init__(self, path: str, durability: str = "full"):
        if durability not in DURABILITY:
            raise DurableError("22023", f"invalid durability {durability!r}: expected 'full' or 'normal'")
        self.path = path
        self.durability = durability
        self._lock = threading.Lock()  # one SQLite connection, used by one thread at a time
        if os.path.exists(path) and not os.path.isdir(path):
            raise DurableError("58030", f"data directory {path!r} is not a directory")
        try:
            os.makedirs(path, exist_ok=True)
            self._lock_fd = os.open(os.path.join(path, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise DurableError("58030", f"cannot open data directory {path!r}: {e.strerror}") from None
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(self._lock_fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise DurableError("55006", f"data directory {path!r} is in use by another process (it is "
                                            f"locked); close that database first") from None
            raise DurableError("58030", f"cannot lock data directory {path!r}: {e.strerror}") from None
        try:
            self._open()
        except BaseException:
            self._release()
            raise

    def _open(self) -> None:
        file = os.path.join(self.path, DB_FILE)
        fresh = not os.path.exists(file) or os.path.getsize(file) == 0
        try:
            self.db = sqlite3.connect(file, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise DurableError("58030", f"cannot open data directory {self.path!r}: {e}") from None
        try:
            if fresh:  # free pages go back to the file system (``compact_shard``); only before any table
                self.db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            mode = self.db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            # the WAL is truncated to this after a checkpoint, not left at its largest
            self.db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
            if mode.lower() != "wal":
                raise _corrupt(self.path, f"cannot use write-ahead logging (journal mode {mode})")
            self.db.execute(f"PRAGMA synchronous={'FULL' if self.durability == 'full' else 'NORMAL'}")
            if fresh:
                with self._txn():
                    for stmt in _SCHEMA.strip().split(";"):
                        if stmt.strip():
                            self.db.execute(stmt)
                    self._put_meta("format_version", FORMAT_VERSION)
                    self._put_meta("codec_version", CODEC_VERSION)
            else:
                self._check_version()
        except DurableError:
            self.db.close()
            raise
        except sqlite3.DatabaseError as e:
            self.db.close()
            raise _corrupt(self.path, e) from None

    def _check_version(self) -> None:
        names = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"meta", "items", "shards", "batches"} <= names:
            raise _corrupt(self.path, "it is not an mzlite data directory (tables missing)")
        meta = dict(self.db.execute("SELECT key, value FROM meta WHERE key IN ('format_version', 'codec_version')"))
        try:
            fv, cv = decode_value(meta["format_version"]), decode_value(meta["codec_version"])
        except (KeyError, CodecError) as e:
            raise _corrupt(self.path, f"no format version ({e})") from None
        if fv != FORMAT_VERSION or cv != CODEC_VERSION:
            raise DurableError("XX001", f"data directory {self.path!r} was written in format version {fv} "
                                        f"(codec {cv}); this mzlite reads format version {FORMAT_VERSION} "
                                        f"(codec {CODEC_VERSION})")

    def _release(self) -> None:
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        finally:
            os.close(self._lock_fd)

    def close(self) -> None:
        with self._lock:
            if self.db is None:
                return
            try:
                self.db.close()
            finally:
                self.db = None
                self._release()

    # ------------------------------------------------------------------ transactions
    class _Txn:
        def __init__(self, store):
            self.store = store

        def __enter__(self):
            self.store.db.execute("BEGIN IMMEDIATE")
            return self.store

        def __exit__(self, kind, exc, tb):
            db = self.store.db
            if kind is None:
                try:
                    db.execute("COMMIT")
                    return False
                except sqlite3.Error as e:
                    _rollback(db)
                    raise _io_error(e) from None
            _rollback(db)
            if isinstance(exc, sqlite3.Error):
                raise _io_error(exc) from None
            return False

    def _txn(self):
        return DurableStore._Txn(self)

    def _put_meta(self, key: str, value) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, encode_value(value)))

    def _insert_batches(self, shard: str, arity: int, batches: Iterable, errors: bool = False) -> None:
        self.db.executemany("INSERT INTO batches (shard, time, errors, data) VALUES (?, ?, ?, ?)",
                            [(shard, t, int(errors), encode_updates(ups, 2 if errors else arity))
                             for t, ups in batches if ups])

    def _write(self, fn, sync: bool = True) -> None:
        """``fn()`` inside one committed transaction, under the store lock.  ``sync=False``:
        the commit is not synced itself (a materialized view's output, which can be
        recomputed): it is in the WAL ahead of every later commit, so the next synced commit
        makes it durable too, and a power loss can only lose a suffix of such writes.  Under
        ``durability="normal"`` no commit syncs (WAL with ``synchronous=NORMAL`` syncs only at
        checkpoints), so there is no sync to skip and the setting is left as it is: two
        statements fewer on a materialized view's write."""
        with self._lock:
            if self.db is None:
                raise DurableError("58030", "the data directory is closed")
            toggle = not sync and self.durability == "full"
            if toggle:
                self.db.execute("PRAGMA synchronous=OFF")
            try:
                with self._txn():
                    fn()
            finally:
                if toggle:
                    self.db.execute("PRAGMA synchronous=FULL")

    # ------------------------------------------------------------------ writes
    def append_tables(self, time: int, writes: dict, arities: dict, meta: Optional[dict] = None) -> None:
        """One commit of table writes: ``{shard: updates}`` at ``time``, durable on return;
        ``meta`` entries are set in the same transaction."""
        encoded = []
        for shard, ups in writes.items():
            if ups:
                try:
                    encoded.append((shard, time, 0, encode_updates(ups, arities[shard])))
                except CodecError as e:
                    raise DurableError("22000", f"cannot store a row: {e}") from None

        def fn():
            self.db.executemany("INSERT INTO batches (shard, time, errors, data) VALUES (?, ?, ?, ?)", encoded)
            for k, v in (meta or {}).items():
                self._put_meta(k, v)
        self._write(fn)

    def append_output(self, shard: str, arity: int, batches: list, errors: list, upper) -> None:
        """A materialized view's sink wrote ``(time, updates)`` batches (and error batches)
        and advanced its upper to ``upper`` (None: the empty frontier)."""
        def fn():
            self._insert_batches(shard, arity, batches)
            self._insert_batches(shard, arity, errors, errors=True)
            self.db.execute("UPDATE shards SET upper = ? WHERE shard = ?", (_enc_upper(upper), shard))
        self._write(fn, sync=False)

    def set_uppers(self, uppers: dict) -> None:
        """Record outputs' uppers that advanced without data (``{shard: upper}``)."""
        self._write(lambda: self.db.executemany("UPDATE shards SET upper = ? WHERE shard = ?",
                                                [(_enc_upper(u), s) for s, u in uppers.items()]), sync=False)

    def truncate_shard(self, shard: str, since: int, upper: int) -> None:
        """Forget a shard's batches (its writer starts again from ``since``)."""
        def fn():
            self.db.execute("DELETE FROM batches WHERE shard = ?", (shard,))
            self.db.execute("UPDATE shards SET since = ?, upper = ? WHERE shard = ?", (since, upper, shard))
        self._write(fn)

    def compact_shard(self, shard: str, arity: int, time: int, base: dict, since: int) -> None:
        """Replace every batch of ``shard`` at or below ``time`` by ``base`` (its contents
        consolidated as of ``time``), and record ``since``."""
        data = encode_updates(base, arity) if base else None

        def fn():
            self.db.execute("DELETE FROM batches WHERE shard = ? AND errors = 0 AND time <= ?", (shard, time))
            if data is not None:
                self.db.execute("INSERT INTO batches (shard, time, errors, data) VALUES (?, ?, 0, ?)",
                                (shard, time, data))
            self.db.execute("UPDATE shards SET since = MAX(since, ?) WHERE shard = ?", (since, shard))
        self._write(fn, sync=False)
        with self._lock:
            if self.db is not None:
                try:
                    self.db.execute("PRAGMA incremental_vacuum")  # the freed pages leave the file
                except sqlite3.Error:
                    pass  # space is reclaimed by a later compaction

    def reserve_timestamps(self, hwm: int) -> None:
        """Persist the oracle's high-water mark: no timestamp above it is handed out before
        a larger one is persisted.  The stored mark never decreases (the oracle's ticker
        reserves ahead concurrently with a foreground claim: the larger one stays)."""
        def fn():
            row = self.db.execute("SELECT value FROM meta WHERE key = 'oracle_hwm'").fetchone()
            if row is None or decode_value(row[0]) < hwm:
                self._put_meta("oracle_hwm", hwm)
        self._write(fn)

    def sync_catalog(self, items: list, shards: list, meta: dict, owned_prefix: Optional[str] = None) -> None:
        """The catalog as it is now, in one transaction: ``items`` ``(id number, kind, name,
        create_sql)`` replace the stored ones; ``shards`` ``(shard, kind, arity, since, upper)``
        are the collections that exist (others, and their batches, are deleted; new ones
        recorded); ``meta`` entries are set, and the entries under ``owned_prefix`` that
        ``meta`` lacks are deleted (a dropped secret's value)."""
        def fn():
            db = self.db
            have = {r[0]: tuple(r) for r in db.execute("SELECT id, kind, name, create_sql FROM items")}
            want = {i[0] for i in items}
            db.executemany("DELETE FROM items WHERE id = ?", [(i,) for i in set(have) - want])
            db.executemany("INSERT OR REPLACE INTO items (id, kind, name, create_sql) VALUES (?, ?, ?, ?)",
                           [i for i in items if have.get(i[0]) != tuple(i)])
            have_shards = {r[0] for r in db.execute("SELECT shard FROM shards")}
            want_shards = {s[0] for s in shards}
            gone = [(s,) for s in have_shards - want_shards]
            db.executemany("DELETE FROM shards WHERE shard = ?", gone)
            db.executemany("DELETE FROM batches WHERE shard = ?", gone)
            db.executemany("INSERT INTO shards (shard, kind, arity, since, upper) VALUES (?, ?, ?, ?, ?)",
                           [(s, k, a, since, _enc_upper(u)) for s, k, a, since, u in shards
                            if s not in have_shards])
            for k, v in meta.items():
                self._put_meta(k, v)
            if owned_prefix is not None:
                stale = [k for (k,) in db.execute("SELECT key FROM meta") if k.startswith(owned_prefix) and k not in meta]
                db.executemany("DELETE FROM meta WHERE key = ?", [(k,) for k in stale])
        self._write(fn)

    def delete_orphan_batches(self) -> None:
        """Batches of shards the catalog never recorded (a crash between a collection's first
        write and its CREATE's catalog commit)."""
        self._write(lambda: self.db.execute("DELETE FROM batches WHERE shard NOT IN (SELECT shard FROM shards)"))

    # ------------------------------------------------------------------ reads
    def load(self) -> StoredState:
        """Everything the store holds, decoded (``DurableError`` XX001 when it does not decode)."""
        with self._lock:
            try:
                meta = {k: decode_value(v) for k, v in self.db.execute("SELECT key, value FROM meta")}
                items = list(self.db.execute("SELECT id, kind, name, create_sql FROM items ORDER BY id"))
                shards = {s: StoredShard(s, k, a, since, _dec_upper(u)) for s, k, a, since, u in
                          self.db.execute("SELECT shard, kind, arity, since, upper FROM shards")}
                for s, t, err, data in self.db.execute(
                        "SELECT shard, time, errors, data FROM batches ORDER BY shard, time, seq"):
                    sh = shards.get(s)
                    if sh is None:
                        continue
                    ups = decode_updates(data)
                    width = 2 if err else sh.arity
                    if any(len(r) != width for r, _d in ups):
                        raise CodecError(f"a batch of {s} holds rows of the wrong width")
                    (sh.errors if err else sh.batches).append((t, ups))
            except CodecError as e:
                raise _corrupt(self.path, e) from None
            except sqlite3.DatabaseError as e:
                raise _corrupt(self.path, e) from None
            return StoredState(meta, items, shards)

    def pragma(self, name: str):
        with self._lock:
            return self.db.execute(f"PRAGMA {name}").fetchone()[0]


def _rollback(db) -> None:
    try:
        db.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # no transaction left to roll back (SQLite rolled it back itself)


def _enc_upper(u) -> int:
    return -1 if u is None else u


def _dec_upper(u: int):
    return None if u == -1 else u
