"""``mzlite.connect("postgresql://...")``: the embedded API over the wire, against ``mzlite serve``.

The conformance suites (test_pep249, test_api_errors, test_api_types) run on this connection
too (``API_TARGETS``; their differences are listed in tests/support/remote_targets.py); this
module tests the mechanisms only the remote connection has: which strings name a server,
what it refuses, ``?`` rewritten to ``$n`` (with error positions mapped back), the value
loaders and dumpers, COPY, executemany's one transaction, interrupt, and SUBSCRIBE over the
wire (the property: consolidated output at each time equals the view read AS OF that time).
Each mechanism's sabotage is named in its test's docstring.
"""
from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

psycopg = pytest.importorskip("psycopg")

import mzlite  # noqa: E402
from mzlite.oracle import ManualClock  # noqa: E402
from mzlite.remote import RemoteConnection, is_remote_target  # noqa: E402
from mzlite.remote_text import translate_placeholders  # noqa: E402
from mzlite.subscribe import Progress, Update  # noqa: E402
from server.listener import Server  # noqa: E402
from tests.support.wire import running_server  # noqa: E402

JOIN = 60  # seconds: a guard against hangs, never a timing assertion


@pytest.fixture(scope="module")
def srv():
    with running_server() as s:
        yield s


@pytest.fixture
def url(srv):
    return f"postgresql://materialize@127.0.0.1:{srv.port}/materialize"


@pytest.fixture
def con(url):
    c = mzlite.connect(url)
    yield c
    c.close()


_names = iter(range(10 ** 6))


@pytest.fixture
def t(con):
    """A fresh table ``tN (a int NOT NULL, b text)`` with rows 1..3; its name."""
    name = f"t{next(_names)}"
    con.execute(f"CREATE TABLE {name} (a int NOT NULL, b text)")
    con.execute(f"INSERT INTO {name} VALUES (1, 'x'), (2, 'y'), (3, NULL)")
    return name


# ------------------------------------------------------------------ connecting

def test_which_strings_name_a_server():
    for s in ("postgresql://u@h:1/d", "postgres://h", "POSTGRESQL://h", "host=h port=1", " port=5 host=h",
              "dbname=x"):
        assert is_remote_target(s), s
    for s in (":memory:", ":memory:x", None, "/tmp/data", "data=dir", "./host=x"):
        assert not is_remote_target(s), s


def test_url_and_keyword_strings_connect(srv):
    for s in (f"postgresql://materialize@127.0.0.1:{srv.port}/materialize",
              f"postgres://materialize@127.0.0.1:{srv.port}/materialize",
              f"host=127.0.0.1 port={srv.port} user=materialize dbname=materialize"):
        with mzlite.connect(s) as c:
            assert isinstance(c, RemoteConnection)
            assert c.execute("SELECT 1").fetchone() == (1,)
            assert c.database == "materialize"


def test_what_the_server_owns_is_refused(url):
    for kw in ({"clock": lambda: 0}, {"durability": "full"}, {"system_parameters": {"x": 1}}):
        with pytest.raises(mzlite.NotSupportedError) as e:
            mzlite.connect(url, **kw)
        assert e.value.sqlstate == "0A000" and next(iter(kw)) in str(e.value)
    with mzlite.connect(url) as c:
        with pytest.raises(mzlite.NotSupportedError):
            c.subscribe("SELECT 1", max_buffered=5)
        with pytest.raises(mzlite.NotSupportedError):
            c.autocommit = False
        with pytest.raises(mzlite.NotSupportedError):
            c.cursor().documents_as_python = False


def test_a_server_that_is_not_there_is_an_operational_error():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(mzlite.OperationalError) as e:
        mzlite.connect(f"postgresql://u:secret@127.0.0.1:{port}/d")
    assert e.value.sqlstate == "08001" and "secret" not in str(e.value)


