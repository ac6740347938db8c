"""Smoke test of ``python -m bench oneshot`` on a few hundred rows: every engine (mzlite,
DuckDB when installed, sqlite3) agrees with the plain-Python floor on every query, and the
report prints.  No timing assertions.  Sabotage: the floor's GROUP BY
starting each group at 2 -> every engine reported a wrong answer (seen red)."""
from __future__ import annotations

import argparse
import importlib.util

from bench import oneshot


def test_engines_agree_with_the_floor():
    args = argparse.Namespace(quick=True, mz_param=[], select5=None, timeout=60.0, orders=None)
    res = {"sizes": {}}
    log = []
    engines = oneshot._measure_size(300, args, log.append, res)
    names = {e.name for e in engines}
    assert {"mzlite", "sqlite"} <= names
    if importlib.util.find_spec("duckdb") is not None:
        assert "duckdb" in names
    for q, entry in res["sizes"]["300"].items():
        for eng, v in entry.items():
            assert "error" not in v, (q, eng, v)
    assert "count(*)" in oneshot.report(res)
