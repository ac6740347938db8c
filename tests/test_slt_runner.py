"""End-to-end tests of the sqllogictest runner through the sqlite3 stand-in engine.

The runner reaches a database only through ``slt.engines``; these tests use Python's
sqlite3 (engine name 'sqlite'), which must reproduce the SQLite corpus's answers, so the
runner is tested without waiting for mzlite.
"""
import re
import xml.etree.ElementTree as ET

import pytest

import slt
from slt.deviations import DeviationFileError, Deviations
from slt.engines import Result, SqliteEngine, split_statements
from slt.runner import Config, run_file

#: the shared corpus sits beside the repository (``../shared`` from its root), in CI as here
CORPUS = str(__import__("pathlib").Path(__file__).resolve().parents[2] / "shared" / "sqlite-corpus")


def run_main(capsys, *args):
    code = slt.main(list(args))
    out = capsys.readouterr().out
    return code, out, out.rstrip("\n").split("\n")[-1]


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def sqlite_config(**kw):
    return Config(engine="sqlite", **kw)


# -- the corpus ---------------------------------------------------------------------------

def test_select1_passes_through_sqlite(capsys):
    code, out, last = run_main(capsys, "--engine", "sqlite", f"{CORPUS}/select1.test")
    assert code == 0
    assert last == "1031 passed, 0 failed"
    assert "select1.test: 1031 passed, 0 failed" in out


def test_whole_corpus_passes_through_sqlite(capsys):
    code, out, last = run_main(capsys, "--engine", "sqlite", CORPUS)
    assert code == 0, out
    m = re.fullmatch(r"(\d+) passed, 0 failed", last)
    assert m and int(m.group(1)) > 1200
    for name in ("in1.test", "slt_lang_createview.test", "slt_lang_dropindex.test",
                 "slt_lang_droptable.test", "slt_lang_dropview.test"):
        assert re.search(re.escape(name) + r": \d+ passed, 0 failed", out)


def test_sabotaged_hash_is_caught(tmp_path, capsys):
    """Sabotage check: change one expected hash of select1.test; the run must fail there."""
    text = open(f"{CORPUS}/select1.test").read()
    m = re.search(r"values hashing to ([0-9a-f]{32})", text)
    bad = text[:m.start(1)] + "0" * 32 + text[m.end(1):]
    line = bad[:m.start()].count("\n") + 1
    p = write(tmp_path, "select1.test", bad)
    code, out, last = run_main(capsys, "--engine", "sqlite", p)
    assert code == 1
    assert last == "1030 passed, 1 failed"
    assert "select1.test:" in out and "00000000000000000000000000000000" in out
    # the failure names the query's header line, which is above the hash line
    fl = int(re.search(r"FAIL .*select1\.test:(\d+)", out).group(1))
    assert 0 < line - fl < 60


# -- outcomes, exit status and the last line ----------------------------------------------

def test_failure_report_and_exit_status(tmp_path, capsys):
    p = write(tmp_path, "f.slt",
              "statement ok\nCREATE TABLE t(a INTEGER)\n\n"
              "statement ok\nINSERT INTO t VALUES (1), (2)\n\n"
              "query I rowsort\nSELECT a FROM t\n----\n1\n3\n")
    code, out, last = run_main(capsys, "--engine", "sqlite", p)
    assert code == 1
    assert last == "2 passed, 1 failed"
    assert f"FAIL {p}:7: wrong results" in out
    assert "SELECT a FROM t" in out
    assert re.search(r"expected:\n    1\n    3\n  actual:\n    1\n    2", out)
    assert f"{p}: 2 passed, 1 failed" in out


def test_statement_errors_and_counts(tmp_path, capsys):
    p = write(tmp_path, "s.slt",
              "statement ok\nCREATE TABLE t(a INTEGER)\n\n"
              "statement error\nSELECT * FROM nope\n\n"
              "statement error no such table: nope\nSELECT * FROM nope\n\n"
              "statement error db error: ERROR: no such table\nSELECT * FROM nope\n\n"
              "statement count 3\nINSERT INTO t VALUES (1), (2), (3)\n\n"
              "statement count 2\nDELETE FROM t WHERE a < 3\n\n"
              "statement error something else entirely\nSELECT * FROM nope\n\n"
              "statement error\nSELECT 1\n\n"
              "statement ok\nSELECT * FROM nope\n\n"
              "statement count 5\nDELETE FROM t\n")
    code, out, last = run_main(capsys, "--engine", "sqlite", p)
    assert last == "6 passed, 4 failed"
    assert "statement failed with a different error" in out
    assert "statement succeeded; an error was expected" in out
    assert f"{p}:25: statement failed" in out
    assert "wrong number of rows affected" in out


