"""The statement-completeness rule (pure functions): where ';' ends a statement."""
import pytest

from repl.complete import is_blank, is_complete, split_script, split_statements


@pytest.mark.parametrize("text,complete", [
    ("select 1;", True),
    ("select 1", False),
    ("select 1;  \n ", True),
    ("select 1; -- trailing comment", True),
    ("select 1; /* c */", True),
    ("select 1 -- not here;", False),
    ("select 1 /* not here; */", False),
    ("select ';", False),
    ("select ';';", True),
    ("select 'it''s;';", True),
    ("select E'\\';", False),         # E'\'' escapes the quote: still open
    ("select E'\\'';", True),
    ("select 'a\\';", True),          # standard string: backslash is literal
    ('select ";";', True),
    ('select ";', False),
    ("select $$;", False),
    ("select $$ ; $$;", True),
    ("select $fn$ $$ ; $fn$;", True),
    ("select $fn$ ; $$;", False),
    ("select $1;", True),              # a parameter, not a dollar quote
    ("select a$b ;", True),            # $ inside an identifier
    ("select (1;", False),
    ("select (1); ", True),
    ("/* a /* nested; */ still comment; */ select 1;", True),
    ("/* a /* nested; */ still comment;", False),
    ("\\dt", True),
    ("  \\x on", True),
    ("quit", True),
    ("", False),
    ("select 1;\nselect 2", False),
])
def test_is_complete(text, complete):
    assert is_complete(text) is complete


def test_split_statements_offsets_and_terminators():
    text = "select 1; select ';' ;\n-- only a comment\n;  select $$a;b$$"
    pieces = split_statements(text)
    assert [p.text for p in pieces] == ["select 1", "select ';'", "select $$a;b$$"]
    assert [p.terminated for p in pieces] == [True, True, False]
    for p in pieces:
        assert text[p.offset:p.offset + len(p.text)] == p.text


def test_split_script_meta_lines():
    text = "create table t (a int);\n\\dt\ninsert into t values (1);\n  \\x on\nselect 1"
    pieces = split_script(text)
    assert [(p.text, p.meta) for p in pieces] == [
        ("create table t (a int)", False), ("\\dt", True),
        ("insert into t values (1)", False), ("\\x on", True), ("select 1", False)]
    for p in pieces:
        assert text[p.offset:p.offset + len(p.text)] == p.text


def test_split_script_drops_empty_statements():
    assert split_script(";;  ; -- x\n") == []
    assert [p.text for p in split_script("select 1;;select 2;")] == ["select 1", "select 2"]


def test_is_blank():
    assert is_blank("  -- x\n /* y */ ")
    assert not is_blank(" -- x\n y")
