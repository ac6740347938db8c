"""The user-facing error hierarchy (PEP 249 names), re-exported as ``mzlite.Error`` & co.

Owns: the exception classes and the mapping from a PostgreSQL SQLSTATE to the PEP 249
class that carries it.  Invariant: every error raised to a user of mzlite is an
instance of ``Error`` with a five-character ``sqlstate``; ``position`` is a 1-based
character offset into the statement text, or ``None``.  Deliberately not here: data
errors inside compute (``compute.errors.EvalError``), which the coordinator converts
with ``error_for`` when a read surfaces one.
"""
from __future__ import annotations

from typing import Optional


class Warning(Exception):  # noqa: A001 - PEP 249 name
    pass


class Error(Exception):
    """Base class of every mzlite error.  ``sqlstate`` is PostgreSQL's code."""

    default_sqlstate = "XX000"

    def __init__(self, message: str, sqlstate: Optional[str] = None, position: Optional[int] = None,
                 detail: Optional[str] = None, hint: Optional[str] = None, context: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate or self.default_sqlstate
        self.position = position
        self.detail = detail
        self.hint = hint
        #: where the error happened, as PostgreSQL's CONTEXT field says it (``COPY t, line 3,
        #: column a: "x"``); None when there is nothing to say
        self.context = context

    # psycopg spells it pgcode
    @property
    def pgcode(self) -> str:
        return self.sqlstate

    def __str__(self) -> str:
        return self.message if self.context is None else f"{self.message}\nCONTEXT:  {self.context}"


class InterfaceError(Error):
    default_sqlstate = "08000"


class DatabaseError(Error):
    pass


class DataError(DatabaseError):
    default_sqlstate = "22000"


class OperationalError(DatabaseError):
    default_sqlstate = "58000"


class IntegrityError(DatabaseError):
    default_sqlstate = "23000"


class InternalError(DatabaseError):
    default_sqlstate = "XX000"


class ProgrammingError(DatabaseError):
    default_sqlstate = "42000"


class NotSupportedError(DatabaseError):
    default_sqlstate = "0A000"


class QueryCanceled(OperationalError):
    default_sqlstate = "57014"


# Commonly used SQLSTATEs, named as PostgreSQL names them.
SYNTAX_ERROR = "42601"
UNDEFINED_TABLE = "42P01"
UNDEFINED_COLUMN = "42703"
UNDEFINED_FUNCTION = "42883"
UNDEFINED_OBJECT = "42704"
AMBIGUOUS_COLUMN = "42702"
DUPLICATE_TABLE = "42P07"
DUPLICATE_OBJECT = "42710"
DUPLICATE_COLUMN = "42701"
DATATYPE_MISMATCH = "42804"
INVALID_COLUMN_REFERENCE = "42P10"
GROUPING_ERROR = "42803"
WRONG_OBJECT_TYPE = "42809"
DEPENDENT_OBJECTS_STILL_EXIST = "2BP01"
NOT_NULL_VIOLATION = "23502"
NUMERIC_VALUE_OUT_OF_RANGE = "22003"
DIVISION_BY_ZERO = "22012"
INVALID_TEXT_REPRESENTATION = "22P02"
INVALID_PARAMETER_VALUE = "22023"
CARDINALITY_VIOLATION = "21000"
FEATURE_NOT_SUPPORTED = "0A000"
QUERY_CANCELED = "57014"
ACTIVE_SQL_TRANSACTION = "25001"
NO_ACTIVE_SQL_TRANSACTION = "25P01"
IN_FAILED_SQL_TRANSACTION = "25P02"
INVALID_TRANSACTION_STATE = "25000"
UNDEFINED_PARAMETER = "42704"
INTERNAL_ERROR = "XX000"


def class_for(sqlstate: str) -> type[Error]:
    """The PEP 249 class for a SQLSTATE, following psycopg's mapping by class code."""
    if sqlstate == QUERY_CANCELED:
        return QueryCanceled
    cls = sqlstate[:2]
    if cls == "0A":
        return NotSupportedError
    if cls in ("22",):
        return DataError
    if cls in ("23",):
        return IntegrityError
    if cls in ("42", "2B", "21", "34", "3D", "3F", "44"):
        return ProgrammingError
    if cls in ("25", "26", "27", "28", "2D", "40", "53", "54", "55", "57", "58", "08", "0B", "F0", "P0"):
        return OperationalError
    if cls == "XX":
        return InternalError
    return DatabaseError


def error_for(sqlstate: str, message: str, position: Optional[int] = None, **kw) -> Error:
    """An instance of the right ``Error`` subclass for ``sqlstate``."""
    return class_for(sqlstate)(message, sqlstate=sqlstate, position=position, **kw)
