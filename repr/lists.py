"""Materialize's ``list`` value class (``List``) and its text I/O.

Owns ``List``: a ``tuple`` subclass (hashable, immutable) distinct from ``repr.arrays.Array``
and from plain tuples (records), so ``LIST[1]`` and ``ARRAY[1]`` never compare equal and
print through their own output functions.  Elements are SQL values, ``None`` (NULL elements
are allowed) or, for a layered list (``int list list``), ``List`` values of their own length
(lists may be ragged).  Ordering is element by element, a NULL element sorting after any
non-NULL one, then the shorter list first (Materialize orders datums this way; the same rule
as arrays).  Also ``list_out`` (``{1,2,NULL}``, ``{{a,b},{c}}``; an element is quoted when
its text is empty, is exactly ``NULL``, or holds ``{}",\\`` or white space: Materialize's
documented output prints ``nUlL`` bare, unlike arrays) and
``parse_list`` (Materialize's list input: ``{1, 2}``, nested braces for inner layers, double
quotes and backslash escapes, unescaped white space trimmed).

Invariant: a ``List`` is 1-based for SQL (``l[1]`` is ``l[0]`` here) and every element of a
layered list is a ``List`` or ``None``.
Deliberately not here: list functions (``expr.functions.lists``) and SQL typing
(``sql.types.lists``).
"""
from __future__ import annotations

from repr.arrays import ComparedBy, compare_elements as _cmp
from repr.errors import EvalError

__all__ = ["List", "list_out", "parse_list"]


class List(ComparedBy, tuple):
    """A Materialize list value (see the module docstring)."""
    __slots__ = ()

    def __eq__(self, o):
        return isinstance(o, List) and tuple.__eq__(self, o)

    __hash__ = tuple.__hash__

    def _compare(self, o) -> int:
        return _cmp(self, o)

    def __repr__(self):
        return f"List({list(self)!r})"


_SPECIAL = set('{}",\\ \t\n\r\v\f')
_WS = " \t\n\r\v\f"


def _quote(s: str) -> str:
    """Not ``repr.arrays``' rule on purpose: Materialize quotes a list element spelled
    exactly ``NULL`` and prints ``nUlL`` bare (its documented output), though input reads a
    bare one as NULL in any case; arrays follow PostgreSQL and quote every spelling."""
    if s == "" or s == "NULL" or any(c in _SPECIAL for c in s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


def list_out(lst, to_text) -> str:
    """The text of ``lst``; ``to_text`` gives a non-NULL, non-list element's text."""
    parts = []
    for x in lst:
        if x is None:
            parts.append("NULL")
        elif isinstance(x, List):
            parts.append(list_out(x, to_text))
        elif x is True or x is False:
            parts.append("t" if x else "f")
        else:
            parts.append(_quote(to_text(x)))
    return "{" + ",".join(parts) + "}"


def _bad(s: str, why: str) -> EvalError:
    return EvalError("22P02", f'invalid input syntax for type list: {why}: "{s}"')


_STOP = set('{}",\\')


def parse_list(s: str, parse_elem, layers: int = 1) -> List:
    """Materialize's list input for a list of ``layers`` layers; ``parse_elem(text)``
    converts an innermost element.  An element of an outer layer (``{1,2}`` unquoted, or
    quoted) is parsed as the inner list; a ``{`` starting an innermost element is an error
    (quote it).  A bad element's error becomes the detail of the list's 22P02."""
    if layers > 1:
        inner = parse_elem

        def parse_elem(text, _inner=inner, _layers=layers - 1):  # noqa: F811 - the next layer down
            return parse_list(text, _inner, _layers)

    def elem(text):
        try:
            return parse_elem(text)
        except EvalError as e:
            raise _bad(s, e.message) from None

    n = len(s)
    if not s.startswith("{"):
        raise _bad(s, "expected '{', found " + (s[0] if s else "empty string"))
    i, out = 1, []
    while True:
        while i < n and s[i] in _WS:
            i += 1
        if i >= n:
            raise _bad(s, "unexpected end of input")
        c = s[i]
        if c == "}":
            i += 1
            break
        if out:
            if c != ",":
                raise _bad(s, f"expected ',' or '}}', got '{c}'")
            i += 1
            while i < n and s[i] in _WS:
                i += 1
            if i >= n:
                raise _bad(s, "unexpected end of input")
            c = s[i]
        if c == '"':
            i, text = _quoted(s, i + 1)
            out.append(elem(text))
        elif c == "{":
            if layers == 1:
                raise _bad(s, "unescaped '{' at beginning of element; perhaps you want a nested list, "
                              "e.g. '{a}'::text list list")
            i, text = _embedded(s, i)
            out.append(elem(text))
        else:
            i, text, escaped = _unquoted(s, i)
            out.append(None if not escaped and text.upper() == "NULL" else elem(text))
    if s[i:].strip(_WS):
        raise _bad(s, f"malformed array literal; contains '{s[i:].strip(_WS)[0]}' after terminal '}}'")
    return List(out)


def _quoted(s: str, i: int):
    buf = []
    while True:
        if i >= len(s):
            raise _bad(s, "unterminated quoted string")
        c = s[i]
        if c == "\\":
            if i + 1 >= len(s):
                raise _bad(s, "unterminated quoted string")
            buf.append(s[i + 1])
            i += 2
        elif c == '"':
            return i + 1, "".join(buf)
        else:
            buf.append(c)
            i += 1


def _embedded(s: str, i: int):
    j, depth, quoted = i + 1, 1, False
    while depth > 0:
        if j >= len(s):
            raise _bad(s, "unterminated embedded element")
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


def _unquoted(s: str, i: int):
    buf, keep, escaped = [], 0, False
    while True:
        if i >= len(s):
            raise _bad(s, "unterminated element")
        c = s[i]
        if c == "\\":
            if i + 1 >= len(s):
                raise _bad(s, "unterminated element")
            buf.append(s[i + 1])
            escaped, keep, i = True, len(buf), i + 2
            continue
        if c in ",}":
            if not buf:
                raise _bad(s, "malformed literal; missing element")
            return i, "".join(buf[:keep]), escaped
        if c in _STOP:
            raise _bad(s, f"malformed literal; must escape special character '{c}'")
        buf.append(c)
        if c not in _WS:
            keep = len(buf)
        i += 1
