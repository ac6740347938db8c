"""Binding: plan shapes for every statement kind, and user errors with SQLSTATEs and positions.

Query *semantics* are checked against DuckDB in ``test_bind_semantics.py``; here we check
what the coordinator relies on (plan fields) and what users see (errors).
Sabotage runs (each made once, saw red, restored):
- ``GroupScope.lookup_local`` returning the FROM column instead of raising lets a
  non-grouped column through (``test_grouping_error`` red);
- dropping ``figure_colname``'s FuncCall case names ``count(*)`` "?column?"
  (``test_bind_semantics.py::test_column_names`` red);
- binding INSERT VALUES without ``assignment_cast`` lets ``'abc'`` into an integer column
  (``test_insert_errors`` red).
"""
from __future__ import annotations

from decimal import Decimal

import pytest

from expr.relation import Constant, Get, Reduce, TopK
from expr.scalar import Call, CallMzNow, Column, Literal
from planner import plan_statement, plans as P
from planner.catalog import UniqueKey, Catalog, CatalogItem, ColumnDef
from repr.ids import user
from sql import errors
from sql.parse import parse_statements


@pytest.fixture
def cat():
    c = Catalog()
    c.add(CatalogItem(user(1), "t", "table", (ColumnDef("a", "int4", False), ColumnDef("b", "text"),
                                              ColumnDef("c", "int8", True, Literal(7, "int8")))))
    c.add(CatalogItem(user(2), "u", "table", (ColumnDef("a", "int4"), ColumnDef("d", "int4"))))
    c.add(CatalogItem(user(3), "v", "view", (ColumnDef("a", "int4"),), expr=Get(user(2), 2).__class__(user(2), 2),
                      depends_on=frozenset({user(2)})))
    c.add(CatalogItem(user(4), "m", "materialized_view", (ColumnDef("a", "int4"),), depends_on=frozenset({user(1)})))
    c.add(CatalogItem(user(5), "m_idx", "index", on_id=user(4), key=(Column(0),), depends_on=frozenset({user(4)})))
    return c


def plan(cat, sql, params=()):
    (s,) = parse_statements(sql)
    return plan_statement(s, cat, params)


def err(cat, sql, params=()):
    with pytest.raises(errors.Error) as e:
        plan(cat, sql, params)
    return e.value


def at(sql, e):
    """The text at the error's position."""
    assert e.position is not None, e.message
    return sql[e.position - 1:]


# ------------------------------------------------------------------ errors


def test_undefined_table(cat):
    sql = "select * from nope"
    e = err(cat, sql)
    assert (e.sqlstate, e.message) == ("42P01", "unknown catalog item 'nope'")  # Materialize's text
    assert at(sql, e).startswith("nope")


def test_undefined_column(cat):
    sql = "select a, zz from t"
    e = err(cat, sql)
    assert (e.sqlstate, e.message) == ("42703", 'column "zz" does not exist')
    assert at(sql, e).startswith("zz")
    sql = "select t.zz from t"
    e = err(cat, sql)
    assert (e.sqlstate, e.message) == ("42703", "column t.zz does not exist")
    e = err(cat, "select x.a from t")
    assert (e.sqlstate, e.message) == ("42P01", 'missing FROM-clause entry for table "x"')


def test_ambiguous_column(cat):
    sql = "select a from t, u"
    e = err(cat, sql)
    assert (e.sqlstate, e.message) == ("42702", 'column reference "a" is ambiguous')
    assert at(sql, e).startswith("a from")


def test_grouping_error(cat):
    sql = "select a, b from t group by a"
    e = err(cat, sql)
    assert e.sqlstate == "42803"
    assert e.message == 'column "t.b" must appear in the GROUP BY clause or be used in an aggregate function'
    assert at(sql, e).startswith("b from")
    e = err(cat, "select * from t group by a")
    assert e.sqlstate == "42803"
    e = err(cat, "select count(*) from t where count(*) > 1")
    assert (e.sqlstate, e.message) == ("42803", "aggregate functions are not allowed in WHERE")
    e = err(cat, "select sum(count(*)) from t")
    assert e.sqlstate == "42803"


