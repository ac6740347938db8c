"""Writes: INSERT, UPDATE, DELETE and transactions.

Owns the path from a write plan to updates committed to table storage.  Invariants:
a statement's writes are validated completely (NOT NULL, evaluation errors) before any
is applied, so a failed statement changes nothing (a multi-row INSERT with one bad row
inserts none); outside an explicit transaction a statement commits at one timestamp;
inside one, writes accumulate and COMMIT applies them all at one timestamp (group
commit), ROLLBACK discards them.  UPDATE and DELETE read the rows they change through
the read path, so a WHERE that pins an indexed key is a key lookup, not a scan.
Deliberately not here: choosing timestamps (the oracle) or storage internals.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Optional

from expr import relation as R
from expr.finishing import RowSetFinishing
from expr.scalar import Column
from planner.optimize import optimize
from sql import errors as E


class Writer:
    def __init__(self, db):
        self.db = db

    # -------------------------------------------------------------- statements
    def insert(self, session, plan) -> tuple[int, list]:
        rows = self._evaluate(session, plan.expr)
        self._check_not_null(plan, rows)
        self._apply(session, {plan.table_id: [(r, 1) for r in rows]})
        return len(rows), rows

    def insert_many(self, session, plans) -> int:
        """One write for every plan (executemany): all rows validated, then one commit."""
        writes: dict = {}
        total = 0
        for plan in plans:
            rows = self._evaluate(session, plan.expr)
            self._check_not_null(plan, rows)
            writes.setdefault(plan.table_id, []).extend((r, 1) for r in rows)
            total += len(rows)
        self._apply(session, writes)
        return total

    def update(self, session, plan) -> int:
        table = self.db.catalog.get(plan.table_id)
        arity = table.arity()
        selection = self._selection(plan, arity)
        assigned = dict(plan.assignments)
        scalars = tuple(assigned.get(i, Column(i)) for i in range(arity))
        expr = R.Map(selection, scalars)
        pairs = self._evaluate(session, expr)
        old_new = [(row[:arity], row[arity:]) for row in pairs]
        self._check_not_null(plan, [n for _, n in old_new])
        updates = []
        for old, new in old_new:
            if old != new:
                updates.append((old, -1))
                updates.append((new, 1))
        self._apply(session, {plan.table_id: updates})
        return len(old_new)

    def delete(self, session, plan) -> int:
        table = self.db.catalog.get(plan.table_id)
        rows = self._evaluate(session, self._selection(plan, table.arity()))
        self._apply(session, {plan.table_id: [(r, -1) for r in rows]})
        return len(rows)

    def modify_many(self, session, plans) -> Optional[int]:
        """executemany of UPDATE/DELETE as one write: each plan sees the committed state plus
        the earlier plans' changes, all validated before anything is applied.  ``None``
        when a plan's WHERE has subqueries (it cannot be evaluated on pending rows)."""
        from collections import Counter

        from expr.compile import compile_predicates, compile_scalar
        from planner.plans import UpdatePlan
        if any(p.selection is not None for p in plans):
            return None
        pending: dict = {}
        total = 0
        for plan in plans:
            table = self.db.catalog.get(plan.table_id)
            arity = table.arity()
            rows = self._evaluate(session, self._selection(plan, arity))
            pend = pending.setdefault(plan.table_id, {})
            if pend:
                check = compile_predicates(tuple(plan.predicates))
                counts = Counter(rows)
                for row, d in pend.items():
                    if d and check(row):
                        counts[row] += d
                rows = [r for r, c in counts.items() for _ in range(c) if c > 0]
            total += len(rows)
            if isinstance(plan, UpdatePlan):
                fns = [(i, compile_scalar(e)) for i, e in plan.assignments]
                news = []
                for old in rows:
                    new = list(old)
                    for i, f in fns:
                        new[i] = f(old)
                    news.append(tuple(new))
                self._check_not_null(plan, news)
                for old, new in zip(rows, news):
                    pend[old] = pend.get(old, 0) - 1
                    pend[new] = pend.get(new, 0) + 1
            else:
                for old in rows:
                    pend[old] = pend.get(old, 0) - 1
        self._apply(session, {tid: [(r, d) for r, d in ups.items() if d] for tid, ups in pending.items()})
        return total

    # -------------------------------------------------------------- helpers
    def _selection(self, plan, arity: int):
        if plan.selection is not None:
            return plan.selection
        get = R.Get(plan.table_id, arity)
        return R.Filter(get, tuple(plan.predicates)) if plan.predicates else get

    def _evaluate(self, session, expr) -> list[tuple]:
        expr = optimize(expr)
        if isinstance(expr, R.Constant):
            if expr.error is not None:
                raise E.error_for(expr.error[0], expr.error[1])
            out = []
            for row, c in expr.rows:
                if c < 0:
                    raise E.InternalError("negative multiplicity in a constant write")
                out.extend([row] * c)
            return out
        rows, _ = self.db.reader.read(session, expr, RowSetFinishing(), optimized=True)
        return rows

    def _check_not_null(self, plan, rows) -> None:
        nn = getattr(plan, "not_null", ())
        if not nn:
            return
        for row in rows:
            for i in nn:
                if row[i] is None:
                    name = plan.column_names[i] if i < len(plan.column_names) else str(i)
                    raise E.error_for(
                        E.NOT_NULL_VIOLATION,
                        f'null value in column "{name}" of relation "{plan.table_name}" violates not-null constraint')

    def _apply(self, session, writes: dict, consolidated: bool = False) -> None:
        """Commit ``writes`` (table id -> ``(row, diff)`` list, or a ``row -> diff`` dict
        with no zero diff, which counts as consolidated) at a new timestamp, or add them to
        the explicit transaction.  ``consolidated``: the caller guarantees each row
        appears once with a non-zero diff, so the pass that sums them is skipped."""
        txn = session.txn
        if txn is not None and txn.explicit:
            if txn.kind == "read":
                raise E.error_for(E.INVALID_TRANSACTION_STATE,
                                  "transaction in read-only mode: writes cannot follow reads in a transaction")
            txn.kind = "write"
            for tid, ups in writes.items():
                txn.writes.setdefault(tid, []).extend(ups.items() if ups.__class__ is dict else ups)
            return
        if not consolidated:
            writes = {tid: ups if ups.__class__ is dict else _consolidate(ups) for tid, ups in writes.items()}
        if any(writes.values()):
            self.db.storage.commit(writes)

    def commit(self, session) -> None:
        txn = session.txn
        session.txn = None
        if txn is None or txn.failed:
            return
        writes = {tid: _consolidate(ups) for tid, ups in txn.writes.items()
                  if tid in self.db.storage.collections}
        if any(writes.values()):
            self.db.storage.commit(writes)


def _consolidate(updates: list) -> list:
    if len(updates) > 64 and set(map(itemgetter(1), updates)) == {1}:
        # all inserts (a bulk load): nothing can cancel, and a repeated row is the same
        # update as one row with its count, so the list is already consolidated enough
        return updates
    acc: dict = {}
    for row, d in updates:
        acc[row] = acc.get(row, 0) + d
    return [(row, d) for row, d in acc.items() if d]
