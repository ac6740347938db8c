"""Smoke test of the benchmark harness (``python -m bench``) on a few hundred rows.

Runs the freshness workload's phases against sqlite3 and DuckDB, and against mzlite when
``mzlite.connect().execute('select 1')`` works, and checks that every engine agrees with
the oracle and with the others after every phase.  No timing assertions: this only keeps
the harness honest (a harness that compares wrong answers would make every ratio a lie).
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import time

import pytest

from bench import freshness
from bench.engines import mzlite_status, repo_root
from bench.workload import Workload, normalize_rows

SMALL = dict(n_orders=300, reps={"read": 3, "k=1": 6, "k=100": 3, "k=10000": 3, "point": 3, "point_stored": 3},
             ks=[1, 10, 100], measure_memory=False)


def _run(engine: str):
    spec = freshness.default_spec(**SMALL)
    events = []
    freshness.run_engine(engine, spec, events.append)
    return events


def _assert_clean(summary):
    for eng, e in summary.items():
        assert not e["errors"], (eng, e["errors"])
        assert {"load", "hydrate", "read", "k=1", "k=10", "k=100", "point"} <= set(e["phases"]), (eng, e["phases"].keys())
    assert freshness.cross_check(summary) == []


def test_oracle_tracks_batches():
    wl = Workload(200, seed=7)
    before = sum(n for _, n, _ in wl.oracle.view())
    for b in wl.batches(5, 6):   # insert, update, delete, insert, update, delete
        assert len({p[-1] if b.kind == "update" else p[0] for p in b.params}) == len(b.params)  # distinct ids
    assert sum(n for _, n, _ in wl.oracle.view()) == before   # 10 inserted, 10 deleted
    assert normalize_rows([("a", __import__("decimal").Decimal("3"), 1)]) == [("a", 3, 1)]


def test_peers_agree():
    engines = ["sqlite"]
    if importlib.util.find_spec("duckdb") is not None:
        engines.append("duckdb")
    summary = freshness.summarize({e: _run(e) for e in engines})
    _assert_clean(summary)
    text = freshness.render(summary, freshness.default_spec(**SMALL), {})
    assert "k=1 change + read" in text and "RESULT DISAGREEMENT" not in text


def test_mzlite_agrees_with_peers(tmp_path):
    """mzlite against sqlite3 through the real entry point (each engine in a child process, so an
    engine that hangs fails this test by timeout instead of hanging pytest)."""
    ok, why = mzlite_status()
    if not ok:
        pytest.skip(f"mzlite is not usable yet: {why}")
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "bench", "--engines", "mzlite,sqlite", "--orders", "300",
                           "--reps-scale", "0.2", "--timeout", "240", "--json", str(out)], cwd=repo_root(),
                          capture_output=True, text=True, timeout=600)
    data = json.loads(out.read_text())
    assert data["problems"] == [], data["problems"]
    for eng in ("mzlite", "sqlite"):
        e = data["engines"][eng]
        assert not e["errors"], (eng, e["errors"])
        assert {"load", "hydrate", "read", "k=1", "k=100", "k=10000", "point"} <= set(e["phases"]), eng
    assert proc.returncode == 0, proc.stderr
    assert "targets" in proc.stdout


def test_cli_subprocess_json(tmp_path):
    """The real entry point, one engine in a child process, raw figures in --json."""
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "bench", "--engines", "sqlite", "--orders", "300",
                           "--reps-scale", "0.1", "--json", str(out)], cwd=repo_root(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "k=10000 changes + read" in proc.stdout
    data = json.loads(out.read_text())
    mem = data["engines"]["sqlite"]["memory"]
    assert mem["peak_kb"] > 0
    assert data["problems"] == []


def test_profiler_sees_other_threads():
    from bench.profiling import PhaseProfiler

    def busy_work():
        return sum(i * i for i in range(20000))

    prof = PhaseProfiler(top=10)
    prof.install()
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            busy_work()
            time.sleep(0.001)

    t = threading.Thread(target=loop, name="worker")
    t.start()
    try:
        prof.start("phase1")
        time.sleep(0.1)
        prof.stop()
    finally:
        stop.set()
        t.join()
        prof.uninstall()
    text = prof.text()
    assert "phase phase1, caller thread" in text
    assert "busy_work" in text   # seen on the other thread


def test_remote_bench_ways_agree():
    """``python -m bench remote`` times the same answers every way: the embedded engine, the
    remote connection and psycopg directly (here against an in-process mzlite serve)."""
    from bench import remote
    from tests.support.wire import running_server
    with running_server() as srv:
        ways, opened = remote._ways(f"postgresql://materialize@127.0.0.1:{srv.port}/materialize", None)
        try:
            assert set(ways) == {"embedded", "remote -> mzlite serve", "psycopg -> mzlite serve"}
            for name, (point, scan) in ways.items():
                assert point(5) == [("value 5",)], name
                assert sorted(scan()) == [(i, f"value {i}") for i in range(remote.ROWS)], name
        finally:
            for c in opened:
                c.close()


def test_sources_bench_runs():
    """``python -m bench sources`` end to end on a tiny table: the snapshot holds every row and
    every replicated insert is delivered (skipped where PostgreSQL 15 cannot be started)."""
    from bench.__main__ import build_parser
    from bench import sources
    args = build_parser().parse_args(["sources", "--quick", "--orders", "2000"])
    result = sources.run(args)
    if result.get("problems"):
        pytest.skip("PostgreSQL is not available here")
    fig = result["figures"]
    assert fig["snapshot"]["create source"] > 0
    for rate in (100, 1000):
        lag = fig[f"lag at {rate} tx/s"]
        assert lag["delivered"] == lag["sent"] > 0


def test_scale_bench_prints_every_size_on_one_table(capfd):
    """``python -m bench scale --sizes ...`` (each size in a child process, sqlite3 for speed):
    one table with a column per size and the ratios to the smallest; every answer checked."""
    from bench.__main__ import build_parser
    from bench import scale
    args = build_parser().parse_args(["scale", "--sizes", "200,400", "--engines", "sqlite", "--timeout", "240"])
    result = scale.run(args)
    out = capfd.readouterr().out
    assert result["problems"] == [], result["problems"]
    assert "k=1 change + read (median)" in out and "peak memory" in out and "x 400" in out
    for n in ("200", "400"):
        assert {"load", "hydrate", "k=1", "point"} <= set(result["by_size"][n]["sqlite"]["phases"])


def test_isolation_summary_counts_collector_passes():
    """The isolation report's collector lines come from the recorded passes (no run needed)."""
    from bench import isolation
    busy = [[0.1 * i, "point", 0.001, None, 0.001, False] for i in range(10)]
    cfg = isolation.summarize_config([{"event": "config", "flag": True, "setup_s": 1.0, "idle": busy, "busy": busy,
                                       "cycles": [], "gc_idle": [], "gc_busy": [[0.1, 0, 0.002, 0.0015],
                                                                               [0.2, 2, 0.03, 0.02]],
                                       "tracked": [1, 2, 3]}])
    g = cfg["stats"]["gc_busy"]
    assert g["n"] == [1, 0, 1] and g["max"] == 0.03 and g["cpu_max_by_gen"][2] == 0.02
    text = isolation.render({"interactive on": cfg}, {"interval": 0.02, "join_rows": 10, "idle": 1, "duration": 1})
    assert "busy collector passes: gen0 1" in text and "gen2 1 (longest 20 ms)" in text
