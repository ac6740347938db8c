"""Text I/O of every SQL value and the text functions (half of ``expr.functions``).

Owns: the text form of each type as PostgreSQL 15 prints it (``float8_out``: shortest
round-trip digits, exponent form when the decimal exponent is < -4 or >= 15;
``numeric_out``: keeps the scale, never an exponent; booleans ``true``/``false``), the
parsers of text into each type (``parse_int``, ``parse_float8``, ``parse_numeric``,
``parse_bool``, raising ``EvalError`` 22P02 / 22003 with PostgreSQL's messages), and the
implementations of the text functions and LIKE.
Invariant: these functions receive non-NULL arguments unless ``TEXT_ENTRIES`` marks
them non-strict; they raise only ``EvalError``.
Deliberately not here: the registry ``FUNCTIONS`` (``expr.functions`` builds it from
``TEXT_ENTRIES``) and SQL-side signatures (``sql.functions``).  ``sql.types`` keeps its
own copy of the parsers for plan-time literals (``sql`` may not import ``compute``);
``tests/test_types.py`` checks that the two agree.
"""
from __future__ import annotations

from decimal import Context, Decimal
from functools import lru_cache
import math
import re

from repr.errors import EvalError

INT_RANGES = {
    "int2": (-32768, 32767, "smallint"),
    "int4": (-2147483648, 2147483647, "integer"),
    "int8": (-9223372036854775808, 9223372036854775807, "bigint"),
}

# ---------------------------------------------------------------------------- output


def float8_out(x: float) -> str:
    """PostgreSQL 15's float8out (extra_float_digits = 1: shortest round-trip)."""
    return shortest_float_out(x, 15)


