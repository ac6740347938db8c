"""Tests of expr.compile: generated code equals a naive tree walker, laziness, MFP order."""
from __future__ import annotations

from decimal import Decimal

from hypothesis import HealthCheck, given, settings, strategies as st
import pytest

from expr import compile as cc
from expr.compile import (compile_mfp, compile_mfp_row, compile_predicates, compile_scalar, evaluate_constant,
                          generated_source)
from expr.functions import FUNCTIONS
from expr.mfp import MapFilterProject
from expr.scalar import Call, CallMzNow, Column, If, Literal
from repr.errors import EvalError


def L(v, t="int4"):
    return Literal(v, t)


def C(i):
    return Column(i)


def call(f, *args, t="int4"):
    return Call(f, tuple(args), t)


def B(f, *args):
    return Call(f, tuple(args), "bool")


# ------------------------------------------------------------------ a naive evaluator

def naive(e, row, time=None):
    """Tree-walking reference semantics (slow, obviously right)."""
    if isinstance(e, Column):
        return row[e.index]
    if isinstance(e, Literal):
        return e.value
    if isinstance(e, CallMzNow):
        return time
    if isinstance(e, If):
        return naive(e.then if naive(e.cond, row, time) is True else e.els, row, time)
    impl = FUNCTIONS[e.func]
    if e.func == "coalesce":
        for a in e.args:
            v = naive(a, row, time)
            if v is not None:
                return v
        return None
    if e.func in ("and", "or"):
        stop = e.func == "or"
        res = not stop
        for a in e.args:
            v = naive(a, row, time)
            if v is stop:
                return stop
            if v is None:
                res = None
        return res
    vals = [naive(a, row, time) for a in e.args]
    if impl.strict and any(v is None for v in vals):
        return None
    return impl.fn(*vals)


def outcome(fn, *a, **kw):
    try:
        return ("ok", fn(*a, **kw))
    except EvalError as err:
        return ("err", err.sqlstate)


# --------------------------------------------------------------------- random trees

INT_VALUES = st.sampled_from([0, 1, -1, 2, 7, -7, 2147483647, -2147483648, 46341, None])
INT_BIN = ["add_int4", "sub_int4", "mul_int4", "div_int4", "mod_int4"]
CMP = ["eq", "neq", "lt", "lte", "gt", "gte", "is_distinct_from", "is_not_distinct_from"]


def exprs():
    int_leaf = st.one_of(st.builds(Column, st.integers(0, 2)), st.builds(lambda v: L(v), INT_VALUES))
    bool_leaf = st.one_of(st.builds(Column, st.just(3)),
                          st.sampled_from([L(True, "bool"), L(False, "bool"), L(None, "bool")]))

    def extend(children):
        ints, bools = children
        return ints, bools

    ints = st.deferred(lambda: st.one_of(
        int_leaf, int_leaf,
        st.builds(lambda f, a, b: call(f, a, b), st.sampled_from(INT_BIN), ints, ints),
        st.builds(lambda f, a: call(f, a), st.sampled_from(["neg_int4", "abs_int4"]), ints),
        st.builds(lambda c, a, b: If(c, a, b, "int4"), bools, ints, ints),
        st.builds(lambda xs: call("coalesce", *xs), st.lists(ints, min_size=1, max_size=3)),
        st.builds(lambda xs: call(xs[0], *xs[1]), st.tuples(st.sampled_from(["greatest", "least"]),
                                                           st.lists(ints, min_size=1, max_size=3))),
        st.builds(lambda a, b: call("nullif", a, b), ints, ints),
    ))
    bools = st.deferred(lambda: st.one_of(
        bool_leaf, bool_leaf,
        st.builds(lambda f, a, b: B(f, a, b), st.sampled_from(CMP), ints, ints),
        st.builds(lambda f, xs: B(f, *xs), st.sampled_from(["and", "or"]), st.lists(bools, min_size=1, max_size=3)),
        st.builds(lambda f, a: B(f, a), st.sampled_from(["not", "is_null", "is_not_null", "is_true",
                                                          "is_not_true", "is_false", "is_not_false"]), bools),
        st.builds(lambda a: B("is_null", a), ints),
    ))
    return ints, bools


