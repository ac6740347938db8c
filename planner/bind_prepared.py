"""PREPARE, EXECUTE and DEALLOCATE -> plans.

Owns the binding of SQL-level prepared statements: ``PREPARE name [(type, ...)] AS stmt``
becomes a ``PreparePlan`` with the inner statement's text (padded with blanks to its
offset in the PREPARE, so positions in errors about it point into the PREPARE) and the
declared parameter types; ``EXECUTE name [(expr, ...)]`` an ``ExecutePlan`` whose
arguments are bound, coerced (assignment coercion, as PostgreSQL's EXECUTE) and folded to
typed literals once the adapter knows the prepared statement's parameter types;
``DEALLOCATE [PREPARE] name | ALL`` a ``DeallocatePlan``; ``DISCARD ALL`` (which
deallocates them too) a ``DiscardAllPlan``, ``DISCARD PLANS | TEMP | SEQUENCES`` a
``DiscardPlan``.
Invariant: an EXECUTE argument is a constant: it reads no column, no relation and no
``$n`` (42P02, as PostgreSQL: a utility statement takes no parameters), and its literal
carries the prepared parameter's type, never one guessed from its value.
Deliberately not here: where prepared statements live (the adapter's session,
``mzlite.prepared``, shared with the wire protocol's named statements), describing the
inner statement, running it.
"""
from __future__ import annotations

from pglast import ast
from pglast.parser import scan

from expr.scalar import Literal
from planner import plans as P
from planner.bind_expr import ExprContext, Scope
from planner.bind_query import UNIT
from sql import errors, types as T


def bind_prepare(b, stmt, node):
    as_end = _as_keyword_end(stmt.text)
    if as_end is None:  # pglast accepted it, so AS is there; be safe all the same
        raise errors.error_for(errors.SYNTAX_ERROR, "PREPARE needs AS followed by a statement")
    inner = " " * as_end + stmt.text[as_end:]
    declared = tuple(b.type_name(tn) for tn in (node.argtypes or ()))
    return P.PreparePlan(node.name, inner, declared)


def _as_keyword_end(text: str):
    """The offset just past the ``AS`` that ends PREPARE's name and type list."""
    depth = 0
    for t in scan(text):
        if t.name == "ASCII_40":
            depth += 1
        elif t.name == "ASCII_41":
            depth -= 1
        elif t.name == "AS" and depth == 0:
            return t.end + 1
    return None


def bind_execute(b, stmt, node):
    args = tuple(node.params or ())
    if stmt.param_count:  # a utility statement takes no parameters, as in PostgreSQL
        at = _first_parameter(stmt.text)
        raise errors.error_for("42P02", f"there is no parameter ${stmt.param_count}",
                               position=None if at is None else stmt.position(at))

    def bind_arguments(name: str, types: tuple) -> tuple:
        """The arguments as literals of ``types`` (the prepared statement's parameter types)."""
        if len(args) != len(types):
            raise errors.error_for(errors.SYNTAX_ERROR, f'wrong number of parameters for prepared statement "{name}"',
                                   detail=f"Expected {len(types)} parameters but got {len(args)}.")
        out = []
        for i, (arg, to) in enumerate(zip(args, types)):
            loc = getattr(arg, "location", None)
            if isinstance(arg, ast.SubLink):
                raise b.error(errors.FEATURE_NOT_SUPPORTED, "cannot use subquery in EXECUTE parameter", loc)
            ctx = ExprContext(b, UNIT, [], Scope([]), clause="EXECUTE parameter")
            e = ctx.bind(arg)
            frm = ctx.typeof(e)
            if frm not in (to, "unknown") and not T.can_cast(frm, to, "assignment"):
                raise errors.error_for(errors.DATATYPE_MISMATCH, f"parameter ${i + 1} of type {T.display_name(frm)} "
                                       f"cannot be coerced to the expected type {T.display_name(to)}",
                                       position=b.pos(loc), hint="You will need to rewrite or cast the expression.")
            e = ctx.coerce(e, to, "assignment", loc)
            if not isinstance(e, Literal):
                e = ctx.fold(e, loc)
            out.append(Literal(e.value, to))
        return tuple(out)

    return P.ExecutePlan(node.name, len(args), bind_arguments)


def _first_parameter(text: str):
    return next((t.start for t in scan(text) if t.name == "PARAM"), None)


def bind_deallocate(b, stmt, node):
    return P.DeallocatePlan(None if node.isall else node.name)


def bind_discard(b, stmt, node):
    what = node.target.name if hasattr(node.target, "name") else str(node.target)
    what = what.replace("DISCARD_", "")
    if what == "ALL":
        return P.DiscardAllPlan()
    return P.DiscardPlan(what)
