"""``python -m bench sources``: a PostgreSQL source against its floor, PostgreSQL itself.

Owns the source workload: PostgreSQL 15 started here (``.ci/start-postgres``, ``wal_level =
logical``), a table of N rows in a publication, and the figures the sources issue asks for:
the initial snapshot of ``CREATE SOURCE ... FROM POSTGRES`` against ``COPY ... TO STDOUT``
from the same server (the floor), and replication lag (a PostgreSQL commit until a SUBSCRIBE
on mzlite delivers the row) at fixed rates of single-row transactions, p50/p99.  Invariant:
every figure is measured in this run against the same server.  Deliberately not here: the
load generators (their cost is in ``docs/PERFORMANCE.md``) and the wire server.
"""
from __future__ import annotations

import sys
import threading
import time

from bench.server import _pct, start_postgres, stop_postgres


def _snapshot(kw: dict, n: int) -> dict:
    import psycopg
    import mzlite
    with psycopg.connect(**kw, autocommit=True) as c:
        c.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE NOT active")
        c.execute("DROP PUBLICATION IF EXISTS bench_pub")
        c.execute("DROP TABLE IF EXISTS bench_big, bench_tick")
        c.execute("CREATE TABLE bench_big (id int, v text, n numeric)")
        c.execute("ALTER TABLE bench_big REPLICA IDENTITY FULL")
        c.execute(f"INSERT INTO bench_big SELECT g, 'row ' || g, g / 7.0 FROM generate_series(1, {n}) g")
        c.execute("CREATE TABLE bench_tick (id int)")
        c.execute("ALTER TABLE bench_tick REPLICA IDENTITY FULL")
        c.execute("CREATE PUBLICATION bench_pub FOR TABLE bench_big, bench_tick")
        t = time.perf_counter()
        with c.cursor().copy("COPY bench_big TO STDOUT") as cp:
            for _chunk in cp:
                pass
        copy_s = time.perf_counter() - t
    con = mzlite.connect()
    con.execute(f"CREATE SECRET bench_pw AS '{kw.get('password', 'x')}'")
    con.execute(f"CREATE CONNECTION bench_pg TO POSTGRES (HOST '{kw['host']}', PORT {kw['port']}, "
                f"USER '{kw['user']}', PASSWORD SECRET bench_pw, DATABASE '{kw['dbname']}')")
    t = time.perf_counter()
    con.execute("CREATE SOURCE bench_src FROM POSTGRES CONNECTION bench_pg (PUBLICATION 'bench_pub') "
                "FOR ALL TABLES")
    snap_s = time.perf_counter() - t
    (count,), = con.execute("SELECT count(*) FROM bench_big").fetchall()
    if count != n:
        raise RuntimeError(f"the snapshot holds {count} rows, not {n}")
    return {"con": con, "copy to stdout": copy_s, "create source": snap_s}


def _lag(con, kw: dict, rate: int, seconds: float) -> dict:
    """Commit ``rate`` single-row inserts a second for ``seconds`` on PostgreSQL; the time from
    each commit until mzlite's SUBSCRIBE delivers it."""
    import psycopg
    n = max(1, int(rate * seconds))
    base = rate * 100_000
    sent: dict = {}
    sub = con.subscribe("SELECT id FROM bench_tick", snapshot=False)

    def writer():
        with psycopg.connect(**kw, autocommit=True) as w:
            start = time.monotonic()
            for i in range(n):
                delay = start + i / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                w.execute("INSERT INTO bench_tick VALUES (%s)", (base + i,))
                sent[base + i] = time.monotonic()
    th = threading.Thread(target=writer, daemon=True)
    th.start()
    lags = []
    deadline = time.monotonic() + seconds + 30
    while len(lags) < n and time.monotonic() < deadline:
        for u in sub.fetch(timeout=0.5):
            row = getattr(u, "row", None)
            if row is not None and getattr(u, "diff", 0) > 0 and row[0] in sent:
                lags.append(time.monotonic() - sent[row[0]])
    th.join()
    sub.close()
    achieved = n / max(1e-9, max(sent.values()) - min(sent.values())) if len(sent) > 1 else float("nan")
    return {"sent": n, "delivered": len(lags), "p50": _pct(lags, 0.5), "p99": _pct(lags, 0.99),
            "achieved rate": achieved}


def run(args) -> dict:
    n = args.orders or (100_000 if args.quick else 1_000_000)
    seconds = 3.0 if args.quick else 5.0
    result: dict = {"workload": "sources", "rows": n, "figures": {}}
    d, conninfo = start_postgres()
    if d is None:
        print("sources: PostgreSQL 15 could not be started here", file=sys.stderr)
        result["problems"] = ["PostgreSQL not available"]
        return result
    kw = dict(part.split("=", 1) for part in conninfo.split())
    kw["port"] = int(kw["port"])
    try:
        print(f"== sources: a {n:,}-row table on PostgreSQL 15, replication at 100 and 1,000 tx/s",
              file=sys.stderr)
        snap = _snapshot(kw, n)
        con = snap.pop("con")
        fig = result["figures"]
        fig["snapshot"] = snap
        for rate in (100, 1000):
            fig[f"lag at {rate} tx/s"] = _lag(con, kw, rate, seconds)
        con.execute("DROP SOURCE bench_src CASCADE")
        con.close()
    finally:
        stop_postgres(d)
    _print(result)
    return result


def _print(result: dict) -> None:
    f = result["figures"]
    s = f["snapshot"]
    print(f"PostgreSQL source, {result['rows']:,} rows (seconds)")
    print(f"  initial snapshot (CREATE SOURCE)   {s['create source']:8.2f}   "
          f"{s['create source'] / s['copy to stdout']:6.2f}x COPY TO STDOUT ({s['copy to stdout']:.2f} s)")
    for k, v in f.items():
        if k.startswith("lag"):
            print(f"  {k:18s} delivered {v['delivered']}/{v['sent']} (sent at {v['achieved rate']:.0f}/s): "
                  f"p50 {v['p50'] * 1000:.0f} ms, p99 {v['p99'] * 1000:.0f} ms")
