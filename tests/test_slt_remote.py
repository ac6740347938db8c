"""``mzlite slt --url``: a file's named connections (``simple conn=NAME``) through ``mzlite
serve``, each a session of its own, interleaved as the file says, with the interactive runtime
on and off; Materialize's harness conventions against a server: each file starts clean (a
file passes twice in a row on one server), ``reset-server`` is honoured, and what a server
refuses of a reset is reported."""
from __future__ import annotations

import os
import subprocess
import sys

import psycopg
import pytest

import slt
from slt.engines import EngineError, SqliteEngine
from slt.runner import Config, run_file
from tests.support.wire import running_server

FILE = """\
statement ok
CREATE TABLE shared (a int)

simple conn=writer
BEGIN
----
COMPLETE 0

simple conn=writer
INSERT INTO shared VALUES (1), (2)
----
COMPLETE 2

query I
SELECT count(*) FROM shared
----
0

simple conn=reader
SELECT count(*) FROM shared
----
0
COMPLETE 1

simple conn=writer
COMMIT
----
COMPLETE 0

simple conn=reader
SELECT sum(a) FROM shared
----
3
COMPLETE 1

simple conn=reader
SET transaction_isolation = 'serializable'
----
COMPLETE 0

query T
SHOW transaction_isolation
----
strict serializable
"""


@pytest.mark.parametrize("interactive", [True, False], ids=["interactive", "maintenance-only"])
def test_named_connections_interleave_through_the_server(tmp_path, interactive):
    """Sabotage: ``PostgresEngine._connection`` handing out the default session for every name
    (the writer's BEGIN then held the default session's reads in its transaction) went red."""
    p = tmp_path / "named.slt"
    p.write_text(FILE)
    with running_server({"enable_compute_interactive_runtime": interactive}) as srv:
        url = f"postgresql://materialize@127.0.0.1:{srv.port}/materialize"
        assert slt.main(["--url", url, str(p)]) == 0


# -- each file starts clean; reset-server --------------------------------------------------

DIRTY = """\
query T
SHOW compaction_window_ms
----
1000

statement ok
CREATE TABLE t (a int)

statement ok
INSERT INTO t VALUES (1), (2)

statement ok
CREATE VIEW v AS SELECT a FROM t

statement ok
CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n FROM t

statement ok
CREATE INDEX t_a ON t (a)

statement ok
CREATE SCHEMA other

statement ok
CREATE TABLE other.u (b int)

statement ok
CREATE SECRET sec AS 'x'

statement ok
CREATE CLUSTER extra SIZE '1'

statement ok
CREATE TYPE int_list AS LIST (ELEMENT TYPE = int4)

statement ok
CREATE TABLE listed (l int_list)

statement ok
ALTER SYSTEM SET compaction_window_ms = 5000

query I
SELECT n FROM mv
----
2
"""


def _url(srv) -> str:
    return f"postgresql://materialize@127.0.0.1:{srv.port}/materialize"


@pytest.mark.parametrize("interactive", [True, False], ids=["interactive", "maintenance-only"])
def test_a_file_runs_twice_on_one_server(tmp_path, capsys, interactive):
    """Each file starts from Materialize's runner's clean state (every user object, schema
    and cluster dropped, ALTER SYSTEM RESET ALL), so the same file passes twice in a row on
    one server.  Sabotage: ``PostgresEngine.reset`` without the user-schema drops (the second
    run's CREATE SCHEMA other failed), and without ALTER SYSTEM RESET ALL (the second run read
    compaction_window_ms 5000), and mzlite's SHOW OBJECTS not listing named types (the second
    CREATE TYPE int_list failed: 42710) went red."""
    p = tmp_path / "dirty.slt"
    p.write_text(DIRTY)
    with running_server({"enable_compute_interactive_runtime": interactive}) as srv:
        for _ in range(2):
            assert slt.main(["--url", _url(srv), str(p)]) == 0, capsys.readouterr().out
        # the runner's system parameter survives the reset (RESET ALL returns to the server's defaults)
        with psycopg.connect(_url(srv), autocommit=True) as c:
            shown = c.execute("SHOW enable_compute_interactive_runtime").fetchone()[0]
        assert shown == ("on" if interactive else "off")


RESET = """\
statement ok
CREATE TABLE t (a int)

statement ok
INSERT INTO t VALUES (1)

statement ok
SET transaction_isolation = 'serializable'

simple conn=writer
BEGIN
----
COMPLETE 0

simple conn=writer
INSERT INTO t VALUES (2)
----
COMPLETE 1

reset-server

query T
SHOW transaction_isolation
----
strict serializable

statement ok
CREATE TABLE t (a int)

simple conn=writer
SELECT count(*) FROM t
----
0
COMPLETE 1

query I
SELECT count(*) FROM t
----
0
"""


