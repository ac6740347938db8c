"""A seeded, deterministic generator of SQL queries for the differential test against PostgreSQL.

Owns: the schema and data of the differential test (``SCHEMA``, ``setup_sql``), ``QueryGen``
(queries over those tables: expressions with arithmetic, comparisons, CASE, COALESCE, NULLIF,
CAST (to text and back), IS [NOT] DISTINCT FROM, LIKE, IN lists, BETWEEN; inner/left/right/
full/cross joins of up to six FROM items; WHERE; GROUP BY with aggregates and HAVING; DISTINCT;
UNION/INTERSECT/EXCEPT [ALL]; scalar, IN and EXISTS subqueries, correlated or not; derived
tables; ORDER BY + LIMIT only over every output column, so the answer is a deterministic
multiset) and ``dml`` (random INSERT/DELETE/UPDATE statements valid in both engines).

Invariant: everything is a pure function of the seed (``random.Random(seed)``), so a failure
is reproduced by its seed alone (``python -m tests.support.querygen SEED`` prints the round's SQL).
Generated queries are meant to be valid PostgreSQL 15 and to have no data-dependent errors
(divisors go through NULLIF(x, 0), scalar subqueries aggregate, values stay small), so an
error on one side only is a finding.

Deliberately not here: running anything or comparing results (tests/test_differential_pg.py),
and shapes where Materialize deliberately differs from PostgreSQL; each exclusion is a comment
at the place the shape would have been generated:
- text compares by code point in mzlite (collation "C"); PostgreSQL follows the database's
  collation, so the test creates its database with LC_COLLATE 'C' (and text values stay
  lowercase letters and digits, which order alike under most collations anyway).
- no division of numerics whose result is then rendered as text: PostgreSQL picks the scale of
  a numeric quotient by its own rule, Materialize computes 39 significant digits (the values are
  compared with a tolerance, the text would differ).
- a FULL JOIN's ON clause is only equalities of columns: PostgreSQL refuses anything else
  ("FULL JOIN is only supported with merge-joinable or hash-joinable join conditions").
"""
from __future__ import annotations

import random
import sys

__all__ = ["SCHEMA", "SQLTYPE", "setup_sql", "QueryGen", "dml", "round_sql"]

NUMS = ("int", "bigint", "numeric", "float")
SQLTYPE = {"int": "integer", "bigint": "bigint", "numeric": "numeric", "float": "double precision",
           "text": "text", "bool": "boolean"}

# table -> [(column, type)]
SCHEMA = {
    "t1": [("a", "int"), ("b", "int"), ("c", "text"), ("d", "numeric"), ("e", "float"), ("f", "bool")],
    "t2": [("a", "int"), ("b", "bigint"), ("c", "text"), ("d", "bool")],
    "t3": [("a", "bigint"), ("b", "numeric"), ("c", "text"), ("d", "int")],
    "t4": [("a", "int"), ("b", "float"), ("c", "bool"), ("d", "text")],
    "t5": [("a", "int"), ("b", "int")],
}

# Small domains, so equality joins match often; lowercase text only (see the module docstring).
DOMAIN = {
    "int": ["-2", "0", "1", "2", "3", "5"],
    "bigint": ["-1", "0", "1", "2", "4", "7"],
    "numeric": ["-1.5", "0", "0.25", "1", "2.50", "3.75"],
    "float": ["-1.5", "0", "0.5", "1", "2.25", "1000"],
    "text": ["''", "'a'", "'ab'", "'b'", "'ba'", "'abc'", "'z'", "'1'"],
    "bool": ["true", "false"],
}
NULL_RATE = 0.2


def literal(rng: random.Random, t: str, null_rate: float = 0.0) -> str:
    """A SQL literal of type ``t`` (typed so it resolves the same way in both engines)."""
    if rng.random() < null_rate:
        return f"CAST(NULL AS {SQLTYPE[t]})"
    v = rng.choice(DOMAIN[t])
    if t in ("bigint", "float"):
        return f"CAST({v} AS {SQLTYPE[t]})"
    if v.startswith("-"):
        return f"({v})"
    return v


