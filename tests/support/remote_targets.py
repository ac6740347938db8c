"""Where the API conformance tests connect: the embedded engine, ``mzlite serve``, PostgreSQL 15.

A test module that sets ``API_TARGETS = ("embedded", "remote", "postgres")`` runs each of its
tests once per target through the shared ``connect`` fixture (``tests/conftest.py``):

* ``embedded``: ``mzlite.connect()``, a private in-memory database per call;
* ``remote``: ``mzlite.connect("postgresql://...")`` to an in-process ``mzlite serve`` started
  for the test (``tests/support/wire.py``), so every test has a fresh database;
* ``postgres``: ``mzlite.connect("host=... ")`` to PostgreSQL 15 (``MZLITE_SLT_PG=host:port``,
  else one started by ``.ci/start-postgres`` for the session), each test in a schema of its
  own (``search_path``); skipped when PostgreSQL is not installed.

``DIFFERENCES`` is the one list of where a remote target answers otherwise than the embedded
engine, each with its reason: such a test runs as a strict xfail on that target, so a
difference that goes away (or a new one) fails the suite until this list is brought up to date.
"""
from __future__ import annotations

import contextlib
import os
import uuid

import pytest

import mzlite
from tests.support.postgres import postgres_spec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: (test module's short name, test function name, target) -> why that target answers otherwise
DIFFERENCES = {
    # ---- mzlite serve: what the wire cannot carry
    ("test_pep249", "test_a_cursor_shared_by_threads_hands_out_each_row_once", "remote"):
        "reaches into the embedded cursor's result rows (cur._result.rows); the remote cursor's rows are psycopg's",
    ("test_pep249", "test_a_cursor_shared_by_threads_hands_out_each_row_once", "postgres"):
        "reaches into the embedded cursor's result rows (cur._result.rows); the remote cursor's rows are psycopg's",
    # ---- PostgreSQL: its SQL and its transactions are not Materialize's
    ("test_api_errors", "test_update_and_delete_are_refused_inside_a_transaction", "postgres"):
        "PostgreSQL's transactions may update and delete (Materialize's write transactions are insert-only)",
    ("test_api_errors", "test_concurrent_transactions_cannot_corrupt_a_table", "postgres"):
        "PostgreSQL runs UPDATE inside a transaction (row locks), so the expected 25001 never comes",
    ("test_api_types", "test_subscribe_rows_hold_the_same_python_values_as_cursor_rows", "postgres"):
        "PostgreSQL has no SUBSCRIBE",
}


def known_difference(request, target: str):
    """The reason ``DIFFERENCES`` gives for the running test on ``target``, or None."""
    module = request.module.__name__.rpartition(".")[2]
    name = request.function.__name__
    ids = [p for p in getattr(getattr(request.node, "callspec", None), "id", "").split("-") if p != target]
    if ids:  # a parametrized case may be listed by itself: "test_x[case-id]"
        reason = DIFFERENCES.get((module, f"{name}[{'-'.join(ids)}]", target))
        if reason is not None:
            return reason
    return DIFFERENCES.get((module, name, target))


# ---------------------------------------------------------------------- PostgreSQL

postgres_instance = postgres_spec  # ``host:port`` of a PostgreSQL 15 for the session, or None


class Target:
    """Opens connections for one test on one target (see the module docstring)."""

    def __init__(self, name: str, pg_spec=None):
        self.name = name
        self.pg_spec = pg_spec
        self._stack = contextlib.ExitStack()
        self._url = None
        self._schema = None

    def url(self, interactive=None) -> str:
        if self._url is None:
            if self.name == "remote":
                from tests.support.wire import running_server
                params = {} if interactive is None else {"enable_compute_interactive_runtime": interactive}
                srv = self._stack.enter_context(running_server(params))
                self._url = f"postgresql://materialize@127.0.0.1:{srv.port}/materialize"
            else:
                import psycopg
                host, port = self.pg_spec.split(":")[:2]
                self._schema = f"api_{uuid.uuid4().hex[:12]}"
                with psycopg.connect(host=host, port=int(port), user="postgres", dbname="postgres",
                                     autocommit=True) as admin:
                    admin.execute(f"CREATE SCHEMA {self._schema}")
                self._url = (f"host={host} port={port} user=postgres dbname=postgres "
                             f"options='-c search_path={self._schema} -c TimeZone=UTC'")
        return self._url

    def connect(self, interactive=None):
        return mzlite.connect(self.url(interactive))

    def close(self) -> None:
        if self._schema is not None:
            import psycopg
            host, port = self.pg_spec.split(":")[:2]
            with psycopg.connect(host=host, port=int(port), user="postgres", dbname="postgres",
                                 autocommit=True) as admin:
                admin.execute(f"DROP SCHEMA IF EXISTS {self._schema} CASCADE")
        self._stack.close()


def mark_difference(request, name: str) -> None:
    """Make the running test a strict xfail on ``name`` when ``DIFFERENCES`` lists it."""
    reason = known_difference(request, name)
    if reason is not None:
        request.node.add_marker(pytest.mark.xfail(reason=reason, strict=True))


def open_target(request, name: str) -> Target:
    """A ``Target`` for ``name`` (the ``postgres`` one skipped when there is no PostgreSQL)."""
    pg_spec = None
    if name == "postgres":
        pg_spec = request.getfixturevalue("postgres_spec")
        if pg_spec is None:
            pytest.skip("PostgreSQL is not installed: no third run against it")
    return Target(name, pg_spec)


def target_for(request, name: str) -> Target:
    """The ``Target`` of the running test (xfailed as ``DIFFERENCES`` says)."""
    mark_difference(request, name)
    return open_target(request, name)
