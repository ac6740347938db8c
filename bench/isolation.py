"""The isolation workload: do reads stay fast while maintenance is busy?

Owns: one run per setting of ``enable_compute_interactive_runtime`` (on, then off), each in a
fresh process.  A run loads ``orders`` (N rows), ``customers`` (10,000) and ``regions`` (10),
builds ``MATERIALIZED VIEW sales`` with an index on ``region``, and then

- reads open loop on one connection, every ``interval`` (20 ms): even ticks an indexed point
  lookup (``SELECT n, total FROM sales WHERE region = 'r3'``), odd ticks a join no index
  serves (``sales JOIN regions``: a peek dataflow importing the published ``sales`` index);
- first for a short idle period, then while a second connection (``con.connect()``, on its
  own thread) keeps creating a heavy materialized view over the N-row join, waiting until
  it is hydrated (``SELECT sum(n) FROM heavy_i`` returns), and dropping it.

Invariant: latency is measured open loop, from each read's *scheduled* send time, not from
when the previous read returned, so a stall shows up in every read it delays (no
coordinated omission); reads scheduled after the run's end are not sent.  Every read's
answer and every heavy view's sum are checked against the oracle.

Every cyclic-collector pass of the run is recorded (``gc.callbacks``: generation, wall
pause, CPU time of the collecting thread, objects it had to walk's generation counts) and
summarised per phase, since a pass stops every thread: the busy tail is read against the
longest passes.

``--profile`` profiles the busy period (reader thread, and the writer and runtime threads).
Deliberately not here: peers (this is about mzlite's two runtimes), and the read mix beyond
the two kinds above.  With one Python process the runtimes share the GIL, so the figure
includes the GIL hand-off; that is what an embedded user sees.
"""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from typing import Any, Callable, Dict, List

from bench import report as R
from bench.engines import CUSTOMERS_DDL, ORDERS_DDL, mzlite_status, repo_root
from bench.workload import (INSERT_SQL, N_REGIONS, POINT_READ, POINT_REGION, VIEW_QUERY, Workload,
                            normalize_rows)

FLAG = "enable_compute_interactive_runtime"
JOIN_READ = "SELECT s.region, s.total, r.zone FROM sales s JOIN regions r ON s.region = r.name"
HEAVY_VIEW = ("CREATE MATERIALIZED VIEW heavy_{i} AS SELECT o.customer_id, count(*) AS n, sum(o.amount) AS total "
              "FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.region <> 'r{r}' "
              "GROUP BY o.customer_id")


def zone(r: int) -> int:
    return r % 3


# ============================================================================ one configuration
class CollectorLog:
    """Every cyclic-collector pass while installed: ``[start offset, generation, wall pause,
    CPU pause]`` (the CPU time is the collecting thread's: other sessions' load inflates the
    wall pause, not that)."""

    def __init__(self):
        self.passes: List[list] = []
        self._t0 = time.perf_counter()
        self._start = (0.0, 0.0)

    def __call__(self, phase, info):
        if phase == "start":
            self._start = (time.perf_counter(), time.thread_time())
        else:
            w, c = self._start
            self.passes.append([w - self._t0, info["generation"], time.perf_counter() - w, time.thread_time() - c])

    def between(self, a: float, b: float) -> List[list]:
        return [p for p in self.passes if a <= p[0] < b]

    def offset(self) -> float:
        return time.perf_counter() - self._t0


