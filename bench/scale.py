"""The scale workload: how the freshness workload's costs grow with the data, on one screen.

Owns: one freshness run per size (``--sizes``, default 100,000, 1,000,000 and 3,000,000
orders), each in a fresh subprocess (``bench.freshness.run_in_subprocess``), with only the
phases whose growth matters: load and hydrate (expected to grow with the rows), a one-row
change made visible (``k=1``: must stay flat), the indexed point read, and peak memory.
Then one table, a column per size, and each figure's ratio to the smallest size.

Invariant: every size runs the same phases with the same repetitions and seed, and every
answer is checked against the oracle as in the freshness workload (a wrong answer is a
PROBLEM line, never hidden in a median).  Deliberately not here: peers (``--engines``
adds them, at every size), k > 1 batches and the whole-view read's repetitions (see
``python -m bench freshness``).
"""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, List

from bench import report as R
from bench.freshness import default_spec, run_in_subprocess, summarize, cross_check
from bench.engines import ENGINES

DEFAULT_SIZES = (100_000, 1_000_000, 3_000_000)
QUICK_SIZES = (30_000, 100_000, 300_000)
REPS = {"read": 3, "k=1": 21, "point": 51, "point_stored": 21}

#: (label, phase, how a figure is taken from the phase summary)
ROWS = [("load", "load", "median"), ("hydrate (create + first read)", "hydrate", "median"),
        ("k=1 change + read (median)", "k=1", "median"), ("k=1 change + read (p90)", "k=1", "p90"),
        ("point read (median)", "point", "median"), ("point read (p90)", "point", "p90")]


def _figure(phase: Dict[str, Any], how: str):
    if phase is None:
        return None
    if how == "median":
        return phase["median"]
    return R.percentile([s["total"] for s in phase["samples"]], 90)


def render(by_size: Dict[int, Dict[str, Any]], engines: List[str]) -> str:
    sizes = sorted(by_size)
    lines = [f"scale workload: the freshness workload's load, hydrate, k=1, point read and memory at "
             f"{', '.join(f'{n:,}' for n in sizes)} orders (10,000 customers, 10 regions); ratio: to "
             f"{sizes[0]:,} orders"]
    for eng in engines:
        rows = []
        for label, phase, how in ROWS:
            figs = [_figure(by_size[n].get(eng, {}).get("phases", {}).get(phase), how) for n in sizes]
            base = figs[0]
            rows.append([f"{eng}: {label}"] + [R.fmt_s(f) for f in figs]
                        + [R.fmt_ratio(R.ratio(f, base)) for f in figs[1:]])
        mems = [(by_size[n].get(eng, {}).get("memory") or {}).get("delta_kb") for n in sizes]
        rows.append([f"{eng}: peak memory (above the harness)"] + [R.fmt_mb(m) for m in mems]
                    + [R.fmt_ratio(R.ratio(m, mems[0])) for m in mems[1:]])
        lines.append(R.table(["figure"] + [f"{n:,}" for n in sizes] + [f"x {n:,}" for n in sizes[1:]], rows))
    return "\n".join(lines)


def run(args) -> Dict[str, Any]:
    log = lambda s: print(s, file=sys.stderr, flush=True)
    sizes = ([int(x.replace("_", "")) for x in args.sizes.split(",")] if args.sizes
             else list(QUICK_SIZES if args.quick else DEFAULT_SIZES))
    engines = args.engines.split(",") if args.engines else ["mzlite"]
    by_size: Dict[int, Dict[str, Any]] = {}
    problems: List[str] = []
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    for n in sizes:
        spec = default_spec(n, reps=dict(REPS), ks=[1])
        spec["options"]["mz_index_orders"] = not args.mz_no_orders_index
        events = {}
        for eng in engines:
            ok, why = ENGINES[eng].available()
            if not ok:
                log(f"[{eng}] skipped: {why}")
                continue
            log(f"[{eng}] {n:,} orders ...")
            events[eng] = run_in_subprocess(eng, spec, args.timeout, log)
        summary = summarize(events)
        by_size[n] = summary
        for eng, e in summary.items():
            problems.extend(f"{n:,} orders: {eng}: {err}" for err in e["errors"])
            for p, ph in e["phases"].items():
                if ph["mismatches"]:
                    problems.append(f"{n:,} orders: {eng} {p}: {ph['mismatches']} wrong answer(s); "
                                    f"first: {ph['first_mismatch']}")
        problems.extend(f"{n:,} orders: {p}" for p in cross_check(summary))
    print(render(by_size, engines))
    if load_before is not None:
        print(f"  load average (1 min) before {load_before:.2f}, after {os.getloadavg()[0]:.2f}")
    print("\n".join("PROBLEM: " + p for p in problems) if problems else
          "results: every answer agreed with the oracle")
    return {"workload": "scale", "sizes": sizes, "by_size": {str(n): s for n, s in by_size.items()},
            "problems": problems}
