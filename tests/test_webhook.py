"""Webhook sources: ``CREATE SOURCE ... FROM WEBHOOK`` served by ``mzlite serve --http-port``.

A ``mzlite serve --port 0 --http-port 0`` subprocess (the module's fixture) takes HTTP POSTs
at ``/api/webhook/materialize/public/<source>``; rows are read back over psycopg (SELECT and
SUBSCRIBE).  Sabotages seen red, each once: ``mzlite.webhooks.receive`` not calling
``_check`` (``test_bad_signature_is_400_and_adds_nothing`` and ``test_concurrent_senders``:
the bad signatures got 200); storing the JSON body as text without ``parse_jsonb`` (the run
hung at ``test_malformed_json_is_400`` until the timeout: a str in a jsonb column); the
handler's ``do_GET`` mapping removed (``test_wrong_method_is_405``: 501);
``drop_source_item`` not removing the ingestion (``test_embedded_webhook_source_is_readable_
and_receives_nothing``: the dropped source's ingestion still registered and appending; over
HTTP the dropped name is already a 404 by catalog resolution, which
``test_drop_source_stops_accepting`` covers); the handler's chunked-body refusal removed
(``test_chunked_body_is_411``: 200, an empty body appended).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import psycopg
import pytest

import mzlite
from mzlite import webhooks

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def served():
    """``(pg port, http port)`` of a ``mzlite serve --http-port`` subprocess."""
    proc = subprocess.Popen([sys.executable, "-m", "repl.main", "serve", "--port", "0", "--http-port", "0"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hook_line = proc.stdout.readline()
    pg_line = proc.stdout.readline()
    m1 = re.search(r"http://127\.0\.0\.1:(\d+)/api/webhook/", hook_line)
    m2 = re.search(r"listening on 127\.0\.0\.1:(\d+)", pg_line)
    assert m1 and m2, (hook_line, pg_line, proc.stderr.read() if proc.poll() is not None else "")
    yield int(m2.group(1)), int(m1.group(1))
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == 0
    err = proc.stderr.read()
    assert "Traceback" not in err, err


@pytest.fixture
def pg(served):
    with psycopg.connect(f"host=127.0.0.1 port={served[0]} user=materialize dbname=materialize",
                         autocommit=True) as c:
        yield c


def post(port: int, source: str, body: bytes, headers=None, method: str = "POST",
         path: str = None) -> tuple[int, str]:
    url = f"http://127.0.0.1:{port}" + (path or f"/api/webhook/materialize/public/{source}")
    req = urllib.request.Request(url, data=body if method != "GET" else None, headers=headers or {},
                                 method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def sign(key: bytes, body: bytes) -> str:
    return base64.b64encode(hmac.new(key, body, hashlib.sha256).digest()).decode()


SIGNED = ("CREATE SOURCE {name} FROM WEBHOOK BODY FORMAT JSON INCLUDE HEADER 'x-id' AS id "
          "CHECK (WITH (HEADERS, BODY AS request_body, SECRET hook_key) "
          "decode(headers->'x-signature', 'base64') = hmac(request_body, hook_key, 'sha256'))")


@pytest.fixture(scope="module")
def signed(served):
    with psycopg.connect(f"host=127.0.0.1 port={served[0]} user=materialize dbname=materialize",
                         autocommit=True) as c:
        c.execute("CREATE SECRET hook_key AS 'sekrit'")
        c.execute(SIGNED.format(name="signed"))
    return "signed"


def test_good_request_is_one_row_visible_to_select_and_subscribe(served, pg):
    pg.execute("CREATE SOURCE events FROM WEBHOOK BODY FORMAT JSON INCLUDE HEADERS")
    assert post(served[1], "events", b'{"n": 1}', {"Content-Type": "application/json", "X-Thing": "a"}) == (200, "")
    rows = pg.execute("SELECT body, headers -> 'x-thing', headers -> 'content-type' FROM events").fetchall()
    assert rows == [({"n": 1}, "a", "application/json")]
    cur = pg.cursor()
    got = []
    sent = False
    for row in cur.stream("SUBSCRIBE (SELECT body ->> 'n' AS n FROM events) WITH (PROGRESS)"):
        if row[2] is not None:  # a data row (mz_timestamp, mz_progressed, mz_diff, n)
            got.append((row[3], row[2]))
        if ("2", 1) in got:
            break
        if not sent:  # the snapshot (or its progress) has arrived: the subscription is running
            assert post(served[1], "events", b'{"n": 2}')[0] == 200
            sent = True
    assert ("1", 1) in got and ("2", 1) in got


def test_bad_signature_is_400_and_adds_nothing(served, pg, signed):
    body = b'{"order": 7}'
    assert post(served[1], signed, body, {"X-Signature": sign(b"sekrit", body), "X-Id": "a"}) == (200, "")
    status, text = post(served[1], signed, body, {"X-Signature": sign(b"wrong", body), "X-Id": "b"})
    assert status == 400 and "CHECK" in text
    assert post(served[1], signed, body, {"X-Id": "c"})[0] == 400  # no signature: NULL is not true
    assert post(served[1], signed, body, {"X-Signature": "!!notbase64", "X-Id": "d"})[0] == 400  # CHECK errors
    assert pg.execute("SELECT id, body FROM signed").fetchall() == [("a", {"order": 7})]


def test_malformed_json_is_400(served, pg):
    pg.execute("CREATE SOURCE strict FROM WEBHOOK BODY FORMAT JSON")
    status, text = post(served[1], "strict", b'{"a": ')
    assert status == 400 and "JSON" in text
    assert post(served[1], "strict", b'\xff\xfe')[0] == 400
    assert pg.execute("SELECT count(*) FROM strict").fetchone() == (0,)
    assert post(served[1], "strict", b'[1, "x"]')[0] == 200
    assert pg.execute("SELECT body -> 1 FROM strict").fetchall() == [("x",)]


def test_text_and_bytes_bodies(served, pg):
    pg.execute("CREATE SOURCE t_hook FROM WEBHOOK BODY FORMAT TEXT INCLUDE HEADER 'x-raw' AS raw BYTES")
    pg.execute("CREATE SOURCE b_hook FROM WEBHOOK BODY FORMAT BYTES")
    assert post(served[1], "t_hook", "héllo".encode(), {"X-Raw": "r"})[0] == 200
    assert post(served[1], "b_hook", b"\x00\xff")[0] == 200
    assert pg.execute("SELECT body, raw FROM t_hook").fetchall() == [("héllo", b"r")]
    assert pg.execute("SELECT body FROM b_hook").fetchall() == [(b"\x00\xff",)]


def test_unknown_source_and_path_are_404(served, pg):
    pg.execute("CREATE TABLE not_a_hook (a int)")
    assert post(served[1], "nope", b"{}")[0] == 404
    assert post(served[1], "not_a_hook", b"{}")[0] == 404
    assert post(served[1], "", b"{}", path="/api/webhook/other_db/public/events")[0] == 404
    assert post(served[1], "", b"{}", path="/elsewhere")[0] == 404


def test_wrong_method_is_405(served, pg):
    pg.execute("CREATE SOURCE m_hook FROM WEBHOOK BODY FORMAT TEXT")
    assert post(served[1], "m_hook", b"", method="GET")[0] == 405
    assert post(served[1], "m_hook", b"x", method="PUT")[0] == 405
    assert pg.execute("SELECT count(*) FROM m_hook").fetchone() == (0,)


def test_chunked_body_is_411(served, pg):
    import http.client
    pg.execute("CREATE SOURCE c_hook FROM WEBHOOK BODY FORMAT TEXT")
    conn = http.client.HTTPConnection("127.0.0.1", served[1], timeout=30)
    conn.request("POST", "/api/webhook/materialize/public/c_hook", body=iter([b"a", b"b"]),
                 encode_chunked=True)
    assert conn.getresponse().status == 411
    conn.close()
    assert pg.execute("SELECT count(*) FROM c_hook").fetchone() == (0,)


def test_concurrent_senders(served, pg, signed):
    pg.execute(SIGNED.format(name="busy"))
    statuses = []
    lock = threading.Lock()

    def sender(k: int) -> None:
        for i in range(25):
            body = json.dumps({"sender": k, "i": i}).encode()
            good = i % 5 != 0
            st = post(served[1], "busy", body, {"X-Signature": sign(b"sekrit" if good else b"no", body)})[0]
            with lock:
                statuses.append((good, st))

    threads = [threading.Thread(target=sender, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(set(statuses)) == [(False, 400), (True, 200)]
    assert len(statuses) == 150
    rows = pg.execute("SELECT body ->> 'sender', body ->> 'i' FROM busy").fetchall()
    assert len(rows) == 120 == len(set(rows))
    assert all(int(i) % 5 for _s, i in rows)


def test_drop_source_stops_accepting(served, pg):
    pg.execute("CREATE SOURCE gone FROM WEBHOOK BODY FORMAT TEXT")
    assert post(served[1], "gone", b"one")[0] == 200
    pg.execute("DROP SOURCE gone")
    assert post(served[1], "gone", b"two")[0] == 404
    pg.execute("CREATE SOURCE gone FROM WEBHOOK BODY FORMAT TEXT")  # a new source of that name starts empty
    assert post(served[1], "gone", b"three")[0] == 200
    assert pg.execute("SELECT body FROM gone").fetchall() == [("three",)]


def test_embedded_webhook_source_is_readable_and_receives_nothing():
    con = mzlite.connect()
    con.execute("CREATE SOURCE w FROM WEBHOOK BODY FORMAT JSON INCLUDE HEADERS")
    assert con.execute("SELECT * FROM w").fetchall() == []
    assert [d[0] for d in con.execute("SELECT * FROM w").description] == ["body", "headers"]
    assert ("w", "webhook") in [r[:2] for r in con.execute("SHOW SOURCES").fetchall()]
    with pytest.raises(mzlite.Error) as e:
        con.execute("INSERT INTO w VALUES ('{}', '{}')")
    assert e.value.sqlstate
    db = con.database
    gid = db.catalog.try_resolve("w").id
    ing = db.storage.sources.get(gid)
    webhooks.receive(con, "materialize", "public", "w", [("X-A", "1")], b'{"k": [1]}')
    assert con.execute("SELECT body -> 'k', headers FROM w").fetchall() == [([1], {"x-a": "1"})]
    con.execute("DROP SOURCE w")
    assert db.storage.sources.get(gid) is None
    assert ing.append(db.storage.sources, ("late",)) is False  # a request racing the DROP adds nothing
    with pytest.raises(webhooks.NotFound):
        webhooks.receive(con, "materialize", "public", "w", [], b"{}")


def test_hmac_and_constant_time_eq():
    con = mzlite.connect()
    expect = hmac.new(b"key", b"msg", hashlib.sha256).hexdigest()
    assert con.execute("SELECT encode(hmac('msg', 'key', 'sha256'), 'hex')").fetchone() == (expect,)
    assert con.execute("SELECT encode(hmac('msg'::bytea, 'key'::bytea, 'sha256'), 'hex')").fetchone() == (expect,)
    assert con.execute("SELECT encode(hmac('msg', 'key', 'md5'), 'hex')").fetchone() == (
        hmac.new(b"key", b"msg", hashlib.md5).hexdigest(),)
    assert con.execute("SELECT encode(digest('msg', 'sha1'), 'hex')").fetchone() == (hashlib.sha1(b"msg").hexdigest(),)
    assert con.execute("SELECT constant_time_eq('a', 'a'), constant_time_eq('a'::bytea, 'b'::bytea)").fetchone() == (
        True, False)
    with pytest.raises(mzlite.Error) as e:
        con.execute("SELECT hmac('m', 'k', 'sha3')")
    assert e.value.sqlstate == "22023"


def test_webhook_source_in_a_data_directory_keeps_its_rows_and_its_check(tmp_path):
    con = mzlite.connect(str(tmp_path / "data"))
    con.execute("CREATE SECRET k AS 'key'")
    con.execute("CREATE SOURCE w FROM WEBHOOK BODY FORMAT TEXT CHECK (WITH (BODY, SECRET k) "
                "constant_time_eq(body, k))")
    webhooks.receive(con, "materialize", "public", "w", [], b"key")
    with pytest.raises(mzlite.Error) as e:
        con.execute("DROP SECRET k")  # the CHECK depends on it
    assert e.value.sqlstate == "2BP01"
    assert con.execute("SELECT status FROM mz_internal.mz_source_statuses WHERE name = 'w'").fetchall() == [
        ("running",)]
    con.close()
    con = mzlite.connect(str(tmp_path / "data"))
    assert con.execute("SELECT body FROM w").fetchall() == [("key",)]
    with pytest.raises(webhooks.Rejected):
        webhooks.receive(con, "materialize", "public", "w", [], b"wrong")
    webhooks.receive(con, "materialize", "public", "w", [], b"key")
    assert con.execute("SELECT count(*) FROM w").fetchall() == [(2,)]
    con.close()
