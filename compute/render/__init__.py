"""Rendering: a ``DataflowDescription`` turned into running operators.

Owns the dataflow (``dataflow``: building the operator graph, stepping it in fuel-bounded
steps), the operator protocol (``operator``) and the operators themselves (one module
each: constant, flat_map, join, letrec, mfp, reduce, threshold, topk, window).
Deliberately not here: which runtime hosts a dataflow (``compute.replica``) and
expression compilation (``expr.compile``).
"""