def test_type_errors(cat):
    sql = "select * from t where a"
    e = err(cat, sql)
    assert (e.sqlstate, e.message) == ("42804", "argument of WHERE must be type boolean, not type integer")
    sql = "select a + b from t"
    e = err(cat, sql)
    assert e.sqlstate == "42883"
    assert e.position is not None
    e = err(cat, "select 'abc'::int")
    assert e.sqlstate == "22P02"
    e = err(cat, "select a from t union select b from t")
    assert (e.sqlstate, e.message) == ("42804", "UNION types integer and text cannot be matched")


def test_misc_errors(cat):
    assert err(cat, "select a from t order by 3").sqlstate == "42P10"
    assert err(cat, "select (select a, d from u) from t").sqlstate == "42601"
    assert err(cat, "select * from (values (1), (1, 2)) x").sqlstate == "42601"
    assert err(cat, "select $2", (1,)).sqlstate == "42P02"
    assert err(cat, "select distinct a from t order by b").sqlstate == "42P10"
    assert err(cat, "select * from m_idx").sqlstate == "42809"
    assert err(cat, "select 1 limit -1").sqlstate == "2201W"


# ------------------------------------------------------------------ SELECT plans


def test_select_plan_basics(cat):
    p = plan(cat, "select a, b from t where a > 1 order by c desc limit 5 offset 1")
    assert isinstance(p, P.SelectPlan)
    assert p.columns == (("a", "int4"), ("b", "text"))
    assert p.finishing.limit == 5 and p.finishing.offset == 1
    assert p.finishing.project == (0, 1)          # the hidden ORDER BY column goes away
    assert p.finishing.order_by[0].column == 2 and p.finishing.order_by[0].desc
    assert p.expr.arity() == 3
    assert p.depends_on == frozenset({user(1)})


def test_views_inline_and_mvs_get(cat):
    p = plan(cat, "select * from v")
    assert p.expr == Get(user(2), 2)
    assert p.depends_on == frozenset({user(2), user(3)})
    p = plan(cat, "select * from m")
    assert p.expr == Get(user(4), 1)


def test_global_aggregate(cat):
    p = plan(cat, "select count(*) from t")
    red = p.expr
    while not isinstance(red, Reduce):
        red = red.input
    assert red.global_default and red.group_key == ()


def test_as_of_and_mz_now(cat):
    (s,) = parse_statements("select * from t as of at least 12")
    p = plan_statement(s, cat)
    assert p.as_of == Literal(12, "mz_timestamp") and p.as_of_at_least
    p = plan(cat, "select * from t where mz_now() <= c")
    assert "CallMzNow" in repr(p.expr)


def test_params_bind_as_typed_literals(cat):
    p = plan(cat, "select $1, $2, $3, $4, $5, $6, ?", ) if False else None
    p = plan(cat, "select $1, $2, $3, $4, $5, $6", (1, 2**40, 1.5, Decimal("2.5"), "x", True))
    assert [t for _, t in p.columns] == ["int4", "int8", "float8", "numeric", "text", "bool"]
    p = plan(cat, "select * from t where a = ? and b = ?", (3, "q"))
    assert "Literal(value=3, type='int4')" in repr(p.expr) and "Literal(value='q', type='text')" in repr(p.expr)
    p = plan(cat, "select * from t where c = $1", (None,))
    assert "Literal(value=None, type='int8')" in repr(p.expr)


def test_where_subqueries_become_semijoins(cat):
    """``WHERE [NOT] EXISTS`` / ``WHERE x IN`` filter by a (anti)semijoin, not a boolean column.
    Sabotage: ``filter_by_sublink`` returning False makes these plans carry FALSE literals."""
    p = plan(cat, "select * from t where exists (select 1 from u where u.a = t.a)")
    assert "Negate" not in repr(p.expr) and "value=False" not in repr(p.expr)
    p = plan(cat, "select * from t where not exists (select 1 from u where u.a = t.a)")
    assert repr(p.expr).count("Negate") == 1 and "value=False" not in repr(p.expr)
    p = plan(cat, "select * from t where a in (select d from u)")
    assert "Negate" not in repr(p.expr) and "value=False" not in repr(p.expr)
    # NOT IN keeps three-valued logic: it needs the boolean construction
    p = plan(cat, "select * from t where a not in (select d from u)")
    assert "value=False" in repr(p.expr)


def test_limit_in_view_is_topk(cat):
    p = plan(cat, "create view w as select a from t order by a limit 3")
    assert isinstance(p.expr, TopK) and p.expr.limit == 3


