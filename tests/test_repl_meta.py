"""Backslash commands and the cancellable executor, driven directly through ``Runner``."""
import _thread
import io
import threading

import pytest

from repl import format as fmt
from repl.main import Runner, fetch
from repl.shell import Cancelled, CancellableExecutor, handle
from tests.support.repl_standin import StandInConnection


def make_runner(conn=None):
    conn = conn or StandInConnection()
    out, err = io.StringIO(), io.StringIO()
    return Runner(conn, fmt.Settings(), out, err), out, err


def test_timing_prints_psql_time_line():
    r, out, _ = make_runner()
    handle(r, "\\timing on")
    handle(r, "select 1 as a;")
    text = out.getvalue()
    assert text.startswith("Timing is on.\n a \n---\n 1\n(1 row)\n\nTime: ")
    assert text.endswith(" ms\n")


def test_pset_null_and_unknown_option():
    r, out, err = make_runner()
    assert handle(r, "\\pset null (null)")
    handle(r, "select null as n;")
    assert out.getvalue() == 'Null display is "(null)".\n   n    \n--------\n (null)\n(1 row)\n\n'
    assert not handle(r, "\\pset bogus")
    assert "unknown option" in err.getvalue()


def test_set_and_echo_and_help():
    r, out, _ = make_runner()
    handle(r, "\\set name 'some value'")
    handle(r, "\\set")
    handle(r, "\\echo hello world")
    assert out.getvalue() == "name = 'some value'\nhello world\n"
    handle(r, "\\?")
    assert "\\watch" in out.getvalue()


def test_include_file(tmp_path):
    f = tmp_path / "inc.sql"
    f.write_text("create table t (a int);\ninsert into t values (3);\n")
    r, out, _ = make_runner()
    assert handle(r, f"\\i {f}")
    handle(r, "select a from t;")
    assert out.getvalue() == "CREATE TABLE\nINSERT 0 1\n a \n---\n 3\n(1 row)\n\n"


def test_describe_relation_and_list():
    r, out, err = make_runner()
    handle(r, "create table t (a int, b text); create view v as select a from t;")
    handle(r, "\\d")
    handle(r, "\\d t")
    assert err.getvalue() == ""
    assert out.getvalue() == (
        "CREATE TABLE\nCREATE VIEW\n"
        "List of relations\n Name | Type  \n------+-------\n t    | table\n v    | view\n(2 rows)\n\n"
        '      Relation "t"\n name | nullable | type \n------+----------+------\n'
        " a    | t        | int\n b    | t        | text\n(2 rows)\n\n")


def test_x_auto_and_toggle():
    r, out, _ = make_runner()
    handle(r, "\\x auto")
    handle(r, "\\x")
    handle(r, "\\x")
    assert out.getvalue() == ("Expanded display is used automatically.\nExpanded display is off.\n"
                              "Expanded display is on.\n")


def test_watch_needs_a_query():
    r, _, err = make_runner()
    assert not handle(r, "\\watch")
    assert "empty query" in err.getvalue()


def test_quit_words():
    r, _, _ = make_runner()
    handle(r, "quit")
    assert r.quit_requested


# ---------------------------------------------------------------- cancellation

class InterruptingConnection:
    """execute() interrupts the main thread (as Ctrl-C would) and then blocks until
    released; with ``can_cancel``, cancel() releases it with a 57014 error."""

    def __init__(self, can_cancel: bool):
        self.release = threading.Event()
        self.cancel_calls = 0
        if can_cancel:
            self.cancel = self._cancel

    def _cancel(self):
        self.cancel_calls += 1
        self.release.set()

    def execute(self, sql):
        _thread.interrupt_main()
        self.release.wait(30)
        if self.cancel_calls:
            from tests.support.repl_standin import StandInError
            raise StandInError("canceling statement due to user request", "57014")
        return StandInConnection().execute("select 1")


def test_ctrl_c_calls_cancel_and_reports_the_engine_error():
    conn = InterruptingConnection(can_cancel=True)
    err = io.StringIO()
    with pytest.raises(Exception) as exc:
        CancellableExecutor(lambda: conn, err)("select slow")
    assert conn.cancel_calls == 1
    assert exc.value.sqlstate == "57014"
    assert err.getvalue() == "Cancel request sent\n"


def test_ctrl_c_without_cancel_abandons_the_statement():
    conn = InterruptingConnection(can_cancel=False)
    err = io.StringIO()
    with pytest.raises(Cancelled):
        CancellableExecutor(lambda: conn, err)("select slow")
    assert err.getvalue() == ""
    conn.release.set()


def test_runner_reports_cancel_like_psql():
    conn = InterruptingConnection(can_cancel=True)
    out, err = io.StringIO(), io.StringIO()
    r = Runner(None, fmt.Settings(), out, err, executor=CancellableExecutor(lambda: conn, err))
    assert not r.run_statement("select slow")
    assert err.getvalue() == "Cancel request sent\nERROR:  canceling statement due to user request\n"
    assert fetch(StandInConnection(), "select 1 as a").rows == [(1,)]
