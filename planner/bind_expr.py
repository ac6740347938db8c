"""Binding scalar SQL expressions (pglast nodes) to ``expr.scalar`` expressions.

Owns name scopes (``Scope``: which relation column a SQL name means, including outer
references of correlated subqueries), the typing of expressions through ``sql.types`` /
``sql.functions`` (implicit casts inserted, unknown literals coerced at bind time), and
``ExprContext``: the relation an expression is bound against.  Invariant: binding never
removes or reorders columns of ``ExprContext.rel``: a subquery *appends* a column (see
``planner.decorrelate``), so expressions bound earlier stay valid.  Every user mistake
raises a ``sql.errors`` error carrying the 1-based position of the offending token.
Deliberately not here: relational binding (``planner.bind_query``) and the subquery
rewrites themselves (``planner.decorrelate``).

Over 600 lines: one ``_<NodeType>`` method per pglast expression node on one binding
context (``ExprContext``); the families that grew it (document types, windows, date/time
literals) keep their own logic in ``planner/bind_document.py``, ``planner/windows.py`` and
``sql.types``/``repr``, leaving only their dispatch here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Optional

from pglast import ast

from expr.relation import AggregateExpr
from expr.scalar import Call, CallMzNow, Column, If, Literal, ScalarExpr
from repr.errors import EvalError
from sql import errors, functions as F, types as T
from sql.functions.aggregates import WINDOW_FUNCTIONS
from sql.types import arrays as TD


def enum_name(v) -> str:
    return getattr(v, "name", v)


# ------------------------------------------------------------------ scopes


@dataclass
class ScopeItem:
    table: Optional[str]      #: the FROM item's (alias) name, or None
    name: Optional[str]       #: the column name (None: unnamed, not resolvable)
    index: int                #: column of the relation the scope describes
    in_star: bool = True      #: part of ``*`` expansion
    qualified_only: bool = False  #: reachable only as ``table.name`` (USING originals)


@dataclass(eq=False)
class OuterRef:
    """The link from a subquery's scope to the enclosing query's row.

    ``mapping``: outer-row column -> column of the subquery's prefix (None: identity, the
    first binding pass where the prefix is the whole outer row); ``used`` collects the
    outer-row columns the subquery reads (its correlation)."""
    scope: "Scope"
    mapping: Optional[dict[int, int]] = None
    used: set = field(default_factory=set)


class Scope:
    def __init__(self, items: list[ScopeItem], outer: Optional[OuterRef] = None):
        self.items = items
        self.outer = outer

    def tables(self) -> set:
        return {i.table for i in self.items if i.table is not None}

    def lookup_local(self, ctx: "ExprContext", parts: tuple[str, ...], loc) -> Optional[int]:
        if len(parts) == 1:
            hits = [i for i in self.items if i.name == parts[0] and not i.qualified_only]
        else:
            table = parts[-2]
            hits = [i for i in self.items if i.name == parts[-1] and i.table == table]
        idx = {h.index for h in hits}
        if len(idx) > 1:
            raise ctx.binder.error(errors.AMBIGUOUS_COLUMN, f'column reference "{parts[-1]}" is ambiguous', loc)
        return hits[0].index if hits else None

    def has_table(self, table: str) -> bool:
        return table in self.tables()


class GroupScope(Scope):
    """The scope after a Reduce: FROM columns resolve only through the group key."""

    def __init__(self, inner: Scope, keymap: dict[int, int]):
        super().__init__(inner.items, inner.outer)
        self.inner = inner
        self.keymap = keymap

    def lookup_local(self, ctx, parts, loc):
        i = self.inner.lookup_local(ctx, parts, loc)
        if i is None:
            return None
        if i in self.keymap:
            return self.keymap[i]
        item = next(it for it in self.items if it.index == i)
        name = f"{item.table}.{item.name}" if item.table else item.name
        raise ctx.binder.error(errors.GROUPING_ERROR,
                               f'column "{name}" must appear in the GROUP BY clause or be used in an aggregate function',
                               loc)


def resolve_column(ctx: "ExprContext", scope: Scope, parts: tuple[str, ...], loc) -> Optional[int]:
    """The column ``parts`` names in ``scope``'s relation, following outer references."""
    idx = scope.lookup_local(ctx, parts, loc)
    if idx is not None:
        return idx
    if len(parts) > 1 and scope.has_table(parts[-2]):
        raise ctx.binder.error(errors.UNDEFINED_COLUMN, f"column {parts[-2]}.{parts[-1]} does not exist", loc)
    o = scope.outer
    if o is None:
        return None
    j = resolve_column(ctx, o.scope, parts, loc)
    if j is None:
        return None
    o.used.add(j)
    return o.mapping[j] if o.mapping is not None else j


# ------------------------------------------------------------------ aggregates in a grouped query


@dataclass
class Grouping:
    """What a grouped query's post-Reduce expressions may refer to."""
    prefix: int                                 #: outer columns leading the Reduce output
    keys: list[ScalarExpr]                      #: group key expressions over the FROM relation
    aggs: dict[int, int]                        #: id(FuncCall node) -> output column
    from_ctx: "ExprContext"                     #: for matching non-column key expressions