def row_values(rng: random.Random, table: str) -> str:
    vals = []
    for _, t in SCHEMA[table]:
        if rng.random() < NULL_RATE:
            vals.append("NULL")
        else:
            vals.append(rng.choice(DOMAIN[t]))
    return "(" + ", ".join(vals) + ")"


def setup_sql(seed: int) -> list:
    """CREATE TABLE and INSERT statements: 4-7 rows per table, many NULLs."""
    rng = random.Random(seed * 7919 + 1)
    out = []
    for table, cols in SCHEMA.items():
        out.append(f"CREATE TABLE {table} (" + ", ".join(f"{c} {SQLTYPE[t]}" for c, t in cols) + ")")
        n = rng.randint(4, 7)
        out.append(f"INSERT INTO {table} VALUES " + ", ".join(row_values(rng, table) for _ in range(n)))
    return out


def dml(rng: random.Random) -> str:
    """One INSERT, DELETE or UPDATE valid in both engines (no errors, no transactions)."""
    table = rng.choice(list(SCHEMA))
    cols = SCHEMA[table]
    kind = rng.random()
    if kind < 0.4:
        n = rng.randint(1, 3)
        return f"INSERT INTO {table} VALUES " + ", ".join(row_values(rng, table) for _ in range(n))
    c, t = rng.choice(cols)
    if rng.random() < 0.3:
        pred = f"{c} IS NULL"
    else:
        pred = f"{c} = {literal(rng, t)}"
    if kind < 0.7:
        return f"DELETE FROM {table} WHERE {pred}"
    c2, t2 = rng.choice(cols)
    if t2 in ("int", "bigint", "numeric", "float") and rng.random() < 0.5:
        val = f"{c2} + 1"
    else:
        val = literal(rng, t2, 0.3)
    return f"UPDATE {table} SET {c2} = {val} WHERE {pred}"


class Scope:
    """What an expression may refer to: ``local`` columns of the current query level, ``outer``
    columns of enclosing levels (correlation), and, in a grouped query, ``agg_from`` (the row
    columns aggregates may read; ``local`` is then the group keys)."""

    def __init__(self, local, outer=(), agg_from=None):
        self.local = list(local)
        self.outer = list(outer)
        self.agg_from = agg_from

    def cols(self, t=None):
        allc = self.local + self.outer
        return [c for c in allc if t is None or c[1] == t]


