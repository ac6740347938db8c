"""Relation expressions (MIR-like): the plans the planner hands to compute.

Owns the relational vocabulary.  Invariants: nodes are immutable; every node knows
its ``arity()``; column references inside a node's scalars index the node's *input*
columns (for ``Join``, the concatenation of all inputs' columns in order; for
``Map``, the input's columns followed by the earlier expressions of the same Map).
Multiplicities are signed: a collection is a multiset of rows with integer counts,
and ``Negate`` may make counts negative until a ``Threshold`` clips them.
Deliberately not here: optimization (``planner.optimize``) and rendering
(``compute.render.dataflow``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import typing
from typing import Any, Optional

from expr.scalar import ScalarExpr
from repr.ids import GlobalId


@dataclass(frozen=True)
class LocalId:
    """A name bound by ``Let`` within one plan."""
    n: int

    def __str__(self) -> str:
        return f"l{self.n}"


@dataclass(frozen=True)
class Constant:
    """A literal collection: ``rows`` is a tuple of ``(row_tuple, diff)``."""
    rows: tuple[tuple[tuple, int], ...]
    column_count: int
    #: when set, evaluating the constant raises this ``(sqlstate, message)`` error instead
    error: Optional[tuple[str, str]] = None

    def arity(self) -> int:
        return self.column_count


@dataclass(frozen=True)
class Get:
    """Read a collection: a table, materialized view or index (``GlobalId``) or a ``Let`` binding."""
    id: typing.Union[GlobalId, LocalId]
    column_count: int

    def arity(self) -> int:
        return self.column_count


@dataclass(frozen=True)
class Let:
    id: LocalId
    value: "RelationExpr"
    body: "RelationExpr"

    def arity(self) -> int:
        return self.body.arity()


@dataclass(frozen=True)
class Map:
    """Append one column per expression; expression i may read columns < input arity + i."""
    input: "RelationExpr"
    scalars: tuple[ScalarExpr, ...]

    def arity(self) -> int:
        return self.input.arity() + len(self.scalars)


@dataclass(frozen=True)
class Filter:
    """Keep rows for which every predicate is true (NULL and false drop the row)."""
    input: "RelationExpr"
    predicates: tuple[ScalarExpr, ...]

    def arity(self) -> int:
        return self.input.arity()


@dataclass(frozen=True)
class Project:
    """Keep (and reorder, possibly repeat) the listed input columns."""
    input: "RelationExpr"
    outputs: tuple[int, ...]

    def arity(self) -> int:
        return len(self.outputs)


#: a ``FlatMap`` function name ending in this numbers each call's rows from 1 in an extra
#: last column (SQL's ``WITH ORDINALITY``)
ORDINALITY = "+ordinality"


@dataclass(frozen=True)
class FlatMap:
    """For each input row, append the rows of table function ``func`` applied to ``exprs``
    (``func`` may end in ``ORDINALITY``)."""
    input: "RelationExpr"
    func: str
    exprs: tuple[ScalarExpr, ...]
    output_arity: int

    def arity(self) -> int:
        return self.input.arity() + self.output_arity


@dataclass(frozen=True)
class Join:
    """Inner equi-join.

    ``equivalences``: each class is a tuple of expressions over the concatenated
    input columns that must all be equal *as values*: NULL equals NULL here (datum
    equality, as in Materialize's MIR), which decorrelation relies on.  SQL ``=``
    join conditions therefore also get ``is not null`` filters from the planner.  Output
    columns are the concatenation of the inputs' columns.  Non-equality join
    conditions are a ``Filter`` above the join.
    """
    inputs: tuple["RelationExpr", ...]
    equivalences: tuple[tuple[ScalarExpr, ...], ...]

    def arity(self) -> int:
        return sum(i.arity() for i in self.inputs)


@dataclass(frozen=True)
class AggregateExpr:
    """One aggregate of a ``Reduce``.

    ``func``: ``count`` (non-NULL values; ``count(*)`` is ``count`` of a true literal),
    ``sum``, ``min``, ``max``, ``avg``, ``bool_and``, ``bool_or``, ``string_agg``
    (expr is a two-column record built by Call('record', (value, delimiter))),
    ``array_agg``, ``jsonb_agg``, ``jsonb_object_agg``, ``stddev_samp``, ``stddev_pop``, ``var_samp``,
    ``var_pop``.  ``distinct`` applies the aggregate to distinct non-NULL values.
    ``input_type``/``output_type`` are SQL type names (e.g. ``sum`` over ``int4``
    gives ``int8``, over ``int8`` gives ``numeric``; ``avg`` over integers gives
    ``numeric``).
    ``window`` (window functions): a ``expr.window.WindowAggregateExpr`` over
    ``record(row)`` producing the partition's list of ``row + values``.
    """
    func: str
    expr: ScalarExpr
    distinct: bool
    input_type: str
    output_type: str
    #: ``ORDER BY`` inside the call, one ``(desc, nulls_last)`` per sort key.
    #: When set, and always for ``jsonb_object_agg``, ``expr`` is
    #: ``record(value, key1, ..., keyN)`` and a NULL ``expr`` (a row FILTER rejected)
    #: contributes nothing; ``value`` is what the aggregate takes otherwise (string_agg's
    #: ``record(v, delim)``, jsonb_object_agg's ``record(key, value)``).  Without it,
    #: ``array_agg``/``jsonb_agg`` take the value itself and keep NULLs (the binder uses the
    #: ordered form, with a constant key, when they have a FILTER).  Ordered aggregates
    #: are non-invertible: the group's value is recomputed from its multiset of records.
    order_by: tuple = ()

    def is_ordered_form(self) -> bool:
        """Whether ``expr`` has the ``record(value, keys...)`` form described above."""
        return bool(self.order_by) or self.func == "jsonb_object_agg"


@dataclass(frozen=True)
class Reduce:
    """Group by ``group_key`` (expressions over the input) and compute ``aggregates``.

    Output columns: the group key values, then one column per aggregate.  With no
    aggregates this is DISTINCT over the key.  ``global_default``: the group key is
    empty and SQL requires exactly one output row even for empty input (count 0,
    other aggregates NULL); compute produces that row.
    """
    input: "RelationExpr"
    group_key: tuple[ScalarExpr, ...]
    aggregates: tuple[AggregateExpr, ...]
    global_default: bool = False

    def arity(self) -> int:
        return len(self.group_key) + len(self.aggregates)


@dataclass(frozen=True)
class ColumnOrder:
    column: int
    desc: bool = False
    nulls_last: bool = True  #: PostgreSQL: NULLs sort as larger than any value (last in ASC)


@dataclass(frozen=True)
class TopK:
    """Per group of ``group_key`` columns, keep the rows ranked ``offset <= rank < offset+limit``
    under ``order_key`` (ties broken by the whole row, deterministically)."""
    input: "RelationExpr"
    group_key: tuple[int, ...]
    order_key: tuple[ColumnOrder, ...]
    limit: Optional[int]
    offset: int = 0

    def arity(self) -> int:
        return self.input.arity()


@dataclass(frozen=True)
class Negate:
    input: "RelationExpr"

    def arity(self) -> int:
        return self.input.arity()


@dataclass(frozen=True)
class Threshold:
    """Keep rows with positive multiplicity (clip negative counts to zero)."""
    input: "RelationExpr"

    def arity(self) -> int:
        return self.input.arity()


@dataclass(frozen=True)
class Union:
    inputs: tuple["RelationExpr", ...]

    def arity(self) -> int:
        return self.inputs[0].arity()


@dataclass(frozen=True)
class ArrangeBy:
    """The input, arranged by each of ``keys`` (a hint for rendering; semantically the identity)."""
    input: "RelationExpr"
    keys: tuple[tuple[ScalarExpr, ...], ...]

    def arity(self) -> int:
        return self.input.arity()


# ---- recursive bindings (WITH MUTUALLY RECURSIVE / WITH RECURSIVE) ----
@dataclass(frozen=True)
class RecursionLimit:
    """``RETURN AT`` (``return_at``) or ``ERROR AT RECURSION LIMIT max_iters``."""
    max_iters: int
    return_at: bool


@dataclass(frozen=True)
class LetRec:
    """Mutually recursive bindings: every ``ids[i]`` is in scope in every ``values[j]`` and
    in ``body``.  Meaning: start every binding empty; repeatedly compute *all* values from
    the previous iteration's values, until no binding changes (a fixpoint); then evaluate
    ``body``.  ``limits[i]`` (all equal when bound from SQL) stops the iteration after
    ``max_iters`` iterations without a fixpoint: with the current values (``return_at``) or
    with a data error.  A data error in any binding stops the iteration too, and every
    binding's errors reach the LetRec's result (read by the body or not).  Binding ``i``'s arity is ``values[i].arity()``."""
    ids: tuple[LocalId, ...]
    values: tuple["RelationExpr", ...]
    limits: tuple[Optional[RecursionLimit], ...]
    body: "RelationExpr"

    def arity(self) -> int:
        return self.body.arity()
# ---- end recursive bindings ----


RelationExpr = typing.Union[
    Constant, Get, Let, Map, Filter, Project, FlatMap, Join, Reduce, TopK, Negate, Threshold, Union, ArrangeBy,
    LetRec,
]  # type: ignore[valid-type]


def children(expr) -> tuple:
    """The direct relational inputs of ``expr``."""
    if isinstance(expr, (Constant, Get)):
        return ()
    if isinstance(expr, Let):
        return (expr.value, expr.body)
    if isinstance(expr, LetRec):
        return tuple(expr.values) + (expr.body,)
    if isinstance(expr, (Join, Union)):
        return tuple(expr.inputs)
    return (expr.input,)


def node_scalars(expr) -> tuple:
    """The scalar expressions ``expr`` itself evaluates (not its inputs'): Map's scalars,
    Filter's predicates, FlatMap's arguments, Join's equivalences, Reduce's key and aggregate
    arguments; empty for other nodes."""
    if isinstance(expr, Map):
        return expr.scalars
    if isinstance(expr, Filter):
        return expr.predicates
    if isinstance(expr, FlatMap):
        return expr.exprs
    if isinstance(expr, Join):
        return tuple(x for cls in expr.equivalences for x in cls)
    if isinstance(expr, Reduce):
        return expr.group_key + tuple(a.expr for a in expr.aggregates)
    return ()


def depends_on(expr) -> set:
    """Every ``GlobalId`` the plan reads through ``Get``."""
    out: set = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Get) and isinstance(e.id, GlobalId):
            out.add(e.id)
        stack.extend(children(e))
    return out
