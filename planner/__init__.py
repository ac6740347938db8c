"""Planner: resolved statements -> relational plans (MIR) -> optimized -> dataflows.

Public entry points here: ``plan_statement(stmt, catalog, params=()) -> Plan`` (plans in
``planner.plans``; the catalog in ``planner.catalog``), parameters bound as literals, and
``plan_insert(stmt, catalog, param_types)``, an INSERT's rows for every parameter set of
those types (``planner.params`` types parameter values).  Binding lives in
``planner.bind_stmt`` / ``bind_dml`` / ``bind_query`` / ``bind_expr`` / ``decorrelate``;
optimization in ``planner.optimize``; physical planning in ``planner.peek`` / ``planner.lower``.
``planner`` imports ``sql`` and compute's vocabulary modules, never a runtime.
"""
from __future__ import annotations


def plan_statement(stmt, catalog, params=()):
    """The plan for one ``sql.parse.Statement`` against ``catalog`` with bound ``params``."""
    from planner.bind_stmt import plan_statement as _plan
    return _plan(stmt, catalog, params)


def describe_statement(stmt, catalog, declared=()):
    """``(parameter types, plan)`` of a statement without parameter values (``planner.bind_stmt``)."""
    from planner.bind_stmt import describe_statement as _describe
    return _describe(stmt, catalog, declared)


def plan_insert(stmt, catalog, param_types):
    """The parameterised ``InsertPlan`` of an INSERT statement, or None (``planner.bind_dml``)."""
    from planner.bind_dml import plan_insert as _plan_insert
    return _plan_insert(stmt, catalog, param_types)


__all__ = ["describe_statement", "plan_insert", "plan_statement"]
