"""The functions over ``jsonb``: casts, operators, builders and the jsonb table functions.

Owns the func ids ``sql.functions.jsonb`` names: the casts to and from ``text`` and to the
scalar types (``DERIVED``: ``jsonb -> numeric -> target``, as PostgreSQL's jsonb_int4 calls
numeric_int4), ``->``/``->>``/``#>``/``#>>``, containment and existence, ``||`` and ``-``,
``jsonb_typeof``/``jsonb_array_length``/``jsonb_strip_nulls``/``jsonb_pretty``, ``to_jsonb``
of any SQL value (``to_jsonb_value``, which ``jsonb_agg`` and lists' casts use too) and
``jsonb_build_*``, and the jsonb table functions (``TABLE_FUNCTIONS``: ``jsonb_each``,
``jsonb_array_elements``, ...), which the FlatMap operator and the reference evaluator use.
Invariant: raises only ``EvalError`` with PostgreSQL's SQLSTATE and message.
Deliberately not here: the value class and its text form (``repr.jsonb``).
"""
from __future__ import annotations

from decimal import Decimal
import functools

from expr.functions.common import FuncImpl, add
from repr.arrays import Array
from repr.errors import EvalError
from repr.jsonb import (MISSING as _MISS, JObject, Jsonb, jsonb_out, jsonb_pretty, parse_jsonb, sort_pairs,
                        value_out)
from repr.lists import List
from repr.numeric import numeric_out
from repr.strconv import float8_out, to_text

FUNCTIONS: dict = {}
_reg = functools.partial(add, FUNCTIONS)

# ------------------------------------------------------------------ jsonb values


def _kind(v) -> str:
    if v is None:
        return "null"
    t = type(v)
    if t is str:
        return "string"
    if t is bool:
        return "boolean"
    if t is Decimal:
        return "number"
    if t is JObject:
        return "object"
    return "array"


def _cast_name(v) -> str:
    return {"number": "numeric"}.get(_kind(v), _kind(v))


def _jsonb_to(target: str, display: str, conv):
    """The cast of a jsonb scalar to ``target`` (numbers through ``conv``, numeric's cast)."""
    def f(j):
        v = j.v
        if target == "bool":
            if type(v) is bool:
                return v
        elif type(v) is Decimal:
            return conv(v)
        raise EvalError("22023", f"cannot cast jsonb {_cast_name(v)} to type {display}")
    return f


def to_jsonb_value(x):
    """The canonical jsonb value of the SQL value ``x`` (PostgreSQL's to_jsonb)."""
    if x is None or x is True or x is False:
        return x
    t = type(x)
    if t is str:
        return x
    if t is int:
        return Decimal(x)
    if t is Decimal:
        return x if x.is_finite() else numeric_out(x)
    if t is float:
        if x != x or x in (float("inf"), float("-inf")):
            return float8_out(x)
        return Decimal(float8_out(x))
    if t is Jsonb:
        return x.v
    if t is Array or t is List:  # a list (Materialize) is a JSON array too, layers nested
        return tuple(to_jsonb_value(e) for e in x)
    if isinstance(x, Array):  # multi-dimensional (repr.arrays.MdArray): nested JSON arrays
        return _nested_jsonb(x.nested())
    if t is tuple:  # a record: keys f1, f2, ...
        return sort_pairs((f"f{i + 1}", to_jsonb_value(e)) for i, e in enumerate(x))
    return to_text(x)


def _nested_jsonb(v):
    return tuple(_nested_jsonb(e) for e in v) if type(v) is list else to_jsonb_value(v)


def to_jsonb(x) -> Jsonb:
    return Jsonb(to_jsonb_value(x))


def _get(v, k):
    if type(k) is str:
        if type(v) is JObject:
            r = v.get(k)
            return None if r is _MISS else r, r is not _MISS
        return None, False
    if type(v) is tuple:
        n = len(v)
        i = k + n if k < 0 else k
        if 0 <= i < n:
            return v[i], True
    return None, False


def jsonb_get(j, k):
    v, ok = _get(j.v, k)
    return Jsonb(v) if ok else None


def _as_text(v):
    if v is None:
        return None
    if type(v) is str:
        return v
    return value_out(v)


def jsonb_get_text(j, k):
    v, ok = _get(j.v, k)
    return _as_text(v) if ok else None


def _path(v, path):
    for p in path:
        if p is None:
            return None, False
        if type(v) is JObject:
            v, ok = _get(v, p)
        elif type(v) is tuple:
            try:
                idx = int(p.strip())
            except ValueError:
                return None, False
            v, ok = _get(v, idx)
        else:
            return None, False
        if not ok:
            return None, False
    return v, True


