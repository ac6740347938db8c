"""``python -m bench remote``: what ``mzlite.connect(URL)`` costs on top of psycopg.

Owns the remote-connection workload: a ``mzlite serve`` subprocess and a PostgreSQL 15
(``.ci/start-postgres``) on 127.0.0.1, each with a table ``kv (k int, v text)`` of 10,000 rows
(indexed on ``k``), and three ways to read them: the embedded engine (``mzlite.connect()``,
same data, in this process), mzlite's remote connection (``mzlite.connect(URL)``), and psycopg
used directly (``autocommit``, no server-side prepare: the settings the remote connection uses).
Figures: a point read (``SELECT v FROM kv WHERE k = ?``) and a 10,000-row fetch (``SELECT * FROM
kv``), the median over many short rounds (each way once per round, so a machine's changing load
falls on every way alike; the order rotates from round to round) of the microseconds per operation,
wall clock and client CPU, and the remote connection's overhead over psycopg on the same server:
wall clock, and the client CPU it adds against psycopg's whole cost (the goal: under 10%; the CPU
figure is the one a loaded machine does not blur); a SUBSCRIBE update (a one-row
INSERT until ``con.subscribe`` delivers it), remote and embedded.
Invariant: every figure is measured in this run, the ways interleaved round by round.
Deliberately not here: server throughput under concurrency (``bench.server``).
"""
from __future__ import annotations

import signal
import statistics
import subprocess
import sys
import time

from bench.server import start_mzlite, start_postgres, stop_postgres

ROWS = 10_000


def _setup_sql():
    return ["CREATE TABLE kv (k int, v text)", "CREATE INDEX kv_k ON kv (k)"]


def _load(execute, executemany):
    for sql in _setup_sql():
        execute(sql)
    executemany("INSERT INTO kv VALUES (?, ?)", [(i, f"value {i}") for i in range(ROWS)])


def _ways(mz_url: str, pg_dsn):
    """``{name: (point(k), scan())}`` for every way of reading."""
    import psycopg
    import mzlite
    ways = {}
    embedded = mzlite.connect()
    _load(embedded.execute, embedded.executemany)
    ways["embedded"] = (lambda k: embedded.execute("SELECT v FROM kv WHERE k = ?", (k,)).fetchall(),
                        lambda: embedded.execute("SELECT * FROM kv").fetchall())
    targets = [("mzlite serve", mz_url, True)] + ([("postgres", pg_dsn, False)] if pg_dsn else [])
    opened = [embedded]
    for server, dsn, is_mz in targets:
        remote = mzlite.connect(dsn)
        opened.append(remote)
        if not is_mz:
            remote.execute("DROP TABLE IF EXISTS kv")
        _load(remote.execute, remote.executemany)
        direct = psycopg.connect(dsn, autocommit=True, prepare_threshold=None)
        opened.append(direct)
        ways[f"remote -> {server}"] = (
            lambda k, c=remote: c.execute("SELECT v FROM kv WHERE k = ?", (k,)).fetchall(),
            lambda c=remote: c.execute("SELECT * FROM kv").fetchall())
        ways[f"psycopg -> {server}"] = (
            lambda k, c=direct: c.execute("SELECT v FROM kv WHERE k = %s", (k,)).fetchall(),
            lambda c=direct: c.execute("SELECT * FROM kv").fetchall())
    return ways, opened


def _round(fn, n: int) -> tuple[float, float]:
    """Microseconds per call of ``fn``: wall clock, and this process's CPU time (what the client
    side spends, whatever the server and the machine's other processes do)."""
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - start) / n * 1e6, (time.process_time() - cpu) / n * 1e6


def _subscribe_latency(con, samples: int) -> float:
    """Median ms from a one-row INSERT until ``con.subscribe`` delivers it."""
    from mzlite.subscribe import Update
    con.execute("CREATE TABLE fresh (x int)")
    got = []
    with con.subscribe("fresh", snapshot=False) as sub:
        for i in range(samples):
            t0 = time.perf_counter()
            con.execute("INSERT INTO fresh VALUES (?)", (i,))
            while True:
                items = [u for u in sub.fetch(timeout=5.0) if isinstance(u, Update)]
                if any(u.row == (i,) for u in items):
                    break
            got.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(got)