def test_reset_server_is_honoured_through_the_server(tmp_path, capsys):
    """``reset-server`` gives the rest of the file a clean server: objects gone, sessions
    (named ones too, with their open transactions) reopened.  Sabotage: the runner skipping
    ResetServer records (the second CREATE TABLE t failed) went red."""
    p = tmp_path / "reset.slt"
    p.write_text(RESET)
    with running_server() as srv:
        code = slt.main(["--url", _url(srv), str(p)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "NOTE" not in out, out


class _RefusingReset(SqliteEngine):
    """A server that cannot do all of a reset (notes) or any of it (an error)."""

    fail = False

    def reset(self):
        if self.fail and self._conn is not None:
            raise EngineError("must be superuser to reset", "42501")
        super().reset()
        self.reset_notes = ["ALTER SYSTEM RESET ALL refused (42501: permission denied)"]


def test_reset_server_refusals_are_reported(tmp_path, capsys):
    """Where the server allows only part of a reset, each refused step is printed as a NOTE
    with the record's line; where it allows none, the reset-server record fails and the file
    stops (its state is unknown).  Sabotage: ``_FileRun._reset_server`` not catching the
    EngineError (the run raised) and ``_note_reset`` dropping the notes went red."""
    p = tmp_path / "r.slt"
    p.write_text("statement ok\nCREATE TABLE t(a INTEGER)\n\nreset-server\n\n"
                 "statement ok\nCREATE TABLE t(a INTEGER)\n")
    res = run_file(str(p), Config(engine_factory=_RefusingReset))
    assert (res.passed, res.failed) == (2, 0), res.failures
    assert [(n[1], n[2][:22]) for n in res.notes] == [(0, "ALTER SYSTEM RESET ALL"), (4, "ALTER SYSTEM RESET ALL")]

    class Failing(_RefusingReset):
        fail = True
    res = run_file(str(p), Config(engine_factory=Failing))
    assert (res.passed, res.failed) == (1, 1)
    assert res.failures[0].line == 4 and "must be superuser" in res.failures[0].actual[0]
    assert res.bailed and "reset-server failed" in res.bailed


# -- the PostgreSQL oracle: the same engine class ------------------------------------------

TWICE_PG = """\
statement ok
CREATE TABLE t (a int)

statement ok
CREATE SCHEMA other

statement ok
CREATE TABLE other.u (b int)

statement ok
INSERT INTO t VALUES (1)

reset-server

statement ok
CREATE TABLE t (a int)

query I
SELECT count(*) FROM t
----
0
"""


@pytest.fixture
def oracle(postgres_spec, monkeypatch):
    if not postgres_spec:
        pytest.skip("no PostgreSQL 15 here (set MZLITE_SLT_PG=host:port or install it)")
    monkeypatch.setenv("MZLITE_SLT_PG", postgres_spec)
    return postgres_spec


def test_one_engine_class_for_every_server(oracle):
    """``--engine postgres`` (the oracle) and ``--url`` (mzlite serve, Materialize) are one
    class, ``PostgresEngine``, parameterised by the dialect the server reports."""
    from slt.engines import make_engine
    from slt.postgres import PostgresEngine
    pg = make_engine("postgres")
    try:
        assert type(pg) is PostgresEngine and pg.dialect == "postgres" and "pgoracle" in pg.names
    finally:
        pg.close()
    with running_server() as srv:
        mz = make_engine("mzlite", url=_url(srv))
        try:
            assert type(mz) is PostgresEngine and mz.dialect == "materialize" and "pgoracle" not in mz.names
        finally:
            mz.close()


def test_the_oracle_runs_joins_and_starts_each_file_clean(oracle, tmp_path, capsys):
    """The PostgreSQL oracle passes slt/test/joins.slt, and a file with a schema of its own
    and a reset-server passes twice in a row on one PostgreSQL.  Sabotage: the PostgreSQL
    branch of ``PostgresEngine.reset`` without the user-schema drops (the second run's
    CREATE SCHEMA other failed: 42P06) went red."""
    joins = os.path.join(os.path.dirname(__file__), "..", "slt", "test", "joins.slt")
    assert slt.main(["--engine", "postgres", "--timeout", "20", joins]) == 0, capsys.readouterr().out
    p = tmp_path / "twice.slt"
    p.write_text(TWICE_PG)
    assert slt.main(["--engine", "postgres", str(p), str(p)]) == 0, capsys.readouterr().out


SUBSCRIBES = """\
query III
SUBSCRIBE (SELECT 1 AS x) AS OF 0 UP TO 1
----
0 1 1

statement error pgcode 22023 AS OF or UP TO should be castable to a \\(non-null\\) mz_timestamp value
SUBSCRIBE (SELECT 1) AS OF NULL::timestamptz

statement error pgcode 42P01 unknown catalog item 'no_such'
SUBSCRIBE no_such

query I
SELECT 1
----
1
"""

_IN_PROCESS = """\
import sys, slt
from tests.support.wire import running_server
with running_server() as srv:
    sys.exit(slt.main(["--url", f"postgresql://materialize@127.0.0.1:{srv.port}/materialize", sys.argv[1]]))
"""


def test_subscribe_through_a_server_in_the_same_process(tmp_path):
    """A SUBSCRIBE (its rows, its planning errors) through ``--url`` with ``mzlite serve`` in
    the runner's own process: the runner waits for the results on the socket, releasing the
    GIL.  Run in a child process, as the failure is a hang no in-process timeout can break
    (the waiting thread holds the GIL).  Sabotage seen red: ``_subscribe`` calling libpq's
    blocking ``get_result`` (psycopg's C implementation holds the GIL in it) hung the child."""
    p = tmp_path / "subscribes.slt"
    p.write_text(SUBSCRIBES)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        r = subprocess.run([sys.executable, "-c", _IN_PROCESS, str(p)], cwd=root, env=env,
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the runner hung on a SUBSCRIBE through a server in its own process")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "4 passed, 0 failed" in r.stdout, r.stdout
