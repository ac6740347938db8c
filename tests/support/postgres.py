"""Test-only: a private database on PostgreSQL 15, the oracle of the wire-protocol tests.

Owns ``postgres_spec`` / ``postgres_server`` (the server ``MZLITE_SLT_PG=host:port`` names
(CI), else a throwaway server started as ``.ci/start-postgres`` does, stopped afterwards) and
``postgres_database``: a psycopg connection to a fresh database on it; ``pytest.skip`` when
PostgreSQL is not installed.  Every test that needs PostgreSQL gets it from here.  The database and its session use mzlite's defaults where they differ from
PostgreSQL's (UTF8, C collation, UTC, ISO dates).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.join(ROOT, ".ci", "start-postgres")


def _start_server():
    try:
        out = subprocess.run(["bash", SCRIPT], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return out.stdout.split()


@contextlib.contextmanager
def postgres_spec():
    """Yield ``"host:port"`` of a PostgreSQL 15 (the one ``MZLITE_SLT_PG`` names, else one
    started here and stopped afterwards), or None when there is none."""
    started = None
    spec = os.environ.get("MZLITE_SLT_PG")
    if not spec and shutil.which("bash") is not None:
        started = _start_server()
        spec = started[1] if started else None
    try:
        yield spec
    finally:
        if started is not None:
            subprocess.run(["bash", SCRIPT, "stop", started[0]], capture_output=True, timeout=120)


@contextlib.contextmanager
def postgres_server(why: str = "no oracle"):
    """Yield ``(host, port)`` of a PostgreSQL 15 (``postgres_spec``); ``pytest.skip`` (saying
    ``why``) when there is none."""
    with postgres_spec() as spec:
        if spec is None:
            pytest.skip(f"PostgreSQL is not installed: {why}")
        host, port = spec.split(":")[:2]
        yield host or "127.0.0.1", int(port)


@contextlib.contextmanager
def postgres_database(prefix: str, **connect_kwargs):
    """Yield ``(connection, conninfo)`` for a fresh database named ``prefix_<random>``."""
    import psycopg
    with postgres_server() as (host, port):
        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        admin = psycopg.connect(host=host, port=port, user="postgres", dbname="postgres", autocommit=True)
        admin.execute(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")
        conninfo = f"host={host} port={port} user=postgres dbname={name}"
        conn = psycopg.connect(conninfo, autocommit=True, **connect_kwargs)
        conn.execute("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'")
        try:
            yield conn, conninfo
        finally:
            conn.close()
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.close()
