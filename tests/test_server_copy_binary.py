"""COPY's binary format over the wire: ``COPY t TO STDOUT (FORMAT BINARY)`` byte for byte
against PostgreSQL 15 (``tests/support/postgres.py``) for the types both have, PostgreSQL's
binary COPY output loaded into mzlite with ``COPY t FROM STDIN (FORMAT BINARY)``, psycopg's
``set_types`` / ``write_row`` / ``read_row`` round trip for every mzlite type, malformed
input refused with PostgreSQL's SQLSTATEs, and the embedded API's clear refusal.

Sabotages seen red: the header sent without its header-extension length (every byte
comparison and psycopg's reader failed); ``BinaryCopyIn`` not checking the field count
(``test_malformed_binary_input_is_refused_as_postgres_does[field-count]`` loaded a row);
``_array_param`` dropping the dimensions (the 2-D array came back flat).
"""
from __future__ import annotations

import datetime
import struct
import uuid
from decimal import Decimal

import pytest

import mzlite

psycopg = pytest.importorskip("psycopg")

from tests.support.postgres import postgres_database  # noqa: E402
from tests.support.wire import dsn, running_server  # noqa: E402

#: columns both systems have, and rows written as SQL literals (so both hold the same values)
COLUMNS = ("a int2, b int4, c int8, d text, e varchar(10), f numeric, g float4, h float8, i bool, j date, "
           "k time, l timestamp, m timestamptz, n interval, o uuid, p bytea, q jsonb, r int4[], s text[], "
           "t numeric[], u date[], v int4[]")
ROWS = [
    "(1, 2, 3, 'x', 'vc', 1.50, 0.5, 2.25, true, '2020-01-02', '03:04:05.5', '2020-01-02 03:04:05.123456', "
    "'2020-01-02 03:04:05+00', '1 year 2 mons 3 days 04:05:06', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', "
    "'\\x00ff', '{\"k\": [1, 2.5, null]}', '{1,NULL,3}', '{\"a b\",NULL,\"\"}', '{1.5,-2}', '{2020-01-01}', "
    "'{{1,2},{3,4}}')",
    "(-32768, -2147483648, -9223372036854775808, '', '', -0.000123, -1e30, 1e-300, false, '0001-01-01', "
    "'00:00:00', '1999-12-31 23:59:59.999999', '1970-01-01 00:00:00+00', '-1 days -00:00:01', "
    "'00000000-0000-0000-0000-000000000000', '', '[]', '{}', '{}', '{}', '{}', '{}')",
    "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL)",
    "(0, 0, 0, 'tab\there', 'ü', 123456789012345678901234567890.123, 'NaN', '-Infinity', true, '9999-12-31', "
    "'23:59:59.999999', '2000-01-01 00:00:00', '2038-01-19 03:14:08+00', '0 seconds', "
    "'ffffffff-ffff-ffff-ffff-ffffffffffff', '\\x5c', '\"s\"', '{-1}', '{\"\\\\\"}', '{NaN}', '{NULL}', '{{NULL}}')",
]


@pytest.fixture(scope="module")
def srv():
    with running_server() as s:
        yield s


@pytest.fixture
def mz(srv):
    c = psycopg.connect(dsn(srv), autocommit=True)
    c.execute("SET TimeZone = 'UTC'")
    yield c
    c.close()


@pytest.fixture(scope="module")
def postgres():
    with postgres_database("mzlite_copy_binary") as (conn, _info):
        yield conn


def _copy_out(conn, sql: str) -> bytes:
    with conn.cursor() as cur:
        with cur.copy(sql) as cp:
            return b"".join(bytes(chunk) for chunk in cp)


def _fill(conn, name: str) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {name}")
    conn.execute(f"CREATE TABLE {name} ({COLUMNS})")
    conn.execute(f"INSERT INTO {name} VALUES {', '.join(ROWS)}")


def test_binary_copy_out_is_postgres_bytes(mz, postgres):
    _fill(mz, "bo")
    _fill(postgres, "bo")
    order = "ORDER BY b NULLS LAST"
    want = _copy_out(postgres, f"COPY (SELECT * FROM bo {order}) TO STDOUT (FORMAT BINARY)")
    got = _copy_out(mz, f"COPY (SELECT * FROM bo {order}) TO STDOUT (FORMAT BINARY)")
    assert got[:19] == b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8 and got[-2:] == b"\xff\xff"
    assert got == want