def test_session_parameters_are_set(url):
    with mzlite.connect(url, session_parameters={"application_name": "it's me"}) as c:
        assert c.execute("SHOW application_name").fetchone() == ("it's me",)


def test_connect_opens_another_session(con, t):
    other = con.connect()
    try:
        con.execute("BEGIN")
        con.execute(f"INSERT INTO {t} VALUES (9, 'z')")
        assert other.execute(f"SELECT count(*) FROM {t}").fetchone() == (3,)  # not yet committed
        con.commit()
        assert other.execute(f"SELECT count(*) FROM {t}").fetchone() == (4,)
    finally:
        other.close()


# ------------------------------------------------------------------ placeholders and values

def test_question_marks_become_dollar_placeholders_outside_strings_and_operators():
    """Sabotage: rewriting every ``?`` character turned the literal's and the jsonb operator's
    into placeholders (red)."""
    assert translate_placeholders("SELECT ?, '?', \"?\" FROM t WHERE j ? 'k' AND a = ? -- ?")[0] == \
        "SELECT $1, '?', \"?\" FROM t WHERE j ? 'k' AND a = $2 -- ?"
    assert translate_placeholders("SELECT $1, ?")[0] == "SELECT $1, ?"  # $n used: left alone
    assert translate_placeholders("SELECT 1")[1] == ()


def test_error_positions_point_into_the_text_the_user_wrote(con, t):
    """Sabotage: not mapping the position back reported it 1 character too far per ``?``
    rewritten before it (there are 10 ``?``, so 9 characters off, red)."""
    sql = f"SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, nosuch FROM {t}"
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute(sql, tuple(range(10)))
    assert e.value.sqlstate == "42703" and sql[e.value.position - 1:].startswith("nosuch")


def test_values_come_back_as_the_embedded_cursor_returns_them(con):
    """Sabotage: without the int dumper ``SELECT ?`` with 1 was ``smallint``; without the
    mz_timestamp loader it came back as a str; without the infinity loader psycopg raised
    DataError on ``'infinity'::date`` (each red)."""
    from repr.dates import INFINITY, NEG_INFINITY
    cur = con.execute("SELECT ?, now()::mz_timestamp, 'infinity'::date, '-infinity'::timestamp, "
                      "'infinity'::timestamptz, '2024-01-02'::date", (1,))
    one, ts, d, t1, t2, day = cur.fetchone()
    assert [c[1] for c in cur.description][:3] == ["integer", "mz_timestamp", "date"]
    assert one == 1 and type(ts) is int and (d, t1, t2) == (INFINITY, NEG_INFINITY, INFINITY)
    assert str(day) == "2024-01-02"
    assert con.execute("SELECT ?", (2 ** 40,)).description[0][1] == "bigint"
    assert con.execute("SELECT ?", (2 ** 70,)).description[0][1] == "numeric"


def test_intervals_as_timedelta_false_gives_the_servers_text(con):
    """The shell's setting (it prints intervals with their months).  Sabotage: not registering
    the text loader gave a timedelta (red)."""
    cur = con.cursor()
    cur.intervals_as_timedelta = False
    assert cur.execute("SELECT interval '1 mon 2 days'").fetchone() == ("1 mon 2 days",)
    assert con.execute("SELECT interval '1 mon 2 days'").fetchone()[0].days == 32


def test_documents_bind_as_the_embedded_engine_binds_them(con):
    """A dict (and a list holding a list or dict) binds as jsonb, a tuple of scalars as an
    array.  Sabotage: passing dicts through unchanged made psycopg refuse them (red)."""
    row = con.execute("SELECT ?, ?, ?", ({"k": [1, 2.5]}, [[1, 2], {"a": None}], (1, 2))).fetchone()
    assert row == ({"k": [1, 2.5]}, [[1, 2], {"a": None}], [1, 2])


# ------------------------------------------------------------------ statements

