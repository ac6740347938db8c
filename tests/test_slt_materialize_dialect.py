"""Materialize's sqllogictest dialect in the runner: record boundaries as Materialize's
parser draws them, queries with no type letters, named connections (``simple
conn=NAME,user=USER``) as sessions of their own, and EXPLAIN-plan records counted in their
own category (compared only with ``--compare-plans``)."""
import pytest

from slt.parser import ParseError, Query, Simple, Statement, parse_text
from slt.runner import Config, run_file


def test_query_sql_runs_to_its_separator_across_blank_lines():
    """Sabotage: read a query's SQL with ``_read_sql`` (stop at the first blank line) and
    the blank line before ---- is "unexpected start of record" again."""
    text = ("query I\nSELECT 1\n\nUNION ALL SELECT 2\n\n----\n1\n2\n\n"
            "statement ok\nSELECT 3\n")
    recs = parse_text(text, "x.slt")
    assert [type(r) for r in recs] == [Query, Statement]
    assert recs[0].sql == "SELECT 1\n\nUNION ALL SELECT 2"
    assert recs[0].expected_lines == ["1", "2"]
    assert recs[1].line == 10


def test_query_without_separator_does_not_swallow_the_next_record():
    text = "query I\nSELECT 1\n\nstatement ok\nSELECT 2\n\n# a comment\nquery I\nSELECT 3\n----\n3\n"
    recs = parse_text(text, "x.slt")
    assert [type(r) for r in recs] == [Query, Statement, Query]
    assert not recs[0].has_results and recs[0].sql == "SELECT 1"


def test_query_error_regex_is_not_replaced_by_lines_after_a_separator():
    """``query error <regex>`` followed by ``----`` lines: Materialize's runner sends those
    lines as SQL behind a ``--`` comment, so the header's regex is what the error must match;
    with no header regex the lines are the expected message (sqllogictest-rs).  Sabotage:
    let the lines replace the header regex again and the first assertion fails."""
    text = ("query error operator does not exist\nSELECT 1 @> 2\n----\nfalse\n\n"
            "query error\nSELECT 1/0\n----\ndivision by zero\n")
    a, b = parse_text(text, "x.slt")
    assert a.error_regex == "operator does not exist" and a.sql == "SELECT 1 @> 2"
    assert b.error_regex == "division\\ by\\ zero"


def test_query_with_no_type_letters(tmp_path):
    """Sabotage: refuse empty type letters in ``_parse_query`` and this file cannot parse."""
    p = tmp_path / "t.slt"
    p.write_text("query\nSELECT 1, 'a'\n----\n1\na\n\nquery\nVALUES (2), (1)\n----\n1\n2\n")
    res = run_file(str(p), Config())
    assert (res.passed, res.failed) == (2, 0), [f.message for f in res.failures]


def test_simple_options():
    recs = parse_text("simple conn=mz_system,user=mz_system\nSELECT 1\n----\n1\nCOMPLETE 1\n", "x.slt")
    assert isinstance(recs[0], Simple) and (recs[0].conn, recs[0].user) == ("mz_system", "mz_system")
    with pytest.raises(ParseError, match="cannot set user without also setting conn"):
        parse_text("simple user=u\nSELECT 1\n----\n1\nCOMPLETE 1\n", "x.slt")


def test_named_connections_are_sessions_of_their_own(tmp_path):
    """Sabotage: make ``MzliteEngine._connection`` return the default connection for every
    name and the named session's SET shows in the default one."""
    p = tmp_path / "t.slt"
    p.write_text("simple conn=other\nSET transaction_isolation = 'serializable'\n----\nCOMPLETE 0\n\n"
                 "simple conn=other\nSHOW transaction_isolation\n----\nserializable\nCOMPLETE 1\n\n"
                 "query T\nSHOW transaction_isolation\n----\nstrict serializable\n\n"
                 "statement ok\nCREATE TABLE shared (a int)\n\n"
                 "simple conn=other\nINSERT INTO shared VALUES (1)\n----\nCOMPLETE 1\n\n"
                 "query I\nSELECT a FROM shared\n----\n1\n")
    res = run_file(str(p), Config())
    assert (res.passed, res.failed) == (6, 0), [(f.line, f.message, f.actual) for f in res.failures]


def test_explain_plan_records_are_counted_apart(tmp_path):
    """An EXPLAIN record's expected text is Materialize's plan: counted as a plan record,
    never passed or failed, unless --compare-plans.  Sabotage: drop the ``_is_plan`` branch
    in ``_run_record`` and the record fails."""
    p = tmp_path / "t.slt"
    p.write_text("statement ok\nCREATE TABLE t (a int)\n\n"
                 "query T multiline\nEXPLAIN SELECT * FROM t\n----\nExplained Query:\n  ReadStorage materialize.public.t\n\nEOF\n\n"
                 "query I\nSELECT 1\n----\n1\n")
    res = run_file(str(p), Config())
    assert (res.passed, res.failed, res.plans) == (2, 0, 1)
    res = run_file(str(p), Config(compare_plans=True))
    assert (res.passed, res.failed, res.plans) == (2, 1, 0)


def test_an_explain_after_comments_is_a_plan_record(tmp_path):
    """Materialize's tpch_select.slt heads each EXPLAIN with a comment line (``-- Query 01``);
    the record is still a plan record.  Sabotage: ``_EXPLAIN_RE`` back to ``^\\s*explain\\b``
    and both records failed."""
    p = tmp_path / "t.slt"
    p.write_text("query T multiline\n-- Query 01\nEXPLAIN SELECT 1\n----\nExplained Query:\n  Constant\n\nEOF\n\n"
                 "query T multiline\n/* q2 */ -- and a line\n\nEXPLAIN SELECT 2\n----\nanything\nEOF\n")
    res = run_file(str(p), Config())
    assert (res.passed, res.failed, res.plans) == (0, 0, 2), [(f.line, f.message) for f in res.failures]


def test_an_internal_error_mzlite_reports_fails_an_explain_record(tmp_path):
    """mzlite reports a Python exception that escaped as XX000 ``internal error: ...``; the
    runner takes it for the engine bug it is, so an EXPLAIN record that hits one fails instead
    of counting as a plan.  Sabotage: ``MzliteEngine._raise`` without ``internal=`` and the
    record counted as a plan."""
    import mzlite
    from slt import engines

    class Reporting(engines.MzliteEngine):
        def execute(self, sql, conn=None):
            if sql.lstrip().upper().startswith("EXPLAIN"):
                self._raise(mzlite.InternalError("internal error: IndexError: tuple index out of range"))
            return super().execute(sql, conn)
    p = tmp_path / "t.slt"
    p.write_text("query T multiline\nEXPLAIN SELECT 1\n----\nanything\nEOF\n\n"
                 "statement error division by zero\nSELECT 1/0\n")
    res = run_file(str(p), Config(engine_factory=Reporting))
    assert (res.passed, res.failed, res.plans) == (1, 1, 0)


def test_explain_internal_error_still_fails(tmp_path):
    from slt import engines

    class Broken(engines.MzliteEngine):
        def execute(self, sql, conn=None):
            if sql.lstrip().upper().startswith("EXPLAIN"):
                raise engines.EngineError("internal error: boom", internal=True)
            return super().execute(sql, conn)
    p = tmp_path / "t.slt"
    p.write_text("query T multiline\nEXPLAIN SELECT 1\n----\nanything\nEOF\n")
    res = run_file(str(p), Config(engine_factory=Broken))
    assert (res.failed, res.plans) == (1, 0)
