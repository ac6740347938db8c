"""The process-wide interpreter settings: one owner, requests that compose, restored at the end.

``compute.replica.scheduling`` alone sets the switch interval and the collector's
thresholds; the baseline an open database requests, the urgency and the bulk busy periods
compose (least interval, greatest threshold) and the program's own values return when the
last request ends: when the last database closes.  The unit tests use private arbiters, so
databases other tests leave open do not matter; the end-to-end test runs in a fresh
interpreter, whose only databases are its own.
"""
from __future__ import annotations

import ast
import gc
import json
from pathlib import Path
import subprocess
import sys

import pytest

from compute.replica.scheduling import Baseline, BulkGC, GCThresholds, SwitchIntervals, Urgency

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = ("repr", "expr", "sql", "planner", "storage", "compute", "mzlite", "server", "repl", "slt", "bench")
SETTERS = {"setswitchinterval", "set_threshold"}


def test_only_the_scheduling_module_sets_the_interpreter_settings():
    """Sabotage: ``sys.setswitchinterval(0.0005)`` back in ``Database.__init__`` (a second
    owner, as before) -> that line is listed."""
    found = []
    for package in PRODUCTION:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "compute" / "replica" / "scheduling.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                    if name in SETTERS:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, "only compute/replica/scheduling.py may set them: " + ", ".join(found)


@pytest.fixture
def program():
    """The program's own settings for the test (4 ms, (700, 10, 10)), restored afterwards."""
    saved = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(0.004)
    gc.set_threshold(700, 10, 10)
    try:
        yield
    finally:
        sys.setswitchinterval(saved[0])
        gc.set_threshold(*saved[1])


def _now():
    return round(sys.getswitchinterval(), 6), gc.get_threshold()


def test_requests_compose_and_the_programs_values_return_when_the_last_ends(program):
    """Two databases' baselines, an urgent hand-off and a bulk busy period on one pair of
    arbiters.  Sabotages: ``release`` writing the program's value back instead of composing
    the rest (``self._write(self._own)``) -> 4 ms right after the urgency ends while the
    baseline stands; ``release`` dropping every request (``_requests.clear()``) -> the
    program's 700 while the second database is still open."""
    intervals, thresholds = SwitchIntervals(), GCThresholds()
    baseline = Baseline(intervals, thresholds)
    urgency, bulk = Urgency(intervals), BulkGC(thresholds, intervals)
    a, b = object(), object()
    baseline.request(a)
    assert _now() == (0.0005, (10_000, 10, 10))
    urgency.raise_()
    assert _now() == (0.0002, (10_000, 10, 10))
    urgency.lower()
    assert _now() == (0.0005, (10_000, 10, 10))  # the baseline still stands
    bulk.enter()
    assert _now() == (0.0005, (10_000, 10, 100))  # the baseline's interval is the least
    baseline.request(b)
    baseline.release(a)
    assert _now() == (0.0005, (10_000, 10, 100))
    bulk.exit()
    assert _now() == (0.0005, (10_000, 10, 10))
    baseline.release(b)
    assert _now() == (0.004, (700, 10, 10))  # the last request ended: the program's own


def test_a_value_the_program_sets_meanwhile_becomes_its_own(program):
    """Sabotage: ``_apply`` keeping the value read at the first request (no ``current !=
    self._set`` check) -> the old 4 ms comes back instead of the program's 3 ms."""
    intervals, thresholds = SwitchIntervals(), GCThresholds()
    baseline, urgency = Baseline(intervals, thresholds), Urgency(intervals)
    baseline.request("db")
    sys.setswitchinterval(0.003)  # the program changes its mind while a database is open
    urgency.raise_()
    assert _now()[0] == 0.0002
    urgency.lower()
    assert _now()[0] == 0.0005
    baseline.release("db")
    assert _now()[0] == 0.003


def test_a_disabled_collector_stays_disabled(program):
    gc.set_threshold(0, 10, 10)
    thresholds = GCThresholds()
    thresholds.request("db", (10_000, 100))
    assert gc.get_threshold() == (0, 10, 10)
    thresholds.release("db")
    assert gc.get_threshold() == (0, 10, 10)


_END_TO_END = r"""
import gc, json, sys
import mzlite
from compute.replica import client as C
from compute.replica.scheduling import URGENT
sys.setswitchinterval(0.004)
gc.set_threshold(700, 10, 10)
seen = {}
def now(name):
    assert URGENT.pending == 0, name
    seen[name] = [round(sys.getswitchinterval(), 6), list(gc.get_threshold())]
params = {"enable_compute_interactive_runtime": False}
now("before")
a = mzlite.connect(system_parameters=params)
now("one open")
b = mzlite.connect(system_parameters=params)
a.close()
now("one closed")
start = C.ReplicaClient.start
def recording_start(*args, **kw):
    now("restart")  # the new replica of a restart starts: the old one's request stands
    return start(*args, **kw)
C.ReplicaClient.start = recording_start
b.database.restart_replica()
C.ReplicaClient.start = start
now("restarted")
b.close()
now("all closed")
print(json.dumps(seen))
"""


def test_open_databases_hold_the_baseline_until_the_last_one_closes():
    """In a fresh interpreter: the baseline while any database is open, also across the
    last one's replica restart; the program's own settings once it is closed.  Sabotages:
    ``Database.__init__`` setting the interval itself (a second owner) -> 0.5 ms after the
    last close; ``ReplicaClient.shutdown`` not releasing the baseline -> likewise;
    ``_restart_replica`` shutting the old replica down before starting the new one ->
    4 ms at the restart."""
    out = subprocess.run([sys.executable, "-c", _END_TO_END], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    program, baseline = [0.004, [700, 10, 10]], [0.0005, [10_000, 10, 10]]
    assert seen == {"before": program, "one open": baseline, "one closed": baseline, "restart": baseline,
                    "restarted": baseline, "all closed": program}
