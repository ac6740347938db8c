"""Streaming SUBSCRIBE in the ``mzlite`` command (``repl.stream``).

In-process tests drive ``stream_statement`` with a fake streaming cursor whose ``fetchmany``
blocks like the engine's; subprocess/pty tests run the real engine (skipped, with the
reason, when ``mzlite.connect()`` does not work).  No sleeps: every wait is for an event or
for expected output, with a timeout."""
import _thread
import io
import os
import queue
import re
import subprocess
import sys
import threading

import pytest

from repl import format as fmt
from repl import stream
from repl.main import Runner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WAIT = 10.0


class FakeStreamCursor:
    """``fetchmany`` returns the next scripted batch; a callable batch is called (it may
    block or interrupt); the script running out means the stream ended."""

    def __init__(self, names, script):
        self.description = [(n, "bigint" if n != "mz_progressed" else "boolean", None, None, None, None, None)
                            for n in names]
        self.statusmessage = "SUBSCRIBE"
        self.script = list(script)
        self.closed = False
        self.fetches = 0

    def fetchmany(self, n):
        self.fetches += 1
        if not self.script:
            return []
        step = self.script[0] if callable(self.script[0]) and getattr(self.script[0], "repeat", False) \
            else self.script.pop(0)
        return step() if callable(step) else step

    def close(self):
        self.closed = True


class FakeStreamConnection:
    def __init__(self, cursor):
        self.cursor = cursor
        self.executed = []

    def execute(self, sql):
        self.executed.append(sql)
        return self.cursor


NAMES = ["mz_timestamp", "mz_progressed", "mz_diff", "a"]


def test_rows_print_before_the_stream_ends():
    """Sabotage: read the whole stream before printing (collect every fetchmany batch, then
    write) -> the second fetch fails because row 1 was not on screen yet."""
    printed = threading.Event()

    def second_batch():
        if not printed.wait(WAIT):
            raise AssertionError("row 1 was not printed before the stream went on")
        return [(2, False, 1, 20)]
    cur = FakeStreamCursor(NAMES, [[(1, False, 1, 10)], second_batch])
    out = []

    def write(text):
        out.append(text)
        if " 10" in text:
            printed.set()
    stream.stream_statement(FakeStreamConnection(cur), "SUBSCRIBE t", fmt.Settings(), write)
    text = "".join(out)
    assert text == ("  mz_timestamp | mz_diff | a\n---------------+---------+----\n"
                    "             1 |       1 | 10\n             2 |       1 | 20\n(2 rows)\n\n")
    assert cur.closed


def test_progress_is_asked_for_and_not_shown():
    """The shell asks for progress rows (so a stream stays interruptible) but shows none: the
    user asked for none (it printed a frontier line four times a second).  Sabotage:
    ``with_progress`` returning the statement unchanged -> the executed SQL has no PROGRESS
    and the mz_progressed column shows up as data."""
    cur = FakeStreamCursor(NAMES, [[(1, False, 1, 10), (2, True, None, None)], [(3, True, None, None)],
                                   [(4, True, None, None)]])
    conn = FakeStreamConnection(cur)
    out = []
    stream.stream_statement(conn, "SUBSCRIBE t", fmt.Settings(tuples_only=True), out.append)
    assert conn.executed == ["SUBSCRIBE t WITH (PROGRESS)"]
    assert "".join(out) == "             1 |       1 | 10\n"


def test_header_is_sized_by_the_snapshot():
    """The header waits for the first batch and is as wide as its values (it was fixed from
    the column names, so wide rows did not line up with it).  Sabotage: ``StreamPrinter.fit``
    doing nothing -> the header's ``a`` column is one wide."""
    cur = FakeStreamCursor(NAMES, [[(1, False, 1, "a long value"), (2, True, None, None)]])
    out = []
    stream.stream_statement(FakeStreamConnection(cur), "SUBSCRIBE t", fmt.Settings(), out.append)
    lines = "".join(out).split("\n")
    assert lines[0] == "  mz_timestamp | mz_diff |      a"
    assert lines[1] == "---------------+---------+--------------"
    assert lines[2] == "             1 |       1 | a long value"


@pytest.mark.parametrize("sql, expected", [
    ("SUBSCRIBE t", "SUBSCRIBE t WITH (PROGRESS)"),
    ("subscribe to (select 1 as with) up to 5", "subscribe to (select 1 as with) WITH (PROGRESS) up to 5"),
    ("SUBSCRIBE t WITH (SNAPSHOT = false) AS OF 3", "SUBSCRIBE t WITH (PROGRESS, SNAPSHOT = false) AS OF 3"),
    ("SUBSCRIBE t WITH (PROGRESS = false)", "SUBSCRIBE t WITH (PROGRESS = false)"),
    ("SUBSCRIBE t WITH (snapshot, progress)", "SUBSCRIBE t WITH (snapshot, progress)"),
    ("SUBSCRIBE (SELECT progress FROM jobs)", "SUBSCRIBE (SELECT progress FROM jobs) WITH (PROGRESS)"),
    ("SUBSCRIBE (SELECT 'as of' AS x) -- up to\n", "SUBSCRIBE (SELECT 'as of' AS x) -- up to\nWITH (PROGRESS)"),
])
def test_with_progress(sql, expected):
    assert stream.with_progress(sql) == expected


def test_is_subscribe():
    assert stream.is_subscribe("/* c */ subscribe t")
    assert not stream.is_subscribe("select 'subscribe'")


