"""Materialize's ``map`` value class (``Map``) and its text I/O.

Owns ``Map``: a ``tuple`` subclass of ``(key, value)`` pairs, keys (``str``) unique and in
ascending order, so equal maps are equal tuples, hash alike and compare entry by entry
(key, then value, a NULL value after any other; then the shorter map first).  Also
``map_out`` (``{a=>1,b=>NULL}``, nested maps bare, a key or value quoted when its text is
empty, is ``NULL`` in any case, or holds white space or one of ``{}",\\=>``) and
``parse_map`` (Materialize's map input: ``{k=>v, ...}``; keys and values quoted or bare,
backslash escapes, unescaped white space around them trimmed; a bare ``NULL`` value is
NULL; the last of duplicate keys wins; ``{...}`` values only for a map-valued map).

Invariant: every ``Map`` built here has sorted, unique ``str`` keys; a value is ``None``
(NULL) or a value of the map's value type (a ``Map`` for a nested map).  An input error is
``EvalError`` 22P02 ``invalid input syntax for type map: <why>: "<input>"``, where a nested
map's error is the outer one's ``<why>``.
Deliberately not here: map functions and operators (``expr.functions.maps``) and SQL typing
(``sql.types.maps``).
"""
from __future__ import annotations

from repr.arrays import ComparedBy
from repr.errors import EvalError

__all__ = ["Map", "make_map", "map_out", "parse_map"]


def _cmp_values(x, y) -> int:
    if x is None or y is None:
        return 0 if x is y else (1 if x is None else -1)
    return 0 if x == y else (-1 if x < y else 1)


class Map(ComparedBy, tuple):
    """A Materialize map value (see the module docstring)."""
    __slots__ = ()

    def __eq__(self, o):
        return isinstance(o, Map) and tuple.__eq__(self, o)

    __hash__ = tuple.__hash__

    def _compare(self, o) -> int:
        for (k1, v1), (k2, v2) in zip(self, o):
            if k1 != k2:
                return -1 if k1 < k2 else 1
            c = _cmp_values(v1, v2)
            if c:
                return c
        return (len(self) > len(o)) - (len(self) < len(o))

    def get(self, key, default=None):
        for k, v in self:
            if k == key:
                return v
        return default

    def key_set(self) -> set:
        return {k for k, _ in self}

    def __repr__(self):
        return f"Map({dict(self)!r})"


def make_map(pairs) -> Map:
    """A ``Map`` of ``pairs`` (``(key, value)``; for a key given twice the last value wins)."""
    d: dict = {}
    for k, v in pairs:
        d[k] = v
    return Map(sorted(d.items(), key=lambda kv: kv[0]))


_SPECIAL = set('{}",\\=> \t\n\r\v\f')
_WS = " \t\n\r\v\f"


def _quote(s: str) -> str:
    if s == "" or s.upper() == "NULL" or any(c in _SPECIAL for c in s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


def map_out(m, to_text) -> str:
    """The text of ``m``; ``to_text`` gives a non-NULL, non-map value's text."""
    parts = []
    for k, v in m:
        if v is None:
            t = "NULL"
        elif isinstance(v, Map):
            t = map_out(v, to_text)
        elif v is True or v is False:
            t = "t" if v else "f"
        else:
            t = _quote(to_text(v))
        parts.append(_quote(k) + "=>" + t)
    return "{" + ",".join(parts) + "}"


class _Bad(Exception):
    def __init__(self, why: str):
        self.why = why


def parse_map(s: str, parse_value, nested: bool = False) -> Map:
    """Materialize's map input; ``parse_value(text)`` converts a value (for a map-valued map,
    ``nested`` is true and ``parse_value`` is the inner map's parser, raising ``EvalError``
    whose message is the inner map's)."""
    try:
        return make_map(_entries(s, parse_value, nested))
    except _Bad as b:
        raise EvalError("22P02", f'invalid input syntax for type map: {b.why}: "{s}"') from None


_MAP_PREFIX = "invalid input syntax for type map: "


def _value(parse_value, text: str):
    try:
        return parse_value(text)
    except EvalError as e:
        msg = e.message
        raise _Bad(msg[len(_MAP_PREFIX):] if msg.startswith(_MAP_PREFIX) else msg) from None


def _entries(s: str, parse_value, nested: bool):
    n = len(s)
    i = 0
    while i < n and s[i] in _WS:
        i += 1
    if i >= n or s[i] != "{":
        raise _Bad("expected '{', found " + (s[i] if i < n else "empty string"))
    i += 1
    out = []
    while True:
        while i < n and s[i] in _WS:
            i += 1
        if i >= n:
            raise _Bad("unexpected end of input")
        if s[i] == "}":
            i += 1
            break
        if out:
            if s[i] != ",":
                raise _Bad(f"expected ',' or '}}', got '{s[i]}'")
            i += 1
            while i < n and s[i] in _WS:
                i += 1
        i, key, _ = _element(s, i, key=True)
        while i < n and s[i] in _WS:
            i += 1
        if not s.startswith("=>", i):
            raise _Bad("expected =>")
        i += 2
        while i < n and s[i] in _WS:
            i += 1
        if i < n and s[i] == "{":
            if not nested:
                raise _Bad("unescaped '{' at beginning of value; perhaps you want a nested map")
            i, text = _embedded(s, i)
            out.append((key, _value(parse_value, text)))
            continue
        i, text, bare = _element(s, i, key=False)
        if bare and text.upper() == "NULL":
            out.append((key, None))
        else:
            out.append((key, _value(parse_value, text)))
    if s[i:].strip(_WS):
        raise _Bad(f"malformed map literal; contains '{s[i:].strip(_WS)[0]}' after terminal '}}'")
    return out


def _element(s: str, i: int, key: bool):
    """``(next index, text, bare)`` of the key or value starting at ``i``."""
    n = len(s)
    if i < n and s[i] == '"':
        buf = []
        i += 1
        while True:
            if i >= n:
                raise _Bad("unterminated quoted string")
            c = s[i]
            if c == "\\":
                if i + 1 >= n:
                    raise _Bad("unterminated quoted string")
                buf.append(s[i + 1])
                i += 2
            elif c == '"':
                return i + 1, "".join(buf), False
            else:
                buf.append(c)
                i += 1
    buf, keep, escaped = [], 0, False
    while True:
        if i >= n:
            raise _Bad("unterminated element")
        c = s[i]
        if c == "\\":
            if i + 1 >= n:
                raise _Bad("unterminated element")
            buf.append(s[i + 1])
            escaped, keep, i = True, len(buf), i + 2
            continue
        if (key and s.startswith("=>", i)) or c in ",}" or (key and c == "{"):
            if not buf or not keep:
                raise _Bad("malformed literal; missing " + ("key" if key else "value"))
            return i, "".join(buf[:keep]), not escaped
        if c in '{"':
            raise _Bad(f"malformed literal; must escape special character '{c}'")
        buf.append(c)
        if c not in _WS:
            keep = len(buf)
        i += 1


def _embedded(s: str, i: int):
    j, depth, quoted = i + 1, 1, False
    while depth > 0:
        if j >= len(s):
            raise _Bad("unterminated embedded element")
        c = s[j]
        if c == "\\":
            j += 1
        elif c == '"':
            quoted = not quoted
        elif c == "{" and not quoted:
            depth += 1
        elif c == "}" and not quoted:
            depth -= 1
        j += 1
    return j, s[i:j]
