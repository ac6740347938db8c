"""The expression compiler: scalar expressions and MapFilterProjects -> Python functions.

Owns: turning ``expr.scalar`` expressions into Python source once, ``exec``-ing it once
and returning closures (``compile_scalar``, ``compile_predicates``, ``compile_mfp``,
``compile_mfp_row``, ``evaluate_constant``).
Invariants: no per-row interpretation of the expression tree; implementations and
constants are bound as keyword-only default arguments (locals, not globals); a strict
call is made only with non-NULL arguments; ``If`` evaluates only the branch its
condition picks, ``coalesce`` stops at its first non-NULL argument and ``and``/``or``
stop at the first false/true argument, so ``CASE WHEN x = 0 THEN 0 ELSE 1/x END``
never errors.  In an MFP, predicates are tested in the given order, each as soon as the
map expressions it reads are computed, and a map expression is computed only when a
predicate or the output needs it, so a row that a predicate drops never evaluates the map
expressions only the output (or a later predicate) needs.
A top-level predicate that is a strict inline call compiles to one ``if`` test (no
temporary), after which its arguments are known non-NULL and later NULL checks on them
are dropped.  ``interpret`` is the same semantics as a tree walk, for constant folding.
Deliberately not here: the semantics of each function (``expr.functions``) and any
SQL typing (``sql.functions``); ``compute`` never imports ``sql``.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from expr.functions import FUNCTIONS
from expr.mfp import MapFilterProject
from expr.scalar import Call, CallMzNow, Column, If, Literal, ScalarExpr, columns_referenced
from repr.errors import EvalError

__all__ = ["compile_scalar", "compile_predicates", "compile_mfp", "compile_mfp_row", "evaluate_constant",
           "interpret", "generated_source"]

_NONNULL_RESULT = {"is_null", "is_not_null", "is_true", "is_not_true", "is_false", "is_not_false",
                   "is_distinct_from", "is_not_distinct_from", "record", "concat"}


class _Gen:
    """Accumulates the statements of one generated function."""

    def __init__(self, columns: dict[int, str]):
        self.lines: list[str] = []
        self.indent = 1
        self.env: dict[str, Any] = {"EvalError": EvalError}
        self.n = 0
        #: column index -> variable holding it (loaded before any use)
        self.columns = columns
        #: variables known not to be NULL
        self.nonnull: set[str] = set()

    def fresh(self, prefix: str = "t") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def line(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    def bind(self, name: str, obj: Any) -> str:
        prev = self.env.get(name, obj)
        if prev is not obj:
            raise AssertionError(f"compile: two objects named {name}")
        self.env[name] = obj
        return name

    def const(self, value: Any) -> str:
        if value is None or value is True or value is False:
            return repr(value)
        # other constants become default arguments: as fast as a literal, and never the
        # left side of an ``is`` test in generated code (a SyntaxWarning)
        self.n += 1
        return self.bind(f"_k{self.n}", value)

    # ------------------------------------------------------------------ expressions

    def emit(self, e: ScalarExpr) -> str:
        """Emit statements computing ``e``; return a variable name or a Python literal."""
        if isinstance(e, Column):
            return self.columns[e.index]
        if isinstance(e, Literal):
            return self.const(e.value)
        if isinstance(e, CallMzNow):
            return "time"
        if isinstance(e, If):
            return self.emit_if(e)
        if isinstance(e, Call):
            impl = FUNCTIONS.get(e.func)
            if impl is None:
                raise AssertionError(f"compile: unknown function {e.func!r}")
            if impl.lazy:
                return getattr(self, "emit_" + e.func)(e.args)
            return self.emit_call(e.func, impl, e.args)
        raise AssertionError(f"compile: not a scalar expression: {e!r}")

    def emit_call(self, func: str, impl, args) -> str:
        names = [self.emit(a) for a in args]
        if func == "record":  # a tuple display, no call
            t = self.fresh()
            self.line(f"{t} = ({''.join(n + ', ' for n in names)})")
            self.nonnull.add(t)
            return t
        if impl.strict:
            if "None" in names:
                return "None"
            nullable = [n for n in names if self.may_be_null(n)]
        else:
            nullable = []
        if impl.inline is not None:
            for k, v in impl.env.items():
                self.bind(k, v)
            r = self.fresh("r")
            value = impl.inline.format(*names, r=r)
        else:
            fname = self.bind("_f_" + re.sub(r"\W", "_", func), impl.fn)
            value = f"{fname}({', '.join(names)})"
        t = self.fresh()
        if nullable:
            cond = " or ".join(f"{n} is None" for n in nullable)
            self.line(f"{t} = None if {cond} else {value}")
        else:
            self.line(f"{t} = {value}")
            if impl.strict or func in _NONNULL_RESULT:
                self.nonnull.add(t)
        return t

    def emit_filter(self, p: ScalarExpr, on_drop: str) -> None:
        """Emit ``if <p is not true>: on_drop`` at the current (top) level.  Conjunctions
        split into one test each; a strict inline call is tested without a temporary, and
        once it passed its arguments are known not to be NULL."""
        if isinstance(p, Call) and p.func == "and" and p.args:
            for a in p.args:
                self.emit_filter(a, on_drop)
            return
        impl = FUNCTIONS.get(p.func) if isinstance(p, Call) else None
        if impl is not None and not impl.lazy and impl.inline is not None and \
                (impl.strict or p.func in _NONNULL_RESULT):
            names = [self.emit(a) for a in p.args]
            if impl.strict and "None" in names:
                self.line(on_drop)
                return
            for k, v in impl.env.items():
                self.bind(k, v)
            tests = [f"{n} is None" for n in names if impl.strict and self.may_be_null(n)]
            tests.append(f"not {impl.inline.format(*names, r=self.fresh('r'))}")
            self.line(f"if {' or '.join(tests)}:")
            self.line(f"    {on_drop}")
            if impl.strict or p.func == "is_not_null":
                self.nonnull.update(n for n in names if n != "None")
            return
        self.line(f"if {self.emit(p)} is not True:")
        self.line(f"    {on_drop}")

    def may_be_null(self, name: str) -> bool:
        if name in self.nonnull:
            return False
        if name == "None":
            return True
        return not (name[0].isdigit() or name[0] in "'\"-" or name in ("True", "False")
                    or (name.startswith("_k") and name in self.env))

    # The lazy forms below stay flat: a CASE with many WHENs or a long COALESCE adds
    # one indentation level, not one per branch (Python allows 100 levels).

    def emit_if(self, e: If) -> str:
        t = self.fresh()
        c = self.emit(e.cond)
        if not isinstance(e.els, If):
            self.line(f"if {c} is True:")
            self.indent += 1
            self.line(f"{t} = {self.emit(e.then)}")
            self.indent -= 1
            self.line("else:")
            self.indent += 1
            self.line(f"{t} = {self.emit(e.els)}")
            self.indent -= 1
            return t
        # CASE WHEN c1 THEN v1 WHEN c2 THEN v2 ... ELSE v END, as a flat chain
        done = self.fresh("m")
        self.line(f"{done} = {c} is True")
        self.line(f"if {done}:")
        self.indent += 1
        self.line(f"{t} = {self.emit(e.then)}")
        self.indent -= 1
        e = e.els
        while isinstance(e, If):
            self.line(f"if not {done}:")
            self.indent += 1
            c = self.emit(e.cond)
            self.line(f"if {c} is True:")
            self.line(f"    {done} = True")
            self.indent += 1
            self.line(f"{t} = {self.emit(e.then)}")
            self.indent -= 2
            e = e.els
        self.line(f"if not {done}:")
        self.indent += 1
        self.line(f"{t} = {self.emit(e)}")
        self.indent -= 1
        return t

    def emit_coalesce(self, args) -> str:
        t = self.fresh()
        for i, a in enumerate(args):
            if i:
                self.line(f"if {t} is None:")
                self.indent += 1
            self.line(f"{t} = {self.emit(a)}")
            if i:
                self.indent -= 1
        return t

    def _emit_andor(self, args, stop: bool) -> str:
        # three-valued: ``stop`` (False for and, True for or) wins; else NULL if any NULL
        t = self.fresh()
        self.line(f"{t} = {self.emit(args[0])}")
        for a in args[1:]:
            self.line(f"if {t} is not {stop}:")
            self.indent += 1
            v = self.emit(a)
            self.line(f"if {v} is {stop} or {v} is None:")
            self.line(f"    {t} = {v}")
            self.indent -= 1
        return t

    def emit_and(self, args) -> str:
        return self._emit_andor(args, False) if args else "True"

    def emit_or(self, args) -> str:
        return self._emit_andor(args, True) if args else "False"

    # --------------------------------------------------------------------- finishing

    def build(self, header: str, fname: str) -> tuple[Callable, str]:
        defaults = "".join(f", {k}={k}" for k in self.env)
        src = f"def {fname}({header}, time=None, *{defaults}):\n" + "\n".join(self.lines) + "\n"
        if not self.env:
            src = src.replace(", *):", "):")
        ns = dict(self.env)
        exec(compile(src, f"<mzlite:{fname}>", "exec"), ns)
        return ns[fname], src


def _load_columns(gen: _Gen, cols, row: str = "row") -> None:
    for i in sorted(cols):
        if i not in gen.columns:
            gen.columns[i] = f"c{i}"
            gen.line(f"c{i} = {row}[{i}]")


#: compiled functions by the repr of what they compute (repr, not ==: Decimal('1.0') ==
#: Decimal('1.00') but they print differently); bounded, shared by every thread
_CACHE: dict[str, Callable] = {}


def _cached(key: str, build: Callable[[], tuple[Callable, str]]) -> Callable:
    fn = _CACHE.get(key)
    if fn is None:
        fn, src = build()
        fn.__mz_source__ = src
        if len(_CACHE) > 4096:
            _CACHE.clear()
        _CACHE[key] = fn
    return fn


def generated_source(fn: Callable) -> str | None:
    """The Python source a compiled function was generated from (for EXPLAIN and tests)."""
    return getattr(fn, "__mz_source__", None)


def compile_scalar(expr: ScalarExpr) -> Callable[..., Any]:
    """``f(row, time=None) -> value``; raises ``EvalError`` on a data error."""
    def build():
        gen = _Gen({})
        _load_columns(gen, columns_referenced(expr))
        gen.line(f"return {gen.emit(expr)}")
        return gen.build("row", "_scalar")
    return _cached("s" + repr(expr), build)


def compile_predicates(preds: Sequence[ScalarExpr]) -> Callable[..., bool]:
    """``f(row, time=None) -> bool``: True only when every predicate is true."""
    preds = tuple(preds)

    def build():
        gen = _Gen({})
        for p in preds:
            _load_columns(gen, columns_referenced(p))
            gen.emit_filter(p, "return False")
        gen.line("return True")
        return gen.build("row", "_preds")
    return _cached("p" + repr(preds), build)


def evaluate_constant(expr: ScalarExpr) -> Any:
    """The value of a column-free expression; raises ``EvalError`` on a data error.

    Constant folding happens once per literal at plan time (an INSERT of 10,000 literal
    rows folds 10,000 casts), so this walks the tree instead of generating code; the
    walk has the compiled code's semantics (``tests/test_compile.py`` checks both)."""
    if columns_referenced(expr):
        raise ValueError("evaluate_constant: expression reads columns")
    return interpret(expr, ())


