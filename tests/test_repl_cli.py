"""The batch command line (``mzlite -c``, ``-f``, stdin, exit statuses, formats).

In-process tests drive ``repl.main.main`` against the sqlite-backed stand-in connection;
subprocess tests run ``python -m repl.main`` against the real engine and are skipped (with
the reason) while ``mzlite.connect()`` does not work yet."""
import io
import os
import subprocess
import sys

import pytest

import repl.main as cli
from tests.support.repl_standin import StandInConnection

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def run(monkeypatch):
    """run(argv, stdin='') -> (status, stdout, stderr, connection)"""
    def _run(argv, stdin=""):
        conn = StandInConnection()
        seen = {}

        def fake_connect(path, params):
            seen["path"], seen["params"] = path, params
            return conn
        monkeypatch.setattr(cli, "connect", fake_connect)
        out, err = io.StringIO(), io.StringIO()
        fake_in = io.StringIO(stdin)
        fake_in.isatty = lambda: False
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        monkeypatch.setattr(sys, "stdin", fake_in)
        status = cli.main(argv)
        conn.seen = seen
        return status, out.getvalue(), err.getvalue(), conn
    return _run


def test_select_prints_psql_table(run):
    status, out, err, _ = run(["-c", "SELECT 1 + 1 AS x"])
    assert (status, err) == (0, "")
    assert out == " x \n---\n 2\n(1 row)\n\n"


def test_several_statements_and_command_tags(run):
    status, out, err, conn = run(["-c", "create table t (a int); insert into t values (1), (2); select a from t"])
    assert status == 0, err
    assert out == "CREATE TABLE\nINSERT 0 2\n a \n---\n 1\n 2\n(2 rows)\n\n"
    assert conn.closed


def test_error_exits_1_with_caret_relative_to_whole_command(run):
    status, out, err, _ = run(["-c", "select 1;\nselect * from\nnosuch; select 2"])
    assert status == 1
    assert out == " 1 \n---\n 1\n(1 row)\n\n"  # stops at the first error
    assert err == 'ERROR:  relation "nosuch" does not exist\nLINE 3: nosuch; select 2\n        ^\n'


def test_file_goes_on_after_an_error_unless_on_error_stop(run, tmp_path):
    """As psql: a file goes on after a failing statement (status 0); with ON_ERROR_STOP set
    (``-v``) it stops there, status 3.  Sabotage seen red: ``run_batch`` passing
    ``stop_on_error=True`` again (the statement after the error did not run)."""
    f = tmp_path / "s.sql"
    f.write_text("create table t (a int);\n-- a ; comment\ninsert into t values (1);\n"
                 "select * from\n  nosuch;\nselect 'reached';\n")
    status, out, err, conn = run(["-f", str(f)])
    assert status == 0
    assert out.startswith("CREATE TABLE\nINSERT 0 1\n") and " reached\n(1 row)\n" in out
    assert err == (f'mzlite:{f}:5: ERROR:  relation "nosuch" does not exist\n'
                   "LINE 2:   nosuch\n          ^\n")
    status, out, err, conn = run(["-v", "ON_ERROR_STOP=1", "-f", str(f)])
    assert status == 3
    assert out == "CREATE TABLE\nINSERT 0 1\n"
    assert not any("reached" in s for s in conn.executed)


def test_inline_backslash_commands_end_the_statement(run):
    """``SELECT 1 \\g``, ``\\gx`` and a trailing ``\\watch`` end the statement and run it
    (they were swallowed into the SQL: a syntax error at "\\").  Sabotage seen red:
    ``scan`` ignoring ``backslash``."""
    status, out, err, _ = run([], stdin="SELECT 1 AS a \\g\nSELECT 2 AS b \\gx\nSELECT 3 AS c \\watch count=1\n")
    assert (status, err) == (0, "")
    assert " a \n---\n 1\n(1 row)\n" in out
    assert "-[ RECORD 1 ]\nb | 2\n" in out
    assert " c \n---\n 3\n(1 row)\n" in out


def test_json_output_has_no_command_tags(run):
    status, out, err, _ = run(["--format", "json", "-c", "create table t (a int); insert into t values (1); "
                                                         "select a from t"])
    assert (status, err) == (0, "")
    assert out == '[{"a": 1}]\n'


def test_version(capsys):
    import mzlite
    with pytest.raises(SystemExit) as ei:
        cli.main(["--version"])
    assert ei.value.code == 0 and capsys.readouterr().out == f"mzlite {mzlite.__version__}\n"


def test_missing_file(run):
    status, out, err, _ = run(["-f", "/nonexistent/x.sql"])
    assert status == 1 and "/nonexistent/x.sql" in err


def test_c_and_f_run_in_order(run, tmp_path):
    f = tmp_path / "s.sql"
    f.write_text("insert into t values (5);")
    status, out, err, _ = run(["-c", "create table t (a int)", "-f", str(f), "-c", "select a from t"])
    assert status == 0, err
    assert out == "CREATE TABLE\nINSERT 0 1\n a \n---\n 5\n(1 row)\n\n"


def test_stdin_runs_like_a_file(run):
    status, out, err, _ = run([], stdin="select 7 as n;\nselect 'a;b' as s;\n")
    assert status == 0, err
    assert out == " n \n---\n 7\n(1 row)\n\n  s  \n-----\n a;b\n(1 row)\n\n"


