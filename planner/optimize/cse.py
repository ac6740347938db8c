"""extract_common_subexpressions: compute a repeated subplan once and share it through Let.

Owns relational CSE.  A subtree that occurs two or more times (structurally equal), is
not a bare ``Get`` or ``Constant``, has at least ``MIN_NODES`` nodes and reads no
``LocalId`` (so hoisting it cannot move a use out of its binding's scope) is bound once
by a ``Let`` wrapped around the whole plan, and every occurrence becomes a ``Get`` of
it; the largest repeated subtree goes first.  Decorrelation produces such repeats (the
outer relation's distinct keys feed several branches).  Invariant: non-recursive Let
semantics make the result equal to the input; new LocalIds come from the process-wide
counter (``planner.recursive.next_local_id``), so they never collide with the plan's own nor
with those of a view inlined into another plan later.  Deliberately not here: deciding whether sharing is cheaper than
recomputing (it always is for the renderer: one operator, one arrangement).
"""
from __future__ import annotations

from expr.relation import Constant, Get, Let, LocalId, children
from planner.optimize.util import count_nodes, with_children

MIN_NODES = 3
MAX_EXTRACTIONS = 16


def _reads_local(e) -> bool:
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Get) and isinstance(x.id, LocalId):
            return True
        stack.extend(children(x))
    return False


def _intern_all(expr):
    """Hash-cons the plan: structurally equal subtrees get the same integer, computed
    bottom-up once (hashing frozen dataclasses recursively at every node is quadratic).
    Returns ``(counts by integer, a representative node per integer, node count per integer,
    integers of subtrees that read a LocalId)``."""
    table: dict = {}
    counts: dict = {}
    rep: dict = {}
    size: dict = {}
    local: set = set()
    memo: dict = {}

    def visit(e):
        m = memo.get(id(e))
        if m is not None:  # the same object again (shared by reference): count it again
            if not isinstance(e, (Get, Constant)):
                counts[m] += 1
            return m
        kids = tuple(visit(k) for k in children(e))
        fields = tuple(getattr(e, f) for f in e.__dataclass_fields__
                       if f not in ("input", "inputs", "value", "values", "body"))
        key = (type(e).__name__, fields, kids)
        n = table.get(key)
        if n is None:
            n = table[key] = len(table)
            rep[n] = e
            size[n] = 1 + sum(size[k] for k in kids)
            if (isinstance(e, Get) and isinstance(e.id, LocalId)) or any(k in local for k in kids):
                local.add(n)
        if not isinstance(e, (Get, Constant)):
            counts[n] = counts.get(n, 0) + 1
        memo[id(e)] = n
        return n

    visit(expr)
    return counts, rep, size, local, memo


def extract_common_subexpressions(expr):
    if count_nodes(expr) < 2 * MIN_NODES:
        return expr
    from planner.recursive import next_local_id
    for _ in range(MAX_EXTRACTIONS):
        counts, rep, size, local, memo = _intern_all(expr)
        cands = [n for n, c in counts.items() if c >= 2 and n not in local and size[n] >= MIN_NODES]
        if not cands:
            break
        best_n = max(cands, key=lambda n: size[n])
        best = rep[best_n]
        lid = next_local_id()
        get = Get(lid, best.arity())

        def replace(e):
            if memo.get(id(e)) == best_n:
                return get
            kids = children(e)
            new = [replace(k) for k in kids]
            if all(a is b for a, b in zip(new, kids)):
                return e
            return with_children(e, new)
        expr = Let(lid, best, replace(expr))
    return expr
