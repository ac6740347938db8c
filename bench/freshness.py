"""The freshness workload: how fast does a change show up in a read of the view?

Owns: the phase sequence run against each engine and the report that compares them.
Phases, in order, per engine:

- ``load``: create ``customers`` (10,000 rows, 10 regions) and ``orders`` (N rows) and load
  them (peers also build their indexes here);
- ``hydrate``: mzlite creates ``MATERIALIZED VIEW sales`` and its index and reads the view
  (timed until that first read returns); peers create a plain view and run it once (cold);
- ``read``: a read of the whole view with no change before it;
- ``k=1``, ``k=100``, ``k=10000``: a batch of k single-row changes (kinds rotate insert,
  update, delete; one write each), then a read of the whole view; the sample is write+read;
- ``point``: ``SELECT n, total FROM sales WHERE region = 'r3'`` (mzlite: the index; peers:
  the query);
- ``point_stored`` (peers only): the same lookup on a table holding the view's answer.

Invariant: every engine sees the same rows and the same batches (``bench.workload``), and
every read is checked against the oracle; the parent also compares the engines' final rows
per phase.  A wrong answer is reported loudly, never hidden in a median.  By default each
engine runs in a fresh subprocess, so its peak RSS (``ru_maxrss``) is its own; the figure
shown is the peak minus the RSS before the input rows were built (the harness's oracle is
in every process alike; the input list of tuples counts for every engine alike).

Guards, so a slow path cannot stall the run: a change kind whose next batch is projected
(per-row write cost at the largest k measured, times k) to exceed ``--batch-budget`` is
skipped from then on, as is the rest of a phase that exceeds its phase budget; the engine's
later answers are then timed but not checked, and the table marks the phase "partial".
Time spent in Python's cyclic GC is recorded per phase (``gc.callbacks``).

Deliberately not here: asserting the targets (they are reported, not enforced), and
warm-up tricks (the medians absorb a first slow sample; every sample is kept in --json).
"""
from __future__ import annotations

import gc
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any, Callable, Dict, List, Optional

from bench import report as R
from bench.engines import ENGINES, PEERS, make_engine, repo_root
from bench.workload import KINDS, Workload, normalize_rows

CHANGE_KS = (1, 100, 10_000)
DEFAULT_REPS = {"read": 21, "k=1": 21, "k=100": 12, "k=10000": 6, "point": 51, "point_stored": 51}

TARGET_N = 1_000_000


def default_spec(n_orders: int, **kw) -> Dict[str, Any]:
    spec = {
        "n_orders": n_orders,
        "seed": 42,
        "reps": dict(DEFAULT_REPS),
        "ks": list(CHANGE_KS),
        "phase_budget_s": 300.0,
        "options": {},
        "profile": None,     # {"top": 25, "dir": ..., "phases": [...]} for mzlite
    }
    spec.update(kw)
    return spec


# ============================================================================ one engine
class GCMeter:
    """Time spent in Python's cyclic garbage collector since ``reset`` (all threads)."""
    current: "GCMeter | None" = None

    def __init__(self):
        self.reset()
        self._t0 = None
        GCMeter.current = self

    def reset(self):
        self.seconds = 0.0
        self.collections = 0


def _gc_hook(phase, info):
    m = GCMeter.current
    if m is None:
        return
    if phase == "start":
        m._t0 = time.perf_counter()
    elif m._t0 is not None:
        m.seconds += time.perf_counter() - m._t0
        m.collections += 1
        m._t0 = None