def test_formats(run):
    q = ["-c", "select 1 as a, 'x' as b"]
    assert run(["--format", "csv"] + q)[1] == "a,b\n1,x\n"
    assert run(["--csv"] + q)[1] == "a,b\n1,x\n"
    assert run(["--format", "tsv"] + q)[1] == "a\tb\n1\tx\n"
    assert run(["--format", "json"] + q)[1] == '[{"a": 1, "b": "x"}]\n'
    assert run(["-x"] + q)[1] == "-[ RECORD 1 ]\na | 1\nb | x\n\n"
    assert run(["-t"] + q)[1] == " 1 | x\n\n"


def test_path_and_system_parameters_reach_connect(run):
    status, _, _, conn = run(["/tmp/db", "--system-parameter", "a=1", "--system-parameter",
                              "enable_compute_interactive_runtime=off", "-c", "select 1"])
    assert status == 0
    assert conn.seen == {"path": "/tmp/db",
                         "params": {"a": "1", "enable_compute_interactive_runtime": "off"}}


def test_bad_system_parameter_is_usage_error(run):
    with pytest.raises(SystemExit) as exc:
        run(["--system-parameter", "novalue", "-c", "select 1"])
    assert exc.value.code == 2


def test_meta_commands_in_scripts(run):
    status, out, err, _ = run(["-c", "create table t (a int)", "-c", "\\dt", "-c", "\\x on", "-c", "select 1 as a"])
    assert status == 0, err
    assert out == ("CREATE TABLE\n name \n------\n t\n(1 row)\n\nExpanded display is on.\n"
                   "-[ RECORD 1 ]\na | 1\n\n")


def test_slt_dispatch(monkeypatch):
    import types
    seen = []
    fake = types.ModuleType("slt")
    fake.main = lambda argv: seen.append(argv) or 3
    monkeypatch.setitem(sys.modules, "slt", fake)
    assert cli.main(["slt", "a.slt", "--flag"]) == 3
    assert seen == [["a.slt", "--flag"]]


def test_connect_failure_exits_1(monkeypatch, capsys):
    def boom(path, params):
        raise OSError("disk on fire")
    monkeypatch.setattr(cli, "connect", boom)
    assert cli.main(["-c", "select 1"]) == 1
    assert "disk on fire" in capsys.readouterr().err


# ---------------------------------------------------------------- real engine, subprocess

def _engine_works():
    try:
        import mzlite
        conn = mzlite.connect()
        cur = conn.execute("SELECT 1 + 1")
        ok = cur.fetchall() == [(2,)]
        conn.close()
        return ok, "engine answered SELECT 1 + 1 wrongly"
    except Exception as exc:  # noqa: BLE001
        return False, f"mzlite engine not ready yet: {type(exc).__name__}: {exc}"


ENGINE_OK, ENGINE_REASON = _engine_works()
needs_engine = pytest.mark.skipif(not ENGINE_OK, reason=ENGINE_REASON)


def mzlite_cmd(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "repl.main", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=120)


@needs_engine
def test_real_select_1_plus_1():
    r = mzlite_cmd("-c", "SELECT 1 + 1")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == " ?column? \n----------\n        2\n(1 row)\n\n"


@needs_engine
def test_real_ddl_dml_and_error():
    r = mzlite_cmd("-c", "CREATE TABLE t (a int); INSERT INTO t VALUES (1); SELECT a FROM t")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == "CREATE TABLE\nINSERT 0 1\n a \n---\n 1\n(1 row)\n\n"
    r = mzlite_cmd("-c", "SELECT * FROM nosuch")
    assert r.returncode == 1
    assert r.stderr.startswith("ERROR:  ")


def test_help_does_not_need_the_engine():
    r = mzlite_cmd("--help")
    assert r.returncode == 0 and "--system-parameter" in r.stdout


@needs_engine
def test_real_file_and_stdin(tmp_path):
    f = tmp_path / "s.sql"
    f.write_text("CREATE TABLE t (a int, b text);\nINSERT INTO t VALUES (1, 'x'), (2, NULL);\n"
                 "SELECT a, b FROM t ORDER BY a;\n")
    r = mzlite_cmd("-f", str(f))
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == ("CREATE TABLE\nINSERT 0 2\n a | b \n---+---\n 1 | x\n 2 | \n(2 rows)\n\n")
    r = mzlite_cmd(stdin="SELECT 1 AS a;\nSELECT * FROM nosuch;\nSELECT 2 AS b;\n")
    assert r.returncode == 0  # psql goes on after an error unless ON_ERROR_STOP is set
    assert r.stdout == " a \n---\n 1\n(1 row)\n\n b \n---\n 2\n(1 row)\n\n"
    assert r.stderr.startswith("mzlite:<stdin>:2: ERROR:  ")


@needs_engine
def test_real_system_parameter():
    r = mzlite_cmd("--system-parameter", "enable_compute_interactive_runtime=off",
                   "-c", "SHOW enable_compute_interactive_runtime", "--format", "csv")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == "enable_compute_interactive_runtime\noff\n"


def test_restore_is_refused_not_taken_for_a_directory(run, tmp_path, monkeypatch):
    """``mzlite restore`` (a dump replays with ``mzlite -f``) says it is not there, exit
    status 2, instead of creating and opening a data directory named ``restore``;
    ``./restore`` still opens one.  Sabotage seen red: ``main`` without the
    ``_SUBCOMMANDS_NOT_HERE`` check (connect was called with the path "dump")."""
    monkeypatch.chdir(tmp_path)
    status, out, err, conn = run(["restore"])
    assert status == 2 and "'mzlite restore' is not supported yet" in err and "./restore" in err
    assert conn.seen == {} and list(tmp_path.iterdir()) == []
    status, out, err, conn = run(["./restore", "-c", "SELECT 1"])
    assert status == 0 and conn.seen["path"] == "./restore"
