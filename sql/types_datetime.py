"""SQL types ``date``, ``time``, ``timestamp``, ``timestamptz`` and ``interval``.

Owns their registration in ``sql.types``: short names, PostgreSQL's display names
(``timestamp without time zone``, ...), typcategory ``D`` (date/time, ``timestamptz``
preferred) and ``T`` (``interval``, preferred), the user spellings pglast does not already
normalize, and their casts with PostgreSQL's pg_cast contexts (plus Materialize's
``mz_timestamp`` conversions: implicit from ``date``/``timestamp``/``timestamptz``, the way
a temporal filter ``mz_now() <= created_at + INTERVAL '1 day'`` compares, and by
assignment back).  Casts to and from ``text`` follow ``sql.types``' general rule.
Also their type modifiers (``typmod_for_datetime``): ``timestamp(p)``, ``timestamptz(p)``,
``time(p)`` and ``interval(p)`` / ``interval day to second(p)`` / ``interval hour``, following
``sql.types_exact``'s route (the modifier rides beside the unchanged type, and the binder
inserts ``typmod_<type>`` from ``expr.functions.datetime`` on casts and assignments).
Invariant: ``can_cast`` stays monotone (every entry is one context).
Deliberately not here: the literal input functions.  Values are Python ``datetime``
objects and compute's ``Interval`` (``repr.dates``), which ``sql`` may not import: the
planner installs ``repr.dates.PARSERS`` into ``sql.types.EXTRA_PARSERS`` (see the end of
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


#: PostgreSQL's MAX_TIMESTAMP_PRECISION / MAX_INTERVAL_PRECISION; larger requests are reduced
MAX_PRECISION = 6
#: an interval typmod's "all fields" range mask and "no precision given" value (PostgreSQL)
INTERVAL_FULL_RANGE = 0x7FFF
INTERVAL_FULL_PRECISION = 0xFFFF


def typmod_for_datetime(type_: str, mods) -> "tuple | None":
    """The modifier of a date/time type written with integer modifiers ``mods`` (as pglast
    gives them): ``(type_, p)`` for time/timestamp/timestamptz (``p`` reduced to 6, as
    PostgreSQL does with a warning), ``("interval", typmod)`` with PostgreSQL's packed
    interval typmod ``range << 16 | precision``; None when nothing is written."""
    mods = list(mods or ())
    if not mods:
        return None
    if type_ == "interval":
        rng = mods[0]
        prec = mods[1] if len(mods) > 1 else INTERVAL_FULL_PRECISION
        if len(mods) > 2:
            raise _bad("invalid INTERVAL type modifier", "42601")
        if prec != INTERVAL_FULL_PRECISION:
            if prec < 0:
                raise _bad(f"INTERVAL({prec}) precision must not be negative")
            prec = min(prec, MAX_PRECISION)
        if rng == INTERVAL_FULL_RANGE and prec == INTERVAL_FULL_PRECISION:
            return None
        return ("interval", (rng << 16) | prec)
    if len(mods) != 1:
        raise _bad("invalid type modifier", "42601")
    p = mods[0]
    word = {"time": "TIME", "timestamp": "TIMESTAMP", "timestamptz": "TIMESTAMP"}[type_]
    if p < 0:
        raise _bad(f"{word}({p}){' WITH TIME ZONE' if type_ == 'timestamptz' else ''} precision must not be "
                   f"negative")
    return (type_, min(p, MAX_PRECISION))


def _bad(msg: str, code: str = "22023"):
    from sql.errors import ProgrammingError
    return ProgrammingError(msg, sqlstate=code)
