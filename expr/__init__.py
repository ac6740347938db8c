"""expr: scalar and relation expressions and their evaluation (Materialize's ``mz_expr``).

Owns the plans the planner builds and compute renders: scalar expressions
(``expr.scalar``), relation expressions (``expr.relation``), ``MapFilterProject``
(``expr.mfp``), window vocabulary (``expr.window``), row-set finishing
(``expr.finishing``), the expression compiler (``expr.compile``), the meaning of
recursion (``expr.iterate``), the scalar-function library (``expr.functions``), and the
pure evaluation compute's operators and the planner share: aggregates
(``expr.aggregate``), the order of rows (``expr.order``), table functions
(``expr.table_functions``), window partitions (``expr.window_eval``) and the interpreter
of whole plans (``expr.interpret``).
Invariant: expressions are immutable values; evaluation is pure (data errors are
``repr.errors.EvalError``), so the planner folds constants with the same code compute
runs.  Deliberately not here: SQL text or typing rules (``sql``), incremental operators
(``compute.render``), threads.
"""
