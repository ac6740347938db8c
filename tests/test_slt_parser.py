"""Parser tests for the sqllogictest runner: every record kind, including the odd ones."""
import os

import pytest

from slt.parser import (Halt, HashThreshold, ParseError, Query, ResetServer, Simple, SortMode,
                        Statement, parse_file, parse_text)


def kinds(recs):
    return [type(r).__name__ for r in recs]


def test_statement_dispositions():
    text = (
        "statement ok\nCREATE TABLE t(a INT)\n\n"
        "statement OK\nINSERT INTO t VALUES (1)\n\n"
        "statement error\nDROP TABLE nope\n\n"
        "statement error division by zero\nSELECT 1/0\n\n"
        "statement error pgcode 22012 division by zero\nSELECT 1/0\n\n"
        "statement count 3\nINSERT INTO t VALUES (1), (2), (3)\n"
    )
    recs = parse_text(text, "x.slt")
    assert kinds(recs) == ["Statement"] * 6
    assert [r.expect for r in recs] == ["ok", "ok", "error", "error", "error", "count"]
    assert recs[0].sql == "CREATE TABLE t(a INT)" and recs[0].line == 1
    assert recs[2].error_regex is None
    assert recs[3].error_regex == "division by zero"
    assert recs[4].pgcode == "22012" and recs[4].error_regex == "division by zero"
    assert recs[5].count == 3
    s, e = recs[5].count_span
    assert text[s:e] == "3"
    s, e = recs[3].error_span
    assert text[s:e] == "division by zero"


def test_query_header_options_and_label():
    text = ("query IIT rowsort label-7\nSELECT 1, 2, 'a'\n----\n1\n2\na\n\n"
            "query R valuesort\nSELECT 1.5\n----\n1.500\n\n"
            "query T nosort\nSELECT 'x'\n----\nx\n")
    q1, q2, q3 = parse_text(text, "x.test")
    assert (q1.types, q1.sort, q1.label) == ("IIT", "rowsort", "label-7")
    assert q1.expected_lines == ["1", "2", "a"]
    assert (q2.types, q2.sort, q2.label) == ("R", "valuesort", None)
    assert q3.sort == "nosort"
    s, e = q1.output_span
    assert text[s:e] == "1\n2\na\n"


def test_query_with_no_results_and_without_separator():
    text = ("query I nosort\nSELECT 1 WHERE false\n----\n\n"
            "query I nosort\nSELECT 1 WHERE false\n----\n"
            "\nquery I\nSELECT 1\n\nstatement ok\nSELECT 1\n")
    q1, q2, q3, s = parse_text(text, "x.test")
    assert q1.expected_lines == [] and q1.has_results
    assert q2.expected_lines == [] and q2.has_results
    assert not q3.has_results and q3.sql == "SELECT 1"
    assert isinstance(s, Statement)


def test_hashed_output():
    text = "query I nosort\nSELECT a FROM t\n----\n30 values hashing to 3C13DEE48D9356AE19AF2515E05E6B54\n"
    (q,) = parse_text(text, "x.test")
    assert q.expected_hash == (30, "3c13dee48d9356ae19af2515e05e6b54")


def test_blank_line_terminates_and_comments():
    text = ("# a comment\n"
            "statement ok\n"
            "CREATE TABLE t(a INT,\n"
            "  b INT)\n"
            "\n"
            "   \n"
            "# another comment\n"
            "query I rowsort  # trailing comment\n"
            "SELECT a FROM t\n"
            "----\n"
            "\n"
            "statement ok\nSELECT 2\n")
    st, q, st2 = parse_text(text, "x.slt")
    assert st.sql == "CREATE TABLE t(a INT,\n  b INT)"
    assert q.line == 8 and q.sort == "rowsort" and q.label is None
    assert st2.line == 12


def test_conditions_attach_to_next_record_only():
    text = ("skipif postgresql # not here\nstatement ok\nA\n\n"
            "onlyif sqlite\nonlyif mysql\nquery I nosort\nSELECT 1\n----\n1\n\n"
            "statement ok\nB\n\n"
            "onlyif mssql\nhalt\n\n"
            "halt\n")
    recs = parse_text(text, "x.test")
    assert recs[0].conditions == (("skipif", "postgresql"),)
    assert recs[1].conditions == (("onlyif", "sqlite"), ("onlyif", "mysql"))
    assert recs[2].conditions == ()
    assert isinstance(recs[3], Halt) and recs[3].conditions == (("onlyif", "mssql"),)
    assert isinstance(recs[4], Halt) and recs[4].conditions == ()