def run_config(spec: Dict[str, Any], emit: Callable[[Dict[str, Any]], None],
               log: Callable[[str], None] = lambda s: None) -> None:
    import mzlite
    flag = spec["flag"]
    label = f"interactive {'on' if flag else 'off'}"
    wl = Workload(spec["join_rows"], spec.get("seed", 42))
    o = wl.oracle
    expected_point = o.point()
    expected_join = normalize_rows((f"r{r}", o.total[r], zone(r)) for r in range(N_REGIONS) if o.n[r])
    interval = spec["interval"]
    now = time.perf_counter
    con = None
    profiler = None
    if spec.get("profile"):
        from bench.profiling import PhaseProfiler
        pr = spec["profile"]
        profiler = PhaseProfiler(top=pr.get("top", 25), out_dir=pr.get("dir"), self_top=pr.get("self_top", 15))
        profiler.install()
    collector = CollectorLog()
    gc.callbacks.append(collector)
    try:
        con = mzlite.connect(system_parameters={FLAG: flag})
        t0 = now()
        con.execute(CUSTOMERS_DDL)
        con.execute(ORDERS_DDL)
        con.execute("CREATE TABLE regions (name text NOT NULL, zone int NOT NULL)")
        con.cursor().executemany("INSERT INTO customers VALUES (?, ?)", wl.customers_rows())
        con.cursor().executemany(INSERT_SQL, wl.orders_rows())
        con.cursor().executemany("INSERT INTO regions VALUES (?, ?)", [(f"r{r}", zone(r)) for r in range(N_REGIONS)])
        con.execute("CREATE MATERIALIZED VIEW sales AS " + VIEW_QUERY)
        con.execute("CREATE INDEX sales_by_region ON sales (region)")
        con.execute(POINT_READ).fetchall()
        setup_s = now() - t0
        log(f"[{label}] setup (load {spec['join_rows']:,} orders + hydrate sales) {R.fmt_s(setup_s)}")

        queries = {"point": (POINT_READ, expected_point), "join": (JOIN_READ, expected_join)}
        state = {"mismatches": 0, "first_mismatch": None, "read_errors": 0, "first_read_error": None}

        def open_loop(duration: float) -> List[list]:
            """Samples ``[scheduled offset, kind, latency, error, service time, censored]``.

            Latency runs from the scheduled send time; service time from the actual send.  Reads
            still unsent at the hard deadline (3x the duration + 10 s: the engine cannot keep up)
            are recorded as censored, with latency = deadline - scheduled time (a lower bound)."""
            samples = []
            start = now() + 0.001
            deadline = start + duration * spec.get("deadline_factor", 3.0) + 10.0
            i = 0
            while True:
                sched = start + i * interval
                if sched - start >= duration:
                    break
                kind = "point" if i % 2 == 0 else "join"
                i += 1
                t = now()
                if t >= deadline:
                    samples.append([sched - start, kind, t - sched, None, None, True])
                    continue
                if sched > t:
                    time.sleep(sched - t)
                sql, expected = queries[kind]
                err = None
                sent = now()
                try:
                    rows = con.execute(sql).fetchall()
                    done = now()
                    if normalize_rows(rows) != expected:
                        state["mismatches"] += 1
                        if state["first_mismatch"] is None:
                            state["first_mismatch"] = f"{kind}: got {normalize_rows(rows)!r}, expected {expected!r}"
                except Exception as e:
                    done = now()
                    err = f"{type(e).__name__}: {e}"
                    state["read_errors"] += 1
                    if state["first_read_error"] is None:
                        state["first_read_error"] = err
                samples.append([sched - start, kind, done - sched, err, done - sent, False])
            return samples

        # warm both query shapes once, then an idle baseline
        for sql, _ in queries.values():
            con.execute(sql).fetchall()
        g_idle = collector.offset()
        idle = open_loop(spec["idle"])
        g_idle_end = collector.offset()
        log(f"[{label}] idle: {len(idle)} reads, p50 {R.fmt_s(R.percentile([s[2] for s in idle], 50))}, "
            f"p99 {R.fmt_s(R.percentile([s[2] for s in idle], 99))}")

        # the writer: create, hydrate, drop heavy views until told to stop
        stop = threading.Event()
        started = threading.Event()
        cycles: List[Dict[str, Any]] = []
        writer_error: List[str] = []

        def writer():
            w = con.connect()
            try:
                i = 0
                while not stop.is_set():
                    i += 1
                    r = i % N_REGIONS
                    expect = sum(o.n[x] for x in range(N_REGIONS) if x != r)
                    c0 = now()
                    started.set()
                    w.execute(HEAVY_VIEW.format(i=i, r=r))
                    c1 = now()
                    got = w.execute(f"SELECT sum(n) FROM heavy_{i}").fetchall()
                    c2 = now()
                    w.execute(f"DROP MATERIALIZED VIEW heavy_{i}")
                    c3 = now()
                    ok = normalize_rows(got) == [(expect,)]
                    cycles.append({"create": c1 - c0, "hydrate": c2 - c1, "drop": c3 - c2, "ok": ok})
                    if not ok and not writer_error:
                        writer_error.append(f"heavy_{i}: sum(n) = {got!r}, expected {expect}")
            except Exception as e:
                writer_error.append(f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
                started.set()
            finally:
                try:
                    w.close()
                except Exception:
                    pass

        th = threading.Thread(target=writer, name="bench-writer", daemon=True)
        th.start()
        started.wait(60)
        if profiler:
            profiler.start(f"busy ({label})")
        g_busy = collector.offset()
        busy = open_loop(spec["duration"])
        g_busy_end = collector.offset()
        if profiler:
            profiler.stop()
        stop.set()
        th.join(spec.get("writer_join_timeout", 300))
        emit({"event": "config", "flag": flag, "setup_s": setup_s, "idle": idle, "busy": busy,
              "cycles": cycles, "writer_error": writer_error[0] if writer_error else None,
              "writer_finished": not th.is_alive(), "gc_idle": collector.between(g_idle, g_idle_end),
              "gc_busy": collector.between(g_busy, g_busy_end), "tracked": [len(gc.get_objects(g)) for g in range(3)],
              **state})
        b = [s[2] for s in busy]
        log(f"[{label}] busy: {len(busy)} reads, p50 {R.fmt_s(R.percentile(b, 50))}, p99 {R.fmt_s(R.percentile(b, 99))}, "
            f"{len(cycles)} heavy views created+hydrated+dropped")
    except Exception as e:
        emit({"event": "error", "flag": flag, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()})
        log(f"[{label}] FAILED: {type(e).__name__}: {e}")
    finally:
        gc.callbacks.remove(collector)
        if profiler:
            profiler.uninstall()
            emit({"event": "profile", "flag": flag, "text": profiler.text()})
        emit({"event": "memory", "flag": flag, "peak_kb": R.peak_rss_kb()})
        try:
            if con is not None:
                con.close()
        except Exception:
            pass


def child_main(spec_json: str, out_path: str) -> int:
    spec = json.loads(spec_json)
    with open(out_path, "a") as out:
        def emit(ev):
            out.write(json.dumps(ev, default=str) + "\n")
            out.flush()
        run_config(spec, emit, log=lambda s: print(s, file=sys.stderr, flush=True))
    # the writer thread may be stuck in a statement: do not wait for daemon threads' engines
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _run_subprocess(spec, timeout, log) -> List[Dict[str, Any]]:
    fd, path = tempfile.mkstemp(prefix="bench-isolation-", suffix=".jsonl")
    os.close(fd)
    events: List[Dict[str, Any]] = []
    try:
        proc = subprocess.Popen([sys.executable, "-m", "bench", "_child", "isolation", "--spec", json.dumps(spec),
                                 "--out", path], cwd=repo_root(), stdout=sys.stderr)
        try:
            rc = proc.wait(timeout=timeout)
            if rc != 0:
                events.append({"event": "error", "flag": spec["flag"], "error": f"child exited with {rc}"})
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            events.append({"event": "error", "flag": spec["flag"], "error": f"timed out after {timeout:.0f} s"})
        with open(path) as f:
            events = [json.loads(ln) for ln in f if ln.strip()] + events
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return events


# ============================================================================ report
def summarize_config(events: List[Dict[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {"child_errors": [], "peak_kb": None}
    for ev in events:
        if ev["event"] == "config":
            out.update(ev)
        elif ev["event"] == "error":
            out["child_errors"].append(ev["error"] + ("\n" + ev["traceback"] if ev.get("traceback") else ""))
        elif ev["event"] == "memory":
            out["peak_kb"] = ev["peak_kb"]
        elif ev["event"] == "profile":
            out["profile"] = ev["text"]
    if "busy" in out:
        out["stats"] = {}
        for phase in ("idle", "busy"):
            for kind in ("point", "join", "all"):
                sel = [s for s in out[phase] if kind == "all" or s[1] == kind]
                lat = [s[2] for s in sel]
                svc = [s[4] for s in sel if s[4] is not None]
                out["stats"][f"{phase}/{kind}"] = {
                    "n": len(lat), "p50": R.percentile(lat, 50), "p99": R.percentile(lat, 99),
                    "max": max(lat) if lat else None, "censored": sum(1 for s in sel if s[5]),
                    "service_p50": R.percentile(svc, 50), "service_p99": R.percentile(svc, 99),
                    "errors": sum(1 for s in sel if s[3])}
        busy = out["busy"]
        if busy:
            d = max(s[0] for s in busy) + 1e-9
            quarters = [[s[2] for s in busy if q * d / 4 <= s[0] < (q + 1) * d / 4] for q in range(4)]
            out["stats"]["busy_p99_by_quarter"] = [R.percentile(q, 99) for q in quarters]
            squarters = [[s[4] for s in busy if s[4] is not None and q * d / 4 <= s[0] < (q + 1) * d / 4]
                         for q in range(4)]
            out["stats"]["busy_service_p99_by_quarter"] = [R.percentile(q, 99) for q in squarters]
        for phase in ("idle", "busy"):
            passes = out.get(f"gc_{phase}") or []
            out["stats"][f"gc_{phase}"] = {
                "n": [sum(1 for p in passes if p[1] == g) for g in range(3)],
                "max": max((p[2] for p in passes), default=None),
                "cpu_max": max((p[3] for p in passes), default=None),
                "cpu_max_by_gen": [max((p[3] for p in passes if p[1] == g), default=None) for g in range(3)],
                "cpu_total": sum(p[3] for p in passes)}
        hyd = [c["hydrate"] + c["create"] for c in out.get("cycles", [])]
        out["stats"]["heavy_cycles"] = len(out.get("cycles", []))
        out["stats"]["heavy_create_hydrate_median"] = R.median(hyd)
    return out


def render(configs: Dict[str, Dict[str, Any]], spec: Dict[str, Any]) -> str:
    lines = [f"isolation workload: open-loop reads every {spec['interval'] * 1e3:.0f} ms on one session while "
             f"another creates, hydrates and drops heavy MVs over a {spec['join_rows']:,}-row join; "
             f"{spec['idle']:.0f} s idle + {spec['duration']:.0f} s busy per setting"]
    rows = []
    for label, c in configs.items():
        st = c.get("stats")
        if not st:
            rows.append([label, "-", "-", "-", "-", "-", "-", "FAILED"])
            continue
        for key in ("idle/point", "idle/join", "busy/point", "busy/join", "busy/all"):
            s = st[key]
            lb = ">=" if s["censored"] else ""
            rows.append([label, key, str(s["n"]), lb + R.fmt_s(s["p50"]), lb + R.fmt_s(s["p99"]), lb + R.fmt_s(s["max"]),
                         R.fmt_s(s["service_p50"]), R.fmt_s(s["service_p99"]), str(s["errors"]),
                         str(s["censored"]) if s["censored"] else ""])
    lines.append(R.table(["setting", "phase/read", "n", "p50", "p99", "max", "service p50", "service p99",
                          "errors", "unsent"], rows, align_left=2))
    lines.append("  latency: from the scheduled send time (open loop); service: from the actual send; "
                 "unsent: reads not sent by the deadline (3x duration + 10 s), counted as lower bounds (>=)")
    on, off = configs.get("interactive on", {}).get("stats"), configs.get("interactive off", {}).get("stats")
    if on and off:
        for key in ("busy/point", "busy/join", "busy/all"):
            lines.append(f"  ratio off/on {key:10s}: latency p50 {R.fmt_ratio(R.ratio(off[key]['p50'], on[key]['p50']))}, "
                         f"p99 {R.fmt_ratio(R.ratio(off[key]['p99'], on[key]['p99']))}; service p50 "
                         f"{R.fmt_ratio(R.ratio(off[key]['service_p50'], on[key]['service_p50']))}, p99 "
                         f"{R.fmt_ratio(R.ratio(off[key]['service_p99'], on[key]['service_p99']))}"
                         "  (>1: the interactive runtime helps)")
    for label, c in configs.items():
        st = c.get("stats")
        if st and (st["busy/all"]["service_p50"] or 0) > spec["interval"]:
            lines.append(f"  {label}: reads could not keep up with the {spec['interval'] * 1e3:.0f} ms schedule (service "
                         f"p50 {R.fmt_s(st['busy/all']['service_p50'])}): busy latency is mostly queueing; compare "
                         "service times")
    for label, c in configs.items():
        st = c.get("stats")
        if not st:
            continue
        q = ", ".join(R.fmt_s(x) for x in st.get("busy_p99_by_quarter", []))
        sq = ", ".join(R.fmt_s(x) for x in st.get("busy_service_p99_by_quarter", []))
        lines.append(f"  {label}: busy p99 per quarter: latency {q}; service {sq}")
        lines.append(f"  {label}: heavy views created+hydrated+dropped: {st['heavy_cycles']}, median create+hydrate "
                     f"{R.fmt_s(st['heavy_create_hydrate_median'])}, setup {R.fmt_s(c.get('setup_s'))}, "
                     f"peak RSS {R.fmt_mb(c.get('peak_kb'))}")
    for label, c in configs.items():
        st = c.get("stats")
        if not st:
            continue
        for phase in ("idle", "busy"):
            g = st[f"gc_{phase}"]
            by_gen = ", ".join(f"gen{i} {n} (longest {R.fmt_s(m)})" for i, (n, m) in
                               enumerate(zip(g["n"], g["cpu_max_by_gen"])) if n)
            lines.append(f"  {label}: {phase} collector passes: {by_gen or 'none'}; CPU {R.fmt_s(g['cpu_total'])} in all, "
                         f"longest pause {R.fmt_s(g['max'])} wall")
        if c.get("tracked"):
            lines.append(f"  {label}: objects the collector tracks at the end, by generation: "
                         + ", ".join(f"{n:,}" for n in c["tracked"]))
    problems = problems_of(configs)
    lines.extend("PROBLEM: " + p for p in problems)
    if not problems:
        lines.append("results: every read and every heavy view's sum agreed with the oracle")
    return "\n".join(lines)


def problems_of(configs) -> List[str]:
    out = []
    for label, c in configs.items():
        if c.get("mismatches"):
            out.append(f"{label}: {c['mismatches']} wrong read(s); first: {c['first_mismatch']}")
        if c.get("read_errors"):
            out.append(f"{label}: {c['read_errors']} read error(s); first: {c['first_read_error']}")
        out.extend(f"{label}: {e}" for e in c.get("child_errors", []))
        if c.get("writer_error"):
            out.append(f"{label}: writer: {c['writer_error']}")
        if "busy" in c and not c.get("writer_finished", True):
            out.append(f"{label}: the writer did not finish its last cycle in time")
    return out


def run(args) -> Dict[str, Any]:
    log = lambda s: print(s, file=sys.stderr, flush=True)
    spec = {"join_rows": args.join_rows or (50_000 if args.quick else 200_000),
            "duration": args.duration or (10.0 if args.quick else 30.0),
            "idle": 2.0 if args.quick else 5.0,
            "interval": args.interval_ms / 1e3, "seed": 42}
    if args.profile:
        spec["profile"] = {"top": args.profile_top, "dir": args.profile_dir, "self_top": args.profile_self}
    ok, why = mzlite_status()
    if not ok:
        print(f"isolation workload: mzlite is not usable yet ({why}); nothing to measure")
        return {"workload": "isolation", "spec": spec, "skipped": why, "configs": {}, "problems": []}
    configs: Dict[str, Dict[str, Any]] = {}
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    for flag in (True, False):
        label = f"interactive {'on' if flag else 'off'}"
        s = dict(spec, flag=flag)
        log(f"[{label}] running ...")
        if args.in_process:
            evs: List[Dict[str, Any]] = []
            run_config(s, evs.append, log)
        else:
            evs = _run_subprocess(s, args.timeout, log)
        configs[label] = summarize_config(evs)
    print(render(configs, spec))
    if load_before is not None:
        print(f"  load average (1 min) before {load_before:.2f}, after {os.getloadavg()[0]:.2f}")
    for label, c in configs.items():
        if c.get("profile"):
            print(f"\nNOTE: {label} ran under cProfile (reader thread = caller; writer and runtimes = other threads)")
            print(c["profile"])
    problems = problems_of(configs)
    return {"workload": "isolation", "spec": spec, "configs": configs, "problems": problems}
