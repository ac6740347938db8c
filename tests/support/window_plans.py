"""Window plans for tests: a four-column table, its random rows, and the window stage
(Reduce, ``unnest_window``, Project) over it, as ``planner.windows`` builds one.

Owns ``window_plan`` and the shorthands the window tests share (``wf``, ``agg``, the orders
``ASC``/``DESC_NF`` and frames ``DEFAULT``/``WHOLE``).  Deliberately not here: the tests
(``tests/test_operators_window.py``, ``tests/test_window_exclude.py``).
"""
from __future__ import annotations

from expr.relation import AggregateExpr, ColumnOrder, FlatMap, Get, Map, Project, Reduce
from expr.scalar import Call, Column
from expr.window import WindowAggregateExpr, WindowFrame, WindowFunc
from repr.ids import user
from tests.support.operator_harness import small_int

A = user(1)
ARITY = 4  # partition, order value, value, small positive int (offsets, ntile)


def gen_row(rng):
    return (small_int(rng, 0, 2, 0.0), small_int(rng, 0, 4, 0.2), small_int(rng, -5, 9, 0.15),
            rng.choice([1, 2, 3, None]) if rng.random() < 0.9 else 0)


def window_plan(funcs, partition=(Column(0),)):
    """Column 4 of the Reduce input is ``record(column 2)`` (array_agg's input form)."""
    n = ARITY + 1
    inp = Map(Get(A, ARITY), (Call("record", (Column(2),), "record"),))
    rec = Call("record", tuple(Column(i) for i in range(n)), "record")
    agg = WindowAggregateExpr("window", rec, False, "record", "list", funcs=tuple(funcs))
    k = len(partition)
    red = Reduce(inp, tuple(partition), (agg,))
    flat = FlatMap(red, "unnest_window", (Column(k),), n + len(funcs))
    return Project(flat, tuple(range(k + 1, k + 1 + n + len(funcs))))


ASC = (ColumnOrder(1),)
DESC_NF = (ColumnOrder(1, desc=True, nulls_last=False),)
DEFAULT = WindowFrame()
WHOLE = WindowFrame("rows", "unbounded", 0, "unbounded", 0)


def wf(name, args=(), order=ASC, frame=DEFAULT, out="int8", agg=None):
    return WindowFunc(name, tuple(args), tuple(order), frame, out, agg)


def agg(func, it="int4", ot="int8"):
    return AggregateExpr(func, Column(0), False, it, ot)