# ------------------------------------------------------------------ DDL


def test_create_table(cat):
    p = plan(cat, "create table x (k int primary key, s varchar(10) not null default 'd', f double precision)")
    # varchar(10): the modifier is kept beside the type, and the default checked when used
    check = Call("typmod_varchar", (Literal("d", "text"), Literal(10, "int4"), Literal(False, "bool")), "text")
    assert p == P.CreateTablePlan("x", (ColumnDef("k", "int4", False), ColumnDef("s", "text", False, check,
                                  ("varchar", 10)), ColumnDef("f", "float8")), False, p.create_sql,
                                  (UniqueKey("x_pkey", (0,), True),))
    assert err(cat, "create table t (a int)").sqlstate == "42P07"
    assert plan(cat, "create table if not exists t (a int)").if_not_exists
    assert err(cat, "create table y (a int, a int)").sqlstate == "42701"
    assert err(cat, "create table y (a nosuchtype)").sqlstate == "42704"


def test_create_views(cat):
    p = plan(cat, "create view w (x, y) as select a, d from u")
    assert p.columns == (("x", "int4"), ("y", "int4")) and not p.materialized
    assert p.create_sql == "create view w (x, y) as select a, d from u"
    p = plan(cat, "create materialized view mm as select a from v")
    assert p.materialized and p.depends_on == frozenset({user(2), user(3)})
    assert err(cat, "create view v as select 1").sqlstate == "42P07"
    assert plan(cat, "create view if not exists v as select 1").if_not_exists
    p = plan(cat, "create or replace view v as select 2 as a")
    assert p.replaces == user(3)
    assert err(cat, "create view w as select a, a from t").sqlstate == "42701"


def test_create_indexes(cat):
    p = plan(cat, "create index on t (b, a + 1)")
    assert p.name is None and p.on_id == user(1) and p.key[0] == Column(1)
    assert p.key_sql == ("b", "a + 1") and not p.default
    p = plan(cat, "create index ti in cluster quickstart on t (a)")
    assert p.name == "ti"
    p = plan(cat, "create default index on m")
    assert p.default and p.key == (Column(0),) and p.on_id == user(4)
    assert err(cat, "create index on m_idx (a)").sqlstate == "42809"
    assert err(cat, "create index on t (zz)").sqlstate == "42703"


def test_drop(cat):
    e = err(cat, "drop table u")
    assert (e.sqlstate, e.message) == ("2BP01", "cannot drop table u: still depended upon by view v")
    p = plan(cat, "drop table u cascade")
    assert p.drop_ids == (user(3), user(2)) and p.cascade
    p = plan(cat, "drop materialized view m")
    assert p.drop_ids == (user(5), user(4))
    p = plan(cat, "drop view if exists nope, v")
    assert p.missing == ("nope",) and p.ids == (user(3),)
    assert err(cat, "drop view nope").sqlstate == "42P01"
    assert err(cat, "drop view t").sqlstate == "42809"
    assert plan(cat, "drop index m_idx").drop_ids == (user(5),)


# ------------------------------------------------------------------ DML


def test_insert_assignment_casts_and_defaults(cat):
    p = plan(cat, "insert into t values (1, 'x', 2)")
    assert p.expr == Constant((((1, "x", 2), 1),), 3)
    assert p.not_null == (0,)
    p = plan(cat, "insert into t (a) values (1), (1)")
    assert p.expr == Constant((((1, None, 7), 2),), 3)
    p = plan(cat, "insert into t (b, a) values ('q', 5)")
    assert p.expr.rows == (((5, "q", 7), 1),)
    p = plan(cat, "insert into t values (1, default, default)")
    assert p.expr.rows == (((1, None, 7), 1),)
    p = plan(cat, "insert into t default values")
    assert p.expr.rows == (((None, None, 7), 1),)
    p = plan(cat, "insert into t (a, c) select a, d from u")
    assert "cast_int4_to_int8" in repr(p.expr) and p.expr.arity() == 3
    p = plan(cat, "insert into t values ($1, $2, $3)", (1, "s", 3))
    assert p.expr.rows == (((1, "s", 3), 1),)