class _Flaky(SqliteEngine):
    """Raises a Python exception (an engine bug) for one statement."""

    def execute(self, sql, conn=None):
        if "BOOM" in sql:
            from slt.engines import _internal
            try:
                raise ZeroDivisionError("bug")
            except ZeroDivisionError as e:
                raise _internal(e)
        return super().execute(sql, conn)


def test_internal_error_never_satisfies_expected_error(tmp_path):
    p = write(tmp_path, "i.slt", "statement error\nSELECT BOOM\n\nquery error\nSELECT BOOM\n")
    res = run_file(p, Config(engine_factory=_Flaky))
    assert (res.passed, res.failed) == (0, 2)
    assert "internal error" in res.failures[0].actual[0]


def test_skipif_onlyif_halt(tmp_path, capsys):
    p = write(tmp_path, "c.test",
              "skipif sqlite\nstatement ok\nTHIS IS NOT SQL\n\n"
              "onlyif postgresql\nstatement ok\nNOR IS THIS\n\n"
              "onlyif sqlite\nstatement ok\nCREATE TABLE t(a INTEGER)\n\n"
              "onlyif mssql\nhalt\n\n"
              "statement ok\nINSERT INTO t VALUES(1)\n\n"
              "halt\n\n"
              "statement ok\nNOT REACHED\n")
    code, out, last = run_main(capsys, "--engine", "sqlite", p)
    assert code == 0 and last == "2 passed, 0 failed"
    assert "(2 not applicable to this engine)" in out


def test_labels_must_agree(tmp_path):
    p = write(tmp_path, "l.test",
              "statement ok\nCREATE TABLE t(a INTEGER)\n\n"
              "statement ok\nINSERT INTO t VALUES(1)\n\n"
              "query I nosort label-1\nSELECT a FROM t\n----\n1\n\n"
              "query I nosort label-1\nSELECT a + 0 FROM t\n----\n1\n\n"
              "query I nosort label-2\nSELECT a FROM t\n----\n\n"
              "query I nosort label-2\nSELECT a + 1 FROM t\n----\n\n")
    res = run_file(p, sqlite_config())
    # label-2's expected outputs are both wrong (two failures); label-1 agrees
    assert res.passed == 4 and res.failed == 2
    p2 = write(tmp_path, "l2.test",
               "query I nosort label-9\nSELECT 1\n----\n1\n\n"
               "query I nosort label-9\nSELECT 2\n----\n2\n")
    res = run_file(p2, sqlite_config())
    assert res.failed == 1 and "label-9" in res.failures[0].message


def test_hash_threshold_and_valuesort(tmp_path):
    import hashlib
    vals = sorted(str(i) for i in range(1, 11))
    h = hashlib.md5("".join(v + "\n" for v in vals).encode()).hexdigest()
    p = write(tmp_path, "h.test",
              "statement ok\nCREATE TABLE t(a INTEGER)\n\n"
              "statement ok\nINSERT INTO t VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)\n\n"
              f"query I valuesort\nSELECT a FROM t\n----\n10 values hashing to {h}\n\n"
              "query I rowsort\nSELECT a FROM t WHERE a < 3\n----\n1\n2\n")
    res = run_file(p, sqlite_config())
    assert (res.passed, res.failed) == (4, 0), res.failures


def test_cockroach_mode_rows_or_values_per_line(tmp_path):
    p = write(tmp_path, "cr.slt",
              "mode cockroach\n\n"
              "statement ok\nCREATE TABLE t(a INTEGER, b TEXT)\n\n"
              "statement ok\nINSERT INTO t VALUES (1, 'x y'), (2, 'z')\n\n"
              "query IT rowsort\nSELECT a, b FROM t\n----\n1  x\u2420y\n2  z\n\n"
              "query IT rowsort\nSELECT a, b FROM t\n----\n1\nx y\n2\nz\n\n"
              "query R\nSELECT 0.5\n----\n0.5\n")
    res = run_file(p, sqlite_config())
    assert (res.passed, res.failed) == (5, 0), res.failures


def test_colnames(tmp_path):
    p = write(tmp_path, "cn.slt",
              "query IT colnames\nSELECT 1 AS a, 'x' AS \"b c\"\n----\na b\u2420c\n1\nx\n\n"
              "query I colnames\nSELECT 1 AS z\n----\ny\n1\n")
    res = run_file(p, sqlite_config())
    assert (res.passed, res.failed) == (1, 1)
    assert res.failures[0].message == "wrong column names"


