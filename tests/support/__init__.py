"""Test-only code that several test modules share (fixtures are in ``tests/conftest.py``).

The oracle: ``reference`` (an obviously-correct evaluator of plans, independent of
``expr.interpret``) and ``window_reference`` (window functions from their definitions);
generators: ``random_plans`` (plans and data) and ``querygen`` (SQL queries); harnesses and
stand-ins: ``operator_harness`` (a rendered plan checked against the oracle over random
updates), ``repl_standin`` (a sqlite3-backed stand-in for a connection), ``spines`` (random
spines and their from-scratch reads), ``window_plans`` (window stages over a test table).
Nothing in a production package imports from here, and test modules import shared code
from here, never from each other (``tests/test_layering.py``).
"""
