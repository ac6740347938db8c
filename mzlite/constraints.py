"""Table constraints: PRIMARY KEY, UNIQUE and CHECK, enforced on every table write.

Owns ``TableConstraints`` (one per table that declares a constraint): the compiled CHECK
predicates and, per PRIMARY KEY / UNIQUE constraint, a dict from key value to the number of
committed rows holding it, maintained with the table (``applied`` after each commit), so
checking a written row costs one dict lookup per key, never a scan.

Invariants: every write to a table passes ``validate`` before it is applied (the one table
write path, ``mzlite.writes.Writer.apply`` and ``Writer.commit``, shared by INSERT,
UPDATE, DELETE, executemany, multi-statement strings and transactions), and every
committed write is passed to ``applied``; so a key's count is the number of committed rows
holding it, and never exceeds 1.  A key containing a NULL is not counted (NULLs are
distinct, as in PostgreSQL).  CHECK passes when the predicate is true or NULL.  Checks are
statement-level: a statement may move keys among its own rows (``UPDATE t SET a = a + 1``)
as long as the result is unique (PostgreSQL checks non-deferrable keys row by row, so it
refuses some such statements depending on the physical row order; we never do).  Inside an
explicit transaction each statement is validated against the committed state plus the
transaction's earlier writes, and COMMIT validates the whole transaction again against the
state it commits onto.
Deliberately not here: binding and naming constraints (``planner.bind_stmt``), NOT NULL
(``Writer.check_not_null``), foreign keys (refused when a table is created).
"""
from __future__ import annotations

from operator import itemgetter

from expr.compile import compile_scalar
from repr.strconv import to_text
from sql import errors as E


def _text(v) -> str:
    return "null" if v is None else to_text(v)


class _Key:
    """One PRIMARY KEY or UNIQUE constraint and the count of committed rows per key value."""

    __slots__ = ("name", "columns", "get", "single", "counts")

    def __init__(self, key):
        self.name = key.name
        self.columns = key.columns
        self.single = len(key.columns) == 1
        self.get = itemgetter(*key.columns)
        #: key value -> number of committed rows holding it (only keys without NULL)
        self.counts: dict = {}

    def deltas(self, updates) -> dict:
        """Key value -> net change in rows holding it, over ``updates`` ((row, diff) pairs)."""
        get = self.get
        out: dict = {}
        if self.single:
            for row, d in updates:
                k = get(row)
                if k is not None:
                    out[k] = out.get(k, 0) + d
        else:
            for row, d in updates:
                k = get(row)
                if None not in k:
                    out[k] = out.get(k, 0) + d
        return out

    def refuse(self, table: str, names, k):
        cols = ", ".join(names[i] for i in self.columns)
        vals = _text(k) if self.single else ", ".join(map(_text, k))
        return E.error_for(E.UNIQUE_VIOLATION, f'duplicate key value violates unique constraint "{self.name}"',
                           detail=f"Key ({cols})=({vals}) already exists.")


class TableConstraints:
    """The enforced constraints of one table (see the module docstring)."""

    def __init__(self, item):
        self.table = item.name
        self.names = item.column_names()
        self.keys = [_Key(k) for k in item.unique_keys]
        # PostgreSQL evaluates a table's CHECK constraints in name order
        self.checks = [(c.name, compile_scalar(c.predicate)) for c in sorted(item.checks, key=lambda c: c.name)]

    def validate(self, updates, pending=None, checks: bool = True) -> list:
        """Refuse ``updates`` ((row, diff) pairs or a row -> diff dict) when a written row fails
        a CHECK (23514) or the result would hold a key twice (23505), counting the committed
        rows and ``pending`` (earlier uncommitted deltas, as returned here; ``checks=False``
        skips the CHECKs and the refusals, for an undo).  Returns the
        per-key deltas of ``updates`` (for ``applied``, or to accumulate as ``pending``)."""
        if updates.__class__ is dict:
            updates = updates.items()
        if checks and self.checks:
            for row, d in updates:
                if d > 0:
                    for name, check in self.checks:
                        if check(row) is False:
                            raise E.error_for(
                                E.CHECK_VIOLATION,
                                f'new row for relation "{self.table}" violates check constraint "{name}"',
                                detail=f"Failing row contains ({', '.join(map(_text, row))}).")
        out = []
        for i, key in enumerate(self.keys):
            deltas = key.deltas(updates)
            counts = key.counts
            before = pending[i] if pending else None
            for k, d in deltas.items() if checks else ():
                if d > 0:
                    n = counts.get(k, 0) + d + (before.get(k, 0) if before else 0)
                    if n > 1:
                        raise key.refuse(self.table, self.names, k)
            out.append(deltas)
        return out

    @staticmethod
    def merge(pending, deltas) -> list:
        """``pending`` with ``deltas`` (both as ``validate`` returns them) added."""
        if not pending:
            return [dict(d) for d in deltas]
        for acc, ds in zip(pending, deltas):
            for k, d in ds.items():
                acc[k] = acc.get(k, 0) + d
        return pending

    def applied(self, deltas) -> None:
        """A write with these per-key ``deltas`` (from ``validate``) committed."""
        for key, ds in zip(self.keys, deltas):
            counts = key.counts
            for k, d in ds.items():
                n = counts.get(k, 0) + d
                if n:
                    counts[k] = n
                else:
                    counts.pop(k, None)


def for_table(item):
    """The ``TableConstraints`` of catalog item ``item``, or None when it declares none."""
    if not item.unique_keys and not item.checks:
        return None
    return TableConstraints(item)
