"""Random plans and data for property tests of optimizer rules (and anyone's renderer).

Owns a deterministic generator (``random.Random(seed)``) of well-formed RelationExprs
over a few tables, using only the scalar functions ``eq lt add and or not is_null`` (all in
``tests.support.reference``'s fallback; ``add_func="add_int4"`` makes them all real
``expr.functions`` ids too), and of small random table contents with NULLs and
duplicate rows.  Invariant: every generated plan is well formed (column references in
range, Union inputs of equal arity) and cheap to evaluate with the reference evaluator.
Deliberately not here: any notion of SQL; plans are built directly.
"""
from __future__ import annotations

import random

from expr.relation import (AggregateExpr, ColumnOrder, Constant, Filter, FlatMap, Get, Join, Let, LocalId,
                           Map, Negate, Project, Reduce, Threshold, TopK, Union)
from expr.scalar import Call, Column, Literal
from repr.ids import user

TABLES = {user(1): 2, user(2): 3, user(3): 1}
VALUES = (None, 0, 1, 2, 3)


def random_data(rng: random.Random, tables=TABLES) -> dict:
    out = {}
    for gid, arity in tables.items():
        rows: dict = {}
        for _ in range(rng.randint(0, 6)):
            r = tuple(rng.choice(VALUES) for _ in range(arity))
            rows[r] = rows.get(r, 0) + rng.randint(1, 2)
        out[gid] = rows
    return out


