"""LetRec in a maintained dataflow: recursive bindings re-derived to a fixpoint per changed time.

Owns ``LetRecOp`` (the operator the render builds for a ``expr.relation.LetRec``) and
``is_monotone``; a re-derivation is ``expr.interpret``'s evaluation, iterated by
``expr.iterate``.  The
operator's input ports are the collections the LetRec reads from outside itself (tables,
indexes, outer ``Let`` bindings: ``free_ids``); it keeps their current contents
consolidated, and at the end of every time in which some input changed (``flush``) it
re-derives the LetRec -- every binding iterated to its fixpoint, then the body -- and
emits the difference between the new result and its previous output, oks and data errors
alike.

Cost, honestly: the work of one changed time is proportional to the recursive computation
(iterations x size of the bindings), *not* to the change.  Joins are hash joins and
the plan's nodes are prepared (scalars compiled) once per operator.  One shortcut: when every binding is monotone
(``is_monotone``: no negation, threshold, top-k, aggregate, limit or ``mz_now()``) and the
time brought inserts only, the iteration continues from the previous error-free fixpoint
instead of from empty (the same least fixpoint, in far fewer iterations: one new edge at
the end of a long chain costs a couple of iterations, not one per step of the chain), but
each iteration still evaluates the bindings whole.  Any retraction, or an error met while
continuing, re-derives from empty.

A re-derivation is spread over ``flush`` calls of about ``budget`` rows of work each
(whole iterations; ``flush_pending`` says more is to come, and the render charges
``last_flush_work`` to its fuel), so a recursion that never converges holds its own
dataflow's frontier forever but never blocks the runtime: other dataflows, reads and DROP
go on.

Invariants: the emitted updates always sum to exactly the LetRec's value over the current
inputs (for any mix of inserts and retractions, and for non-monotone queries); the
iteration rules are ``expr.iterate``'s, shared with the test oracle (recursion limits; a
data error stops the iteration and becomes an error row, never an exception).
Deliberately not here: semi-naive / differential (delta) evaluation of an iteration,
temporal filters inside recursive bindings (``mz_now()`` reads the time of the
re-derivation), and a bound on iterations when the query gives no RECURSION LIMIT (like
PostgreSQL, a query that never reaches a fixpoint never finishes).  A LetRec nested inside
another LetRec's bindings is iterated inside one step of the outer one.
"""
from __future__ import annotations

from typing import Optional

from compute.render.operator import EMPTY, Operator
from expr.interpret import Interpreter
from expr.iterate import letrec_steps
from expr.relation import (ArrangeBy, Constant, Filter, FlatMap, Get, Join, Let, LetRec, Map, Project, Reduce,
                           Union, children, node_scalars)
from expr.scalar import contains_mz_now
from repr.errors import EvalError
from repr.ids import GlobalId

__all__ = ["LetRecOp", "free_ids", "is_monotone"]


def free_ids(expr) -> list:
    """The ids ``expr`` reads but does not bind (GlobalIds and outer LocalIds), in first-use
    order: the LetRec operator's input ports."""
    out: list = []
    seen: set = set()

    def visit(e, bound: frozenset):
        if isinstance(e, Get):
            if (isinstance(e.id, GlobalId) or e.id not in bound) and e.id not in seen:
                seen.add(e.id)
                out.append((e.id, e.column_count))
            return
        if isinstance(e, Let):
            visit(e.value, bound)
            visit(e.body, bound | {e.id})
            return
        if isinstance(e, LetRec):
            inner = bound | set(e.ids)
            for v in e.values:
                visit(v, inner)
            visit(e.body, inner)
            return
        for k in children(e):
            visit(k, bound)

    visit(expr, frozenset())
    return out


_MONOTONE = (Get, Map, Filter, Project, Join, Union, FlatMap, ArrangeBy)


def is_monotone(expr: LetRec) -> bool:
    """Every binding's value only grows when its inputs and the bindings grow (no negation,
    threshold, top-k, aggregate, nested let, erroring constant or ``mz_now()``), and there
    is no recursion limit: then, after inserts only, iterating on from the previous fixpoint
    reaches the same least fixpoint as iterating from empty."""
    if any(lim is not None for lim in expr.limits):
        return False

    def ok(e) -> bool:
        if isinstance(e, Constant):
            return e.error is None and all(c > 0 for _, c in e.rows)
        if isinstance(e, Reduce):
            if e.aggregates:
                return False
        elif not isinstance(e, _MONOTONE):
            return False
        if any(contains_mz_now(x) for x in node_scalars(e)):
            return False
        return all(ok(k) for k in children(e))

    return all(ok(v) for v in expr.values)


