"""Window functions: the vocabulary of a window aggregate.

A SQL window function is planned (as Materialize does) as a ``Reduce`` grouped by the
PARTITION BY key whose single aggregate is a ``WindowAggregateExpr`` (``func ==
"window"``): its ``expr`` is a record of the whole input row, and for a partition it
produces one list datum, a tuple of ``row + (value of each window function,)`` tuples.
A ``FlatMap`` with the table function ``unnest_window`` turns that list back into rows.

Owns ``WindowFrame``, ``WindowFunc`` and ``WindowAggregateExpr``, the values the planner
builds.  Invariant: record positions (``WindowFunc.args``, ``ColumnOrder.column``) index
the record, never the Reduce input, so optimizer permutations of the input keep them
valid.  Deliberately not here: binding (``planner.windows``) and evaluation
(``expr.window_eval``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from expr.relation import AggregateExpr, ColumnOrder

__all__ = ["WindowFrame", "WindowFunc", "WindowAggregateExpr", "unnest_window", "RANKING", "VALUE_FUNCS",
           "DEFAULT_FRAME"]

#: functions that ignore the frame
RANKING = ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead")
#: functions that read the frame's rows
VALUE_FUNCS = ("first_value", "last_value", "nth_value")


@dataclass(frozen=True)
class WindowFrame:
    """``mode``: ``rows``, ``range`` or ``groups``.  ``start``/``end``: ``unbounded``
    (preceding for start, following for end), ``preceding``, ``current``, ``following``;
    offsets are non-negative for ``preceding``/``following``: row or peer-group counts
    (ints), or for ``range`` a distance in the single ORDER BY column's value (int,
    Decimal or float, PostgreSQL's in_range).  The default frame
    is ``range unbounded .. current`` (with no ORDER BY every row is a peer)."""
    mode: str = "range"
    start: str = "unbounded"
    start_offset: Any = 0
    end: str = "current"
    end_offset: Any = 0
    #: frame exclusion: ``no_others``, ``current_row``, ``group`` or ``ties``
    exclude: str = "no_others"

    def describe(self) -> str:
        def bound(kind, off, unb):
            if kind == "unbounded":
                return f"unbounded {unb}"
            if kind == "current":
                return "current row"
            return f"{off} {kind}"
        ex = "" if self.exclude == "no_others" else " exclude " + self.exclude.replace("_", " ")
        return (f"{self.mode} between {bound(self.start, self.start_offset, 'preceding')} and "
                f"{bound(self.end, self.end_offset, 'following')}{ex}")


DEFAULT_FRAME = WindowFrame()


@dataclass(frozen=True)
class WindowFunc:
    """One window function over the record: ``name`` is a ranking/value function or, when
    ``agg`` is set, ``"aggregate"``; ``args`` are record positions (an aggregate has one:
    its input value, FILTER already applied as NULL); ``order`` is over record positions."""
    name: str
    args: tuple[int, ...]
    order: tuple[ColumnOrder, ...]
    frame: WindowFrame
    output_type: str
    agg: Optional[AggregateExpr] = None

    def describe(self) -> str:
        fn = self.agg.func if self.agg is not None else self.name
        parts = [f"{fn}({', '.join(f'#{a}' for a in self.args)})"]
        if self.order:
            parts.append("order_by=[" + ", ".join(
                f"#{o.column}{' desc' if o.desc else ' asc'}{' nulls_last' if o.nulls_last else ' nulls_first'}"
                for o in self.order) + "]")
        if self.frame != DEFAULT_FRAME and (self.agg is not None or self.name in VALUE_FUNCS):
            parts.append(self.frame.describe())
        return " ".join(parts)


@dataclass(frozen=True)
class WindowAggregateExpr(AggregateExpr):
    """``AggregateExpr(func="window", expr=record(row), ...)`` computing ``funcs``; its
    output (type ``list``) is the partition's rows each followed by the functions' values."""
    funcs: tuple[WindowFunc, ...] = ()

    def describe(self, record_text: str) -> str:
        return "window[" + "; ".join(f.describe() for f in self.funcs) + f"]({record_text})"


def unnest_window(lst):
    """The ``unnest_window`` table function: a window aggregate's list back to rows."""
    return lst if lst is not None else ()
