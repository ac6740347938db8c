"""Peek planning: how a SELECT is answered, a constant, a fast-path read of an existing
index, or a peek dataflow.

Owns ``plan_peek`` and the three plan values.  The fast path (DESIGN.md, "Planning")
applies when the optimized plan is a Constant, or a chain of Map/Filter/Project over a
``Get`` of a collection that has an index: the chain becomes one ``MapFilterProject``
over the indexed rows, and when the predicates pin every key expression of an index to
non-NULL literals (``k = lit`` or an OR-list of them, i.e. ``IN``) the read becomes a key
lookup (``literal_constraints``) and those predicates leave the MFP.  Invariant: the
fast path returns exactly the rows the plan would.  A Map that sat above a Filter in the
plan needs no guard: an MFP runs each predicate as soon as its support is available and
computes an expression only when needed (``expr.mfp``'s evaluation order, which
``expr.compile`` implements), so a row the plan filters out never reaches the Map's
expressions.  Deliberately not here: choosing timestamps,
holding reads, or sending the Peek (the coordinator does that).
"""
from __future__ import annotations

from dataclasses import dataclass
import itertools
from typing import Mapping, Optional, Sequence

from expr.finishing import RowSetFinishing
from expr.mfp import MapFilterProject
from expr.relation import Constant, Filter, Get, Map, Project, RelationExpr
from expr.scalar import Literal, ScalarExpr, columns_referenced, permute
from planner.optimize import optimize
from planner.optimize.names import is_and, is_eq, is_or
from repr.ids import GlobalId


@dataclass(frozen=True)
class AvailableIndex:
    """An index that exists (and can be read at the peek's time): ``id`` on ``on_id`` by ``key``."""
    id: GlobalId
    key: tuple[ScalarExpr, ...]
    arity: int
    on_id: Optional[GlobalId] = None


@dataclass(frozen=True)
class ConstantPeek:
    """The answer is known at plan time: ``rows`` (``(row, count)``), or ``error``."""
    rows: tuple[tuple[tuple, int], ...]
    finishing: RowSetFinishing
    error: Optional[tuple[str, str]] = None


@dataclass(frozen=True)
class FastPathPeek:
    """Read index ``index_id`` (on ``on_id``) directly: look up ``literal_constraints`` (or
    scan everything when ``None``), apply ``mfp`` to each row, then ``finishing``."""
    index_id: GlobalId
    on_id: GlobalId
    key: tuple[ScalarExpr, ...]
    literal_constraints: Optional[tuple[tuple, ...]]
    mfp: MapFilterProject
    finishing: RowSetFinishing


@dataclass(frozen=True)
class SlowPathPeek:
    """Build a transient peek dataflow for the optimized ``expr``, peek it, drop it."""
    expr: RelationExpr
    finishing: RowSetFinishing


PeekPlan = ConstantPeek | FastPathPeek | SlowPathPeek


def normalize_indexes(indexes) -> dict[GlobalId, list[AvailableIndex]]:
    """Accept ``{on_id: [AvailableIndex | (id, key, arity)]}``; fill in ``on_id``."""
    out: dict = {}
    for on_id, lst in (indexes or {}).items():
        norm = []
        for ix in lst:
            if not isinstance(ix, AvailableIndex):
                ix = AvailableIndex(ix[0], tuple(ix[1]), ix[2])
            if ix.on_id is None:
                ix = AvailableIndex(ix.id, ix.key, ix.arity, on_id)
            norm.append(ix)
        out[on_id] = sorted(norm, key=lambda i: i.id)
    return out


def mfp_over_get(expr) -> Optional[tuple[Get, MapFilterProject]]:
    """If ``expr`` is a chain of Map/Filter/Project over a ``Get``, that Get and the chain
    as one MFP."""
    chain = []
    e = expr
    while isinstance(e, (Map, Filter, Project)):
        chain.append(e)
        e = e.input
    if not isinstance(e, Get):
        return None
    n = e.arity()
    exprs: list = []
    preds: list = []
    proj = list(range(n))
    for node in reversed(chain):
        if isinstance(node, Map):
            for s in node.scalars:
                exprs.append(permute(s, {c: proj[c] for c in columns_referenced(s)}))
                proj.append(n + len(exprs) - 1)
        elif isinstance(node, Filter):
            for p in node.predicates:
                preds.append(permute(p, {c: proj[c] for c in columns_referenced(p)}))
        else:
            proj = [proj[o] for o in node.outputs]
    return e, MapFilterProject(n, tuple(exprs), tuple(preds), tuple(proj))


def _literal_set(pred, key_expr) -> Optional[list]:
    """The non-NULL literal values ``pred`` pins ``key_expr`` to, or None."""
    def one(p):
        if not is_eq(p):
            return None
        a, b = p.args
        if a == key_expr and isinstance(b, Literal) and b.value is not None:
            return b.value
        if b == key_expr and isinstance(a, Literal) and a.value is not None:
            return a.value
        return None
    v = one(pred)
    if v is not None:
        return [v]
    if is_or(pred):
        vals = [one(x) for x in pred.args]
        if vals and all(x is not None for x in vals):
            return list(dict.fromkeys(vals))
    return None


def find_literal_constraints(mfp: MapFilterProject, key: Sequence[ScalarExpr]):
    """``(constraints, remaining_predicates)`` if the MFP's predicates pin every key
    expression (which must read only input columns) to literals; else None."""
    if not key:
        return None
    preds = []
    for p in mfp.predicates:
        preds.extend(p.args if is_and(p) else (p,))
    used = set()
    values = []
    for k in key:
        if any(c >= mfp.input_arity for c in columns_referenced(k)):
            return None
        found = None
        for i, p in enumerate(preds):
            if i in used:
                continue
            vals = _literal_set(p, k)
            if vals is not None:
                found = (i, vals)
                break
        if found is None:
            return None
        used.add(found[0])
        values.append(found[1])
    constraints = tuple(itertools.product(*values))
    remaining = tuple(p for i, p in enumerate(preds) if i not in used)
    return constraints, remaining


def plan_peek(expr, finishing: RowSetFinishing = RowSetFinishing(), indexes=None, *,
              optimized: bool = False) -> PeekPlan:
    """Decide how to answer a SELECT of ``expr`` (see the module docstring).

    ``indexes`` maps a collection's GlobalId to its available indexes
    (``AvailableIndex`` or ``(index_id, key, arity)``).  ``expr`` is optimized first
    unless ``optimized``."""
    if not optimized:
        expr = optimize(expr)
    if isinstance(expr, Constant):
        return ConstantPeek(tuple(expr.rows), finishing, expr.error)
    found = mfp_over_get(expr)
    if found is None:
        return SlowPathPeek(expr, finishing)
    get, mfp = found
    available = normalize_indexes(indexes).get(get.id, [])
    if not isinstance(get.id, GlobalId) or not available:
        return SlowPathPeek(expr, finishing)
    best = None
    for ix in available:
        lc = find_literal_constraints(mfp, ix.key)
        if lc is not None and (best is None or len(ix.key) > len(best[0].key)):
            best = (ix, lc)
    if best is not None:
        ix, (constraints, remaining) = best
        mfp = MapFilterProject(mfp.input_arity, mfp.expressions, remaining, mfp.projection)
        return FastPathPeek(ix.id, get.id, ix.key, constraints, mfp, finishing)
    ix = available[0]
    return FastPathPeek(ix.id, get.id, ix.key, None, mfp, finishing)