def interpret(e: ScalarExpr, row: tuple, time: Any = None) -> Any:
    """Tree-walking evaluation with the compiled semantics (laziness, strictness)."""
    if isinstance(e, Literal):
        return e.value
    if isinstance(e, Column):
        return row[e.index]
    if isinstance(e, Call):
        impl = FUNCTIONS.get(e.func)
        if impl is None:
            raise AssertionError(f"compile: unknown function {e.func!r}")
        if impl.lazy:
            if e.func == "coalesce":
                for a in e.args:
                    v = interpret(a, row, time)
                    if v is not None:
                        return v
                return None
            stop = e.func == "or"
            res = not stop
            for a in e.args:
                v = interpret(a, row, time)
                if v is stop:
                    return stop
                if v is None:
                    res = None
            return res
        vals = [interpret(a, row, time) for a in e.args]
        if impl.strict and None in vals:
            return None
        return impl.fn(*vals)
    if isinstance(e, If):
        return interpret(e.then if interpret(e.cond, row, time) is True else e.els, row, time)
    if isinstance(e, CallMzNow):
        return time
    raise AssertionError(f"compile: not a scalar expression: {e!r}")


def _emit_mfp_body(gen: _Gen, mfp: MapFilterProject, row: str, on_drop: str, on_keep: Callable[[str], str]):
    """Emit the per-row work: predicates as early as their support allows, expressions on demand."""
    arity = mfp.input_arity
    exprs = mfp.expressions
    computed: set[int] = set()

    def ensure(j: int) -> None:
        if j < arity:
            _load_columns(gen, (j,), row)
            return
        if j in computed:
            return
        e = exprs[j - arity]
        for c in sorted(columns_referenced(e)):
            ensure(c)
        v = gen.emit(e)
        if v[0] == "t" and v != "time" and gen.lines and gen.lines[-1].startswith("    " * gen.indent + v + " = "):
            # rename the temporary that holds the value instead of copying it
            last = gen.lines[-1]
            gen.lines[-1] = last.replace(v + " = ", f"c{j} = ", 1)
            if v in gen.nonnull:
                gen.nonnull.add(f"c{j}")
        else:
            gen.line(f"c{j} = {v}")
            if not gen.may_be_null(v):
                gen.nonnull.add(f"c{j}")
        gen.columns[j] = f"c{j}"
        computed.add(j)

    for p in mfp.predicates:  # in the planner's order: an earlier one may guard a later one
        for c in sorted(columns_referenced(p)):
            ensure(c)
        gen.emit_filter(p, on_drop)
    proj = mfp.output_projection()
    for c in proj:
        ensure(c)
    if tuple(proj) == tuple(range(arity)):
        gen.line(on_keep(row))
    else:
        gen.line(on_keep("(" + "".join(f"c{c}, " for c in proj) + ")"))


