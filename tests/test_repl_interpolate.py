"""psql variable interpolation (``repl.interpolate``) and its use by the runner."""
import io

import pytest

from repl import format as fmt
from repl.interpolate import interpolate
from repl.main import Runner
from tests.support.repl_standin import StandInConnection

VARS = {"n": "42", "who": "O'Brien", "col": 'my "col"', "tbl": "t"}


@pytest.mark.parametrize("sql, expected", [
    ("select :n", "select 42"),
    ("select :'who'", "select 'O''Brien'"),
    ('select 1 as :"col"', 'select 1 as "my ""col"""'),
    ("select * from :tbl where a = :n", "select * from t where a = 42"),
    ("select :n::text", "select 42::text"),
    ("select 1::n", "select 1::n"),  # a cast, not a reference
    ("select ':n', \":n\", $$:n$$, $q$:n$q$", "select ':n', \":n\", $$:n$$, $q$:n$q$"),
    ("select E'\\':n' -- :n\n/* :n /* :n */ */ , :n", "select E'\\':n' -- :n\n/* :n /* :n */ */ , 42"),
    ("select :undefined, :'undefined'", "select :undefined, :'undefined'"),
])
def test_interpolate(sql, expected):
    assert interpolate(sql, VARS) == expected


def test_runner_substitutes_set_variables():
    """Sabotage: drop the ``interpolate`` call in ``Runner.run_statement`` -> the stand-in
    receives ``:n`` and fails."""
    conn = StandInConnection()
    out, err = io.StringIO(), io.StringIO()
    r = Runner(conn, fmt.Settings(), out, err)
    r.run_meta("\\set n 7")
    r.run_meta("\\set who \"O'Brien\"")
    assert r.run_statement("select :n as a, :'who' as b")
    assert conn.executed[-1] == "select 7 as a, 'O''Brien' as b"
    assert out.getvalue() == " a |    b    \n---+---------\n 7 | O'Brien\n(1 row)\n\n"
    assert err.getvalue() == ""
