"""The functions over arrays (``repr.arrays.Array``, any number of dimensions).

Owns the func ids ``sql.functions.arrays`` names and the ones the binder writes for array
syntax: the casts synthesized per element type (``RESOLVERS``: ``cast_text_to_int4[]``,
``cast_int4[]_to_text``, ``cast_int4[]_to_int8[]``, keeping the shape), constructors
(``array_create``; one more dimension from sub-arrays: ``array_create_md``), subscripts and
slices over any number of dimensions, ``array_ndims``/``array_dims``,
``array_length``/``array_position``/``array_to_string``/``||``/``@>``/..., ``array_fill``
(any shape of up to 6 dimensions and ``MAX_FILL`` elements; lower bounds other than 1 are
refused, as every array here has them), and the ANY/ALL
comparisons (``DERIVED``: they call the comparison's func id through the registry).
Invariant: raises only ``EvalError``; element comparisons use the values' own total order.
Deliberately not here: the value class and its text form (``repr.arrays``), ``array_agg``
(``expr.functions.aggregates``) and the text functions returning arrays
(``expr.functions.text``).
"""
from __future__ import annotations

import functools

from expr.functions.common import FuncImpl, add
from repr.arrays import Array, MdArray, make_array, parse_array
from repr.errors import EvalError
from repr.strconv import to_text

FUNCTIONS: dict = {}
_reg = functools.partial(add, FUNCTIONS)

# ------------------------------------------------------------------ arrays


def _elem_out(x) -> str:
    if x is True or x is False:
        return "t" if x else "f"
    return to_text(x)


def _array_casts(fid: str, functions):
    """Synthesize the array casts ``cast_text_to_E[]``, ``cast_E[]_to_text`` and
    ``cast_A[]_to_B[]`` from the element casts in ``functions`` (None: not one of them)."""
    if not isinstance(fid, str) or not fid.startswith("cast_") or "[]" not in fid:
        return None
    frm, _, to = fid[5:].partition("_to_")
    if frm == "text" and to.endswith("[]"):
        el = functions.get(f"cast_text_to_{to[:-2]}") if to[:-2] != "text" else None
        parse = el.fn if el is not None else (lambda s: s)
        return FuncImpl(lambda s: parse_array(s, parse))
    if frm.endswith("[]") and to == "text":
        return FuncImpl(to_text)
    if frm.endswith("[]") and to.endswith("[]"):
        el = functions.get(f"cast_{frm[:-2]}_to_{to[:-2]}")
        if el is None:
            return None
        f = el.fn
        return FuncImpl(lambda a: make_array([None if x is None else f(x) for x in a], a.dims))
    return None


#: see ``expr.functions.Registry``
RESOLVERS = (_array_casts,)


def array_index(a, i, *more):
    """``a[i]``, ``a[i][j]...``: the element, or NULL when the number of subscripts is not
    the array's number of dimensions or one is out of range (PostgreSQL)."""
    if not more:
        if type(a) is MdArray:
            return None
        return a[i - 1] if 1 <= i <= len(a) else None
    dims = a.dims
    if len(dims) != 1 + len(more):
        return None
    off = 0
    for d, k in zip(dims, (i,) + more):
        if not 1 <= k <= d:
            return None
        off = off * d + (k - 1)
    return a[off]


def array_slice(a, lo, hi, *more):
    """``a[lo:hi]`` (a bound None when omitted), and ``a[lo:hi][lo2:hi2]...`` with ``more``
    as further (lo, hi) pairs (a plain subscript ``i`` among slices is ``1:i``); the
    dimensions after the last subscript are taken whole; lower bounds become 1."""
    if a is None:
        return None
    dims = a.dims
    bounds = [(lo, hi)] + [(more[k], more[k + 1]) for k in range(0, len(more), 2)]
    if not dims or len(bounds) > len(dims):
        return Array(())
    ranges = []
    for d, (l, h) in zip(dims, bounds + [(None, None)] * (len(dims) - len(bounds))):
        l = 1 if l is None else max(l, 1)
        h = d if h is None else min(h, d)
        if l > h:
            return Array(())
        ranges.append((l - 1, h))
    if len(dims) == 1:
        return Array(a[ranges[0][0]:ranges[0][1]])
    strides = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        strides[k] = strides[k + 1] * dims[k + 1]
    out = []

    def walk(k, base):
        l, h = ranges[k]
        if k == len(dims) - 1:
            out.extend(a[base + l:base + h])
            return
        for x in range(l, h):
            walk(k + 1, base + x * strides[k])
    walk(0, 0)
    return make_array(out, [h - l for l, h in ranges])


def _dim_of(a, d):
    dims = a.dims
    return dims[d - 1] if 1 <= d <= len(dims) else None


def array_dims_text(a):
    """``array_dims``: ``[1:2][1:3]``; NULL for the empty array."""
    dims = a.dims
    return "".join(f"[1:{d}]" for d in dims) if dims else None


def array_create_md(*subs):
    """``ARRAY[sub, sub, ...]`` over arrays: one more dimension.  NULL and empty sub-arrays
    give ``{}`` when all are so; otherwise every sub-array must have the same shape."""
    shapes = {None if x is None or not x else x.dims for x in subs}
    if shapes == {None}:
        return Array(())
    if len(shapes) != 1:
        raise EvalError("2202E", "multidimensional arrays must have array expressions with matching dimensions")
    sub = shapes.pop()
    if 1 + len(sub) > 6:
        raise EvalError("54000", f"number of array dimensions ({1 + len(sub)}) exceeds the maximum allowed (6)")
    return make_array([e for x in subs for e in x], (len(subs),) + sub)