def test_describe_gives_what_the_embedded_describe_gives(con, t):
    """Parse/Describe over the wire, without running the statement.  Sabotage: libpq's blocking
    ``PQprepare`` on psycopg's non-blocking connection hung (the per-test timeout, red)."""
    embedded = mzlite.connect()
    embedded.execute(f"CREATE TABLE {t} (a int NOT NULL, b text)")
    for sql in (f"SELECT a, b FROM {t} WHERE a = ?", f"INSERT INTO {t} VALUES ($1, $2)"):
        assert con.describe(sql) == embedded.describe(sql), sql
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.describe(f"SELECT nosuch FROM {t} WHERE a = ?")
    assert (e.value.sqlstate, e.value.position) == ("42703", 8)
    assert con.execute(f"SELECT count(*) FROM {t}").fetchone() == (3,)
    embedded.close()



def test_several_statements_return_the_last_result(con, t):
    cur = con.execute(f"INSERT INTO {t} VALUES (4, 'w'); SELECT count(*) FROM {t}")
    assert cur.fetchall() == [(4,)] and cur.statusmessage == "SELECT 1"


def test_executemany_inserts_commit_together(con, t):
    """Sabotage: without the BEGIN/COMMIT around an INSERT's parameter sets, the rows before
    the failing one stayed applied (count 5, red)."""
    with pytest.raises(mzlite.IntegrityError):
        con.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(5, "a"), (6, "b"), (None, "c")])
    assert con.execute(f"SELECT count(*) FROM {t}").fetchone() == (3,)
    assert not con.in_transaction
    assert con.executemany(f"INSERT INTO {t} VALUES (?, ?)", [(5, "a"), (6, "b")]).rowcount == 2


def test_executescript_keeps_the_statements_before_a_failing_one(con, t):
    with pytest.raises(mzlite.ProgrammingError):
        con.executescript(f"INSERT INTO {t} VALUES (7, ';'); SELECT nosuch FROM {t}; INSERT INTO {t} VALUES (8, 'q')")
    assert con.execute(f"SELECT a FROM {t} WHERE a > 3").fetchall() == [(7,)]


def test_copy_through_execute_is_refused_before_it_is_sent(con, t):
    """Sabotage: without the check, psycopg's execute left the session in COPY mode and every
    later statement failed ("another command is already in progress", red)."""
    for sql in (f"COPY {t} FROM STDIN", f"COPY {t} TO STDOUT", f"SELECT 1; SUBSCRIBE {t}"):
        with pytest.raises(mzlite.NotSupportedError) as e:
            con.execute(sql)
        assert e.value.sqlstate == "0A000"
        assert con.execute("SELECT 1").fetchone() == (1,)


def test_copy_in_and_out(con, t):
    cur = con.cursor()
    with cur.copy(f"COPY {t} FROM STDIN") as copy:
        copy.write(b"10\tten\n11\t\\N\n")
        copy.write_row((12, "twelve"))
    assert cur.statusmessage == "COPY 3" and cur.rowcount == 3
    with pytest.raises(RuntimeError):
        with cur.copy(f"COPY {t} FROM STDIN") as copy:
            copy.write_row((13, "no"))
            raise RuntimeError("changed my mind")
    with pytest.raises(mzlite.DataError):
        with cur.copy(f"COPY {t} FROM STDIN") as copy:
            copy.write(b"x\ty\n")
    with cur.copy(f"COPY (SELECT a, b FROM {t} WHERE a >= 10 ORDER BY a) TO STDOUT") as copy:
        rows = list(copy.rows())
    assert rows == [("10", "ten"), ("11", None), ("12", "twelve")]
    with cur.copy(f"COPY {t} TO STDOUT (FORMAT csv)") as copy:
        assert b"12,twelve\n" in b"".join(copy)
    with pytest.raises(mzlite.ProgrammingError):
        cur.copy("SELECT 1")
    assert con.execute("SELECT 1").fetchone() == (1,)


