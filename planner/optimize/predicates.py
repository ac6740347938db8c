"""push_down_predicates: move Filter predicates as close to the data as they can go.

Owns predicate movement through Filter, Project, Map, Union, Negate, Threshold, Join,
Reduce (group-key predicates), TopK (group-key predicates), FlatMap and Let and LetRec
bodies (never into a recursive binding's value), and into a Let's value the predicates that
every use of the binding applies (each use is ``Filter(Get(id))`` with them; they are then
dropped from the uses); and
the conversion of an SQL equality between columns of two different Join inputs into a
Join equivalence plus ``IS NOT NULL`` filters on both sides (equivalences use datum
equality, where NULL = NULL; SQL ``=`` never matches NULL).  Invariant: the result
keeps exactly the same rows as the input plan.  Predicates that read no column stay
where they are (pushing ``false`` below a global aggregate would change its result).
A ``column = literal`` predicate on one join input is copied to every column
equivalent to it (so each input is filtered before the join, and a fast index lookup
can serve it).  A predicate on a Map column that is a bare column or literal reads
that value instead and moves below the Map.  Deliberately not here: inlining
non-trivial Map expressions into predicates (that would compute them twice).
"""
from __future__ import annotations

from expr.relation import (ArrangeBy, Filter, FlatMap, Get, Join, Let, LetRec, Map, Negate, Project, Reduce,
                           Threshold, TopK, Union, children)
from expr.scalar import Call, Column, Literal, columns_referenced, permute, substitute
from planner.optimize.names import is_eq, make_is_not_null
from planner.optimize.util import transform_up, with_children


def _wrap(expr, preds):
    preds = tuple(dict.fromkeys(preds))
    return Filter(expr, preds) if preds else expr


def _visit(e):
    if isinstance(e, Filter):
        return _sink(e.input, list(e.predicates))
    if isinstance(e, Let):
        return _sink_let(e, [])
    kids = children(e)
    if not kids:
        return e
    new = [_visit(k) for k in kids]
    if all(a is b for a, b in zip(new, kids)):
        return e
    return with_children(e, new)


def _split(preds, ok):
    yes, no = [], []
    for p in preds:
        cols = columns_referenced(p)
        (yes if cols and ok(cols) else no).append(p)
    return yes, no


def _inline_trivial_map_columns(pred, m: Map, n: int):
    """Replace references to Map columns that are bare columns/literals by their values
    (cheap, and lets the predicate move below the Map)."""
    repl = {}
    for c in columns_referenced(pred):
        if c >= n:
            x = m.scalars[c - n]
            while isinstance(x, Column) and x.index >= n:
                x = m.scalars[x.index - n]
            if isinstance(x, (Column, Literal)):
                repl[c] = x
    if not repl:
        return pred
    return substitute(pred, {c: repl.get(c, Column(c)) for c in columns_referenced(pred)})


def _sink(inp, preds):
    """``Filter(inp, preds)`` with the predicates pushed as deep as they go."""
    if isinstance(inp, Filter):
        return _sink(inp.input, list(inp.predicates) + preds)
    if isinstance(inp, Project):
        mapping = {k: o for k, o in enumerate(inp.outputs)}
        moved, stay = _split(preds, lambda cols: True)
        return _wrap(Project(_sink(inp.input, [permute(p, mapping) for p in moved]), inp.outputs), stay)
    if isinstance(inp, Map):
        n = inp.input.arity()
        preds = [_inline_trivial_map_columns(p, inp, n) for p in preds]
        moved, stay = _split(preds, lambda cols: max(cols) < n)
        return _wrap(Map(_sink(inp.input, moved), inp.scalars), stay)
    if isinstance(inp, FlatMap):
        n = inp.input.arity()
        moved, stay = _split(preds, lambda cols: max(cols) < n)
        return _wrap(FlatMap(_sink(inp.input, moved), inp.func, inp.exprs, inp.output_arity), stay)
    if isinstance(inp, Union):
        moved, stay = _split(preds, lambda cols: True)
        return _wrap(Union(tuple(_sink(x, list(moved)) for x in inp.inputs)), stay)
    if isinstance(inp, (Negate, Threshold)):
        moved, stay = _split(preds, lambda cols: True)
        return _wrap(type(inp)(_sink(inp.input, moved)), stay)
    if isinstance(inp, Let):
        return _sink_let(inp, preds)
    if isinstance(inp, LetRec):  # into the body only: a binding's value feeds the iteration
        return LetRec(inp.ids, tuple(_visit(v) for v in inp.values), inp.limits, _sink(inp.body, preds))
    if isinstance(inp, Reduce):
        k = len(inp.group_key)
        moved, stay = _split(preds, lambda cols: max(cols) < k)
        moved = [substitute(p, {i: inp.group_key[i] for i in range(k)}) for p in moved]
        return _wrap(Reduce(_sink(inp.input, moved), inp.group_key, inp.aggregates,
                            inp.global_default), stay)
    if isinstance(inp, TopK):
        keys = set(inp.group_key)
        moved, stay = _split(preds, lambda cols: cols <= keys)
        return _wrap(TopK(_sink(inp.input, moved), inp.group_key, inp.order_key,
                          inp.limit, inp.offset), stay)
    if isinstance(inp, Join):
        return _sink_join(inp, preds)
    if isinstance(inp, ArrangeBy):
        return _wrap(ArrangeBy(_visit(inp.input), inp.keys), preds)
    return _wrap(_visit(inp), preds)


