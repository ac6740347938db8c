"""TopK: per group, the rows ranked ``offset <= rank < offset + limit``.

Owns ``TopKOp``.  Per group it keeps ``row -> count`` and a sorted index of the distinct
rows (``sortedcontainers.SortedKeyList``) under ``expr.order.sort_key_function`` (PostgreSQL's
NULL placement, ties broken by the whole row).  Invariants: ``push`` only accumulates; ``flush``
recomputes the window of each touched group by walking the sorted index from its start
(O(log n + offset + limit) per touched group, independent of the group's size when a
limit is set) and emits the difference from what it emitted before.  A row with negative
multiplicity is left out of the ranking and reported as the error ``Negative
multiplicity in TopK`` while it stays negative.
"""
from __future__ import annotations

from typing import Optional, Sequence

from sortedcontainers import SortedKeyList

from compute.render.operator import EMPTY, Operator, column_getter, take_touched
from expr.order import TOPK_NEG_MULT, sort_key_function
from expr.relation import ColumnOrder

__all__ = ["TopKOp"]


class TopKOp(Operator):
    needs_flush = True

    def __init__(self, group_key: Sequence[int], order_key: Sequence[ColumnOrder],
                 limit: Optional[int], offset: int = 0):
        self.group = column_getter(group_key)
        self.sort_key = sort_key_function(order_key)
        self.limit = limit
        self.offset = offset
        #: group -> [row -> count, SortedKeyList of the distinct rows, number of negative rows]
        self.groups: dict = {}
        #: group -> (row -> count emitted, number of negative rows reported)
        self.outputs: dict = {}
        self.touched: set = set()

    def push(self, port: int, chunk: list, time: int):
        groups = self.groups
        touched = self.touched
        gk = self.group
        for row, d in chunk:
            g = gk(row)
            st = groups.get(g)
            if st is None:
                st = groups[g] = [{}, SortedKeyList(key=self.sort_key), 0]
            touched.add(g)
            counts, order = st[0], st[1]
            c = counts.get(row, 0)
            n = c + d
            if n:
                counts[row] = n
                if not c:
                    order.add(row)
            else:
                del counts[row]
                order.remove(row)
            if (c < 0) != (n < 0):
                st[2] += 1 if n < 0 else -1
        return EMPTY, EMPTY

    def _window(self, counts: dict, order) -> tuple[dict, int]:
        """The window skipping negative rows (and counting them): walks the whole group."""
        skip = self.offset
        take = self.limit
        out: dict = {}
        neg = 0
        for row in order:
            c = counts[row]
            if c < 0:
                neg += 1
                continue
            if take is not None and take <= 0:
                continue  # keep walking only to count negative rows
            if skip:
                s = c if c < skip else skip
                skip -= s
                c -= s
                if not c:
                    continue
            if take is not None:
                c = c if c < take else take
                take -= c
            out[row] = c
        return out, neg

    def _window_fast(self, counts: dict, order) -> tuple[dict, int]:
        """The window when the group has no negative rows: stop after the limit."""
        skip = self.offset
        take = self.limit
        out: dict = {}
        for row in order:
            if take is not None and take <= 0:
                break
            c = counts[row]
            if skip:
                s = c if c < skip else skip
                skip -= s
                c -= s
                if not c:
                    continue
            if take is not None:
                c = c if c < take else take
                take -= c
            out[row] = c
        return out, 0

    def flush_pending(self) -> bool:
        return bool(self.touched)

    def flush(self, time: int, budget=None):
        oks: list = []
        errs: list = []
        groups = self.groups
        outputs = self.outputs
        for g in take_touched(self.touched, budget):
            st = groups.get(g)
            if st is None or not st[0]:
                new, neg = {}, 0
                groups.pop(g, None)
            else:
                counts, order, nneg = st
                if nneg:
                    new, neg = self._window(counts, order)
                else:
                    new, neg = self._window_fast(counts, order)
            old, oldneg = outputs.get(g, ({}, 0))
            for row, c in old.items():
                n = new.get(row, 0)
                if n != c:
                    oks.append((row, n - c))
            for row, c in new.items():
                if row not in old:
                    oks.append((row, c))
            if neg != oldneg:
                errs.append((TOPK_NEG_MULT, neg - oldneg))
            if new or neg:
                outputs[g] = (new, neg)
            else:
                outputs.pop(g, None)
        return oks, (errs or EMPTY)
