"""``python -m bench load``: durable against in-memory mzlite, loading data, and the peers.

Owns the ``load`` workload: in one process and one run, (1) a one-row change made visible
(k=1: INSERT, then read the materialized view that reflects it), k=10,000, a point read and
the bulk load of the benchmark rows, each for mzlite in memory and in a data directory
(durability full), with sqlite3 (a WAL file, synchronous=FULL) beside them; (2) reopening
the durable database (its tables, the join view and its index) until a read is answered,
against its first load plus hydration; (3) loading the rows from a CSV file: mzlite's COPY
(in memory and durable), DuckDB's COPY, sqlite3's executemany of ``csv.reader`` rows and
the plain-Python floor (``csv.reader`` into a list); (4) the executemany shapes that used to
fall off a cliff, each against plain ``VALUES (?, ?)`` in interleaved rounds, with the floor of
fresh numerics (``Decimal`` and its hash); (5) the data directory's size after the load and
after rounds of 10,000-row updates, against the live rows' encoded size; (6) k=1 in memory,
durable full and durable normal interleaved change by change, beside one fsync's cost.
Every figure is a median of its repetitions; ratios are against peers measured in this run.
Deliberately not here: the freshness and isolation workloads (``bench.freshness``,
``bench.isolation``), asserting anything (tests never assert wall-clock limits).
"""
from __future__ import annotations

import csv
import datetime
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from typing import Callable

now = time.perf_counter


def _median(fn: Callable[[], None], reps: int) -> float:
    out = []
    for _ in range(reps):
        t = now()
        fn()
        out.append(now() - t)
    return statistics.median(out)


def _rows(n: int) -> list:
    return [(i, i % 10_000, (i * 7919) % 1000, f"note {i % 97}") for i in range(n)]


SCHEMA = ["CREATE TABLE customers (id int, region text)",
          "CREATE TABLE orders (id int, customer_id int, amount int, note text)"]
VIEW = ("CREATE MATERIALIZED VIEW sales AS SELECT c.region, count(*) AS n, sum(o.amount) AS total "
        "FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region")


def _mz_load(con, rows) -> dict:
    t0 = now()
    for s in SCHEMA:
        con.execute(s)
    con.executemany("INSERT INTO customers VALUES (?, ?)", [(i, f"r{i % 20}") for i in range(10_000)])
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", rows)
    t1 = now()
    con.execute(VIEW)
    con.execute("CREATE INDEX sales_by_region ON sales (region)")
    con.execute("CREATE INDEX orders_by_id ON orders (id)")
    con.execute("SELECT * FROM sales WHERE region = 'r1'").fetchall()
    con.execute("SELECT amount FROM orders WHERE id = 1").fetchall()
    t2 = now()
    return {"load": t1 - t0, "hydrate": t2 - t1}


