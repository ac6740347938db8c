"""``python -m bench oneshot``: one-shot queries no index serves, against DuckDB, sqlite3 and a
plain-Python floor, in the same run.

Owns the one-shot workload: a table ``t(id, g, v)`` of N rows (``g = id % 10000``) and a
dimension ``d(g, name)`` of 10,000 rows, loaded into every engine; per size the median of a
few runs of count(*), a point filter without an index, a 10,000-group GROUP BY, a join with
an aggregate and fetchall of the whole table; then the generate_series sum, the time an
interrupt sent 200 ms into a long query takes to stop it (and the next ``SELECT 1``), and
SQLite's select5.test through ``mzlite slt`` (when a copy of it is given with ``--select5``
or found in the shared corpus).  The plain-Python floor is the same computation written
directly over a list of tuples (one pass; fetchall builds a new tuple per row).  Invariant: every engine's answer is compared with the
floor's before its time is reported (a wrong answer is reported as an error, not a time).
Deliberately not here: maintained views and freshness (``bench.freshness``), reads during
maintenance (``bench.isolation``).
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time

from bench.report import fmt_ratio, fmt_s, table

SERIES_N = 20_000_000
SELECT5_CANDIDATES = ("/work/shared/sqlite-corpus/select5.test",)

QUERIES = {
    "count(*)": "SELECT count(*) FROM t",
    "point filter": "SELECT id, g, v FROM t WHERE id = 42",
    "group by": "SELECT g, count(*), sum(v) FROM t GROUP BY g",
    "join+agg": "SELECT d.name, count(*), sum(t.v) FROM t JOIN d ON t.g = d.g GROUP BY d.name",
    "fetchall": "SELECT id, g, v FROM t",
}


def _rows(n):
    return [(i, i % 10000, i % 97) for i in range(1, n + 1)]


def _dim():
    return [(g, f"n{g % 10}") for g in range(10000)]


def python_floor(rows, dim):
    """The same computations in plain Python: ``name -> fn()``."""
    names = dict(dim)

    def group_by():
        acc = {}
        for _i, g, v in rows:
            a = acc.get(g)
            if a is None:
                acc[g] = [1, v]
            else:
                a[0] += 1
                a[1] += v
        return [(g, c, s) for g, (c, s) in acc.items()]

    def join_agg():
        acc = {}
        for _i, g, v in rows:
            name = names.get(g)
            if name is None:
                continue
            a = acc.get(name)
            if a is None:
                acc[name] = [1, v]
            else:
                a[0] += 1
                a[1] += v
        return [(k, c, s) for k, (c, s) in acc.items()]
    return {
        "count(*)": lambda: [(sum(1 for _r in rows),)],
        "point filter": lambda: [r for r in rows if r[0] == 42],
        "group by": group_by,
        "join+agg": join_agg,
        "fetchall": lambda: [(a, b, c) for a, b, c in rows],
    }


def _norm(rows):
    return sorted(tuple(int(x) if hasattr(x, "as_integer_ratio") and not isinstance(x, float) else x
                        for x in r) for r in rows)


class _Engine:
    name = "?"

    def run(self, sql):
        raise NotImplementedError


class _Mzlite(_Engine):
    name = "mzlite"

    def __init__(self, rows, dim, params):
        import mzlite
        self.con = mzlite.connect(system_parameters=params)
        self.con.execute("CREATE TABLE t (id int, g int, v int)")
        self.con.execute("CREATE TABLE d (g int, name text)")
        from mzlite import bulk  # noqa: F401  (executemany takes the bulk path)
        self.con.cursor().executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        self.con.cursor().executemany("INSERT INTO d VALUES (?, ?)", dim)

    def run(self, sql):
        return self.con.execute(sql).fetchall()


class _Sqlite(_Engine):
    name = "sqlite"

    def __init__(self, rows, dim):
        import sqlite3
        self.con = sqlite3.connect(":memory:", check_same_thread=False)
        self.con.execute("CREATE TABLE t (id int, g int, v int)")
        self.con.execute("CREATE TABLE d (g int, name text)")
        self.con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        self.con.executemany("INSERT INTO d VALUES (?, ?)", dim)
        self.con.commit()

    def run(self, sql):
        return self.con.execute(sql).fetchall()


class _Duckdb(_Engine):
    name = "duckdb"

    def __init__(self, rows, dim):
        import duckdb
        self.con = duckdb.connect()
        n = len(rows)
        self.con.execute("CREATE TABLE t AS SELECT i::INT AS id, (i % 10000)::INT AS g, (i % 97)::INT AS v "
                         f"FROM range(1, {n + 1}) r(i)")
        self.con.execute("CREATE TABLE d AS SELECT i::INT AS g, 'n' || (i % 10) AS name FROM range(0, 10000) r(i)")

    def run(self, sql):
        return self.con.execute(sql).fetchall()


def _engines(rows, dim, args, emit):
    out = []
    params = dict(p.split("=", 1) for p in (args.mz_param or []))
    for make in (lambda: _Mzlite(rows, dim, params), lambda: _Duckdb(rows, dim), lambda: _Sqlite(rows, dim)):
        t0 = time.perf_counter()
        try:
            e = make()
        except ImportError as ex:
            emit(f"  (skipped an engine: {ex})")
            continue
        emit(f"  loaded {e.name} in {time.perf_counter() - t0:.1f} s")
        out.append(e)
    return out


def _time(fn, reps):
    samples, result = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), samples, result


def _measure_size(n, args, emit, res):
    rows, dim = _rows(n), _dim()
    floor = python_floor(rows, dim)
    engines = _engines(rows, dim, args, emit)
    reps = 1 if args.quick else 3
    out = {}
    for q, sql in QUERIES.items():
        want = None
        entry = {}
        t, samples, got = _time(floor[q], reps)
        want = _norm(got)
        entry["python"] = {"median_s": t, "samples": samples}
        for e in engines:
            try:
                t, samples, got = _time(lambda: e.run(sql), reps)
            except Exception as ex:  # noqa: BLE001 - reported, never hidden
                entry[e.name] = {"error": repr(ex)}
                continue
            if _norm(got) != want:
                entry[e.name] = {"error": "wrong answer"}
                continue
            entry[e.name] = {"median_s": t, "samples": samples}
        out[q] = entry
        emit(f"  {n:,} rows, {q}: " + ", ".join(
            f"{k} {fmt_s(v.get('median_s')) if 'median_s' in v else v['error']}" for k, v in entry.items()))
    res["sizes"][str(n)] = out
    return engines


def _series(engines, emit, res):
    want = SERIES_N * (SERIES_N + 1) // 2
    entry = {}
    t0 = time.perf_counter()
    sum(range(1, SERIES_N + 1))
    entry["python"] = {"median_s": time.perf_counter() - t0}
    sql = {"mzlite": f"SELECT sum(x) FROM generate_series(1, {SERIES_N}) x",
           "duckdb": f"SELECT sum(x) FROM generate_series(1, {SERIES_N}) t(x)",
           "sqlite": f"WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < {SERIES_N}) "
                     f"SELECT sum(x) FROM s"}
    for e in engines:
        t0 = time.perf_counter()
        got = e.run(sql[e.name])
        t = time.perf_counter() - t0
        entry[e.name] = {"median_s": t} if int(got[0][0]) == want else {"error": "wrong answer"}
    res["series"] = entry
    emit("  generate_series sum: " + ", ".join(f"{k} {fmt_s(v.get('median_s'))}" for k, v in entry.items()))


def _cancel(mz, emit, res):
    """Interrupt long queries 200 ms in; how long each took to stop, and the next SELECT 1."""
    con = mz.con
    long_queries = {
        "GROUP BY over a 20M series": "SELECT x % 1000, count(*) FROM generate_series(1, 20000000) x GROUP BY 1",
        "cross product t x d": "SELECT count(*) FROM t, d WHERE t.v + d.g = -1",
    }
    out = {}
    for name, sql in long_queries.items():
        done = {}

        def run():
            try:
                con.execute(sql).fetchall()
                done["outcome"] = "finished"
            except Exception as ex:  # noqa: BLE001 - reported
                done["outcome"] = getattr(ex, "sqlstate", None) or repr(ex)
            done["t"] = time.perf_counter()
        th = threading.Thread(target=run)
        th.start()
        time.sleep(0.2)  # a benchmark's stimulus, not synchronisation: what a user's Ctrl-C does
        t0 = time.perf_counter()
        con.interrupt()
        th.join()
        stop = done["t"] - t0
        t1 = time.perf_counter()
        con.execute("SELECT 1").fetchall()
        nxt = time.perf_counter() - t1
        out[name] = {"stop_s": max(0.0, stop), "next_select_1_s": nxt, "outcome": done["outcome"]}
        emit(f"  interrupt: {name}: stopped in {fmt_s(max(0.0, stop))} ({done['outcome']}), "
             f"next SELECT 1 {fmt_s(nxt)}")
    res["cancel"] = out


def _select5(args, emit, res):
    path = args.select5 or next((p for p in SELECT5_CANDIDATES if os.path.exists(p)), None)
    if path is None or not os.path.exists(path):
        emit("  select5.test: not found (give --select5 PATH)")
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = {}
    for label, extra in (("mzlite (interactive runtime on)",
                          ["--system-parameter-default", "enable_compute_interactive_runtime=true"]),
                         ("mzlite (interactive runtime off)",
                          ["--system-parameter-default", "enable_compute_interactive_runtime=false"]),
                         ("sqlite (same runner)", ["--engine", "sqlite"])):
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "slt", *extra, path], cwd=root,
                           capture_output=True, text=True, timeout=args.timeout)
        t = time.perf_counter() - t0
        last = (p.stdout.strip().splitlines() or [""])[-1]
        out[label] = {"wall_s": t, "summary": last}
        emit(f"  select5.test, {label}: {fmt_s(t)} ({last})")
    res["select5"] = out


def run(args):
    emit = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    sizes = [100_000] if args.quick else [100_000, 1_000_000]
    if args.orders:
        sizes = [args.orders]
    res = {"sizes": {}, "load_average_start": os.getloadavg()[0]}
    engines = []
    for n in sizes:
        emit(f"one-shot queries over {n:,} rows")
        engines = _measure_size(n, args, emit, res)
    _series(engines, emit, res)
    mz = next((e for e in engines if e.name == "mzlite"), None)
    if mz is not None:
        _cancel(mz, emit, res)
    _select5(args, emit, res)
    res["load_average_end"] = os.getloadavg()[0]
    print(report(res))
    return res


def report(res) -> str:
    lines = [f"load average {res.get('load_average_start', 0):.1f} at the start, "
             f"{res.get('load_average_end', 0):.1f} at the end (above 2: noise on 2 cores)"]
    peers = ["python", "duckdb", "sqlite"]
    for n, qs in res["sizes"].items():
        rows = []
        for q, entry in qs.items():
            mine = entry.get("mzlite", {}).get("median_s")
            cells = [q, fmt_s(mine) if mine is not None else entry.get("mzlite", {}).get("error", "-")]
            for p in peers:
                t = entry.get(p, {}).get("median_s")
                cells += [fmt_s(t), fmt_ratio(mine / t) if mine and t else "-"]
            rows.append(cells)
        lines.append(f"\none-shot queries, {int(n):,} rows (mzlite / peer: >1 means mzlite is slower)")
        lines.append(table(["query", "mzlite", "python", "/python", "duckdb", "/duckdb", "sqlite", "/sqlite"],
                           rows))
    if "series" in res:
        s = res["series"]
        mine = s.get("mzlite", {}).get("median_s")
        lines.append(f"\nSELECT sum(x) FROM generate_series(1, {SERIES_N:,}) (python: sum(range(...)))")
        lines.append(table(["engine", "time", "mzlite / engine"],
                           [[k, fmt_s(v.get("median_s")) if "median_s" in v else v.get("error", "-"),
                             fmt_ratio(mine / v["median_s"]) if mine and v.get("median_s") else "-"]
                            for k, v in s.items()]))
    if res.get("cancel"):
        lines.append("\ninterrupt sent 200 ms into a long query (target: stopped within 100 ms)")
        lines.append(table(["query", "stopped in", "next SELECT 1", "outcome"],
                           [[k, fmt_s(v["stop_s"]), fmt_s(v["next_select_1_s"]), v["outcome"]]
                            for k, v in res["cancel"].items()]))
    if res.get("select5"):
        lines.append("\nSQLite's select5.test through the slt runner (target: under 60 s)")
        lines.append(table(["engine", "wall", "result"],
                           [[k, fmt_s(v["wall_s"]), v["summary"]] for k, v in res["select5"].items()]))
    return "\n".join(lines)
