"""The functions over ``text``: string functions, LIKE, regular expressions, and text's casts.

Owns the func ids ``sql.functions.text`` names: concatenation (``textcat`` prints a
non-text operand with its cast to text; ``concat``/``concat_ws`` with the output functions,
so booleans print ``t``/``f``), ``upper`` ... ``translate`` with PostgreSQL's results and
errors (lengths past PostgreSQL's 1 GB limit raise 54000), ``LIKE``/``ILIKE`` (escape
character backslash), the POSIX regular expression operators, ``regexp_replace``,
``regexp_match``/``regexp_split_to_array``/``string_to_array`` (text to ``text[]``), and the
cast of an untyped literal to text.
Invariant: an implementation receives non-NULL arguments unless registered non-strict;
it raises only ``EvalError``; compiled patterns are cached (``like_regex``, ``_regex``).
Deliberately not here: the text form of other types (``repr.strconv.to_text``) and
``char(n)``'s own casts (``expr.functions.char``).
"""
from __future__ import annotations

import functools
from functools import lru_cache
import hashlib
import re

from expr.functions.common import add
from repr.arrays import Array
from repr.errors import EvalError
from repr.strconv import to_text

FUNCTIONS: dict = {}
_add = functools.partial(add, FUNCTIONS)

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


def _pg_anchors(pattern: str) -> str:
    """``pattern`` with each ``$`` anchor (unescaped, outside a bracket expression) written
    ``\\Z``: in PostgreSQL's default (not newline-sensitive) matching ``$`` matches only at
    the end of the string, where Python's also matches before a final newline."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
        elif c == "[":
            in_class = True
            if pattern.startswith("[^", i):
                out.append("[^")
                i += 2
                continue
        elif c == "$":
            c = "\\Z"
        out.append(c)
        i += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def _regex(pattern: str, case_insensitive: bool = False):
    """PostgreSQL's regex matching as Python's: ``.`` matches a newline (``re.DOTALL``) and
    ``$`` only the end of the string (``_pg_anchors``), as in PostgreSQL's default mode."""
    try:
        return re.compile(_pg_anchors(pattern), re.DOTALL | (re.IGNORECASE if case_insensitive else 0))
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
    if n < 0 or n > 0x10FFFF:  # Materialize's text for both (PostgreSQL 14's, before 15 split it)
        raise EvalError("54000", f"requested character too large for encoding: {n}")
    if 0xD800 <= n <= 0xDFFF:
        raise EvalError("54000", f"requested character not valid for encoding: {n}")
    return chr(n)


def md5(s):
    return hashlib.md5(s.encode()).hexdigest()


def translate(s, frm, to):
    table = {}
    for i, c in enumerate(frm):
        if ord(c) not in table:
            table[ord(c)] = to[i] if i < len(to) else None
    return s.translate(table)


def _case_flag(flags: str, what: str) -> bool:
    """Case-insensitivity from PostgreSQL regex flags (``i``/``c``, the last one wins)."""
    ci = False
    for f in flags:
        if f == "i":
            ci = True
        elif f == "c":
            ci = False
        elif f == "g" and what:
            raise EvalError("22023", f'{what}() does not support the "global" option')
        else:
            raise EvalError("22023", f'invalid regular expression option: "{f}"')
    return ci


def regexp_match(s, pattern, flags=""):
    rx = _regex(pattern, _case_flag(flags, "regexp_match"))
    m = rx.search(s)
    if m is None:
        return None
    if rx.groups == 0:
        return Array((m.group(0),))
    return Array(m.groups())


def regexp_split_to_array(s, pattern, flags=""):
    """PostgreSQL's split: a match counts unless it is empty at the end of the string or
    ends no later than the previous match (so no empty match at the start)."""
    rx = _regex(pattern, _case_flag(flags, "regexp_split_to_array"))
    n = len(s)
    out, piece_start, prev_end, pos = [], 0, 0, 0
    while pos <= n:
        m = rx.search(s, pos)
        if m is None:
            break
        so, eo = m.span()
        if so < n and eo > prev_end:
            out.append(s[piece_start:so])
            piece_start = eo
        prev_end = eo
        pos = eo + 1 if so == eo else eo
    out.append(s[piece_start:])
    return Array(out)


def string_to_array(s, delim, null_str=None):
    if s is None:
        return None
    if s == "":
        return Array(())
    if delim is None:
        parts = list(s)
    elif delim == "":
        parts = [s]
    else:
        parts = s.split(delim)
    return Array([None if (null_str is not None and p == null_str) else p for p in parts])


#: the one role mzlite has (pg_catalog's owner columns name it)
OWNER = "materialize"
_add("pg_get_userbyid", lambda oid: OWNER)
#: the first OID of a user object (``mzlite.pg_catalog.relation_oid``): user objects live in
#: ``public``, on the search path; system relations are in schemas off it
USER_OID_BASE = 20000
_add("pg_table_is_visible", lambda oid: oid >= USER_OID_BASE)
_add("pg_encoding_to_char", lambda enc: "UTF8" if enc == 6 else "")
_add("textcat", textcat)
_add("concat", concat, strict=False)
_add("concat_ws", concat_ws, strict=False)
_add("upper", str.upper, inline="{0}.upper()")
_add("lower", str.lower, inline="{0}.lower()")
_add("char_length", len, inline="len({0})")
_add("octet_length", lambda s: len(s.encode()))
_add("substr", substr)
_add("replace", replace)
_add("overlay", overlay)
_add("btrim", btrim)
_add("ltrim", ltrim)
_add("rtrim", rtrim)
_add("strpos", strpos)
_add("lpad", lpad)
_add("rpad", rpad)
_add("left", left)
_add("right", right)
_add("repeat", repeat)
_add("reverse", lambda s: s[::-1], inline="{0}[::-1]")
_add("split_part", split_part)
_add("initcap", initcap)
_add("starts_with", lambda s, p: s.startswith(p), inline="{0}.startswith({1})")
_add("like", like)
_add("not_like", not_like)
_add("ilike", ilike)
_add("not_ilike", not_ilike)
_add("regex_match", regex_match)
_add("regex_imatch", regex_imatch)
_add("regex_not_match", lambda s, p: not regex_match(s, p))
_add("regex_not_imatch", lambda s, p: not regex_imatch(s, p))
_add("regexp_replace", regexp_replace)
_add("ascii", ascii_)
_add("chr", chr_)
_add("md5", md5)
_add("translate", translate)
_add("regexp_match", regexp_match)
_add("regexp_split_to_array", regexp_split_to_array)
_add("string_to_array", string_to_array, strict=False)

#: what ``version()`` / ``mz_version()`` report (Materialize's shapes, mzlite's name and version)
MZLITE_VERSION = "0.1.0"
_add("version", lambda: f"PostgreSQL 9.5 on x86_64-unknown-linux-gnu (mzlite v{MZLITE_VERSION})")
_add("mz_version", lambda: f"v{MZLITE_VERSION} (mzlite)")
_add("mz_version_num", lambda: int("".join(f"{int(x):02d}" for x in MZLITE_VERSION.split("."))))
_add("current_database", lambda: "materialize")
_add("current_schema", lambda: "public")


def regexp_split_to_table(s, pattern, flags=""):
    if s is None or pattern is None or flags is None:
        return ()
    return [(piece,) for piece in regexp_split_to_array(s, pattern, flags)]


#: table function name -> (implementation, output column names, output types)
TABLE_FUNCTIONS = {"regexp_split_to_table": (regexp_split_to_table, ("regexp_split_to_table",), ("text",))}
_add("cast_unknown_to_text", lambda s: s, inline="{0}")
