"""Writes: UPDATE, DELETE, committing a statement's updates, and transactions.

Owns the path from a write's updates to table storage (``Writer.apply``, ``Writer.commit``),
the UPDATE and DELETE handlers and plans, evaluating a write's relation (``evaluate``) and
the NOT NULL check (``check_not_null``).  Invariants: a statement's writes are validated
completely (NOT NULL, evaluation errors) before any is applied, so a failed statement
changes nothing; outside an explicit transaction a statement commits at one timestamp;
inside one, writes accumulate and COMMIT applies them all at one timestamp (group commit),
ROLLBACK discards them.  UPDATE and DELETE read the rows they change through the read path,
so a WHERE that pins an indexed key is a key lookup, not a scan.
Deliberately not here: INSERT's rows (``mzlite.bulk``), choosing timestamps (the oracle),
storage internals.
"""
from __future__ import annotations

from collections import Counter
from operator import itemgetter
from typing import Optional

from expr import relation as R
from expr.compile import compile_predicates, compile_scalar
from expr.finishing import RowSetFinishing
from expr.scalar import Column
from mzlite.cursor import Result
from planner.optimize import optimize
from planner.plans import UpdatePlan
from sql import errors as E
from sql.types import display_name


def update(db, session, plan, stmt, params) -> Result:
    """The sequencer's handler of an ``UpdatePlan``.  Refused in a transaction block: its
    retractions would apply at COMMIT to rows another connection may have changed meanwhile
    (a lost update that corrupts the table)."""
    session.refuse_in_transaction(plan)
    rows = db.writer.update(session, plan)
    return _returning(plan, "UPDATE", rows)


def delete(db, session, plan, stmt, params) -> Result:
    """The sequencer's handler of a ``DeletePlan`` (refused in a transaction block, as UPDATE)."""
    session.refuse_in_transaction(plan)
    rows = db.writer.delete(session, plan)
    return _returning(plan, "DELETE", rows)


def _returning(plan, tag: str, rows) -> Result:
    """The result of an UPDATE (``rows`` its new rows) or DELETE (the deleted rows), with
    RETURNING's rows when it has the clause."""
    n = len(rows)
    if not plan.returning:
        return Result(f"{tag} {n}", None, rowcount=n)
    fns = [compile_scalar(e) for e in plan.returning]
    out = [tuple(f(r) for f in fns) for r in rows]
    return Result(f"{tag} {n}", [(c, display_name(t)) for c, t in plan.returning_columns], out, n)