def compile_mfp(mfp: MapFilterProject) -> Callable[..., tuple[list[tuple], list[EvalError]]]:
    """``f(rows, time=None) -> (output_rows, errors)``; a row whose evaluation raises
    ``EvalError`` is dropped and its error collected; row order is preserved."""
    if not mfp.expressions and not mfp.predicates:
        return _cached("m" + repr(mfp), lambda: _project_only(mfp.output_projection(), mfp.input_arity))
    return _cached("m" + repr(mfp), lambda: _mfp_loop(mfp, "rows", "row", "{v}", "e", "_mfp"))


def compile_mfp_pairs(mfp: MapFilterProject) -> Callable[..., tuple[list[tuple], list[tuple]]]:
    """``f(pairs, time=None) -> (output_pairs, error_pairs)`` over ``(row, diff)`` pairs: the
    same per-row code as ``compile_mfp``, with each diff carried along (no grouping of rows
    by diff and re-pairing around it); ``error_pairs`` are ``(EvalError, diff)``."""
    # a row kept as it is keeps its pair too: a filter over stored rows builds no tuple
    return _cached("p" + repr(mfp), lambda: _mfp_loop(mfp, "pairs", "pair", "({v}, d)", "(e, d)",
                                                      "_mfp_pairs", unpack="row, d = pair",
                                                      kept_whole="pair"))