def test_binary_copy_in_loads_what_postgres_wrote(mz, postgres):
    """PostgreSQL's own binary COPY output, fed to mzlite's COPY FROM STDIN, loads the same rows."""
    _fill(postgres, "bi")
    data = _copy_out(postgres, "COPY bi TO STDOUT (FORMAT BINARY)")
    mz.execute("DROP TABLE IF EXISTS bi")
    mz.execute(f"CREATE TABLE bi ({COLUMNS})")
    with mz.cursor() as cur:
        with cur.copy("COPY bi FROM STDIN (FORMAT BINARY)") as cp:
            for k in range(0, len(data), 7):  # chunks that split rows and fields
                cp.write(data[k:k + 7])
        assert cur.statusmessage == f"COPY {len(ROWS)}"
    q = "SELECT * FROM bi ORDER BY b NULLS LAST"
    assert repr(mz.execute(q).fetchall()) == repr(postgres.execute(q).fetchall())  # repr: NaN is not NaN


#: every mzlite type with psycopg's binary dumper for it, and values to round-trip
ROUND_TRIP = [
    ("int2", "int2", [0, -32768, 32767]), ("int4", "int4", [7, -2**31]), ("int8", "int8", [2**62, -1]),
    ("text", "text", ["", "ü\t\n\\"]), ("varchar(4)", "varchar", ["abcd"]), ("char(3)", "text", ["ab "]),
    ("numeric", "numeric", [Decimal("1.50"), Decimal("-0.001"), Decimal("NaN")]),
    ("float4", "float4", [0.5, -2.0]), ("float8", "float8", [1e300, float("inf")]),
    ("bool", "bool", [True, False]), ("date", "date", [datetime.date(1, 1, 1), datetime.date(9999, 12, 31)]),
    ("time", "time", [datetime.time(23, 59, 59, 999999)]),
    ("timestamp", "timestamp", [datetime.datetime(2000, 1, 1, 0, 0, 0, 1)]),
    ("timestamptz", "timestamptz", [datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)]),
    ("interval", "interval", [datetime.timedelta(days=-3, microseconds=5)]),
    ("uuid", "uuid", [uuid.UUID(int=12345)]), ("bytea", "bytea", [b"", b"\x00\xff"]),
    ("jsonb", "jsonb", [{"a": [1, None, "x"]}]),
    ("int4[]", "int4[]", [[1, None], [[1, 2], [3, 4]], []]), ("text[]", "text[]", [["a b", "", None]]),
    ("date[]", "date[]", [[datetime.date(2020, 2, 29)]]), ("numeric[]", "numeric[]", [[Decimal("2.5")]]),
    ("bool[]", "bool[]", [[True, False]]), ("float8[]", "float8[]", [[0.25]]),
    ("interval[]", "interval[]", [[datetime.timedelta(hours=1)]]),
    ("mz_timestamp", "int8", [1700000000000]),
]


