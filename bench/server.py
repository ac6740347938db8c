"""``python -m bench server``: mzlite over the wire (``mzlite serve``) against PostgreSQL 15.

Owns the server workload: both servers started here on 127.0.0.1 (PostgreSQL through
``.ci/start-postgres``, mzlite as a ``mzlite serve`` subprocess), the same psycopg clients
against each, and the figures: indexed point reads (prepared, and as simple queries with
the key in the text) and one-row writes with 1, 8 and 32 concurrent clients (throughput, p50/p99 latency, ratios to PostgreSQL), freshness (a one-row
write on one connection until a SUBSCRIBE on another delivers it, at idle and while a heavy
materialized view hydrates; mzlite only: PostgreSQL has no SUBSCRIBE), and COPY FROM STDIN of many rows.  Invariant: every figure is measured in
this run, peers interleaved phase by phase.  Deliberately not here: the in-process
workloads (``bench.freshness``, ``bench.isolation``).
"""
from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_mzlite(params=()):
    port = _free_port()
    args = [sys.executable, "-m", "repl.main", "serve", "--port", str(port), "--log-level", "warning"]
    for p in params:
        args += ["--system-parameter", p]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if "listening" not in proc.stdout.readline():
        raise RuntimeError("mzlite serve did not start")
    return proc, f"host=127.0.0.1 port={port} user=materialize dbname=materialize"


def start_postgres():
    out = subprocess.run(["bash", os.path.join(ROOT, ".ci", "start-postgres")], capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        return None, None
    d, hostport = out.stdout.split()
    host, port = hostport.split(":")
    return d, f"host={host} port={port} user=postgres dbname=postgres"


def stop_postgres(d) -> None:
    subprocess.run(["bash", os.path.join(ROOT, ".ci", "start-postgres"), "stop", d], capture_output=True)


def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def setup(dsn: str, rows: int, mz: bool) -> None:
    import psycopg
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS kv")
        c.execute("DROP TABLE IF EXISTS kw")
        c.execute("CREATE TABLE kv (k int NOT NULL, v text)" if mz else "CREATE TABLE kv (k int PRIMARY KEY, v text)")
        c.execute("CREATE TABLE kw (k int, v text)")
        with c.cursor().copy("COPY kv FROM STDIN") as cp:
            for i in range(rows):
                cp.write_row((i, f"value {i}"))
        if mz:
            c.execute("CREATE INDEX kv_k ON kv (k)")


def clients_run(dsn: str, clients: int, seconds: float, op: str, rows: int) -> dict:
    """``clients`` connections doing ``op`` (read, simple-read or write) for ``seconds``: ops/s,
    p50, p99 (ms)."""
    import psycopg
    conns = [psycopg.connect(dsn, autocommit=True) for _ in range(clients)]
    lat: list = []
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)
    stop_at = [0.0]

    def work(c, seed):
        rng = random.Random(seed)
        mine = []
        cur = c.cursor()
        sql = "SELECT v FROM kv WHERE k = %s" if op == "read" else "INSERT INTO kw VALUES (%s, 'x')"
        start.wait()
        while time.perf_counter() < stop_at[0]:
            t0 = time.perf_counter()
            if op == "simple-read":  # the simple protocol: the key in the text, planned each time
                cur.execute(f"SELECT v FROM kv WHERE k = {rng.randrange(rows)}")
            else:  # a prepared statement: Parse once, then Bind/Execute
                cur.execute(sql, (rng.randrange(rows),), prepare=True)
            if op != "write":
                cur.fetchall()
            mine.append(time.perf_counter() - t0)
        with lock:
            lat.extend(mine)
    threads = [threading.Thread(target=work, args=(c, i)) for i, c in enumerate(conns)]
    for t in threads:
        t.start()
    stop_at[0] = time.perf_counter() + seconds
    start.wait()
    for t in threads:
        t.join()
    for c in conns:
        c.close()
    return {"ops_per_s": len(lat) / seconds, "p50_ms": _pct(lat, 0.5) * 1e3, "p99_ms": _pct(lat, 0.99) * 1e3,
            "n": len(lat)}


#: the view whose hydration the second freshness phase measures beside: a join of 100,000
#: rows with 60,000 (6,000,000 pairs) into a 100,000-group reduce, seconds of maintenance work
#: in bounded steps
HEAVY_SOURCE = "CREATE TABLE heavy_src AS SELECT g AS a, g % 1000 AS b FROM generate_series(1, 100000) g"
HEAVY_VIEW = ("CREATE MATERIALIZED VIEW heavy AS SELECT x.a, count(*) AS n FROM heavy_src x JOIN heavy_src y "
              "ON x.b = y.b WHERE y.a <= 60000 GROUP BY x.a")


