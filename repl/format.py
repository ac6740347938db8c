"""Output formats of the ``mzlite`` command, byte-compatible with psql where psql has them.

Owns: turning a result (column names, display type names, rows of Python values) into text:
``aligned`` (psql's default table, border 1, multi-line cells with ``+`` markers, display
width of wide characters), ``expanded`` (psql's ``\\x``), ``csv`` (psql's ``--csv``),
``tsv`` and ``json`` (ours); the text form of each value as psql shows it; and psql's error
report (``ERROR:  msg``, ``LINE n: ...`` with a caret under the position, DETAIL, HINT).

Invariant: every function here is pure (values in, ``str`` out) and total: any row of
Python values renders without raising, so a display bug never hides a query's result.

Deliberately not here: running statements, choosing the format (``main``/``meta`` do), the
terminal width (callers pass it for ``\\x auto``), paging, and wrapped format.
"""
from __future__ import annotations

import csv
import io
import json
import math
import unicodedata
from dataclasses import dataclass
import datetime as _dt
from decimal import Decimal
from typing import Any, Optional, Sequence

FORMATS = ("aligned", "csv", "tsv", "json")

# psql right-aligns these types (its list: int2/4/8, float4/8, numeric, oid, money...).
NUMERIC_TYPES = frozenset({
    "smallint", "integer", "bigint", "numeric", "real", "double precision", "oid", "money",
    "int2", "int4", "int8", "float4", "float8", "decimal", "uint2", "uint4", "uint8",
})


@dataclass
class Settings:
    """What ``\\pset``, ``\\x`` and ``--format`` control."""

    format: str = "aligned"
    expanded: str = "off"  # on / off / auto
    null: str = ""
    footer: bool = True
    tuples_only: bool = False
    pager: bool = True  # the interactive shell pages tall results (batch mode never does)


# ---------------------------------------------------------------- values

