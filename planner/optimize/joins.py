"""canonicalize_join_equivalences: put Join equivalence classes in one canonical form.

Owns the shape of ``Join.equivalences``: classes sharing an expression are merged
(equality is transitive), duplicates within a class removed, expressions sorted
(columns first, by index), classes with fewer than two members dropped, classes sorted.
A Join of one input with no equivalences is that input.  Invariant: the set of rows
the join keeps is unchanged.  Deliberately not here: join ordering or arrangement
choice (``planner.lower``).
"""
from __future__ import annotations

from expr.relation import Join
from expr.scalar import Column
from planner.optimize.util import transform_up


def scalar_sort_key(e):
    return (0, e.index, "") if isinstance(e, Column) else (1, 0, repr(e))


def canonical_classes(classes) -> tuple:
    merged: list[list] = []
    for cls in classes:
        members = list(dict.fromkeys(cls))
        hits = [m for m in merged if any(x in m for x in members)]
        for h in hits:
            merged.remove(h)
            members.extend(x for x in h if x not in members)
        merged.append(members)
    out = [tuple(sorted(m, key=scalar_sort_key)) for m in merged if len(m) >= 2]
    out.sort(key=lambda c: [scalar_sort_key(x) for x in c])
    return tuple(out)


def _canon(e):
    if not isinstance(e, Join):
        return e
    if len(e.inputs) == 1 and not e.equivalences:
        return e.inputs[0]
    eqs = canonical_classes(e.equivalences)
    return e if eqs == e.equivalences else Join(e.inputs, eqs)


def canonicalize_join_equivalences(expr):
    return transform_up(expr, _canon)
