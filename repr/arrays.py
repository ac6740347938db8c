"""SQL array values (``Array``, ``MdArray``) and PostgreSQL's array text I/O.

Owns ``Array``: a ``tuple`` subclass (so it is hashable and immutable) distinct from plain
tuples, which are records (``repr.strconv.to_text`` prints a tuple as a record).
Elements are SQL values or ``None`` (NULL elements are allowed).  A multi-dimensional array
is an ``MdArray``: the same flat tuple of elements in row-major order plus ``dims`` (the
length of each dimension; every lower bound is 1), so everything PostgreSQL defines over
an array's elements regardless of shape (``unnest``, ``cardinality``, ``= ANY``, ``@>``,
``array_to_string``) reads it as the flat tuple it is.  ``make_array(elems, dims)`` builds
either (an array with a zero-length dimension is the empty one-dimensional ``{}``, as in
PostgreSQL).  Ordering follows PostgreSQL's btree array comparison: element by element, a
NULL element sorting after any non-NULL one, then the one with fewer elements, then fewer
dimensions, then the dimension lengths.  Also the array literal parser (``parse_array``:
``{1,2,NULL}``, ``{{1,2},{3,4}}``, ``{"a b",c}``, backslash escapes) given the element's
input function, and ``array_out`` (nested braces; elements quoted when empty, ``NULL``, or
containing ``{}",\\`` or white space; booleans print as ``t``/``f`` as in PostgreSQL).

Invariant: an ``MdArray`` has at least two dimensions, none of length zero, and
``len(a) == product(a.dims)``; equal arrays have equal shapes (``{{1,2}}`` is not ``{1,2}``).
Also the table function ``unnest_zip`` (``unnest(a, b, ...)`` in FROM: the arrays' elements side
by side, the shorter ones padded with NULL; a NULL array counts as empty).
Deliberately not here: array functions (``expr.functions.arrays``).
"""
from __future__ import annotations

from repr.errors import EvalError

__all__ = ["Array", "MdArray", "make_array", "dims_of", "parse_array", "array_out", "unnest_zip"]


def compare_elements(a, b) -> int:
    """Element-wise order of two sequences, NULLs (None) last, then the shorter first
    (PostgreSQL's array order, Materialize's list order)."""
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


def _cmp(a, b) -> int:
    c = compare_elements(a, b)
    if c or len(a) != len(b):
        return c
    da, db = dims_of(a), dims_of(b)
    if len(da) != len(db):
        return (len(da) > len(db)) - (len(da) < len(db))
    return (da > db) - (da < db)


class ComparedBy:
    """Mixin: ``<``, ``<=``, ``>``, ``>=`` from the class's ``_compare(other) -> int`` (the
    element-wise orders of arrays and lists), and ``!=`` as the negation of its ``==``."""
    __slots__ = ()

    def __ne__(self, o):
        return not self.__eq__(o)

    def __lt__(self, o):
        return self._compare(o) < 0

    def __le__(self, o):
        return self._compare(o) <= 0

    def __gt__(self, o):
        return self._compare(o) > 0

    def __ge__(self, o):
        return self._compare(o) >= 0


class Array(ComparedBy, tuple):
    """A one-dimensional SQL array (see the module docstring)."""
    __slots__ = ()

    @property
    def dims(self) -> tuple:
        return (len(self),) if self else ()

    def __eq__(self, o):
        if not isinstance(o, Array) or not tuple.__eq__(self, o):
            return False
        return (type(self) is Array and type(o) is Array) or self.dims == o.dims

    __hash__ = tuple.__hash__

    def _compare(self, o) -> int:
        return _cmp(self, o)

    def __repr__(self):
        return f"Array({list(self)!r})"

    def nested(self) -> list:
        """The elements as nested lists, one level per dimension."""
        return list(self)


class MdArray(Array):
    """A multi-dimensional SQL array: the flat elements and ``dims`` (build it with
    ``make_array``)."""

    @property
    def dims(self) -> tuple:
        return self.__dict__["_dims"]

    def __hash__(self):
        return hash((tuple(self), self.__dict__["_dims"]))

    def __reduce__(self):
        return (make_array, (tuple(self), self.__dict__["_dims"]))

    def __repr__(self):
        return f"MdArray({self.nested()!r})"

    def nested(self) -> list:
        return _nest(list(self), self.dims)


