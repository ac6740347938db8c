"""Render result values as the sqllogictest runners print them, and compare/hash them.

Owns: the value -> text rules of SQLite's runner (standard mode) and Materialize's runner
(cockroach mode, type letters B and O, booleans in T columns), the sort modes, the MD5
result hash, and psql-style text for `simple` blocks.

Invariant: rendering is a pure function of (type letter, mode, value); renderers are
chosen once per query (one per column) and then applied per value, and the hash is exactly
SQLite's: md5 over each rendered value followed by "\\n", in output order after sorting.

Rules (SQLite's runner and Materialize's, reconciled):
  NULL -> "NULL" in every column.
  T: "" -> "(empty)"; bool -> true/false; float -> "%.3f"; numeric -> plain notation;
     in standard mode control characters (< 0x20) become "@" as SQLite's runner does;
     cockroach mode (Materialize's runner) prints them as they are.
  I: int -> decimal; bool -> 1/0; float and numeric -> truncated toward zero (SQLite's
     sqlite3_column_int); text -> its leading integer prefix, else 0 (sqlite3_column_int).
  R: "%.3f" of the number in standard mode; cockroach mode prints floats in shortest
     form without exponent (Rust's `{}`) and numerics as they are; an integer value prints
     as an integer in both (Materialize's runner formats it with `{:.3}`, which Rust
     ignores for integers).
  B: true/false.   O: decimal.

Deliberately not here: parsing expected output (parser.py), running queries (runner.py).
"""
from __future__ import annotations

import hashlib
import math
import re
from decimal import ROUND_DOWN, Decimal, InvalidOperation

__all__ = ["renderers_for", "render_rows", "sort_values", "md5_of", "pg_text",
           "rust_float"]

_INT_PREFIX = re.compile(r"\s*([+-]?\d+)")
_FLOAT_PREFIX = re.compile(r"\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)")
_CTRL = re.compile(r"[\x00-\x1f]")


def rust_float(f: float) -> str:
    """Rust's `format!("{}", f64)`: shortest round-trip digits, never exponent notation."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f == int(f) and abs(f) < 1e16:
        s = str(int(f))
        return "-0" if s == "0" and math.copysign(1.0, f) < 0 else s
    s = format(Decimal(repr(f)), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def _decimal_plain(d: Decimal) -> str:
    if not d.is_finite():
        return "NaN" if d.is_nan() else ("Infinity" if d > 0 else "-Infinity")
    return format(d, "f")


def _text_std(v):
    if v.__class__ is str:
        if not v:
            return "(empty)"
        if _CTRL.search(v):
            return _CTRL.sub("@", v)
        return v
    return _text_other(v)


def _text_raw(v):
    if v.__class__ is str:
        return v if v else "(empty)"
    return _text_other(v)


def _text_other(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        return "%.3f" % v
    if isinstance(v, Decimal):
        return _decimal_plain(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError:
            return repr(b)
    s = str(v)
    return s if s else "(empty)"


def _int(v):
    c = v.__class__
    if c is int:
        return str(v)
    if c is bool:
        return "1" if v else "0"
    if c is float:
        if math.isnan(v):
            return "0"
        if math.isinf(v):
            return str(9223372036854775807 if v > 0 else -9223372036854775808)
        return str(int(v))
    if c is str:
        m = _INT_PREFIX.match(v)
        return str(int(m.group(1))) if m else "0"
    if isinstance(v, Decimal):
        if not v.is_finite():
            return "0"
        return str(int(v.to_integral_value(rounding=ROUND_DOWN)))
    if isinstance(v, int):
        return str(int(v))
    return str(v)


def _real_std(v):
    c = v.__class__
    if c is int:  # Materialize's runner: Rust's {:.3} ignores the precision of an integer
        return str(v)
    if c is float:
        return "%.3f" % v
    if c is bool:
        return "1.000" if v else "0.000"
    if isinstance(v, Decimal):
        if not v.is_finite():
            return _decimal_plain(v)
        return format(v, ".3f")
    if c is str:
        m = _FLOAT_PREFIX.match(v)
        return "%.3f" % (float(m.group(1)) if m else 0.0)
    try:
        return "%.3f" % v
    except TypeError:
        return str(v)


def _real_cockroach(v):
    c = v.__class__
    if c is float:
        return rust_float(v)
    if isinstance(v, Decimal):
        return _decimal_plain(v)
    return _real_std(v)


def _bool(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float, Decimal)):
        return "true" if v else "false"
    return str(v)


def _oid(v):
    return str(v)


_STD = {"T": _text_std, "I": _int, "R": _real_std, "B": _bool, "O": _oid}
_CRDB = {"T": _text_raw, "I": _int, "R": _real_cockroach, "B": _bool, "O": _oid}


def renderers_for(types: str, mode: str = "standard", multiline: bool = False):
    """One renderer per column (NULL is handled by ``render_rows``)."""
    table = _CRDB if mode == "cockroach" else _STD
    out = [table[t] for t in types]
    if multiline:
        out = [_text_raw if t == "T" else table[t] for t in types]
    return out


def render_rows(rows, renderers) -> list:
    """Rows of Python values -> rows (lists) of rendered strings."""
    out = []
    append = out.append
    if len(renderers) == 1:
        r0 = renderers[0]
        for row in rows:
            v = row[0]
            append(["NULL" if v is None else r0(v)])
        return out
    pairs = list(enumerate(renderers))
    for row in rows:
        append(["NULL" if row[i] is None else r(row[i]) for i, r in pairs])
    return out


def sort_values(rendered_rows: list, sort: str) -> list:
    """Apply the sort mode and flatten: rowsort orders rows by their rendered columns
    (as SQLite's runner: column by column with strcmp), valuesort orders all values."""
    if sort == "rowsort":
        rendered_rows = sorted(rendered_rows)
    values = [v for row in rendered_rows for v in row]
    if sort == "valuesort":
        values.sort()
    return values


def md5_of(values) -> str:
    # the same bytes as updating with each value and then "\n", in one call
    if not values:
        return hashlib.md5(b"").hexdigest()
    return hashlib.md5(("\n".join(values) + "\n").encode("utf-8")).hexdigest()


def pg_text(v) -> str:
    """PostgreSQL's text output format, as a `simple` block prints a value."""
    if v is None:
        return "NULL"
    if v is True:
        return "t"
    if v is False:
        return "f"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        s = repr(v)
        if s.endswith(".0"):
            s = s[:-2]
        return s
    if isinstance(v, Decimal):
        try:
            return _decimal_plain(v)
        except (InvalidOperation, ValueError):
            return str(v)
    return str(v)
