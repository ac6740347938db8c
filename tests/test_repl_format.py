"""psql output formats as pure functions: the expected strings were captured once from psql 15
(``psql -X -c ...`` against a throwaway server) and pasted here as literals."""
from decimal import Decimal

import pytest

from repl import format as fmt

PSQL = {
    'mixed': ' a |   b   | c | d |  e   |  f  \n---+-------+---+---+------+-----\n 1 | hello |   | t | 1.50 | 2.5\n(1 row)\n\n',
    'two_rows': '    longname    |   n   \n----------------+-------\n x              | 12345\n abcdefghijklmn |    -3\n(2 rows)\n\n',
    'empty': ' a \n---\n(0 rows)\n\n',
    'multiline': '  t  | u | n \n-----+---+---\n a  +| c+| 5\n bbb | d+| \n     | e | \n(1 row)\n\n',
    'multiline_header': ' multi+| y \n line  |   \n-------+---\n     1 | 2\n(1 row)\n\n',
    'wide': ' e |   w   |    f    \n---+-------+---------\n   | ü日本 | 3.14159\n(1 row)\n\n',
    'nulls': ' n  | t \n----+---\n    | x\n 10 | \n(2 rows)\n\n',
    'x_two': '-[ RECORD 1 ]\na   | 1\nbcd | hello\nc   | \n-[ RECORD 2 ]\na   | 22\nbcd | x    +\n    | yy\nc   | z\n\n',
    'x_long': '-[ RECORD 1 ]-------------------\nabc     | 1\nb       | hello world long value\nlastcol | x\n\n',
    'x_widehead': '-[ RECORD 1 ]--------------+--\nabcdefghijklmnopqrstuvwxyz | 1\nb                          | v\n\n',
    'x_mlhead': '-[ RECORD 1 ]\na+| 1\nb |\nc | 2\n\n',
    'x_empty': '(0 rows)\n\n',
    'csv': 'a,b,c,d,e\n1,"he,l""lo",,"x\ny",\n',
    'select_1_plus_1': ' ?column? \n----------\n        2\n(1 row)\n\n',
    'no_columns': '--\n(1 row)\n\n',  # psql -c 'select'
}

CASES = {
    'mixed': (["a", "b", "c", "d", "e", "f"],
              ["integer", "text", "text", "boolean", "numeric", "double precision"],
              [(1, "hello", None, True, Decimal("1.50"), 2.5)]),
    'two_rows': (["longname", "n"], ["text", "integer"], [("x", 12345), ("abcdefghijklmn", -3)]),
    'empty': (["a"], ["integer"], []),
    'multiline': (["t", "u", "n"], ["text", "text", "integer"], [("a\nbbb", "c\nd\ne", 5)]),
    'multiline_header': (["multi\nline", "y"], ["integer", "integer"], [(1, 2)]),
    'wide': (["e", "w", "f"], ["text", "text", "double precision"], [("", "ü日本", 3.14159)]),
    'nulls': (["n", "t"], ["integer", "text"], [(None, "x"), (10, None)]),
    'select_1_plus_1': (["?column?"], ["integer"], [(2,)]),
    'no_columns': ([], [], [()]),
}

