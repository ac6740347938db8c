"""Data errors raised while evaluating maintained data.

Owns ``EvalError``: an error that belongs to the *data* (division by zero inside a
view, an overflow), not to the statement that created the view.  Operators catch it
and route it into the dataflow's error collection as the row ``(sqlstate, message)``;
a read of the collection surfaces it, and the runtime goes on.  Deliberately not
here: the user-facing exception hierarchy (``sql.errors`` / ``mzlite.Error``), which
the coordinator maps these onto when a read surfaces one.
"""
from __future__ import annotations


class EvalError(Exception):
    """A SQL evaluation error with its PostgreSQL SQLSTATE."""

    def __init__(self, sqlstate: str, message: str):
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message

    def as_row(self) -> tuple[str, str]:
        """The error as a row of the error collection (hashable, comparable)."""
        return (self.sqlstate, self.message)

    @classmethod
    def from_row(cls, row: tuple[str, str]) -> "EvalError":
        return cls(row[0], row[1])


class ComputeProtocolError(AssertionError):
    """A violated protocol invariant (a sender broke a "must"): a bug, raised loudly."""