INTS, BOOLS = exprs()
ROWS = st.tuples(INT_VALUES, INT_VALUES, INT_VALUES, st.sampled_from([True, False, None]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(INTS, BOOLS), st.lists(ROWS, min_size=1, max_size=4))
def test_compiled_equals_naive(expr, rows):
    f = compile_scalar(expr)
    for row in rows:
        want = outcome(naive, expr, row)
        assert outcome(f, row) == want
        assert outcome(cc.interpret, expr, row) == want


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(INTS, max_size=3), st.lists(BOOLS, max_size=2), st.lists(ROWS, max_size=5), st.randoms())
def test_compiled_mfp_agrees_with_eager_evaluation(maps, preds, rows, rnd):
    """Where eager evaluation of every map expression (then the predicates in order)
    succeeds, the MFP gives the same output; the compiled MFP never errors where eager
    evaluation does not.  Sabotage: testing predicates sorted by the columns they read
    (not in order) -> an error where the first predicate had dropped the row (seen red)."""
    arity = 4
    proj = tuple(rnd.sample(range(arity + len(maps)), k=min(3, arity + len(maps))))
    mfp = MapFilterProject(arity, tuple(maps), tuple(preds), proj)
    out, errs = compile_mfp(mfp)(rows)
    expected, eager_errors = [], 0
    for row in rows:
        try:
            full = row + tuple(naive(m, row) for m in maps)  # maps here read input columns only
            keep = all(naive(p, full) is True for p in preds)
        except EvalError:
            eager_errors += 1
            continue
        if keep:
            expected.append(tuple(full[c] for c in proj))
    if eager_errors == 0:
        assert out == expected and errs == []
    assert len(errs) <= eager_errors
    single = compile_mfp_row(mfp)
    assert [r for r in (outcome(single, row) for row in rows) if r[0] == "ok" and r[1] is not None] == \
        [("ok", r) for r in out]


def test_mfp_over_pairs_keeps_the_pairs_of_rows_kept_whole():
    """A filter-only MFP over ``(row, diff)`` pairs hands on the very pairs it keeps (a join
    over stored rows then arranges the stored tuples); one that projects builds new rows
    with their diffs, and both agree with the row-wise MFP.  Sabotage: ``compile_mfp_pairs``
    without ``kept_whole`` -> a new pair per kept row."""
    from expr.compile import compile_mfp_pairs
    pairs = [((1, None, 3), 1), ((2, 5, 6), -1), ((3, 7, None), 2)]
    keep = Call("is_not_null", (Column(1),), "bool")
    out, errs = compile_mfp_pairs(MapFilterProject(3, (), (keep,), (0, 1, 2)))(pairs)
    assert out == pairs[1:] and errs == [] and all(a is b for a, b in zip(out, pairs[1:]))
    out, errs = compile_mfp_pairs(MapFilterProject(3, (), (keep,), (2, 0)))(pairs)
    assert out == [((6, 2), -1), ((None, 3), 2)] and errs == []


# ------------------------------------------------------------------------ laziness

def test_case_is_lazy():
    """Sabotage: emit_if evaluating both branches before choosing -> 22012 here (seen red)."""
    e = If(B("eq", C(0), L(0)), L(0), call("div_int4", L(1), C(0)), "int4")
    f = compile_scalar(e)
    assert f((0,)) == 0
    assert f((4,)) == 0 and f((1,)) == 1
    assert f((None,)) is None
    with pytest.raises(EvalError) as ei:
        compile_scalar(If(B("eq", C(0), L(1)), L(0), call("div_int4", L(1), C(0)), "int4"))((0,))
    assert ei.value.sqlstate == "22012"