XCASES = {
    'x_two': (["a", "bcd", "c"], ["integer", "text", "text"], [(1, "hello", None), (22, "x\nyy", "z")]),
    'x_long': (["abc", "b", "lastcol"], ["integer", "text", "text"], [(1, "hello world long value", "x")]),
    'x_widehead': (["abcdefghijklmnopqrstuvwxyz", "b"], ["integer", "text"], [(1, "v")]),
    'x_mlhead': (["a\nb", "c"], ["integer", "integer"], [(1, 2)]),
    'x_empty': (["a"], ["integer"], []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_aligned_matches_psql(name):
    names, types, rows = CASES[name]
    assert fmt.format_aligned(names, types, rows) == PSQL[name]


@pytest.mark.parametrize("name", sorted(XCASES))
def test_expanded_matches_psql(name):
    names, types, rows = XCASES[name]
    assert fmt.format_expanded(names, types, rows) == PSQL[name]


def test_csv_matches_psql():
    out = fmt.format_csv(["a", "b", "c", "d", "e"], ["integer", "text", "text", "text", "text"],
                         [(1, 'he,l"lo', None, "x\ny", "")])
    assert out == PSQL['csv']


def test_tsv_and_json():
    names, types, rows = ["a", "b"], ["integer", "text"], [(1, "x\ty"), (None, "z")]
    assert fmt.format_tsv(names, types, rows) == "a\tb\n1\tx\\ty\n\tz\n"
    assert fmt.format_json(names, types, rows) == '[{"a": 1, "b": "x\\ty"},\n{"a": null, "b": "z"}]\n'
    assert fmt.format_json(names, types, []) == "[]\n"
    assert fmt.format_json(["n", "f"], ["numeric", "double precision"],
                           [(Decimal("1.50"), float("inf")), (Decimal("3"), 0.5)]) == \
        '[{"n": 1.50, "f": "Infinity"},\n{"n": 3, "f": 0.5}]\n'


def test_title_is_centred_like_psql():
    # psql -c '\dt' layout: title centred over the table width
    out = fmt.format_aligned(["Schema", "Name", "Type", "Owner"], ["text"] * 4,
                             [("public", "t", "table", "postgres")], title="List of relations")
    assert out.splitlines()[0] == "        List of relations"


@pytest.mark.parametrize("x,text", [
    (1e15, "1e+15"), (1e16, "1e+16"), (123456789012345.0, "123456789012345"),
    (1234567890123456.0, "1.234567890123456e+15"), (0.0001, "0.0001"), (1e-05, "1e-05"),
    (float("inf"), "Infinity"), (float("-inf"), "-Infinity"), (float("nan"), "NaN"), (1.0, "1"),
    (-0.0, "-0"), (1e100, "1e+100"), (1.5e-07, "1.5e-07"), (100.0, "100"), (2.5, "2.5"),
    (-3.25, "-3.25"), (0.1, "0.1"),
])
def test_float8_text_matches_postgres(x, text):
    # reference: psql -At -c "select 1e15::float8, ..." on PostgreSQL 15
    assert fmt.float8_text(x) == text


def test_value_text():
    assert fmt.value_text(True) == "t" and fmt.value_text(False) == "f"
    assert fmt.value_text(None) == "" and fmt.value_text(None, "NULL") == "NULL"
    assert fmt.value_text(Decimal("1E+2")) == "100"
    assert fmt.value_text(Decimal("1.50")) == "1.50"


ERRORS = [  # (query, position, psql's stderr)
    ("select 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', x from nosuch",
     'ERROR:  relation "nosuch" does not exist\nLINE 1: ...aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\', x from nosuch\n                                                                 ^\n'),
    ("select 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' from nosuch, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
     'ERROR:  relation "nosuch" does not exist\nLINE 1: ...aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\' from nosuch, bb...\n                                                             ^\n'),
    ("select 1 from nosuch where x = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'",
     'ERROR:  relation "nosuch" does not exist\nLINE 1: select 1 from nosuch where x = \'bbbbbbbbbbbbbbbbbbbbbbbbbbbb...\n                      ^\n'),
    ('select 1;\nselect *\n  from\tnosuch',
     'ERROR:  relation "nosuch" does not exist\nLINE 3:   from nosuch\n               ^\n'),
    ("select '日本' from nosuch",
     'ERROR:  relation "nosuch" does not exist\nLINE 1: select \'日本\' from nosuch\n                           ^\n'),
    ("selec 1", 'ERROR:  syntax error at or near "selec"\nLINE 1: selec 1\n        ^\n'),
]


@pytest.mark.parametrize("query,expected", ERRORS)
def test_error_report_matches_psql(query, expected):
    word = "selec" if query.startswith("selec ") else "nosuch"
    message = expected.split("\n", 1)[0][len("ERROR:  "):]
    out = fmt.format_error(message, query=query, position=query.index(word) + 1)
    assert out == expected


def test_error_with_detail_and_hint_and_no_position():
    out = fmt.format_error("boom", detail="d", hint="h", prefix="mzlite:f.sql:3: ")
    assert out == "mzlite:f.sql:3: ERROR:  boom\nDETAIL:  d\nHINT:  h\n"


def test_expanded_auto_uses_terminal_width():
    s = fmt.Settings(expanded="auto")
    names, types, rows = ["a"], ["text"], [("x" * 50,)]
    assert fmt.format_result(names, types, rows, s, terminal_width=80).startswith("                         a")
    assert fmt.format_result(names, types, rows, s, terminal_width=20).startswith("-[ RECORD 1 ]")