def test_interrupt_cancels_a_waiting_read(con, t):
    """Sabotage: an ``interrupt`` that does nothing left the read waiting until the
    statement_timeout backstop, whose message is another (red)."""
    con.execute("SET statement_timeout = '60s'")
    errors = []

    def read():
        try:
            con.execute(f"SELECT * FROM {t} AS OF 18446744073709551000")
        except mzlite.Error as e:
            errors.append(e)

    th = threading.Thread(target=read)
    th.start()
    while th.is_alive():  # a cancel that arrives before the statement starts cancels nothing: repeat
        con.interrupt()
        th.join(0.05)
    assert len(errors) == 1 and isinstance(errors[0], mzlite.QueryCanceled)
    assert "user request" in str(errors[0])
    assert con.execute(f"SELECT count(*) FROM {t}").fetchone() == (3,)


def test_close_from_another_thread_cancels_the_running_statement(url):
    """As embedded: the statement ends with an error (never hangs) and the connection is closed.
    (The cancel is what makes it prompt; without it the close still ends the statement, after
    waiting up to 10 s for it, so no sabotage of the cancel turns this test red.)"""
    con = mzlite.connect(url)
    con.execute("CREATE TABLE IF NOT EXISTS closing (x int)")
    con.execute("SET statement_timeout = '120s'")
    errors = []

    def read():
        try:
            con.execute("SELECT * FROM closing AS OF 18446744073709551000")
        except mzlite.Error as e:
            errors.append(e)

    from psycopg.pq import TransactionStatus
    th = threading.Thread(target=read)
    th.start()
    while th.is_alive() and con.pgconn.info.transaction_status != TransactionStatus.ACTIVE:
        th.join(0.01)
    while th.is_alive() and not con.closed:  # a cancel before the statement starts cancels nothing
        con.close()
    th.join(JOIN)
    assert not th.is_alive() and len(errors) == 1 and con.closed
    with pytest.raises(mzlite.InterfaceError):
        con.execute("SELECT 1")


def test_description_sizes_over_mzlite_serve(con):
    """``mzlite serve`` sends each column's type modifier (``atttypmod``), so the remote cursor
    reports the embedded one's sizes.  Sabotage: the server's RowDescription with -1 for every
    modifier (as before) gave None for numeric(5,2)'s precision and scale (red)."""
    embedded = mzlite.connect()
    name = f"sizes_{next(_names)}"
    ddl = f"CREATE TABLE {name} (n numeric(5,2), v varchar(3), c char(4), ts timestamp(3), i int, t text)"
    for c in (con, embedded):
        c.execute(ddl)
    want = [tuple(c) for c in embedded.execute(f"SELECT * FROM {name}").description]
    assert want[0][4:6] == (5, 2)
    assert [tuple(c) for c in con.execute(f"SELECT * FROM {name}").description] == want
    embedded.close()


def test_description_sizes_from_type_modifiers(postgres_spec):
    """A server that sends type modifiers (PostgreSQL) gives the embedded cursor's sizes.
    Sabotage: ignoring the wire's atttypmod gave None for every precision, scale and display size."""
    if postgres_spec is None:
        pytest.skip("PostgreSQL is not installed")
    host, port = postgres_spec.split(":")[:2]
    pg = mzlite.connect(f"host={host} port={port} user=postgres dbname=postgres")
    embedded = mzlite.connect()
    name = f"sizes_{next(_names)}_{id(pg)}"
    ddl = f"CREATE TABLE {name} (n numeric(5,2), v varchar(3), c char(4), ts timestamp(3), i int)"
    try:
        for c in (pg, embedded):
            c.execute(ddl)
        # the sizes (the type codes differ where mzlite's types do: varchar is text in mzlite)
        want = [(c[0],) + tuple(c[2:6]) for c in embedded.execute(f"SELECT * FROM {name}").description]
        assert want[0][3:5] == (5, 2) and want[1][1] == 3
        assert [(c[0],) + tuple(c[2:6]) for c in pg.execute(f"SELECT * FROM {name}").description] == want
    finally:
        pg.execute(f"DROP TABLE IF EXISTS {name}")
        pg.close()
        embedded.close()


