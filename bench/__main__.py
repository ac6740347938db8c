"""``python -m bench [freshness|isolation|load|server|oneshot|remote|sources|scale] [--quick] [--json FILE] [--profile]``.

Owns: the command line.  Invariant: every workload prints a human-readable table to
stdout (progress goes to stderr) and ``--json FILE`` writes the raw figures, samples
included.  Deliberately not here: the workloads themselves (``bench.freshness``,
``bench.isolation``); ``_child`` is the internal entry point the harness uses to run one
engine (or one configuration) in a fresh process, so that peak memory is per engine.
"""
from __future__ import annotations

import argparse
import json
import os
import sys


def _ensure_repo_on_path() -> None:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if root not in sys.path:
        sys.path.insert(0, root)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("workload", nargs="?", default="freshness", choices=["freshness", "isolation", "load", "server", "oneshot", "remote", "sources",
                                                               "scale"])
    p.add_argument("--quick", action="store_true",
                   help="smaller data: 100,000 orders (freshness), 50,000-row join (isolation), shorter runs")
    p.add_argument("--json", metavar="FILE", help="write the raw figures (every sample) to FILE")
    p.add_argument("--baseline", metavar="FILE",
                   help="freshness: also print mzlite's medians against an earlier --json FILE (old / new)")
    p.add_argument("--engines", help="comma-separated subset of mzlite,duckdb,sqlite (freshness)")
    p.add_argument("--orders", type=int, help="number of orders (overrides --quick's and the default size)")
    p.add_argument("--reps-scale", type=float, default=1.0, help="multiply every repetition count")
    p.add_argument("--in-process", action="store_true",
                   help="run engines in this process (faster start; no per-engine peak memory)")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per engine subprocess")
    p.add_argument("--phase-budget", type=float,
                   help="seconds a change phase may take per engine before its remaining batches are skipped")
    p.add_argument("--mz-param", action="append", metavar="NAME=VALUE",
                   help="mzlite system parameter (repeatable), e.g. enable_compute_interactive_runtime=true")
    p.add_argument("--mz-no-orders-index", action="store_true",
                   help="do not CREATE INDEX orders_by_id ON orders (id) in mzlite (by default it is built, "
                        "as the peers get an index on orders(id), to serve UPDATE/DELETE ... WHERE id = ?)")
    p.add_argument("--batch-budget", type=float,
                   help="skip a change kind whose next batch is projected (from smaller batches) to take longer "
                        "than this many seconds (default 30; 20 with --quick)")
    p.add_argument("--peer-executemany", action="store_true",
                   help="DuckDB applies batches with executemany instead of one set-oriented statement")
    p.add_argument("--duckdb-threads", type=int, help="SET threads = N in DuckDB (default: DuckDB's own)")
    p.add_argument("--profile", action="store_true",
                   help="run the mzlite side under cProfile; print the top functions per phase")
    p.add_argument("--profile-top", type=int, default=25, help="functions per profile (default 25)")
    p.add_argument("--profile-self", type=int, default=15,
                   help="also list this many functions by own time (tottime); 0 to omit (default 15)")
    p.add_argument("--profile-phases", help="comma-separated phases to profile (default all), e.g. hydrate,k=1")
    p.add_argument("--profile-dir", help="also write pstats files per phase here")
    p.add_argument("--duration", type=float, help="isolation: seconds of reads per configuration; server: "
                                                   "seconds per phase")
    p.add_argument("--join-rows", type=int, help="isolation: orders in the heavy join")
    p.add_argument("--select5", metavar="PATH", help="oneshot: a copy of SQLite's select5.test to time")
    p.add_argument("--sizes", help="scale: comma-separated order counts (default 100000,1000000,3000000; "
                                    "--quick: 30000,100000,300000)")
    p.add_argument("--interval-ms", type=float, default=20.0, help="isolation: read interval (open loop)")
    return p


def main(argv=None) -> int:
    _ensure_repo_on_path()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "_child":
        return _child(argv[1:])
    args = build_parser().parse_args(argv)
    if args.workload == "freshness":
        from bench.freshness import run
    elif args.workload == "load":
        from bench.load import run
    elif args.workload == "oneshot":
        from bench.oneshot import run  # one-shot queries against DuckDB, sqlite3, plain Python
    elif args.workload == "server":
        from bench.server import run  # mzlite serve against PostgreSQL 15, over the wire
    elif args.workload == "remote":
        from bench.remote import run  # mzlite.connect(URL) against psycopg used directly
    elif args.workload == "scale":
        from bench.scale import run  # k=1, point reads and memory at several sizes, one table
    elif args.workload == "sources":
        from bench.sources import run  # a PostgreSQL source: snapshot and replication lag
    else:
        from bench.isolation import run
    result = run(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, default=str)
        print(f"raw figures written to {args.json}", file=sys.stderr)
    return 1 if result.get("problems") else 0


def _child(argv) -> int:
    p = argparse.ArgumentParser(prog="python -m bench _child")
    p.add_argument("workload", choices=["freshness", "isolation"])
    p.add_argument("--engine")
    p.add_argument("--spec", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    if a.workload == "freshness":
        from bench.freshness import child_main
        return child_main(a.engine, a.spec, a.out)
    from bench.isolation import child_main
    return child_main(a.spec, a.out)


if __name__ == "__main__":
    sys.exit(main())