def freshness(dsn: str, samples: int, heavy: bool = False) -> dict:
    """A one-row write until a SUBSCRIBE on another connection delivers it (ms).  ``heavy``:
    while ``HEAVY_VIEW`` hydrates (created first; a third connection reads it, which waits
    until it has hydrated): writes go on until it has (at most 100 x ``samples``), and only
    those that started before it had count."""
    import psycopg
    w = psycopg.connect(dsn, autocommit=True)
    table = "frh" if heavy else "fr"
    w.execute(f"CREATE TABLE {table} (i int)")
    s = psycopg.connect(dsn, autocommit=True)
    got: dict = {}
    cond = threading.Condition()

    def reader():
        try:
            for row in s.cursor().stream(f"SUBSCRIBE {table}"):
                with cond:
                    got[int(row[2])] = time.perf_counter()
                    cond.notify_all()
        except psycopg.Error:
            pass
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    time.sleep(0.5)
    hydrated = []
    if heavy:
        h = psycopg.connect(dsn, autocommit=True)
        h.execute("DROP MATERIALIZED VIEW IF EXISTS heavy")
        h.execute("DROP TABLE IF EXISTS heavy_src")
        h.execute(HEAVY_SOURCE)
        h.execute(HEAVY_VIEW)
        t_created = time.perf_counter()

        def wait_hydrated():
            h.execute("SELECT count(*) FROM heavy").fetchall()  # strict: waits for the hydration
            hydrated.append(time.perf_counter())
        ht = threading.Thread(target=wait_hydrated, daemon=True)
        ht.start()
    out = []
    i = 0
    while i < samples or (heavy and not hydrated and i < 100 * samples):
        t0 = time.perf_counter()
        w.execute(f"INSERT INTO {table} VALUES (%s)", (i,))
        with cond:
            cond.wait_for(lambda: i in got, timeout=10)
        if i in got and not (heavy and hydrated and hydrated[0] < t0):
            out.append((got[i] - t0) * 1e3)
        i += 1
        time.sleep(0.02)
    s.cancel_safe()
    t.join(5)
    s.close()
    w.close()
    res = {"p50_ms": _pct(out, 0.5), "p99_ms": _pct(out, 0.99), "n": len(out)}
    if heavy:
        ht.join(120)
        h.close()
        res["hydration_s"] = (hydrated[0] - t_created) if hydrated else float("nan")
    return res


def copy_in(dsn: str, rows: int) -> float:
    import psycopg
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS cp")
        c.execute("CREATE TABLE cp (a int, b text, c int)")
        t0 = time.perf_counter()
        with c.cursor().copy("COPY cp FROM STDIN") as cp:
            for i in range(rows):
                cp.write_row((i, "some text", i * 2))
        elapsed = time.perf_counter() - t0
        assert c.execute("SELECT count(*) FROM cp").fetchone()[0] == rows
    return elapsed


def run(args) -> dict:
    quick = args.quick
    seconds = args.duration or (2.0 if quick else 5.0)
    rows = 10_000 if quick else 100_000
    copy_rows = 100_000 if quick else 1_000_000
    mz_proc, mz_dsn = start_mzlite(args.mz_param or ())
    pg_dir, pg_dsn = start_postgres()
    result: dict = {"points": [], "problems": []}
    try:
        peers = [("mzlite", mz_dsn, True)] + ([("postgres", pg_dsn, False)] if pg_dsn else [])
        if not pg_dsn:
            result["problems"].append("PostgreSQL 15 could not be started: no ratios")
        for name, dsn, mz in peers:
            print(f"setting up {name}", file=sys.stderr)
            setup(dsn, rows, mz)
        print(f"\n{'phase':<22}{'engine':<10}{'ops/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'ops/s vs pg':>13}")
        for op in ("read", "simple-read", "write"):
            for clients in (1, 8, 32):
                figs = {}
                for name, dsn, _ in peers:  # interleaved: each phase on both before the next
                    figs[name] = clients_run(dsn, clients, seconds, op, rows)
                for name, f in figs.items():
                    ratio = f["ops_per_s"] / figs["postgres"]["ops_per_s"] if "postgres" in figs else float("nan")
                    print(f"{op + ' x' + str(clients):<22}{name:<10}{f['ops_per_s']:>10.0f}{f['p50_ms']:>10.2f}"
                          f"{f['p99_ms']:>10.2f}{ratio:>13.2f}")
                    result["points"].append(dict(phase=f"{op}x{clients}", engine=name, **f))
        fr = freshness(mz_dsn, 30 if quick else 100)
        print(f"\nfreshness (write -> SUBSCRIBE on another connection), mzlite: p50 {fr['p50_ms']:.1f} ms, "
              f"p99 {fr['p99_ms']:.1f} ms over {fr['n']} writes (goal: p99 < 5 ms at idle)")
        result["freshness"] = fr
        frh = freshness(mz_dsn, 30 if quick else 100, heavy=True)
        print(f"freshness while a heavy view hydrates ({frh['hydration_s']:.1f} s), mzlite: p50 "
              f"{frh['p50_ms']:.1f} ms, p99 {frh['p99_ms']:.1f} ms over {frh['n']} writes (goal: p99 < 25 ms)")
        result["freshness_hydrating"] = frh
        times = {name: copy_in(dsn, copy_rows) for name, dsn, _ in peers}
        for name, t in times.items():
            ratio = times["postgres"] / t if "postgres" in times else float("nan")
            print(f"COPY FROM STDIN {copy_rows:,} rows, {name}: {t:.2f} s ({copy_rows / t:,.0f} rows/s; "
                  f"{ratio:.2f}x PostgreSQL's speed)")
        result["copy"] = times
        read8 = {p["engine"]: p["ops_per_s"] for p in result["points"] if p["phase"] == "readx8"}
        if "postgres" in read8 and read8["mzlite"] < 0.5 * read8["postgres"]:
            result["problems"].append("goal not met: point reads at 8 clients below half of PostgreSQL's")
        if fr["p99_ms"] >= 5:
            result["problems"].append("goal not met: freshness p99 at idle is not under 5 ms")
        if frh["p99_ms"] >= 25:
            result["problems"].append("goal not met: freshness p99 while a view hydrates is not under 25 ms")
        for p in result["problems"]:
            print("note:", p)
    finally:
        mz_proc.send_signal(signal.SIGTERM)
        try:
            mz_proc.wait(20)
        except subprocess.TimeoutExpired:
            mz_proc.kill()
        if pg_dir:
            stop_postgres(pg_dir)
    return result


__all__ = ["run"]
