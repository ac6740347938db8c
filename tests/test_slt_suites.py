"""Our own .slt suites (slt/test/): every suite runs twice through mzlite, with the
interactive runtime on and off (DESIGN.md), and, when a PostgreSQL server is given in
MZLITE_SLT_PG=host:port, through PostgreSQL, the oracle for their expected results.

Skipped while ``mzlite.connect`` does not exist yet (the engine is built in parallel).
"""
import glob
import os

import pytest

from slt import main

SUITES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "slt", "test",
                                       "*.slt")))


def _mzlite_ready() -> bool:
    try:
        import mzlite
    except Exception:
        return False
    return hasattr(mzlite, "connect")


def _last_line(out: str) -> str:
    return out.rstrip("\n").split("\n")[-1]


@pytest.mark.skipif(not _mzlite_ready(), reason="mzlite.connect is not there yet")
@pytest.mark.parametrize("flag", ["true", "false"])
@pytest.mark.parametrize("suite", SUITES, ids=os.path.basename)
def test_suite_through_mzlite(suite, flag, capsys):
    code = main(["--timeout", "10", "--system-parameter-default",
                 f"enable_compute_interactive_runtime={flag}", suite])
    out = capsys.readouterr().out
    assert code == 0, out
    assert _last_line(out).endswith(" 0 failed")


@pytest.mark.skipif(not os.environ.get("MZLITE_SLT_PG"),
                    reason="set MZLITE_SLT_PG=host:port to check the suites against PostgreSQL")
@pytest.mark.parametrize("suite", SUITES, ids=os.path.basename)
def test_suite_through_postgres_oracle(suite, capsys):
    code = main(["--engine", "postgres", "--timeout", "20", suite])
    out = capsys.readouterr().out
    assert code == 0, out


def test_suites_exist():
    names = {os.path.basename(s) for s in SUITES}
    for area in ("tables_and_writes", "views", "materialized_views", "indexes", "joins",
                 "aggregates", "subqueries", "set_operations", "nulls", "errors",
                 "drop_cascade", "transactions", "read_at_max_timestamp"):
        assert f"{area}.slt" in names