def _mfp_loop(mfp: MapFilterProject, arg: str, item: str, kept: str, failed: str, fname: str,
              unpack: str = "", kept_whole: str = ""):
    """The generated loop of an MFP: ``for <item> in <arg>`` (then ``unpack``), appending
    ``kept`` (with ``{v}`` the output row; ``kept_whole`` instead when the row is kept as
    it is) and collecting ``failed`` for a row that raises."""
    gen = _Gen({})
    gen.line("out = []")
    gen.line("errs = []")
    gen.line("append = out.append")
    gen.line(f"for {item} in {arg}:")
    gen.indent += 1
    if unpack:
        gen.line(unpack)
    gen.line("try:")
    gen.indent += 1

    def keep(v: str) -> str:
        return "append(" + (kept_whole if kept_whole and v == "row" else kept.format(v=v)) + ")"
    _emit_mfp_body(gen, mfp, "row", "continue", keep)
    gen.indent -= 1
    gen.line("except EvalError as e:")
    gen.line(f"    errs.append({failed})")
    gen.indent -= 1
    gen.line("return out, errs")
    return gen.build(arg, fname)


def compile_source(cache_key: str, src: str, fname: str) -> Callable:
    """``fname`` defined by the generated Python ``src``, compiled once per ``cache_key``
    (operators that generate their own small loops: a join's fused lookup, a reduce's
    fused accumulation)."""
    def build():
        ns: dict[str, Any] = {}
        exec(compile(src, f"<mzlite:{fname}>", "exec"), ns)
        return ns[fname], src
    return _cached(cache_key, build)


def _project_only(proj: tuple[int, ...], arity: int) -> tuple[Callable, str]:
    """The MFP that only projects: a list copy or one comprehension, no per-row try."""
    if tuple(proj) == tuple(range(arity)):
        src = "def _mfp(rows, time=None):\n    return list(rows), []\n"
    else:
        cols = "".join(f"row[{c}], " for c in proj)
        src = f"def _mfp(rows, time=None):\n    return [({cols}) for row in rows], []\n"
    ns: dict[str, Any] = {}
    exec(compile(src, "<mzlite:_mfp>", "exec"), ns)
    return ns["_mfp"], src


def compile_mfp_row(mfp: MapFilterProject) -> Callable[..., tuple | None]:
    """``f(row, time=None) -> tuple | None`` (None: filtered out); raises ``EvalError``."""
    def build():
        gen = _Gen({})
        _emit_mfp_body(gen, mfp, "row", "return None", lambda v: f"return {v}")
        return gen.build("row", "_mfp_row")
    return _cached("r" + repr(mfp), build)