def test_control_sortmode_and_reset_server(tmp_path):
    p = write(tmp_path, "cs.slt",
              "control sortmode rowsort\n\n"
              "statement ok\nCREATE TABLE t(a INTEGER)\n\n"
              "statement ok\nINSERT INTO t VALUES (3), (1), (2)\n\n"
              "query I\nSELECT a FROM t ORDER BY a DESC\n----\n1\n2\n3\n\n"
              "reset-server\n\n"
              "statement ok\nCREATE TABLE t(a INTEGER)\n")
    res = run_file(p, sqlite_config())
    assert (res.passed, res.failed) == (4, 0), res.failures


def test_simple_blocks(tmp_path):
    p = write(tmp_path, "simple.slt",
              "simple\nCREATE TABLE t(a INTEGER, b TEXT);\nINSERT INTO t VALUES (1, 'x'), (2, NULL);\n"
              "SELECT a, b FROM t ORDER BY a\n----\nCOMPLETE 0\nCOMPLETE 2\n1,x\n2,NULL\nCOMPLETE 2\n\n"
              "simple\nSELECT * FROM nope\n----\ndb error: ERROR: no such table: nope\n")
    res = run_file(p, sqlite_config())
    assert (res.passed, res.failed) == (2, 0), res.failures


def test_split_statements():
    assert split_statements("SELECT ';'; SELECT $$a;b$$; -- c;\nSELECT 3;") == \
        ["SELECT ';'", "SELECT $$a;b$$", "-- c;\nSELECT 3"]


# -- known deviations ---------------------------------------------------------------------

def test_known_deviations_are_skipped_with_reason(tmp_path, capsys):
    p = write(tmp_path, "d.test",
              "query I nosort\nSELECT 1\n----\n2\n\n"
              "query I nosort\nSELECT 5 / 0\n----\nNULL\n\n"
              "query I nosort\nSELECT 3\n----\n3\n")
    dev = write(tmp_path, "dev.txt",
                "# comment\n"
                "d.test:1 -- SQLite's answer differs by design\n"
                "sql:/\\s*0\\b -- integer division by zero is NULL in SQLite, an error in PostgreSQL\n")
    code, out, last = run_main(capsys, "--engine", "sqlite", "--known-deviations", dev, p)
    assert code == 0
    assert last == "1 passed, 0 failed, 2 skipped"
    assert f"SKIP {p}:1: SQLite's answer differs by design" in out
    assert f"SKIP {p}:6: integer division by zero" in out
    assert "passes now" in out        # record 6 passes under sqlite: the entry is flagged


def test_deviation_file_format():
    d = Deviations.parse("a/select1.test:3,10-12 -- r1\nslt_lang_*.test sql:DROP -- r2\n")
    assert d.lookup("/x/a/select1.test", 11, "") == "r1"
    assert d.lookup("/x/b/select1.test", 11, "") is None
    assert d.lookup("/x/slt_lang_droptable.test", 4, "drop table t") == "r2"
    assert d.lookup("/x/other.test", 4, "DROP TABLE t") is None
    with pytest.raises(DeviationFileError):
        Deviations.parse("select1.test:3\n")
    # the shipped file parses
    Deviations.load()


# -- rewrite-results ----------------------------------------------------------------------

REWRITE_IN = (
    "# header comment kept as is   \n"
    "statement ok\nCREATE TABLE t(a INTEGER, b TEXT)\n\n"
    "statement count 9\nINSERT INTO t VALUES (1, 'x'), (2, ''), (3, NULL)\n\n"
    "query IT rowsort\nSELECT a, b FROM t\n----\n1\nwrong\n\n\n"
    "query I nosort\nSELECT a FROM t ORDER BY a\n----\n3 values hashing to 00000000000000000000000000000000\n\n"
    "statement error no such thing\nSELECT * FROM nope\n\n"
    "query I nosort\nSELECT a FROM t WHERE a > 1 ORDER BY a\n----\n\n"
    "query T nosort\nSELECT b FROM t WHERE a = 1\n----\nx\n\n"
    "query I nosort\nSELECT a FROM t WHERE a = 1\n----\n1"
)