class Writer:
    """The write machinery of one ``Database`` (see the module docstring)."""

    def __init__(self, db):
        self.db = db
        #: table id -> its ``mzlite.constraints.TableConstraints`` (tables that declare any)
        self.constraints: dict = {}

    # -------------------------------------------------------------- statements
    def update(self, session, plan) -> list:
        """Apply the UPDATE ``plan``; its rows' new values."""
        table = self.db.catalog.get(plan.table_id)
        arity = table.arity()
        selection = self._selection(plan, arity)
        assigned = dict(plan.assignments)
        scalars = tuple(assigned.get(i, Column(i)) for i in range(arity))
        expr = R.Map(selection, scalars)
        pairs = self.evaluate(session, expr)
        old_new = [(row[:arity], row[arity:]) for row in pairs]
        self.check_not_null(plan, [n for _, n in old_new])
        updates = []
        for old, new in old_new:
            if old != new:
                updates.append((old, -1))
                updates.append((new, 1))
        self.apply(session, {plan.table_id: updates})
        return [n for _, n in old_new]

    def delete(self, session, plan) -> list:
        """Apply the DELETE ``plan``; the deleted rows."""
        table = self.db.catalog.get(plan.table_id)
        rows = self.evaluate(session, self._selection(plan, table.arity()))
        self.apply(session, {plan.table_id: [(r, -1) for r in rows]})
        return rows

    def modify_many(self, session, plans) -> Optional[int]:
        """executemany of UPDATE/DELETE as one write: each plan sees the committed state plus
        the earlier plans' changes, all validated before anything is applied.  ``None``
        when a plan's WHERE has subqueries (it cannot be evaluated on pending rows)."""
        session.refuse_in_transaction(plans[0])  # as each statement alone would be
        if any(p.selection is not None for p in plans):
            return None
        pending: dict = {}
        total = 0
        for plan in plans:
            table = self.db.catalog.get(plan.table_id)
            arity = table.arity()
            rows = self.evaluate(session, self._selection(plan, arity))
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
                self.check_not_null(plan, news)
                for old, new in zip(rows, news):
                    pend[old] = pend.get(old, 0) - 1
                    pend[new] = pend.get(new, 0) + 1
            else:
                for old in rows:
                    pend[old] = pend.get(old, 0) - 1
        self.apply(session, {tid: [(r, d) for r, d in ups.items() if d] for tid, ups in pending.items()})
        return total

    # -------------------------------------------------------------- helpers
    def _selection(self, plan, arity: int):
        if plan.selection is not None:
            return plan.selection
        get = R.Get(plan.table_id, arity)
        return R.Filter(get, tuple(plan.predicates)) if plan.predicates else get

    def evaluate(self, session, expr) -> list[tuple]:
        """The rows of a write's relation (``expr`` optimized here): a constant's rows, or a
        read at the statement's timestamp (the statement lock stays held)."""
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

    def check_not_null(self, plan, rows) -> None:
        """23502 for the first row (in order) with a NULL in one of ``plan.not_null``'s columns."""
        nn = plan.not_null
        if not nn:
            return
        for row in rows:
            for i in nn:
                if row[i] is None:
                    name = plan.column_names[i] if i < len(plan.column_names) else str(i)
                    raise E.error_for(
                        E.NOT_NULL_VIOLATION,
                        f'null value in column "{name}" of relation "{plan.table_name}" violates not-null constraint')

    def apply(self, session, writes: dict, consolidated: bool = False) -> None:
        """Commit ``writes`` (table id -> ``(row, diff)`` list, or a ``row -> diff`` dict
        with no zero diff, which counts as consolidated) at a new timestamp, or add them to
        the explicit transaction.  ``consolidated``: the caller guarantees each row
        appears once with a non-zero diff, so the pass that sums them is skipped.  Every
        table write passes its table's constraints first (``mzlite.constraints``): this is
        the one path INSERT, UPDATE, DELETE and COPY share."""
        txn = session.txn
        constraints = self.constraints
        if txn is not None and txn.explicit:
            session.note_write()
            for tid, ups in writes.items():
                cons = constraints.get(tid)
                if cons is not None:  # against the committed state plus the transaction's earlier writes
                    txn.key_deltas[tid] = cons.merge(txn.key_deltas.get(tid), cons.validate(ups, txn.key_deltas.get(tid)))
            for tid, ups in writes.items():
                txn.writes.setdefault(tid, []).extend(ups.items() if ups.__class__ is dict else ups)
            return
        if not consolidated:
            writes = {tid: ups if ups.__class__ is dict else _consolidate(ups) for tid, ups in writes.items()}
        self._commit(session, writes)

    def _commit(self, session, writes: dict) -> None:
        """Validate ``writes`` (consolidated) against every table's constraints, commit them
        at one timestamp, then maintain the constraints' key counts."""
        if not any(writes.values()):
            return
        constraints = self.constraints
        checked = [(cons, cons.validate(ups)) for tid, ups in writes.items()
                   if ups and (cons := constraints.get(tid)) is not None]
        self.db.storage.commit(writes)
        for cons, deltas in checked:
            cons.applied(deltas)
        undo = session.undo
        if undo is not None:
            undo.append(writes)

    def commit(self, session) -> None:
        """COMMIT: apply the explicit transaction's writes at one timestamp (none when it
        failed), validated again against the state they commit onto."""
        txn = session.txn
        self.db.reader.end_transaction(session)
        if txn is None or txn.failed:
            return
        writes = {tid: _consolidate(ups) for tid, ups in txn.writes.items()
                  if tid in self.db.storage.collections}
        self._commit(session, writes)

    def rollback_implicit(self, session) -> None:
        """Undo the writes a failed multi-statement string committed before its failing
        statement (``session.undo``): their negation commits at one new timestamp, so the
        string as a whole changed nothing.  See ``Database._execute_sql``."""
        undo, session.undo = session.undo, None
        if not undo:
            return
        acc: dict = {}
        for writes in undo:
            for tid, ups in writes.items():
                if tid not in self.db.storage.collections:
                    continue  # dropped meanwhile (by the string itself)
                t = acc.setdefault(tid, {})
                for row, d in (ups.items() if ups.__class__ is dict else ups):
                    t[row] = t.get(row, 0) - d
        writes = {tid: [(r, d) for r, d in ups.items() if d] for tid, ups in acc.items()}
        if not any(writes.values()):
            return
        # an undo restores a state that satisfied the constraints: only the key counts move
        checked = [(cons, cons.validate(ups, None, checks=False)) for tid, ups in writes.items()
                   if ups and (cons := self.constraints.get(tid)) is not None]
        self.db.storage.commit(writes)
        for cons, deltas in checked:
            cons.applied(deltas)


def _consolidate(updates: list) -> list:
    if len(updates) > 64 and set(map(itemgetter(1), updates)) == {1}:
        # all inserts (a bulk load): nothing can cancel, and a repeated row is the same
        # update as one row with its count, so the list is already consolidated enough
        return updates
    acc: dict = {}
    for row, d in updates:
        acc[row] = acc.get(row, 0) + d
    return [(row, d) for row, d in acc.items() if d]
