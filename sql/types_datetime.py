"""SQL types ``date``, ``time``, ``timestamp``, ``timestamptz`` and ``interval``.

Owns their registration in ``sql.types``: short names, PostgreSQL's display names
(``timestamp without time zone``, ...), typcategory ``D`` (date/time, ``timestamptz``
preferred) and ``T`` (``interval``, preferred), the user spellings pglast does not already
normalize, and their casts with PostgreSQL's pg_cast contexts (plus Materialize's
``mz_timestamp`` conversions: implicit from ``date``/``timestamp``/``timestamptz``, the way
a temporal filter ``mz_now() <= created_at + INTERVAL '1 day'`` compares, and by
assignment back).  Casts to and from ``text`` follow ``sql.types``' general rule.
Invariant: ``can_cast`` stays monotone (every entry is one context).
Deliberately not here: the literal input functions.  Values are Python ``datetime``
objects and compute's ``Interval`` (``compute.dates``), which ``sql`` may not import: the
planner installs ``compute.dates.PARSERS`` into ``sql.types.EXTRA_PARSERS`` (see the end of
``planner.bind_expr``), so literals and run-time casts share one parser.  Signatures
live in ``sql.functions_datetime``.
"""
from __future__ import annotations

from sql import types as T

T.register_type("date", "date", "D", False)
T.register_type("time", "time without time zone", "D", False,
                spellings=("time without time zone",))
T.register_type("timestamp", "timestamp without time zone", "D", False,
                spellings=("timestamp without time zone",))
T.register_type("timestamptz", "timestamp with time zone", "D", True,
                spellings=("timestamp with time zone",))
T.register_type("interval", "interval", "T", True)

#: the date/time types (the order is PostgreSQL's implicit-cast direction)
DATETIME_TYPES = ("date", "time", "timestamp", "timestamptz", "interval")

T.EXTRA_CASTS.update({
    ("date", "timestamp"): "implicit",
    ("date", "timestamptz"): "implicit",
    ("timestamp", "timestamptz"): "implicit",
    ("timestamptz", "timestamp"): "assignment",
    ("timestamp", "date"): "assignment",
    ("timestamptz", "date"): "assignment",
    ("timestamp", "time"): "assignment",
    ("timestamptz", "time"): "assignment",
    ("time", "interval"): "implicit",
    ("interval", "time"): "assignment",
    # Materialize: timestamps compare with mz_now() as milliseconds since the epoch
    ("date", "mz_timestamp"): "implicit",
    ("timestamp", "mz_timestamp"): "implicit",
    ("timestamptz", "mz_timestamp"): "implicit",
    ("mz_timestamp", "timestamp"): "assignment",
    ("mz_timestamp", "timestamptz"): "assignment",
})
