"""The scalar function ids the optimizer and peek planner recognise by name.

Owns the mapping from *meaning* (conjunction, negation, null test, equality) to the
``func`` ids of ``expr.functions``.  Invariant: a rule only rewrites a ``Call`` whose
meaning it knows from here; an unknown function is left alone (never guessed).
Deliberately not here: evaluation (``expr.compile``).  When ``expr.functions``
names things differently, this is the one place to change.
"""
from __future__ import annotations

from expr.scalar import Call, Literal

AND = "and"
OR = "or"
NOT = "not"
IS_NULL = "is_null"
IS_NOT_NULL = "is_not_null"
IS_TRUE = "is_true"
#: datum equality (NULL equals NULL), what a Join equivalence means
IS_NOT_DISTINCT_FROM = "is_not_distinct_from"

#: Equality ids: SQL ``=`` (NULL if either side is NULL).  Typed variants like
#: ``eq_int4`` are recognised by prefix.
EQ = "eq"


def is_and(e) -> bool:
    return isinstance(e, Call) and e.func == AND


def is_or(e) -> bool:
    return isinstance(e, Call) and e.func == OR


def is_not(e) -> bool:
    return isinstance(e, Call) and e.func == NOT and len(e.args) == 1


def is_eq(e) -> bool:
    return (isinstance(e, Call) and len(e.args) == 2
            and (e.func == EQ or e.func.startswith(EQ + "_")))


def make_and(args):
    args = tuple(args)
    if not args:
        return Literal(True, "bool")
    if len(args) == 1:
        return args[0]
    return Call(AND, args, "bool")


def make_or(args):
    args = tuple(args)
    if not args:
        return Literal(False, "bool")
    if len(args) == 1:
        return args[0]
    return Call(OR, args, "bool")


def make_not(e):
    return Call(NOT, (e,), "bool")


def make_is_not_null(e):
    return Call(IS_NOT_NULL, (e,), "bool")


def is_true(e) -> bool:
    return isinstance(e, Literal) and e.value is True


def is_false_or_null(e) -> bool:
    """A literal predicate that never keeps a row."""
    return isinstance(e, Literal) and (e.value is False or e.value is None)


def make_not_distinct(a, b):
    return Call(IS_NOT_DISTINCT_FROM, (a, b), "bool")
