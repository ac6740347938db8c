"""Many-way joins: delta paths ordered by their equality predicates, planned incrementally.

``compute.render.join_order.plan_path`` extends each input's path greedily by the input with the most
equivalence classes connecting it to the prefix, keeping per class the lowest expression
whose inputs are all in the prefix and per input its count of connected classes.
Sabotage runs (each made once, saw red, restored):
- the score without the connection count (``(imp is not None, 0, -j)``): chain joins in a
  shuffled FROM order take cross products (``test_chain_join_has_no_cross_product`` red);
- ``pre_first`` not lowered when a lower expression of a connected class joins the prefix
  (the ``elif k < pf`` branch removed): paths differ from the direct planner
  (``test_incremental_planning_matches_direct_planning`` red);
- the connection counts not raised when a class becomes connected: the chain is walked in
  input order with cross products (``test_chain_join_has_no_cross_product`` red).
"""
from __future__ import annotations

import random

import pytest

from compute.render.join import JoinOp, _support
from expr.scalar import Call, Column, Literal, permute

N = 20
ARITY = 3   # (a, b, x) like SQLite's select5 tables


def chain(n, perm):
    """Input ``perm[k]`` holds table ``k``; table k's b equals table k+1's a."""
    where = {t: i for i, t in enumerate(perm)}
    classes = []
    for t in range(n - 1):
        left, right = where[t], where[t + 1]
        classes.append((Column(left * ARITY + 1), Column(right * ARITY)))
    # a constant pinned on one table (``a29 = 6``): connects that table to any prefix
    classes.append((Column(where[n // 2] * ARITY), Literal(6, "int4")))
    return classes


@pytest.mark.parametrize("seed", range(5))
def test_chain_join_has_no_cross_product(seed):
    """Every lookup of every delta path has a key (no step is a cross product), and the
    arrangements stay linear in the inputs: at most two keys per input for a chain."""
    rng = random.Random(seed)
    perm = list(range(N))
    rng.shuffle(perm)
    op = JoinOp([ARITY] * N, chain(N, perm))
    assert len(op.paths) == N
    for i, (steps, _residual, _final) in enumerate(op.paths):
        assert len(steps) == N - 1
        for step in steps:
            assert step[2].key_exprs, f"path {i} has a cross product step"
    assert len(op._arrangements) <= 2 * N


def _direct_plan(op, i, classes, supports):
    """The path order and lookup keys computed from scratch at every step (the planner's
    definition, without its incremental state)."""
    n = op.n_inputs
    prefix, order, keys = {i}, [i], []
    while len(order) < n:
        best = None
        for j in range(n):
            if j in prefix:
                continue
            conn = []
            for ci, sup in enumerate(supports):
                local = [k for k, s in enumerate(sup) if s == frozenset((j,))]
                pre = [k for k, s in enumerate(sup) if s <= prefix]
                if local and pre:
                    conn.append((ci, local[0], pre[0]))
            score = (len(conn), -j)
            if best is None or score > best[0]:
                best = (score, j, conn)
        _, j, conn = best
        keys.append((j, tuple(permute(classes[ci][k], op._to_local(j)) for ci, k, _p in conn),
                     [(ci, p) for ci, _k, p in conn]))
        prefix.add(j)
        order.append(j)
    return order, keys


@pytest.mark.parametrize("seed", range(30))
def test_incremental_planning_matches_direct_planning(seed):
    """Random join graphs with classes of several members, some spanning two inputs
    (``a_i + b_j``) or none (constants): the incremental planner picks the same order, keys
    and prefix expressions as planning each step from scratch."""
    rng = random.Random(seed)
    n = rng.randint(2, 9)
    arities = [rng.randint(1, 3) for _ in range(n)]
    offsets = [sum(arities[:i]) for i in range(n)]
    width = sum(arities)

    def col():
        return Column(rng.randrange(width))

    classes = []
    for _ in range(rng.randint(0, 6)):
        members = []
        for _ in range(rng.randint(2, 4)):
            r = rng.random()
            if r < 0.7:
                members.append(col())
            elif r < 0.85:
                members.append(Call("add_int4", (col(), col()), "int4"))
            else:
                members.append(Literal(rng.randint(0, 3), "int4"))
        classes.append(tuple(dict.fromkeys(members)))
    op = JoinOp(arities, classes)
    supports = [[_support(e, offsets, arities) for e in c] for c in classes]
    for i in range(n):
        plan = op._plan_path(i, [tuple(c) for c in classes], supports, {})
        order, keys = _direct_plan(op, i, classes, supports)
        assert plan["order"] == order
        assert [(j, k) for j, k, _imp in plan["steps"]] == [(j, k) for j, k, _sp in keys]
        assert plan["step_prefix"] == [sp for _j, _k, sp in keys]


def test_chain_join_answers(connect):
    """A 20-way chain join over ten-row tables, FROM in a shuffled order, answers like the
    chain followed by hand."""
    con = connect()
    rng = random.Random(7)
    b = {}
    for t in range(N):
        con.execute(f"CREATE TABLE t{t} (a{t} int, b{t} int, x{t} text)")
        perm = list(range(1, 11))
        rng.shuffle(perm)
        b[t] = dict(zip(range(1, 11), perm))
        con.execute(f"INSERT INTO t{t} VALUES " +
                    ", ".join(f"({a}, {bb}, 'row {t}.{a}')" for a, bb in b[t].items()))
    order = list(range(N))
    rng.shuffle(order)
    conds = [f"b{t} = a{t + 1}" for t in range(N - 1)] + ["a0 = 3"]
    rng.shuffle(conds)
    sql = (f"SELECT x0, x{N - 1} FROM " + ", ".join(f"t{t}" for t in order)
           + " WHERE " + " AND ".join(conds))
    a = 3
    for t in range(N - 1):
        a = b[t][a]
    assert con.execute(sql).fetchall() == [("row 0.3", f"row {N - 1}.{a}")]


def test_predicates_sink_into_a_flat_join(monkeypatch):
    """A FROM list binds as nested binary Joins; the optimizer flattens them before pushing
    predicates down, so a 40-way join's predicates are sunk through one multiway Join per
    round rather than through 40 nested levels (O(n^2) work: select5's 64-way joins spent
    most of their planning there).  Sabotage: ``fuse_map_filter_project`` removed from before
    ``push_down_predicates`` in ``RULES`` -> 40+ ``_sink_join`` calls (seen red)."""
    from planner import plan_statement
    from planner.catalog import Catalog, CatalogItem, ColumnDef
    from planner.optimize import MAX_ROUNDS, optimize
    from planner.optimize import predicates
    from repr.ids import user
    from sql.parse import parse_statements
    n = 40
    cat = Catalog()
    for t in range(n):
        cat.add(CatalogItem(user(t + 1), f"t{t}", "table",
                            (ColumnDef(f"a{t}", "int4"), ColumnDef(f"b{t}", "int4"))))
    sql = ("SELECT a0 FROM " + ", ".join(f"t{t}" for t in range(n)) + " WHERE "
           + " AND ".join(f"b{t} = a{t + 1}" for t in range(n - 1)))
    (s,) = parse_statements(sql)
    expr = plan_statement(s, cat, ()).expr
    calls = []
    real = predicates._sink_join

    def counting(join, preds):
        calls.append(len(join.inputs))
        return real(join, preds)
    monkeypatch.setattr(predicates, "_sink_join", counting)
    optimize(expr)
    assert len(calls) <= MAX_ROUNDS and all(k == n for k in calls), calls
