"""MapFilterProject: the per-row work fused into one step, as a value.

Owns the ``MapFilterProject`` vocabulary used by peeks (fast path) and by rendering.
Semantics: starting from a row of ``input_arity`` columns, append ``expressions``
(each may read the input and earlier expressions), keep the row only when every
predicate is true, then output the columns listed in ``projection``.
Invariant: every column reference is ``< input_arity + len(expressions)``.
Evaluation order (added by the planner engineer; ``expr.compile`` implements it and
fast-path peek planning relies on it): each predicate runs as soon as the columns it
reads are available (in order of the highest column it reads), and an expression is
computed only when a predicate or the projection needs it.  So the predicates of a
Filter that sat below a Map in a plan guard that Map's expressions: a dropped row never
raises an expression's error.
Deliberately not here: compilation (``expr.compile.compile_mfp``).
"""
from __future__ import annotations

from dataclasses import dataclass

from expr.scalar import ScalarExpr


@dataclass(frozen=True)
class MapFilterProject:
    input_arity: int
    expressions: tuple[ScalarExpr, ...] = ()
    predicates: tuple[ScalarExpr, ...] = ()
    #: output columns; ``None`` means every input column then every expression
    projection: tuple[int, ...] | None = None

    @classmethod
    def identity(cls, arity: int) -> "MapFilterProject":
        return cls(arity, (), (), tuple(range(arity)))

    def output_projection(self) -> tuple[int, ...]:
        if self.projection is None:
            return tuple(range(self.input_arity + len(self.expressions)))
        return self.projection

    def is_identity(self) -> bool:
        return (not self.expressions and not self.predicates
                and self.output_projection() == tuple(range(self.input_arity)))

    def output_arity(self) -> int:
        return len(self.output_projection())