@pytest.mark.parametrize("sqltype, wire, values", ROUND_TRIP, ids=[r[0] for r in ROUND_TRIP])
def test_psycopg_binary_copy_round_trip(mz, sqltype, wire, values):
    mz.execute("DROP TABLE IF EXISTS rt")
    mz.execute(f"CREATE TABLE rt (k int, v {sqltype})")
    rows = [(i, v) for i, v in enumerate(values)] + [(len(values), None)]
    with mz.cursor() as cur:
        with cur.copy("COPY rt FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(["int4", wire])
            for r in rows:
                cp.write_row(r)
        with cur.copy("COPY (SELECT k, v FROM rt ORDER BY k) TO STDOUT (FORMAT BINARY)") as cp:
            cp.set_types(["int4", wire])
            got = list(cp.rows())
    assert [(k, repr(v)) for k, v in got] == [(k, repr(v)) for k, v in rows]  # repr: NaN is not NaN


def _header(flags: int = 0, ext: bytes = b"") -> bytes:
    return b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", flags, len(ext)) + ext


_ONE = struct.pack("!hi", 1, 4) + struct.pack("!i", 5)
MALFORMED = {
    "signature": b"PGCOPY\n\xff\r\n\x01" + b"\x00" * 8 + b"\xff\xff",
    "critical-flag": _header(flags=1 << 17) + b"\xff\xff",
    "field-count": _header() + struct.pack("!hi", 2, 4) + struct.pack("!i", 5) + b"\xff\xff\xff\xff\xff\xff",
    "truncated": _header() + _ONE[:-2],
    "no-trailer": _header() + _ONE,
    "after-trailer": _header() + _ONE + b"\xff\xff" + b"\x00",
    "value-length": _header() + struct.pack("!hi", 1, 2) + b"\x00\x05\xff\xff",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_binary_input_is_refused_as_postgres_does(mz, postgres, case):
    def load(conn):
        conn.execute("DROP TABLE IF EXISTS bad")
        conn.execute("CREATE TABLE bad (a int4)")
        try:
            with conn.cursor() as cur:
                with cur.copy("COPY bad FROM STDIN (FORMAT BINARY)") as cp:
                    cp.write(MALFORMED[case])
        except psycopg.Error as e:
            return e.sqlstate, conn.execute("SELECT count(*) FROM bad").fetchone()[0]
        return None, conn.execute("SELECT count(*) FROM bad").fetchone()[0]
    want = load(postgres)
    assert (want[0] is None) == (case == "no-trailer")  # PostgreSQL loads data that just stops after a tuple
    assert load(mz) == want


@pytest.mark.parametrize("options", ["(FORMAT BINARY, DELIMITER ',')", "(FORMAT BINARY, NULL 'x')",
                                     "(FORMAT BINARY, HEADER)", "(FORMAT BINARY, QUOTE '\"')"])
def test_text_options_in_binary_mode_are_refused_as_postgres_does(mz, postgres, options):
    states = []
    for conn in (mz, postgres):
        conn.execute("DROP TABLE IF EXISTS opt")
        conn.execute("CREATE TABLE opt (a int4)")
        with pytest.raises(psycopg.Error) as e:
            _copy_out(conn, f"COPY opt TO STDOUT {options}")
        states.append(e.value.sqlstate)
        assert conn.execute("SELECT 1").fetchone() == (1,)  # the session goes on
    assert states[0] == states[1]


def test_embedded_binary_copy_is_refused(con, tmp_path):
    """Embedded, the binary format has no codecs (they are the wire protocol's): 0A000, clearly."""
    con.execute("CREATE TABLE e (a int)")
    for sql in ("COPY e FROM STDIN (FORMAT BINARY)", "COPY e TO STDOUT (FORMAT BINARY)"):
        with pytest.raises(mzlite.Error) as e:
            con.cursor().copy(sql)
        assert e.value.sqlstate == "0A000" and "wire protocol" in e.value.message
    with pytest.raises(mzlite.Error) as e:
        con.execute(f"COPY e TO '{tmp_path / 'x.bin'}' (FORMAT BINARY)")
    assert e.value.sqlstate == "0A000"


def test_asyncpg_copy_records_to_table(srv):
    """asyncpg's ``copy_records_to_table`` sends binary COPY, typed by its own introspection."""
    asyncpg = pytest.importorskip("asyncpg")
    import asyncio

    async def run():
        c = await asyncpg.connect(host="127.0.0.1", port=srv.port, user="materialize", database="materialize")
        try:
            await c.execute("CREATE TABLE ar (a int, b text, c date, d numeric)")
            status = await c.copy_records_to_table("ar", records=[(1, "x", datetime.date(2020, 1, 1), Decimal("1.5")),
                                                                  (2, None, None, None)])
            rows = await c.fetch("SELECT a, b, c, d FROM ar ORDER BY a")
            return status, [tuple(r) for r in rows]
        finally:
            await c.close()
    status, rows = asyncio.run(run())
    assert status == "COPY 2"
    assert rows == [(1, "x", datetime.date(2020, 1, 1), Decimal("1.5")), (2, None, None, None)]


def test_list_types_refuse_the_binary_format(mz):
    """Materialize's list types have no binary form here: both directions refuse (0A000)
    before loading or sending a row, and the session goes on."""
    mz.execute("DROP TABLE IF EXISTS li")
    mz.execute("CREATE TABLE li (a int list)")
    mz.execute("INSERT INTO li VALUES (LIST[1, 2])")
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        _copy_out(mz, "COPY li TO STDOUT (FORMAT BINARY)")
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        with mz.cursor() as cur:
            with cur.copy("COPY li FROM STDIN (FORMAT BINARY)") as cp:
                cp.write(b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8 + struct.pack("!hi", 1, 1) + b"\x00\xff\xff")
    assert mz.execute("SELECT count(*) FROM li").fetchone() == (1,)