def test_case_chain_takes_first_true_branch_lazily():
    """CASE WHEN x>0 THEN 1 WHEN 10/x < 0 THEN 2 ELSE 3 END: first true WHEN wins, later
    WHENs are not evaluated.  Sabotage: testing every WHEN of the flat chain regardless of
    ``done`` -> x=1 gives 2 and CASE x=0 raises 22012 (seen red)."""
    e = If(B("gt", C(0), L(0)), L(1), If(B("lt", call("div_int4", L(10), C(0)), L(0)), L(2), L(3), "int4"), "int4")
    f = compile_scalar(e)
    assert [f((1,)), f((-1,)), f((None,))] == [1, 2, 3]
    with pytest.raises(EvalError):
        f((0,))
    e2 = If(B("eq", C(0), L(0)), L(0), If(B("gt", call("div_int4", L(10), C(0)), L(0)), L(1), L(2), "int4"), "int4")
    assert [compile_scalar(e2)((x,)) for x in (0, 5, -5)] == [0, 1, 2]


def test_coalesce_is_lazy():
    """Sabotage: emit_coalesce emitting every argument unconditionally -> 22012 (seen red)."""
    e = call("coalesce", C(0), call("div_int4", L(1), C(1)))
    f = compile_scalar(e)
    assert f((5, 0)) == 5
    assert f((None, 1)) == 1
    with pytest.raises(EvalError):
        f((None, 0))


def test_long_case_and_coalesce_stay_flat():
    """A CASE with 300 WHENs and a 300-argument COALESCE compile (Python allows 100
    indentation levels).  Sabotage: nesting each ELSE inside the previous one -> 
    IndentationError "too many levels of indentation" (seen red)."""
    e = L(-1)
    for k in reversed(range(300)):
        e = If(B("eq", C(0), L(k)), call("mul_int4", C(0), L(2)), e, "int4")
    f = compile_scalar(e)
    assert [f((k,)) for k in (0, 1, 299, 300, None)] == [0, 2, 598, -1, -1]
    g = compile_scalar(call("coalesce", *[C(i) for i in range(300)]))
    row = [None] * 300
    assert g(tuple(row)) is None
    row[250] = 7
    assert g(tuple(row)) == 7
    h = compile_scalar(B("and", *[B("gt", C(i), L(0)) for i in range(300)]))
    assert h(tuple(range(1, 301))) is True and h(tuple(range(300))) is False


def test_and_or_short_circuit():
    """Sabotage: _emit_andor without the ``if t is not stop`` guard -> 22012 (seen red)."""
    boom = B("eq", call("div_int4", L(1), C(0)), L(1))
    assert compile_scalar(B("and", L(False, "bool"), boom))((0,)) is False
    assert compile_scalar(B("or", L(True, "bool"), boom))((0,)) is True
    assert compile_scalar(B("and", L(None, "bool"), L(False, "bool")))(()) is False
    assert compile_scalar(B("and", L(None, "bool"), L(True, "bool")))(()) is None
    assert compile_scalar(B("or", L(None, "bool"), L(False, "bool")))(()) is None
    assert compile_scalar(B("or", L(None, "bool"), L(True, "bool")))(()) is True


def test_strict_functions_skip_null():
    """Sabotage: dropping the ``is None`` guard of strict calls -> TypeError escapes (seen red)."""
    for f in ("add_int4", "div_int4", "mul_numeric", "textcat", "lt_float8", "like"):
        assert compile_scalar(call(f, C(0), C(1)))((None, 1)) is None


# ---------------------------------------------------------------------------- MFP

def test_mfp_filters_before_mapping():
    """A row dropped by a predicate never evaluates the map only the output needs.
    Sabotage: computing every expression before the predicates -> 22012 error collected (seen red)."""
    mfp = MapFilterProject(1, (call("div_int4", L(10), C(0)),), (B("neq", C(0), L(0)),), (0, 1))
    out, errs = compile_mfp(mfp)([(0,), (5,), (None,), (2,)])
    assert out == [(5, 2), (2, 5)] and errs == []


def test_mfp_tests_predicates_in_order():
    """An earlier predicate guards a later one.  Sabotage: sorting predicates by the
    columns they read -> the overflow of the second is raised for a dropped row (seen red)."""
    preds = (C(1), B("gt", call("add_int4", C(0), L(1)), L(0)))
    out, errs = compile_mfp(MapFilterProject(2, (), preds, (0,)))([(2147483647, False), (1, True)])
    assert out == [(1,)] and errs == []