class LetRecOp(Operator):
    """Input ports: ``inputs`` (``[(id, arity)]`` from ``free_ids``), in order.  Non-linear:
    ``push`` only accumulates; ``flush`` re-derives and emits the change (oks and errors)."""

    needs_flush = True

    def __init__(self, expr: LetRec, inputs):
        self.expr = expr
        self.ids = [i for i, _ in inputs]
        self.n_inputs = len(self.ids)
        self.state: list[dict] = [{} for _ in self.ids]
        self.changed = True  # the first flush (hydration) always derives
        self.out: dict = {}
        self.out_errs: dict = {}
        #: the plan's prepared nodes, shared by every derivation's ``Interpreter``
        self.prepared: dict = {}
        #: how many re-derivations started (tests and introspection)
        self.derivations = 0
        #: the derivation in progress (``letrec_steps`` generator) and its evaluator
        self.steps = None
        self.ev = None
        #: rows of work the last ``flush`` call did (the render charges it to its fuel)
        self.last_flush_work = 0
        #: monotone bindings: after inserts only, iterate on from the previous fixpoint
        self.monotone = is_monotone(expr)
        self.fixpoint: Optional[dict] = None  #: the bindings at the last error-free fixpoint
        self.retracted = False
        self.continued = False  #: whether the last derivation continued from ``fixpoint``
        self.iterations = 0     #: iterations run so far (tests and introspection)

    def push(self, port: int, chunk: list, time: int):
        acc = self.state[port]
        get = acc.get
        for row, d in chunk:
            if d < 0:
                self.retracted = True
            n = get(row, 0) + d
            if n:
                acc[row] = n
            else:
                del acc[row]
        if chunk:
            self.changed = True
        return EMPTY, EMPTY

    def flush_pending(self) -> bool:
        return self.steps is not None

    def flush(self, time: int, budget: Optional[int] = None):
        """Advance the re-derivation by about ``budget`` rows of work (iterations are not
        split); emit the change once the fixpoint and the body are computed."""
        self.last_flush_work = 0
        if self.changed:
            self.changed = False
            self.derivations += 1
            start = self.fixpoint if (self.monotone and not self.retracted) else None
            self.continued = start is not None
            self.retracted = False
            self.fixpoint = None
            self.ev = Interpreter(dict(zip(self.ids, self.state)), time, self.prepared)
            self.steps = letrec_steps(self.ev, self.expr, {}, start)
        if self.steps is None:
            return EMPTY, EMPTY
        ev = self.ev
        while True:
            try:
                self.last_flush_work += next(self.steps)
                self.iterations += 1
            except StopIteration as stop:
                oks = stop.value
                break
            except EvalError as ex:  # defensive: evaluators record errors, never raise past here
                ev.err(ex, 1)
                oks = {}
                break
            if budget is not None and self.last_flush_work >= budget:
                return EMPTY, EMPTY  # more to do: flush_pending() stays true
        errs = {r: c for r, c in ev.errs.items() if c}
        if errs and self.continued:
            # where an error stops the iteration depends on the path taken: redo it from empty
            self.continued = False
            self.ev = Interpreter(dict(zip(self.ids, self.state)), time, self.prepared)
            self.steps = letrec_steps(self.ev, self.expr, {})
            return EMPTY, EMPTY  # flush_pending() is true: the render calls again
        self.steps = self.ev = None
        values = ev.letrec_values
        if self.monotone and not errs and values is not None:
            self.fixpoint = {i: oks for i, (oks, _e) in values.items()}
        return _diff(self.out, oks), _diff(self.out_errs, errs)

    def current(self) -> dict:
        return dict(self.out)


def _diff(old: dict, new: dict) -> list:
    """The updates taking ``old`` to ``new``; ``old`` is replaced by ``new`` in place."""
    out = []
    for r, c in new.items():
        d = c - old.get(r, 0)
        if d:
            out.append((r, d))
    for r, c in old.items():
        if r not in new:
            out.append((r, -c))
    old.clear()
    old.update(new)
    return out
