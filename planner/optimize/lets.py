"""inline_lets: replace a Let binding that is used at most once (or is a bare Get) by its value.

Owns Let elimination.  Invariant: bindings are non-recursive and LocalIds are unique
within a plan, so substituting the value for its single use changes nothing.  A binding
used twice or more stays (sharing it is the point of Let).  Deliberately not here:
common-subexpression extraction (introducing Lets).
"""
from __future__ import annotations

from expr.relation import Get, Let
from planner.optimize.util import local_uses, replace_local, transform_up


def _inline(e):
    if not isinstance(e, Let):
        return e
    uses = local_uses(e.body, e.id)
    if uses == 0:
        return e.body
    if uses == 1 or isinstance(e.value, Get):
        return replace_local(e.body, e.id, e.value)
    return e


def inline_lets(expr):
    return transform_up(expr, _inline)
