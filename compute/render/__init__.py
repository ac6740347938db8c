"""Rendering: a ``DataflowDescription`` turned into running operators.

Owns the dataflow (``dataflow``: building the operator graph, stepping it in fuel-bounded
steps), the operator protocol (``operator``) and the operators themselves (one module
each: constant, flat_map, join, letrec, mfp, reduce, threshold, topk).
Deliberately not here: which runtime hosts a dataflow (``compute.replica``), expression
compilation (``expr.compile``) and the pure evaluation the operators share with the
planner's constant folding (``expr.aggregate``, ``expr.window_eval``, ``expr.order``,
``expr.table_functions``, ``expr.interpret``).
"""