def jsonb_get_path(j, path):
    v, ok = _path(j.v, path)
    return Jsonb(v) if ok else None


def jsonb_get_path_text(j, path):
    v, ok = _path(j.v, path)
    return _as_text(v) if ok else None


def _contains(a, b, top: bool = False) -> bool:
    ta, tb = type(a), type(b)
    if ta is JObject:
        if tb is not JObject:
            return False
        for k, bv in b:
            av = a.get(k)
            if av is _MISS:
                return False
            if type(av) in (JObject, tuple) or type(bv) in (JObject, tuple):
                if type(av) is not type(bv) or not _contains(av, bv):
                    return False
            elif not _scalar_eq(av, bv):
                return False
        return True
    if ta is tuple:
        if tb is not tuple:
            if top and tb is not JObject:
                return any(type(x) not in (JObject, tuple) and _scalar_eq(x, b) for x in a)
            return False
        for bv in b:
            if type(bv) in (JObject, tuple):
                if not any(type(x) is type(bv) and _contains(x, bv) for x in a):
                    return False
            elif not any(type(x) not in (JObject, tuple) and _scalar_eq(x, bv) for x in a):
                return False
        return True
    if tb in (JObject, tuple):
        return False
    return _scalar_eq(a, b)


def _scalar_eq(a, b) -> bool:
    return type(a) is type(b) and a == b


def jsonb_contains(a, b) -> bool:
    return _contains(a.v, b.v, top=True)


def jsonb_exists(j, k) -> bool:
    v = j.v
    if type(v) is JObject:
        return v.get(k) is not _MISS
    if type(v) is tuple:
        return any(type(x) is str and x == k for x in v)
    return type(v) is str and v == k


def jsonb_concat(a, b):
    x, y = a.v, b.v
    if type(x) is JObject and type(y) is JObject:
        return Jsonb(sort_pairs(list(x) + list(y)))
    xs = x if type(x) is tuple else (x,)
    ys = y if type(y) is tuple else (y,)
    return Jsonb(tuple(xs) + tuple(ys))


def jsonb_delete(j, k):
    v = j.v
    if type(v) not in (JObject, tuple):
        raise EvalError("22023", "cannot delete from scalar")
    if type(k) is str:
        if type(v) is JObject:
            return Jsonb(JObject(p for p in v if p[0] != k))
        return Jsonb(tuple(x for x in v if not (type(x) is str and x == k)))
    if type(v) is JObject:
        raise EvalError("22023", "cannot delete from object using integer index")
    n = len(v)
    i = k + n if k < 0 else k
    if not 0 <= i < n:
        return j
    return Jsonb(v[:i] + v[i + 1:])


def jsonb_delete_keys(j, keys):
    for k in keys:
        if k is not None:
            j = jsonb_delete(j, k)
    return j


def _delete_path(v, path):
    if not path:
        return v
    p = path[0]
    if p is None:
        raise EvalError("22004", "path element at position 1 is null")
    if type(v) is JObject:
        cur = v.get(p)
        if cur is _MISS:
            return v
        if len(path) == 1:
            return JObject(x for x in v if x[0] != p)
        return JObject((a, _delete_path(b, path[1:]) if a == p else b) for a, b in v)
    if type(v) is tuple:
        try:
            i = int(p)
        except ValueError:
            raise EvalError("22P02", f'path element at position 1 is not an integer: "{p}"') from None
        n = len(v)
        i = i + n if i < 0 else i
        if not 0 <= i < n:
            return v
        if len(path) == 1:
            return v[:i] + v[i + 1:]
        return v[:i] + (_delete_path(v[i], path[1:]),) + v[i + 1:]
    return v


def jsonb_delete_path(j, path):
    if type(j.v) not in (JObject, tuple):
        raise EvalError("22023", "cannot delete path in scalar")
    return Jsonb(_delete_path(j.v, tuple(path)))


def jsonb_array_length(j):
    v = j.v
    if type(v) is tuple:
        return len(v)
    if type(v) is JObject:
        raise EvalError("22023", "cannot get array length of a non-array")
    raise EvalError("22023", "cannot get array length of a scalar")


def _strip(v):
    if type(v) is JObject:
        return JObject((k, _strip(x)) for k, x in v if x is not None)
    if type(v) is tuple:
        return tuple(_strip(x) for x in v)
    return v