# ------------------------------------------------------------------ subscribe

def test_subscribe_through_execute_streams_on_a_session_of_its_own(con, t):
    """The cursor's rows are SUBSCRIBE's (mz_timestamp, mz_diff, columns); fetchmany waits for
    at least one; the connection stays free meanwhile; closing the cursor ends the stream.
    Sabotage: running the SUBSCRIBE on the connection's own session made the INSERT below wait
    behind the stream (the per-test timeout, red)."""
    cur = con.cursor()
    cur.execute(f"SUBSCRIBE {t}")
    assert [d[0] for d in cur.description] == ["mz_timestamp", "mz_diff", "a", "b"]
    assert cur.description[0][1] == "mz_timestamp" and cur.statusmessage == "SUBSCRIBE"
    snap = []
    while len(snap) < 3:
        snap += cur.fetchmany(10)
    assert sorted(r[2:] for r in snap) == [(1, "x"), (2, "y"), (3, None)] and {r[1] for r in snap} == {1}
    with pytest.raises(mzlite.ProgrammingError):
        cur.fetchall()  # no UP TO: it would never return
    con.execute(f"INSERT INTO {t} VALUES (4, 'new')")
    assert cur.fetchone()[1:] == (1, 4, "new")
    cur.close()
    now = con.execute("SELECT mz_now()").fetchone()[0]
    rows = con.execute(f"SUBSCRIBE {t} AS OF {now} UP TO {now + 1}").fetchall()
    assert len(rows) == 4



def test_subscribe_streams_updates_and_progress(con, t):
    with con.subscribe(t, progress=True) as sub:
        first = []
        while sum(isinstance(u, Update) for u in first) < 3:
            first += sub.fetch(timeout=None)
        snap = [u for u in first if isinstance(u, Update)]
        assert sorted(u.row for u in snap) == [(1, "x"), (2, "y"), (3, None)]
        con.execute(f"DELETE FROM {t} WHERE a = 1")
        got = []
        while not any(isinstance(u, Update) for u in got):
            got += sub.fetch(timeout=5.0)
        (upd,) = [u for u in got if isinstance(u, Update)]
        assert upd.diff == -1 and upd.row == (1, "x") and upd.timestamp > snap[0].timestamp
        assert any(isinstance(p, Progress) for p in first + got)
        assert sub.frontier is not None


def test_subscribe_up_to_ends_and_without_progress_hands_out_only_updates(con, t):
    now = con.execute("SELECT mz_now()").fetchone()[0]
    con.execute(f"INSERT INTO {t} VALUES (20, 'late')")
    items = list(con.subscribe(f"SELECT a FROM {t}", as_of=now, up_to=now + 1))
    assert all(isinstance(u, Update) for u in items) and sorted(u.row for u in items) == [(1,), (2,), (3,)]


@pytest.fixture
def frozen_url():
    """The URL of a server whose time stands still (a ``ManualClock``): a FETCH waits until
    something ends it, never woken by progress."""
    engine = mzlite.connect(clock=ManualClock(10_000))
    srv = Server(engine, "127.0.0.1", 0)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield f"postgresql://materialize@127.0.0.1:{srv.port}/materialize"
    srv.shutdown()
    th.join(10)


