"""``mzlite dump DIR_OR_URL [--data[=insert|copy]]``: a database's objects (and data) as a SQL script.

Owns reading a database's catalog through the public API (``mzlite.connect`` of a data
directory, or of a server's URL: ``mz_tables``, ``mz_views``, ``mz_materialized_views``,
``mz_indexes`` and ``SHOW CREATE``) and writing the script: ``CREATE SCHEMA`` for each schema
other than ``public``, then every table, view, materialized view and index in the order the
catalog created them (an object's id is larger than those of the objects it depends on),
after ``CREATE CLUSTER`` for each cluster but ``quickstart`` (``SHOW CLUSTERS``),
then, with ``--data``, each table's rows: ``INSERT`` statements (the default; values as typed
literals of their text form, so every type replays) or ``COPY ... FROM STDIN`` blocks in
psql's format (``--data=copy``, for psql against Materialize or PostgreSQL).

Invariants: the script replays on mzlite (``mzlite -f dump.sql`` or ``executescript``) into a
database with the same objects and rows; names are written without the database qualifier
``SHOW CREATE`` gives them, so the script replays into any database; nothing is read but
the catalog and the tables.
Deliberately not here: replaying (the shell), sources and sinks, roles and grants (the
target's own).
"""
from __future__ import annotations

import argparse
import re
import sys
from typing import Iterator, Optional, Sequence, TextIO

INSERT_BATCH = 500

_KINDS = (("mz_tables", "TABLE"), ("mz_views", "VIEW"), ("mz_materialized_views", "MATERIALIZED VIEW"),
          ("mz_indexes", "INDEX"))


def _id_key(object_id: str):
    m = re.fullmatch(r"([a-z]*)(\d+)", object_id)
    return (m.group(1), int(m.group(2))) if m else (object_id, 0)


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _qualified(name: str) -> str:
    """A catalog name (``t`` or ``schema.t``) as quoted SQL."""
    return ".".join(quote_ident(p) for p in name.split("."))


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def objects(con) -> list[tuple[str, str, str]]:
    """``(id, kind, name)`` of every user object, in creation (dependency) order."""
    out = []
    for relation, kind in _KINDS:
        for row in con.execute(f"SELECT id, name FROM {relation}").fetchall():
            if str(row[0]).startswith("u"):
                out.append((row[0], kind, row[1]))
    return sorted(out, key=lambda o: _id_key(o[0]))


def _strip_database(sql: str, database: str) -> str:
    return sql.replace(quote_ident(database) + ".", "")


def ddl(con, kind: str, name: str) -> str:
    """The object's SHOW CREATE text, which replays as it is."""
    (_, create_sql), = con.execute(f"SHOW CREATE {kind} {_qualified(name)}").fetchall()
    return create_sql


def clusters(con) -> list[str]:
    """``CREATE CLUSTER`` for every cluster but ``quickstart`` (every database has it), from
    ``SHOW CLUSTERS``: a managed cluster (one size, a replication factor) when its replicas are
    ``r1``, ``r2``, ... of one size, else its replicas by name."""
    out = []
    for name, replicas, _comment in con.execute("SHOW CLUSTERS").fetchall():
        if name == "quickstart":
            continue
        reps = [re.fullmatch(r"(.*) \((.*)\)", r.strip()).groups() for r in replicas.split(",") if r.strip()]
        sizes = {size for _, size in reps}
        if [r for r, _ in reps] == [f"r{i}" for i in range(1, len(reps) + 1)] and len(sizes) == 1:
            out.append(f"CREATE CLUSTER {quote_ident(name)} (SIZE = {_literal(sizes.pop())}, "
                       f"REPLICATION FACTOR = {len(reps)})")
        elif reps:
            out.append(f"CREATE CLUSTER {quote_ident(name)} REPLICAS ("
                       + ", ".join(f"{quote_ident(r)} (SIZE = {_literal(size)})" for r, size in reps) + ")")
        else:  # no replicas, so no size to say: Materialize's smallest, none running
            out.append(f"CREATE CLUSTER {quote_ident(name)} (SIZE = '25cc', REPLICATION FACTOR = 0)")
    return out


def dump(con, *, data: Optional[str] = None, database: str = "materialize") -> Iterator[str]:
    """The script's text, piece by piece (see the module docstring)."""
    yield "-- mzlite dump: replay with `mzlite -f FILE` (or psql against a server)\n"
    for sql in clusters(con):
        yield sql + ";\n"
    objs = objects(con)
    schemas = sorted({name.split(".")[0] for _, _, name in objs if "." in name} - {"public"})
    for s in schemas:
        yield f"CREATE SCHEMA IF NOT EXISTS {quote_ident(s)};\n"
    tables = []
    for _, kind, name in objs:
        yield _strip_database(ddl(con, kind, name), database) + ";\n"
        if kind == "TABLE":
            tables.append(name)
    if not data:
        return
    for name in tables:
        columns = [(r[0], r[2]) for r in con.execute(f"SHOW COLUMNS FROM {_qualified(name)}").fetchall()]
        cols = ", ".join(quote_ident(c) for c, _ in columns)
        if data == "copy":
            yield f"COPY {_qualified(name)} ({cols}) FROM STDIN;\n"
            cur = con.cursor()
            with cur.copy(f"COPY {_qualified(name)} ({cols}) TO STDOUT") as copy:
                for chunk in copy:
                    yield bytes(chunk).decode("utf-8")
            yield "\\.\n"
            continue
        select = ", ".join(f"{quote_ident(c)}::text" for c, _ in columns)
        rows = con.execute(f"SELECT {select} FROM {_qualified(name)}").fetchall()
        for i in range(0, len(rows), INSERT_BATCH):
            values = ",\n  ".join(
                "(" + ", ".join("NULL" if v is None else f"{_literal(v)}::{t}" for v, (_, t) in zip(row, columns)) + ")"
                for row in rows[i:i + INSERT_BATCH])
            yield f"INSERT INTO {_qualified(name)} ({cols}) VALUES\n  {values};\n"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mzlite dump",
                                description="Write a database's tables, views, materialized views and indexes "
                                            "(and with --data their rows) as a SQL script that replays on mzlite.")
    p.add_argument("target", metavar="DIR_OR_URL", help="a data directory, or a postgresql:// URL of a server")
    p.add_argument("--data", nargs="?", const="insert", choices=("insert", "copy"), default=None,
                   help="also the tables' rows: INSERT statements (the default) or COPY ... FROM STDIN blocks")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    return p


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None) -> int:
    args = build_parser().parse_args(argv)
    import mzlite
    from mzlite.remote import is_remote_target
    if not is_remote_target(args.target):
        import os
        if not os.path.isdir(args.target):
            sys.stderr.write(f"mzlite dump: error: {args.target}: not a data directory or a postgresql:// URL\n")
            return 2
    try:
        con = mzlite.connect(args.target)
    except mzlite.Error as e:
        sys.stderr.write(f"mzlite dump: error: {e.message}\n")
        return 1
    try:
        database = "materialize"
        try:
            database = con.execute("SELECT current_database()").fetchone()[0] or database
        except mzlite.Error:
            pass
        f = open(args.output, "w", encoding="utf-8") if args.output else (out or sys.stdout)
        try:
            for piece in dump(con, data=args.data, database=database):
                f.write(piece)
        finally:
            if args.output:
                f.close()
    except mzlite.Error as e:
        sys.stderr.write(f"mzlite dump: error: {e.message}\n")
        return 1
    finally:
        con.close()
    return 0
