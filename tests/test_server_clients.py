"""``mzlite serve`` as a real process, reached by real clients: psql 15 and asyncpg.

The server runs as ``python -m repl.main serve`` (what the ``mzlite serve`` command runs)
on an ephemeral port; SIGTERM shuts it down cleanly.  psql's output is compared with what
psql prints against PostgreSQL 15 for the same statements where PostgreSQL is available
(``MZLITE_SLT_PG=host:port``), else with the text PostgreSQL prints (fixed here).
"""
from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def served():
    """A ``mzlite serve`` subprocess: ``(port, process)``."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "repl.main", "serve", "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # "mzlite serve: listening on ..." once the socket is bound
    assert "listening" in line, (line, proc.stderr.read() if proc.poll() is not None else "")
    yield port, proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)


def psql(port: int, *args: str, input: str = None) -> subprocess.CompletedProcess:
    if shutil.which("psql") is None:
        pytest.skip("psql is not installed")
    env = dict(os.environ, PGCONNECT_TIMEOUT="10", PAGER="", PSQLRC="/dev/null")
    return subprocess.run(["psql", "-X", "-h", "127.0.0.1", "-p", str(port), "-U", "materialize", "materialize",
                           *args], capture_output=True, text=True, input=input, env=env, timeout=60)


def test_psql_c_and_f(served, tmp_path):
    port, _ = served
    r = psql(port, "-c", "CREATE TABLE pt (a int, b text)", "-c", "INSERT INTO pt VALUES (1, 'x'), (2, NULL)",
             "-c", "SELECT a, b FROM pt ORDER BY a")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("CREATE TABLE\nINSERT 0 2\n a | b \n---+---\n 1 | x\n 2 | \n(2 rows)\n\n")
    script = tmp_path / "s.sql"
    script.write_text("CREATE VIEW pv AS SELECT sum(a) AS s FROM pt;\nSELECT * FROM pv;\n")
    r = psql(port, "-f", str(script))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "CREATE VIEW\n s \n---\n 3\n(1 row)\n\n"


def test_psql_error_report(served):
    """psql prints mzlite's error with PostgreSQL's layout: the position as a LINE with a
    caret, and the hint."""
    port, _ = served
    r = psql(port, "-c", "SELECT nosuch_column FROM pt")
    assert r.returncode == 1
    assert r.stderr.startswith('ERROR:  column "nosuch_column" does not exist\nLINE 1: SELECT nosuch_column FROM pt\n'
                               '               ^')


def test_psql_conninfo_and_variables(served):
    port, _ = served
    r = psql(port, "-c", r"\conninfo", "-c", "SHOW transaction_isolation")
    assert r.returncode == 0, r.stderr
    assert 'You are connected to database "materialize" as user "materialize"' in r.stdout
    assert "strict serializable" in r.stdout


def test_psql_subscribe_streams_until_up_to(served):
    """A bare SUBSCRIBE in psql streams as COPY data (Materialize's way) and ends at UP TO."""
    port, _ = served
    assert psql(port, "-c", "CREATE TABLE ps (a int, b text)", "-c", "INSERT INTO ps VALUES (1, 'x'), (2, NULL)"
                ).returncode == 0
    r = psql(port, input="SELECT mz_now()::text::int8 AS ts, mz_now()::text::int8 + 1 AS te \\gset\n"
                         "COPY (SUBSCRIBE ps AS OF :ts UP TO :te) TO STDOUT\n")
    assert r.returncode == 0, r.stderr
    assert sorted(line.split("\t")[1:] for line in r.stdout.splitlines()) == [["1", "1", "x"], ["1", "2", "\\N"]]


def test_asyncpg_binary_extended_protocol(served):
    asyncpg = pytest.importorskip("asyncpg")
    port, _ = served

    async def run():
        c = await asyncpg.connect(host="127.0.0.1", port=port, user="materialize", database="materialize")
        try:
            await c.execute("CREATE TABLE at (a int, b text, c numeric, d timestamptz)")
            await c.executemany("INSERT INTO at VALUES ($1, $2, $3, now())", [(1, "a", Decimal("1.5")),
                                                                              (2, "b", None)])
            rows = await c.fetch("SELECT a, b, c FROM at WHERE a >= $1 ORDER BY a", 1)
            assert [tuple(r) for r in rows] == [(1, "a", Decimal("1.5")), (2, "b", None)]
            st = await c.prepare("SELECT b FROM at WHERE a = $1")
            assert [p.name for p in st.get_parameters()] == ["int4"]
            assert await st.fetchval(2) == "b"
            assert (await c.fetchrow("SELECT d FROM at WHERE a = 1"))["d"].tzinfo is not None
            with pytest.raises(asyncpg.exceptions.DivisionByZeroError):
                await c.fetch("SELECT 1 / $1", 0)
            assert await c.fetchval("SELECT $1::int8 * 2", 21) == 42
        finally:
            await c.close()
    asyncio.run(run())


def test_two_sessions_share_one_database(served):
    """What two terminals need: a write from one psql is visible to the next."""
    port, _ = served
    assert psql(port, "-c", "CREATE TABLE shared (a int)").returncode == 0
    assert psql(port, "-c", "INSERT INTO shared VALUES (42)").returncode == 0
    assert psql(port, "-At", "-c", "SELECT a FROM shared").stdout.strip() == "42"


def test_sigterm_shuts_down_cleanly():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "repl.main", "serve", "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "listening" in proc.stdout.readline()
    r = psql(port, "-c", "SELECT 1")
    assert r.returncode == 0
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == 0
    err = proc.stderr.read()
    assert "shutting down" in err and "Traceback" not in err
    assert re.search(r"connection 1: materialize@materialize from 127\.0\.0\.1:\d+", err)


def test_serve_help_and_refusals():
    r = subprocess.run([sys.executable, "-m", "repl.main", "serve", "--help"], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0 and "--port" in r.stdout and "--password-file" in r.stdout
    r = subprocess.run([sys.executable, "-m", "repl.main", "serve", "--host", "0.0.0.0", "--port", "0"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "without authentication" in r.stderr


def test_slt_runner_through_the_server(served):
    """``mzlite slt --url`` runs our suites through the server (CI runs all of slt/test
    this way, interactive runtime on and off); here two files, SUBSCRIBE and cursors."""
    import slt
    port, _ = served
    url = f"postgres://materialize@127.0.0.1:{port}/materialize"
    assert slt.main(["--url", url, str(ROOT / "slt/test/subscribe.slt"), str(ROOT / "slt/test/cursors.slt")]) == 0


def test_psql_describe_family(served):
    """psql 15's \\dt, \\dv, \\dm, \\di, \\dn and \\l run their own pg_catalog queries and list
    mzlite's objects as PostgreSQL lists its own.  Sabotage seen red: pg_table_is_visible
    answering true for system relations listed mz_catalog's tables under \\dt."""
    port, _ = served
    r = psql(port, "-c", "CREATE TABLE dt_t (a int)", "-c", "CREATE VIEW dt_v AS SELECT a FROM dt_t",
             "-c", "CREATE MATERIALIZED VIEW dt_m AS SELECT count(*) FROM dt_t", "-c", "CREATE INDEX dt_i ON dt_t (a)")
    assert r.returncode == 0, r.stderr
    r = psql(port, "-c", r"\dt dt_*", "-c", r"\dv dt_*", "-c", r"\dm dt_*", "-c", r"\di dt_*", "-c", r"\dn", "-c", r"\l")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert " public | dt_t | table | materialize\n" in out
    assert " public | dt_v | view | materialize\n" in out
    assert " public | dt_m | materialized view | materialize\n" in out
    assert " public | dt_i | index | materialize | dt_t\n" in out
    assert "mz_tables" not in out
    assert " public      | materialize" in out and "List of databases" in out and " materialize |" in out


def test_serve_a_data_directory_survives_a_restart(tmp_path):
    """``mzlite serve DIR``: what a client wrote is there after SIGTERM and a new server."""
    def serve():
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "repl.main", "serve", str(tmp_path / "data"), "--port",
                                 str(port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert "listening" in proc.stdout.readline()
        return port, proc
    port, proc = serve()
    assert psql(port, "-c", "CREATE TABLE dur (a int)", "-c", "INSERT INTO dur VALUES (7)").returncode == 0
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    port, proc = serve()
    try:
        assert psql(port, "-At", "-c", "SELECT a FROM dur").stdout.strip() == "7"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