def test_mfp_predicate_on_expression_and_errors_collected():
    mfp = MapFilterProject(2, (call("add_int4", C(0), C(1)),), (B("gt", C(2), L(0)),), (2, 0))
    rows = [(1, 2), (2147483647, 1), (-5, 1), (3, None), (0, 1)]
    out, errs = compile_mfp(mfp)(rows)
    assert out == [(3, 1), (1, 0)]
    assert [e.as_row() for e in errs] == [("22003", "integer out of range")]
    row_fn = compile_mfp_row(mfp)
    assert row_fn((1, 2)) == (3, 1) and row_fn((-5, 1)) is None
    with pytest.raises(EvalError):
        row_fn((2147483647, 1))


def test_mfp_identity_and_default_projection():
    rows = [(1, "a"), (2, "b")]
    out, errs = compile_mfp(MapFilterProject.identity(2))(rows)
    assert out == rows and errs == [] and out is not rows
    assert compile_mfp(MapFilterProject(2, (), (), (1,)))(rows) == ([("a",), ("b",)], [])
    assert compile_mfp(MapFilterProject(2, (), (), (1, 0, 1)))(rows)[0] == [("a", 1, "a"), ("b", 2, "b")]
    assert compile_mfp(MapFilterProject(2, (), (), ()))(rows)[0] == [(), ()]
    mfp = MapFilterProject(2, (call("textcat", C(1), C(1), t="text"),))
    assert compile_mfp(mfp)(rows)[0] == [(1, "a", "aa"), (2, "b", "bb")]


def test_mfp_expression_reads_earlier_expression():
    mfp = MapFilterProject(1, (call("mul_int4", C(0), L(2)), call("add_int4", C(1), L(1))), (), (2,))
    assert compile_mfp(mfp)([(1,), (10,)])[0] == [(3,), (21,)]


def test_mfp_map_of_lazy_forms():
    """Map expressions whose value is assigned in several branches (If, coalesce, and).
    Sabotage: renaming a branch-assigned temporary to the output column -> NameError (seen red)."""
    maps = (If(B("gt", C(0), L(0)), C(0), L(-1), "int4"), call("coalesce", C(1), L(7)),
            B("and", B("gt", C(0), L(0)), B("gt", C(1), L(0))))
    mfp = MapFilterProject(2, maps, (), (2, 3, 4))
    rows = [(1, None), (-1, 2), (None, None), (3, 4)]
    assert compile_mfp(mfp)(rows)[0] == [(1, 7, None), (-1, 2, False), (-1, 7, None), (3, 4, True)]


def test_mz_now_reads_time_keyword():
    mfp = MapFilterProject(1, (), (B("lte", CallMzNow(), C(0)),), (0,))
    f = compile_mfp(mfp)
    assert f([(5,), (10,)], time=7)[0] == [(10,)]
    assert f([(5,), (10,)], time=5)[0] == [(5,), (10,)]
    assert compile_scalar(CallMzNow())((), time=42) == 42
    assert compile_predicates([B("lte", CallMzNow(), C(0))])((3,), time=4) is False


def test_predicates_conjunction():
    p = compile_predicates([B("gt", C(0), L(1)), B("lt", C(0), L(10))])
    assert [p((v,)) for v in (0, 5, 10, None)] == [False, True, False, False]
    assert compile_predicates([])((1,)) is True


def test_evaluate_constant():
    assert evaluate_constant(call("add_int4", L(1), L(2))) == 3
    assert evaluate_constant(call("div_numeric", L(Decimal(1), "numeric"), L(Decimal(3), "numeric"),
                                  t="numeric")) == Decimal("0.33333333333333333333")
    with pytest.raises(EvalError) as ei:
        evaluate_constant(call("div_int4", L(1), L(0)))
    assert ei.value.sqlstate == "22012"
    with pytest.raises(ValueError):
        evaluate_constant(C(0))