def test_rewrite_results_byte_for_byte(tmp_path, capsys):
    import hashlib
    p = write(tmp_path, "rw.slt", REWRITE_IN)
    code, out, last = run_main(capsys, "--engine", "sqlite", "--rewrite-results", p)
    assert code == 1 and last == "3 passed, 5 failed"
    h = hashlib.md5(b"1\n2\n3\n").hexdigest()
    expected = (
        "# header comment kept as is   \n"
        "statement ok\nCREATE TABLE t(a INTEGER, b TEXT)\n\n"
        "statement count 3\nINSERT INTO t VALUES (1, 'x'), (2, ''), (3, NULL)\n\n"
        "query IT rowsort\nSELECT a, b FROM t\n----\n1\nx\n2\n(empty)\n3\nNULL\n\n\n"
        f"query I nosort\nSELECT a FROM t ORDER BY a\n----\n3 values hashing to {h}\n\n"
        "statement error no such table: nope\nSELECT * FROM nope\n\n"
        "query I nosort\nSELECT a FROM t WHERE a > 1 ORDER BY a\n----\n2\n3\n\n"
        "query T nosort\nSELECT b FROM t WHERE a = 1\n----\nx\n\n"
        "query I nosort\nSELECT a FROM t WHERE a = 1\n----\n1"
    )
    assert open(p, newline="").read() == expected
    code, out, last = run_main(capsys, "--engine", "sqlite", p)
    assert code == 0 and last == "8 passed, 0 failed"


def test_rewrite_keeps_passing_file_identical_and_hashes_past_threshold(tmp_path, capsys):
    text = open(f"{CORPUS}/slt_lang_createview.test").read()
    p = write(tmp_path, "cv.test", text)
    run_main(capsys, "--engine", "sqlite", "--rewrite-results", p)
    assert open(p).read() == text
    p2 = write(tmp_path, "big.test",
               "query I nosort\nSELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL "
               "SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL "
               "SELECT 8 UNION ALL SELECT 9\n----\n")
    run_main(capsys, "--engine", "sqlite", "--rewrite-results", p2)
    assert re.search(r"----\n9 values hashing to [0-9a-f]{32}\n$", open(p2).read())
    code, _, last = run_main(capsys, "--engine", "sqlite", p2)
    assert code == 0 and last == "1 passed, 0 failed"


# -- auto-index-selects -------------------------------------------------------------------

class _IndexingSqlite(SqliteEngine):
    """sqlite3 that accepts CREATE DEFAULT INDEX (as a no-op) and logs statements."""

    names = frozenset({"sqlite"})

    def __init__(self, sabotage=False):
        self.log = []
        self.sabotage = sabotage
        super().__init__()

    def execute(self, sql, conn=None):
        self.log.append(sql)
        if sql.startswith("CREATE DEFAULT INDEX ON"):
            return Result(None, None, 0, "CREATE INDEX")
        res = super().execute(sql, conn)
        if self.sabotage and sql.startswith("SELECT * FROM mzlite_slt_auto_view"):
            res.rows = res.rows[1:]
        return res


def test_auto_index_selects(tmp_path):
    """Sabotage check: an engine whose indexed view drops a row must fail the record."""
    text = ("statement ok\nCREATE TABLE t(a INTEGER)\n\n"
            "statement ok\nINSERT INTO t VALUES (1), (2)\n\n"
            "query I nosort\nSELECT a FROM t ORDER BY a\n----\n1\n2\n\n"
            "query I nosort\nSELECT a FROM t ORDER BY a LIMIT 1\n----\n1\n")
    p = write(tmp_path, "ai.slt", text)
    engines = []

    def factory(**kw):
        e = _IndexingSqlite(**kw)
        engines.append(e)
        return e

    res = run_file(p, Config(engine_factory=factory, auto_index_selects=True))
    assert (res.passed, res.failed) == (4, 0), res.failures
    log = engines[-1].log
    assert any(s.startswith("CREATE VIEW mzlite_slt_auto_view_1 (a1) AS SELECT a FROM t")
               for s in log)
    assert "CREATE DEFAULT INDEX ON mzlite_slt_auto_view_1" in log
    assert "DROP VIEW mzlite_slt_auto_view_1" in log
    assert not any("auto_view_2" in s for s in log)   # LIMIT: not compared
    res = run_file(p, Config(engine_factory=lambda: factory(sabotage=True),
                             auto_index_selects=True))
    assert (res.passed, res.failed) == (3, 1)
    assert "indexed view" in res.failures[0].message


def test_auto_index_selects_skips_transactions_and_as_of(tmp_path):
    p = write(tmp_path, "ai2.slt",
              "statement ok\nCREATE TABLE t(a INTEGER)\n\n"
              "statement ok\nBEGIN\n\n"
              "query I\nSELECT count(*) FROM t\n----\n0\n\n"
              "statement ok\nCOMMIT\n\n"
              "query I\nSELECT count(*) FROM t\n----\n0\n")
    engines = []

    def factory():
        engines.append(_IndexingSqlite())
        return engines[-1]

    res = run_file(p, Config(engine_factory=factory, auto_index_selects=True))
    assert (res.passed, res.failed) == (5, 0), res.failures
    views = [s for s in engines[-1].log if s.startswith("CREATE VIEW")]
    assert len(views) == 1 and "auto_view_1" in views[0]   # only the query after COMMIT


