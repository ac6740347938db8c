"""``executemany``'s set-oriented paths give exactly what one ``execute`` per parameter set
gives: the compiled INSERT rows over column-wise typed parameters (``mzlite.bulk``), and the
UPDATE/DELETE template with its disjoint-keys shortcut (``mzlite.bulk_modify``).  Each case runs the same parameter sets both ways and compares
the tables (and the row counts), with the interactive runtime on and off.
"""
from __future__ import annotations

from decimal import Decimal
import random

import pytest

import mzlite

FLAGS = ("true", "false")


def _pair(flag):
    cons = []
    for _ in range(2):
        con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
        con.execute("CREATE TABLE t (id int NOT NULL, k int, amount int, note text)")
        con.execute("CREATE INDEX t_by_id ON t (id)")
        cons.append(con)
    return cons


def _rows(con):
    return sorted(con.execute("SELECT * FROM t").fetchall(), key=repr)


def _literal(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, float):
        return f"{v!r}::float8"
    return str(v)


def _inline(sql: str, params) -> str:
    parts = sql.split("?")
    assert len(parts) == len(params) + 1
    return "".join(p + (_literal(v) if i < len(params) else "") for i, (p, v) in
                   enumerate(zip(parts, list(params) + [None])))


def _both(bulk, single, sql, params):
    """Run ``params`` as one executemany on ``bulk`` and one statement each on ``single``
    (INSERTs as literal SQL in one transaction, so they plan in full); both succeed with the
    same rowcount or both fail with the same SQLSTATE."""
    err_bulk = err_single = None
    n_bulk = n_single = 0
    try:
        n_bulk = bulk.cursor().executemany(sql, params).rowcount
    except mzlite.Error as e:
        err_bulk = e.sqlstate
    cur = single.cursor()
    txn = sql.startswith("INSERT")  # executemany is atomic: compare with one transaction
    try:                             # (Materialize refuses UPDATE/DELETE inside BEGIN)
        if txn:
            cur.execute("BEGIN")
        for p in params:
            # literals: a parameterised single statement would take the bulk path too
            n_single += cur.execute(_inline(sql, p)).rowcount
        if txn:
            cur.execute("COMMIT")
    except mzlite.Error as e:
        err_single = e.sqlstate
        if txn:
            cur.execute("ROLLBACK")
    assert err_bulk == err_single
    if err_bulk is None:
        assert n_bulk == n_single
    return err_bulk


@pytest.mark.parametrize("flag", FLAGS)
def test_bulk_insert_declines_to_the_general_path_for_every_non_identity_value(flag):
    """Sabotage: ``planner.params.column_type`` typing a column of ints int4 without its
    min/max range check -> 2**31 is inserted into an int4 column instead of failing with 22003."""
    bulk, single = _pair(flag)
    good = [(i, i % 5, i * 3, f"n{i}") for i in range(200)]
    assert _both(bulk, single, "INSERT INTO t VALUES (?, ?, ?, ?)", good) is None
    for bad in ([(1000, 1, 2 ** 31, "x")],                 # int4 overflow: 22003
                [(1001, None, 5, None), (None, 1, 1, "y")],  # NOT NULL: 23502
                [(1002, True, 1, "z")],                     # bool for int: 42804
                [(1003, 1, Decimal("2.5"), "d")],           # numeric -> int: rounds (general path)
                [(1004, 1, 7.0, "f")]):                     # float -> int: assignment cast
        _both(bulk, single, "INSERT INTO t VALUES (?, ?, ?, ?)", bad)
        assert _rows(bulk) == _rows(single)
    # column lists and defaults go through the reordering branch
    assert _both(bulk, single, "INSERT INTO t (amount, id) VALUES (?, ?)", [(9, 2000), (8, 2001)]) is None
    assert _rows(bulk) == _rows(single)