def _sink_let(let: Let, preds):
    body = _sink(let.body, preds) if preds else _visit(let.body)
    common = _common_use_predicates(body, let.id)
    if common:
        value = _sink(let.value, list(common))
        drop = set(common)
        body = transform_up(body, lambda e: _drop_predicates(e, let.id, drop))
    else:
        value = _visit(let.value)
    if value is let.value and body is let.body:
        return let
    return Let(let.id, value, body)


def _common_use_predicates(body, lid) -> tuple:
    """The predicates that every ``Get(lid)`` in ``body`` sits directly under (a Filter)."""
    common = None
    stack = [(body, None)]
    while stack:
        e, parent = stack.pop()
        if isinstance(e, Get) and e.id == lid:
            if not isinstance(parent, Filter):
                return ()
            common = list(parent.predicates) if common is None else [p for p in common if p in parent.predicates]
            if not common:
                return ()
            continue
        stack.extend((k, e) for k in children(e))
    return tuple(dict.fromkeys(common or ()))


def _drop_predicates(e, lid, drop: set):
    if isinstance(e, Filter) and isinstance(e.input, Get) and e.input.id == lid:
        keep = tuple(p for p in e.predicates if p not in drop)
        return Filter(e.input, keep) if keep else e.input
    return e


def _sink_join(join: Join, preds):
    offsets, owner = [], {}
    off = 0
    for k, x in enumerate(join.inputs):
        offsets.append(off)
        for c in range(off, off + x.arity()):
            owner[c] = k
        off += x.arity()

    def single_input(e):
        cols = columns_referenced(e)
        ins = {owner[c] for c in cols}
        return ins.pop() if len(ins) == 1 else None

    per_input: list[list] = [[] for _ in join.inputs]
    new_classes = []
    stay = []

    def shift(e, k):
        return permute(e, {c: c - offsets[k] for c in columns_referenced(e)})

    for p in preds:
        k = single_input(p)
        if k is not None:
            per_input[k].append(shift(p, k))
            continue
        if is_eq(p):
            a, b = p.args
            ka, kb = single_input(a), single_input(b)
            if ka is not None and kb is not None and ka != kb:
                new_classes.append((a, b))
                per_input[ka].append(shift(make_is_not_null(a), ka))
                per_input[kb].append(shift(make_is_not_null(b), kb))
                continue
        stay.append(p)
    _propagate_literals(join.equivalences + tuple(new_classes), per_input, offsets, owner)
    inputs = tuple(_sink(x, per_input[k]) for k, x in enumerate(join.inputs))
    return _wrap(Join(inputs, join.equivalences + tuple(new_classes)), stay)


def _propagate_literals(classes, per_input, offsets, owner):
    """``a = lit`` on one input and ``a`` equivalent to column ``b`` of another input:
    add ``b = lit`` there too (datum equality makes it true of every joined row)."""
    for cls in classes:
        cols = [x.index for x in cls if isinstance(x, Column)]
        lits = []
        for c in cols:
            k = owner[c]
            for p in per_input[k]:
                if is_eq(p):
                    a, b = p.args
                    if isinstance(b, Column) and isinstance(a, Literal):
                        a, b = b, a
                    if (isinstance(a, Column) and a.index == c - offsets[k]
                            and isinstance(b, Literal) and b.value is not None):
                        lits.append((p.func, p.type, b))
        for func, ty, lit in lits[:1]:
            for c in cols:
                k = owner[c]
                new = Call(func, (Column(c - offsets[k]), lit), ty)
                if new not in per_input[k]:
                    per_input[k].append(new)


def push_down_predicates(expr):
    """Push every Filter's predicates toward the leaves (see the module docstring)."""
    return _visit(expr)