AGGREGATES = F.aggregate_names()
#: the window functions that are no aggregates (``row_number``, ``lag``): without OVER, 42809
_WINDOW_ONLY = frozenset(WINDOW_FUNCTIONS) - set(AGGREGATES)
#: the collecting aggregates (see AggregateExpr.order_by and planner.bind_document)
_COLLECTING = ("array_agg", "jsonb_agg", "jsonb_object_agg", "list_agg")


def is_aggregate_call(node) -> bool:
    return (isinstance(node, ast.FuncCall) and node.over is None
            and node.funcname[-1].sval.lower() in AGGREGATES)


def find_calls(node, is_call, out: list) -> list:
    """The nodes of ``node`` for which ``is_call`` holds, outside subqueries (this query
    level: a subquery comparison's left operand, ``max(x) IN (SELECT ...)``, is of it),
    appended to ``out`` in order; a found call is not looked inside."""
    if isinstance(node, ast.SubLink):
        return find_calls(node.testexpr, is_call, out) if node.testexpr is not None else out
    if is_call(node):
        out.append(node)
        return out
    if isinstance(node, ast.Node):
        for name in node:
            find_calls(getattr(node, name), is_call, out)
    elif isinstance(node, tuple):
        for x in node:
            find_calls(x, is_call, out)
    return out


def find_aggregates(node, out: list) -> list:
    """Aggregate calls in ``node`` outside subqueries (aggregates of this query level)."""
    return find_calls(node, is_aggregate_call, out)


def parse_nodes(node):
    """Every pglast ``Node`` in the parse tree ``node``, in pre-order, left to right."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Node):
            yield n
            stack.extend(reversed([getattr(n, f) for f in n]))
        elif isinstance(n, tuple):
            stack.extend(reversed(n))


def contains_node(node, cls) -> bool:
    """Whether the parse tree ``node`` holds a node of class ``cls`` anywhere."""
    return any(isinstance(n, cls) for n in parse_nodes(node))


def has_sublink(node) -> bool:
    return contains_node(node, ast.SubLink)


# ------------------------------------------------------------------ expression context


def python_literal(value) -> Literal:
    """A bound parameter: type inferred from the Python value (a ``Literal`` is a typed
    parameter, EXECUTE's: it binds as itself)."""
    if value is None:
        return Literal(None, "unknown")
    if isinstance(value, bool):
        return Literal(value, "bool")
    if isinstance(value, int):
        if -2**31 <= value < 2**31:
            return Literal(value, "int4")
        if -2**63 <= value < 2**63:
            return Literal(value, "int8")
        return Literal(Decimal(value), "numeric")
    if isinstance(value, float):
        return Literal(value, "float8")
    if isinstance(value, Decimal):
        return Literal(value, "numeric")
    if isinstance(value, str):
        return Literal(value, "unknown")
    if isinstance(value, Literal):
        return value
    dt = _datetime_parameter(value)
    if dt is not None:
        return dt
    doc = document_literal(value)  # bytes, UUID, dict, list
    if doc is not None:
        return doc
    raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, f"unsupported parameter type {type(value).__name__}")


def document_literal(value):  # see planner.bind_document
    from planner.bind_document import document_literal as f
    return f(value)


def with_position(e: errors.Error, pos) -> errors.Error:
    if getattr(e, "position", None) is None:
        e.position = pos
    return e


