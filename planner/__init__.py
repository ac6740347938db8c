"""Planner: resolved statements -> relational plans (MIR) -> optimized -> dataflows.

Public entry point here: ``plan_statement(stmt, catalog, params=()) -> Plan`` (plans in
``planner.plans``; the catalog in ``planner.catalog``).  Binding lives in
``planner.bind_stmt`` / ``bind_query`` / ``bind_expr`` / ``decorrelate``; optimization in
``planner.optimize``; physical planning in ``planner.peek`` / ``planner.lower``.
``planner`` imports ``sql`` and compute's vocabulary modules, never a runtime.
"""
from __future__ import annotations


def plan_statement(stmt, catalog, params=()):
    """The plan for one ``sql.parse.Statement`` against ``catalog`` with bound ``params``."""
    from planner.bind_stmt import plan_statement as _plan
    return _plan(stmt, catalog, params)


__all__ = ["plan_statement"]
