"""Data errors: the errors that belong to the data, raised while evaluating it.

Owns ``EvalError``: an error that belongs to the *data* (division by zero inside a
view, an overflow, a value that does not parse), not to the statement that created the
view.  Operators catch it and route it into the dataflow's error collection as the row
``(sqlstate, message)``; a read of the collection surfaces it, and the runtime goes on.
``EvalErrorDetail`` adds PostgreSQL's DETAIL line (the adapter passes it on when the error
reaches the user directly, e.g. from an assignment's type modifier check).
Deliberately not here: the user-facing exception hierarchy (``sql.errors`` /
``mzlite.Error``), which the adapter maps these onto when a read surfaces one, and the
protocol's own violations (``compute.errors``).
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


class EvalErrorDetail(EvalError):
    """An ``EvalError`` with PostgreSQL's DETAIL line."""

    def __init__(self, sqlstate: str, message: str, detail: str):
        super().__init__(sqlstate, message)
        self.detail = detail