class ExprContext:
    """Binds expressions against the relation ``rel`` (column types ``types``) named by ``scope``.

    ``rel`` grows (columns appended) when a subquery is bound; read it after binding."""

    def __init__(self, binder, rel, types: list[str], scope: Scope, *, clause: str = "",
                 grouping: Optional[Grouping] = None, allow_aggregates: bool = False):
        self.binder = binder
        self.rel = rel
        self.types = list(types)
        self.scope = scope
        self.clause = clause
        self.grouping = grouping
        self.allow_aggregates = allow_aggregates

    # ---- types
    def typeof(self, e: ScalarExpr) -> str:
        if isinstance(e, Column):
            return self.types[e.index]
        return e.type

    def coerce(self, e: ScalarExpr, to: str, context: str = "implicit", loc=None) -> ScalarExpr:
        frm = self.typeof(e)
        if frm == to:
            return e
        pos = self.binder.pos(loc)
        if isinstance(e, Literal) and frm == "unknown":
            if e.value is None:
                self.binder.note_coerced(e, to)
                return Literal(None, to)
            if T.runtime_input(to):  # arrays and lists: the run-time cast composes the element's input
                return self.fold(Call(F.resolve_cast("text", to, "explicit"), (Literal(e.value, "text"),), to), loc)
            try:
                return Literal(T.parse_literal(e.value, to), to)
            except errors.Error as ex:
                raise with_position(ex, pos)
        try:
            fid = F.resolve_cast(frm, to, context)
        except errors.Error as ex:
            if context != "explicit" and ex.sqlstate == "42846":
                raise errors.error_for(errors.DATATYPE_MISMATCH, ex.message, position=pos)
            raise with_position(ex, pos)
        if fid is None:
            return e
        out = Call(fid, (e,), to)
        if isinstance(e, Literal):
            return self.fold(out, loc)
        return out

    def fold(self, e: ScalarExpr, loc=None) -> ScalarExpr:
        """Evaluate a column-free call of literals now (PostgreSQL folds constants at plan time)."""
        from expr.compile import evaluate_constant
        from expr.functions import FUNCTIONS
        try:
            impl = FUNCTIONS.get(e.func) if isinstance(e, Call) else None
            if impl is not None and not impl.lazy and all(isinstance(a, Literal) for a in e.args):
                vals = [a.value for a in e.args]  # direct call: no code generation per literal
                if impl.strict and any(v is None for v in vals):
                    return Literal(None, e.type)
                return Literal(impl.fn(*vals), e.type)
            return Literal(evaluate_constant(e), e.type)
        except EvalError as ex:
            raise errors.error_for(ex.sqlstate, ex.message, position=self.binder.pos(loc),
                                   detail=getattr(ex, "detail", None))

    def coerce_bool(self, e: ScalarExpr, what: str, loc) -> ScalarExpr:
        t = self.typeof(e)
        if t == "bool":
            return e
        if t == "unknown":
            return self.coerce(e, "bool", "implicit", loc)
        if what in ("AND", "OR", "NOT") or what.startswith("IS "):  # an operator's operand: Materialize's words
            raise self.binder.error(errors.DATATYPE_MISMATCH, f"{what} argument must have type boolean, not type "
                                    f"{T.display_name(t)}", loc)
        raise self.binder.error(errors.DATATYPE_MISMATCH, f"argument of {what} must be type boolean, not type "
                                f"{T.display_name(t)}", loc)

    def apply(self, res, args: list[ScalarExpr], loc) -> list[ScalarExpr]:
        return [self.coerce(a, t, "implicit", loc) for a, t in zip(args, res.arg_types)]

    def call_operator(self, op: str, args: list[ScalarExpr], loc) -> ScalarExpr:
        types = [self.typeof(a) for a in args]
        try:
            res = F.resolve_operator(op, types[0], types[1] if len(types) > 1 else None)
        except errors.Error as ex:
            raise with_position(ex, self.binder.pos(loc))
        return Call(res.func_id, tuple(self.apply(res, args, loc)), res.return_type)

    def call_function(self, name: str, args: list[ScalarExpr], loc) -> ScalarExpr:
        types = [self.typeof(a) for a in args]
        try:
            res = F.resolve_function(name, types)
        except errors.Error as ex:
            raise with_position(ex, self.binder.pos(loc))
        if res.func_id == "now":  # one wall clock per read time, never folded at plan time
            return Call("now", (CallMzNow(),), res.return_type)
        return Call(res.func_id, tuple(self.apply(res, args, loc)), res.return_type)

    def common(self, exprs: list[ScalarExpr], what: str, loc) -> tuple[str, list[ScalarExpr]]:
        types = [self.typeof(e) for e in exprs]
        t = T.common_type(types)
        if t is None:
            known = [x for x in types if x != "unknown"]
            other = next((x for x in known if x != known[0]), known[-1])
            raise self.binder.error(errors.DATATYPE_MISMATCH, f"{what} types {T.display_name(known[0])} and "
                                    f"{T.display_name(other)} cannot be matched", loc)
        return t, [self.coerce(e, t, "implicit", loc) for e in exprs]

    # ---- entry point
    def bind(self, node) -> ScalarExpr:
        g = self.grouping
        if g is not None and not isinstance(node, (ast.ColumnRef, ast.A_Const, ast.ParamRef)):
            hit = self._match_group_key(node)
            if hit is not None:
                return hit
        m = getattr(self, "_" + type(node).__name__, None)
        if m is None:
            name = type(node).__name__
            what = _EXPRESSION_WORDS.get(name, "")
            if name == "XmlExpr" and enum_name(node.op) == "IS_DOCUMENT":
                what = "IS DOCUMENT"
            raise self.binder.refuse(what, getattr(node, "location", None))
        return m(node)

    def bind_bool(self, node, what: str) -> ScalarExpr:
        return self.coerce_bool(self.bind(node), what, getattr(node, "location", None))

    def _match_group_key(self, node) -> Optional[ScalarExpr]:
        g = self.grouping
        if is_aggregate_call(node) or all(isinstance(k, Column) for k in g.keys) or has_sublink(node) \
                or find_aggregates(node, []):
            return None
        scratch = ExprContext(self.binder, g.from_ctx.rel, g.from_ctx.types, g.from_ctx.scope, clause=self.clause)
        try:
            e = scratch.bind(node)
        except errors.Error:
            return None
        for k, key in enumerate(g.keys):
            if key == e and not isinstance(key, Column):
                return Column(g.prefix + k)
        return None

    # ---- leaves
    def _ColumnRef(self, node) -> ScalarExpr:
        parts = []
        for f in node.fields:
            if isinstance(f, ast.A_Star):
                raise self.binder.error(errors.FEATURE_NOT_SUPPORTED, "row expressions (*) are not supported here",
                                        node.location)
            parts.append(f.sval)
        parts = tuple(parts)
        idx = resolve_column(self, self.scope, parts, node.location)
        if idx is None:
            if len(parts) > 1:
                raise self.binder.error(errors.UNDEFINED_TABLE,
                                        f'missing FROM-clause entry for table "{parts[-2]}"', node.location)
            raise self.binder.error(errors.UNDEFINED_COLUMN, f'column "{parts[-1]}" does not exist', node.location)
        return Column(idx)

    def _A_Const(self, node) -> ScalarExpr:
        if node.isnull:
            return Literal(None, "unknown")
        v = node.val
        if isinstance(v, ast.Integer):
            return python_literal(v.ival)
        if isinstance(v, ast.Float):
            return self._numeric_literal(v.fval, getattr(node, "location", None))
        if isinstance(v, ast.String):
            return Literal(v.sval, "unknown")
        if isinstance(v, ast.Boolean):
            return Literal(bool(v.boolval), "bool")
        raise self.binder.error(errors.FEATURE_NOT_SUPPORTED, "unsupported literal", None)

    def _numeric_literal(self, text: str, loc) -> ScalarExpr:
        """A numeric constant, in time linear in its length: PostgreSQL's numeric range (131072
        digits before the point, 16383 after) or 22003, checked on the text before any
        conversion; an integer of 19 digits or fewer may be an int4/int8."""
        digits = text.lower()
        mantissa, _, exp = digits.partition("e")
        whole, _, frac = mantissa.partition(".")
        try:
            shift = int(exp) if exp else 0
        except ValueError:
            shift = 0
        if len(exp) > 7 or len(whole.lstrip("0")) + shift > 131072 or len(frac) - shift > 16383:
            raise self.binder.error(errors.NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format", loc)
        d = Decimal(text)
        if not frac and not exp and len(whole.lstrip("0")) <= 19:
            return python_literal(int(whole))
        return Literal(d, "numeric")

    def _ParamRef(self, node) -> ScalarExpr:
        n = node.number
        if not 1 <= n <= self.binder.parameter_count():
            raise self.binder.error("42P02", f"there is no parameter ${n}", node.location)
        return self.binder.parameter(n - 1)

    # ---- operators
    def _A_Expr(self, node) -> ScalarExpr:
        kind = enum_name(node.kind)
        loc = node.location
        op = node.name[-1].sval if node.name else ""
        if kind == "AEXPR_OP" and isinstance(node.lexpr, ast.RowExpr) and isinstance(node.rexpr, ast.RowExpr):
            return self.row_equal(op, node.lexpr, node.rexpr, loc)
        if kind == "AEXPR_OP":
            if node.lexpr is None:
                return self.call_operator(op, [self.bind(node.rexpr)], loc)
            if node.rexpr is None:
                return self.call_operator(op, [self.bind(node.lexpr)], loc)
            return self.call_operator(op, [self.bind(node.lexpr), self.bind(node.rexpr)], loc)
        if kind in ("AEXPR_LIKE", "AEXPR_ILIKE"):
            return self.call_operator(op, [self.bind(node.lexpr), self.bind(node.rexpr)], loc)
        if kind in ("AEXPR_DISTINCT", "AEXPR_NOT_DISTINCT"):
            name = "is distinct from" if kind == "AEXPR_DISTINCT" else "is not distinct from"
            return self.call_operator(name, [self.bind(node.lexpr), self.bind(node.rexpr)], loc)
        if kind == "AEXPR_NULLIF":
            return self.call_function("nullif", [self.bind(node.lexpr), self.bind(node.rexpr)], loc)
        if kind == "AEXPR_IN" and isinstance(node.lexpr, ast.RowExpr):
            eqs = [self.row_equal("=", node.lexpr, r, loc) for r in node.rexpr]
            out = eqs[0] if len(eqs) == 1 else Call("or", tuple(eqs), "bool")
            return Call("not", (out,), "bool") if op == "<>" else out
        if kind == "AEXPR_IN":
            x = self.bind(node.lexpr)
            items = [self.bind(r) for r in node.rexpr]
            # PostgreSQL: x IN (a, b) is x = a OR x = b with the list's common type
            t, coerced = self.common([x] + items, "IN", loc)
            x, items = coerced[0], coerced[1:]
            eqs = [self.call_operator("=", [x, i], loc) for i in items]
            out = eqs[0] if len(eqs) == 1 else Call("or", tuple(eqs), "bool")
            return Call("not", (out,), "bool") if op == "<>" else out
        if kind.startswith("AEXPR_BETWEEN") or kind.startswith("AEXPR_NOT_BETWEEN"):
            x = self.bind(node.lexpr)
            lo, hi = (self.bind(r) for r in node.rexpr)

            def between(lo, hi):
                return Call("and", (self.call_operator(">=", [x, lo], loc), self.call_operator("<=", [x, hi], loc)),
                            "bool")
            out = between(lo, hi)
            if kind.endswith("_SYM"):
                out = Call("or", (out, between(hi, lo)), "bool")
            return Call("not", (out,), "bool") if "NOT" in kind else out
        if kind in ("AEXPR_OP_ANY", "AEXPR_OP_ALL"):
            return self.array_compare(kind == "AEXPR_OP_ALL", op, node, loc)
        raise self.binder.refuse({"AEXPR_SIMILAR": "SIMILAR TO"}.get(kind, ""), loc, "this operator")

    def row_equal(self, op: str, left, right, loc) -> ScalarExpr:
        """``(a, b) = (c, d)``: the AND of the pairwise equalities (PostgreSQL's row 3VL)."""
        if op not in ("=", "<>", "!="):
            raise self.binder.error(errors.FEATURE_NOT_SUPPORTED, f"row comparison with {op} is not supported", loc)
        if not isinstance(right, ast.RowExpr) or len(left.args) != len(right.args):
            raise self.binder.error(errors.SYNTAX_ERROR, "unequal number of entries in row expressions", loc)
        eqs = [self.call_operator("=", [self.bind(a), self.bind(b)], loc) for a, b in zip(left.args, right.args)]
        out = eqs[0] if len(eqs) == 1 else Call("and", tuple(eqs), "bool")
        return out if op == "=" else Call("not", (out,), "bool")

    def _BoolExpr(self, node) -> ScalarExpr:
        op = enum_name(node.boolop)
        word = {"AND_EXPR": "AND", "OR_EXPR": "OR", "NOT_EXPR": "NOT"}[op]
        args = [self.bind_bool(a, word) for a in node.args]
        if op == "NOT_EXPR":
            return Call("not", (args[0],), "bool")
        return Call("and" if op == "AND_EXPR" else "or", tuple(args), "bool")

    def _NullTest(self, node) -> ScalarExpr:
        x = self.bind(node.arg)
        f = "is_null" if enum_name(node.nulltesttype) == "IS_NULL" else "is_not_null"
        return Call(f, (x,), "bool")

    def _BooleanTest(self, node) -> ScalarExpr:
        t = enum_name(node.booltesttype)
        word = t.replace("_", " ").lower()
        x = self.bind_bool(node.arg, word.upper())
        f = {"IS_TRUE": "is_true", "IS_NOT_TRUE": "is_not_true", "IS_FALSE": "is_false",
             "IS_NOT_FALSE": "is_not_false", "IS_UNKNOWN": "is_null", "IS_NOT_UNKNOWN": "is_not_null"}[t]
        return Call(f, (x,), "bool")

    def _TypeCast(self, node) -> ScalarExpr:
        to = self.binder.type_name(node.typeName)
        if to == "interval" and node.typeName.typmods and isinstance(node.arg, ast.A_Const) \
                and isinstance(node.arg.val, ast.String):  # interval '1' day
            return interval_literal(self, node)
        mod = type_modifier(self.binder, node.typeName, to)
        if isinstance(node.arg, ast.A_ArrayExpr) and not node.arg.elements and TD.is_array(to):
            from repr.arrays import Array
            return Literal(Array(()), to)
        if isinstance(node.arg, ast.FuncCall) and to.endswith(" list"):  # LIST[]::int list (planner.bind_lists)
            from planner.bind_lists import cast_empty_list
            empty = cast_empty_list(self, node.arg, to)
            if empty is not None:
                return empty
        x = self.bind(node.arg)
        return self.apply_typmod(self.coerce(x, to, "explicit", node.location), mod, True, node.location)

    # ---- type modifiers (sql.types.typmod_for; evaluated by expr.functions.char/numeric/datetime)
    def apply_typmod(self, e: ScalarExpr, typmod, explicit: bool, loc=None, fold: bool = True) -> ScalarExpr:
        """``e`` (already of the modified type's base type) checked against ``typmod``: an
        explicit cast truncates, an assignment raises 22001/22003.  ``fold=False`` keeps a
        literal's check for evaluation time (a column DEFAULT fails when used, not when declared)."""
        if typmod is None or typmod[1] is None:
            return e
        if typmod[0] == "numeric":
            args = (e, Literal(typmod[1], "int4"), Literal(typmod[2], "int4"))
        else:
            args = (e, Literal(typmod[1], "int4"), Literal(explicit, "bool"))
        out = Call("typmod_" + typmod[0], args, self.typeof(e))
        return self.fold(out, loc) if fold and isinstance(e, Literal) else out
    # ---- end

    def _CollateClause(self, node) -> ScalarExpr:
        """``x COLLATE "C"``: text compares by code point, which is the C collation; another
        collation would be ignored, so it is refused (0A000), and a non-text operand is
        PostgreSQL's 42804."""
        e = self.bind(node.arg)
        name = node.collname[-1].sval if node.collname else ""
        if name.lower() not in ("c", "posix", "default", "ucs_basic"):
            raise self.binder.error(errors.FEATURE_NOT_SUPPORTED, f'collation "{name}" is not supported: mzlite '
                                    f'compares text by code point (the "C" collation)', node.location)
        t = self.typeof(e)
        if t not in ("text", "bpchar", "varchar", "unknown", "name", "char"):
            raise self.binder.error(errors.DATATYPE_MISMATCH,
                                    f"collations are not supported by type {T.display_name(t)}", node.location)
        return e

    def _CaseExpr(self, node) -> ScalarExpr:
        loc = node.location
        arg = self.bind(node.arg) if node.arg is not None else None
        conds, results = [], []
        for w in node.args:
            if arg is not None:
                c = self.call_operator("=", [arg, self.bind(w.expr)], w.location)
            else:
                c = self.bind_bool(w.expr, "CASE/WHEN")
            conds.append(c)
            results.append(self.bind(w.result))
        els = self.bind(node.defresult) if node.defresult is not None else Literal(None, "unknown")
        t, coerced = self.common(results + [els], "CASE", loc)
        out = coerced[-1]
        for c, r in reversed(list(zip(conds, coerced[:-1]))):
            out = If(c, r, out, t)
        return out

    def _CoalesceExpr(self, node) -> ScalarExpr:
        return self.call_function("coalesce", [self.bind(a) for a in node.args], node.location)

    def _MinMaxExpr(self, node) -> ScalarExpr:
        name = "greatest" if enum_name(node.op) == "IS_GREATEST" else "least"
        return self.call_function(name, [self.bind(a) for a in node.args], node.location)

    # ---- functions and aggregates
    def _FuncCall(self, node) -> ScalarExpr:
        name = node.funcname[-1].sval.lower()
        loc = node.location
        if node.over is not None:  # window functions: planner.windows
            from planner.windows import window_call
            return window_call(self, node)
        if name == "list":  # Materialize's LIST[...] / LIST(subquery) (planner.bind_lists)
            from planner.bind_lists import bind_list_constructor, is_list_constructor
            if is_list_constructor(node):
                return bind_list_constructor(self, node)
        if name in AGGREGATES:
            g = self.grouping
            if g is not None and id(node) in g.aggs:
                return Column(g.aggs[id(node)])
            clause = self.clause or "this context"
            raise self.binder.error(errors.GROUPING_ERROR, f"aggregate functions are not allowed in {clause}", loc)
        if node.agg_star or node.agg_distinct or node.agg_filter is not None:
            raise self.binder.error(errors.WRONG_OBJECT_TYPE,
                                    f"{name} is not an aggregate function", loc)
        if name in _WINDOW_ONLY and len(node.funcname) == 1:  # PostgreSQL's words (and Materialize's)
            raise self.binder.error(errors.WRONG_OBJECT_TYPE, f"window function {name} requires an OVER clause", loc)
        args = [self.bind(a) for a in (node.args or ())]
        if name == "mz_logical_timestamp":  # Materialize's text for the old name
            raise self.binder.error(errors.UNDEFINED_FUNCTION, "mz_logical_timestamp() has been renamed to mz_now()",
                                    loc)
        if name == "mz_now":
            if args:
                raise self.binder.error(errors.UNDEFINED_FUNCTION, "function mz_now() takes no arguments", loc)
            return CallMzNow()
        if name == "pg_typeof" and len(args) == 1:  # the argument's type, known at plan time
            from sql.types import display_name
            return Literal(display_name(self.typeof(args[0])), "text")
        return self.call_function(name, args, loc)

    def bind_aggregate(self, node) -> AggregateExpr:
        """An aggregate call's ``AggregateExpr`` with its argument bound against this context."""
        name = node.funcname[-1].sval.lower()
        loc = node.location
        inner = ExprContext(self.binder, self.rel, self.types, self.scope, clause="aggregate function calls")
        for a in node.args or ():
            if find_aggregates(a, []):
                raise self.binder.error(errors.GROUPING_ERROR, "aggregate function calls cannot be nested",
                                        find_aggregates(a, [])[0].location)
        args = [inner.bind(a) for a in (node.args or ())]
        if node.agg_star:
            args = []
        types = [inner.typeof(a) for a in args]
        try:
            res = F.resolve_aggregate(name, types)
        except errors.Error as ex:
            raise with_position(ex, self.binder.pos(loc))
        if res.func == "count" and not args:
            expr: ScalarExpr = Literal(True, "bool")
        elif res.func == "string_agg":
            v = inner.coerce(args[0], res.input_type, "implicit", loc)
            d = inner.coerce(args[1], "text", "implicit", loc)
            expr = Call("record", (v, d), "record")
        elif res.func == "jsonb_object_agg":
            k = inner.coerce(args[0], "text", "implicit", loc)
            v = inner.coerce(args[1], "text", "implicit", loc) if types[1] == "unknown" else args[1]
            expr = Call("record", (k, v), "record")
        else:
            expr = inner.coerce(args[0], res.input_type, "implicit", loc)
        order_by: tuple = ()
        if node.agg_order or res.func in _COLLECTING:  # the ordered form (AggregateExpr.order_by)
            keys, order_by = self.bind_agg_order(inner, node, args)
            if not order_by and node.agg_filter is not None and res.func != "jsonb_object_agg":
                # array_agg/jsonb_agg keep NULL values, so FILTER needs the ordered form's NULL record
                keys, order_by = (Literal(True, "bool"),), ((False, True),)
            if not order_by and res.func == "list_agg":  # always ordered (planner.bind_lists)
                from planner.bind_lists import LIST_AGG_DEFAULT_ORDER
                keys, order_by = (Literal(True, "bool"),), LIST_AGG_DEFAULT_ORDER
            if order_by or res.func == "jsonb_object_agg":
                expr = Call("record", (expr,) + keys, "record")
                if node.agg_filter is not None:
                    cond = inner.bind_bool(node.agg_filter, "FILTER")
                    expr = If(cond, expr, Literal(None, "record"), "record")
                self.rel, self.types = inner.rel, inner.types
                return AggregateExpr(res.func, expr, bool(node.agg_distinct), res.input_type, res.output_type,
                                     order_by)
        if node.agg_filter is not None:
            cond = inner.bind_bool(node.agg_filter, "FILTER")
            # FILTER: rows failing the condition contribute NULL (ignored by every aggregate)
            if res.func == "string_agg":
                expr = If(cond, expr, Literal(None, "record"), "record")
            else:
                expr = If(cond, expr, Literal(None, res.input_type), res.input_type)
        self.rel, self.types = inner.rel, inner.types
        return AggregateExpr(res.func, expr, bool(node.agg_distinct), res.input_type, res.output_type)

    # ---- arrays, subscripts, ANY/ALL, ORDER BY in aggregates (planner.bind_document)
    def bind_agg_order(self, inner: "ExprContext", node, args) -> tuple:
        from planner.bind_document import bind_agg_order
        return bind_agg_order(self, inner, node, args)

    def _A_ArrayExpr(self, node) -> ScalarExpr:
        from planner.bind_document import bind_array_expr
        return bind_array_expr(self, node)

    def _A_Indirection(self, node) -> ScalarExpr:
        from planner.bind_document import bind_indirection
        return bind_indirection(self, node)

    def array_compare(self, want_all: bool, op: str, node, loc) -> ScalarExpr:
        from planner.bind_document import array_compare
        return array_compare(self, want_all, op, node, loc)
    # ---- end

    # ---- subqueries
    def _SubLink(self, node) -> ScalarExpr:
        from planner import decorrelate
        if enum_name(node.subLinkType) == "ARRAY_SUBLINK":  # ARRAY(SELECT ...): planner.bind_document
            from planner.bind_document import bind_array_subquery
            return bind_array_subquery(self, node)
        return decorrelate.bind_sublink(self, node)

    def _RowExpr(self, node) -> ScalarExpr:
        raise self.binder.error(errors.FEATURE_NOT_SUPPORTED, "row constructors are not supported", node.location)

    def _SQLValueFunction(self, node) -> ScalarExpr:
        # CURRENT_TIMESTAMP/CURRENT_DATE/LOCALTIMESTAMP/... read the statement's clock
        op = enum_name(node.op)
        now = self.call_function("now", [], node.location)
        to = {"SVFOP_CURRENT_DATE": "date", "SVFOP_LOCALTIMESTAMP": "timestamp", "SVFOP_LOCALTIMESTAMP_N": "timestamp",
              "SVFOP_CURRENT_TIME": "time", "SVFOP_CURRENT_TIME_N": "time", "SVFOP_LOCALTIME": "time",
              "SVFOP_LOCALTIME_N": "time"}.get(op)
        if op.startswith(("SVFOP_CURRENT_TIMESTAMP", "SVFOP_CURRENT_DATE", "SVFOP_LOCAL")):
            return now if to is None else self.coerce(now, to, "explicit", node.location)
        if op in ("SVFOP_CURRENT_SCHEMA", "SVFOP_CURRENT_CATALOG"):
            return self.call_function("current_schema" if op == "SVFOP_CURRENT_SCHEMA" else "current_database", [],
                                      node.location)
        raise self.binder.error(errors.FEATURE_NOT_SUPPORTED, f"{op[6:].lower()} is not supported", node.location)


def figure_colname(node) -> str:
    """PostgreSQL's FigureColname: the default output name of a select-list expression."""
    if isinstance(node, ast.ColumnRef):
        last = node.fields[-1]
        return last.sval if isinstance(last, ast.String) else "?column?"
    if isinstance(node, ast.FuncCall):
        if node.funcname[-1].sval.lower() == "list" and node.args and isinstance(node.args[0], ast.SubLink):
            from planner.bind_lists import subquery_colname  # LIST(subquery): its column's name
            return subquery_colname(node, figure_colname)
        return node.funcname[-1].sval.lower()
    if isinstance(node, ast.TypeCast):
        inner = figure_colname(node.arg)
        if inner != "?column?":
            return inner
        return node.typeName.names[-1].sval
    if isinstance(node, ast.CaseExpr):
        return "case"
    if isinstance(node, ast.CoalesceExpr):
        return "coalesce"
    if isinstance(node, ast.MinMaxExpr):
        return "greatest" if enum_name(node.op) == "IS_GREATEST" else "least"
    if isinstance(node, ast.A_Expr) and enum_name(node.kind) == "AEXPR_NULLIF":
        return "nullif"
    if isinstance(node, ast.SubLink):
        k = enum_name(node.subLinkType)
        if k == "EXISTS_SUBLINK":
            return "exists"
        if k == "EXPR_SUBLINK":
            sel = node.subselect
            while sel.op is not None and enum_name(sel.op) != "SETOP_NONE":
                sel = sel.larg
            tl = sel.targetList or ()
            if tl:
                return tl[0].name or figure_colname(tl[0].val)
        if k == "ARRAY_SUBLINK":
            return "array"
    if isinstance(node, ast.RowExpr):
        return "row"
    if isinstance(node, ast.CollateClause):
        return figure_colname(node.arg)
    return "?column?"


# ---- type modifiers
def type_modifier(binder, tn, type_: str):
    """The modifier written in the pglast ``TypeName`` ``tn`` (base type ``type_``), validated
    by ``sql.types.typmod_for``; None when there is none."""
    mods = []
    for m in tn.typmods or ():
        v = getattr(getattr(m, "val", None), "ival", None)
        if not isinstance(v, int):
            raise binder.error(errors.SYNTAX_ERROR, "type modifiers must be simple constants or identifiers",
                               tn.location)
        mods.append(v)
    try:
        if type_ in ("time", "timestamp", "timestamptz", "interval"):  # precision, interval fields
            from sql.types.datetime import typmod_for_datetime
            return typmod_for_datetime(type_, mods)
        return T.typmod_for(tn.names[-1].sval, type_, mods)
    except errors.Error as e:
        e.position = binder.pos(tn.location)
        raise
# ---- end


# ---- date/time family ----
def _datetime_parameter(value) -> Optional[Literal]:
    """date -> date, time -> time, naive datetime -> timestamp, aware -> timestamptz (in
    UTC), timedelta -> interval (days and a time part, as PostgreSQL reads it)."""
    import datetime as pydt

    from repr.dates import UTC, Interval
    if isinstance(value, pydt.datetime):
        if value.tzinfo is None:
            return Literal(value, "timestamp")
        return Literal(value.astimezone(UTC), "timestamptz")
    if isinstance(value, pydt.date):
        return Literal(value, "date")
    if isinstance(value, pydt.time):
        if value.tzinfo is not None:
            raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, "time with time zone is not supported")
        return Literal(value, "time")
    if isinstance(value, pydt.timedelta):
        return Literal(Interval.from_timedelta(value), "interval")
    if isinstance(value, Interval):
        return Literal(value, "interval")
    return None