def run_engine(name: str, spec: Dict[str, Any], emit: Callable[[Dict[str, Any]], None],
               log: Callable[[str], None] = lambda s: None) -> None:
    """Run every phase against ``name``; ``emit`` receives one event per phase (and more)."""
    wl = Workload(spec["n_orders"], spec["seed"])
    oracle = wl.oracle
    reps = spec["reps"]
    budget = spec.get("phase_budget_s") or float("inf")
    profiler = None
    if spec.get("profile") and name == "mzlite":
        from bench.profiling import PhaseProfiler
        p = spec["profile"]
        profiler = PhaseProfiler(top=p.get("top", 25), out_dir=p.get("dir"), phases=p.get("phases"),
                                 self_top=p.get("self_top", 15))
        profiler.install()

    gc.callbacks.append(_gc_hook)
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    rss_base = R.current_rss_kb()
    engine = make_engine(name, spec.get("options"))
    now = time.perf_counter
    diverged = False

    def check(phase: str, got, expected, state: Dict[str, Any]) -> None:
        if diverged:
            return
        g = normalize_rows(got)
        if g != expected:
            state["mismatches"] = state.get("mismatches", 0) + 1
            if "first_mismatch" not in state:
                state["first_mismatch"] = f"{phase}: got {g[:12]!r}, expected {expected[:12]!r}"

    def finish(phase: str, samples: List[Dict[str, Any]], rows, state: Dict[str, Any], **extra) -> None:
        ev = {"event": "phase", "engine": name, "phase": phase, "samples": samples,
              "rows": normalize_rows(rows) if rows is not None else None,
              "mismatches": state.get("mismatches", 0), "first_mismatch": state.get("first_mismatch"),
              "diverged": diverged, "gc_s": gcm.seconds, "gc_collections": gcm.collections}
        ev.update(extra)
        emit(ev)
        med = R.median([s["total"] for s in samples])
        bad = f"  WRONG ANSWERS: {ev['mismatches']}" if ev["mismatches"] else ""
        log(f"[{name}] {phase}: median {R.fmt_s(med)} over {len(samples)}{bad}")

    gcm = GCMeter()

    def phase_start(phase):
        gcm.reset()
        if profiler:
            profiler.start(phase)

    def phase_stop():
        if profiler:
            profiler.stop()

    try:
        engine.open()
        # ---------------------------------------------------------------- load
        customers = wl.customers_rows()
        orders = wl.orders_rows()
        phase_start("load")
        t0 = now()
        engine.load(customers, orders)
        t1 = now()
        phase_stop()
        del orders, customers
        finish("load", [{"total": t1 - t0, **{"load_" + k: v for k, v in engine.detail.items()}}], None, {})

        # ---------------------------------------------------------------- hydrate
        st: Dict[str, Any] = {}
        phase_start("hydrate")
        t0 = now()
        engine.create_view()
        t1 = now()
        rows = engine.read_view()
        t2 = now()
        phase_stop()
        check("hydrate", rows, oracle.view(), st)
        finish("hydrate", [{"total": t2 - t0, "create": t1 - t0, "first_read": t2 - t1}], rows, st)

        # ---------------------------------------------------------------- read (no change)
        st, samples = {}, []
        phase_start("read")
        for _ in range(reps["read"]):
            t0 = now()
            rows = engine.read_view()
            samples.append({"total": now() - t0})
        phase_stop()
        check("read", rows, oracle.view(), st)
        finish("read", samples, rows, st)

        # ---------------------------------------------------------------- change batches
        # A kind whose next batch is projected (per-row write cost at the largest k measured so far,
        # times k) to take longer than the batch budget is skipped from then on; the engine's state
        # then differs from the oracle, so later answers are timed but no longer checked.
        per_row: Dict[str, tuple] = {}          # kind -> (k, median write seconds per row at that k)
        skipped_kinds: Dict[str, str] = {}
        batch_budget = spec.get("batch_budget_s") or float("inf")
        for k in spec["ks"]:
            phase = f"k={k}"
            st, samples = {}, []
            truncated = False
            spent = 0.0
            rows = None
            phase_skips: Dict[str, int] = {}
            phase_start(phase)
            if profiler:
                profiler.pause()       # the harness's batch generation and checks stay out of the profile
            for batch in wl.batches(k, reps.get(phase) or (21 if k == 1 else 12 if k <= 1000 else 6)):
                kind = batch.kind
                if kind not in skipped_kinds and kind in per_row and per_row[kind][1] * k > batch_budget:
                    kk, pr = per_row[kind]
                    skipped_kinds[kind] = (f"{kind} skipped from k={k}: projected {pr * k:.0f} s per batch "
                                           f"({pr * 1e3:.3g} ms/row at k={kk}) > batch budget {batch_budget:.0f} s")
                    log(f"[{name}] {skipped_kinds[kind]}")
                    engine.notes.append(f"{name}: {skipped_kinds[kind]}; later answers not checked")
                if truncated or kind in skipped_kinds:
                    diverged = True    # the generator and the oracle move on; this engine does not
                    phase_skips[kind] = phase_skips.get(kind, 0) + 1
                    continue
                if profiler:
                    profiler.resume()
                t0 = now()
                engine.apply(batch)
                t1 = now()
                rows = engine.read_view()
                t2 = now()
                if profiler:
                    profiler.pause()
                check(phase, rows, oracle.view(), st)
                samples.append({"total": t2 - t0, "write": t1 - t0, "read": t2 - t1, "kind": kind})
                same = [x["write"] / k for x in samples if x["kind"] == kind]
                per_row[kind] = (k, R.median(same))
                spent += t2 - t0
                if spent > budget:
                    truncated = True
                    log(f"[{name}] {phase}: phase budget {budget:.0f} s spent; remaining batches skipped")
            phase_stop()
            finish(phase, samples, rows, st, truncated=truncated or bool(phase_skips), skipped=phase_skips)

        # ---------------------------------------------------------------- point reads
        st, samples = {}, []
        phase_start("point")
        for _ in range(reps["point"]):
            t0 = now()
            rows = engine.point_read()
            samples.append({"total": now() - t0})
        phase_stop()
        check("point", rows, oracle.point(), st)
        finish("point", samples, rows, st)

        if engine.has_stored():
            engine.refresh_stored()
            gcm.reset()
            st, samples = {}, []
            for _ in range(reps["point_stored"]):
                t0 = now()
                rows = engine.stored_point_read()
                samples.append({"total": now() - t0})
            check("point_stored", rows, oracle.point(), st)
            finish("point_stored", samples, rows, st)
    except Exception as e:
        emit({"event": "error", "engine": name, "error": f"{type(e).__name__}: {e}",
              "traceback": traceback.format_exc()})
        log(f"[{name}] FAILED: {type(e).__name__}: {e}")
    finally:
        gc.callbacks.remove(_gc_hook)
        if profiler:
            if profiler._caller is not None:
                profiler.stop()
            profiler.uninstall()
            emit({"event": "profile", "engine": name, "text": profiler.text()})
        if load_before is not None:
            engine.notes.append(f"{name}: 1-min load average {load_before:.2f} at start, "
                                f"{os.getloadavg()[0]:.2f} at end ({os.cpu_count()} CPUs; other processes "
                                "on the machine skew figures)")
        emit({"event": "notes", "engine": name, "notes": engine.notes})
        if spec.get("measure_memory", True):
            emit({"event": "memory", "engine": name, "baseline_kb": rss_base, "peak_kb": R.peak_rss_kb()})
        try:
            engine.close()
        except Exception:
            pass