def test_generated_code_binds_locals_and_inlines():
    """Implementations are default arguments (locals) and simple operators are inlined.
    Sabotage: ignoring FuncImpl.inline -> the source calls _f_eq (seen red)."""
    f = compile_scalar(B("eq", C(0), C(1)))
    src = generated_source(f)
    assert "(c0 == c1)" in src and "_f_eq" not in src
    g = compile_scalar(call("div_int4", C(0), C(1)))
    assert "_f_div_int4=_f_div_int4" in generated_source(g)


def test_filter_is_one_test_and_proves_non_null():
    """A strict inline predicate is a single ``if`` and, once passed, its arguments are
    known non-NULL, so the map reading them has no NULL check.  Sabotage: not recording
    the arguments as non-NULL in emit_filter -> "c1 is None" in the map (seen red)."""
    mfp = MapFilterProject(2, (call("mul_int4", C(1), L(2)),), (B("gt", C(1), L(0)),), (0, 2))
    f = compile_mfp(mfp)
    src = generated_source(f)
    assert "if c1 is None or not (c1 > " in src
    assert src.count("c1 is None") == 1
    assert f([(1, 2), (2, None), (3, -1)]) == ([(1, 4)], [])


def test_record_is_a_tuple_display():
    """Sabotage: removing the record special case -> the source calls _f_record (seen red)."""
    f = compile_scalar(Call("record", (C(1), call("add_int4", C(0), L(1)), L(None)), "record"))
    assert f((1, "a")) == ("a", 2, None)
    assert compile_scalar(Call("record", (), "record"))(()) == ()
    assert "_f_record" not in generated_source(f)


def test_compile_is_cached_and_scale_sensitive():
    """Decimal('1.0') == Decimal('1.00') but the cache must not conflate them (keyed on repr)."""
    a = compile_scalar(L(Decimal("1.0"), "numeric"))
    b = compile_scalar(L(Decimal("1.00"), "numeric"))
    assert str(a(())) == "1.0" and str(b(())) == "1.00"
    assert compile_scalar(L(Decimal("1.0"), "numeric")) is a


def test_inline_templates_agree_with_functions():
    """Every inline template computes what its fn computes (incl. the errors).
    Sabotage: add_int4's inline range upper bound off by one -> mismatch at 2147483647 (seen red)."""
    samples = {
        "int2": [0, 1, -1, 32767, -32768, 200], "int4": [0, 1, -1, 2147483647, -2147483648, 46341],
        "int8": [0, 1, -1, 2 ** 63 - 1, -2 ** 63, 3037000500],
        "float8": [0.0, -0.0, 1.5, -2.0, 1e308, -1e308, 1e-308, float("inf"), float("nan")],
        "numeric": [Decimal("0"), Decimal("1.5"), Decimal("NaN"), Decimal("-2")],
        "text": ["", "aB", "héllo"], "bool": [True, False], "char": ["", "a", "Z"],
    }
    for name, impl in FUNCTIONS.items():
        if impl.inline is None or not impl.strict:
            continue
        nargs = impl.inline.count("{1}") and 2 or 1
        t = next((t for t in samples if name.endswith(t)), None)
        if t is None:
            t = {"upper": "text", "lower": "text", "char_length": "text", "reverse": "text",
                 "starts_with": "text", "not": "bool", "cast_bool_to_text": "bool",
                 "cast_bool_to_int4": "bool", "cast_unknown_to_text": "text",
                 "identity": "int4"}.get(name)
            if name.startswith("cast_"):
                t = name.split("_")[1]
            if t is None:
                t = "int4"
        vals = samples[t]
        for a in vals:
            for b in (vals if nargs == 2 else [None]):
                args = (a, b) if nargs == 2 else (a,)
                expr = Call(name, tuple(Literal(v, t) for v in args), "x")
                got = outcome(compile_scalar(expr), ())
                want = outcome(impl.fn, *args)
                same = got == want or (got[0] == want[0] == "ok" and got[1] != got[1] and want[1] != want[1])
                assert same, (name, args, got, want)


def test_unknown_function_is_a_bug():
    with pytest.raises(AssertionError):
        compile_scalar(call("no_such_function", L(1)))
    assert isinstance(cc._CACHE, dict)
