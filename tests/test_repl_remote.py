"""The shell against a server: ``mzlite postgresql://...`` and psql's ``-h/-p/-U/-d``.

A pseudo-terminal session (pexpect) against an in-process ``mzlite serve``: completion from
the server's catalog, ``\\d``, an error with its caret, SUBSCRIBE streamed until Ctrl-C and the
next statement after it; batch mode through -h/-p/-U/-d; which target the flags name.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from repl.main import build_parser, target
from tests.support.wire import running_server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPT = "mzlite=>"


@pytest.fixture(scope="module")
def srv():
    with running_server() as s:
        yield s


def _args(*argv) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def test_flags_name_the_server_as_psql_does(monkeypatch):
    """Sabotage: keeping argparse's -h for help made ``-h HOST`` an error (red)."""
    monkeypatch.delenv("PGUSER", raising=False)
    assert target(_args()) is None
    assert target(_args("/tmp/data")) == "/tmp/data"
    assert target(_args("postgresql://u@h:1/d")) == "postgresql://u@h:1/d"
    assert target(_args("-h", "db.example", "-p", "6876", "-U", "ann", "shop")) == \
        "host=db.example port=6876 user=ann dbname=shop"
    assert target(_args("-h", "h", "-d", "x")) == "host=h port=6875 user=materialize dbname=x"
    assert target(_args("-d", "postgres://h/x")) == "postgres://h/x"


def test_help_is_still_there():
    r = subprocess.run([sys.executable, "-m", "repl.main", "--help"], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "-h HOST, --host HOST" in r.stdout


def test_batch_mode_through_psqls_flags(srv):
    r = subprocess.run([sys.executable, "-m", "repl.main", "-h", "127.0.0.1", "-p", str(srv.port), "-U",
                        "materialize", "-d", "materialize", "-c", "CREATE TABLE bt (a int)",
                        "-c", "INSERT INTO bt VALUES (7)", "-c", "SELECT a FROM bt", "-c", "SELECT * FROM nosuch"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert r.stdout == "CREATE TABLE\nINSERT 0 1\n a \n---\n 7\n(1 row)\n\n"
    assert "ERROR:  unknown catalog item 'nosuch'\nLINE 1: SELECT * FROM nosuch\n" in r.stderr


def test_pty_session_against_a_server(srv, tmp_path):
    """Completion names come from the server's catalog, ``\\d`` describes a server's table, an
    error prints its caret, SUBSCRIBE streams until Ctrl-C and the shell goes on."""
    pexpect = pytest.importorskip("pexpect")
    env = dict(os.environ, MZLITE_HISTORY=str(tmp_path / "hist"), TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1",
               PAGER="cat")
    url = f"postgresql://materialize@127.0.0.1:{srv.port}/materialize"
    child = pexpect.spawn(sys.executable, ["-m", "repl.main", url], cwd=ROOT, env=env, encoding="utf-8",
                          timeout=60, dimensions=(40, 120))
    child.expect_exact(PROMPT)
    child.send("CREATE TABLE remote_orders (a int); INSERT INTO remote_orders VALUES (41);\r")
    child.expect_exact("INSERT 0 1")
    child.expect_exact(PROMPT)
    child.send("\\d remote_orders\r")
    child.expect_exact('Relation "remote_orders"')
    child.expect_exact("integer")
    child.expect_exact(PROMPT)
    child.send("SELECT a FROM remote_ord")
    child.send("\t")
    child.expect_exact("remote_orders")
    child.send(";\r")
    child.expect_exact("41")
    child.expect_exact("(1 row)")
    child.expect_exact(PROMPT)
    child.send("SELECT * FROM nosuch;\r")
    child.expect_exact("ERROR:  unknown catalog item 'nosuch'")
    child.expect_exact("^")
    child.expect_exact(PROMPT)
    child.send("SUBSCRIBE remote_orders;\r")
    child.expect_exact("mz_timestamp | mz_diff | a")
    child.expect(r"\d+ \|       1 \| 41")
    child.sendintr()
    child.expect_exact(PROMPT)
    child.send("SELECT 1 AS after;\r")
    child.expect_exact("(1 row)")
    child.expect_exact(PROMPT)
    child.send("\\q\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