class QueryGen:
    def __init__(self, seed: int, max_from: int = 6, max_nested: int = 8):
        self.rng = random.Random(seed)
        #: at most this many subqueries and derived tables per query (plans grow linearly
        #: with them: tests/test_plan_size.py)
        self.max_nested = self.budget = max_nested
        self.full_joins = 0
        #: the query being generated divides by a column that may be 0
        self.unguarded = False
        self.max_from = max_from
        self.n_alias = 0

    def alias(self, prefix):
        self.n_alias += 1
        return f"{prefix}{self.n_alias}"

    def chance(self, p):
        return self.rng.random() < p

    def spend(self):
        """Take one subquery or derived table from the query's budget (False when spent)."""
        if self.budget <= 0:
            return False
        self.budget -= 1
        return True

    # -- expressions ------------------------------------------------------------------------
    def leaf(self, t, sc: Scope):
        r = self.rng
        cols = sc.cols(t)
        if sc.agg_from is not None and self.chance(0.5):
            a = self.aggregate(t, sc)
            if a is not None:
                return a
        if cols and self.chance(0.75):
            return r.choice(cols)[0]
        if t == "bool" and self.chance(0.8):
            # A constant true/false would decide most filters: compare a column instead.
            others = [c for c in sc.cols() if c[1] != "bool"]
            if others:
                c, ct = r.choice(others)
                if self.chance(0.2):
                    return f"({c} IS {r.choice(['', 'NOT '])}NULL)"
                return f"({c} {r.choice(['=', '<>', '<', '>=', '<='])} {literal(r, ct)})"
        if t in ("bigint", "numeric", "float") and self.chance(0.4):
            others = [c for c in sc.cols() if c[1] in NUMS and c[1] != t]
            if others:
                return f"CAST({r.choice(others)[0]} AS {SQLTYPE[t]})"
        return literal(r, t, 0.1)

    def aggregate(self, t, sc: Scope):
        """An aggregate call of result type ``t`` over ``sc.agg_from`` (never outer columns:
        PostgreSQL would make an aggregate of only outer columns the outer query's)."""
        r = self.rng
        inner = Scope(sc.agg_from.local)
        if not inner.local:
            return None
        if t == "bigint":
            k = r.random()
            if k < 0.3:
                return "count(*)"
            at = r.choice(list(SQLTYPE))
            if k < 0.6:
                return f"count({self.expr(at, inner, 1)})"
            if k < 0.8:
                return f"count(DISTINCT {self.expr(at, inner, 1)})"
            return f"sum({self.expr('int', inner, 1)})"
        if t == "numeric":
            k = r.random()
            if k < 0.3:
                return f"sum({r.choice(['', 'DISTINCT '])}{self.expr('numeric', inner, 1)})"
            if k < 0.5:
                return f"sum({self.expr('bigint', inner, 1)})"
            if k < 0.8:
                return (f"avg({r.choice(['', '', 'DISTINCT '])}"
                        f"{self.expr(r.choice(['int', 'bigint', 'numeric']), inner, 1)})")
            return f"{r.choice(['min', 'max'])}({self.expr('numeric', inner, 1)})"
        if t == "float":
            k = r.random()
            if k < 0.4:
                return f"sum({self.expr('float', inner, 1)})"
            if k < 0.6:
                return f"avg({self.expr('float', inner, 1)})"
            return f"{r.choice(['min', 'max'])}({self.expr('float', inner, 1)})"
        if t == "bool":
            return f"{r.choice(['bool_and', 'bool_or'])}({self.expr('bool', inner, 1)})"
        return f"{r.choice(['min', 'max'])}({self.expr(t, inner, 1)})"

    def expr(self, t, sc: Scope, depth=2):
        r = self.rng
        if depth <= 0 or self.chance(0.3):
            return self.leaf(t, sc)
        d = depth - 1
        k = r.random()
        # Branches of CASE/COALESCE may mix numeric types (int with numeric, bigint with
        # double...): the result type is resolved like PostgreSQL's, and so is its value.
        if k < 0.12:
            return (f"CASE WHEN {self.expr('bool', sc, d)} THEN {self.expr(t, sc, d)}"
                    + (f" ELSE {self.expr(self.same_family(t), sc, d)}" if self.chance(0.7) else "") + " END")
        if k < 0.2:
            return f"COALESCE({self.expr(t, sc, d)}, {self.expr(self.same_family(t), sc, d)})"
        if k < 0.26 and t != "bool":
            return f"NULLIF({self.expr(t, sc, d)}, {self.expr(self.same_family(t), sc, d)})"
        if k < 0.3 and t != "bool" and self.chance(0.3) and d > 0 and self.spend():
            return self.scalar_subquery(t, sc)
        if t in NUMS:
            return self.num_expr(t, sc, d)
        if t == "text":
            return self.text_expr(sc, d)
        return self.bool_expr(sc, d)

    def num_expr(self, t, sc, d):
        r = self.rng
        k = r.random()
        if k < 0.4:
            op = r.choice(["+", "-", "*"])
            return f"({self.expr(t, sc, d)} {op} {self.expr(t, sc, d)})"
        if k < 0.5 and t != "float":
            op = "%" if t in ("int", "bigint") and self.chance(0.4) else "/"
            return f"({self.expr(t, sc, d)} {op} NULLIF({self.expr(t, sc, d)}, 0))"
        if k < 0.55:
            return f"(-{self.expr(t, sc, d)})"
        if k < 0.6:
            return f"abs({self.expr(t, sc, d)})"
        if k < 0.75:
            src = r.choice([x for x in NUMS if x != t] + ["bool"] * (t == "int"))
            return f"CAST({self.expr(src, sc, d)} AS {SQLTYPE[t]})"
        if k < 0.85:
            # a round trip through text
            return f"CAST(CAST({self.expr(t, sc, d)} AS text) AS {SQLTYPE[t]})"
        if k < 0.92 and t == "int":
            return f"length({self.expr('text', sc, d)})"
        return self.leaf(t, sc)

    def text_expr(self, sc, d):
        r = self.rng
        k = r.random()
        if k < 0.35:
            return f"({self.expr('text', sc, d)} || {self.expr('text', sc, d)})"
        if k < 0.55:
            # Only exact values: a numeric quotient's text differs (module docstring), so a
            # numeric is a column or a sum, difference or product of columns, never avg().
            src = r.choice(["int", "bigint", "bool", "float", "numeric"])
            plain = Scope(sc.local, sc.outer)
            if src == "numeric" and self.chance(0.5):
                return (f"CAST(({self.leaf(src, plain)} {r.choice(['+', '-', '*'])} "
                        f"{self.leaf(src, plain)}) AS text)")
            return f"CAST({self.leaf(src, plain)} AS text)"
        if k < 0.65:
            return f"substr({self.expr('text', sc, d)}, {r.randint(1, 3)})"
        if k < 0.75:
            return f"lower({self.expr('text', sc, d)})"
        return self.leaf("text", sc)

    def bool_expr(self, sc, d):
        r = self.rng
        k = r.random()
        fam = r.choice(list(NUMS) + ["text", "text"])
        if k < 0.25:
            op = r.choice(["=", "<>", "<", "<=", ">", ">="])
            return f"({self.expr(fam, sc, d)} {op} {self.expr(self.same_family(fam), sc, d)})"
        if k < 0.33:
            return (f"({self.expr(fam, sc, d)} IS {r.choice(['', 'NOT '])}DISTINCT FROM "
                    f"{self.expr(self.same_family(fam), sc, d)})")
        if k < 0.4:
            return f"({self.expr(r.choice(list(SQLTYPE)), sc, d)} IS {r.choice(['', 'NOT '])}NULL)"
        if k < 0.46:
            pat = r.choice(["'a%'", "'%b'", "'_'", "'a_c'", "'%'", "'%a%'", "''"])
            return f"({self.expr('text', sc, d)} {r.choice(['', 'NOT '])}LIKE {pat})"
        if k < 0.54:
            items = ", ".join(self.expr(self.same_family(fam), sc, max(d - 1, 0))
                              for _ in range(r.randint(1, 4)))
            return f"({self.expr(fam, sc, d)} {r.choice(['', 'NOT '])}IN ({items}))"
        if k < 0.6:
            return (f"({self.expr(fam, sc, d)} {r.choice(['', 'NOT '])}BETWEEN "
                    f"{self.expr(self.same_family(fam), sc, d)} AND {self.expr(self.same_family(fam), sc, d)})")
        if k < 0.7:
            return f"({self.expr('bool', sc, d)} {r.choice(['AND', 'OR'])} {self.expr('bool', sc, d)})"
        if k < 0.74:
            return f"(NOT {self.expr('bool', sc, d)})"
        if k < 0.77:
            return f"({self.expr('bool', sc, d)} IS {r.choice(['', 'NOT '])}{r.choice(['TRUE', 'FALSE', 'UNKNOWN'])})"
        if k < 0.84 and d > 0 and self.spend():
            sub, _ = self.select(Scope([], sc.cols()), depth=1, want=None)
            return f"({r.choice(['', 'NOT '])}EXISTS ({sub}))"
        if k < 0.9 and d > 0 and self.spend():
            sub, _ = self.select(Scope([], sc.cols()), depth=1, want=[fam])
            return f"({self.expr(fam, sc, d)} {r.choice(['', 'NOT '])}IN ({sub}))"
        return self.leaf("bool", sc)

    def same_family(self, t):
        if t in NUMS and self.chance(0.3):
            return self.rng.choice(NUMS)
        return t

    def scalar_subquery(self, t, sc):
        """A subquery of one column and at most one row: a global aggregate, or ORDER BY over
        its only column + LIMIT 1."""
        if self.chance(0.7):
            sub, _ = self.select(Scope([], sc.cols()), depth=1, want=[t], force_agg=True)
        else:
            sub, _ = self.select(Scope([], sc.cols()), depth=1, want=[t], force_limit1=True)
        return f"({sub})"

    # -- FROM -------------------------------------------------------------------------------
    def from_clause(self, outer, depth, max_items):
        """Returns (sql, columns [(ref, type)])."""
        r = self.rng
        n = min(r.choice([1, 1, 2, 2, 3, 3, 4, 5, 6]), max_items)
        sql, cols = self.from_item(outer, depth)
        visible = cols   # what an ON clause may see: a comma starts a new join tree
        size = 6
        for _ in range(n - 1):
            isql, icols = self.from_item(outer, depth)
            kind = r.choice(["JOIN", "JOIN", "LEFT JOIN", "LEFT JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN",
                             "FULL JOIN", "CROSS JOIN", ","])
            if kind in ("CROSS JOIN", ",") and size > 40:
                kind = "JOIN"
            if kind == "FULL JOIN":
                self.full_joins += 1
            if kind in ("CROSS JOIN", ","):
                sql = f"{sql}{' ' if kind != ',' else ''}{kind} {isql}"
                size *= 6
                visible = icols if kind == "," else visible + icols
            else:
                on = self.join_condition(visible, icols, outer, full=(kind == "FULL JOIN"))
                sql = f"{sql} {kind} {isql} ON {on}"
                size = max(6, size * 2)
                visible = visible + icols
            cols = cols + icols
        return sql, cols

    def from_item(self, outer, depth):
        r = self.rng
        if depth < 2 and self.chance(0.15) and self.spend():
            a = self.alias("d")
            sub, types = self.select(Scope([], outer), depth + 1, want=None)
            return f"({sub}) AS {a}", [(f"{a}.c{i}", t) for i, t in enumerate(types)]
        table = r.choice(list(SCHEMA))
        a = self.alias(table[:1] + table[1:] + "_")
        return f"{table} AS {a}", [(f"{a}.{c}", t) for c, t in SCHEMA[table]]

    def join_condition(self, left, right, outer, full):
        r = self.rng
        conds = []
        for _ in range(1 if self.chance(0.75) else 2):
            rc = r.choice(right)
            same = [c for c in left if c[1] == rc[1] or (c[1] in NUMS and rc[1] in NUMS)]
            if same:
                lc = r.choice(same)
                conds.append(f"{lc[0]} = {rc[0]}")
        if not full and (not conds or self.chance(0.25)):
            conds.append(self.expr("bool", Scope(left + right, outer), 2 if self.chance(0.2) else 1))
        if not conds:
            # A FULL JOIN needs a merge-joinable condition (module docstring); ON true is one.
            return "true"
        return " AND ".join(conds)

    # -- SELECT -----------------------------------------------------------------------------
    def select(self, sc: Scope, depth, want=None, force_agg=False, force_limit1=False, top=False):
        """A query (possibly a set operation).  Returns (sql, output types)."""
        r = self.rng
        if not force_agg and not force_limit1 and depth < 2 and self.chance(0.2 if top else 0.1):
            left, types = self.select_core(sc, depth + 1, want)
            # the right arm may have other numeric types: the set operation resolves them
            right, _ = self.select_core(sc, depth + 1, [self.same_family(t) for t in types])
            op = r.choice(["UNION", "INTERSECT", "EXCEPT"]) + r.choice(["", " ALL"])
            sql = f"({left}) {op} ({right})"
            if top and self.chance(0.3):
                sql += self.order_limit(len(types))
            return sql, types
        sql, types = self.select_core(sc, depth, want, force_agg=force_agg, force_limit1=force_limit1)
        if not force_limit1 and self.chance(0.2 if top else 0.08):
            sql += self.order_limit(len(types))
        return sql, types

    def order_limit(self, ncols):
        r = self.rng
        # ORDER BY every output column: the rows LIMIT keeps are then a deterministic multiset.
        keys = ", ".join(f"{i + 1}{r.choice(['', ' DESC', ' ASC NULLS FIRST', ' DESC NULLS LAST'])}"
                         for i in range(ncols))
        # LIMIT 0 only without an unguarded division: PostgreSQL evaluates nothing for LIMIT 0,
        # Materialize computes the rows first, so a division by zero errors (a deliberate
        # difference: Materialize's errors do not depend on evaluation order).
        s = f" ORDER BY {keys} LIMIT {r.randint(1 if self.unguarded else 0, 5)}"
        if self.chance(0.3):
            s += f" OFFSET {r.randint(0, 3)}"
        return s

    def select_core(self, sc: Scope, depth, want=None, force_agg=False, force_limit1=False):
        r = self.rng
        max_items = self.max_from if depth == 0 else 2
        from_sql, cols = self.from_clause(sc.cols(), depth, max_items)
        row_scope = Scope(cols, sc.cols())
        d = 2 if depth == 0 or (depth == 1 and self.chance(0.3)) else 1
        where = ""
        if self.chance(0.5):
            where = f" WHERE {self.expr('bool', row_scope, d)}"
        ncols = len(want) if want else r.randint(1, 4)
        types = list(want) if want else [r.choice(list(SQLTYPE)) for _ in range(ncols)]
        grouped = force_agg or (not force_limit1 and self.chance(0.3))
        group = having = ""
        distinct = ""
        if grouped:
            keys = []
            if not force_agg:
                keys = [c for c in r.sample(cols, min(len(cols), r.randint(0, 2)))]
                if keys and self.chance(0.2):
                    # a key that is an expression: the select list repeats it verbatim
                    c, t = keys[0]
                    if t in ("int", "bigint", "numeric"):
                        keys[0] = (f"({c} + 1)", t)
                    elif t == "text":
                        keys[0] = (f"({c} || 'x')", t)
            if keys:
                group = " GROUP BY " + ", ".join(k[0] for k in keys)
            gscope = Scope(keys, sc.cols(), agg_from=Scope(cols))
            items = []
            for t in types:
                e = self.expr(t, gscope, 1)
                if not any(f in e for f in ("count(", "sum(", "min(", "max(", "avg(", "bool_")) \
                        and force_agg:
                    e = self.aggregate(t, gscope) or e
                items.append(e)
            if not force_agg and self.chance(0.4):
                having = f" HAVING {self.expr('bool', gscope, 1)}"
        else:
            items = [self.expr(t, row_scope, d) for t in types]
            if depth == 0 and self.chance(0.1):
                # An unguarded division by a column that can be 0, only where PostgreSQL
                # evaluates it for every result row (the top level's select list, no CASE
                # around it): division by zero must be an error on both sides.
                i = r.randrange(len(items))
                divisors = [c for c in row_scope.local if c[1] in ("int", "bigint", "numeric")]
                if types[i] in ("int", "bigint", "numeric") and divisors:
                    items[i] = f"({items[i]} / {r.choice(divisors)[0]})"
                    self.unguarded = True
            if self.chance(0.2):
                distinct = "DISTINCT "
        sel = ", ".join(f"{e} AS c{i}" for i, e in enumerate(items))
        sql = f"SELECT {distinct}{sel} FROM {from_sql}{where}{group}{having}"
        if force_limit1:
            sql += " ORDER BY 1 LIMIT 1"
        return sql, types

    def query(self):
        self.n_alias = 0
        self.unguarded = False
        self.budget = self.max_nested
        self.full_joins = 0
        sql, types = self.select(Scope([]), 0, top=True)
        return sql


def round_sql(seed: int, n_queries: int, dml_steps: int = 2, dml_per_step: int = 3):
    """Everything one round runs: (setup statements, queries, [[dml, ...] per step])."""
    gen = QueryGen(seed)
    queries = [gen.query() for _ in range(n_queries)]
    rng = random.Random(seed * 31 + 7)
    steps = [[dml(rng) for _ in range(dml_per_step)] for _ in range(dml_steps)]
    return setup_sql(seed), queries, steps


if __name__ == "__main__":  # python -m tests.support.querygen SEED [N]: print a round's SQL
    seed = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    setup, queries, steps = round_sql(seed, n)
    for s in setup:
        print(s + ";")
    for i, q in enumerate(queries):
        print(f"-- query {i}\n{q};")
    for i, st in enumerate(steps):
        print(f"-- dml step {i}")
        for s in st:
            print(s + ";")