def test_insert_errors(cat):
    p = plan(cat, "insert into t values (1)")  # missing trailing columns take their defaults
    assert p.expr.rows == (((1, None, 7), 1),)
    e = err(cat, "insert into t values ('abc')")
    assert e.sqlstate == "22P02"
    e = err(cat, "insert into t (a) values (1, 2)")
    assert (e.sqlstate, e.message) == ("42601", "INSERT has more expressions than target columns")
    e = err(cat, "insert into t (zz) values (1)")
    assert (e.sqlstate, e.message) == ("42703", 'column "zz" of relation "t" does not exist')
    e = err(cat, "insert into t (a) values (true)")
    assert (e.sqlstate, e.message) == ("42804", 'column "a" is of type integer but expression is of type boolean')
    assert err(cat, "insert into v values (1)").sqlstate == "42809"


def test_update_delete(cat):
    p = plan(cat, "update t set c = c + 1, b = default where a = 3")
    assert isinstance(p, P.UpdatePlan) and p.table_id == user(1)
    assert [i for i, _ in p.assignments] == [2, 1]
    assert p.assignments[1][1] == Literal(None, "text")
    assert len(p.predicates) == 1 and p.selection is None
    p = plan(cat, "delete from t where a in (select a from u)")
    assert isinstance(p, P.DeletePlan) and p.predicates == () and p.selection.arity() == 3
    p = plan(cat, "delete from t")
    assert p.predicates == ()
    assert err(cat, "update t set zz = 1").sqlstate == "42703"


# ------------------------------------------------------------------ everything else


def test_session_statements(cat):
    assert plan(cat, "begin") == P.TransactionPlan("begin")
    assert plan(cat, "start transaction") == P.TransactionPlan("begin")
    assert plan(cat, "commit") == P.TransactionPlan("commit")
    assert plan(cat, "rollback") == P.TransactionPlan("rollback")
    assert plan(cat, "set transaction_isolation = 'serializable'") == \
        P.SetVariablePlan("transaction_isolation", "serializable")
    assert plan(cat, "set transaction isolation level serializable") == \
        P.SetVariablePlan("transaction_isolation", "serializable", local=True)  # for the transaction only
    assert plan(cat, "begin read only isolation level serializable") == \
        P.TransactionPlan("begin", read_only=True, isolation="serializable")
    assert plan(cat, "set x to default") == P.SetVariablePlan("x", None)
    assert plan(cat, "reset x") == P.ResetVariablePlan("x")
    assert plan(cat, "reset all") == P.ResetVariablePlan("all")
    assert plan(cat, "show x") == P.ShowVariablePlan("x")
    assert plan(cat, "show all") == P.ShowVariablePlan("all")
    assert plan(cat, "alter system set enable_x = true") == P.AlterSystemSetPlan("enable_x", "true")
    assert plan(cat, "alter system set n to 5") == P.AlterSystemSetPlan("n", "5")
    assert plan(cat, "alter system reset n") == P.AlterSystemSetPlan("n", None)


def test_show_plans(cat):
    assert plan(cat, "show tables") == P.ShowObjectsPlan("tables")
    assert plan(cat, "show indexes on m") == P.ShowObjectsPlan("indexes", user(4))
    assert plan(cat, "show columns from t") == P.ShowObjectsPlan("columns", user(1))
    assert plan(cat, "show create view v") == P.ShowCreatePlan("view", user(3), "v")
    assert err(cat, "show create view t").sqlstate == "42809"
    assert err(cat, "show columns from nope").sqlstate == "42P01"


def test_explain_subscribe_cursors(cat):
    p = plan(cat, "explain physical plan for select * from t")
    assert p.stage == "physical" and isinstance(p.plan, P.SelectPlan)
    p = plan(cat, "explain create index on t (a)")
    assert isinstance(p.plan, P.CreateIndexPlan)
    p = plan(cat, "subscribe t with (snapshot = false) as of 3 up to 9")
    assert isinstance(p, P.SubscribePlan) and p.relation_id == user(1) and not p.with_snapshot
    assert p.as_of == Literal(3, "mz_timestamp") and p.up_to == Literal(9, "mz_timestamp")
    p = plan(cat, "subscribe (select a from t where a > 1)")
    assert p.columns == (("a", "int4"),) and p.relation_id is None
    p = plan(cat, "declare c cursor for subscribe v")
    assert isinstance(p, P.DeclarePlan) and p.name == "c" and isinstance(p.plan, P.SubscribePlan)
    assert plan(cat, "fetch 5 c with (timeout = '500ms')") == P.FetchPlan("c", 5, 0.5)
    assert plan(cat, "fetch all c") == P.FetchPlan("c", None, None)
    assert plan(cat, "close c") == P.ClosePlan("c")


