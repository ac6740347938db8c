"""The meaning of ``LetRec``: iterate every recursive binding together to a fixpoint.

Owns ``letrec_steps`` (and ``letrec_value``, the same run to its end) and
``recursion_limit_error``, used by ``expr.interpret`` (so by the maintained
``compute.render.letrec.LetRecOp``) and by the test oracle ``tests.support.reference``, so
the two cannot disagree on the rules.  The rules (see
``expr.relation.LetRec``): every binding starts empty (or at ``start``); each iteration
computes *all* values from the previous iteration's values; the iteration stops at the
first iteration that changes nothing (oks and errors), after ``max_iters`` iterations
without a fixpoint (``RETURN AT``: keep the values; ``ERROR AT``: the result is one error
row), or at the first iteration that produced a data error; then every binding's errors are
added to the result and the body is evaluated.  Invariant: a generator step is one whole
iteration; the yielded number is its work (rows computed), so callers can spread a long
iteration over fuel-bounded calls.
Deliberately not here: how an evaluator evaluates the values (``expr.interpret``).
"""
from __future__ import annotations

from repr.errors import EvalError

__all__ = ["letrec_steps", "letrec_value", "recursion_limit_error"]


def recursion_limit_error(n: int) -> tuple:
    """The ``(sqlstate, message)`` of ``ERROR AT RECURSION LIMIT n`` reached."""
    return ("54000", f"Recursive query exceeded the recursion limit {n}. (Use RETURN AT RECURSION LIMIT "
                     "to not error, but return the current state as the final result when reaching the limit.)")


def letrec_steps(ev, e, env, start=None):
    """A generator running ``e``'s iteration with the evaluator ``ev`` (``ev.eval``,
    ``ev.errs``, ``ev.err``): yields the rows computed by each iteration and returns the
    body's rows; the bindings' final values are left in ``ev.letrec_values``.  ``start``
    (binding id -> rows) replaces the empty starting point (``LetRecOp`` continues a
    monotone iteration from its previous fixpoint)."""
    cur = {i: ({}, {}) for i in e.ids}
    if start is not None:
        cur = {i: (dict(start[i]), {}) for i in e.ids}
    limit = next((lim for lim in e.limits if lim is not None), None)
    done = 0
    while True:
        inner = {**env, **cur}
        new = {}
        work = 1
        for i, v in zip(e.ids, e.values):
            saved, ev.errs = ev.errs, {}
            oks = ev.eval(v, inner)
            new[i] = (oks, {r: c for r, c in ev.errs.items() if c})
            ev.errs = saved
            work += len(oks)
        if new == cur:
            break
        if limit is not None and done >= limit.max_iters:
            if limit.return_at:
                break
            ev.err(EvalError(*recursion_limit_error(limit.max_iters)), 1)
            return {}
        cur = new
        done += 1
        if any(errs for _, errs in cur.values()):
            break  # a data error stops the iteration
        yield work
    # every binding's errors reach the result, whether or not the body reads the binding
    for _oks, errs in cur.values():
        for r, c in errs.items():
            ev.errs[r] = ev.errs.get(r, 0) + c
    out = ev.eval(e.body, {**env, **{i: (oks, {}) for i, (oks, _errs) in cur.items()}})
    ev.letrec_values = cur  # after the body, which may hold a LetRec of its own
    return out


def letrec_value(ev, e, env):
    """``e``'s rows in one call: ``letrec_steps`` run to its end."""
    steps = letrec_steps(ev, e, env)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