def test_close_from_another_thread_ends_a_waiting_fetch(frozen_url):
    """The fetch ends (with ``InterfaceError`` or nothing) and the subscription's server session
    is closed.  Sabotage: a close that did not end the session left it open (red)."""
    con = mzlite.connect(frozen_url)
    con.execute("CREATE TABLE w (a int)")
    sub = con.subscribe("w", snapshot=False)
    outcome = []

    def wait():
        try:
            outcome.append(sub.fetch(timeout=None))
        except mzlite.Error as e:
            outcome.append(e)

    from psycopg.pq import TransactionStatus
    while sub._fetch_rows(0.0):  # read the progress rows there are: the next FETCH has nothing to return
        pass
    th = threading.Thread(target=wait)
    th.start()
    while th.is_alive() and sub._session.pgconn.info.transaction_status != TransactionStatus.ACTIVE:
        th.join(0.01)  # until the FETCH is on its way to the server
    sub.close()
    th.join(JOIN)
    assert not th.is_alive() and len(outcome) == 1 and sub._session.closed
    assert outcome[0] == [] or isinstance(outcome[0], mzlite.InterfaceError)
    con.close()


VIEWS = {
    "aggregate": "SELECT a, count(*) AS n, sum(b) AS s FROM t GROUP BY a",
    "temporal": "SELECT a, b FROM t WHERE mz_now() <= 10005 + 4 * b AND mz_now() >= 10000 + a",
}
OPS = st.lists(st.one_of(
    st.tuples(st.just("insert"), st.integers(0, 3), st.integers(0, 3)),
    st.tuples(st.just("delete"), st.integers(0, 3), st.just(0)),
    st.tuples(st.just("tick"), st.integers(1, 6), st.just(0)),
), min_size=1, max_size=8)


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(view=st.sampled_from(sorted(VIEWS)), kind=st.sampled_from(["view", "materialized"]), ops=OPS)
def test_subscribe_over_the_wire_equals_the_view_as_of_each_time(view, kind, ops):
    """Every update the remote subscription delivered with a timestamp ``<= T``, summed, is the
    view read ``AS OF T`` (through the same remote connection), for every time it reported.
    Sabotage: building ``Update`` rows from ``row[2:]`` (the diff column kept in the row) and
    dropping the diff's sign each went red."""
    clock = ManualClock(10_000)
    engine = mzlite.connect(system_parameters={"compaction_window_ms": 10 ** 9}, clock=clock)
    srv = Server(engine, "127.0.0.1", 0)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    con = mzlite.connect(f"postgresql://materialize@127.0.0.1:{srv.port}/materialize")
    try:
        con.execute("CREATE TABLE t (a int, b int)")
        con.execute("INSERT INTO t VALUES (1, 1), (2, 3)")
        con.execute(f"CREATE {'MATERIALIZED ' if kind == 'materialized' else ''}VIEW v AS {VIEWS[view]}")
        sub = con.subscribe("v")
        for op, x, y in ops:
            if op == "insert":
                con.execute("INSERT INTO t VALUES (?, ?)", (x, y))
            elif op == "delete":
                con.execute("DELETE FROM t WHERE a = ?", (x,))
            else:
                clock.advance(x)
                engine.database.tick()
        end = con.execute("SELECT mz_now()").fetchone()[0]
        got = []
        deadline = time.monotonic() + JOIN
        while True:
            got.extend(sub.fetch(timeout=0.5))
            if sub.frontier is not None and sub.frontier > end:
                break
            assert time.monotonic() < deadline, f"subscription stuck at {sub.frontier}"
        sub.close()
        ups = [u for u in got if isinstance(u, Update)]
        assert [u.timestamp for u in ups] == sorted(u.timestamp for u in ups), "out of time order"
        for ts in sorted({end} | {u.timestamp for u in ups if u.timestamp <= end}):
            acc = Counter()
            for u in ups:
                if u.timestamp <= ts:
                    acc[u.row] += u.diff
            assert all(c >= 0 for c in acc.values()), (ts, acc)
            want = Counter(con.execute(f"SELECT * FROM v AS OF {ts}").fetchall())
            assert +acc == want, (ts, sorted(acc.elements()), sorted(want.elements()))
    finally:
        con.close()
        srv.shutdown()
        th.join(10)
