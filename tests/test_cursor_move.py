"""MOVE and the non-forward FETCH forms on a buffered (SELECT) cursor.

MOVE skips rows and returns none, with PostgreSQL's tag ``MOVE n`` (``rowcount`` n).
BACKWARD / PRIOR / ABSOLUTE / RELATIVE / FIRST / LAST and negative counts (FETCH and MOVE) are refused with
0A000 naming the form, never accepted and ignored.

Sabotage seen red once: dropping ``if plan.move`` in ``mzlite/subscribe.fetch`` (MOVE
returned rows, tag FETCH n); dropping the ``refused_form`` refusal in ``planner/bind_stmt._fetch``
(FETCH BACKWARD 1 read forward); dropping ``"-"`` from the parser's backward forms
(``MOVE -1 c`` was a syntax error).
"""
import pytest

import mzlite


def _declare(cur):
    cur.execute("BEGIN")
    cur.execute("DECLARE c CURSOR FOR SELECT * FROM generate_series(1, 10) ORDER BY 1")


def test_move_skips_rows_and_reports_the_count(cur):
    _declare(cur)
    cur.execute("MOVE 3 c")
    assert cur.rowcount == 3
    assert cur.description is None
    cur.execute("FETCH 1 c")
    assert cur.fetchall() == [(4,)]
    cur.execute("MOVE FORWARD 2 c")
    assert cur.rowcount == 2
    cur.execute("FETCH NEXT c")
    assert cur.fetchall() == [(7,)]
    cur.execute("MOVE ALL c")
    assert cur.rowcount == 3
    cur.execute("FETCH ALL c")
    assert cur.fetchall() == []


@pytest.mark.parametrize("sql, form", [
    ("FETCH BACKWARD 1 c", "FETCH BACKWARD 1"),
    ("FETCH PRIOR c", "FETCH PRIOR"),
    ("FETCH ABSOLUTE 2 c", "FETCH ABSOLUTE 2"),
    ("FETCH RELATIVE -1 c", "FETCH RELATIVE -1"),
    ("FETCH LAST c", "FETCH LAST"),
    ("FETCH FIRST c", "FETCH FIRST"),
    ("MOVE BACKWARD 2 c", "MOVE BACKWARD 2"),
    ("MOVE ABSOLUTE 3 c", "MOVE ABSOLUTE 3"),
    ("FETCH -1 c", "FETCH -1"),  # a negative count moves backward (was a syntax error)
    ("FETCH FORWARD -2 FROM c", "FETCH FORWARD -2"),
    ("MOVE -1 c", "MOVE -1"),
])
def test_non_forward_forms_are_refused(cur, sql, form):
    _declare(cur)
    cur.execute("FETCH 2 c")
    with pytest.raises(mzlite.Error) as ei:
        cur.execute(sql)
    assert ei.value.sqlstate == "0A000"
    assert form in str(ei.value)
