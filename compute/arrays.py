"""The one-dimensional array value class (``Array``) and PostgreSQL's array text I/O.

Owns ``Array``: a ``tuple`` subclass (so it is hashable and immutable) distinct from plain
tuples, which are records (``compute.functions_text.to_text`` prints a tuple as a record).
Elements are SQL values or ``None`` (NULL elements are allowed).  Ordering follows
PostgreSQL's btree array comparison: element by element, a NULL element sorting after any
non-NULL one, then the shorter array first.  Also the array literal parser
(``parse_array``: ``{1,2,NULL}``, ``{"a b",c}``, backslash escapes) given the element's
input function, and ``array_out`` (elements quoted when empty, ``NULL``, or containing
``{}",\\`` or white space; booleans print as ``t``/``f`` as in PostgreSQL).

Invariant: an ``Array`` is one-dimensional with lower bound 1 (multi-dimensional arrays
are not supported: ``parse_array`` raises 0A000 on nested braces).
Deliberately not here: array functions (``compute.functions_document``).
"""
from __future__ import annotations

from compute.errors import EvalError

__all__ = ["Array", "parse_array", "array_out"]


def _cmp(a, b) -> int:
    for x, y in zip(a, b):
        if x is None or y is None:
            if x is None and y is None:
                continue
            return 1 if x is None else -1
        if x != y:
            if x < y:
                return -1
            if y < x:
                return 1
    return (len(a) > len(b)) - (len(a) < len(b))


class Array(tuple):
    """A one-dimensional SQL array (see the module docstring)."""
    __slots__ = ()

    def __eq__(self, o):
        return isinstance(o, Array) and tuple.__eq__(self, o)

    def __ne__(self, o):
        return not self.__eq__(o)

    __hash__ = tuple.__hash__

    def __lt__(self, o):
        return _cmp(self, o) < 0

    def __le__(self, o):
        return _cmp(self, o) <= 0

    def __gt__(self, o):
        return _cmp(self, o) > 0

    def __ge__(self, o):
        return _cmp(self, o) >= 0

    def __repr__(self):
        return f"Array({list(self)!r})"


_SPECIAL = set('{}",\\ \t\n\r\v\f')


def _quote(s: str) -> str:
    if s == "" or s.upper() == "NULL" or any(c in _SPECIAL for c in s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


def array_out(a, to_text) -> str:
    parts = []
    for x in a:
        if x is None:
            parts.append("NULL")
        elif x is True or x is False:
            parts.append("t" if x else "f")
        else:
            parts.append(_quote(to_text(x)))
    return "{" + ",".join(parts) + "}"


def _malformed(s: str, detail: str = "") -> EvalError:
    return EvalError("22P02", f'malformed array literal: "{s}"')


def parse_array(s: str, parse_elem) -> Array:
    """PostgreSQL's array_in for one dimension; ``parse_elem(text)`` converts an element."""
    i, n = 0, len(s)
    ws = " \t\n\r\v\f"
    while i < n and s[i] in ws:
        i += 1
    if i < n and s[i] == "[":
        raise EvalError("0A000", "array bounds in array literals are not supported")
    if i >= n or s[i] != "{":
        raise _malformed(s)
    i += 1
    out = []
    while i < n and s[i] in ws:
        i += 1
    if i < n and s[i] == "}":
        i += 1
        if s[i:].strip(ws):
            raise _malformed(s)
        return Array(())
    while True:
        while i < n and s[i] in ws:
            i += 1
        if i >= n:
            raise _malformed(s)
        c = s[i]
        if c == "{":
            raise EvalError("0A000", "multidimensional arrays are not supported")
        if c == '"':
            i += 1
            buf = []
            while True:
                if i >= n:
                    raise _malformed(s)
                c = s[i]
                if c == "\\":
                    if i + 1 >= n:
                        raise _malformed(s)
                    buf.append(s[i + 1])
                    i += 2
                elif c == '"':
                    i += 1
                    break
                else:
                    buf.append(c)
                    i += 1
            out.append(parse_elem("".join(buf)))
            while i < n and s[i] in ws:
                i += 1
        else:
            buf = []
            quoted_any = False
            while i < n and s[i] not in ",}":
                c = s[i]
                if c in '{"':
                    raise _malformed(s)
                if c == "\\":
                    if i + 1 >= n:
                        raise _malformed(s)
                    buf.append(s[i + 1])
                    quoted_any = True
                    i += 2
                    continue
                buf.append(c)
                i += 1
            tok = "".join(buf).rstrip(ws) if not quoted_any else "".join(buf).strip(ws)
            if tok == "":
                raise _malformed(s)
            if not quoted_any and tok.upper() == "NULL":
                out.append(None)
            else:
                out.append(parse_elem(tok))
        if i >= n:
            raise _malformed(s)
        if s[i] == ",":
            i += 1
            continue
        if s[i] == "}":
            i += 1
            break
        raise _malformed(s)
    if s[i:].strip(ws):
        raise _malformed(s)
    return Array(out)
