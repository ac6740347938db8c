"""Binding recursive queries: Materialize's WITH MUTUALLY RECURSIVE and PostgreSQL's WITH RECURSIVE.

Owns ``push_recursive_ctes`` (called by ``Binder.push_ctes`` for a ``WITH RECURSIVE``
clause, which is how the parser hands over ``WITH MUTUALLY RECURSIVE`` too, its extra
parts recorded in ``Statement.mutually_recursive``), the checks of PostgreSQL's
restrictions on recursive terms (42P19 and friends, with PostgreSQL's messages), and the
translation of both forms to ``expr.relation.LetRec``.

Invariants:

* Each recursive CTE in a WITH frame is bound to a *closed* ``LetRec`` expression (every
  LocalId it reads is bound inside it or by an enclosing binding: a correlated one reads
  its subquery's outer relation, bound by ``planner.decorrelate``), so a CTE referenced
  twice is simply inlined twice, like every CTE here.  While a binding's own
  query is bound, its name (and, for WITH MUTUALLY RECURSIVE, every name of the block)
  means ``Get(LocalId)`` of the binding.
* LocalIds come from one process-wide counter, so plans that inline views (each bound on
  its own) never reuse an id in two scopes.
* WITH MUTUALLY RECURSIVE: the declared column types are the bindings' types; a query
  whose types differ is cast implicitly or rejected with Materialize's "declared type ...
  did not match inferred type ..." error.  ``(RETURN | ERROR) AT RECURSION LIMIT n`` goes
  to every binding's limit.
* WITH RECURSIVE gives PostgreSQL's answers (working-table iteration) through three
  bindings iterated together: ``started`` (one empty row from the first iteration on),
  ``w`` (the working table: the non-recursive term in the first iteration, then the
  recursive term over the previous working table; for UNION without ALL, deduplicated and
  minus every row produced before) and ``acc`` (everything produced so far: previous
  ``acc`` plus previous ``w``).  The fixpoint is reached exactly when the working table is
  empty, and then ``acc`` is PostgreSQL's result, repeated rows included.  When the
  recursive term is linear and strict in the recursive name (``_linear``: it reads it once,
  through map/filter/project/flat-map, distinct (UNION only) and one side of joins), the
  same answer is the plain fixpoint of one binding ``r = nonrec UNION [ALL] rec(r)``,
  which is what gets planned: it is monotone, so maintenance continues it after inserts
  (``compute.render.letrec``).  Column types come from the non-recursive term; the
  recursive term is cast to them when their common type is the non-recursive term's, else
  42804 as in PostgreSQL.

A recursive CTE inside a correlated subquery may read the enclosing query's columns: it is
then bound against that subquery's outer relation (``planner.ctes``), its bindings
carrying that relation's prefix.  Deliberately not here: SEARCH/CYCLE clauses
(0A000), evaluation (``compute``).  Items of a
WITH RECURSIVE are bound in dependency order (an item may read a later one, as in
PostgreSQL; a cycle through two items is PostgreSQL's 0A000 "mutual recursion" error).
One known difference: the first iteration also evaluates the recursive term over an empty
working table, which PostgreSQL skips when the non-recursive term has rows; the answers
differ only for a recursive term that yields rows from no input and is not monotone
(e.g. a window function over the recursive name).
"""
from __future__ import annotations

import itertools

from pglast import ast

from expr.relation import (ArrangeBy, Constant, Filter, FlatMap, Get, Join, LetRec, LocalId, Map, Negate,
                           Project, RecursionLimit, Reduce, Threshold, Union, children)
from expr.scalar import Column
from planner.bind_expr import enum_name, find_aggregates, parse_nodes
from planner.ctes import bind_cte
from sql import errors, types as T

__all__ = ["push_recursive_ctes", "references", "next_local_id"]

RECURSION_ERROR = "42P19"  #: invalid_recursion

_ids = itertools.count(1_000)


def next_local_id() -> LocalId:
    """A LocalId no other plan in this process uses."""
    return LocalId(next(_ids))