def test_ctrl_c_stops_the_stream_and_closes_the_cursor():
    """Sabotage: drop ``cur.close()`` from the worker (or never set ``stop``) -> the cursor
    stays open (the subscription would keep running)."""
    interrupted = []

    def tick():
        if not interrupted:
            interrupted.append(1)
            _thread.interrupt_main()  # what Ctrl-C does to the printing thread
        return [(5, True, None, None)]
    tick.repeat = True  # a live stream: a progress row per fetch, forever
    cur = FakeStreamCursor(NAMES, [[(1, False, 1, 10)], tick])
    out = []
    with pytest.raises(KeyboardInterrupt):
        stream.stream_statement(FakeStreamConnection(cur), "SUBSCRIBE t", fmt.Settings(), out.append)
    assert cur.closed
    assert not any(t.startswith("(") for t in out)  # no footer: it did not end by itself


def test_ctrl_c_while_streaming_is_a_flag_the_loop_raises_between_queue_operations(monkeypatch):
    """Ctrl-C arriving while the printing thread is inside ``Queue.get`` does not interrupt the
    get (whose lock it could leave held): it is raised between queue operations, the cursor is
    closed, and the previous SIGINT handler is back afterwards.
    Sabotage: make ``_SigintFlag.__init__`` install nothing -> the interrupt lands inside
    ``get`` and ``completed`` misses a get."""
    import signal
    started, completed = [], []

    class InterruptingQueue(queue.Queue):
        def get(self, block=True, timeout=None):
            started.append(1)
            if len(started) == 3:
                _thread.interrupt_main()  # Ctrl-C, delivered while inside get
            for _ in range(1000):  # Python bytecode: where a raised interrupt would land
                pass
            try:
                return super().get(block, timeout)
            finally:
                completed.append(1)  # not reached when an interrupt lands above

    monkeypatch.setattr(stream.queue, "Queue", InterruptingQueue)

    def tick():
        return [(5, True, None, None)]
    tick.repeat = True
    cur = FakeStreamCursor(NAMES, [[(1, False, 1, 10)], tick])
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        stream.stream_statement(FakeStreamConnection(cur), "SUBSCRIBE t", fmt.Settings(), [].append)
    assert len(completed) == len(started) >= 3
    assert cur.closed
    assert signal.getsignal(signal.SIGINT) is before


def test_engine_error_is_reported_and_session_goes_on():
    class Boom(Exception):
        sqlstate, position, message = "XX000", None, "subscribe has been terminated"

    def fail():
        raise Boom("subscribe has been terminated")
    cur = FakeStreamCursor(NAMES, [fail])
    out, err = io.StringIO(), io.StringIO()
    r = Runner(FakeStreamConnection(cur), fmt.Settings(), out, err)
    assert not r.run_statement("SUBSCRIBE t")
    assert err.getvalue() == "ERROR:  subscribe has been terminated\n"
    assert cur.closed


# ---------------------------------------------------------------- real engine

def _engine_works():
    try:
        import mzlite
        conn = mzlite.connect()
        ok = conn.execute("SELECT 1 + 1").fetchall() == [(2,)]
        conn.close()
        return ok, "engine answered SELECT 1 + 1 wrongly"
    except Exception as exc:  # noqa: BLE001
        return False, f"mzlite engine not ready yet: {type(exc).__name__}: {exc}"


ENGINE_OK, ENGINE_REASON = _engine_works()
needs_engine = pytest.mark.skipif(not ENGINE_OK, reason=ENGINE_REASON)


@needs_engine
def test_batch_subscribe_that_ends_prints_rows_and_exits():
    """Sabotage: fetch SUBSCRIBE with fetchall as before -> ProgrammingError for unbounded,
    and here the table layout (frontier-free, footer) differs."""
    r = subprocess.run([sys.executable, "-m", "repl.main", "-c",
                        "SUBSCRIBE (SELECT 1 AS x); SELECT 2 AS y"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stderr) == (0, "")
    assert re.fullmatch(r"  mz_timestamp \| mz_diff \| x\n---------------\+---------\+---\n"
                        r" +\d+ \|       1 \| 1\n\(1 row\)\n\n y \n---\n 2\n\(1 row\)\n\n", r.stdout), r.stdout


@needs_engine
def test_pty_subscribe_streams_until_ctrl_c_then_next_query_works(tmp_path):
    """Sabotage: remove the SUBSCRIBE branch in ``Runner.run_statement`` -> the shell prints
    fetchall's ProgrammingError instead of the row."""
    pexpect = pytest.importorskip("pexpect")
    env = dict(os.environ, MZLITE_HISTORY=str(tmp_path / "hist"), TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1",
               PAGER="cat")
    child = pexpect.spawn(sys.executable, ["-m", "repl.main"], cwd=ROOT, env=env, encoding="utf-8",
                          timeout=60, dimensions=(40, 120))
    child.expect_exact("mzlite=>")
    child.send("CREATE TABLE t (a int); INSERT INTO t VALUES (41);\r")
    child.expect_exact("INSERT 0 1")
    child.expect_exact("mzlite=>")
    child.send("SUBSCRIBE t;\r")
    child.expect_exact("mz_timestamp | mz_diff | a")
    child.expect(r"\d+ \|       1 \| 41")
    child.sendintr()
    child.expect_exact("mzlite=>")
    child.send("SELECT 1 AS after;\r")
    child.expect_exact("(1 row)")
    child.expect_exact("mzlite=>")
    child.send("\\q\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