#: PostgreSQL's INTERVAL_MASK bits in an interval qualifier's typmod, lowest unit first
_INTERVAL_FIELDS = ((1 << 12, "s"), (1 << 11, "min"), (1 << 10, "h"), (1 << 3, "d"), (1 << 1, "mon"), (1 << 2, "y"))


def interval_literal(ctx: ExprContext, node) -> Literal:
    """``INTERVAL '1' DAY`` / ``INTERVAL '1 day 10:05:30' HOUR TO MINUTE``: a bare number is
    in the qualifier's lowest unit and fields below it are dropped, as PostgreSQL does."""
    from repr.dates import parse_interval
    mods = [getattr(getattr(m, "val", None), "ival", None) for m in node.typeName.typmods]
    mask = mods[0] if mods and isinstance(mods[0], int) else 0x7FFF
    low = next((u for bit, u in _INTERVAL_FIELDS if mask & bit), "s")
    try:
        iv = parse_interval(node.arg.val.sval, low)
    except EvalError as ex:
        raise errors.error_for(ex.sqlstate, ex.message, position=ctx.binder.pos(node.location))
    from repr.dates_typmod import typmod_interval
    from sql.types.datetime import typmod_for_datetime
    mod = typmod_for_datetime("interval", [mask] + [m for m in mods[1:2] if isinstance(m, int)])
    try:  # fields below the qualifier dropped, seconds rounded to its precision (PostgreSQL)
        return Literal(iv if mod is None else typmod_interval(iv, mod[1]), "interval")
    except EvalError as ex:
        raise errors.error_for(ex.sqlstate, ex.message, position=ctx.binder.pos(node.location))


# ---- end ----


#: expressions mzlite does not evaluate, by the words a user writes them with (where the
#: keyword at the node's location would not say it: ``x IS JSON`` starts at ``x``)
_EXPRESSION_WORDS = {"XmlSerialize": "XMLSERIALIZE", "GroupingFunc": "GROUPING",
                     "JsonIsPredicate": "IS JSON", "CurrentOfExpr": "WHERE CURRENT OF",
                     "JsonObjectConstructor": "JSON_OBJECT", "JsonArrayConstructor": "JSON_ARRAY",
                     "JsonArrayQueryConstructor": "JSON_ARRAY", "JsonObjectAgg": "JSON_OBJECTAGG",
                     "JsonArrayAgg": "JSON_ARRAYAGG", "NamedArgExpr": "named argument notation (name => value)"}