def push_recursive_ctes(b, wc, outer=None) -> None:
    """Bind a ``WITH RECURSIVE`` (or ``WITH MUTUALLY RECURSIVE``) clause: push one CTE frame
    on ``b.ctes`` (the caller pops it), as ``Binder.push_ctes`` does.  ``outer`` is the
    query level's outer relation: a WITH RECURSIVE item may be correlated with it
    (``planner.ctes``)."""
    from planner.bind_query import TOP
    outer = TOP if outer is None else outer
    info = None
    stmt = getattr(b, "stmt", None)
    if stmt is not None:
        info = getattr(stmt, "mutually_recursive", {}).get(wc.location)
    frame: dict = {}
    b.ctes.append(frame)
    if info is not None:
        _bind_mutually_recursive(b, wc, info, frame)
    else:
        for cte in _dependency_order(b, wc.ctes):
            if cte.search_clause is not None or cte.cycle_clause is not None:
                raise b.error(errors.FEATURE_NOT_SUPPORTED, "SEARCH and CYCLE clauses are not supported",
                              cte.location)
            if references(cte.ctequery, cte.ctename):
                entry, owner = bind_cte(b, lambda o: _bind_with_recursive(b, cte, frame, o), outer)
            else:
                entry, owner = bind_cte(b, lambda o: _bind_plain(b, cte, o), outer)
            frame[cte.ctename] = entry + ((owner,) if owner is not None else ())


# ------------------------------------------------------------------ shared


def _dependency_order(b, ctes) -> list:
    """WITH RECURSIVE items in an order where each comes after the items it reads (PostgreSQL
    lets an item read a later one); a cycle through two or more items is 0A000."""
    seen: set = set()
    for cte in ctes:
        if cte.ctename in seen:
            raise b.error("42712", f'WITH query name "{cte.ctename}" specified more than once', cte.location)
        seen.add(cte.ctename)
    deps = {c.ctename: {o.ctename for o in ctes if o.ctename != c.ctename and references(c.ctequery, o.ctename)}
            for c in ctes}
    out: list = []
    done: set = set()
    while len(out) < len(ctes):
        ready = [c for c in ctes if c.ctename not in done and deps[c.ctename] <= done]
        if not ready:
            first = next(c for c in ctes if c.ctename not in done)
            raise b.error(errors.FEATURE_NOT_SUPPORTED, "mutual recursion between WITH items is not implemented",
                          first.location)
        out.append(ready[0])
        done.add(ready[0].ctename)
    return out



def _bind_plain(b, cte, outer):
    bq = b.bind_query(cte.ctequery, outer)
    names = cte_column_names(b, cte, list(bq.names))
    return (bq.finished(), names, list(bq.types))


def cte_column_names(b, cte, names: list) -> list:
    """A WITH item's column names: its query's, renamed by ``WITH name (a, b, ..)``."""
    if cte.aliascolnames:
        al = [a.sval for a in cte.aliascolnames]
        if len(al) > len(names):
            raise b.error(errors.INVALID_COLUMN_REFERENCE, f'WITH query "{cte.ctename}" has '
                          f"{len(names)} columns available but {len(al)} columns specified", cte.location)
        names[:len(al)] = al
    return names


def references(node, name: str) -> list:
    """The ``RangeVar``s naming ``name`` (unqualified) anywhere in the pglast tree ``node``."""
    return [n for n in parse_nodes(node) if isinstance(n, ast.RangeVar) and n.relname == name
            and not n.schemaname and not n.catalogname]


def _first_loc(node):
    from planner.bind_query import _first_loc as fl
    return fl(node)


# ------------------------------------------------------------------ WITH MUTUALLY RECURSIVE


def _bind_mutually_recursive(b, wc, info, frame: dict) -> None:
    from planner.bind_query import TOP
    limit = None if info.limit is None else RecursionLimit(info.limit, info.return_at)
    decls = []
    for cte in wc.ctes:
        if cte.ctename in frame:
            raise b.error("42712", f'WITH query name "{cte.ctename}" specified more than once', cte.location)
        type_nodes = info.types_of(cte.ctename) or ()
        names = [a.sval for a in cte.aliascolnames or ()]
        types = [b.type_name(tn) for tn in type_nodes]
        lid = next_local_id()
        frame[cte.ctename] = (Get(lid, len(types)), names, types)
        decls.append((cte, lid, names, types))
    values = []
    for cte, lid, names, types in decls:
        bq = b.bind_query(cte.ctequery, TOP)
        value = bq.finished()
        got = list(bq.types)
        ok = len(got) == len(types)
        if ok and got != types:
            try:
                value = b.cast_columns(value, 0, got, types)
            except errors.Error:
                ok = False
        if not ok:
            raise b.error(errors.DATATYPE_MISMATCH, f"declared type ({', '.join(T.display_name(t) for t in types)}) "
                          f'of WITH MUTUALLY RECURSIVE query "{cte.ctename}" did not match inferred type '
                          f"({', '.join(T.display_name(t) for t in got)})", cte.location)
        values.append(value)
    ids = tuple(lid for _, lid, _, _ in decls)
    limits = tuple(limit for _ in decls)
    for (cte, lid, names, types), _v in zip(decls, values):
        frame[cte.ctename] = (LetRec(ids, tuple(values), limits, Get(lid, len(types))), names, types)