#: the most elements ``array_fill`` builds (an ``int8`` array of them is 128 MiB)
MAX_FILL = 134217728 // 8


def array_fill(value, dims, lower=None, *, has_lower=False):
    """PostgreSQL's ``array_fill``: ``value`` in every cell of an array of shape ``dims``."""
    if dims is None or (has_lower and lower is None):
        raise EvalError("22004", "dimension array or low bound array must not be null")
    dims = list(dims)
    if any(d is None for d in dims) or (has_lower and any(b is None for b in lower)):
        raise EvalError("22004", "dimension values must not be null")
    if has_lower and len(lower) != len(dims):
        raise EvalError("2202E", "wrong number of array subscripts")
    if len(dims) > 6:
        raise EvalError("54000", f"number of array dimensions ({len(dims)}) exceeds the maximum allowed (6)")
    n = 1
    for d in dims:
        n = n * d if d >= 0 else -1
        if n < 0 or n > MAX_FILL:
            raise EvalError("54000", "array size exceeds the maximum allowed (134217728 bytes)")
    if not dims or n == 0:
        return Array(())
    if has_lower and any(b != 1 for b in lower):
        raise EvalError("0A000", "array lower bounds other than 1 are not supported")
    return make_array([value] * n, dims)


def array_position(a, x, start=None):
    if a is None:
        return None
    if type(a) is MdArray:
        raise EvalError("0A000", "searching for elements in multidimensional arrays is not supported")
    s = 1 if start is None else start
    for i in range(max(s, 1) - 1, len(a)):
        e = a[i]
        if (e is None and x is None) or (e is not None and x is not None and e == x):
            return i + 1
    return None


def array_to_string(a, delim, null_str=None):
    if a is None or delim is None:
        return None
    parts = []
    for x in a:
        if x is None:
            if null_str is not None:
                parts.append(null_str)
        else:
            parts.append(_elem_out(x))
    return delim.join(parts)


def array_cat(a, b):
    if a is None or not b:
        return b if a is None else a
    if not a:
        return b
    da, db = a.dims, b.dims
    if len(da) == len(db) and da[1:] == db[1:]:
        dims = (da[0] + db[0],) + da[1:]
    elif len(da) == len(db) + 1 and da[1:] == db:
        dims = (da[0] + 1,) + db
    elif len(db) == len(da) + 1 and db[1:] == da:
        dims = (db[0] + 1,) + da
    else:
        raise EvalError("2202E", "cannot concatenate incompatible arrays")
    return make_array(tuple(a) + tuple(b), dims)


def _one_dim(a):
    if type(a) is MdArray:
        raise EvalError("22000", "argument must be empty or one-dimensional array")
    return tuple(a) if a is not None else ()


def array_append(a, x):
    return Array(_one_dim(a) + (x,))


def array_prepend(x, a):
    return Array((x,) + _one_dim(a))


def array_contains(a, b) -> bool:
    have = [x for x in a if x is not None]
    return all(y is not None and any(y == x for x in have) for y in b)


def array_overlap(a, b) -> bool:
    have = [x for x in a if x is not None]
    return any(y is not None and any(y == x for x in have) for y in b)


def _same(x, y) -> bool:
    return (x is None and y is None) or (x is not None and y is not None and x == y)


def array_remove(a, x):
    if a is None:
        return None
    if type(a) is MdArray:
        raise EvalError("0A000", "removing elements from multidimensional arrays is not supported")
    return Array([e for e in a if not _same(e, x)])


def array_replace(a, x, y):
    if a is None:
        return None
    return make_array([y if _same(e, x) else e for e in a], a.dims)


def _compare_any(x, arr, impl: FuncImpl, want_all: bool):
    """``x op ANY(arr)`` / ``x op ALL(arr)`` with three-valued logic."""
    if arr is None:
        return None
    fn = impl.fn
    saw_null = False
    for e in arr:
        if impl.strict and (x is None or e is None):
            r = None
        else:
            r = fn(x, e)
        if r is None:
            saw_null = True
        elif bool(r) != want_all:
            return not want_all
    return None if saw_null else want_all


_reg("array_create", lambda *xs: Array(xs), strict=False)
_reg("array_index", array_index)
_reg("array_slice", array_slice, strict=False)
_reg("array_create_md", array_create_md, strict=False)
_reg("array_length", _dim_of)
_reg("array_lower", lambda a, d: 1 if _dim_of(a, d) else None)
_reg("array_upper", _dim_of)
_reg("array_ndims", lambda a: len(a.dims) or None)
_reg("array_dims", array_dims_text)
_reg("array_cardinality", len)
_reg("array_position", array_position, strict=False)
_reg("array_to_string", array_to_string, strict=False)
_reg("array_cat", array_cat, strict=False)
_reg("array_append", array_append, strict=False)
_reg("array_prepend", array_prepend, strict=False)
_reg("array_contains", array_contains)
_reg("array_contained", lambda a, b: array_contains(b, a))
_reg("array_overlap", array_overlap)
_reg("array_remove", array_remove, strict=False)
_reg("array_replace", array_replace, strict=False)
_reg("array_fill", lambda v, d, *lo: array_fill(v, d, *lo, has_lower=bool(lo)), strict=False)


def _quantified(want_all: bool):
    """``array_any``/``array_all``: the comparison's func id is their third argument."""
    return lambda functions: FuncImpl(lambda x, a, fid: _compare_any(x, a, functions[fid], want_all), strict=False)


#: implementations over the assembled registry (``expr.functions``)
DERIVED = {"array_any": _quantified(False), "array_all": _quantified(True)}
