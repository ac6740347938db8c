"""Deeply nested statements end in an answer or in a clear error (54001, PostgreSQL's "stack depth
limit exceeded") or PostgreSQL's parser's 42601 "memory exhausted", never in a raw RecursionError or an InternalError (issue: nothing hangs, limits
give a clear error)."""
import pytest

import mzlite

DEEP = 5000

STATEMENTS = {
    "parentheses": "SELECT " + "(" * DEEP + "1" + ")" * DEEP,
    "not": "SELECT " + "NOT " * DEEP + "true",
    "unary minus": "SELECT " + "- " * DEEP + "1",
    "plus chain": "SELECT " + "1 + " * 20000 + "1",
    "scalar subqueries": "SELECT " + "(SELECT " * 1000 + "1" + ")" * 1000,
    "case": "SELECT " + "CASE WHEN true THEN " * 2000 + "1" + " END" * 2000,
}


@pytest.mark.parametrize("name", sorted(STATEMENTS))
def test_deep_nesting_answers_or_says_too_complex(con, name):
    """Sabotage: delete the ``except RecursionError`` branch of ``Coordinator.guard``
    (mzlite/coordinator.py) -> the deep NOT, plus chain and scalar subqueries raise InternalError naming
    RecursionError."""
    try:
        rows = con.execute(STATEMENTS[name]).fetchall()
    except mzlite.InternalError as exc:  # a bug: the limit must be a clear user error
        pytest.fail(f"internal error for {name}: {exc}")
    except mzlite.Error as exc:
        # 42601 "memory exhausted": PostgreSQL's own parser's limit (its bison stack), as psql shows
        assert (exc.sqlstate, "stack depth limit exceeded" in str(exc) or "memory exhausted" in str(exc)) \
            in (("54001", True), ("42601", True)), (exc.sqlstate, str(exc))
    else:
        assert len(rows) == 1
    assert con.execute("SELECT 1").fetchall() == [(1,)]  # the session goes on