# ------------------------------------------------------------------ PostgreSQL's WITH RECURSIVE


def _rec_error(b, message: str, loc, sqlstate: str = RECURSION_ERROR):
    return b.error(sqlstate, message, loc)


def _check_form(b, cte):
    """PostgreSQL's checkWellFormedRecursion: ``(larg, rarg, all)`` or an error."""
    name = cte.ctename
    q = cte.ctequery
    op = enum_name(getattr(q, "op", None))
    if not isinstance(q, ast.SelectStmt) or op != "SETOP_UNION":
        raise _rec_error(b, f'recursive query "{name}" does not have the form non-recursive-term UNION [ALL] '
                         "recursive-term", cte.location)
    if references(q.larg, name):
        raise _rec_error(b, f'recursive reference to query "{name}" must not appear within its non-recursive term',
                         references(q.larg, name)[0].location)
    for what, val in (("ORDER BY", q.sortClause), ("OFFSET", q.limitOffset), ("LIMIT", q.limitCount),
                      ("FOR UPDATE/SHARE", q.lockingClause)):
        if val:
            raise _rec_error(b, f"{what} in a recursive query is not implemented", _first_loc(val),
                             errors.FEATURE_NOT_SUPPORTED)
    if q.withClause is not None:
        raise _rec_error(b, "WITH in the UNION of a recursive query is not supported", q.withClause.location,
                         errors.FEATURE_NOT_SUPPORTED)
    _check_recursive_term(b, name, q.rarg)
    return q.larg, q.rarg, bool(q.all)


def _check_recursive_term(b, name: str, rarg) -> None:
    """PostgreSQL's checkWellFormedRecursionWalker over the recursive term."""
    seen: list = []

    def walk(n, ctx):
        if isinstance(n, ast.RangeVar):
            if n.relname == name and not n.schemaname and not n.catalogname:
                if ctx is not None:
                    raise _rec_error(b, f'recursive reference to query "{name}" must not appear within {ctx}',
                                     n.location)
                if seen:
                    raise _rec_error(b, f'recursive reference to query "{name}" must not appear more than once',
                                     n.location)
                seen.append(n)
            return
        if isinstance(n, ast.SelectStmt):
            op = enum_name(n.op)
            if op == "SETOP_INTERSECT":
                inner = "INTERSECT" if n.all else ctx
                walk(n.larg, inner)
                walk(n.rarg, inner)
                return
            if op == "SETOP_EXCEPT":
                walk(n.larg, "EXCEPT" if n.all else ctx)
                walk(n.rarg, "EXCEPT")
                return
        if isinstance(n, ast.SubLink):
            walk(n.testexpr, ctx)
            walk(n.subselect, "a subquery")
            return
        if isinstance(n, ast.JoinExpr):
            jt = enum_name(n.jointype)
            outer = "an outer join"
            walk(n.larg, outer if jt in ("JOIN_RIGHT", "JOIN_FULL") else ctx)
            walk(n.rarg, outer if jt in ("JOIN_LEFT", "JOIN_FULL") else ctx)
            walk(n.quals, ctx)
            return
        if isinstance(n, ast.Node):
            for f in n:
                walk(getattr(n, f), ctx)
        elif isinstance(n, tuple):
            for x in n:
                walk(x, ctx)

    walk(rarg, None)
    # aggregates at the recursive term's own level (PostgreSQL's parseCheckAggregates)
    if isinstance(rarg, ast.SelectStmt) and enum_name(rarg.op) in (None, "SETOP_NONE", 0):
        aggs: list = []
        for t in rarg.targetList or ():
            find_aggregates(t.val, aggs)
        if rarg.havingClause is not None:
            find_aggregates(rarg.havingClause, aggs)
        if aggs:
            raise _rec_error(b, "aggregate functions are not allowed in a recursive query's recursive term",
                             getattr(aggs[0], "location", None))


