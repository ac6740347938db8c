"""The sqllogictest runner: ``mzlite slt`` / ``python -m slt``.

    mzlite slt [--rewrite-results] [--system-parameter-default NAME=VALUE]...
               [--auto-index-selects] [--junit-report FILE] [-j N] [--fail-fast] [-v]
               [--engine mzlite|sqlite|postgres | --url URL] [--timeout SECONDS] [--compare-plans]
               [--known-deviations FILE | --no-known-deviations]
               PATH...

Owns: the command line, finding files (a PATH is a file or a directory searched
recursively for *.slt and *.test), running files one after another or in ``-j N``
processes, the progress bar on a terminal, and the output order: failures and skips of a
file, then its per-file line, and last of all exactly ``N passed, M failed`` (plus
``, K skipped`` when K > 0).  The exit status is 1 when anything failed, else 0 (2 for a
usage error).

Invariant: each file runs against a fresh engine; results of parallel runs are printed in
file order, so the output does not depend on scheduling.

Deliberately not here: the record grammar (parser.py), rendering (render.py), judging
records (runner.py), the engine seam (engines.py), report formats (report.py), known
deviations (deviations.py).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from .deviations import DEFAULT_PATH, DeviationFileError, Deviations
from .parser import ParseError, parse_file
from .report import format_failure, format_file_line, summary_line, write_junit
from .runner import Config, FileResult, run_file

__all__ = ["main", "collect_files", "run_paths", "Config"]

_PROGRESS_MIN_RECORDS = 5000   # the bar costs ~1s to tear down: long runs only


def collect_files(paths) -> list:
    out = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith((".slt", ".test")):
                        found.append(os.path.join(root, name))
            out.extend(found)
        elif os.path.exists(p):
            out.append(p)
        else:
            raise FileNotFoundError(p)
    return out


def _parse_params(items) -> dict:
    params = {}
    for item in items or ():
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise ValueError(f"--system-parameter-default expects NAME=VALUE, got {item!r}")
        params[name.strip()] = value.strip()
    return params


def _build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="mzlite slt", description="Run sqllogictest files.")
    ap.add_argument("paths", nargs="+", metavar="PATH")
    ap.add_argument("--rewrite-results", action="store_true",
                    help="rewrite the expected output of failing records in place")
    ap.add_argument("--system-parameter-default", action="append", default=[],
                    metavar="NAME=VALUE", help="system parameter for every fresh database")
    ap.add_argument("--auto-index-selects", action="store_true",
                    help="also run every SELECT through an indexed view and compare")
    ap.add_argument("--junit-report", metavar="FILE")
    ap.add_argument("-j", "--jobs", type=int, default=1, metavar="N")
    ap.add_argument("--fail-fast", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--engine", default="mzlite", choices=["mzlite", "sqlite", "postgres"],
                    help="the database under test (sqlite: Python's sqlite3, for testing "
                         "the runner itself; postgres: a PostgreSQL server at "
                         "MZLITE_SLT_PG=host:port, the oracle for our suites)")
    ap.add_argument("--url", metavar="URL", default=None,
                    help="run the files against the PostgreSQL-protocol server at URL (e.g. "
                         "postgres://materialize@127.0.0.1:6875/materialize for mzlite serve); files run "
                         "one at a time, each after dropping every user object")
    ap.add_argument("--known-deviations", metavar="FILE", default=None,
                    help=f"known-deviations file (default: {DEFAULT_PATH}, except for --engine sqlite)")
    ap.add_argument("--no-known-deviations", action="store_true")
    ap.add_argument("--compare-plans", action="store_true",
                    help="compare EXPLAIN-plan records too (by default they are counted apart)")
    ap.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                    help="fail a statement that runs longer and stop its file (0: no limit)")
    return ap


def _worker(item):
    path, config = item
    log: list = []
    res = run_file(path, config, emit=log.append)
    res.log = log
    return res


class _Progress:
    """A prompt_toolkit progress bar, or nothing."""

    def __init__(self, total: int, label: str, enabled: bool):
        self.bar = self.counter = None
        self._last = 0.0
        if not enabled or total <= 0:
            return
        try:
            from prompt_toolkit.shortcuts import ProgressBar
            self.bar = ProgressBar(title="mzlite slt")
            self.bar.__enter__()
            self.counter = self.bar(label=label, total=total)
        except Exception:
            self.bar = self.counter = None

    def __call__(self, n: int = 1) -> None:
        # Counting is cheap; redrawing is not: redraw at most ten times a second.
        if self.counter is not None:
            self.counter.items_completed += n
            now = time.monotonic()
            if now - self._last >= 0.1:
                self._last = now
                self.bar.invalidate()

    def close(self) -> None:
        if self.bar is not None:
            try:
                self.bar.__exit__(None, None, None)
            except Exception:
                pass
            self.bar = self.counter = None


def run_paths(files, config: Config, *, jobs: int = 1, out=None, progress: bool = False):
    """Run ``files``; print per-file reports to ``out``; return the list of FileResults."""
    out = out or sys.stdout
    results: list = []

    def report(res: FileResult, buffered: list):
        lines = list(res.log)
        lines += [format_failure(f) for f in res.failures]
        lines += [f"SKIP {p}:{ln}: {reason}" for (p, ln, reason) in res.skips]
        lines += [f"NOTE {p}:{ln}: {text}" for (p, ln, text) in res.notes]
        lines.append(format_file_line(res))
        if config.rewrite and res.edits:
            for p, edits in sorted(res.edits.items()):
                lines.append(f"rewrote {len(edits)} record(s) in {p}")
        if buffered is not None:
            buffered.extend(lines)
        else:
            for ln in lines:
                print(ln, file=out)
            out.flush()

    buffered = [] if progress else None
    if jobs > 1 and len(files) > 1 and config.engine_factory is None:
        import multiprocessing as mp
        bar = _Progress(len(files), "files", progress and len(files) >= 10)
        ctx = mp.get_context("spawn")
        try:
            with ctx.Pool(min(jobs, len(files))) as pool:
                for res in pool.imap(_worker, [(f, config) for f in files]):
                    results.append(res)
                    bar(1)
                    report(res, buffered)
                    if res.stopped:
                        pool.terminate()
                        break
        finally:
            bar.close()
    else:
        parsed = []
        total = 0
        if progress:
            for f in files:
                try:
                    recs = parse_file(f)
                    total += sum(1 for r in recs if hasattr(r, "sql"))
                except (ParseError, OSError, UnicodeDecodeError):
                    recs = None
                parsed.append(recs)
        else:
            parsed = [None] * len(files)
        bar = _Progress(total, "records", progress and total >= _PROGRESS_MIN_RECORDS)
        emit = (lambda s: print(s, file=out)) if not progress else None
        try:
            for f, recs in zip(files, parsed):
                if progress:
                    log: list = []
                    res = run_file(f, config, emit=log.append, progress=bar, records=recs)
                    res.log = log
                else:
                    res = run_file(f, config, emit=emit, records=recs)
                results.append(res)
                report(res, buffered)
                if res.stopped:
                    break
        finally:
            bar.close()
    if buffered:
        for ln in buffered:
            print(ln, file=out)
    return results


def main(argv=None) -> int:
    ap = _build_parser()
    args = ap.parse_args(argv)
    try:
        params = _parse_params(args.system_parameter_default)
        files = collect_files(args.paths)
    except (ValueError, FileNotFoundError) as e:
        msg = f"no such file or directory: {e}" if isinstance(e, FileNotFoundError) else str(e)
        print(f"mzlite slt: error: {msg}", file=sys.stderr)
        return 2
    if args.no_known_deviations:
        deviations = Deviations()
    else:
        dev_path = args.known_deviations or (DEFAULT_PATH if args.engine != "sqlite" else None)
        try:
            deviations = Deviations.load(dev_path)
        except DeviationFileError as e:
            print(f"mzlite slt: error: {e}", file=sys.stderr)
            return 2
    config = Config(engine=args.engine, system_parameters=params,
                    rewrite=args.rewrite_results, auto_index_selects=args.auto_index_selects,
                    fail_fast=args.fail_fast, verbose=args.verbose, deviations=deviations,
                    junit=bool(args.junit_report), timeout=args.timeout,
                    compare_plans=args.compare_plans, url=args.url)
    tty = sys.stdout.isatty()
    t0 = time.perf_counter()
    results = run_paths(files, config, jobs=1 if args.url else max(1, args.jobs),
                        progress=tty and not args.verbose)
    elapsed = time.perf_counter() - t0
    passed = sum(r.passed for r in results)
    failed = sum(r.failed for r in results)
    skipped = sum(r.skipped for r in results)
    if args.junit_report:
        write_junit(args.junit_report, results)
    records = passed + failed + skipped
    plans = sum(r.plans for r in results)
    if records and elapsed > 0:
        print(f"{len(results)} files, {records} records in {elapsed:.2f}s "
              f"({records / elapsed:.0f} records/s)" + (f"; {plans} EXPLAIN plan records not compared"
                                                        if plans else ""))
    print(summary_line(passed, failed, skipped))
    sys.stdout.flush()
    return 1 if failed else 0