# -- options: junit, -j, fail-fast, usage errors ------------------------------------------

def test_junit_report(tmp_path, capsys):
    p = write(tmp_path, "j.slt", "statement ok\nSELECT 1\n\nquery I\nSELECT 1\n----\n2\n")
    xml = str(tmp_path / "report.xml")
    code, _, _ = run_main(capsys, "--engine", "sqlite", "--junit-report", xml, p)
    assert code == 1
    root = ET.parse(xml).getroot()
    assert root.get("tests") == "2" and root.get("failures") == "1"
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [f"{p}:1", f"{p}:4"]
    assert cases[1].find("failure") is not None


def test_parallel_jobs_aggregate_counts(tmp_path, capsys):
    paths = []
    for i in range(3):
        paths.append(write(tmp_path, f"p{i}.slt",
                           f"query I\nSELECT {i}\n----\n{i if i != 1 else 9}\n"))
    code, out, last = run_main(capsys, "--engine", "sqlite", "-j", "2", str(tmp_path))
    assert code == 1 and last == "2 passed, 1 failed"
    # printed in file order regardless of scheduling
    assert out.index("p0.slt:") < out.index("p1.slt:") < out.index("p2.slt:")


def test_fail_fast(tmp_path, capsys):
    p = write(tmp_path, "ff.slt", "query I\nSELECT 1\n----\n2\n\nquery I\nSELECT 3\n----\n4\n")
    p2 = write(tmp_path, "gg.slt", "query I\nSELECT 1\n----\n1\n")
    code, out, last = run_main(capsys, "--engine", "sqlite", "--fail-fast", p, p2)
    assert code == 1 and last == "0 passed, 1 failed"
    assert "gg.slt" not in out


def test_verbose_prints_each_record(tmp_path, capsys):
    p = write(tmp_path, "v.slt", "statement ok\nSELECT 1\n\nquery I\nSELECT 2\n----\n2\n")
    code, out, _ = run_main(capsys, "--engine", "sqlite", "-v", p)
    assert f"{p}:1: SELECT 1" in out and f"{p}:4: SELECT 2" in out and code == 0


def test_usage_errors(tmp_path, capsys):
    assert slt.main(["--engine", "sqlite", str(tmp_path / "missing.slt")]) == 2
    assert slt.main(["--engine", "sqlite", "--system-parameter-default", "novalue",
                     str(tmp_path)]) == 2


def test_parse_error_counts_as_failure(tmp_path, capsys):
    p = write(tmp_path, "bad.slt", "bogus record\n")
    code, out, last = run_main(capsys, "--engine", "sqlite", p)
    assert code == 1 and last == "0 passed, 1 failed" and "cannot parse" in out


def test_engine_that_cannot_start(tmp_path):
    p = write(tmp_path, "e.slt", "statement ok\nSELECT 1\n")

    def broken():
        raise ImportError("no engine")

    res = run_file(p, Config(engine_factory=broken))
    assert res.failed == 1 and "could not start engine" in res.failures[0].message


class _Hangs(SqliteEngine):
    """Blocks on HANG until the test releases it (a stand-in for a hung engine)."""

    release = None

    def execute(self, sql, conn=None):
        if "HANG" in sql:
            self.release.wait()
        return super().execute(sql, conn)


def test_a_hung_statement_fails_and_stops_the_file(tmp_path):
    import threading
    _Hangs.release = threading.Event()
    p = write(tmp_path, "hang.slt",
              "statement ok\nSELECT 1\n\nstatement ok\nSELECT HANG\n\n"
              "statement ok\nSELECT 2\n")
    try:
        res = run_file(p, Config(engine_factory=_Hangs, timeout=0.2))
    finally:
        _Hangs.release.set()
    assert (res.passed, res.failed) == (1, 1)
    assert "timed out" in res.failures[0].actual[0]
    assert "line 4" in res.bailed


def test_guarded_engine_passes_results_and_errors(tmp_path):
    p = write(tmp_path, "g.slt", "query I\nSELECT 1\n----\n1\n\nstatement error\nSELECT * FROM nope\n")
    res = run_file(p, Config(engine="sqlite", timeout=30))
    assert (res.passed, res.failed) == (2, 0)
