"""A stand-in for ``mzlite.connect()``: the repl tests drive the shell with it, no engine below.

It speaks the slice of the public API the ``mzlite`` command uses (``execute`` returning a
cursor with ``description`` 7-tuples whose type_code is a display type name, ``fetchall``,
``statusmessage``; errors with ``sqlstate`` and a 1-based ``position``; ``SHOW TABLES``,
``SHOW VIEWS``, ``SHOW MATERIALIZED VIEWS``, ``SHOW INDEXES``, ``SHOW COLUMNS FROM x``), on top
of sqlite3.  It is a test double, not an engine: its SQL is SQLite's.  Its own test is
``tests/test_repl_standin.py``.
"""
from __future__ import annotations

from decimal import Decimal
import re
import sqlite3
import sys
import threading


class StandInError(Exception):
    def __init__(self, message, sqlstate="XX000", position=None, detail=None, hint=None):
        super().__init__(message)
        self.message, self.sqlstate, self.position = message, sqlstate, position
        self.detail, self.hint = detail, hint


def _type_of(values):
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            return "boolean"
        if isinstance(v, int):
            return "integer"
        if isinstance(v, float):
            return "double precision"
        if isinstance(v, Decimal):
            return "numeric"
        return "text"
    return "text"


class StandInCursor:
    def __init__(self, description, rows, status):
        self.description, self._rows, self.statusmessage = description, rows, status
        self.rowcount = len(rows) if rows is not None else -1

    def fetchall(self):
        rows, self._rows = self._rows or [], []
        return rows


class StandInConnection:
    def __init__(self):
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.executed: list[str] = []
        self.block = threading.Event()  # a statement "SELECT block" waits on this
        self.cancelled = threading.Event()
        self.closed = False

    def cancel(self):
        self.cancelled.set()
        self.block.set()

    def close(self):
        self.closed = True

    def _result(self, names, rows, status):
        cols = list(zip(*rows)) if rows else [[] for _ in names]
        desc = [(n, _type_of(c), None, None, None, None, None) for n, c in zip(names, cols)]
        return StandInCursor(desc, rows, status)

    def _names(self, kind):
        return [r[0] for r in self.db.execute(
            "select name from sqlite_master where type = ? and name not like 'sqlite%' order by name",
            (kind,))]

    def execute(self, sql, params=None):
        self.executed.append(sql)
        s = sql.strip().rstrip(";").strip()
        low = s.lower()
        if low == "select block":
            sys.stderr.write("[stand-in: statement running]\n")  # pty tests wait for this
            sys.stderr.flush()
            self.block.wait(10)
            if self.cancelled.is_set():
                raise StandInError("canceling statement due to user request", "57014")
            return self._result(["block"], [(1,)], "SELECT 1")
        if low == "show tables":
            return self._result(["name"], [(n,) for n in self._names("table")], "SELECT")
        if low == "show views":
            return self._result(["name"], [(n,) for n in self._names("view")], "SELECT")
        if low == "show materialized views":
            return self._result(["name"], [], "SELECT 0")
        if low.startswith("show indexes"):
            return self._result(["name"], [(n,) for n in self._names("index")], "SELECT")
        m = re.fullmatch(r"show columns from (\w+)", low)
        if m:
            info = self.db.execute(f"pragma table_info({m.group(1)})").fetchall()
            if not info:
                raise StandInError(f'unknown catalog item \'{m.group(1)}\'', "42P01")
            return self._result(["name", "nullable", "type"],
                                [(r[1], not r[3], r[2].lower()) for r in info], "SELECT")
        try:
            cur = self.db.execute(s)
        except sqlite3.Error as exc:
            msg = str(exc)
            pos = None
            m = re.match(r"no such table: (\w+)", msg)
            if m:
                pos = s.find(m.group(1)) + 1 or None
                msg = f'relation "{m.group(1)}" does not exist'
                raise StandInError(msg, "42P01", pos)
            m = re.match(r'near "(\w+)": syntax error', msg)
            if m:
                pos = s.find(m.group(1)) + 1 or None
                raise StandInError(f'syntax error at or near "{m.group(1)}"', "42601", pos)
            raise StandInError(msg, "42000")
        verb = low.split(None, 1)[0] if low else ""
        if cur.description is not None:
            rows = cur.fetchall()
            return self._result([d[0] for d in cur.description], rows, f"SELECT {len(rows)}")
        if verb == "insert":
            return StandInCursor(None, None, f"INSERT 0 {cur.rowcount}")
        if verb in ("update", "delete"):
            return StandInCursor(None, None, f"{verb.upper()} {cur.rowcount}")
        words = low.split()
        tag = " ".join(w.upper() for w in words[:3] if w in ("create", "drop", "table", "view", "index",
                                                               "materialized", "alter"))
        return StandInCursor(None, None, tag or verb.upper())
