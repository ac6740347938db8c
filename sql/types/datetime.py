"""The SQL date/time types ``date``, ``time``, ``timestamp``, ``timestamptz``, ``interval``
and Materialize's ``mz_timestamp``.

Owns their names, PostgreSQL's display names (``timestamp without time zone``, ...),
typcategory ``D`` (date/time; ``timestamptz`` and ``mz_timestamp`` preferred) and ``T``
(``interval``, preferred), the user spellings pglast does not already normalize, their
casts with PostgreSQL's pg_cast contexts (plus Materialize's ``mz_timestamp`` conversions:
implicit from the integers, ``numeric``, ``date``/``timestamp``/``timestamptz``, the way a
temporal filter ``mz_now() <= created_at + INTERVAL '1 day'`` compares, and back by
assignment or explicitly), their input functions (``repr.dates``, ``repr.strconv``), and
their type modifiers (``typmod_for_datetime``): ``timestamp(p)``, ``timestamptz(p)``,
``time(p)`` and ``interval(p)`` / ``interval day to second(p)`` / ``interval hour``: the
modifier rides beside the unchanged type, and the binder inserts ``typmod_<type>``
(``repr.dates_typmod``) on casts and assignments.
Invariant: every cast here has its ``cast_<from>_to_<to>`` in ``expr.functions.datetime``.
Deliberately not here: the functions (``sql.functions.datetime``).
"""
from __future__ import annotations

from repr.dates import PARSERS as _DATE_PARSERS
from repr.strconv import parse_mz_timestamp
from sql.types.common import bad as _bad, io_casts

#: the date/time types (the order is PostgreSQL's implicit-cast direction)
DATETIME_TYPES = ("date", "time", "timestamp", "timestamptz", "interval")

TYPES = {"date": ("date", "D", False), "time": ("time without time zone", "D", False),
         "timestamp": ("timestamp without time zone", "D", False),
         "timestamptz": ("timestamp with time zone", "D", True), "interval": ("interval", "T", True),
         "mz_timestamp": ("mz_timestamp", "D", True)}
SPELLINGS = {"date": "date", "time": "time", "time without time zone": "time", "timestamp": "timestamp",
             "timestamp without time zone": "timestamp", "timestamptz": "timestamptz",
             "timestamp with time zone": "timestamptz", "interval": "interval", "mz_timestamp": "mz_timestamp"}
CASTS = {
    **io_casts(*DATETIME_TYPES, "mz_timestamp"),
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
    **{(t, "mz_timestamp"): "implicit" for t in ("int2", "int4", "int8", "numeric")},
    ("mz_timestamp", "numeric"): "explicit",
}
PARSERS = {**_DATE_PARSERS, "mz_timestamp": parse_mz_timestamp}


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