def float8_text(x: float) -> str:
    """PostgreSQL 15's float8 output: shortest round-trip digits, exponent form when the
    decimal exponent is < -4 or >= 15."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    r = repr(x)
    sign = ""
    if r[0] == "-":
        sign, r = "-", r[1:]
    if "e" in r:
        mant, exp_s = r.split("e")
        exp = int(exp_s)
    else:
        mant, exp = r, 0
    if "." in mant:
        ip, fp = mant.split(".")
    else:
        ip, fp = mant, ""
    digits = (ip + fp).lstrip("0")
    # decimal exponent of the first significant digit
    lead_zeros = len(ip + fp) - len((ip + fp).lstrip("0"))
    e10 = len(ip) - 1 - lead_zeros + exp
    digits = digits.rstrip("0") or "0"
    if e10 < -4 or e10 >= 15:
        m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{m}e{'-' if e10 < 0 else '+'}{abs(e10):02d}"
    if e10 < 0:
        return sign + "0." + "0" * (-e10 - 1) + digits
    if len(digits) <= e10 + 1:
        return sign + digits + "0" * (e10 + 1 - len(digits))
    return sign + digits[:e10 + 1] + "." + digits[e10 + 1:]


def value_text(v: Any, null: str = "") -> str:
    """The text psql shows for a value (booleans as ``t``/``f``, NULL as ``null``)."""
    if v is None:
        return null
    if v is True:
        return "t"
    if v is False:
        return "f"
    if isinstance(v, float):
        return float8_text(v)
    if isinstance(v, Decimal):
        if v.is_nan():
            return "NaN"
        if v.is_infinite():
            return "Infinity" if v > 0 else "-Infinity"
        return format(v, "f")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(v).hex()
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(", ", ": "), ensure_ascii=False)
    if isinstance(v, (_dt.date, _dt.time)) or type(v).__name__ == "Interval":  # date/time family: PostgreSQL's text
        from mzlite.types import pg_text
        return pg_text(v)
    return str(v)


def display_width(s: str) -> int:
    """Screen columns of ``s``: East Asian wide/full-width characters take two, combining
    marks none, other characters (control characters too, as psql counts them) one."""
    w = 0
    for ch in s:
        if ch.isascii():
            w += 1
        elif unicodedata.combining(ch):
            continue
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            w += 2
        else:
            w += 1
    return w


def _lines(s: str) -> list[str]:
    return s.split("\n")


# ---------------------------------------------------------------- aligned

def format_aligned(names: Sequence[str], types: Sequence[Optional[str]], rows: Sequence[Sequence[Any]],
                   settings: Settings = Settings(), title: Optional[str] = None) -> str:
    """psql's aligned format (border 1), including the ``(N rows)`` footer and the blank
    line after it; ``title`` is centred above the table as psql centres ``\\d``'s."""
    ncols = len(names)
    right = [(t or "").lower() in NUMERIC_TYPES for t in types] + [False] * (ncols - len(types))
    header_lines = [_lines(n) for n in names]
    cells = [[_lines(value_text(v, settings.null)) for v in row] for row in rows]
    widths = [max((display_width(l) for l in h), default=0) for h in header_lines]
    for row in cells:
        for j, cell in enumerate(row):
            for line in cell:
                w = display_width(line)
                if w > widths[j]:
                    widths[j] = w
    out: list[str] = []
    if title is not None and not settings.tuples_only:
        total = sum(widths) + 3 * ncols - 1 if ncols else 0
        tw = display_width(title)
        out.append(" " * ((total - tw) // 2) + title if tw < total else title)
    if not settings.tuples_only:
        if ncols:
            nlines = max(len(h) for h in header_lines)
            for k in range(nlines):
                parts = []
                for j in range(ncols):
                    h = header_lines[j]
                    if k < len(h):
                        pad = widths[j] - display_width(h[k])
                        txt = " " * (pad // 2) + h[k] + " " * ((pad + 1) // 2)
                    else:
                        txt = " " * widths[j]
                    more = k + 1 < len(h)
                    parts.append(" " + txt + ("+" if more else " "))
                out.append("|".join(parts))
        out.append("+".join("-" * (w + 2) for w in widths) if ncols else "--")
    for row in cells:
        out.extend(_aligned_row(row, widths, right))
    if settings.footer and not settings.tuples_only:
        n = len(rows)
        out.append(f"({n} row{'' if n == 1 else 's'})")
    return "\n".join(out) + "\n\n"


def _aligned_row(row: list[list[str]], widths: list[int], right: list[bool]) -> list[str]:
    ncols = len(row)
    if ncols == 0:
        return []  # psql prints nothing for a row without columns
    nlines = max(len(c) for c in row)
    lines = []
    for k in range(nlines):
        buf = []
        for j, cell in enumerate(row):
            last = j == ncols - 1
            buf.append(" ")
            more = k + 1 < len(cell)
            if k < len(cell):
                txt = cell[k]
                pad = widths[j] - display_width(txt)
                if right[j]:
                    buf.append(" " * pad + txt)
                else:
                    buf.append(txt + (" " * pad if (not last or more) else ""))
            elif not last:
                buf.append(" " * widths[j])
            if more:
                buf.append("+")
            elif not last:
                buf.append(" ")
            if not last:
                buf.append("|")
        lines.append("".join(buf))
    return lines


# ---------------------------------------------------------------- expanded

def format_expanded(names: Sequence[str], types: Sequence[Optional[str]], rows: Sequence[Sequence[Any]],
                    settings: Settings = Settings(), title: Optional[str] = None) -> str:
    """psql's expanded format (``\\x on``), border 1."""
    if title is not None and not settings.tuples_only:
        return title + "\n" + format_expanded(names, types, rows, settings)
    if not rows:
        return "(0 rows)\n\n" if settings.footer and not settings.tuples_only else "\n"
    header_lines = [_lines(n) for n in names]
    cells = [[_lines(value_text(v, settings.null)) for v in row] for row in rows]
    hwidth = max((display_width(l) for h in header_lines for l in h), default=0)
    dwidth = max((display_width(l) for row in cells for c in row for l in c), default=0)
    out: list[str] = []
    for r, row in enumerate(cells, 1):
        if not settings.tuples_only:
            out.append(_record_line(r, hwidth, dwidth))
        elif r > 1:
            out.append("")
        for j, cell in enumerate(row):
            h = header_lines[j]
            hl = dl = 0
            hdone = ddone = False
            while not (hdone and ddone):
                buf = []
                if not hdone:
                    buf.append(h[hl] + " " * (hwidth - display_width(h[hl])))
                    if hl + 1 < len(h):
                        buf.append("+")
                        hl += 1
                    else:
                        buf.append(" ")
                        hdone = True
                else:
                    buf.append(" " * (hwidth + 1))
                buf.append("|")
                if not ddone:
                    buf.append(" " + cell[dl])
                    if dl + 1 < len(cell):
                        buf.append(" " * (dwidth - display_width(cell[dl])) + "+")
                        dl += 1
                    else:
                        ddone = True
                out.append("".join(buf))
    return "\n".join(out) + "\n\n"


def _record_line(record: int, hwidth: int, dwidth: int) -> str:
    # a port of psql's print_aligned_vertical_line for border 1
    head = f"[ RECORD {record} ]"
    buf = ["-", head]
    reclen = len(head) + 1
    buf.append("-" * max(0, hwidth - reclen))
    reclen -= hwidth
    for ch in "-+-":
        if reclen <= 0:
            buf.append(ch)
        reclen -= 1
    reclen = max(reclen, 0)
    buf.append("-" * max(0, dwidth - reclen))
    return "".join(buf)


def wants_expanded(names, types, rows, settings: Settings, terminal_width: Optional[int]) -> bool:
    """``\\x auto``: expanded when the aligned table would be wider than the terminal."""
    if settings.expanded == "on":
        return True
    if settings.expanded != "auto" or not terminal_width or not names:
        return False
    first = format_aligned(names, types, rows[:200], settings).split("\n", 1)[0]
    return display_width(first) > terminal_width


# ---------------------------------------------------------------- csv, tsv, json

def format_csv(names, types, rows, settings: Settings = Settings()) -> str:
    """psql's ``--csv``: header line, RFC 4180 quoting, no footer."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if not settings.tuples_only:
        w.writerow(names)
    for row in rows:
        w.writerow([value_text(v, settings.null) for v in row])
    return buf.getvalue()


def _tsv_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def format_tsv(names, types, rows, settings: Settings = Settings()) -> str:
    """Tab-separated: header line, then one line per row; backslash, tab and newline in
    values escaped as in PostgreSQL's COPY text format; NULL as the null string."""
    out = []
    if not settings.tuples_only:
        out.append("\t".join(_tsv_escape(n) for n in names))
    for row in rows:
        out.append("\t".join(_tsv_escape(value_text(v, settings.null)) for v in row))
    return "".join(line + "\n" for line in out)


def _json_text(v: Any) -> str:
    """One value as JSON text; numerics keep their exact digits, non-finite numbers and
    other types become strings."""
    if v is None or isinstance(v, (bool, int, str)):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else json.dumps(float8_text(v))
    if isinstance(v, Decimal):
        return format(v, "f") if v.is_finite() else json.dumps(value_text(v))
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return json.dumps(value_text(v), ensure_ascii=False)


def format_json(names, types, rows, settings: Settings = Settings()) -> str:
    """A JSON array of objects keyed by column name, one row per line."""
    if not rows:
        return "[]\n"
    keys = [json.dumps(n, ensure_ascii=False) for n in names]
    lines = ["{" + ", ".join(f"{k}: {_json_text(v)}" for k, v in zip(keys, row)) + "}" for row in rows]
    return "[" + ",\n".join(lines) + "]\n"


def format_result(names, types, rows, settings: Settings = Settings(),
                  terminal_width: Optional[int] = None, title: Optional[str] = None) -> str:
    """Render one result set in the chosen format."""
    fmt = settings.format
    if fmt == "csv":
        return format_csv(names, types, rows, settings)
    if fmt == "tsv":
        return format_tsv(names, types, rows, settings)
    if fmt == "json":
        return format_json(names, types, rows, settings)
    if wants_expanded(names, types, rows, settings, terminal_width):
        return format_expanded(names, types, rows, settings, title)
    return format_aligned(names, types, rows, settings, title)


# ---------------------------------------------------------------- errors

DISPLAY_SIZE = 60
MIN_RIGHT_CUT = 10


def error_position_lines(query: str, position: int) -> list[str]:
    """psql's (libpq's) ``LINE n: ...`` and caret lines for a 1-based character
    position in ``query``; long lines are cut with ``...`` as libpq cuts them."""
    loc = position - 1
    if loc < 0 or loc > len(query):
        return []
    scr = [0]  # screen column where each character starts
    line_no, ibeg, iend = 1, 0, -1
    chars = list(query.replace("\t", " "))
    for cno, ch in enumerate(chars):
        if ch in "\r\n":
            if cno < loc:
                if ch == "\r" or cno == 0 or chars[cno - 1] != "\r":
                    line_no += 1
                ibeg = cno + 1
            else:
                iend = cno
                break
        w = display_width(ch) if ch not in "\r\n" else 1
        scr.append(scr[-1] + max(w, 1))
    if iend < 0:
        iend = len(chars)
    beg_trunc = end_trunc = False
    if scr[iend] - scr[ibeg] > DISPLAY_SIZE:
        if scr[ibeg] + DISPLAY_SIZE >= scr[loc] + MIN_RIGHT_CUT:
            while scr[iend] - scr[ibeg] > DISPLAY_SIZE:
                iend -= 1
            end_trunc = True
        else:
            while scr[loc] + MIN_RIGHT_CUT < scr[iend]:
                iend -= 1
                end_trunc = True
            while scr[iend] - scr[ibeg] > DISPLAY_SIZE:
                ibeg += 1
                beg_trunc = True
    prefix = f"LINE {line_no}: " + ("..." if beg_trunc else "")
    text = "".join(chars[ibeg:iend]) + ("..." if end_trunc else "")
    caret = " " * (display_width(prefix) + scr[loc] - scr[ibeg]) + "^"
    return [prefix + text, caret]


def format_error(message: str, *, query: Optional[str] = None, position: Optional[int] = None,
                 detail: Optional[str] = None, hint: Optional[str] = None,
                 severity: str = "ERROR", prefix: str = "") -> str:
    """psql's report of an error, ending with a newline."""
    lines = [f"{prefix}{severity}:  {message}"]
    if query is not None and position:
        lines.extend(error_position_lines(query, position))
    if detail:
        lines.append(f"DETAIL:  {detail}")
    if hint:
        lines.append(f"HINT:  {hint}")
    return "\n".join(lines) + "\n"