def test_unsupported_statement_is_a_sql_error(cat):
    e = err(cat, "create type t as enum ('a')")
    assert e.sqlstate == "0A000"


ODD = [
    'select a from t group by a order by count(*)',
    'select count(*) from t order by a',
    'select sum(a) over () from t',
    'select * from t where a = any(array[1,2])',
    'select array[1,2]',
    'select row(1,2)',
    'select (1,2)',
    "select * from t where (a, b) < (1, 'x')",
    'select a from t order by b using <',
    'select * from t tablesample system (10)',
    'select * from rows from (generate_series(1,2), generate_series(1,3))',
    'select * from generate_series(1,2) with ordinality',
    'select * from unnest(array[1])',
    "select x'ff'",
    "select b'101'",
    'select current_timestamp',
    'select now()',
    'select extract(year from 1)',
    'select 1 fetch first 1 rows with ties',
    'select * from t for update',
    "select * from t where a similar to 'x'",
    "select a like 'x' escape 'y' from t",
    'select * from t join u on true natural join t',
    'select * from t full join lateral (select 1) s on true',
    'select t.* from u',
    'select * from (select 1) ',
    'select * from t, t',
    'select t.a from t, t',
    'select count(*) filter (where a) from t',
    'select lower(*) from t',
    'select 1::int[]',
    "select 'a'::nosuch",
    'select (select 1 union select 2)',
    'select exists(select)',
    'select a from t having a > 1',
    "insert into t values (1, 'x') on conflict do nothing",
    'insert into t (a, a) values (1, 2)',
    'insert into u select * from t',
    'update t set a = (select 1)',
    "update t set (a, b) = (1, 'x')",
    'update t set a = 1 from u',
    'delete from t using u',
    'create table x (a int references t(a))',
    'create table x (like t)',
    'create table x as select 1',
    'create view v as select 1 as a, 2 as a',
    'create view v (a, b, c) as select 1',
    'create index on t using hash (a)',
    'create unique index on t (a)',
    'create index on t (a) where a > 1',
    'drop schema s',
    'drop table t, u',
    'drop index t',
    'alter table t add column c int',
    'copy t from stdin',
    "values (1), ('a')",
    "select 1 union select 'a', 2",
    'with recursive r as (select 1) select * from r',
    'with x as (select 1), x as (select 2) select * from x',
    'select * from t natural join u natural join u',
    'select * from t join u using (zz)',
    'select a from t join u using (a) join u using (a)',
    'select 9999999999999999999999999',
    'select 2147483648',
    'select -2147483648',
    'select 1e400::float8',
    "select '1e400'::float8",
    'select $1',
    "select 1 limit 'a'",
    'select 1 limit (select 1)',
    'select 1 offset -1',
    'explain explain select 1',
    'explain timestamp for create table z (a int)',
    'subscribe (insert into t values (1))',
    'subscribe t with (bad = 1)',
    'declare c cursor for subscribe nope',
    "fetch 1 from c with (timeout = 'x')",
    'show create table nope',
    'show create index t',
    'show garbage garbage',
    'set a = 1, 2',
    'set transaction read only',
    'reset',
    'alter system set a to default',
    'begin isolation level serializable',
    'commit and chain',
    'savepoint x',
    "select * from t as of 'abc'",
    'select * from t as of at least a',
    'select mz_now(1)',
    'select mz_now() from t where mz_now() > a',
]


@pytest.mark.parametrize("sql", ODD)
def test_odd_statements_plan_or_raise_sql_errors(cat, sql):
    """Unsupported or wrong SQL raises a ``sql.errors.Error`` (a Python exception escaping
    the binder is a bug).  Found by this list: SUBSCRIBE of a non-SELECT query and TABLESAMPLE
    raised AttributeError before the fixes."""
    try:
        for s in parse_statements(sql):
            plan_statement(s, cat, ())
    except errors.Error as e:
        assert len(e.sqlstate) == 5