# ============================================================================ child process
def child_main(engine: str, spec_json: str, out_path: str) -> int:
    spec = json.loads(spec_json)
    with open(out_path, "a") as out:
        def emit(ev):
            out.write(json.dumps(ev, default=str) + "\n")
            out.flush()
        run_engine(engine, spec, emit, log=lambda s: print(s, file=sys.stderr, flush=True))
    return 0


def run_in_subprocess(engine: str, spec: Dict[str, Any], timeout: float,
                      log: Callable[[str], None]) -> List[Dict[str, Any]]:
    fd, path = tempfile.mkstemp(prefix=f"bench-{engine}-", suffix=".jsonl")
    os.close(fd)
    cmd = [sys.executable, "-m", "bench", "_child", "freshness", "--engine", engine,
           "--spec", json.dumps(spec), "--out", path]
    events: List[Dict[str, Any]] = []
    try:
        proc = subprocess.Popen(cmd, cwd=repo_root(), stdout=sys.stderr)   # stdout is the table's alone
        try:
            rc = proc.wait(timeout=timeout)
            if rc != 0:
                events.append({"event": "error", "engine": engine, "error": f"child exited with {rc}"})
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            events.append({"event": "error", "engine": engine, "error": f"timed out after {timeout:.0f} s"})
            log(f"[{engine}] timed out after {timeout:.0f} s; partial results kept")
        with open(path) as f:
            events = [json.loads(ln) for ln in f if ln.strip()] + events
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return events