def _mz_changes(con, reps: int, next_id: list) -> dict:
    def k1():
        next_id[0] += 1
        con.execute("INSERT INTO orders VALUES (?, 1, 5, 'k1')", (next_id[0],))
        con.execute("SELECT n FROM sales WHERE region = 'r1'").fetchall()

    def k10k():
        base = next_id[0]
        next_id[0] += 10_000
        con.executemany("INSERT INTO orders VALUES (?, ?, 5, 'k')", [(base + i, i) for i in range(10_000)])
        con.execute("SELECT n FROM sales WHERE region = 'r1'").fetchall()

    def point():
        con.execute("SELECT amount FROM orders WHERE id = ?", (12345,)).fetchall()
    return {"k=1": _median(k1, reps), "k=10000": _median(k10k, max(3, reps // 10)), "point": _median(point, reps)}


def _sqlite(path, rows, reps: int) -> dict:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    t = now()
    db.execute("CREATE TABLE orders (id int, customer_id int, amount int, note text)")
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", rows)
    db.commit()
    load = now() - t
    db.execute("CREATE INDEX orders_by_id ON orders (id)")
    ids = [len(rows) + 10]

    def k1():
        ids[0] += 1
        db.execute("INSERT INTO orders VALUES (?, 1, 5, 'k1')", (ids[0],))
        db.commit()
        db.execute("SELECT count(*) FROM orders WHERE customer_id = 1").fetchall()

    def point():
        db.execute("SELECT amount FROM orders WHERE id = ?", (12345,)).fetchall()
    out = {"load": load, "k=1": _median(k1, reps), "point": _median(point, reps)}
    db.close()
    return out


def _write_csv(path: str, rows) -> None:
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)


def _copy_figures(tmp: str, rows, reps: int) -> dict:
    import mzlite
    path = os.path.join(tmp, "orders.csv")
    _write_csv(path, rows)
    out = {}

    def mz(durable: bool):
        def run():
            d = os.path.join(tmp, f"copy-{time.monotonic_ns()}")
            con = mzlite.connect(d) if durable else mzlite.connect()
            con.execute(SCHEMA[1])
            t = now()
            con.execute(f"COPY orders FROM '{path}' (FORMAT csv)")
            run.t = now() - t
            con.close()
            shutil.rmtree(d, ignore_errors=True)
        samples = []
        for _ in range(reps):
            run()
            samples.append(run.t)
        return statistics.median(samples)
    out["mzlite COPY (memory)"] = mz(False)
    out["mzlite COPY (durable)"] = mz(True)
    try:
        import duckdb

        def dk():
            con = duckdb.connect()
            con.execute("CREATE TABLE orders (id int, customer_id int, amount int, note text)")
            con.execute(f"COPY orders FROM '{path}' (FORMAT csv)")
            con.close()
        out["duckdb COPY"] = _median(dk, reps)
    except ImportError:
        pass

    def sq():
        db = sqlite3.connect(":memory:")
        db.execute("CREATE TABLE orders (id int, customer_id int, amount int, note text)")
        with open(path, newline="") as f:
            db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", csv.reader(f))
        db.commit()
        db.close()
    out["sqlite3 executemany(csv.reader)"] = _median(sq, reps)

    def floor():
        with open(path, newline="") as f:
            list(csv.reader(f))
    out["python floor (csv.reader)"] = _median(floor, reps)
    return out


def _k1_interleaved(tmp: str, reps: int) -> dict:
    """k=1 (INSERT one row, then read the materialized view that reflects it) in memory, in a
    data directory with ``durability="full"`` and with ``"normal"``, one change of each in
    turn, so the load of the machine moves all three alike; plus the cost of one fsync of a
    small file in the same directory (the floor a ``full`` commit cannot go under)."""
    import mzlite
    rows = _rows(10_000)
    cons = {"memory": mzlite.connect(), "full": mzlite.connect(os.path.join(tmp, "k1-full")),
            "normal": mzlite.connect(os.path.join(tmp, "k1-normal"), durability="normal")}
    samples: dict = {k: [] for k in cons}
    samples["fsync"] = []
    fd = os.open(os.path.join(tmp, "k1-fsync-probe"), os.O_RDWR | os.O_CREAT)
    try:
        for con in cons.values():
            _mz_load(con, rows)
        next_id = len(rows) + 10
        for _ in range(reps):
            next_id += 1
            for name, con in cons.items():
                t = now()
                con.execute("INSERT INTO orders VALUES (?, 1, 5, 'k1')", (next_id,))
                con.execute("SELECT n FROM sales WHERE region = 'r1'").fetchall()
                samples[name].append(now() - t)
            os.write(fd, b"x" * 512)
            t = now()
            os.fdatasync(fd)
            samples["fsync"].append(now() - t)
    finally:
        os.close(fd)
        for con in cons.values():
            con.close()
    return {k: statistics.median(v) for k, v in samples.items()}


def _executemany_figures(n: int, reps: int) -> dict:
    """Each case once per round, the rounds repeated (interleaved, so they share the load), and
    the numeric floor: ``Decimal`` of each text and its hash (what a write of fresh numerics
    does at least: the rows' consolidation hashes them)."""
    import decimal
    import mzlite
    con = mzlite.connect()
    con.execute("CREATE TABLE t (a int, b int)")
    con.execute("CREATE TABLE ts (a int, b timestamp)")
    con.execute("CREATE TABLE nu (a int, b numeric)")
    ints = [(i, i) for i in range(n)]
    base = datetime.datetime(2020, 1, 1)
    cases = {
        "VALUES (?, ?)": ("INSERT INTO t VALUES (?, ?)", ints),
        "VALUES (?, ? + 1)": ("INSERT INTO t VALUES (?, ? + 1)", ints),
        "timestamp parameters": ("INSERT INTO ts VALUES (?, ?)",
                                 [(i, base + datetime.timedelta(seconds=i)) for i in range(n)]),
        "timestamp as text": ("INSERT INTO ts VALUES (?, ?)",
                              [(i, str(base + datetime.timedelta(seconds=i))) for i in range(n)]),
        "numeric as text": ("INSERT INTO nu VALUES (?, ?)", [(i, f"{i}.25") for i in range(n)]),
    }
    samples: dict = {name: [] for name in cases}
    texts = [r[1] for r in cases["numeric as text"][1]]
    samples["floor: Decimal(text) + hash"] = []
    for _ in range(reps):
        for name, (sql, rows) in cases.items():
            t = now()
            con.executemany(sql, rows)
            samples[name].append(now() - t)
        t = now()
        list(map(hash, map(decimal.Decimal, texts)))
        samples["floor: Decimal(text) + hash"].append(now() - t)
    out = {name: statistics.median(v) for name, v in samples.items()}
    out[f"INSERT ... SELECT generate_series(1, {n * 10})"] = _median(
        lambda: con.execute(f"INSERT INTO t SELECT g, g FROM generate_series(1, {n * 10}) AS g"), max(1, reps // 2))
    con.close()
    return out


def _dir_size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


def run(args) -> dict:
    import mzlite
    import msgpack
    n = args.orders or (100_000 if args.quick else 1_000_000)
    reps = max(3, int((10 if args.quick else 30) * args.reps_scale))
    tmp = tempfile.mkdtemp(prefix="mzlite-bench-load-")
    rows = _rows(n)
    result: dict = {"workload": "load", "rows": n, "figures": {}}
    fig = result["figures"]
    try:
        print(f"== load: {n:,} rows, {reps} repetitions per median", file=sys.stderr)
        mem = mzlite.connect()
        fig["memory"] = _mz_load(mem, rows)
        fig["memory"].update(_mz_changes(mem, reps, [n + 10]))
        mem.close()
        d = os.path.join(tmp, "durable")
        dur = mzlite.connect(d)
        fig["durable"] = _mz_load(dur, rows)
        fig["durable"]["size after load"] = _dir_size(d)
        fig["durable"].update(_mz_changes(dur, reps, [n + 10]))
        dur.close()
        t = now()
        dur = mzlite.connect(d)
        dur.execute("SELECT * FROM sales WHERE region = 'r1'").fetchall()
        dur.execute("SELECT amount FROM orders WHERE id = 1").fetchall()
        fig["durable"]["reopen until read"] = now() - t
        rounds = 20 if args.quick else 100
        for r in range(rounds):
            dur.execute("UPDATE orders SET amount = amount + 1 WHERE id < 10000")
        # the size the directory settles at: past the compaction window, the folds done
        time.sleep(dur.database.system["compaction_window_ms"] / 1000 + 0.5)
        dur.database.tick()
        while dur.database.storage.folding():
            dur.database.storage.fold_steps()
        dur.close()
        fig["durable"]["size after updates"] = _dir_size(d)
        # the live rows packed as the store's codec packs them (column by column, msgpack)
        fig["durable"]["live encoded size"] = len(msgpack.packb([4, [1] * len(rows), *map(list, zip(*rows))]))
        nd = os.path.join(tmp, "normal")
        normal = mzlite.connect(nd, durability="normal")
        _mz_load(normal, rows[:10_000])
        fig["durable (normal)"] = _mz_changes(normal, reps, [n + 10])
        normal.close()
        fig["sqlite3 (WAL, synchronous=FULL)"] = _sqlite(os.path.join(tmp, "peer.sqlite"), rows, reps)
        fig["copy"] = _copy_figures(tmp, rows, max(1, reps // 10))
        result["executemany rows"] = 100_000 if not args.quick else 20_000
        fig["executemany"] = _executemany_figures(result["executemany rows"], max(5, reps // 3))
        fig["k=1 interleaved"] = _k1_interleaved(tmp, max(50, reps * 10))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _print(result)
    return result


def _print(result: dict) -> None:
    f = result["figures"]
    m, d, s = f["memory"], f["durable"], f["sqlite3 (WAL, synchronous=FULL)"]
    print(f"load workload, {result['rows']:,} rows (medians, seconds)")
    print(f"{'':28s}{'memory':>12s}{'durable':>12s}{'durable/mem':>13s}{'sqlite3':>12s}")
    for k in ("k=1", "k=10000", "point", "load", "hydrate"):
        sq = s.get(k)
        print(f"{k:28s}{m[k]:12.4f}{d[k]:12.4f}{d[k] / m[k]:13.2f}{sq if sq is None else format(sq, '12.4f')!s:>12s}")
    nm = f["durable (normal)"]
    print(f"durability normal (10,000 rows): k=1 {nm['k=1']:.4f} s ({nm['k=1'] / m['k=1']:.2f}x memory), "
          f"point {nm['point']:.4f} s")
    print(f"reopen until read: {d['reopen until read']:.2f} s (first load + hydration: "
          f"{d['load'] + d['hydrate']:.2f} s; ratio {d['reopen until read'] / (d['load'] + d['hydrate']):.2f})")
    live = d["live encoded size"]
    print(f"directory: {d['size after load'] / 1e6:.1f} MB after the load ({d['size after load'] / live:.2f}x the live "
          f"rows' encoded {live / 1e6:.1f} MB), {d['size after updates'] / 1e6:.1f} MB after the update rounds "
          f"({d['size after updates'] / live:.2f}x)")
    c = f["copy"]
    sq = c["sqlite3 executemany(csv.reader)"]
    print("loading the rows from CSV:")
    for k, v in c.items():
        print(f"  {k:34s}{v:9.3f} s   {v / sq:6.2f}x sqlite3")
    e = f["executemany"]
    plain = e["VALUES (?, ?)"]
    print(f"executemany, {result['executemany rows']:,} rows (generate_series: its count):")
    for k, v in e.items():
        print(f"  {k:44s}{v:9.3f} s   {v / plain:6.2f}x VALUES (?, ?)")
    k1 = f["k=1 interleaved"]
    print(f"k=1 interleaved (10,000 orders, medians): memory {k1['memory'] * 1e3:.3f} ms, durable full "
          f"{k1['full'] * 1e3:.3f} ms ({k1['full'] / k1['memory']:.2f}x), durable normal {k1['normal'] * 1e3:.3f} ms "
          f"({k1['normal'] / k1['memory']:.2f}x); one fdatasync here {k1['fsync'] * 1e3:.3f} ms "
          f"(full - memory: {(k1['full'] - k1['memory']) * 1e3:.3f} ms)")