def shortest_float_out(x: float, max_exp: int) -> str:
    """PostgreSQL 15's float output for a value whose shortest decimal form is ``repr(x)``:
    plain notation for decimal exponents in ``[-4, max_exp)``, else ``d.ddde+XX``
    (float8out uses 15, float4out 6)."""
    if x != x:
        return "NaN"
    if x == math.inf:
        return "Infinity"
    if x == -math.inf:
        return "-Infinity"
    if x == 0.0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign, digits, exp = Decimal(repr(x)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    # decimal exponent of the first digit
    e10 = exp + len(digits) - 1
    neg = "-" if sign else ""
    if -4 <= e10 < max_exp:
        if e10 < 0:
            return neg + "0." + "0" * (-e10 - 1) + ds
        if len(ds) <= e10 + 1:
            return neg + ds + "0" * (e10 + 1 - len(ds))
        return neg + ds[: e10 + 1] + "." + ds[e10 + 1:]
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    return f"{neg}{mant}e{'-' if e10 < 0 else '+'}{abs(e10):02d}"


def numeric_out(d: Decimal) -> str:
    """PostgreSQL's numeric_out: plain notation, the value's scale kept, no negative zero."""
    if not d.is_finite():
        if d.is_nan():
            return "NaN"
        return "-Infinity" if d < 0 else "Infinity"
    if not d:
        d = abs(d)
    return format(d, "f")


def bool_out(b: bool) -> str:
    return "true" if b else "false"


#: Python type -> text output function, for value types defined in their own modules
#: (dates, intervals, jsonb, ...); each module registers its types when imported.
TEXT_OUT: dict[type, object] = {}


def to_text(v) -> str:
    """The text form of any non-NULL SQL value, chosen by its Python type."""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return float8_out(v)
    if t is Decimal:
        return numeric_out(v)
    if t is tuple:
        return "(" + ",".join("" if x is None else to_text(x) for x in v) + ")"
    out = TEXT_OUT.get(t)
    if out is not None:
        return out(v)
    return str(v)


# ----------------------------------------------------------------------------- input

_INT_RE = re.compile(r"[ \t\n\r\f\v]*([+-]?[0-9]+)[ \t\n\r\f\v]*\Z")
_NUM_RE = re.compile(r"[ \t\n\r\f\v]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[ \t\n\r\f\v]*\Z")
_SPECIAL_NUM = {"nan": "NaN", "infinity": "Infinity", "+infinity": "Infinity", "-infinity": "-Infinity",
                "inf": "Infinity", "+inf": "Infinity", "-inf": "-Infinity"}
_BOOL_WORDS = (("true", True), ("false", False), ("yes", True), ("no", False))


def _bad(type_display: str, s: str) -> EvalError:
    return EvalError("22P02", f'invalid input syntax for type {type_display}: "{s}"')


def parse_int(s: str, type_: str = "int4") -> int:
    lo, hi, disp = INT_RANGES[type_]
    m = _INT_RE.match(s)
    if m is None:
        raise _bad(disp, s)
    v = int(m.group(1))
    if not lo <= v <= hi:
        raise EvalError("22003", f'value "{s}" is out of range for type {disp}')
    return v


def parse_float8(s: str) -> float:
    t = s.strip(" \t\n\r\f\v")
    low = t.lower()
    if low in _SPECIAL_NUM:
        return float(_SPECIAL_NUM[low])
    if _NUM_RE.match(t) is None:
        raise _bad("double precision", s)
    v = float(t)
    if v in (math.inf, -math.inf):
        raise EvalError("22003", f'"{t}" is out of range for type double precision')
    if v == 0.0 and any(c in "123456789" for c in t.split("e")[0].split("E")[0]):
        raise EvalError("22003", f'"{t}" is out of range for type double precision')
    return v


def parse_numeric(s: str) -> Decimal:
    t = s.strip(" \t\n\r\f\v")
    low = t.lower()
    if low in _SPECIAL_NUM:
        return Decimal(_SPECIAL_NUM[low])
    if _NUM_RE.match(t) is None:
        raise _bad("numeric", s)
    d = Decimal(t)
    exp = d.as_tuple().exponent
    if (d and d.adjusted() > 131071) or exp < -16383:
        raise EvalError("22003", "value overflows numeric format")
    if exp > 0:  # PostgreSQL numeric has no negative scale
        d = d.quantize(Decimal(1), context=Context(prec=d.adjusted() + 2))
    return d


def parse_bool(s: str) -> bool:
    t = s.strip(" \t\n\r\f\v").lower()
    if t:
        for word, val in _BOOL_WORDS:
            if word.startswith(t):
                return val
        if t in ("on", "1"):
            return True
        if t in ("of", "off", "0"):
            return False
    raise _bad("boolean", s)


# -------------------------------------------------------------------- text functions


def textcat(a, b):
    return (a if type(a) is str else to_text(a)) + (b if type(b) is str else to_text(b))


def output(v) -> str:
    """The type's output function (``concat`` uses it: booleans print as t/f, unlike casts)."""
    if type(v) is bool:
        return "t" if v else "f"
    return to_text(v)


def concat(*args):
    return "".join(output(a) for a in args if a is not None)


def concat_ws(sep, *args):
    if sep is None:
        return None
    return sep.join(output(a) for a in args if a is not None)


def substr(s, start, count=None):
    if count is None:
        return s[max(start, 1) - 1:]
    if count < 0:
        raise EvalError("22011", "negative substring length not allowed")
    end = start + count
    begin = max(start, 1)
    if end <= begin:
        return ""
    return s[begin - 1:end - 1]


def overlay(s, new, start, count=None):
    """PostgreSQL's text_overlay: substr(s, 1, start - 1) || new || substr(s, start + count)."""
    if count is None:
        count = len(new)
    return substr(s, 1, start - 1) + new + substr(s, start + count)


def replace(s, old, new):
    return s if old == "" else s.replace(old, new)


def btrim(s, chars=" "):
    return s.strip(chars)


def ltrim(s, chars=" "):
    return s.lstrip(chars)


def rtrim(s, chars=" "):
    return s.rstrip(chars)


def strpos(s, sub):
    return s.find(sub) + 1


MAX_TEXT_LENGTH = 1073741823  # PostgreSQL's MaxAllocSize - 1: longer results raise 54000


def _too_long() -> EvalError:
    return EvalError("54000", "requested length too large")


def lpad(s, n, fill=" "):
    if n > MAX_TEXT_LENGTH:
        raise _too_long()
    if n <= 0:
        return ""
    if len(s) >= n or not fill:
        return s[:n]
    need = n - len(s)
    return (fill * (need // len(fill) + 1))[:need] + s


def rpad(s, n, fill=" "):
    if n > MAX_TEXT_LENGTH:
        raise _too_long()
    if n <= 0:
        return ""
    if len(s) >= n or not fill:
        return s[:n]
    need = n - len(s)
    return s + (fill * (need // len(fill) + 1))[:need]


def left(s, n):
    return s[:n] if n >= 0 else s[:max(len(s) + n, 0)]


def right(s, n):
    if n >= 0:
        return s[len(s) - n:] if n < len(s) else s
    return s[-n:]


def repeat(s, n):
    if n <= 0:
        return ""
    if len(s) * n > MAX_TEXT_LENGTH:
        raise _too_long()
    return s * n


def split_part(s, delim, n):
    if n == 0:
        raise EvalError("22023", "field position must not be zero")
    if delim == "":
        return s if n in (1, -1) else ""
    parts = s.split(delim)
    if n > 0:
        return parts[n - 1] if n <= len(parts) else ""
    return parts[n] if -n <= len(parts) else ""


def initcap(s):
    out = []
    prev_alnum = False
    for c in s:
        out.append(c.lower() if prev_alnum else c.upper())
        prev_alnum = c.isalnum()
    return "".join(out)


@lru_cache(maxsize=1024)
def like_regex(pattern: str, case_insensitive: bool = False):
    """The compiled regex of a LIKE pattern (escape character backslash)."""
    out = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 1
            if i >= n:
                raise EvalError("22025", "LIKE pattern must not end with escape character")
            out.append(re.escape(pattern[i]))
        elif c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        else:
            out.append(re.escape(c))
        i += 1
    flags = re.DOTALL | (re.IGNORECASE if case_insensitive else 0)
    return re.compile("".join(out), flags)


def like(s, pattern):
    return like_regex(pattern).fullmatch(s) is not None


def not_like(s, pattern):
    return like_regex(pattern).fullmatch(s) is None


def ilike(s, pattern):
    return like_regex(pattern.lower(), True).fullmatch(s.lower()) is not None


def not_ilike(s, pattern):
    return like_regex(pattern.lower(), True).fullmatch(s.lower()) is None


@lru_cache(maxsize=1024)
def _regex(pattern: str, case_insensitive: bool = False):
    try:
        return re.compile(pattern, re.IGNORECASE if case_insensitive else 0)
    except re.error as e:
        raise EvalError("2201B", f"invalid regular expression: {e.msg}") from None


def regex_match(s, pattern):
    return _regex(pattern).search(s) is not None


def regex_imatch(s, pattern):
    return _regex(pattern, True).search(s) is not None


def _pg_replacement(rep: str) -> str:
    """PostgreSQL's replacement syntax (\\n group, \\& whole match) as Python's."""
    out = []
    i = 0
    while i < len(rep):
        c = rep[i]
        if c == "\\" and i + 1 < len(rep):
            nxt = rep[i + 1]
            if nxt.isdigit():
                out.append(f"\\g<{nxt}>")
            elif nxt == "&":
                out.append("\\g<0>")
            else:
                out.append(nxt.replace("\\", "\\\\"))
            i += 2
            continue
        out.append("\\\\" if c == "\\" else c)
        i += 1
    return "".join(out)


def regexp_replace(s, pattern, rep, flags=""):
    for f in flags:
        if f not in "gi":
            raise EvalError("22023", f"invalid regular expression option: \"{f}\"")
    rx = _regex(pattern, "i" in flags)
    try:
        return rx.sub(_pg_replacement(rep), s, count=0 if "g" in flags else 1)
    except (re.error, IndexError) as e:
        raise EvalError("2201B", f"invalid regular expression: {e}") from None


def ascii_(s):
    return ord(s[0]) if s else 0


def chr_(n):
    if n == 0:
        raise EvalError("54000", "null character not permitted")
    if n < 0:
        raise EvalError("22023", "character number must be positive")
    if n > 0x10FFFF:
        raise EvalError("54000", f"requested character too large for encoding: {n}")
    if 0xD800 <= n <= 0xDFFF:
        raise EvalError("54000", f"requested character not valid for encoding: {n}")
    return chr(n)


def md5(s):
    import hashlib
    return hashlib.md5(s.encode()).hexdigest()


def translate(s, frm, to):
    table = {}
    for i, c in enumerate(frm):
        if ord(c) not in table:
            table[ord(c)] = to[i] if i < len(to) else None
    return s.translate(table)


#: (func_id, implementation, strict, inline template or None)
TEXT_ENTRIES = [
    ("textcat", textcat, True, None),
    ("concat", concat, False, None),
    ("concat_ws", concat_ws, False, None),
    ("upper", str.upper, True, "{0}.upper()"),
    ("lower", str.lower, True, "{0}.lower()"),
    ("char_length", len, True, "len({0})"),
    ("octet_length", lambda s: len(s.encode()), True, None),
    ("substr", substr, True, None),
    ("replace", replace, True, None),
    ("overlay", overlay, True, None),
    ("btrim", btrim, True, None),
    ("ltrim", ltrim, True, None),
    ("rtrim", rtrim, True, None),
    ("strpos", strpos, True, None),
    ("lpad", lpad, True, None),
    ("rpad", rpad, True, None),
    ("left", left, True, None),
    ("right", right, True, None),
    ("repeat", repeat, True, None),
    ("reverse", lambda s: s[::-1], True, "{0}[::-1]"),
    ("split_part", split_part, True, None),
    ("initcap", initcap, True, None),
    ("starts_with", lambda s, p: s.startswith(p), True, "{0}.startswith({1})"),
    ("like", like, True, None),
    ("not_like", not_like, True, None),
    ("ilike", ilike, True, None),
    ("not_ilike", not_ilike, True, None),
    ("regex_match", regex_match, True, None),
    ("regex_imatch", regex_imatch, True, None),
    ("regex_not_match", lambda s, p: not regex_match(s, p), True, None),
    ("regex_not_imatch", lambda s, p: not regex_imatch(s, p), True, None),
    ("regexp_replace", regexp_replace, True, None),
    ("ascii", ascii_, True, None),
    ("chr", chr_, True, None),
    ("md5", md5, True, None),
    ("translate", translate, True, None),
]