# ============================================================================ summary and report
def summarize(events_by_engine: Dict[str, List[Dict[str, Any]]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for eng, events in events_by_engine.items():
        e: Dict[str, Any] = {"phases": {}, "errors": [], "notes": [], "memory": None, "profile": None}
        for ev in events:
            kind = ev["event"]
            if kind == "phase":
                samples = ev["samples"]
                ph = {"median": R.median([s["total"] for s in samples]), "n": len(samples),
                      "samples": samples, "rows": ev["rows"], "mismatches": ev["mismatches"],
                      "first_mismatch": ev["first_mismatch"], "truncated": ev.get("truncated", False),
                      "skipped": ev.get("skipped") or {},
                      "diverged": ev.get("diverged", False), "gc_s": ev.get("gc_s"),
                      "gc_collections": ev.get("gc_collections")}
                if samples and "write" in samples[0]:
                    ph["median_write"] = R.median([s["write"] for s in samples])
                    ph["median_read"] = R.median([s["read"] for s in samples])
                    ph["median_by_kind"] = {k: R.median([s["total"] for s in samples if s["kind"] == k])
                                            for k in KINDS if any(s["kind"] == k for s in samples)}
                if samples and "create" in samples[0]:
                    ph["create"] = samples[0]["create"]
                    ph["first_read"] = samples[0]["first_read"]
                e["phases"][ev["phase"]] = ph
            elif kind == "error":
                e["errors"].append(ev["error"] + ("\n" + ev["traceback"] if ev.get("traceback") else ""))
            elif kind == "notes":
                e["notes"].extend(ev["notes"])
            elif kind == "memory":
                e["memory"] = {"baseline_kb": ev["baseline_kb"], "peak_kb": ev["peak_kb"],
                               "delta_kb": (ev["peak_kb"] - ev["baseline_kb"]) if ev["baseline_kb"] else None}
            elif kind == "profile":
                e["profile"] = ev["text"]
        out[eng] = e
    return out


def cross_check(summary: Dict[str, Any]) -> List[str]:
    """Engines' final rows per phase must agree (each was also checked against the oracle)."""
    problems = []
    phases = sorted({p for e in summary.values() for p in e["phases"]})
    for p in phases:
        answers = {eng: e["phases"][p]["rows"] for eng, e in summary.items()
                   if p in e["phases"] and not e["phases"][p]["diverged"] and e["phases"][p]["rows"] is not None}
        distinct = {json.dumps(v) for v in answers.values()}
        if len(distinct) > 1:
            problems.append(f"phase {p}: engines disagree: " + "; ".join(f"{k}={v}" for k, v in answers.items()))
    for eng, e in summary.items():
        for p, ph in e["phases"].items():
            if ph["mismatches"]:
                problems.append(f"{eng} {p}: {ph['mismatches']} wrong answer(s) vs oracle; first: {ph['first_mismatch']}")
    return problems


PHASE_ORDER = ["load", "hydrate", "read", "k=1", "k=100", "k=10000", "point", "point_stored"]
PHASE_LABEL = {"load": "load", "hydrate": "hydrate (create+first read)", "read": "read view (no change)",
               "k=1": "k=1 change + read", "k=100": "k=100 changes + read", "k=10000": "k=10000 changes + read",
               "point": "point read r3", "point_stored": "point read, stored table"}


def render(summary: Dict[str, Any], spec: Dict[str, Any], skipped: Dict[str, str]) -> str:
    engines = list(summary)
    peers = [e for e in engines if e != "mzlite"]
    has_mz = "mzlite" in summary and summary["mzlite"]["phases"]
    lines = [f"freshness workload: {spec['n_orders']:,} orders, 10,000 customers, 10 regions "
             f"(medians; ratio = peer / mzlite, >1 means mzlite is faster)"]
    for eng, why in skipped.items():
        lines.append(f"  {eng}: skipped ({why})")
    headers = ["phase"] + engines + ([f"{p}/mz" for p in peers] if has_mz else [])
    rows = []
    mz = summary.get("mzlite", {}).get("phases", {}) if has_mz else {}
    for p in PHASE_ORDER:
        if not any(p in summary[e]["phases"] for e in engines):
            continue
        cells = [PHASE_LABEL.get(p, p)]
        for e in engines:
            ph = summary[e]["phases"].get(p)
            c = R.fmt_s(ph["median"]) if ph else "-"
            if ph and ph["mismatches"]:
                c += " WRONG"
            if ph and ph["truncated"]:
                c += f" (partial: {'+'.join(k[0] for k in KINDS if any(x['kind'] == k for x in ph['samples'])) or 'none'})"
            cells.append(c)
        if has_mz:
            for peer in peers:
                ph = summary[peer]["phases"].get(p)
                mzp = mz.get("point") if p == "point_stored" else mz.get(p)
                cells.append(R.fmt_ratio(R.ratio(ph and ph["median"], mzp and mzp["median"])))
        rows.append(cells)
    mem = ["peak RSS - baseline"]
    for e in engines:
        m = summary[e]["memory"]
        mem.append(R.fmt_mb(m["delta_kb"]) if m and m["delta_kb"] is not None else "n/a")
    if has_mz:
        mzm = summary["mzlite"]["memory"]
        for peer in peers:
            pm = summary[peer]["memory"]
            mem.append(R.fmt_ratio(R.ratio(pm and pm["delta_kb"], mzm and mzm["delta_kb"])))
    rows.append(mem)
    lines.append(R.table(headers, rows))
    lines.append("  point read, stored table: ratio column = peer's stored-table read / mzlite's indexed point read")

    # write/read split and per-kind medians, for the engine engineers
    detail = []
    for e in engines:
        for k in ("k=1", "k=100", "k=10000"):
            ph = summary[e]["phases"].get(k)
            if not ph or not ph["samples"]:
                continue
            kinds = ", ".join(f"{kk} {R.fmt_s(v)}" for kk, v in ph.get("median_by_kind", {}).items())
            detail.append(f"  {e:7s} {k:8s} write {R.fmt_s(ph['median_write']):>9s}  read {R.fmt_s(ph['median_read']):>9s}"
                          f"   by kind: {kinds}")
    if detail:
        lines.append("change phases split (medians): ")
        lines.extend(detail)
    if has_mz and mz.get("load", {}).get("samples"):
        d = {k[5:]: v for k, v in mz["load"]["samples"][0].items() if k.startswith("load_")}
        if d:
            lines.append("  mzlite load: " + ", ".join(f"{k} {R.fmt_s(v)}" for k, v in d.items()))
    if has_mz and "hydrate" in mz:
        h = mz["hydrate"]
        lines.append(f"  mzlite hydrate: create statements {R.fmt_s(h.get('create'))}, first read {R.fmt_s(h.get('first_read'))}")
    if has_mz:
        gcs = [f"{p} {R.fmt_s(ph['gc_s'])}/{ph['gc_collections']}" for p, ph in mz.items()
               if ph.get("gc_s") and ph.get("gc_collections")]
        if gcs:
            lines.append("  mzlite time in Python's cyclic GC per phase (total over all samples/collections): "
                         + ", ".join(gcs))

    if has_mz:
        lines.append(targets_text(summary, spec))
    for e in engines:
        for n in summary[e]["notes"]:
            lines.append(f"  note: {n}")
    problems = cross_check(summary)
    if problems:
        lines.append("RESULT DISAGREEMENT:")
        lines.extend("  " + p for p in problems)
    else:
        checked = [e for e in engines if summary[e]["phases"]]
        lines.append(f"results: all engines agree with the oracle after every phase ({', '.join(checked)})")
    for e in engines:
        for err in summary[e]["errors"]:
            lines.append(f"ERROR [{e}]: {err}")
    return "\n".join(lines)


def targets_text(summary: Dict[str, Any], spec: Dict[str, Any]) -> str:
    mz = summary["mzlite"]["phases"]
    duck = summary.get("duckdb", {}).get("phases", {})

    def med(d, p):
        return d.get(p, {}).get("median")

    out = [f"targets (set for {TARGET_N:,} orders; this run: {spec['n_orders']:,}; reported, not asserted):"]

    def line(label, value, ok):
        mark = "-" if ok is None else ("MET" if ok else "not met")
        out.append(f"  {label:58s} {value:>22s}  {mark}")

    k1 = med(mz, "k=1")
    line("one-row change visible in an indexed read < 1 ms", R.fmt_s(k1), None if k1 is None else k1 < 1e-3)
    r = R.ratio(med(duck, "k=1"), k1)
    line(">= 8x faster than DuckDB re-running the query (k=1)", R.fmt_ratio(r), None if r is None else r >= 8)
    k4 = med(mz, "k=10000")
    line("k = 10,000 changes + read < 60 ms", R.fmt_s(k4), None if k4 is None else k4 < 0.060)
    lh = (med(mz, "load") or 0) + (med(mz, "hydrate") or 0) if med(mz, "load") and med(mz, "hydrate") else None
    line("load + hydration <= 4 s", R.fmt_s(lh), None if lh is None else lh <= 4.0)
    r = R.ratio(med(duck, "point_stored"), med(mz, "point"))
    line("indexed point read faster than DuckDB reading a stored table", R.fmt_ratio(r), None if r is None else r > 1)
    mm = summary["mzlite"]["memory"]
    dm = summary.get("duckdb", {}).get("memory")
    if mm and dm and mm.get("delta_kb") and dm.get("delta_kb"):
        x = mm["delta_kb"] / dm["delta_kb"]
        line("peak memory within 2x DuckDB's (mzlite/duckdb)", f"{x:.2f}x", x <= 2)
    else:
        line("peak memory within 2x DuckDB's", "n/a", None)
    return "\n".join(out)


# ============================================================================ entry point
def run(args) -> Dict[str, Any]:
    n = args.orders or (100_000 if args.quick else 1_000_000)
    spec = default_spec(n)
    if args.reps_scale != 1.0:
        spec["reps"] = {k: max(3, int(round(v * args.reps_scale))) for k, v in spec["reps"].items()}
    if args.phase_budget:
        spec["phase_budget_s"] = args.phase_budget
    opts = spec["options"]
    if args.mz_param:
        params = {}
        for kv in args.mz_param:
            k, _, v = kv.partition("=")
            params[k] = json.loads(v) if v.lower() in ("true", "false", "null") or v.lstrip("-").isdigit() else v
        opts["system_parameters"] = params
    opts["mz_index_orders"] = not args.mz_no_orders_index
    spec["batch_budget_s"] = args.batch_budget or (20.0 if args.quick else 30.0) * (4 if args.profile else 1)
    opts["peer_executemany"] = args.peer_executemany
    if args.duckdb_threads:
        opts["duckdb_threads"] = args.duckdb_threads
    if args.profile:
        spec["profile"] = {"top": args.profile_top, "dir": args.profile_dir, "self_top": args.profile_self,
                           "phases": args.profile_phases.split(",") if args.profile_phases else None}

    log = lambda s: print(s, file=sys.stderr, flush=True)
    wanted = args.engines.split(",") if args.engines else list(ENGINES)
    skipped: Dict[str, str] = {}
    events: Dict[str, List[Dict[str, Any]]] = {}
    for name in wanted:
        ok, why = ENGINES[name].available()
        if not ok:
            skipped[name] = why
            log(f"[{name}] skipped: {why}")
            continue
        log(f"[{name}] running ({'in process' if args.in_process else 'subprocess'}) ...")
        if args.in_process:
            evs: List[Dict[str, Any]] = []
            run_engine(name, dict(spec, measure_memory=False), evs.append, log)
            events[name] = evs
        else:
            events[name] = run_in_subprocess(name, spec, args.timeout, log)
    if importlib.util.find_spec("pydbsp") is None:
        skipped["pydbsp"] = ("not installed (its PyPI releases need Python >= 3.12); optional peer, "
                             "no adapter until it installs here")
    summary = summarize(events)
    print(render(summary, spec, skipped))
    if args.profile and "mzlite" in summary and summary["mzlite"]["profile"]:
        print("\nNOTE: mzlite ran under cProfile; its timings above are inflated by the profiler.")
        print(summary["mzlite"]["profile"])
    if getattr(args, "baseline", None):
        print(baseline_text(summary, args.baseline, n))
    result = {"workload": "freshness", "spec": spec, "skipped": skipped, "engines": summary,
              "problems": cross_check(summary)}
    return result


def baseline_text(summary: Dict[str, Any], path: str, n_orders: int) -> str:
    """mzlite's medians against an earlier ``--json`` file of the same workload (old / new)."""
    try:
        with open(path) as f:
            old = json.load(f)
        old_mz = old["engines"]["mzlite"]["phases"]
    except (OSError, KeyError, ValueError) as e:
        return f"baseline {path}: unusable ({type(e).__name__}: {e})"
    new_mz = summary.get("mzlite", {}).get("phases", {})
    rows = []
    for p in PHASE_ORDER:
        o, n = old_mz.get(p, {}).get("median"), new_mz.get(p, {}).get("median")
        if o is None and n is None:
            continue
        rows.append([PHASE_LABEL.get(p, p), R.fmt_s(o), R.fmt_s(n), R.fmt_ratio(R.ratio(o, n))])
    head = (f"mzlite against baseline {path} ({old['spec']['n_orders']:,} orders then, "
            f"{n_orders:,} now; "
            f"speedup = old / new, >1 means faster now)")
    return head + "\n" + R.table(["phase", "baseline", "now", "speedup"], rows)