@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize("seed", range(6))
def test_bulk_update_and_delete_equal_one_statement_per_set(flag, seed):
    """Random parameter sets: distinct keys (the disjoint shortcut), repeated keys and key
    moves (the ordered path).  Sabotage: the disjoint shortcut emitting only the new rows
    (dropping the ``(row, -c)`` retraction) -> the tables differ; ``_direct_builder``
    copying the old value instead of the parameter -> the tables differ (the one-statement
    side runs literal SQL, so it never takes the bulk path itself)."""
    rnd = random.Random(seed)
    bulk, single = _pair(flag)
    rows = [(i, rnd.randrange(4), rnd.randrange(100), None if i % 3 else "x") for i in range(60)]
    rows += [(i, 9, 1, "dup") for i in range(5)]  # ids with two rows each
    _both(bulk, single, "INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    for _ in range(8):
        kind = rnd.choice(["amount", "amount_dup", "move", "delete", "delete_dup", "filtered"])
        ids = rnd.sample(range(70), 15)
        if kind == "amount":
            sql, params = "UPDATE t SET amount = ? WHERE id = ?", [(rnd.randrange(100), i) for i in ids]
        elif kind == "amount_dup":
            sql, params = "UPDATE t SET amount = amount + ? WHERE id = ?", [(1, i) for i in ids + ids[:5]]
        elif kind == "move":
            sql, params = "UPDATE t SET id = ? WHERE id = ?", [(i + 1, i) for i in ids]
        elif kind == "delete":
            sql, params = "DELETE FROM t WHERE id = ?", [(i,) for i in ids]
        elif kind == "delete_dup":
            sql, params = "DELETE FROM t WHERE id = ?", [(i,) for i in ids + ids[:3]]
        else:
            sql, params = "UPDATE t SET note = ? WHERE id = ? AND amount > ?", [("u", i, 50) for i in ids]
        assert _both(bulk, single, sql, params) is None, kind
        assert _rows(bulk) == _rows(single), kind


@pytest.mark.parametrize("flag", FLAGS)
def test_rows_sharing_a_key_updated_into_one_row_count_twice(flag):
    """The row-by-row shortcut (``_apply_row_by_row``) declines when a key holds several
    rows: an UPDATE can make them equal, and the two new rows must be summed into one row
    counted twice.  A set that leaves its row unchanged still counts as matched, and changes
    nothing.  ``plan_bulk_modify`` promises consolidated updates (each row once, no zero
    diff), which the write then relies on.  Sabotage: the shortcut without its
    one-row-per-key check -> the equal new row is listed twice; its ``new != row`` test
    always true -> the unchanged row is listed with +1 and -1."""
    from mzlite.bulk_modify import plan_bulk_modify
    from sql.parse import parse_statements
    bulk, single = _pair(flag)
    rows = [(1, 5, 10, "same"), (1, 5, 20, "same"), (2, 6, 30, "x"), (3, 7, 40, "y")]
    _both(bulk, single, "INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    for sets in ([(7, 1), (30, 2), (41, 3)], [(30, 2), (41, 3)]):
        stmt = parse_statements("UPDATE t SET amount = ? WHERE id = ?")[0]
        _plan, updates, matched = plan_bulk_modify(bulk.database, stmt, sets)
        assert len({r for r, _d in updates}) == len(updates) and all(d for _r, d in updates)
        assert matched == len(sets) + (sets[0][1] == 1)
        assert ((2, 6, 30, "x"), 1) not in updates and ((2, 6, 30, "x"), -1) not in updates
    assert _both(bulk, single, "UPDATE t SET amount = ? WHERE id = ?", [(7, 1), (30, 2), (41, 3)]) is None
    assert _rows(bulk) == _rows(single)
    assert bulk.execute("SELECT count(*) FROM t WHERE id = 1 AND amount = 7").fetchall() == [(2,)]
    assert _both(bulk, single, "DELETE FROM t WHERE id = ?", [(1,), (3,)]) is None
    assert _rows(bulk) == _rows(single) == [(2, 6, 30, "x")]