def jsonb_build_object(*args):
    pairs = []
    for i in range(0, len(args), 2):
        k = args[i]
        if k is None:
            raise EvalError("22023", f"argument {i + 1}: key must not be null")
        pairs.append((to_text(k) if type(k) is not str else k, to_jsonb_value(args[i + 1])))
    return Jsonb(sort_pairs(pairs))


_reg("cast_text_to_jsonb", parse_jsonb)
_reg("cast_jsonb_to_text", jsonb_out)
_reg("jsonb_get", jsonb_get)
_reg("jsonb_get_text", jsonb_get_text)
_reg("jsonb_get_path", jsonb_get_path)
_reg("jsonb_get_path_text", jsonb_get_path_text)
_reg("jsonb_extract_path", lambda j, *p: jsonb_get_path(j, p))
_reg("jsonb_extract_path_text", lambda j, *p: jsonb_get_path_text(j, p))
_reg("jsonb_contains", jsonb_contains)
_reg("jsonb_contained", lambda a, b: jsonb_contains(b, a))
_reg("jsonb_exists", jsonb_exists)
_reg("jsonb_exists_any", lambda j, ks: any(k is not None and jsonb_exists(j, k) for k in ks))
_reg("jsonb_exists_all", lambda j, ks: all(k is not None and jsonb_exists(j, k) for k in ks))
_reg("jsonb_concat", jsonb_concat)
_reg("jsonb_delete", jsonb_delete)
_reg("jsonb_delete_keys", jsonb_delete_keys)
_reg("jsonb_delete_path", jsonb_delete_path)
_reg("jsonb_typeof", lambda j: _kind(j.v))
_reg("jsonb_array_length", jsonb_array_length)
_reg("jsonb_strip_nulls", lambda j: Jsonb(_strip(j.v)))
_reg("jsonb_pretty", jsonb_pretty)
_reg("to_jsonb", to_jsonb, strict=False)
_reg("jsonb_build_object", jsonb_build_object, strict=False)
_reg("jsonb_build_array", lambda *a: Jsonb(tuple(to_jsonb_value(x) for x in a)), strict=False)
_reg("cast_jsonb_to_bool", _jsonb_to("bool", "boolean", None))
_reg("cast_jsonb_to_numeric", _jsonb_to("numeric", "numeric", lambda d: d))



def _via_numeric(t: str, display: str):
    """``cast_jsonb_to_<t>`` from numeric's cast to ``t``, once the registry is assembled."""
    return lambda functions: FuncImpl(_jsonb_to(t, display, functions[f"cast_numeric_to_{t}"].fn))


#: the casts to the other number types: a jsonb number converts as numeric does
DERIVED = {f"cast_jsonb_to_{t}": _via_numeric(t, d)
           for t, d in (("int2", "smallint"), ("int4", "integer"), ("int8", "bigint"), ("float8", "double precision"))}


# ------------------------------------------------------------------ table functions


def jsonb_each(j, as_text: bool = False):
    v = j.v
    if type(v) is not JObject:
        raise EvalError("22023", f"cannot call {'jsonb_each_text' if as_text else 'jsonb_each'} on a non-object")
    return [(k, _as_text(x) if as_text else Jsonb(x)) for k, x in v]


def jsonb_array_elements(j, as_text: bool = False):
    v = j.v
    if type(v) is JObject:
        raise EvalError("22023", "cannot extract elements from an object")
    if type(v) is not tuple:
        raise EvalError("22023", "cannot extract elements from a scalar")
    return [(_as_text(x) if as_text else Jsonb(x),) for x in v]


def jsonb_object_keys(j):
    v = j.v
    if type(v) is JObject:
        return [(k,) for k, _ in v]
    if type(v) is tuple:
        raise EvalError("22023", "cannot call jsonb_object_keys on an array")
    raise EvalError("22023", "cannot call jsonb_object_keys on a scalar")


def _null_guard(f):
    def g(*args):
        if any(a is None for a in args):
            return ()
        return f(*args)
    return g


#: table function name -> (implementation, output column names, output types)
TABLE_FUNCTIONS = {
    "jsonb_each": (_null_guard(jsonb_each), ("key", "value"), ("text", "jsonb")),
    "jsonb_each_text": (_null_guard(lambda j: jsonb_each(j, True)), ("key", "value"), ("text", "text")),
    "jsonb_array_elements": (_null_guard(jsonb_array_elements), ("value",), ("jsonb",)),
    "jsonb_array_elements_text": (_null_guard(lambda j: jsonb_array_elements(j, True)), ("value",), ("text",)),
    "jsonb_object_keys": (_null_guard(jsonb_object_keys), ("jsonb_object_keys",), ("text",)),
}