class PlanGen:
    def __init__(self, rng: random.Random, tables=TABLES, add_func: str = "add", windows: bool = False):
        self.rng = rng
        self.tables = tables
        self.windows = windows  #: opt-in window stages (tests/test_windows.py); off keeps old seeds' plans
        self.next_local = 1
        #: "add" for the reference fallback, "add_int4" for ``expr.functions``
        self.add_func = add_func

    def scalar(self, n: int, depth: int = 2):
        r = self.rng
        choice = r.randint(0, 5 if depth > 0 else 1)
        if n and choice in (0, 2, 3):
            return Column(r.randrange(n))
        if choice <= 1 or not n and choice < 4:
            return Literal(r.choice(VALUES), "int4")
        return Call(self.add_func, (self.scalar(n, depth - 1), self.scalar(n, depth - 1)), "int4")

    def predicate(self, n: int, depth: int = 2):
        r = self.rng
        c = r.randint(0, 8 if depth > 0 else 3)
        if c <= 1:
            return Call("eq", (self.scalar(n, 1), self.scalar(n, 1)), "bool")
        if c == 2:
            return Call("lt", (self.scalar(n, 1), self.scalar(n, 1)), "bool")
        if c == 3:
            return Call("is_null", (self.scalar(n, 0),), "bool")
        if c == 4:
            return Literal(r.choice((True, False, None)), "bool")
        if c == 5:
            return Call("not", (self.predicate(n, depth - 1),), "bool")
        if c == 6:
            return Call("and", (self.predicate(n, depth - 1), self.predicate(n, depth - 1)), "bool")
        if c == 7:
            return Call("or", (self.predicate(n, depth - 1), self.predicate(n, depth - 1)), "bool")
        # equality across columns, which the join rules like
        if n >= 2:
            a, b = r.sample(range(n), 2)
            return Call("eq", (Column(a), Column(b)), "bool")
        return Call("eq", (Column(0), Literal(1, "int4")), "bool") if n else Literal(True, "bool")

    def plan(self, depth: int = 3):
        r = self.rng
        if depth <= 0:
            if r.random() < 0.85:
                gid = r.choice(sorted(self.tables))
                return Get(gid, self.tables[gid])
            n = r.randint(1, 2)
            rows = tuple((tuple(r.choice(VALUES) for _ in range(n)), r.randint(1, 2))
                         for _ in range(r.randint(0, 3)))
            return Constant(rows, n)
        kind = r.choice(["map", "filter", "filter", "project", "join", "join", "reduce",
                         "topk", "union", "negate", "let", "flatmap", "distinct", "twice"])
        x = self.plan(depth - 1)
        n = x.arity()
        if kind == "map":
            return Map(x, tuple(self.scalar(n + i) for i in range(r.randint(1, 2))))
        if kind == "filter":
            return Filter(x, tuple(self.predicate(n) for _ in range(r.randint(1, 2))))
        if kind == "project":
            return Project(x, tuple(r.randrange(n) for _ in range(r.randint(1, 3)))) if n else x
        if kind == "join":
            y = self.plan(depth - 1)
            m = n + y.arity()
            eqs = ()
            if n and y.arity() and r.random() < 0.6:
                eqs = ((Column(r.randrange(n)), Column(n + r.randrange(y.arity()))),)
            j = Join((x, y), eqs)
            return Filter(j, (self.predicate(m),)) if r.random() < 0.5 else j
        if kind == "reduce" and self.windows and n and r.random() < 0.6:  # window functions
            return self.window(x, n)
        if kind in ("reduce", "distinct"):
            key = tuple(Column(c) for c in sorted(set(r.randrange(n) for _ in range(r.randint(0, 2))))) if n else ()
            aggs = ()
            if kind == "reduce":
                aggs = tuple(AggregateExpr(r.choice(["count", "sum", "min", "max"]),
                                           self.scalar(n, 0) if n else Literal(True, "bool"),
                                           r.random() < 0.3, "int4", "int8")
                             for _ in range(r.randint(1, 2)))
            if kind == "distinct" and r.random() < 0.5:
                key = tuple(Column(i) for i in range(n))  # DISTINCT over every column
            if not key and not aggs:
                key = (Literal(1, "int4"),)
            inner = x if isinstance(x, Reduce) else Threshold(x)  # a Reduce is never negative
            return Reduce(inner, key, aggs, global_default=not key and r.random() < 0.7)
        if kind == "topk":
            if not n:
                return x
            return TopK(Threshold(x), tuple(sorted(set(r.randrange(n) for _ in range(r.randint(0, 1))))),
                        tuple(ColumnOrder(r.randrange(n), r.random() < 0.5, r.random() < 0.5)
                              for _ in range(r.randint(0, 2))),
                        r.choice([None, 0, 1, 2]), r.choice([0, 0, 1]))
        if kind == "union":
            y = self.plan(depth - 1)
            k = min(n, y.arity())
            xs = Project(x, tuple(range(k))) if n != k else x
            ys = Project(y, tuple(range(k))) if y.arity() != k else y
            return Union((xs, ys))
        if kind == "negate":
            # may go negative: only Threshold (always under Reduce/TopK here) clips it
            return Union((Filter(x, (self.predicate(n),)), Negate(Filter(x, (self.predicate(n),)))))
        if kind == "let":
            lid = LocalId(self.next_local)
            self.next_local += 1
            g = Get(lid, n)
            p = self.predicate(n)  # a predicate every use applies (pushed into the value)
            body = r.choice([Union((g, g)), Filter(g, (self.predicate(n),)), Join((g, g), ()),
                             Union((Filter(g, (p, self.predicate(n))), Filter(g, (p,))))])
            return Let(lid, x, body)
        if kind == "twice":  # the same subplan twice (what decorrelation produces)
            return Union((x, Negate(Filter(x, (self.predicate(n),))), x))
        if kind == "flatmap":
            return FlatMap(x, "generate_series", (Literal(1, "int4"), self.scalar(n, 0) if n else Literal(2, "int4")), 1)
        return x


    # ---- window functions: a window stage as planner.windows builds it
    def window(self, x, n: int):
        from expr.window import WindowFrame, WindowFunc
        from planner.windows import window_stage
        r = self.rng
        x = Threshold(x)  # a Reduce input is never negative
        pkey = tuple(sorted(set(r.randrange(n) for _ in range(r.randint(0, 2)))))
        order = tuple(ColumnOrder(r.randrange(n), r.random() < 0.5, r.random() < 0.5) for _ in range(r.randint(0, 2)))
        frame = r.choice([WindowFrame(), WindowFrame("rows", "preceding", 1, "following", 1),
                          WindowFrame("groups", "current", 0, "following", 1)])
        funcs = [WindowFunc(r.choice(["row_number", "rank", "dense_rank"]), (), order, frame, "int8"),
                 WindowFunc(r.choice(["first_value", "last_value"]), (r.randrange(n),), order, frame, "int4"),
                 WindowFunc("aggregate", (r.randrange(n),), order, frame, "int8",
                            AggregateExpr(r.choice(["count", "min", "max"]), Column(0), False, "int4", "int8"))]
        return window_stage(x, n, pkey, r.sample(funcs, r.randint(1, 3)))
    # ---- end window functions


def random_plan(seed: int, depth: int = 3, add_func: str = "add", windows: bool = False):
    return PlanGen(random.Random(seed), add_func=add_func, windows=windows).plan(depth)
