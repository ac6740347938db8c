"""``RemoteConnection.subscribe``: a SUBSCRIBE streamed over the wire as the embedded API's items.

Owns ``RemoteSubscription``: one SUBSCRIBE on a server session of its own (so the connection
that made it stays free for statements), declared as a SQL cursor inside a transaction
(``BEGIN; DECLARE c CURSOR FOR SUBSCRIBE ... WITH (PROGRESS)``) and read with ``FETCH ALL c
[WITH (timeout = ...)]``, whose flat rows (``mz_timestamp, mz_progressed, mz_diff, columns...``)
become ``mzlite.subscribe.Update`` and ``Progress`` items.

Invariants: items come in the server's order (timestamp order, each time complete before a
later one); ``Progress`` items are handed out only when ``progress=True`` was asked for (the
subscription always asks the server for progress rows: they give ``frontier`` and tell a
bounded stream's end); iteration ends exactly when the server's stream ends (a FETCH without a
timeout returning no rows, or the frontier reaching ``UP TO``); ``close()`` from another
thread cancels a FETCH that waits and ends the session.
``RemoteStream`` is what a ``RemoteCursor`` reads after ``execute("SUBSCRIBE ...")``: the same
cursor on a session of its own, its flat rows handed out as ``FETCH`` returns them (waiting for
at least one; ``[]`` once the stream ended).
Deliberately not here: the statement text (``mzlite.subscribe.subscribe_sql``, shared with
the embedded path), ``max_buffered`` (the server's bound; refused by the connection).
"""
from __future__ import annotations

from collections import deque
import threading
from typing import Optional

from mzlite.subscribe import Progress, Update, subscribe_sql
from sql import errors as _errors

_CURSOR = "mzlite_subscription"


class RemoteSubscription:
    """One SUBSCRIBE over the wire, with ``mzlite.subscribe.Subscription``'s surface: iterate it
    for items, ``fetch(timeout, max_rows)`` what is ready, ``frontier``, ``done``, ``close()``."""

    def __init__(self, connection, query_or_name: str, *, snapshot: bool = True, progress: bool = False,
                 as_of: Optional[int] = None, up_to: Optional[int] = None):
        from mzlite.remote import Translating, connect_remote
        sql = subscribe_sql(query_or_name, snapshot=snapshot, progress=True, as_of=as_of, up_to=up_to)
        self.connection = connection
        self.progress = progress
        self.up_to = up_to
        self.bounded = up_to is not None
        self._buf: deque = deque()
        self._frontier: Optional[int] = as_of
        self._ended = False
        self._closed = False
        self._lock = threading.Lock()
        self._session = connect_remote(connection.dsn)
        self._translating = Translating
        try:
            self._session.execute("BEGIN")
            self._session.execute(f"DECLARE {_CURSOR} CURSOR FOR {sql}")
        except BaseException:
            self._session.close()
            raise
        if up_to is not None and as_of is not None and up_to <= as_of:
            self._ended = True

    # ------------------------------------------------------------------ consumer side
    @property
    def frontier(self) -> Optional[int]:
        """The timestamp below which every update has been yielded; None once complete."""
        for item in self._buf:
            if isinstance(item, Update):
                return item.timestamp
        return None if self._ended else self._frontier

    @property
    def done(self) -> bool:
        """The stream ended and nothing is left to read."""
        return self._ended and not self._buf

    def fetch(self, timeout: Optional[float] = 0.0, max_rows: Optional[int] = None) -> list:
        """The items ready within ``timeout`` seconds (None: wait for at least one, or the end),
        at most ``max_rows``; ``[]`` when nothing arrived in time or the stream ended."""
        with self._lock:
            while not self._buf and not self._ended:
                if self._closed:
                    raise _errors.InterfaceError("subscription already closed")
                got = self._fetch_rows(timeout)
                if got is None:  # the stream ended
                    self._ended = True
                    break
                if timeout is not None:
                    break
            if not self._buf and self._closed:
                raise _errors.InterfaceError("subscription already closed")
            n = len(self._buf) if max_rows is None else min(max_rows, len(self._buf))
            return [self._buf.popleft() for _ in range(n)]

    def _fetch_rows(self, timeout: Optional[float]):
        """One FETCH into the buffer; None when the server's stream has ended."""
        stmt = f"FETCH ALL {_CURSOR}"
        if timeout is not None:
            stmt += f" WITH (timeout = '{max(0.0, float(timeout)):.6f}s')"
        try:
            rows = self._session.execute(stmt).fetchall()
        except _errors.Error as e:
            if self._closed:
                raise _errors.InterfaceError("subscription already closed") from None
            self._ended = True
            self._finish()
            raise e from None
        for row in rows:
            ts, progressed = row[0], row[1]
            if progressed:
                self._frontier = ts
                if self.progress:
                    self._buf.append(Progress(ts))
            else:
                self._buf.append(Update(ts, row[2], tuple(row[3:])))
        if self.up_to is not None and self._frontier is not None and self._frontier >= self.up_to:
            return None
        if not rows and timeout is None:
            return None
        return rows

    def __iter__(self):
        while True:
            items = self.fetch(timeout=None)
            if not items:
                return
            yield from items

    def close(self) -> None:
        """Stop the subscription and end its session (idempotent); a FETCH waiting on another
        thread raises ``InterfaceError``."""
        if self._closed:
            return
        self._closed = True
        self._buf.clear()
        self._finish()

    def _finish(self) -> None:
        s = self._session
        if not s.closed:
            s.close()  # cancels a FETCH that waits
        try:
            self.connection.subscriptions.remove(self)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class RemoteStream:
    """A ``SUBSCRIBE`` run through ``RemoteCursor.execute``: ``columns`` (``(name, type OID)``),
    ``fetch(n)`` (at least one row, waiting; ``[]`` at the end), ``bounded`` (it has UP TO),
    ``close()`` (ends its session, so a fetch waiting on another thread returns)."""

    def __init__(self, connection, sql: str, bounded: bool):
        from mzlite.remote import connect_remote
        self.bounded = bounded
        self._ended = False
        self._session = connect_remote(connection.dsn)
        try:
            self._session.execute("BEGIN")
            self._session.execute(f"DECLARE {_CURSOR} CURSOR FOR {sql}")
            self.description = self._session.execute(f"FETCH 0 {_CURSOR}").description
        except BaseException:
            self._session.close()
            raise

    def fetch(self, n: Optional[int]) -> list:
        if self._ended:
            return []
        if self._session.closed:
            raise _errors.InterfaceError("cursor already closed")
        try:
            rows = self._session.execute(f"FETCH {'ALL' if n is None else int(n)} {_CURSOR}").fetchall()
        except _errors.Error:
            if self._session.closed:
                raise _errors.InterfaceError("cursor already closed") from None
            self._ended = True
            raise
        if not rows:
            self._ended = True
        return rows

    def close(self) -> None:
        if not self._session.closed:
            self._session.close()