def run(args) -> dict:
    quick = args.quick
    rounds = 15 if quick else 60  # short rounds, the ways interleaved in each: load drifts less within one
    points = 50
    scans = 1
    mz_proc, mz_dsn = start_mzlite(args.mz_param or ())
    pg_dir, pg_dsn = start_postgres()
    result: dict = {"problems": [], "figures": {}}
    opened = []
    try:
        if not pg_dsn:
            result["problems"].append("PostgreSQL 15 could not be started: no figures against it")
        print("loading", file=sys.stderr)
        ways, opened = _ways(mz_dsn, pg_dsn)
        samples = {name: {"point": [], "scan": [], "point_cpu": [], "scan_cpu": []} for name in ways}
        names = list(ways)
        for r in range(rounds):  # interleaved: every way once per round, the order rotating
            for name in names[r % len(names):] + names[:r % len(names)]:
                point, scan = ways[name]
                for kind, fn, n in (("point", lambda i: point(i % ROWS), points), ("scan", lambda i: scan(), scans)):
                    wall, cpu = _round(fn, n)
                    samples[name][kind].append(wall)
                    samples[name][kind + "_cpu"].append(cpu)
        med = statistics.median
        print(f"\n{'way':<26}{'point read µs':>15}{'(client CPU)':>14}{'10k-row fetch ms':>18}{'(client CPU)':>14}")
        for name, s in samples.items():
            fig = {"point_us": med(s["point"]), "point_cpu_us": med(s["point_cpu"]),
                   "scan_ms": med(s["scan"]) / 1000, "scan_cpu_ms": med(s["scan_cpu"]) / 1000, "samples": s}
            result["figures"][name] = fig
            print(f"{name:<26}{fig['point_us']:>15.1f}{fig['point_cpu_us']:>14.1f}{fig['scan_ms']:>18.2f}"
                  f"{fig['scan_cpu_ms']:>14.2f}")
        print()
        for server in ("mzlite serve", "postgres"):
            r, d = result["figures"].get(f"remote -> {server}"), result["figures"].get(f"psycopg -> {server}")
            if not (r and d):
                continue
            po, so = r["point_us"] / d["point_us"] - 1, r["scan_ms"] / d["scan_ms"] - 1
            # the wrapper's own work: the client CPU it adds, against psycopg's whole cost (wall clock)
            pc = (r["point_cpu_us"] - d["point_cpu_us"]) / d["point_us"]
            sc = (r["scan_cpu_ms"] - d["scan_cpu_ms"]) / d["scan_ms"]
            result["figures"][f"overhead on {server}"] = {"point": po, "scan": so, "point_cpu": pc, "scan_cpu": sc}
            print(f"remote connection over psycopg, {server}: point read {po:+.1%} wall ({pc:+.1%} from the "
                  f"client CPU it adds), 10k-row fetch {so:+.1%} wall ({sc:+.1%})")
            if server == "postgres" and (pc >= 0.10 or sc >= 0.10):
                result["problems"].append(f"goal not met: the wrapper's own work adds {max(pc, sc):.1%} to "
                                          f"psycopg's cost on PostgreSQL (goal: under 10%)")
        import mzlite
        n = 20 if quick else 100
        remote = mzlite.connect(f"{mz_dsn}")
        opened.append(remote)
        embedded = mzlite.connect()
        opened.append(embedded)
        sr, se = _subscribe_latency(remote, n), _subscribe_latency(embedded, n)
        result["figures"]["subscribe_ms"] = {"remote": sr, "embedded": se}
        print(f"SUBSCRIBE update (INSERT -> con.subscribe delivers it), median of {n}: remote {sr:.2f} ms, "
              f"embedded {se:.2f} ms")
        for p in result["problems"]:
            print("note:", p)
    finally:
        for c in reversed(opened):
            try:
                c.close()
            except Exception:  # noqa: BLE001 - closing what the run opened
                pass
        mz_proc.send_signal(signal.SIGTERM)
        try:
            mz_proc.wait(20)
        except subprocess.TimeoutExpired:
            mz_proc.kill()
        if pg_dir:
            stop_postgres(pg_dir)
    return result


__all__ = ["run"]