def test_control_records():
    text = ("hash-threshold 8\n\nmode cockroach\n\ncontrol sortmode rowsort\n\n"
            "reset-server\n\nquery II\nSELECT 1, 2\n----\n1  2\n\nmode standard\n\n"
            "query I\nSELECT 1\n----\n1\n")
    recs = parse_text(text, "x.slt")
    assert kinds(recs) == ["HashThreshold", "SortMode", "ResetServer", "Query", "Query"]
    assert recs[0].threshold == 8 and recs[1].sort == "rowsort"
    assert recs[3].mode == "cockroach" and recs[3].sort is None
    assert recs[4].mode == "standard"


def test_query_error_and_colnames_and_multiline():
    text = ("query error pgcode 42P01 unknown catalog item 'nope'\nSELECT * FROM nope\n\n"
            "query IT colnames\nSELECT 1 AS a, 'x' AS \"b c\"\n----\na b\u2420c\n1\nx\n\n"
            "query T multiline\nEXPLAIN SELECT 1\n----\nline one\n\nline three\nEOF\n\n"
            "statement ok\nSELECT 1\n")
    qe, qc, qm, st = parse_text(text, "x.slt")
    assert qe.error and qe.pgcode == "42P01" and qe.error_regex == "unknown catalog item 'nope'"
    assert qc.colnames == ["a", "b c"] and qc.expected_lines == ["1", "x"]
    assert qm.multiline and qm.expected_lines == ["line one", "", "line three"]
    assert st.sql == "SELECT 1"


def test_simple_blocks():
    text = ("simple conn=mz_system,user=mz_system\nSELECT 1;\nSELECT 2\n----\n1\nCOMPLETE 1\n"
            "2\nCOMPLETE 1\n\n"
            "simple multiline\nSELECT 'a'\n----\na\nEOF\nCOMPLETE 1\n\n")
    s1, s2 = parse_text(text, "x.slt")
    assert isinstance(s1, Simple) and s1.conn == "mz_system" and s1.user == "mz_system"
    assert s1.sql == "SELECT 1;\nSELECT 2"
    assert s1.expected_lines == ["1", "COMPLETE 1", "2", "COMPLETE 1"]
    assert s2.multiline and s2.expected_lines == ["a", "COMPLETE 1"]


def test_types_b_and_o_and_bad_letters():
    (q,) = parse_text("query BO\nSELECT true, 1::oid\n----\ntrue\n1\n", "x.slt")
    assert q.types == "BO"
    with pytest.raises(ParseError):
        parse_text("query IX\nSELECT 1\n----\n1\n", "x.slt")
    with pytest.raises(ParseError) as ei:
        parse_text("frobnicate\n", "bad.slt")
    assert "bad.slt:1" in str(ei.value)


def test_include_glob(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "a.slt").write_text("statement ok\nA\n")
    (tmp_path / "inc" / "b.slt").write_text("statement ok\nB\n")
    main = tmp_path / "main.slt"
    main.write_text("statement ok\nFIRST\n\ninclude inc/*.slt\n\nstatement ok\nLAST\n")
    recs = parse_file(str(main))
    assert [r.sql for r in recs] == ["FIRST", "A", "B", "LAST"]
    assert os.path.basename(recs[1].path) == "a.slt" and recs[1].line == 1


def test_crlf_lines():
    text = "statement ok\r\nSELECT 1\r\n\r\nquery I nosort\r\nSELECT 1\r\n----\r\n1\r\n"
    st, q = parse_text(text, "x.slt")
    assert st.sql == "SELECT 1" and q.expected_lines == ["1"] and q.newline == "\r\n"


def test_corpus_parses():
    import pathlib
    corpus = pathlib.Path(__file__).resolve().parents[2] / "shared" / "sqlite-corpus"
    recs = parse_file(str(corpus / "select1.test"))
    qs = [r for r in recs if isinstance(r, Query)]
    sts = [r for r in recs if isinstance(r, Statement)]
    assert len(qs) + len(sts) == 1031
    assert isinstance(recs[0], Statement) or isinstance(recs[0], HashThreshold)
    assert not any(isinstance(r, (Simple, SortMode, ResetServer)) for r in recs)