def _bind_with_recursive(b, cte, frame: dict, outer):
    """The item's ``(LetRec, names, types)``; bound against ``outer`` (TOP, or a correlated
    subquery's outer relation: then every binding carries its prefix, so the iteration runs
    for every outer row at once, and the LetRec reads the outer relation's Let)."""
    name = cte.ctename
    larg, rarg, union_all = _check_form(b, cte)
    nonrec = b.bind_query(larg, outer)
    types = list(nonrec.types)
    names = cte_column_names(b, cte, list(nonrec.names))
    p = outer.arity
    n = len(types)
    started, w, acc = next_local_id(), next_local_id(), next_local_id()
    frame[name] = (Get(w, p + n), names, types) + ((outer,) if p else ())
    try:
        rec = b.bind_query(rarg, outer)
    finally:
        del frame[name]
    if len(rec.types) != n:
        raise b.error(errors.SYNTAX_ERROR, "each UNION query must have the same number of columns", _first_loc(rarg))
    rec_expr = rec.finished()
    for i, (nt, rt) in enumerate(zip(types, rec.types)):
        overall = T.common_type([nt, rt])
        if overall is None:
            raise b.error(errors.DATATYPE_MISMATCH, f"UNION types {T.display_name(nt)} and {T.display_name(rt)} "
                          "cannot be matched", _first_loc(rarg))
        if overall != nt:
            e = b.error(errors.DATATYPE_MISMATCH, f'recursive query "{name}" column {i + 1} has type '
                        f"{T.display_name(nt)} in non-recursive term but type {T.display_name(overall)} overall",
                        _first_loc(larg))
            e.hint = "Cast the output of the non-recursive term to the correct type."
            raise e
    rec_expr = b.cast_columns(rec_expr, p, list(rec.types), types)
    n += p  # from here on the bindings' columns: the prefix, then the item's
    all_cols = tuple(Column(i) for i in range(n))
    if LINEAR_FORM and _linear(rec_expr, w, bag=union_all):
        # r = nonrec UNION [ALL] rec(r): the same rows when rec is linear and strict in r
        value = Union((nonrec.finished(), rec_expr))
        if not union_all:
            value = Reduce(value, all_cols, ())
        return (LetRec((w,), (value,), (None,), Get(w, n)), names, types)
    unit = Constant((((), 1),), 0)
    not_started = Threshold(Union((unit, Negate(Get(started, 0)))))
    first = Project(Join((nonrec.finished(), not_started), ()), tuple(range(n)))
    produced = Union((first, rec_expr))
    so_far = Union((Get(acc, n), Get(w, n)))
    if union_all:
        w_value = produced
    else:
        w_value = Threshold(Union((Reduce(produced, all_cols, ()), Negate(so_far))))
    letrec = LetRec((started, w, acc), (unit, w_value, so_far), (None, None, None), Get(acc, n))
    return (letrec, names, types)


#: use the one-binding form for linear recursive terms (tests turn it off to compare)
LINEAR_FORM = True


def _reads(e, lid) -> bool:
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Get) and x.id == lid:
            return True
        stack.extend(children(x))
    return False


def _linear(e, lid, bag: bool) -> bool:
    """``e`` reads ``Get(lid)`` once, through operators that are strict (empty in, empty out)
    and distribute over union (as bags when ``bag``, else as sets): then PostgreSQL's
    working-table iteration and the plain fixpoint of ``r = nonrec UNION [ALL] e`` agree."""
    if isinstance(e, Get):
        return e.id == lid
    if isinstance(e, (Map, Filter, Project, FlatMap, ArrangeBy)):
        return _linear(e.input, lid, bag)
    if isinstance(e, Reduce):
        return not bag and not e.aggregates and not e.global_default and _linear(e.input, lid, bag)
    if isinstance(e, Join):
        readers = [x for x in e.inputs if _reads(x, lid)]
        return len(readers) == 1 and _linear(readers[0], lid, bag)
    return False
