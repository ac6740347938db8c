"""Test-only code: the reference evaluator, its window semantics, random plans and queries.

Nothing in a production package imports from here.
"""