def _nest(flat: list, dims: tuple) -> list:
    if len(dims) == 1:
        return flat
    step = len(flat) // dims[0]
    return [_nest(flat[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]


def make_array(elems, dims) -> Array:
    """The array of flat ``elems`` with shape ``dims`` (lower bounds 1)."""
    dims = tuple(dims)
    if len(dims) <= 1 or 0 in dims:
        return Array(elems if dims and 0 not in dims else ())
    a = MdArray(elems)
    a.__dict__["_dims"] = dims
    return a


def dims_of(a) -> tuple:
    """An array's dimension lengths (``()`` for the empty array)."""
    return a.dims


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
    dims = a.dims if type(a) is MdArray else None
    if dims is None:
        return "{" + ",".join(parts) + "}"
    return _braces(parts, dims)


def _braces(parts: list, dims: tuple) -> str:
    if len(dims) == 1:
        return "{" + ",".join(parts) + "}"
    step = len(parts) // dims[0]
    return "{" + ",".join(_braces(parts[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])) + "}"


def _malformed(s: str, detail: str = "") -> EvalError:
    return EvalError("22P02", f'malformed array literal: "{s}"')


def parse_array(s: str, parse_elem) -> Array:
    """PostgreSQL's array_in; ``parse_elem(text)`` converts an element.  Nested braces make a
    multi-dimensional array, whose sub-arrays must all have the same shape."""
    ws = " \t\n\r\v\f"
    n = len(s)
    i = 0
    while i < n and s[i] in ws:
        i += 1
    if i < n and s[i] == "[":
        raise EvalError("0A000", "array bounds in array literals are not supported")
    if i >= n or s[i] != "{":
        raise _malformed(s)
    j = i + 1
    while j < n and s[j] in ws:
        j += 1
    if j < n and s[j] == "}":
        if s[j + 1:].strip(ws):
            raise _malformed(s)
        return Array(())
    flat: list = []
    dims, i = _parse_level(s, i, parse_elem, flat, ws)
    if s[i:].strip(ws):
        raise _malformed(s)
    return make_array(flat, dims)


def _parse_level(s: str, i: int, parse_elem, flat: list, ws: str):
    """One ``{...}`` starting at ``s[i]``: its elements appended to ``flat``; returns (its
    dims, the position after it)."""
    n = len(s)
    i += 1  # the "{"
    count = 0
    sub = None  # the shape of the sub-arrays, or () when this level holds elements
    while True:
        while i < n and s[i] in ws:
            i += 1
        if i >= n:
            raise _malformed(s)
        c = s[i]
        if c == "{":
            if sub == ():
                raise _malformed(s)
            d, i = _parse_level(s, i, parse_elem, flat, ws)
            if sub is not None and d != sub:
                raise EvalError("22P02", f'malformed array literal: "{s}"')  # sub-arrays must match
            sub = d
        else:
            if sub:
                raise _malformed(s)
            sub = ()
            i = _parse_element(s, i, parse_elem, flat, ws)
        count += 1
        while i < n and s[i] in ws:
            i += 1
        if i >= n:
            raise _malformed(s)
        if s[i] == ",":
            i += 1
            continue
        if s[i] == "}":
            return (count,) + sub, i + 1
        raise _malformed(s)


def _parse_element(s: str, i: int, parse_elem, flat: list, ws: str) -> int:
    n = len(s)
    if s[i] == '"':
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
        flat.append(parse_elem("".join(buf)))
        return i
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
        flat.append(None)
    else:
        flat.append(parse_elem(tok))
    return i


def unnest_zip(*arrays) -> list:
    """``unnest(a, b, ...)``: row ``i`` holds element ``i`` of each array (flattened), NULL
    past an array's end; as many rows as the longest array has elements."""
    arrs = [() if a is None else a for a in arrays]
    n = max((len(a) for a in arrs), default=0)
    return [tuple(a[i] if i < len(a) else None for a in arrs) for i in range(n)]
