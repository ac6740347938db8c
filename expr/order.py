"""The order of rows under an ORDER BY: one sort key function for TopK and window partitions.

Owns ``sort_key_function``: ``row -> tuple`` whose natural order is the order of a list of
``ColumnOrder`` (ASC/DESC, PostgreSQL's NULL placement: NULLS LAST unless told, NaN above
every number), ties broken by the whole row (NULLs last), so an ordering is a function of
the rows' multiset.  Used by ``compute.render.topk`` (a group's sorted index), the window
partition evaluation (``expr.window_eval``) and ``expr.interpret`` (TopK over constants);
it is the order of ``tests.support.reference.cmp_by_order``.  Also the error TopK reports for
a row of negative multiplicity (``TOPK_NEG_MULT``).  Deliberately not here:
row-set finishing (``expr.finishing`` sorts a read's rows in its own passes).
"""
from __future__ import annotations

from decimal import Decimal
from typing import Sequence

from expr.relation import ColumnOrder

__all__ = ["sort_key_function", "TOPK_NEG_MULT"]

#: the error a TopK reports for each row of negative multiplicity (left out of the ranking)
TOPK_NEG_MULT = ("XX000", "Negative multiplicity in TopK")


class Desc:
    """A value ordered in reverse (for DESC on non-numeric types)."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return other.v < self.v

    def __gt__(self, other):
        return other.v > self.v

    def __eq__(self, other):
        return self.v == other.v

    def __hash__(self):
        return hash(self.v)


_NUMERIC = (int, float, Decimal)


def sort_key_function(order_key: Sequence[ColumnOrder]):
    """``row -> tuple`` whose natural order is the TopK order (ties by the whole row)."""
    order = tuple(order_key)

    def key(row):
        k = []
        for o in order:
            v = row[o.column]
            if v is None:
                k.append(1 if o.nulls_last else 0)
                k.append(0)
                k.append(0)
            else:
                k.append(0 if o.nulls_last else 1)
                if isinstance(v, _NUMERIC) and not isinstance(v, int) and _nan(v):
                    k.append(-1 if o.desc else 1)  # NaN above every number
                    k.append(0)
                elif o.desc:
                    k.append(0)
                    k.append(-v if isinstance(v, _NUMERIC) else Desc(v))
                else:
                    k.append(0)
                    k.append(v)
        for v in row:
            if v is None:
                k.append(2)
                k.append(0)
            elif isinstance(v, _NUMERIC) and not isinstance(v, int) and _nan(v):
                k.append(1)
                k.append(0)
            else:
                k.append(0)
                k.append(v)
        return tuple(k)
    return key


def _nan(v) -> bool:
    return v != v if isinstance(v, float) else v.is_nan()
